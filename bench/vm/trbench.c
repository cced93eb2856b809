/* trbench.c - the measuring half of the VM benchmark (bench/vm/run-bench.sh):
 * static, so it runs inside the busybox guest, driven by guest-bench.sh, and
 * on the host for the native kernel figures.
 *
 * Each command measures one thing and prints lines of the form
 *     FIG <key> <value>
 * which run-bench.sh gathers into its tables and its JSON line, plus INFO
 * lines for people. Every time is CLOCK_MONOTONIC of the machine it runs on:
 * in the guest that is guest time, which under TCG runs at an emulated
 * pace. The exit status says whether the measurement could be made, never
 * whether a figure was good.
 *
 *   tput ROUNDS TRIAL_MS NAME=DEV...   read() throughput and calls/s at 32 B,
 *        4 KiB, 64 KiB and 1 MiB; per-call latency at 32 B. Each round visits
 *        every size and every device once, the device order rotating from
 *        round to round, so drift and warm-up spread evenly; medians over
 *        rounds, percentiles over all the latency samples, and the first
 *        device's throughput over each other's as the median of per-round
 *        ratios.
 *   loop DEV SECONDS SIZE              reads flat out (the efficiency reader)
 *   wake DEV FIFO TRIALS SAMPLES       a reader parked on DEV; SAMPLES raw
 *        bytes written into the daemon's file-source FIFO (one block's
 *        worth); the time from that write to the reader's read() returning,
 *        interleaved with the same through a relay of three pipe wake-ups
 *        (the kernel's floor for the daemon's three: collector, loop, reader)
 *   park DEV N                         N threads, each with its own open file,
 *        blocked in read(32); prints once all are opened, then sleeps until
 *        killed
 *   cpu PID SECONDS KEY                CPU used by all of PID's threads, as
 *        FIG KEY <percent of one CPU>
 *   start PROG ARGS...                 exec to exit of PROG: the daemon's
 *        parent exits once the child is READY */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVICES 4
#define MAX_LATENCY_SAMPLES (1U << 18)
#define MAX_ROUNDS 64
#define BIG (1U << 20)

static const size_t sizes[] = { 32, 4096, 65536, BIG };
static const char *const size_tag[] = { "32", "4k", "64k", "1m" };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static int64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
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

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

        return (x > y) - (x < y);
}

/* Sorts v. */
static double median(double *v, size_t n) {
        qsort(v, n, sizeof(*v), cmp_double);
        if (n == 0)
                return 0;
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Nearest rank on a sorted array: the smallest value with at least p % of
 * the samples at or below it. */
static int64_t percentile(const int64_t *sorted, size_t n, unsigned p) {
        size_t rank = (n * p + 99) / 100;

        if (n == 0)
                return 0;
        return sorted[rank > 0 ? rank - 1 : 0];
}

/* A read() until it returns data: EINTR retried, anything else fatal. */
static ssize_t read_some(int fd, uint8_t *buf, size_t n) {
        ssize_t r;

        do
                r = read(fd, buf, n);
        while (r < 0 && errno == EINTR);
        return r;
}

/* ---- tput ---------------------------------------------------------------- */

typedef struct Device {
        const char *name;
        const char *path;
        int fd;
        double calls[NSIZES][MAX_ROUNDS];    /* per second, one per round */
        double bytes[NSIZES][MAX_ROUNDS];
        int64_t *latency;                    /* ns of one 32-byte read() */
        size_t n_latency;
} Device;

/* Reads size-byte blocks for ms; with a latency array, times every call.
 * Clock reads are batched for small reads so that they do not weigh on the
 * kernel's fast paths. */
static int trial(Device *d, uint8_t *buf, size_t size, unsigned ms, bool timed, double *ret_calls,
                 double *ret_bytes) {
        unsigned batch = timed || size > 4096 ? 1 : 16;
        uint64_t calls = 0, bytes = 0;
        int64_t start = now_ns(), end = start + (int64_t) ms * 1000000, t = start;

        while (t < end) {
                for (unsigned i = 0; i < batch; i++) {
                        int64_t t0 = timed ? now_ns() : 0;
                        ssize_t r = read_some(d->fd, buf, size);

                        if (r <= 0) {
                                printf("ERR tput %s: %s after %" PRIu64 " calls of %zu bytes\n", d->path,
                                       r < 0 ? errname(errno) : "EOF", calls, size);
                                return -1;
                        }
                        if (timed) {
                                t = now_ns();
                                if (d->n_latency < MAX_LATENCY_SAMPLES)
                                        d->latency[d->n_latency++] = t - t0;
                        }
                        calls++;
                        bytes += (uint64_t) r;
                }
                if (!timed)
                        t = now_ns();
        }
        *ret_calls = (double) calls * 1e9 / (double) (t - start);
        *ret_bytes = (double) bytes * 1e9 / (double) (t - start);
        return 0;
}

static int cmd_tput(unsigned rounds, unsigned ms, char **specs, int n_specs) {
        Device devs[MAX_DEVICES] = { 0 };
        int n = n_specs;
        uint8_t *buf;

        if (rounds == 0 || rounds > MAX_ROUNDS || ms == 0 || n < 1 || n > MAX_DEVICES) {
                printf("FAIL tput: 1..%d rounds, a trial length and 1..%d NAME=DEV\n", MAX_ROUNDS, MAX_DEVICES);
                return 2;
        }
        buf = aligned_alloc(4096, BIG);
        if (!buf)
                return 2;
        /* Faulted in now, not during the first trial. */
        memset(buf, 0, BIG);
        for (int i = 0; i < n; i++) {
                char *eq = strchr(specs[i], '=');

                if (!eq) {
                        printf("FAIL tput: %s is not NAME=DEV\n", specs[i]);
                        return 2;
                }
                *eq = 0;
                devs[i].name = specs[i];
                devs[i].path = eq + 1;
                devs[i].fd = open(devs[i].path, O_RDONLY | O_CLOEXEC);
                devs[i].latency = calloc(MAX_LATENCY_SAMPLES, sizeof(int64_t));
                if (devs[i].fd < 0 || !devs[i].latency) {
                        printf("ERR tput %s: %s on open\n", devs[i].path, errname(errno));
                        return 1;
                }
        }

        for (unsigned r = 0; r < rounds; r++)
                for (size_t s = 0; s < NSIZES; s++)
                        for (int k = 0; k < n; k++) {
                                Device *d = &devs[(k + (int) r) % n];
                                double calls, bytes;

                                if (trial(d, buf, sizes[s], ms, false, &d->calls[s][r], &d->bytes[s][r]) < 0)
                                        return 1;
                                /* The latency trial is its own, so the clock
                                 * reads around every call do not lower the
                                 * calls/s figure. */
                                if (sizes[s] == 32 && trial(d, buf, 32, ms, true, &calls, &bytes) < 0)
                                        return 1;
                        }

        /* Ratios of the first device to each other one, per round (both
         * measured within the same round, so slow spells hit both), before
         * median() sorts the rounds apart. */
        for (int i = 1; i < n; i++)
                for (size_t s = 0; s < NSIZES; s++) {
                        double ratio[MAX_ROUNDS];

                        for (unsigned r = 0; r < rounds; r++)
                                ratio[r] = devs[0].bytes[s][r] / devs[i].bytes[s][r];
                        printf("FIG ratio.%s_vs_%s.%s %.3f\n", devs[0].name, devs[i].name, size_tag[s],
                               median(ratio, rounds));
                }
        for (int i = 0; i < n; i++) {
                Device *d = &devs[i];

                for (size_t s = 0; s < NSIZES; s++) {
                        double lo, hi, calls, mbps;

                        calls = median(d->calls[s], rounds);
                        mbps = median(d->bytes[s], rounds) / 1e6;
                        lo = d->bytes[s][0] / 1e6;
                        hi = d->bytes[s][rounds - 1] / 1e6;
                        printf("INFO tput %-8s %4s: %10.0f calls/s %9.2f MB/s (rounds %.2f..%.2f MB/s)\n", d->name,
                               size_tag[s], calls, mbps, lo, hi);
                        printf("FIG tput.%s.%s.calls_per_s %.0f\n", d->name, size_tag[s], calls);
                        printf("FIG tput.%s.%s.mb_per_s %.3f\n", d->name, size_tag[s], mbps);
                }
                qsort(d->latency, d->n_latency, sizeof(int64_t), cmp_i64);
                printf("INFO lat32 %-8s: p50 %.1f us, p99 %.1f us over %zu reads\n", d->name,
                       (double) percentile(d->latency, d->n_latency, 50) / 1e3,
                       (double) percentile(d->latency, d->n_latency, 99) / 1e3, d->n_latency);
                printf("FIG lat32.%s.p50_us %.2f\n", d->name, (double) percentile(d->latency, d->n_latency, 50) / 1e3);
                printf("FIG lat32.%s.p99_us %.2f\n", d->name, (double) percentile(d->latency, d->n_latency, 99) / 1e3);
        }
        return 0;
}

/* ---- loop ---------------------------------------------------------------- */

static int cmd_loop(const char *dev, unsigned seconds, size_t size) {
        static uint8_t buf[65536];
        uint64_t total = 0, calls = 0;
        int64_t start, end;
        int fd;

        if (size == 0 || size > sizeof(buf))
                return 2;
        fd = open(dev, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                printf("ERR loop %s: %s on open\n", dev, errname(errno));
                return 1;
        }
        start = now_ns();
        end = start + (int64_t) seconds * 1000000000;
        while (now_ns() < end) {
                ssize_t r = read_some(fd, buf, size);

                if (r <= 0) {
                        printf("ERR loop %s: %s after %" PRIu64 " bytes\n", dev, r < 0 ? errname(errno) : "EOF",
                               total);
                        return 1;
                }
                total += (uint64_t) r;
                calls++;
        }
        printf("INFO loop %s: %" PRIu64 " bytes in %" PRIu64 " reads of up to %zu over %.1f s\n", dev, total, calls,
               size, (double) (now_ns() - start) / 1e9);
        return 0;
}

/* ---- wake ---------------------------------------------------------------- */

typedef struct Waiter {
        int fd;
        size_t size;
        int done_fd;                /* written once read() returned */
        _Atomic pid_t tid;
        int64_t returned_ns;
        ssize_t ret;
        int error;
} Waiter;

static void *waiter_run(void *arg) {
        Waiter *w = arg;
        uint8_t buf[4096];
        char c = 1;

        atomic_store(&w->tid, (pid_t) syscall(SYS_gettid));
        w->ret = read_some(w->fd, buf, w->size < sizeof(buf) ? w->size : sizeof(buf));
        w->returned_ns = now_ns();
        w->error = w->ret < 0 ? errno : 0;
        (void) !write(w->done_fd, &c, 1);
        return NULL;
}

/* The scheduler state letter of a thread of this process, or 0. */
static char task_state(pid_t tid) {
        char path[64], buf[512], *p;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int) tid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = 0;
        p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : 0;
}

static bool wait_readable(int fd, unsigned ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r;

        do
                r = poll(&p, 1, (int) ms);
        while (r < 0 && errno == EINTR);
        return r > 0;
}

static int feed(int fifo, size_t n) {
        uint8_t samples[4096];

        if (n > sizeof(samples) || getrandom(samples, n, 0) != (ssize_t) n)
                return -1;
        /* One write of at most PIPE_BUF bytes is atomic: the collector sees
         * the whole block's worth at once. */
        return write(fifo, samples, n) == (ssize_t) n ? 0 : -1;
}

/* Waits until the daemon has read everything written to the FIFO, then
 * reads the device dry, so that the next block to appear is the next one
 * fed. Returns the bytes drained. */
static long settle(int fifo, int nbfd) {
        uint8_t buf[4096];
        long drained = 0;
        int pending = 1;

        for (int i = 0; i < 5000 && pending > 0; i++) {
                if (ioctl(fifo, FIONREAD, &pending) < 0)
                        break;
                if (pending > 0)
                        sleep_ms(1);
        }
        /* The collector conditions what it just read: give it a moment. */
        sleep_ms(10);
        for (;;) {
                ssize_t r = read(nbfd, buf, sizeof(buf));

                if (r <= 0)
                        break;
                drained += r;
        }
        return drained;
}

#define PARK_MS 10
#define WAKE_TIMEOUT_MS 3000
#define WARMUP 3

/* One trial: a thread parked in read(rfd, size), then samples bytes written to
 * wfd. Returns the time from that write to the read's return in ns; 0 when
 * the block went elsewhere (a CRNG seed taking it, a health failure
 * discarding it), so the reader was fed again and the trial does not
 * count; -1 when data came before the write (no wake-up to time); -2 on an
 * error. */
static int64_t wake_trial(int rfd, size_t size, int wfd, size_t samples, int done[2], unsigned *lost) {
        Waiter w = { .fd = rfd, .size = size, .done_fd = done[1] };
        pthread_t t;
        int64_t fed;
        char c;

        if (pthread_create(&t, NULL, waiter_run, &w) != 0)
                return -2;
        /* Parked: the thread sleeps in read(), and the request had PARK_MS
         * to reach the daemon's queue. */
        for (int k = 0; k < 1000 && (atomic_load(&w.tid) == 0 || task_state(atomic_load(&w.tid)) != 'S'); k++)
                sleep_ms(1);
        sleep_ms(PARK_MS);
        if (wait_readable(done[0], 0)) {
                (void) !read(done[0], &c, 1);
                pthread_join(t, NULL);
                return -1;
        }
        fed = now_ns();
        if (feed(wfd, samples) < 0) {
                printf("ERR wake: %s writing the samples\n", errname(errno));
                return -2;
        }
        while (!wait_readable(done[0], WAKE_TIMEOUT_MS)) {
                (*lost)++;
                fed = 0;
                if (feed(wfd, samples) < 0)
                        return -2;
        }
        (void) !read(done[0], &c, 1);
        pthread_join(t, NULL);
        if (w.ret <= 0) {
                printf("ERR wake: read returned %s\n", w.ret < 0 ? errname(w.error) : "EOF");
                return -2;
        }
        return fed ? w.returned_ns - fed : 0;
}

/* Passes whatever arrives on in to out, until in closes. */
static void relay(int in, int out) {
        uint8_t buf[4096];
        ssize_t n;

        while ((n = read_some(in, buf, sizeof(buf))) > 0)
                if (write(out, buf, (size_t) n) != n)
                        break;
}

static void *relay_run(void *arg) {
        int *fds = arg;

        relay(fds[0], fds[1]);
        return NULL;
}

/* The floor for the daemon's path: three wake-ups as there (the collector
 * thread woken by the FIFO, the loop thread by its eventfd, the reader by
 * the reply), here through pipes, in a process of two threads of its own.
 * Returns the pid; *ret_in takes the samples, *ret_out is for the reader. */
static pid_t relay_start(int *ret_in, int *ret_out) {
        int a[2], b[2], c[2];
        pid_t pid;

        if (pipe2(a, O_CLOEXEC) < 0 || pipe2(b, O_CLOEXEC) < 0 || pipe2(c, O_CLOEXEC) < 0)
                return -1;
        pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                int hop2[2] = { b[0], c[1] };
                pthread_t t;

                close(a[1]);
                close(c[0]);
                if (pthread_create(&t, NULL, relay_run, hop2) != 0)
                        _exit(1);
                relay(a[0], b[1]);
                _exit(0);
        }
        close(a[0]);
        close(b[0]);
        close(b[1]);
        close(c[1]);
        *ret_in = a[1];
        *ret_out = c[0];
        return pid;
}

/* Where the tail is: trials over 2 ms by their index, since a tail
 * spread evenly (the emulator, the host) reads differently from one that
 * clusters (a start-up effect, a periodic timer). */
static void report_tail(const char *key, const int64_t *lat, unsigned n) {
        unsigned shown = 0, slow = 0;

        printf("INFO %s over 2 ms:", key);
        for (unsigned i = 0; i < n; i++)
                if (lat[i] > 2000000) {
                        slow++;
                        if (shown++ < 24)
                                printf(" #%u %.1f", i, (double) lat[i] / 1e6);
                }
        printf("%s (%u of %u)\n", shown > 24 ? " ..." : "", slow, n);
}

static void report(const char *key, int64_t *lat, unsigned n) {
        report_tail(key, lat, n);
        qsort(lat, n, sizeof(*lat), cmp_i64);
        printf("FIG %s.trials %u\n", key, n);
        printf("FIG %s.p50_ms %.3f\n", key, (double) percentile(lat, n, 50) / 1e6);
        printf("FIG %s.p99_ms %.3f\n", key, (double) percentile(lat, n, 99) / 1e6);
        printf("FIG %s.max_ms %.3f\n", key, n ? (double) lat[n - 1] / 1e6 : 0.0);
}

/* Interleaves trials on the daemon and on the relay, so that a slow spell
 * of the emulator (or of the host under it) falls on both alike. */
static int cmd_wake(const char *dev, const char *fifo_path, unsigned trials, size_t samples) {
        int64_t *lat, *floor_lat;
        unsigned got = 0, got_floor = 0, lost = 0, early = 0;
        long drained = 0;
        int fd, nbfd, fifo, done[2], relay_in = -1, relay_out = -1;
        pid_t relay_pid;

        lat = calloc(trials + 1, sizeof(*lat));
        floor_lat = calloc(trials + 1, sizeof(*floor_lat));
        fd = open(dev, O_RDONLY | O_CLOEXEC);
        nbfd = open(dev, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        fifo = open(fifo_path, O_WRONLY | O_CLOEXEC);
        if (!lat || !floor_lat || fd < 0 || nbfd < 0 || fifo < 0 || pipe2(done, O_CLOEXEC) < 0) {
                printf("ERR wake %s: %s on open\n", dev, errname(errno));
                return 1;
        }
        relay_pid = relay_start(&relay_in, &relay_out);
        if (relay_pid < 0)
                return 2;
        for (unsigned i = 0; got < trials && i < trials * 2 + WARMUP; i++) {
                unsigned floor_lost = 0;
                int64_t t;

                drained += settle(fifo, nbfd);
                t = wake_trial(fd, 32, fifo, samples, done, &lost);
                if (t < -1)
                        return 1;
                if (t == -1)
                        early++;
                else if (t > 0 && i >= WARMUP)
                        lat[got++] = t;

                t = wake_trial(relay_out, samples, relay_in, samples, done, &floor_lost);
                if (t < 0 || floor_lost > 0)
                        return 1;
                if (i >= WARMUP && got_floor < trials)
                        floor_lat[got_floor++] = t;
        }
        close(relay_in);
        waitpid(relay_pid, NULL, 0);
        printf("INFO wake %s: %u trials, %u lost blocks, %u early, %ld bytes drained\n", dev, got, lost, early,
               drained);
        report("wake", lat, got);
        report("wake_floor", floor_lat, got_floor);
        printf("INFO wake: daemon p50 %.3f ms p99 %.3f ms; three-hop pipe floor p50 %.3f ms p99 %.3f ms\n",
               (double) percentile(lat, got, 50) / 1e6, (double) percentile(lat, got, 99) / 1e6,
               (double) percentile(floor_lat, got_floor, 50) / 1e6,
               (double) percentile(floor_lat, got_floor, 99) / 1e6);
        return got == trials ? 0 : 1;
}

/* ---- park ---------------------------------------------------------------- */

static const char *park_dev;
static atomic_uint park_opened, park_failed, park_returned;

static void *parker_run(void *arg) {
        uint8_t buf[32];
        int fd = open(park_dev, O_RDONLY | O_CLOEXEC);

        if (fd < 0) {
                atomic_fetch_add(&park_failed, 1);
                return NULL;
        }
        atomic_fetch_add(&park_opened, 1);
        (void) !read(fd, buf, sizeof(buf));
        atomic_fetch_add(&park_returned, 1);
        return NULL;
}

static int cmd_park(const char *dev, unsigned n) {
        struct rlimit files = { .rlim_cur = n + 64, .rlim_max = n + 64 };
        struct rlimit procs = { .rlim_cur = RLIM_INFINITY, .rlim_max = RLIM_INFINITY };
        pthread_attr_t attr;
        int64_t start = now_ns();
        unsigned created = 0;

        park_dev = dev;
        if (setrlimit(RLIMIT_NOFILE, &files) < 0 || setrlimit(RLIMIT_NPROC, &procs) < 0) {
                printf("ERR park: %s raising the limits\n", errname(errno));
                return 1;
        }
        /* A reader needs a few hundred bytes of stack: small stacks keep
         * 10,000 of them within a small guest. */
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        for (unsigned i = 0; i < n; i++) {
                pthread_t t;
                int r = pthread_create(&t, &attr, parker_run, NULL);

                if (r != 0) {
                        printf("ERR park: %s creating thread %u\n", errname(r), i);
                        break;
                }
                created++;
        }
        while (atomic_load(&park_opened) + atomic_load(&park_failed) < created)
                sleep_ms(10);
        printf("OK park %s: %u threads, %u opened, %u open errors, %u returned, in %.1f s\n", dev, created,
               atomic_load(&park_opened), atomic_load(&park_failed), atomic_load(&park_returned),
               (double) (now_ns() - start) / 1e9);
        for (;;)
                pause();
}

/* ---- cpu ----------------------------------------------------------------- */

/* Nanoseconds on CPU of every thread of pid (schedstat's first field). */
static int cpu_ns(pid_t pid, uint64_t *ret) {
        char path[64];
        struct dirent *e;
        uint64_t sum = 0;
        DIR *dir;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        dir = opendir(path);
        if (!dir)
                return -errno;
        while ((e = readdir(dir))) {
                char p[320];
                unsigned long long ns;
                FILE *f;

                if (e->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof(p), "/proc/%d/task/%s/schedstat", (int) pid, e->d_name);
                f = fopen(p, "re");
                if (!f)
                        continue;
                if (fscanf(f, "%llu", &ns) == 1)
                        sum += ns;
                fclose(f);
        }
        closedir(dir);
        *ret = sum;
        return 0;
}

static int cmd_cpu(pid_t pid, unsigned seconds, const char *key) {
        uint64_t a, b;
        int64_t t0, t1;

        t0 = now_ns();
        if (cpu_ns(pid, &a) < 0) {
                printf("ERR cpu %d: no such process\n", (int) pid);
                return 1;
        }
        sleep_ms(seconds * 1000);
        if (cpu_ns(pid, &b) < 0) {
                printf("ERR cpu %d: gone during the measurement\n", (int) pid);
                return 1;
        }
        t1 = now_ns();
        /* The total since start shows that the counter moves at all. */
        printf("INFO cpu %d: %.3f ms on CPU in %.2f s (%.1f ms since it started)\n", (int) pid, (double) (b - a) / 1e6,
               (double) (t1 - t0) / 1e9, (double) b / 1e6);
        printf("FIG %s %.4f\n", key, 100.0 * (double) (b - a) / (double) (t1 - t0));
        return 0;
}

/* ---- start --------------------------------------------------------------- */

static int cmd_start(char **argv) {
        int64_t t0 = now_ns();
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return 2;
        if (pid == 0) {
                execvp(argv[0], argv);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return 2;
        printf("START %.2f %d\n", (double) (now_ns() - t0) / 1e6, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* ---- main ---------------------------------------------------------------- */

static void usage(void) {
        fprintf(stderr, "usage: trbench tput ROUNDS TRIAL_MS NAME=DEV...\n"
                        "       trbench loop DEV SECONDS SIZE\n"
                        "       trbench wake DEV FIFO TRIALS SAMPLES\n"
                        "       trbench park DEV N\n"
                        "       trbench cpu PID SECONDS KEY\n"
                        "       trbench start PROG ARGS...\n");
}

int main(int argc, char **argv) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc < 3) {
                usage();
                return 2;
        }
#define U(i) ((unsigned) strtoul(argv[i], NULL, 10))
        if (strcmp(argv[1], "tput") == 0 && argc >= 5)
                return cmd_tput(U(2), U(3), argv + 4, argc - 4);
        if (strcmp(argv[1], "loop") == 0 && argc == 5)
                return cmd_loop(argv[2], U(3), U(4));
        if (strcmp(argv[1], "wake") == 0 && argc == 6)
                return cmd_wake(argv[2], argv[3], U(4), U(5));
        if (strcmp(argv[1], "park") == 0 && argc == 4)
                return cmd_park(argv[2], U(3));
        if (strcmp(argv[1], "cpu") == 0 && argc == 5)
                return cmd_cpu((pid_t) U(2), U(3), argv[4]);
        if (strcmp(argv[1], "start") == 0)
                return cmd_start(argv + 2);
#undef U
        usage();
        return 2;
}
