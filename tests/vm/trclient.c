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
 * sees exit status 142. */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/random.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_READERS 256

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

static volatile sig_atomic_t deadline_hit;
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
}

/* Installs a handler without SA_RESTART: a blocked read returns EINTR. */
static void catch_signal(int sig) {
        struct sigaction sa = { .sa_handler = on_signal };

        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, NULL);
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
 * read, so short reads are normal and are counted. */
static int cmd_read(const char *dev, size_t n, unsigned ms) {
        uint8_t buf[65536];
        size_t got = 0;
        unsigned reads = 0;
        int64_t t0;
        int fd = open_dev("read", dev, O_RDONLY);

        if (fd < 0)
                return EXIT_ERR;
        if (deadline_arm(ms) < 0)
                return EXIT_FAIL;
        t0 = now_us();
        while (got < n) {
                size_t want = n - got < sizeof(buf) ? n - got : sizeof(buf);
                ssize_t r = read(fd, buf, want);

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
        printf("OK read %s: %zu bytes in %.1f ms, %u reads (uid=%d)\n", dev, got, ms_since(t0), reads,
               (int) getuid());
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
        else {
                printf("FAIL ioctl %s: unknown ioctl %s\n", dev, name);
                return EXIT_FAIL;
        }
        if (r < 0) {
                printf("ERR ioctl %s: %s from %s (uid=%d)\n", dev, errname(errno), name, (int) getuid());
                return EXIT_ERR;
        }
        if (strcmp(name, "RNDGETENTCNT") == 0)
                printf("OK ioctl %s: %s = %d (uid=%d)\n", dev, name, value, (int) getuid());
        else
                printf("OK ioctl %s: %s (uid=%d)\n", dev, name, (int) getuid());
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

/* Reads with bufsize-byte reads for seconds; the total is one reader's share. */
static int cmd_loop(const char *dev, unsigned seconds, size_t bufsize) {
        static uint8_t buf[65536];
        uint64_t total = 0, reads = 0;
        int64_t t0;
        int fd = open_dev("loop", dev, O_RDONLY);

        if (fd < 0)
                return EXIT_ERR;
        if (bufsize == 0 || bufsize > sizeof(buf) || deadline_arm(seconds * 1000) < 0)
                return EXIT_FAIL;
        t0 = now_us();
        while (!deadline_hit) {
                ssize_t r = read(fd, buf, bufsize);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0) {
                        printf("ERR loop %s: %s after %" PRIu64 " bytes\n", dev, r < 0 ? errname(errno) : "EOF",
                               total);
                        return EXIT_ERR;
                }
                total += (uint64_t) r;
                reads++;
        }
        printf("OK loop %s: %" PRIu64 " bytes in %.1f s, %" PRIu64 " reads of up to %zu (uid=%d)\n", dev, total,
               ms_since(t0) / 1000.0, reads, bufsize, (int) getuid());
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

static void usage(void) {
        fprintf(stderr,
                "usage: trclient [-u UID:GID[:G1,G2]] [-w WATCHDOG_S] COMMAND ARGS\n"
                "  open DEV                       open O_RDONLY\n"
                "  read DEV N [MS]                blocking reads until N bytes (deadline MS, 30000)\n"
                "  nbread DEV N                   one O_NONBLOCK read\n"
                "  drain DEV MS                   O_NONBLOCK reads until EAGAIN\n"
                "  poll DEV MS                    poll(POLLIN)\n"
                "  blocked DEV N MS [WAIT_MS]     read must block MS, then (WAIT_MS) be answered\n"
                "  signal DEV INT|KILL DELAY_MS LIMIT_MS  signal a reader blocked for DELAY_MS\n"
                "  readers DEV N DELAY_MS PID SIG LIMIT_MS  N blocked readers, then kill(PID, SIG)\n"
                "  ioctl DEV RNDGETENTCNT|RNDADDTOENTCNT|RNDADDENTROPY|RNDRESEEDCRNG [BITS]\n"
                "  write DEV N                    write N bytes\n"
                "  loop DEV SECONDS BUFSIZE       read for SECONDS, report the total\n"
                "  stream DEV BYTES SECONDS       copy to stdout (rate on stderr)\n"
                "  waitread DEV N MS              wait for the node and its first bytes\n"
                "  gone MS PATH...                wait until the paths disappear\n");
}

int main(int argc, char **argv) {
        const char *cmd, *dev;
        char **a;
        int opt, na, r;

        setvbuf(stdout, NULL, _IOLBF, 0);
        while ((opt = getopt(argc, argv, "+u:w:")) != -1)
                switch (opt) {
                case 'u':
                        r = drop_privileges(optarg);
                        if (r < 0) {
                                printf("FAIL -u %s: %s\n", optarg, errname(-r));
                                return EXIT_FAIL;
                        }
                        break;
                case 'w':
                        watchdog_seconds = (unsigned) strtoul(optarg, NULL, 10);
                        break;
                default:
                        usage();
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
                return cmd_read(dev, ARG(0, 0), (unsigned) ARG(1, 30000));
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
#undef ARG
        usage();
        return EXIT_FAIL;
}
