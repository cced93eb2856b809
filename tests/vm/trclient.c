/* trclient.c - static test client of the vm suite, run inside the guest.
 *
 * Each call does one step of a check, as the uid/gid/groups given with -u
 * (numeric only: a static binary has no NSS), and prints one line that
 * guest-init.sh matches:
 *   OK <cmd> <dev>: ...            the step did what the check expects
 *   ERR <cmd> <dev>: <ERRNO> ...   the device answered with that errno
 *   RETRY <cmd> <dev>: ...         data arrived too early to measure; try again
 *   FAIL <cmd> <dev>: ...          the step could not be carried out
 * and exits 0, 1, 3 or 2 accordingly. Times are CLOCK_MONOTONIC
 * milliseconds. A watchdog (alarm(), -w, default 120 s) ends any call that
 * hangs, so one stuck device cannot stall the whole suite: the script then
 * sees exit status 142.
 *
 * Commands that hold something for the script (parked readers, open files)
 * print a "READY ..." line once they do and wait for SIGUSR2 before letting
 * go, so the script can look at the daemon's status in between. `json` and
 * `jq` check and query truerandomctl's status JSON without the project's own
 * parser, `rows` looks at raw captures, `cpu` measures a process's CPU time,
 * and `exec` runs a program as the -u user. -n makes the caller root of a
 * user namespace of its own, as `unshare -Ur` does (every capability inside
 * it, none outside), for the privilege checks; -c root of a container
 * that writes itself full identity maps (enter_container()). */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/random.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_READERS 256
/* Per-read latencies kept for percentiles; later reads are not timed. */
#define LATENCY_MAX (1U << 20)
/* How long a `tick` read may stay unanswered after its run ended. */
#define TICK_GRACE_MS 10000U
#define JSON_DEPTH_MAX 64

enum {
        EXIT_OK = 0,
        EXIT_ERR = 1,
        EXIT_FAIL = 2,
        EXIT_RETRY = 3,
};

/* What a forked reader reports back through a pipe. */
typedef struct ReadResult {
        int index;
        ssize_t ret;
        int error;
        int64_t at_us;
} ReadResult;

/* -n: root of a user namespace of its own; said on ioctl's lines. */
static const char *userns_note = "";

static volatile sig_atomic_t deadline_hit;
static volatile sig_atomic_t go_hit;
static unsigned watchdog_seconds = 120;

static int64_t now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static double ms_since(int64_t t0_us) {
        return (double) (now_us() - t0_us) / 1000.0;
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static const char *errname(int e) {
        const char *n = strerrorname_np(e);

        return n ? n : "E?";
}

static void on_signal(int sig) {
        if (sig == SIGUSR1)
                deadline_hit = 1;
        else if (sig == SIGUSR2)
                go_hit = 1;
}

/* Installs a handler without SA_RESTART: a blocked read returns EINTR. */
static void catch_signal(int sig) {
        struct sigaction sa = { .sa_handler = on_signal };

        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, NULL);
}

/* Blocks SIGUSR2 before the READY line is printed, so the script's signal
 * cannot arrive before go_wait() is there to see it. */
static void go_prepare(sigset_t *ret_old) {
        sigset_t block;

        catch_signal(SIGUSR2);
        sigemptyset(&block);
        sigaddset(&block, SIGUSR2);
        sigprocmask(SIG_BLOCK, &block, ret_old);
}

/* Waits for the script's SIGUSR2; the watchdog ends a forgotten wait. */
static void go_wait(const sigset_t *old) {
        while (!go_hit)
                sigsuspend(old);
        sigprocmask(SIG_SETMASK, old, NULL);
}

/* Interrupts a blocked read after ms (SIGUSR1 sets deadline_hit). */
static int deadline_arm(unsigned ms) {
        struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1 };
        struct itimerspec its = {
                .it_value = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L },
                /* Re-fires so a read that started just after the first
                 * signal is interrupted too. */
                .it_interval = { .tv_nsec = 10 * 1000000L },
        };
        timer_t t;

        catch_signal(SIGUSR1);
        if (timer_create(CLOCK_MONOTONIC, &sev, &t) < 0 || timer_settime(t, 0, &its, NULL) < 0)
                return -errno;
        return 0;
}

/* Waits until fd is readable; false after ms. */
static bool wait_readable(int fd, unsigned ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int64_t end = now_us() + (int64_t) ms * 1000;

        for (;;) {
                int64_t left = end - now_us();
                int r;

                if (left < 0)
                        left = 0;
                r = poll(&p, 1, (int) ((left + 999) / 1000));
                if (r > 0)
                        return true;
                if (r == 0 || errno != EINTR)
                        return false;
        }
}

static bool read_result(int fd, ReadResult *ret_result) {
        ReadResult r;

        if (read(fd, &r, sizeof(r)) != (ssize_t) sizeof(r))
                return false;
        *ret_result = r;
        return true;
}

/* The scheduler state letter of /proc/PID/stat ('S', 'D', 'Z', ...), or 0. */
static char proc_state(pid_t pid) {
        char path[64], buf[512], *p;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = 0;
        /* comm may contain spaces and parentheses: the state follows the last ')'. */
        p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : 0;
}

/* Forks a child that does one blocking read of n bytes from fd and writes
 * a ReadResult to wfd. */
static pid_t fork_reader(int fd, size_t n, int wfd, int index, bool handle_sigint) {
        pid_t pid = fork();

        if (pid == 0) {
                uint8_t buf[4096];
                ReadResult r = { .index = index };
                int null = open("/dev/null", O_WRONLY);

                /* A reader outliving its parent must not hold the script's
                 * $(...) pipe open, nor live forever. */
                if (null >= 0) {
                        dup2(null, STDOUT_FILENO);
                        dup2(null, STDERR_FILENO);
                }
                alarm(watchdog_seconds);
                if (handle_sigint)
                        catch_signal(SIGINT);
                r.ret = read(fd, buf, n < sizeof(buf) ? n : sizeof(buf));
                r.error = r.ret < 0 ? errno : 0;
                r.at_us = now_us();
                _exit(write(wfd, &r, sizeof(r)) == (ssize_t) sizeof(r) ? 0 : 1);
        }
        return pid;
}

static void reap(pid_t pid) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

static int open_dev(const char *cmd, const char *dev, int flags) {
        int fd = open(dev, flags | O_CLOEXEC);

        if (fd < 0)
                printf("ERR %s %s: %s on open (uid=%d gid=%d)\n", cmd, dev, errname(errno),
                       (int) getuid(), (int) getgid());
        return fd;
}

/* Per-read latencies of one command. */
typedef struct Latencies {
        double *ms;
        size_t n, cap;
} Latencies;

static void latency_add(Latencies *l, double ms) {
        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 1024;
                double *p;

                if (cap > LATENCY_MAX)
                        return;
                p = realloc(l->ms, cap * sizeof(*p));
                if (!p)
                        return;
                l->ms = p;
                l->cap = cap;
        }
        l->ms[l->n++] = ms;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

/* Nearest-rank percentile: a value some read really took. */
static double percentile(const double *sorted, size_t n, unsigned p) {
        size_t rank = (n * p + 99) / 100;

        return sorted[rank > 0 ? rank - 1 : 0];
}

/* Appends ", latency ms p50 A p90 B p99 C max D" to the current line. */
static void print_latencies(Latencies *l) {
        if (l->n == 0) {
                printf(", no read timed");
                return;
        }
        qsort(l->ms, l->n, sizeof(*l->ms), cmp_double);
        printf(", latency ms p50 %.1f p90 %.1f p99 %.1f max %.1f", percentile(l->ms, l->n, 50),
               percentile(l->ms, l->n, 90), percentile(l->ms, l->n, 99), l->ms[l->n - 1]);
}

/* Reads a whole file ("-": stdin) into a malloc'd buffer with a NUL after it. */
static int slurp(const char *path, char **ret_buf, size_t *ret_size) {
        size_t size = 0, cap = 65536;
        char *buf = malloc(cap + 1);
        int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0 || !buf) {
                int e = fd < 0 ? errno : ENOMEM;

                free(buf);
                return -e;
        }
        for (;;) {
                ssize_t r;

                if (size == cap) {
                        char *p = realloc(buf, cap * 2 + 1);

                        if (!p) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = p;
                        cap *= 2;
                }
                r = read(fd, buf + size, cap - size);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        int e = errno;

                        free(buf);
                        return -e;
                }
                if (r == 0)
                        break;
                size += (size_t) r;
        }
        if (fd != STDIN_FILENO)
                close(fd);
        buf[size] = 0;
        *ret_buf = buf;
        *ret_size = size;
        return 0;
}

/* ---- commands ---------------------------------------------------------- */

static int cmd_open(const char *dev) {
        int fd = open_dev("open", dev, O_RDONLY);

        if (fd < 0)
                return EXIT_ERR;
        printf("OK open %s: (uid=%d gid=%d)\n", dev, (int) getuid(), (int) getgid());
        close(fd);
        return EXIT_OK;
}

/* Blocking reads until n bytes arrived: the device returns 1..n bytes per
 * read, so short reads are normal and are counted. With hex (n at most
 * 64 KiB), the bytes follow on the OK line, in hex. */
static int cmd_read(const char *dev, size_t n, unsigned ms, bool hex) {
        uint8_t buf[65536];
        char text[2 * sizeof(buf) + 1];
        size_t got = 0;
        unsigned reads = 0;
        int64_t t0;
        int fd = open_dev("read", dev, O_RDONLY);

        if (fd < 0)
                return EXIT_ERR;
        if (hex && n > sizeof(buf)) {
                printf("FAIL bytes %s: at most %zu bytes\n", dev, sizeof(buf));
                return EXIT_FAIL;
        }
        if (deadline_arm(ms) < 0)
                return EXIT_FAIL;
        t0 = now_us();
        while (got < n) {
                size_t want = n - got < sizeof(buf) ? n - got : sizeof(buf);
                ssize_t r = read(fd, hex ? buf + got : buf, hex ? n - got : want);

                if (r < 0) {
                        if (errno == EINTR && deadline_hit) {
                                printf("ERR read %s: TIMEOUT after %.1f ms, %zu of %zu bytes\n", dev,
                                       ms_since(t0), got, n);
                                return EXIT_ERR;
                        }
                        printf("ERR read %s: %s after %.1f ms, %zu of %zu bytes\n", dev, errname(errno),
                               ms_since(t0), got, n);
                        return EXIT_ERR;
                }
                if (r == 0) {
                        printf("ERR read %s: EOF after %zu of %zu bytes\n", dev, got, n);
                        return EXIT_ERR;
                }
                got += (size_t) r;
                reads++;
        }
        text[0] = '\0';
        for (size_t i = 0; hex && i < got; i++)
                snprintf(text + 2 * i, 3, "%02x", buf[i]);
        printf("OK %s %s: %zu bytes in %.1f ms, %u reads (uid=%d)%s%s\n", hex ? "bytes" : "read", dev, got,
               ms_since(t0), reads, (int) getuid(), hex ? " hex=" : "", text);
        return EXIT_OK;
}

/* The three clocks a resume or a restore might move, in seconds. */
static int cmd_clocks(const char *label) {
        static const struct {
                const char *name;
                clockid_t id;
        } clocks[] = { { "boot", CLOCK_BOOTTIME }, { "mono", CLOCK_MONOTONIC }, { "real", CLOCK_REALTIME } };
        struct timespec ts;

        printf("OK clocks %s:", label);
        for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
                clock_gettime(clocks[i].id, &ts);
                printf(" %s=%lld.%06ld", clocks[i].name, (long long) ts.tv_sec, ts.tv_nsec / 1000);
        }
        printf("\n");
        return EXIT_OK;
}

static int cmd_nbread(const char *dev, size_t n) {
        uint8_t buf[4096];
        ssize_t r;
        int fd = open_dev("nbread", dev, O_RDONLY | O_NONBLOCK);

        if (fd < 0)
                return EXIT_ERR;
        r = read(fd, buf, n < sizeof(buf) ? n : sizeof(buf));
        if (r < 0) {
                printf("ERR nbread %s: %s\n", dev, errname(errno));
                return EXIT_ERR;
        }
        printf("OK nbread %s: %zd bytes\n", dev, r);
        return EXIT_OK;
}

/* O_NONBLOCK reads until EAGAIN: empties what the daemon has stored. */
static int cmd_drain(const char *dev, unsigned ms) {
        uint8_t buf[4096];
        size_t got = 0;
        int64_t t0 = now_us();
        int fd = open_dev("drain", dev, O_RDONLY | O_NONBLOCK);

        if (fd < 0)
                return EXIT_ERR;
        while (ms_since(t0) < ms) {
                ssize_t r = read(fd, buf, sizeof(buf));

                if (r < 0 && errno == EAGAIN) {
                        printf("OK drain %s: EAGAIN after %zu bytes, %.1f ms\n", dev, got, ms_since(t0));
                        return EXIT_OK;
                }
                if (r <= 0) {
                        printf("ERR drain %s: %s after %zu bytes\n", dev, r < 0 ? errname(errno) : "EOF", got);
                        return EXIT_ERR;
                }
                got += (size_t) r;
        }
        printf("FAIL drain %s: still data after %u ms (%zu bytes)\n", dev, ms, got);
        return EXIT_FAIL;
}

static int cmd_poll(const char *dev, unsigned ms) {
        int64_t t0;
        struct pollfd p = { .events = POLLIN };
        int r;

        p.fd = open_dev("poll", dev, O_RDONLY);
        if (p.fd < 0)
                return EXIT_ERR;
        t0 = now_us();
        r = poll(&p, 1, (int) ms);
        if (r < 0) {
                printf("ERR poll %s: %s after %.1f ms\n", dev, errname(errno), ms_since(t0));
                return EXIT_ERR;
        }
        if (r == 0) {
                printf("ERR poll %s: TIMEOUT after %u ms\n", dev, ms);
                return EXIT_ERR;
        }
        if (!(p.revents & POLLIN)) {
                printf("ERR poll %s: revents=0x%x without POLLIN after %.1f ms\n", dev, (unsigned) p.revents,
                       ms_since(t0));
                return EXIT_ERR;
        }
        printf("OK poll %s: POLLIN (revents=0x%x) after %.1f ms\n", dev, (unsigned) p.revents, ms_since(t0));
        return EXIT_OK;
}

/* A blocking read that must still be waiting after ms; then, if wait_ms,
 * it must be answered with data within wait_ms more. */
static int cmd_blocked(const char *dev, size_t n, unsigned ms, unsigned wait_ms) {
        int pfd[2], fd;
        ReadResult r;
        int64_t t0;
        pid_t pid;
        char state;

        fd = open_dev("blocked", dev, O_RDONLY);
        if (fd < 0)
                return EXIT_ERR;
        if (pipe(pfd) < 0)
                return EXIT_FAIL;
        t0 = now_us();
        pid = fork_reader(fd, n, pfd[1], 0, false);
        if (pid < 0)
                return EXIT_FAIL;
        if (wait_readable(pfd[0], ms)) {
                if (!read_result(pfd[0], &r))
                        return EXIT_FAIL;
                printf("ERR blocked %s: %s after %.1f ms, did not block\n", dev,
                       r.ret < 0 ? errname(r.error) : "returned data", (double) (r.at_us - t0) / 1000.0);
                reap(pid);
                return EXIT_ERR;
        }
        state = proc_state(pid);
        if (wait_ms == 0) {
                printf("OK blocked %s: still waiting after %u ms (state %c)\n", dev, ms, state ? state : '?');
                reap(pid);
                return EXIT_OK;
        }
        if (!wait_readable(pfd[0], wait_ms) || !read_result(pfd[0], &r)) {
                printf("ERR blocked %s: TIMEOUT, blocked for %u ms but not answered within %u ms more\n", dev,
                       ms, wait_ms);
                reap(pid);
                return EXIT_ERR;
        }
        reap(pid);
        if (r.ret <= 0) {
                printf("ERR blocked %s: %s after %.1f ms\n", dev, r.ret < 0 ? errname(r.error) : "EOF",
                       (double) (r.at_us - t0) / 1000.0);
                return EXIT_ERR;
        }
        printf("OK blocked %s: still waiting after %u ms (state %c), then %zd bytes after %.1f ms\n", dev, ms,
               state ? state : '?', r.ret, (double) (r.at_us - t0) / 1000.0);
        return EXIT_OK;
}

/* A reader blocked for delay_ms gets sig (INT or KILL). INT (caught
 * without SA_RESTART) must make read() return EINTR within limit_ms; KILL
 * must make the reader disappear within limit_ms. Time spent in D state
 * (uninterruptible, what a daemon ignoring interrupts causes) is reported. */
static int cmd_signal(const char *dev, const char *signame, unsigned delay_ms, unsigned limit_ms) {
        int sig, pfd[2], fd;
        ReadResult r;
        int64_t t_kill, d_us = 0, last;
        pid_t pid;
        char state;
        bool ok;

        if (strcmp(signame, "INT") == 0)
                sig = SIGINT;
        else if (strcmp(signame, "KILL") == 0)
                sig = SIGKILL;
        else
                return EXIT_FAIL;
        fd = open_dev("signal", dev, O_RDONLY);
        if (fd < 0)
                return EXIT_ERR;
        if (pipe(pfd) < 0)
                return EXIT_FAIL;
        pid = fork_reader(fd, 32, pfd[1], 0, sig == SIGINT);
        if (pid < 0)
                return EXIT_FAIL;
        if (wait_readable(pfd[0], delay_ms)) {
                reap(pid);
                if (!read_result(pfd[0], &r))
                        return EXIT_FAIL;
                if (r.ret < 0) {
                        printf("ERR signal %s: %s before SIG%s, did not block\n", dev, errname(r.error), signame);
                        return EXIT_ERR;
                }
                printf("RETRY signal %s: the read was answered with %zd bytes before SIG%s\n", dev, r.ret,
                       signame);
                return EXIT_RETRY;
        }
        state = proc_state(pid);
        t_kill = now_us();
        kill(pid, sig);

        if (sig == SIGINT) {
                if (!wait_readable(pfd[0], limit_ms * 10) || !read_result(pfd[0], &r)) {
                        printf("ERR signal %s: TIMEOUT, read not returned %u ms after SIGINT (state %c)\n", dev,
                               limit_ms * 10, proc_state(pid));
                        reap(pid);
                        return EXIT_ERR;
                }
                reap(pid);
                if (r.ret >= 0) {
                        printf("RETRY signal %s: the read was answered with %zd bytes around SIGINT\n", dev, r.ret);
                        return EXIT_RETRY;
                }
                ok = r.error == EINTR && r.at_us - t_kill <= (int64_t) limit_ms * 1000;
                printf("%s signal %s: SIGINT to a reader blocked %u ms (state %c): read returned %s after %.1f ms"
                       " (limit %u ms)\n", ok ? "OK" : "ERR", dev, delay_ms, state ? state : '?',
                       errname(r.error), (double) (r.at_us - t_kill) / 1000.0, limit_ms);
                return ok ? EXIT_OK : EXIT_ERR;
        }

        /* SIGKILL: watch the reader's state every millisecond until reaped. */
        last = now_us();
        for (;;) {
                int status;
                pid_t w = waitpid(pid, &status, WNOHANG);
                int64_t t = now_us();

                if (w == pid)
                        break;
                if (proc_state(pid) == 'D')
                        d_us += t - last;
                last = t;
                if (t - t_kill > (int64_t) limit_ms * 10000) {
                        printf("ERR signal %s: reader still there %u ms after SIGKILL (state %c)\n", dev,
                               limit_ms * 10, proc_state(pid));
                        return EXIT_ERR;
                }
                sleep_ms(1);
        }
        ok = now_us() - t_kill <= (int64_t) limit_ms * 1000;
        printf("%s signal %s: SIGKILL to a reader blocked %u ms (state %c): gone after %.1f ms, D state for ~%.1f ms"
               " (limit %u ms)\n", ok ? "OK" : "ERR", dev, delay_ms, state ? state : '?', ms_since(t_kill),
               (double) d_us / 1000.0, limit_ms);
        return ok ? EXIT_OK : EXIT_ERR;
}

/* n readers block; after delay_ms, sig goes to target (the daemon). Every
 * reader must return an error within limit_ms. */
static int cmd_readers(const char *dev, unsigned n, unsigned delay_ms, pid_t target, int sig, unsigned limit_ms) {
        unsigned early = 0, got = 0, with_data = 0, errcount[256] = { 0 };
        pid_t pids[MAX_READERS];
        int pfd[2], fl;
        int64_t t_kill, t_max = 0;
        ReadResult r;
        bool ok;

        if (n == 0 || n > MAX_READERS || pipe(pfd) < 0)
                return EXIT_FAIL;
        for (unsigned i = 0; i < n; i++) {
                /* One open file per reader, as separate programs would have. */
                int fd = open_dev("readers", dev, O_RDONLY);

                if (fd < 0)
                        return EXIT_ERR;
                pids[i] = fork_reader(fd, 32, pfd[1], (int) i, false);
                close(fd);
                if (pids[i] < 0)
                        return EXIT_FAIL;
        }
        close(pfd[1]);
        sleep_ms(delay_ms);

        fl = fcntl(pfd[0], F_GETFL);
        fcntl(pfd[0], F_SETFL, fl | O_NONBLOCK);
        while (read_result(pfd[0], &r))
                early++;
        fcntl(pfd[0], F_SETFL, fl);
        if (early > 0) {
                printf("FAIL readers %s: %u of %u readers returned before the signal\n", dev, early, n);
                for (unsigned i = 0; i < n; i++)
                        reap(pids[i]);
                return EXIT_FAIL;
        }

        t_kill = now_us();
        if (kill(target, sig) < 0) {
                printf("FAIL readers %s: kill(%d, %d): %s\n", dev, (int) target, sig, errname(errno));
                for (unsigned i = 0; i < n; i++)
                        reap(pids[i]);
                return EXIT_FAIL;
        }
        while (got < n && wait_readable(pfd[0], limit_ms * 5) && read_result(pfd[0], &r)) {
                got++;
                if (r.ret >= 0)
                        with_data++;
                else
                        errcount[r.error & 255]++;
                if (r.at_us - t_kill > t_max)
                        t_max = r.at_us - t_kill;
        }
        for (unsigned i = 0; i < n; i++)
                reap(pids[i]);

        ok = got == n && with_data == 0 && t_max <= (int64_t) limit_ms * 1000;
        printf("%s readers %s: %u/%u returned within %.1f ms of signal %d (limit %u ms): %u with data", ok ? "OK" : "ERR",
               dev, got, n, (double) t_max / 1000.0, sig, limit_ms, with_data);
        for (unsigned e = 0; e < 256; e++)
                if (errcount[e] > 0)
                        printf(", %u x %s", errcount[e], errname((int) e));
        printf("\n");
        return ok ? EXIT_OK : EXIT_ERR;
}

static int cmd_ioctl(const char *dev, const char *name, int arg) {
        struct {
                int entropy_count;
                int buf_size;
                uint32_t buf[8];
        } add = { .entropy_count = arg, .buf_size = sizeof(add.buf) };
        int fd, r, value = arg;

        fd = open_dev("ioctl", dev, O_RDONLY);
        if (fd < 0)
                return EXIT_ERR;
        if (strcmp(name, "RNDGETENTCNT") == 0)
                r = ioctl(fd, RNDGETENTCNT, &value);
        else if (strcmp(name, "RNDADDTOENTCNT") == 0)
                r = ioctl(fd, RNDADDTOENTCNT, &value);
        else if (strcmp(name, "RNDADDENTROPY") == 0) {
                for (size_t i = 0; i < sizeof(add.buf) / sizeof(add.buf[0]); i++)
                        add.buf[i] = (uint32_t) (0x9e3779b9u * (i + 1));
                r = ioctl(fd, RNDADDENTROPY, &add);
        } else if (strcmp(name, "RNDRESEEDCRNG") == 0)
                r = ioctl(fd, RNDRESEEDCRNG);
        else if (strcmp(name, "RNDZAPENTCNT") == 0)
                r = ioctl(fd, RNDZAPENTCNT);
        else if (strcmp(name, "RNDCLEARPOOL") == 0)
                r = ioctl(fd, RNDCLEARPOOL);
        else {
                printf("FAIL ioctl %s: unknown ioctl %s\n", dev, name);
                return EXIT_FAIL;
        }
        if (r < 0) {
                printf("ERR ioctl %s: %s from %s (uid=%d%s)\n", dev, errname(errno), name, (int) getuid(),
                       userns_note);
                return EXIT_ERR;
        }
        if (strcmp(name, "RNDGETENTCNT") == 0)
                printf("OK ioctl %s: %s = %d (uid=%d%s)\n", dev, name, value, (int) getuid(), userns_note);
        else
                printf("OK ioctl %s: %s (uid=%d%s)\n", dev, name, (int) getuid(), userns_note);
        return EXIT_OK;
}

/* RNDRESEEDCRNG n times, and on until seconds have passed: a privileged
 * caller hammering the reseed, as issue 12 found possible. EAGAIN is the
 * daemon's per-uid budget of /proc looks (proc_checks_per_uid a second,
 * root's too): counted and said, not a failure; any other error is. */
static int cmd_storm(const char *dev, uint64_t n, unsigned seconds) {
        uint64_t done = 0, failed = 0, budget = 0;
        int last_error = 0;
        int64_t t0;
        int fd = open_dev("storm", dev, O_RDONLY);

        if (fd < 0)
                return EXIT_ERR;
        t0 = now_us();
        while (done < n || ms_since(t0) < seconds * 1000.0) {
                if (ioctl(fd, RNDRESEEDCRNG) < 0) {
                        if (errno == EAGAIN) {
                                budget++;
                        } else {
                                failed++;
                                last_error = errno;
                        }
                }
                done++;
        }
        if (failed > 0) {
                printf("ERR storm %s: %" PRIu64 " of %" PRIu64 " RNDRESEEDCRNG failed, the last with %s\n", dev,
                       failed, done, errname(last_error));
                return EXIT_ERR;
        }
        printf("OK storm %s: %" PRIu64 " RNDRESEEDCRNG in %.1f s, %" PRIu64 " of them EAGAIN past the /proc budget "
               "(uid=%d)\n", dev, done, ms_since(t0) / 1000.0, budget, (int) getuid());
        return EXIT_OK;
}

static int cmd_write(const char *dev, size_t n) {
        uint8_t buf[4096];
        ssize_t r;
        int fd = open_dev("write", dev, O_WRONLY);

        if (fd < 0)
                return EXIT_ERR;
        memset(buf, 0x5a, sizeof(buf));
        r = write(fd, buf, n < sizeof(buf) ? n : sizeof(buf));
        if (r < 0) {
                printf("ERR write %s: %s (uid=%d)\n", dev, errname(errno), (int) getuid());
                return EXIT_ERR;
        }
        printf("OK write %s: %zd bytes accepted (uid=%d)\n", dev, r, (int) getuid());
        return EXIT_OK;
}

/* Reads with bufsize-byte reads for seconds; the total is one reader's share.
 * Each read is timed (a read cut by the deadline is not). */
static int cmd_loop(const char *dev, unsigned seconds, size_t bufsize) {
        static uint8_t buf[1 << 20];
        uint64_t total = 0, reads = 0;
        Latencies lat = { 0 };
        int64_t t0;
        int fd = open_dev("loop", dev, O_RDONLY);

        if (fd < 0)
                return EXIT_ERR;
        if (bufsize == 0 || bufsize > sizeof(buf) || deadline_arm(seconds * 1000) < 0)
                return EXIT_FAIL;
        t0 = now_us();
        while (!deadline_hit) {
                int64_t t = now_us();
                ssize_t r = read(fd, buf, bufsize);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0) {
                        printf("ERR loop %s: %s after %" PRIu64 " bytes\n", dev, r < 0 ? errname(errno) : "EOF",
                               total);
                        return EXIT_ERR;
                }
                latency_add(&lat, ms_since(t));
                total += (uint64_t) r;
                reads++;
        }
        /* The bytes stay the 4th field: check 7 sums it. */
        printf("OK loop %s: %" PRIu64 " bytes in %.1f s, %" PRIu64 " reads of up to %zu (uid=%d)", dev, total,
               ms_since(t0) / 1000.0, reads, bufsize, (int) getuid());
        print_latencies(&lat);
        printf("\n");
        return EXIT_OK;
}

/* Copies up to n bytes to stdout within seconds (for rngtest); the result
 * line goes to stderr since stdout carries the data. */
static int cmd_stream(const char *dev, uint64_t n, unsigned seconds) {
        static uint8_t buf[65536];
        uint64_t total = 0;
        int64_t t0;
        double s;
        int fd;

        fd = open(dev, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "ERR stream %s: %s on open\n", dev, errname(errno));
                return EXIT_ERR;
        }
        signal(SIGPIPE, SIG_IGN);
        if (deadline_arm(seconds * 1000) < 0)
                return EXIT_FAIL;
        t0 = now_us();
        while (total < n && !deadline_hit) {
                size_t want = n - total < sizeof(buf) ? (size_t) (n - total) : sizeof(buf);
                ssize_t r = read(fd, buf, want);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0) {
                        fprintf(stderr, "ERR stream %s: %s after %" PRIu64 " bytes\n", dev,
                                r < 0 ? errname(errno) : "EOF", total);
                        return EXIT_ERR;
                }
                for (ssize_t off = 0; off < r;) {
                        ssize_t w = write(STDOUT_FILENO, buf + off, (size_t) (r - off));

                        if (w < 0 && errno == EINTR)
                                continue;
                        if (w < 0) {
                                fprintf(stderr, "ERR stream %s: %s writing stdout\n", dev, errname(errno));
                                return EXIT_ERR;
                        }
                        off += w;
                }
                total += (uint64_t) r;
        }
        s = ms_since(t0) / 1000.0;
        fprintf(stderr, "OK stream %s: %" PRIu64 " bytes in %.1f s = %.0f bytes/s\n", dev, total, s,
                s > 0 ? (double) total / s : 0.0);
        return EXIT_OK;
}

/* Waits for the node, then for its first bytes: how long a (re)started
 * daemon takes to serve, measured from this command's start. */
static int cmd_waitread(const char *dev, size_t n, unsigned ms) {
        uint8_t buf[4096];
        int64_t t0 = now_us();
        double t_node;
        struct stat st;
        ssize_t r;
        int fd;

        while (stat(dev, &st) < 0) {
                if (ms_since(t0) > ms) {
                        printf("ERR waitread %s: TIMEOUT, no node after %u ms\n", dev, ms);
                        return EXIT_ERR;
                }
                sleep_ms(2);
        }
        t_node = ms_since(t0);
        /* The kernel creates the node before it adds the character device
         * (ENXIO meanwhile), as 0600 root:root; the daemon chmods it from
         * init_done a moment later. */
        while ((fd = open(dev, O_RDONLY | O_CLOEXEC)) < 0) {
                if ((errno != ENXIO && errno != EACCES && errno != ENOENT && errno != ENODEV) ||
                    ms_since(t0) > ms) {
                        printf("ERR waitread %s: %s on open after %.1f ms\n", dev, errname(errno), ms_since(t0));
                        return EXIT_ERR;
                }
                sleep_ms(2);
        }
        if (deadline_arm(ms - (unsigned) ms_since(t0)) < 0)
                return EXIT_FAIL;
        r = read(fd, buf, n < sizeof(buf) ? n : sizeof(buf));
        if (r <= 0) {
                printf("ERR waitread %s: %s after %.1f ms (node after %.1f ms)\n", dev,
                       r == 0 ? "EOF" : (errno == EINTR && deadline_hit) ? "TIMEOUT" : errname(errno),
                       ms_since(t0), t_node);
                return EXIT_ERR;
        }
        printf("OK waitread %s: %zd bytes %.1f ms after start (node after %.1f ms)\n", dev, r, ms_since(t0),
               t_node);
        return EXIT_OK;
}

/* Waits until none of the paths exists. */
static int cmd_gone(unsigned ms, char **paths, int n) {
        int64_t t0 = now_us();
        struct stat st;

        for (int i = 0; i < n; i++)
                while (stat(paths[i], &st) == 0) {
                        if (ms_since(t0) > ms) {
                                printf("ERR gone %s: still present after %u ms\n", paths[i], ms);
                                return EXIT_ERR;
                        }
                        sleep_ms(2);
                }
        printf("OK gone %s%s: after %.1f ms\n", n > 0 ? paths[0] : "", n > 1 ? " ..." : "", ms_since(t0));
        return EXIT_OK;
}

/* A read of n bytes every interval_ms for seconds, as a program fetching a
 * key now and then would; each is timed from its start until all n bytes
 * came. Behind schedule, the next read starts at once rather than in a
 * burst of catch-up reads. */
static int cmd_tick(const char *dev, size_t n, unsigned interval_ms, unsigned seconds) {
        uint8_t buf[4096];
        Latencies lat = { 0 };
        uint64_t total = 0;
        int64_t t0, next, end;
        int fd = open_dev("tick", dev, O_RDONLY);

        if (fd < 0)
                return EXIT_ERR;
        if (n == 0 || n > sizeof(buf) || interval_ms == 0 || deadline_arm(seconds * 1000 + TICK_GRACE_MS) < 0)
                return EXIT_FAIL;
        t0 = now_us();
        end = t0 + (int64_t) seconds * 1000000;
        for (next = t0; next < end;) {
                int64_t wait = next - now_us(), t;
                size_t got = 0;

                if (wait > 0)
                        sleep_ms((unsigned) (wait / 1000));
                t = now_us();
                while (got < n) {
                        ssize_t r = read(fd, buf + got, n - got);

                        if (r < 0 && errno == EINTR && !deadline_hit)
                                continue;
                        if (r <= 0) {
                                printf("ERR tick %s: %s after %.1f ms in read %zu (%" PRIu64 " bytes before)\n", dev,
                                       r == 0 ? "EOF" : deadline_hit ? "TIMEOUT" : errname(errno), ms_since(t),
                                       lat.n + 1, total);
                                return EXIT_ERR;
                        }
                        got += (size_t) r;
                }
                latency_add(&lat, ms_since(t));
                total += got;
                next += (int64_t) interval_ms * 1000;
                if (next < now_us())
                        next = now_us();
        }
        printf("OK tick %s: %" PRIu64 " bytes in %zu reads of %zu every %u ms, %.1f s (uid=%d)", dev, total, lat.n,
               n, interval_ms, ms_since(t0) / 1000.0, (int) getuid());
        print_latencies(&lat);
        printf("\n");
        return EXIT_OK;
}

/* n readers park on dev, one open file each, in a process group of their
 * own; on the script's SIGUSR2 they all get SIGKILL at once. A killed reader
 * stays in D state until the daemon answers the kernel's interrupt, so
 * "all reaped within limit_ms" is the daemon's doing. */
static int cmd_killreaders(const char *dev, unsigned n, unsigned delay_ms, unsigned limit_ms) {
        unsigned early = 0, waiting = 0, reaped = 0;
        pid_t pids[MAX_READERS], group = 0;
        int64_t t_kill, t_last = 0;
        sigset_t old;
        ReadResult r;
        int pfd[2], fl;

        if (n == 0 || n > MAX_READERS || pipe(pfd) < 0)
                return EXIT_FAIL;
        for (unsigned i = 0; i < n; i++) {
                int fd = open_dev("killreaders", dev, O_RDONLY);

                if (fd >= 0) {
                        pids[i] = fork_reader(fd, 32, pfd[1], (int) i, false);
                        close(fd);
                }
                if (fd < 0 || pids[i] < 0) {
                        /* Readers already parked must not linger until their watchdog. */
                        if (group > 0)
                                kill(-group, SIGKILL);
                        return fd < 0 ? EXIT_ERR : EXIT_FAIL;
                }
                if (group == 0)
                        group = pids[i];
                if (setpgid(pids[i], group) < 0) {
                        printf("FAIL killreaders %s: setpgid: %s\n", dev, errname(errno));
                        kill(-group, SIGKILL);
                        return EXIT_FAIL;
                }
        }
        close(pfd[1]);
        sleep_ms(delay_ms);

        fl = fcntl(pfd[0], F_GETFL);
        fcntl(pfd[0], F_SETFL, fl | O_NONBLOCK);
        while (read_result(pfd[0], &r))
                early++;
        for (unsigned i = 0; i < n; i++)
                if (proc_state(pids[i]) == 'S')
                        waiting++;
        go_prepare(&old);
        printf("READY killreaders %s: %u of %u readers waiting after %u ms, %u answered\n", dev, waiting, n,
               delay_ms, early);
        go_wait(&old);

        t_kill = now_us();
        if (kill(-group, SIGKILL) < 0) {
                printf("FAIL killreaders %s: kill(-%d, SIGKILL): %s\n", dev, (int) group, errname(errno));
                return EXIT_FAIL;
        }
        while (reaped < n && now_us() - t_kill < (int64_t) limit_ms * 5000) {
                pid_t w = waitpid(-group, NULL, WNOHANG);

                if (w > 0) {
                        reaped++;
                        t_last = now_us() - t_kill;
                } else if (w == 0)
                        sleep_ms(1);
                else if (errno != EINTR)
                        break;
        }
        if (reaped < n) {
                printf("ERR killreaders %s: %u of %u readers still there %u ms after SIGKILL\n", dev, n - reaped, n,
                       limit_ms * 5);
                return EXIT_ERR;
        }
        printf("%s killreaders %s: SIGKILL to %u readers (%u waiting): all gone after %.1f ms (limit %u ms)\n",
               t_last <= (int64_t) limit_ms * 1000 ? "OK" : "ERR", dev, n, waiting, (double) t_last / 1000.0,
               limit_ms);
        return t_last <= (int64_t) limit_ms * 1000 ? EXIT_OK : EXIT_ERR;
}

#define CTLFLOOD_MAX 256

static int ctl_connect(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/* The status of child pid, as this process's exit status. */
static int child_status(pid_t pid) {
        int st;

        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return EXIT_FAIL;
        return WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_FAIL;
}

#define HAMMER_MAX 64

/* procs processes, each looping RNDZAPENTCNT on its own open file of dev
 * for seconds, and one more connecting to and closing the control socket
 * at path: every request makes the daemon ask whether the caller is
 * privileged, which (before issue 23) read the caller's /proc status, twice,
 * before anything cheap; with -g's 65,536 groups that is ~460 KB each. The
 * counts are in shared memory; every ioctl must be refused: EPERM, or
 * EAGAIN past the uid's budget of looks at /proc (proc_checks_per_uid). At
 * nice 19: on a guest's one CPU the attack should cost the daemon's work,
 * not the scheduler's. */
static int cmd_hammer(const char *dev, const char *path, unsigned seconds, unsigned procs) {
        struct Counts {
                _Atomic uint64_t eperm, eagain, other, connects, failed;
        } *n;
        pid_t pids[HAMMER_MAX + 1];
        int64_t t0 = now_us();
        unsigned started = 0;
        int status = EXIT_OK;

        if (procs == 0 || procs > HAMMER_MAX || seconds == 0)
                return EXIT_FAIL;
        n = mmap(NULL, sizeof(*n), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (n == MAP_FAILED)
                return EXIT_FAIL;
        memset(n, 0, sizeof(*n));
        for (unsigned i = 0; i <= procs; i++) {
                pids[i] = fork();
                if (pids[i] < 0)
                        break;
                started++;
                if (pids[i] > 0)
                        continue;
                errno = 0;
                if (nice(19) == -1 && errno != 0)
                        _exit(EXIT_FAIL);
                if (i == procs) {
                        while (ms_since(t0) < seconds * 1000.0) {
                                int fd = ctl_connect(path);

                                if (fd < 0)
                                        n->failed++;
                                else
                                        n->connects++;
                                if (fd >= 0)
                                        close(fd);
                        }
                        _exit(0);
                }
                int fd = open(dev, O_RDONLY | O_CLOEXEC);

                if (fd < 0)
                        _exit(EXIT_ERR);
                while (ms_since(t0) < seconds * 1000.0) {
                        if (ioctl(fd, RNDZAPENTCNT) == 0)
                                n->other++;
                        else if (errno == EPERM)
                                n->eperm++;
                        else if (errno == EAGAIN)
                                n->eagain++;
                        else
                                n->other++;
                }
                _exit(0);
        }
        for (unsigned i = 0; i < started; i++)
                if (child_status(pids[i]) != 0)
                        status = EXIT_ERR;
        if (started != procs + 1 || n->other > 0)
                status = EXIT_ERR;
        printf("%s hammer %s: %" PRIu64 " RNDZAPENTCNT refused EPERM, %" PRIu64 " EAGAIN (budget), %" PRIu64
               " neither, from %u processes; %" PRIu64 " control connects (%" PRIu64
               " failed) in %.1f s (uid=%d, %d groups)\n",
               status == EXIT_OK ? "OK" : "ERR", dev, (uint64_t) n->eperm, (uint64_t) n->eagain,
               (uint64_t) n->other, procs,
               (uint64_t) n->connects, (uint64_t) n->failed, ms_since(t0) / 1000.0, (int) getuid(),
               getgroups(0, NULL));
        return status;
}

/* Keeps n connections to truerandomd's control socket open for seconds,
 * asking nothing, and opens a new one as soon as the daemon closes one
 * (busy, or its 5 s deadline): what issue 12 found locks root's status
 * out. With seconds 0: holds them until the script's SIGUSR2. */
static int cmd_ctlflood(const char *path, unsigned n, unsigned seconds) {
        struct pollfd p[CTLFLOOD_MAX];
        uint64_t connects = 0, busy = 0, timeouts = 0, other = 0;
        unsigned open_now = 0;
        sigset_t old;
        char buf[256];
        int64_t t0 = now_us();

        if (n == 0 || n > CTLFLOOD_MAX)
                return EXIT_FAIL;
        for (unsigned i = 0; i < n; i++)
                p[i] = (struct pollfd) { .fd = -1, .events = POLLIN };
        for (;;) {
                for (unsigned i = 0; i < n; i++)
                        if (p[i].fd < 0 && (p[i].fd = ctl_connect(path)) >= 0)
                                connects++;
                if (seconds == 0)
                        break;
                if (ms_since(t0) >= seconds * 1000.0)
                        break;
                if (poll(p, n, 50) <= 0)
                        continue;
                for (unsigned i = 0; i < n; i++) {
                        ssize_t k;

                        if (p[i].fd < 0 || !p[i].revents)
                                continue;
                        k = recv(p[i].fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
                        buf[k > 0 ? k : 0] = 0;
                        if (strncmp(buf, "error busy", 10) == 0)
                                busy++;
                        else if (strncmp(buf, "error timeout", 13) == 0)
                                timeouts++;
                        else
                                other++;
                        close(p[i].fd);
                        p[i].fd = -1;
                }
        }
        if (seconds == 0) {
                /* What the daemon turned away at once is answered by now. */
                sleep_ms(200);
                for (unsigned i = 0; i < n; i++) {
                        struct pollfd q = { .fd = p[i].fd, .events = POLLIN };
                        if (p[i].fd >= 0 && poll(&q, 1, 0) == 0)
                                open_now++;
                }
                go_prepare(&old);
                printf("READY ctlflood %s: %u of %u connections held (uid=%d)\n", path, open_now, n, (int) getuid());
                go_wait(&old);
        }
        for (unsigned i = 0; i < n; i++)
                if (p[i].fd >= 0)
                        close(p[i].fd);
        printf("OK ctlflood %s: %" PRIu64 " connections in %.1f s, %" PRIu64 " answered busy, %" PRIu64
               " timed out, %" PRIu64 " other (uid=%d)\n", path, connects, ms_since(t0) / 1000.0, busy, timeouts,
               other, (int) getuid());
        return EXIT_OK;
}

/* Opens n files on dev (RLIMIT_NOFILE raised as far as needed), reads none,
 * and keeps them until the script's SIGUSR2; then closes every one. */
static int cmd_fds(const char *dev, unsigned n) {
        struct rlimit rl;
        int64_t t0;
        double t_open;
        sigset_t old;
        int *fds;

        if (n == 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return EXIT_FAIL;
        if (rl.rlim_cur < (rlim_t) n + 64) {
                rl.rlim_cur = (rlim_t) n + 64;
                if (rl.rlim_max < rl.rlim_cur)
                        rl.rlim_max = rl.rlim_cur;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
                        printf("FAIL fds %s: RLIMIT_NOFILE %u: %s\n", dev, n + 64, errname(errno));
                        return EXIT_FAIL;
                }
        }
        fds = calloc(n, sizeof(*fds));
        if (!fds)
                return EXIT_FAIL;
        t0 = now_us();
        for (unsigned i = 0; i < n; i++) {
                fds[i] = open(dev, O_RDONLY | O_CLOEXEC);
                if (fds[i] < 0) {
                        printf("ERR fds %s: %s on open after %u files (uid=%d)\n", dev, errname(errno), i,
                               (int) getuid());
                        return EXIT_ERR;
                }
        }
        t_open = ms_since(t0);
        go_prepare(&old);
        printf("READY fds %s: %u files open in %.1f ms, none read (uid=%d)\n", dev, n, t_open, (int) getuid());
        go_wait(&old);
        t0 = now_us();
        for (unsigned i = 0; i < n; i++)
                close(fds[i]);
        printf("OK fds %s: %u files opened in %.1f ms and closed in %.1f ms\n", dev, n, t_open, ms_since(t0));
        return EXIT_OK;
}

/* n bytes of address space backed by one 1 MiB memfd mapped over and over:
 * a read(2) of a gigabyte into it costs a megabyte of memory. */
#define LONGREAD_SLICE (1U << 20)
static uint8_t *longread_buffer(uint64_t n) {
        uint8_t *base;
        int fd = memfd_create("longread", MFD_CLOEXEC);

        if (fd < 0 || ftruncate(fd, LONGREAD_SLICE) < 0)
                return NULL;
        n = (n + LONGREAD_SLICE - 1) / LONGREAD_SLICE * LONGREAD_SLICE;
        base = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED)
                return NULL;
        for (uint64_t off = 0; off < n; off += LONGREAD_SLICE)
                if (mmap(base + off, LONGREAD_SLICE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
                    MAP_FAILED)
                        return NULL;
        close(fd);
        return base;
}

/* One read(2) of full_n bytes, which must return all of them; then, with
 * sig_n > 0, one read of sig_n bytes during which a child sends the caught
 * SIGUSR1 (no SA_RESTART) after sig_ms: what it returned, and how long
 * after the signal was sent it did. The kernel's /dev/urandom returns what
 * it has at once (random(7)); a device that does not stop keeps the
 * reader (and its signal handler) waiting until the whole read is done. */
static int cmd_longread(const char *dev, uint64_t full_n, uint64_t sig_n, unsigned sig_ms) {
        uint64_t most = full_n > sig_n ? full_n : sig_n;
        uint8_t *buf = longread_buffer(most);
        int64_t *sent, t0;
        double full_ms;
        ssize_t r;
        pid_t pid;
        int fd;

        sent = mmap(NULL, sizeof(*sent), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (!buf || sent == MAP_FAILED || most > SSIZE_MAX) {
                printf("FAIL longread %s: no %" PRIu64 "-byte buffer: %s\n", dev, most, errname(errno));
                return EXIT_FAIL;
        }
        fd = open_dev("longread", dev, O_RDONLY);
        if (fd < 0)
                return EXIT_ERR;
        t0 = now_us();
        r = read(fd, buf, full_n);
        full_ms = ms_since(t0);
        if (r < 0) {
                printf("ERR longread %s: %s from read(%" PRIu64 ")\n", dev, errname(errno), full_n);
                return EXIT_ERR;
        }
        printf("OK longread %s: read(%" PRIu64 ") returned %zd bytes in %.1f ms", dev, full_n, r, full_ms);
        if (sig_n == 0) {
                printf("\n");
                return EXIT_OK;
        }
        catch_signal(SIGUSR1);
        *sent = 0;
        pid = fork();
        if (pid < 0)
                return EXIT_FAIL;
        if (pid == 0) {
                sleep_ms(sig_ms);
                *sent = now_us();
                kill(getppid(), SIGUSR1);
                _exit(0);
        }
        t0 = now_us();
        r = read(fd, buf, sig_n);
        full_ms = ms_since(t0);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        if (r < 0 && errno != EINTR) {
                printf("; ERR %s from read(%" PRIu64 ") with SIGUSR1\n", errname(errno), sig_n);
                return EXIT_ERR;
        }
        if (!deadline_hit || *sent == 0) {
                printf("; read(%" PRIu64 ") returned %zd bytes in %.1f ms, before the signal\n", sig_n, r, full_ms);
                return EXIT_RETRY;
        }
        printf("; read(%" PRIu64 ") with SIGUSR1 after %u ms returned %s%zd%s, %.1f ms after the signal\n", sig_n,
               sig_ms, r < 0 ? "EINTR (" : "", r < 0 ? (ssize_t) 0 : r, r < 0 ? ")" : " bytes",
               (double) (now_us() - *sent) / 1000.0);
        return EXIT_OK;
}

/* CPU time of pid (all its threads) over ms, as a share of one CPU. */
static int cpu_ticks(pid_t pid, uint64_t *ret) {
        char path[64], buf[1024], *p;
        unsigned long long utime, stime;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -EIO;
        buf[n] = 0;
        /* Fields 14 and 15; comm (field 2) may hold spaces and ')'. */
        p = strrchr(buf, ')');
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
                return -EBADMSG;
        *ret = utime + stime;
        return 0;
}

static int cmd_cpu(pid_t pid, unsigned ms, unsigned limit_pct) {
        long hz = sysconf(_SC_CLK_TCK);
        uint64_t a, b;
        int64_t t0;
        double used, wall, pct;

        if (hz <= 0 || ms == 0 || cpu_ticks(pid, &a) < 0) {
                printf("FAIL cpu %d: cannot read /proc/%d/stat\n", (int) pid, (int) pid);
                return EXIT_FAIL;
        }
        t0 = now_us();
        sleep_ms(ms);
        if (cpu_ticks(pid, &b) < 0) {
                printf("ERR cpu %d: gone after %.1f ms\n", (int) pid, ms_since(t0));
                return EXIT_ERR;
        }
        wall = ms_since(t0);
        used = (double) (b - a) * 1000.0 / (double) hz;
        pct = 100.0 * used / wall;
        printf("%s cpu %d: %.0f ms of CPU in %.0f ms = %.1f %% (limit %u %%)\n", pct < limit_pct ? "OK" : "ERR",
               (int) pid, used, wall, pct, limit_pct);
        return pct < limit_pct ? EXIT_OK : EXIT_ERR;
}

/* ---- JSON ---------------------------------------------------------------
 * A strict RFC 8259 parser of its own, so the status is checked by other
 * code than the project's. Duplicate member names are an error: readers
 * disagree about which one counts. */

typedef enum JsonType {
        JSON_NULL,
        JSON_BOOL,
        JSON_NUMBER,
        JSON_STRING,
        JSON_ARRAY,
        JSON_OBJECT,
} JsonType;

typedef struct JsonNode {
        JsonType type;
        const char *key;  /* member name as written (no quotes), or NULL */
        size_t key_len;
        const char *text; /* the value as written; a string without its quotes */
        size_t text_len;
        int child, next;  /* first element or member, next sibling; -1: none */
} JsonNode;

typedef struct Json {
        const char *p, *start, *end;
        JsonNode *nodes;
        int n, cap;
        const char *error;
        int depth, max_depth;
} Json;

static int json_node(Json *j, JsonType type) {
        if (j->n == j->cap) {
                int cap = j->cap ? j->cap * 2 : 256;
                JsonNode *p = realloc(j->nodes, (size_t) cap * sizeof(*p));

                if (!p) {
                        j->error = "out of memory";
                        return -1;
                }
                j->nodes = p;
                j->cap = cap;
        }
        j->nodes[j->n] = (JsonNode) { .type = type, .child = -1, .next = -1 };
        return j->n++;
}

static void json_space(Json *j) {
        while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
                j->p++;
}

static bool json_fail(Json *j, const char *why) {
        if (!j->error)
                j->error = why;
        return false;
}

static bool is_hex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* A string at j->p; its text (quotes off, escapes kept) into ret. */
static bool json_string(Json *j, const char **ret_text, size_t *ret_len) {
        const char *s;

        if (j->p >= j->end || *j->p != '"')
                return json_fail(j, "expected a string");
        s = ++j->p;
        while (j->p < j->end && *j->p != '"') {
                unsigned char c = (unsigned char) *j->p;

                if (c < 0x20)
                        return json_fail(j, "control character in a string");
                if (c == '\\') {
                        j->p++;
                        if (j->p >= j->end)
                                break;
                        if (*j->p == 'u') {
                                for (int i = 1; i <= 4; i++)
                                        if (j->p + i >= j->end || !is_hex(j->p[i]))
                                                return json_fail(j, "bad \\u escape");
                                j->p += 4;
                        } else if (!strchr("\"\\/bfnrt", *j->p))
                                return json_fail(j, "bad escape");
                }
                j->p++;
        }
        if (j->p >= j->end)
                return json_fail(j, "unterminated string");
        *ret_text = s;
        *ret_len = (size_t) (j->p - s);
        j->p++;
        return true;
}

static bool json_number(Json *j) {
        if (j->p < j->end && *j->p == '-')
                j->p++;
        if (j->p < j->end && *j->p == '0')
                j->p++;
        else if (j->p < j->end && is_digit(*j->p))
                while (j->p < j->end && is_digit(*j->p))
                        j->p++;
        else
                return json_fail(j, "bad number");
        if (j->p < j->end && *j->p == '.') {
                j->p++;
                if (j->p >= j->end || !is_digit(*j->p))
                        return json_fail(j, "bad fraction");
                while (j->p < j->end && is_digit(*j->p))
                        j->p++;
        }
        if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
                j->p++;
                if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
                        j->p++;
                if (j->p >= j->end || !is_digit(*j->p))
                        return json_fail(j, "bad exponent");
                while (j->p < j->end && is_digit(*j->p))
                        j->p++;
        }
        return true;
}

static bool json_literal(Json *j, const char *word) {
        size_t len = strlen(word);

        if ((size_t) (j->end - j->p) < len || memcmp(j->p, word, len) != 0)
                return json_fail(j, "unexpected character");
        j->p += len;
        return true;
}

static int json_value(Json *j);

/* Elements or members up to the closing bracket; links them under node. */
static bool json_children(Json *j, int node, bool object) {
        int last = -1;

        j->p++;
        json_space(j);
        if (j->p < j->end && *j->p == (object ? '}' : ']')) {
                j->p++;
                return true;
        }
        for (;;) {
                const char *key = NULL;
                size_t key_len = 0;
                int child;

                json_space(j);
                if (object) {
                        if (!json_string(j, &key, &key_len))
                                return false;
                        for (int c = j->nodes[node].child; c >= 0; c = j->nodes[c].next)
                                if (j->nodes[c].key_len == key_len && memcmp(j->nodes[c].key, key, key_len) == 0)
                                        return json_fail(j, "duplicate member name");
                        json_space(j);
                        if (j->p >= j->end || *j->p != ':')
                                return json_fail(j, "expected ':'");
                        j->p++;
                }
                child = json_value(j);
                if (child < 0)
                        return false;
                j->nodes[child].key = key;
                j->nodes[child].key_len = key_len;
                if (last < 0)
                        j->nodes[node].child = child;
                else
                        j->nodes[last].next = child;
                last = child;
                json_space(j);
                if (j->p < j->end && *j->p == ',') {
                        j->p++;
                        continue;
                }
                if (j->p < j->end && *j->p == (object ? '}' : ']')) {
                        j->p++;
                        return true;
                }
                return json_fail(j, object ? "expected ',' or '}'" : "expected ',' or ']'");
        }
}

static int json_value(Json *j) {
        const char *s;
        bool ok;
        int node;

        json_space(j);
        if (j->p >= j->end) {
                json_fail(j, "unexpected end");
                return -1;
        }
        s = j->p;
        switch (*j->p) {
        case '{':
        case '[':
                if (++j->depth > JSON_DEPTH_MAX) {
                        json_fail(j, "nested too deep");
                        return -1;
                }
                if (j->depth > j->max_depth)
                        j->max_depth = j->depth;
                node = json_node(j, *j->p == '{' ? JSON_OBJECT : JSON_ARRAY);
                if (node < 0 || !json_children(j, node, *s == '{'))
                        return -1;
                j->depth--;
                j->nodes[node].text = s;
                j->nodes[node].text_len = (size_t) (j->p - s);
                return node;
        case '"':
                node = json_node(j, JSON_STRING);
                if (node < 0 || !json_string(j, &j->nodes[node].text, &j->nodes[node].text_len))
                        return -1;
                return node;
        case 't':
        case 'f':
                node = json_node(j, JSON_BOOL);
                ok = json_literal(j, *j->p == 't' ? "true" : "false");
                break;
        case 'n':
                node = json_node(j, JSON_NULL);
                ok = json_literal(j, "null");
                break;
        default:
                node = json_node(j, JSON_NUMBER);
                ok = json_number(j);
                break;
        }
        if (node < 0 || !ok)
                return -1;
        j->nodes[node].text = s;
        j->nodes[node].text_len = (size_t) (j->p - s);
        return node;
}

/* Parses the whole of buf; false with j->error and j->p at the fault. */
static bool json_parse(Json *j, const char *buf, size_t size) {
        *j = (Json) { .p = buf, .start = buf, .end = buf + size };
        if (json_value(j) < 0)
                return false;
        json_space(j);
        return j->p == j->end || json_fail(j, "text after the value");
}

static bool text_is(const char *text, size_t len, const char *s, size_t s_len) {
        return len == s_len && memcmp(text, s, len) == 0;
}

/* One step of a query over the node set in[]: a member name, an array
 * index, "*" (every element or member), or "KEY=VALUE" (the array's objects
 * whose member KEY is written VALUE). */
static int json_step(const Json *j, const int *in, int n_in, const char *seg, size_t len, int *out) {
        const char *eq = memchr(seg, '=', len);
        char *end;
        unsigned long index = strtoul(seg, &end, 10);
        bool numeric = len > 0 && is_digit(*seg) && end == seg + len;
        int n_out = 0;

        for (int i = 0; i < n_in; i++) {
                const JsonNode *node = &j->nodes[in[i]];
                unsigned long k = 0;

                if (node->type != JSON_ARRAY && node->type != JSON_OBJECT)
                        continue;
                for (int c = node->child; c >= 0; c = j->nodes[c].next, k++) {
                        const JsonNode *child = &j->nodes[c];
                        bool take;

                        if (text_is(seg, len, "*", 1))
                                take = true;
                        else if (node->type == JSON_ARRAY && numeric)
                                take = k == index;
                        else if (node->type == JSON_ARRAY && eq) {
                                take = false;
                                for (int m = child->type == JSON_OBJECT ? child->child : -1; m >= 0;
                                     m = j->nodes[m].next)
                                        if (text_is(j->nodes[m].key, j->nodes[m].key_len, seg, (size_t) (eq - seg)) &&
                                            text_is(j->nodes[m].text, j->nodes[m].text_len, eq + 1,
                                                    len - (size_t) (eq - seg) - 1))
                                                take = true;
                        } else
                                take = node->type == JSON_OBJECT && text_is(child->key, child->key_len, seg, len);
                        if (take)
                                out[n_out++] = c;
                }
        }
        return n_out;
}

/* Validates the file; prints one OK/ERR line. */
static int cmd_json(const char *path) {
        char *buf;
        size_t size;
        Json j;
        int r = slurp(path, &buf, &size);

        if (r < 0) {
                printf("FAIL json %s: %s\n", path, errname(-r));
                return EXIT_FAIL;
        }
        if (!json_parse(&j, buf, size)) {
                printf("ERR json %s: %s at byte %td of %zu: \"%.40s\"\n", path, j.error, j.p - j.start, size, j.p);
                return EXIT_ERR;
        }
        printf("OK json %s: valid JSON, %zu bytes, %d values, depth %d\n", path, size, j.n, j.max_depth);
        return EXIT_OK;
}

/* Prints the values a dotted query selects, one per line (strings without
 * quotes, arrays and objects as written); nothing on stdout when the file
 * is not JSON or nothing matched (exit 1, the reason on stderr). */
static int cmd_jq(const char *path, const char *query) {
        int *set, *next, n = 1, r;
        char *buf;
        size_t size;
        Json j;

        r = slurp(path, &buf, &size);
        if (r < 0) {
                fprintf(stderr, "FAIL jq %s: %s\n", path, errname(-r));
                return EXIT_FAIL;
        }
        if (!json_parse(&j, buf, size)) {
                fprintf(stderr, "ERR jq %s: not JSON: %s at byte %td\n", path, j.error, j.p - j.start);
                return EXIT_ERR;
        }
        set = calloc((size_t) j.n, sizeof(*set));
        next = calloc((size_t) j.n, sizeof(*next));
        if (!set || !next)
                return EXIT_FAIL;
        set[0] = 0;
        for (const char *q = query; *q && n > 0;) {
                size_t len = strcspn(q, ".");
                int *t;

                n = json_step(&j, set, n, q, len, next);
                t = set;
                set = next;
                next = t;
                q += len;
                if (*q == '.')
                        q++;
        }
        if (n == 0) {
                fprintf(stderr, "ERR jq %s: %s matches nothing\n", path, query);
                return EXIT_ERR;
        }
        for (int i = 0; i < n; i++)
                printf("%.*s\n", (int) j.nodes[set[i]].text_len, j.nodes[set[i]].text);
        return EXIT_OK;
}

/* ---- raw captures ------------------------------------------------------- */

static const uint8_t *rows_base;
static size_t rows_len;

static int cmp_row(const void *a, const void *b) {
        return memcmp(rows_base + *(const size_t *) a * rows_len, rows_base + *(const size_t *) b * rows_len,
                      rows_len);
}

/* A capture's size, the byte values it uses and how many of its rowlen-byte
 * rows are distinct: a restarted source that replays the same samples
 * after every restart shows as identical rows. */
static int cmd_rows(const char *path, size_t rowlen) {
        size_t size, n, distinct = 0, *order;
        unsigned values = 0;
        bool seen[256] = { false };
        char *buf;
        int r = slurp(path, &buf, &size);

        if (r < 0) {
                printf("ERR rows %s: %s\n", path, errname(-r));
                return EXIT_ERR;
        }
        for (size_t i = 0; i < size; i++)
                seen[(uint8_t) buf[i]] = true;
        for (unsigned v = 0; v < 256; v++)
                values += seen[v];
        if (rowlen == 0 || size % rowlen != 0) {
                printf("ERR rows %s: %zu bytes are no whole number of %zu-byte rows\n", path, size, rowlen);
                return EXIT_ERR;
        }
        n = size / rowlen;
        order = calloc(n ? n : 1, sizeof(*order));
        if (!order)
                return EXIT_FAIL;
        for (size_t i = 0; i < n; i++)
                order[i] = i;
        rows_base = (const uint8_t *) buf;
        rows_len = rowlen;
        qsort(order, n, sizeof(*order), cmp_row);
        for (size_t i = 0; i < n; i++)
                if (i == 0 || cmp_row(&order[i - 1], &order[i]) != 0)
                        distinct++;
        printf("OK rows %s: %zu bytes, %u byte values, %zu rows of %zu, %zu distinct\n", path, size, values, n,
               rowlen, distinct);
        return EXIT_OK;
}

/* ---- main -------------------------------------------------------------- */

/* UID:GID[:G1,G2,...]: supplementary groups as a login would set them. */
static int drop_privileges(const char *spec) {
        gid_t groups[16];
        unsigned long uid, gid;
        size_t ngroups = 0;
        char *end;

        uid = strtoul(spec, &end, 10);
        if (*end != ':')
                return -EINVAL;
        gid = strtoul(end + 1, &end, 10);
        if (*end == ':')
                do {
                        if (ngroups == sizeof(groups) / sizeof(groups[0]))
                                return -E2BIG;
                        groups[ngroups++] = (gid_t) strtoul(end + 1, &end, 10);
                } while (*end == ',');
        if (*end != 0)
                return -EINVAL;
        if (setgroups(ngroups, groups) < 0 || setgid((gid_t) gid) < 0 || setuid((uid_t) uid) < 0)
                return -errno;
        return 0;
}

static int write_proc(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = write(fd, text, strlen(text));
        close(fd);
        return n == (ssize_t) strlen(text) ? 0 : n < 0 ? -errno : -EIO;
}

/* unshare -Ur: a new user namespace where this process is root, its own
 * uid and gid mapped to 0 (all an unprivileged user may map). */
static int enter_userns(void) {
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };
        char map[64];
        uid_t uid = getuid();
        gid_t gid = getgid();
        int r;

        /* -u's setuid() made the process undumpable and its /proc files
         * root's; exec would have made them its own again. */
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        if (unshare(CLONE_NEWUSER) < 0)
                return -errno;
        if ((r = write_proc("/proc/self/setgroups", "deny")) < 0)
                return r;
        snprintf(map, sizeof(map), "0 %u 1", (unsigned) uid);
        if ((r = write_proc("/proc/self/uid_map", map)) < 0)
                return r;
        snprintf(map, sizeof(map), "0 %u 1", (unsigned) gid);
        if ((r = write_proc("/proc/self/gid_map", map)) < 0)
                return r;
        if (syscall(SYS_capget, &hdr, data) < 0)
                return -errno;
        if (!(data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)))
                return -EPERM;
        userns_note = ", root of its own user namespace with CAP_SYS_ADMIN in CapEff";
        return 0;
}

/* Drops CAP_SYS_ADMIN from every set, as a container runtime's default
 * capability list leaves root (CAP_SETUID and CAP_SETGID stay). */
static int drop_sys_admin(void) {
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };
        unsigned i = CAP_TO_INDEX(CAP_SYS_ADMIN);

        if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) < 0 || syscall(SYS_capget, &hdr, data) < 0)
                return -errno;
        data[i].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
        data[i].permitted &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
        data[i].inheritable &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
        return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

/* The parent's half of -c and -g once the child made its user namespace
 * (r: whether that went well): writes the child's maps (host_pid: its pid
 * in this /proc), lets it go on, and exits with its status; never returns. */
static _Noreturn void maps_then_wait(int r, pid_t pid, pid_t host_pid, const char *uid_map, const char *gid_map,
                                     int go_fd, const char *option) {
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/uid_map", (int) host_pid);
        if (r == 0)
                r = write_proc(path, uid_map);
        snprintf(path, sizeof(path), "/proc/%d/gid_map", (int) host_pid);
        if (r == 0)
                r = write_proc(path, gid_map);
        if (r < 0) {
                printf("FAIL %s: the namespace's maps: %s\n", option, errname(-r));
                kill(pid, SIGKILL);
                (void) child_status(pid);
                exit(EXIT_FAIL);
        }
        if (write(go_fd, "g", 1) != 1)
                exit(EXIT_FAIL);
        exit(child_status(pid));
}

/* -c, as root: root of a container that shares the host's user namespace
 * (issue 23, hostile finding 4). A pid namespace of its own; its pid 1
 * drops CAP_SYS_ADMIN and keeps CAP_SETUID and CAP_SETGID, as a runtime
 * leaves it; a child of that makes a user namespace and pid 1 writes the
 * full identity maps for it, which CAP_SETUID and CAP_SETGID in the
 * initial namespace allow. That child, every capability in CapEff, runs
 * the command; the others wait and exit with its status. */
static int enter_container(void) {
        int ready[2], go[2];
        pid_t pid, host_pid = 0;
        char c;
        int r;

        if (unshare(CLONE_NEWPID) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid > 0)
                exit(child_status(pid));
        if ((r = drop_sys_admin()) < 0)
                return r;
        if (pipe(ready) < 0 || pipe(go) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                /* /proc is the host's: the pid its maps are under is the
                 * one /proc/self names, not the one fork() returned. */
                char self[32] = "";

                if (readlink("/proc/self", self, sizeof(self) - 1) < 0)
                        return -errno;
                host_pid = (pid_t) strtol(self, NULL, 10);
                if (unshare(CLONE_NEWUSER) < 0)
                        return -errno;
                if (write(ready[1], &host_pid, sizeof(host_pid)) != sizeof(host_pid) || read(go[0], &c, 1) != 1)
                        return -EIO;
                userns_note = ", container root: full identity maps, CAP_SYS_ADMIN only in its own namespace";
                return 0;
        }
        r = read(ready[0], &host_pid, sizeof(host_pid)) == sizeof(host_pid) ? 0 : -EIO;
        maps_then_wait(r, pid, host_pid, "0 0 4294967295", "0 0 4294967295", go[1], "-c");
}

/* -g UID, as root: uid UID in a user namespace of its own whose gid_map
 * root wrote (as newgidmap does from /etc/subgid: 65,536 gids from
 * 100000), holding all 65,536 as supplementary groups, which makes its
 * /proc status ~460 KB (issue 23, hostile finding 1). The child runs the
 * command; root waits and exits with its status. */
#define MANY_GROUPS 65536
static int enter_many_groups(uid_t uid) {
        int ready[2], go[2];
        char c, map[64];
        gid_t *groups;
        pid_t pid;
        int r;

        if (pipe(ready) < 0 || pipe(go) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                        return -errno;
                prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
                if (unshare(CLONE_NEWUSER) < 0)
                        return -errno;
                if (write(ready[1], "u", 1) != 1 || read(go[0], &c, 1) != 1)
                        return -EIO;
                groups = calloc(MANY_GROUPS, sizeof(*groups));
                if (!groups)
                        return -ENOMEM;
                for (gid_t g = 0; g < MANY_GROUPS; g++)
                        groups[g] = g;
                r = setgroups(MANY_GROUPS, groups) < 0 ? -errno : 0;
                free(groups);
                return r;
        }
        r = read(ready[0], &c, 1) == 1 ? 0 : -EIO;
        snprintf(map, sizeof(map), "0 %u 1", (unsigned) uid);
        maps_then_wait(r, pid, pid, map, "0 100000 65536", go[1], "-g");
}

static void usage(void) {
        fprintf(stderr,
                "usage: trclient [-u UID:GID[:G1,G2]] [-n] [-w WATCHDOG_S] COMMAND ARGS\n"
                "  -n: then root of a new user namespace (unshare -Ur)\n"
                "  -c: as root: root of a container (own pid namespace, no CAP_SYS_ADMIN) in a\n"
                "      user namespace with the full identity maps\n"
                "  -g UID: as root: UID in a user namespace with 65,536 supplementary groups\n"
                "  open DEV                       open O_RDONLY\n"
                "  read DEV N [MS]                blocking reads until N bytes (deadline MS, 30000)\n"
                "  bytes DEV N [MS]               the same, and the bytes in hex (N <= 65536)\n"
                "  clocks LABEL                   CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_REALTIME\n"
                "  nbread DEV N                   one O_NONBLOCK read\n"
                "  drain DEV MS                   O_NONBLOCK reads until EAGAIN\n"
                "  poll DEV MS                    poll(POLLIN)\n"
                "  blocked DEV N MS [WAIT_MS]     read must block MS, then (WAIT_MS) be answered\n"
                "  signal DEV INT|KILL DELAY_MS LIMIT_MS  signal a reader blocked for DELAY_MS\n"
                "  readers DEV N DELAY_MS PID SIG LIMIT_MS  N blocked readers, then kill(PID, SIG)\n"
                "  ioctl DEV RNDGETENTCNT|RNDADDTOENTCNT|RNDADDENTROPY|RNDZAPENTCNT|RNDCLEARPOOL|RNDRESEEDCRNG [BITS]\n"
                "  write DEV N                    write N bytes\n"
                "  storm DEV N SECONDS            RNDRESEEDCRNG N times and for SECONDS\n"
                "  hammer DEV SOCKET SECONDS PROCS  PROCS loops of RNDZAPENTCNT, control connects\n"
                "  loop DEV SECONDS BUFSIZE       read for SECONDS, report the total\n"
                "  stream DEV BYTES SECONDS       copy to stdout (rate on stderr)\n"
                "  waitread DEV N MS              wait for the node and its first bytes\n"
                "  gone MS PATH...                wait until the paths disappear\n"
                "  tick DEV N INTERVAL_MS SECONDS read N bytes every INTERVAL_MS, latency percentiles\n"
                "  killreaders DEV N DELAY_MS LIMIT_MS  N parked readers; on SIGUSR2 all get SIGKILL\n"
                "  fds DEV N                      open N files, close them on SIGUSR2\n"
                "  ctlflood SOCKET N SECONDS      hold N idle control connections, reopening\n"
                "                                 each the daemon closes (0 s: until SIGUSR2)\n"
                "  cpu PID MS MAX_PERCENT         CPU time of PID over MS\n"
                "  longread DEV N [M MS]          one read(N); then one read(M) with SIGUSR1 after MS\n"
                "  json FILE|-                    is it valid JSON\n"
                "  jq FILE|- QUERY                values at a.b.0.c, a.*.c, a.KEY=VALUE.c\n"
                "  rows FILE ROWLEN               size, byte values and distinct rows of a capture\n"
                "  exec PROGRAM ARGS...           run PROGRAM (as -u; the watchdog stays armed)\n");
}

int main(int argc, char **argv) {
        const char *cmd, *dev;
        bool userns = false, container = false;
        long many_groups = -1;
        char **a;
        int opt, na, r;

        setvbuf(stdout, NULL, _IOLBF, 0);
        while ((opt = getopt(argc, argv, "+u:ncg:w:")) != -1)
                switch (opt) {
                case 'u':
                        r = drop_privileges(optarg);
                        if (r < 0) {
                                printf("FAIL -u %s: %s\n", optarg, errname(-r));
                                return EXIT_FAIL;
                        }
                        break;
                case 'n':
                        userns = true;
                        break;
                case 'c':
                        container = true;
                        break;
                case 'g':
                        many_groups = strtol(optarg, NULL, 10);
                        break;
                case 'w':
                        watchdog_seconds = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                default:
                        usage();
                        return EXIT_FAIL;
                }
        /* After -u, wherever it came: the namespace is made by that user. */
        if (many_groups >= 0 && (r = enter_many_groups((uid_t) many_groups)) < 0) {
                printf("FAIL -g: cannot take 65536 groups in a user namespace: %s\n", errname(-r));
                return EXIT_FAIL;
        }
        if (container && (r = enter_container()) < 0) {
                printf("FAIL -c: cannot become a container's root: %s\n", errname(-r));
                return EXIT_FAIL;
        }
        if (userns && (r = enter_userns()) < 0) {
                printf("FAIL -n: cannot become root of a user namespace: %s\n", errname(-r));
                return EXIT_FAIL;
        }
        if (argc - optind < 2) {
                usage();
                return EXIT_FAIL;
        }
        alarm(watchdog_seconds);
        cmd = argv[optind];
        dev = argv[optind + 1];
        a = argv + optind + 2;
        na = argc - optind - 2;

#define ARG(i, def) (na > (i) ? strtoul(a[i], NULL, 10) : (def))
        if (strcmp(cmd, "open") == 0)
                return cmd_open(dev);
        if (strcmp(cmd, "read") == 0 && na >= 1)
                return cmd_read(dev, ARG(0, 0), (unsigned) ARG(1, 30000), false);
        if (strcmp(cmd, "bytes") == 0 && na >= 1)
                return cmd_read(dev, ARG(0, 0), (unsigned) ARG(1, 30000), true);
        if (strcmp(cmd, "clocks") == 0)
                return cmd_clocks(dev);
        if (strcmp(cmd, "nbread") == 0 && na >= 1)
                return cmd_nbread(dev, ARG(0, 0));
        if (strcmp(cmd, "drain") == 0 && na >= 1)
                return cmd_drain(dev, (unsigned) ARG(0, 0));
        if (strcmp(cmd, "poll") == 0 && na >= 1)
                return cmd_poll(dev, (unsigned) ARG(0, 0));
        if (strcmp(cmd, "blocked") == 0 && na >= 2)
                return cmd_blocked(dev, ARG(0, 0), (unsigned) ARG(1, 0), (unsigned) ARG(2, 0));
        if (strcmp(cmd, "signal") == 0 && na >= 3)
                return cmd_signal(dev, a[0], (unsigned) ARG(1, 0), (unsigned) ARG(2, 0));
        if (strcmp(cmd, "readers") == 0 && na >= 5)
                return cmd_readers(dev, (unsigned) ARG(0, 0), (unsigned) ARG(1, 0), (pid_t) ARG(2, 0),
                                   (int) ARG(3, 0), (unsigned) ARG(4, 0));
        if (strcmp(cmd, "ioctl") == 0 && na >= 1)
                return cmd_ioctl(dev, a[0], na > 1 ? atoi(a[1]) : 64);
        if (strcmp(cmd, "hammer") == 0 && na >= 3)
                return cmd_hammer(dev, a[0], (unsigned) ARG(1, 0), (unsigned) ARG(2, 0));
        if (strcmp(cmd, "storm") == 0 && na >= 2)
                return cmd_storm(dev, ARG(0, 0), (unsigned) ARG(1, 0));
        if (strcmp(cmd, "write") == 0 && na >= 1)
                return cmd_write(dev, ARG(0, 0));
        if (strcmp(cmd, "loop") == 0 && na >= 2)
                return cmd_loop(dev, (unsigned) ARG(0, 0), ARG(1, 0));
        if (strcmp(cmd, "stream") == 0 && na >= 2)
                return cmd_stream(dev, ARG(0, 0), (unsigned) ARG(1, 0));
        if (strcmp(cmd, "waitread") == 0 && na >= 2)
                return cmd_waitread(dev, ARG(0, 0), (unsigned) ARG(1, 0));
        if (strcmp(cmd, "gone") == 0)
                return cmd_gone((unsigned) strtoul(dev, NULL, 10), a, na);
        if (strcmp(cmd, "tick") == 0 && na >= 3)
                return cmd_tick(dev, ARG(0, 0), (unsigned) ARG(1, 0), (unsigned) ARG(2, 0));
        if (strcmp(cmd, "killreaders") == 0 && na >= 3)
                return cmd_killreaders(dev, (unsigned) ARG(0, 0), (unsigned) ARG(1, 0), (unsigned) ARG(2, 0));
        if (strcmp(cmd, "ctlflood") == 0 && na >= 2)
                return cmd_ctlflood(dev, (unsigned) ARG(0, 0), (unsigned) ARG(1, 0));
        if (strcmp(cmd, "fds") == 0 && na >= 1)
                return cmd_fds(dev, (unsigned) ARG(0, 0));
        if (strcmp(cmd, "longread") == 0 && na >= 1)
                return cmd_longread(dev, ARG(0, 0), ARG(1, 0), (unsigned) ARG(2, 100));
        if (strcmp(cmd, "cpu") == 0 && na >= 2)
                return cmd_cpu((pid_t) strtol(dev, NULL, 10), (unsigned) ARG(0, 0), (unsigned) ARG(1, 0));
        if (strcmp(cmd, "json") == 0)
                return cmd_json(dev);
        if (strcmp(cmd, "jq") == 0 && na >= 1)
                return cmd_jq(dev, a[0]);
        if (strcmp(cmd, "rows") == 0 && na >= 1)
                return cmd_rows(dev, ARG(0, 0));
        if (strcmp(cmd, "exec") == 0) {
                /* The alarm survives exec: a hanging program ends with 142 too. */
                execvp(dev, argv + optind + 1);
                printf("FAIL exec %s: %s\n", dev, errname(errno));
                return EXIT_FAIL;
        }
#undef ARG
        usage();
        return EXIT_FAIL;
}
