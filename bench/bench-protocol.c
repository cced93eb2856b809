/* bench-protocol.c - the daemon's own cost per request: the real loop,
 * libfuse and handlers, driven over the protocol suite's socketpair by its
 * fake kernel (tests/lib/fakekernel.h), so no /dev/cuse is needed.
 *
 *  throughput  drop-in random reads of 32 B, 4 KiB, 64 KiB and 128 KiB
 *              against the null device, which answers zeros through the
 *              same loop, session and libfuse: the floor the daemon itself
 *              sets. WINDOW reads in flight (as many reader threads), and
 *              one in flight (latency). Every round times each size, mode
 *              and device once, the device going first alternating; the
 *              table reports medians over rounds, and each ratio is the
 *              median of the rounds' own ratios (paired in time, so a noisy
 *              neighbour hits both sides alike): random/null requests/s, and
 *              null/random CPU of the daemon's thread per read, which the
 *              fake kernel's own speed does not cap.
 *  parked RSS  10,000 /dev/truerandom reads from 100 uids parked on a daemon
 *              whose sources never start. The fake kernel keeps a record of
 *              every request in flight in this same process: its share is
 *              measured on its own (the same 10,000 reads sent to a socket
 *              that is read and never answered) and subtracted.
 *  idle CPU    a daemon nobody asks, its store filled as far as it fills
 *              unasked (low_water or more; the sources then stop), over 10 s.
 *  first block the daemon with the jitter source alone at credit = auto
 *              and the running gate's default window (the shipped
 *              defaults): the time from daemon_new() to CUSE_INIT answered
 *              (the devices up) and to the first /dev/truerandom byte (the
 *              gate's first verdict, the startup test, the first block),
 *              and the process's VmRSS then; natively, no CUSE needed.
 *  per source  [device] per_source_devices = yes with the file source
 *              (its pace as fast as it reads) and jitter (the real clock,
 *              credit = auto), a 64-block store so that the sources' pace
 *              shows, not the store's: each round reads /dev/truerandom,
 *              /dev/truerandom-file and /dev/truerandom-jitter for
 *              PER_SOURCE_NS each, in turn (the first rotating), 4 KiB
 *              reads, one in flight; medians of bytes/s and of each
 *              round's own ratio to /dev/truerandom.
 * RSS, idle CPU and the first block run in forked children, each from a fresh heap that no
 * earlier phase has grown. It measures, it does not judge: the exit status
 * is non-zero only when the daemon misbehaved (a wrong reply, a message the
 * kernel would reject), never because of a figure. The last line of output
 * is one JSON object.
 *
 *   bench-protocol [ROUNDS]       (default 11)
 *
 * Flow: bench -> fake kernel -> socketpair -> libfuse -> daemon loop. */
#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "config/config.h"
#include "daemon/daemon.h"
#include "daemon/log.h"
#include "fakedaemon.h"
#include "fakekernel.h"

#define ROUNDS_DEFAULT 11
#define ROUNDS_MAX 1001
#define TRIAL_NS 150000000LL      /* per size, mode, device and round */
#define WARMUP_NS 20000000LL
#define WINDOW 8                  /* reads in flight in the windowed mode */
#define PARKED 10000U
#define PARKED_UIDS 100U
#define PARKED_SIZE 32U
#define IDLE_SECONDS 10
#define NO_START_MS 3600000U      /* sources held back for the whole run */
#define PER_SOURCE_NS 1000000000LL /* per device and round */
#define PER_SOURCE_ROUNDS 5
#define PER_SOURCE_STORE 64

static const uint32_t sizes[] = { 32, 4096, 65536, 131072 };
static const char *const size_tag[] = { "32", "4k", "64k", "128k" };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

enum { DEV_RANDOM, DEV_NULL, NDEVS };
static const CuseDevKind dev_kind[NDEVS] = { CUSEDEV_RANDOM, CUSEDEV_NULL };
static const char *const dev_name[NDEVS] = { "random", "null" };

enum { MODE_WINDOW, MODE_SINGLE, NMODES };
static const unsigned mode_window[NMODES] = { WINDOW, 1 };

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

__attribute__((noreturn, format(printf, 1, 2)))
static void die(const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "bench-protocol: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        exit(EXIT_FAILURE);
}

/* r is 0 or -errno, as every call below returns. */
static void must(int r, const char *what) {
        if (r < 0)
                die("%s: %s", what, strerror(-r));
}

static int64_t must_send(int64_t unique, const char *what) {
        if (unique < 0)
                die("%s: %s", what, strerror((int) -unique));
        return unique;
}

static long long now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long clock_ns(clockid_t id) {
        struct timespec ts;

        if (clock_gettime(id, &ts) < 0)
                die("clock_gettime: %s", strerror(errno));
        return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(long long ns) {
        struct timespec ts = { .tv_sec = (time_t) (ns / 1000000000LL), .tv_nsec = (long) (ns % 1000000000LL) };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* A figure of /proc/self/status in KiB: name is "VmRSS" or "VmHWM". */
static long vm_kib(const char *name) {
        char line[256];
        size_t n = strlen(name);
        long v = -1;
        FILE *f = fopen("/proc/self/status", "re");

        if (!f)
                die("/proc/self/status: %s", strerror(errno));
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, name, n) == 0 && line[n] == ':') {
                        v = strtol(line + n + 1, NULL, 10);
                        break;
                }
        fclose(f);
        if (v < 0)
                die("no %s in /proc/self/status", name);
        return v;
}

static long vm_rss_kib(void) {
        return vm_kib("VmRSS");
}

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

static double median(const double *v, size_t n) {
        double tmp[ROUNDS_MAX];

        memcpy(tmp, v, n * sizeof(double));
        qsort(tmp, n, sizeof(double), compare_double);
        return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* ------------------------------------------------------------------ */
/* a daemon on its own thread, its devices behind fake kernels         */

typedef struct Bench {
        FakeDaemon *daemon;       /* its thread, scratch directory and fake kernels */
        FakeKernel **fk;          /* daemon->fk: each device's kernel, by kind */
        FkFile file[_CUSEDEV_KIND_MAX];
        Config config;
        clockid_t loop_clock;     /* the daemon loop thread's CPU time */
} Bench;

/* What the protocol suite starts from (fakedaemon_config()): only the file
 * source, credited 8 bits per uniformly distributed sample (fixed seed), so
 * the store fills and the CRNG seeds within milliseconds; the rest as the
 * built-in defaults. */
static Bench *bench_new(void) {
        Bench *b = calloc(1, sizeof(*b));

        if (!b)
                die("out of memory");
        must(fakedaemon_new("bench", "bench", &b->daemon), "scratch directory");
        must(fakedaemon_config(b->daemon, &b->config), "configuration");
        b->fk = b->daemon->fk;
        return b;
}

static void bench_start(Bench *b) {
        must(fakedaemon_start(b->daemon, &b->config, NULL, NULL), "daemon_new");
        if (pthread_getcpuclockid(b->daemon->thread, &b->loop_clock) != 0)
                die("pthread_getcpuclockid failed");
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                if (!b->fk[k])
                        continue;
                must(fk_open(b->fk[k], NULL, k == CUSEDEV_TRNG ? O_RDONLY : O_RDWR, &b->file[k]), "open");
        }
}

/* SIGTERM as systemd sends it (blocked everywhere: the loop's signalfd). */
static void bench_stop(Bench *b) {
        must(fakedaemon_stop(b->daemon), "daemon_run");
}

static void bench_free(Bench *b) {
        bench_stop(b);
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                const char *last = NULL;

                if (!b->fk[k])
                        continue;
                /* A figure from a session the kernel would have cut is void. */
                if (fk_violations(b->fk[k], &last) != 0)
                        die("device %s: the kernel would reject: %s", cusedev_kind_to_string(k), last);
        }
        config_done(&b->config);
        fakedaemon_free(b->daemon);
        free(b);
}

static int entcnt(Bench *b, CuseDevKind k) {
        int v = -1;

        must(fk_ioctl(b->fk[k], &b->file[k], RNDGETENTCNT, &v, sizeof(v)), "RNDGETENTCNT");
        return v;
}

static void wait_seeded(Bench *b) {
        long long until = now_ns() + 30000000000LL;

        while (!(fk_poll(b->fk[CUSEDEV_RANDOM], &b->file[CUSEDEV_RANDOM], POLLIN, false) & POLLIN)) {
                if (now_ns() > until)
                        die("the CRNG was not seeded within 30 s");
                sleep_ns(5000000);
        }
}

/* ------------------------------------------------------------------ */
/* throughput                                                          */

typedef struct Trial {
        double req_per_s;
        double loop_us_per_req;   /* the daemon thread's CPU per request */
} Trial;

/* `window` reads of `size` kept in flight for `ns`; each reply is copied out
 * as read(2) copies it to the caller. The fake kernel's half of the copy
 * runs on the daemon's thread (inside its write), as the kernel's would. */
static Trial trial(Bench *b, int dev, uint32_t size, unsigned window, long long ns) {
        static uint8_t sink[131072];
        FakeKernel *fk = b->fk[dev_kind[dev]];
        const FkFile *f = &b->file[dev_kind[dev]];
        int64_t inflight[WINDOW];
        unsigned outstanding = window;
        unsigned long long done = 0;
        long long start, end, cpu_start, cpu_end = 0;
        bool timing = true;
        FkMsg m;

        cpu_start = clock_ns(b->loop_clock);
        start = end = now_ns();
        for (unsigned i = 0; i < window; i++)
                inflight[i] = must_send(fk_send_read(fk, NULL, f->fh, size, 0), "read");
        while (outstanding > 0) {
                unsigned slot = window;

                must(fk_recv(fk, FK_TIMEOUT_DEFAULT_MS, &m), "waiting for a reply");
                if (m.kind != FK_MSG_REPLY)
                        continue;
                for (unsigned i = 0; i < window; i++)
                        if (inflight[i] == (int64_t) m.unique)
                                slot = i;
                if (slot == window)
                        die("%s: a reply to a request never sent", dev_name[dev]);
                if (m.error != 0 || m.len != size)
                        die("%s: a read of %u got %zu bytes, error %d", dev_name[dev], size, m.len, m.error);
                memcpy(sink, m.data, m.len);
                inflight[slot] = -1;
                outstanding--;
                /* Past the deadline, what is still in flight is drained
                 * uncounted. */
                if (!timing)
                        continue;
                done++;
                end = now_ns();
                if (end - start >= ns) {
                        cpu_end = clock_ns(b->loop_clock);
                        timing = false;
                        continue;
                }
                inflight[slot] = must_send(fk_send_read(fk, NULL, f->fh, size, 0), "read");
                outstanding++;
        }
        return (Trial) {
                .req_per_s = (double) done * 1e9 / (double) (end - start),
                .loop_us_per_req = (double) (cpu_end - cpu_start) / 1e3 / (double) done,
        };
}

typedef struct Throughput {
        /* per size, mode and device: medians */
        double req_per_s[NSIZES][NMODES][NDEVS];
        double loop_us[NSIZES][NMODES][NDEVS];
        /* per size and mode: medians of the rounds' random/null requests/s,
         * and of null/random loop CPU per request */
        double ratio[NSIZES][NMODES];
        double cpu_ratio[NSIZES][NMODES];
} Throughput;

static void run_throughput(unsigned rounds, Throughput *ret) {
        static double rate[NSIZES][NMODES][NDEVS][ROUNDS_MAX];
        static double loop[NSIZES][NMODES][NDEVS][ROUNDS_MAX];
        static double ratio[NSIZES][NMODES][ROUNDS_MAX];
        static double cpu_ratio[NSIZES][NMODES][ROUNDS_MAX];
        Bench *b = bench_new();

        /* The fake kernel mallocs a copy of every reply; glibc would give
         * 128 KiB ones fresh pages (mmap, or a heap trimmed between replies)
         * and fault them in each time, a cost the real kernel's copy to the
         * reader does not have and that would swamp the daemon's own. Big
         * enough thresholds keep those copies in reused memory. */
        mallopt(M_MMAP_THRESHOLD, 4 << 20);
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
        b->config.device[CONFIG_DEVICE_NULL].name = strdup("truerandom-null");
        if (!b->config.device[CONFIG_DEVICE_NULL].name)
                die("out of memory");
        bench_start(b);
        wait_seeded(b);

        for (size_t s = 0; s < NSIZES; s++)
                for (int dev = 0; dev < NDEVS; dev++)
                        (void) trial(b, dev, sizes[s], WINDOW, WARMUP_NS);
        for (unsigned round = 0; round < rounds; round++)
                for (size_t s = 0; s < NSIZES; s++)
                        for (int mode = 0; mode < NMODES; mode++) {
                                for (int i = 0; i < NDEVS; i++) {
                                        int dev = (int) ((round + s + (size_t) mode + (size_t) i) % NDEVS);
                                        Trial t = trial(b, dev, sizes[s], mode_window[mode], TRIAL_NS);

                                        rate[s][mode][dev][round] = t.req_per_s;
                                        loop[s][mode][dev][round] = t.loop_us_per_req;
                                }
                                ratio[s][mode][round] = rate[s][mode][DEV_RANDOM][round] /
                                                        rate[s][mode][DEV_NULL][round];
                                cpu_ratio[s][mode][round] = loop[s][mode][DEV_NULL][round] /
                                                            loop[s][mode][DEV_RANDOM][round];
                        }
        bench_free(b);

        for (size_t s = 0; s < NSIZES; s++)
                for (int mode = 0; mode < NMODES; mode++) {
                        for (int dev = 0; dev < NDEVS; dev++) {
                                ret->req_per_s[s][mode][dev] = median(rate[s][mode][dev], rounds);
                                ret->loop_us[s][mode][dev] = median(loop[s][mode][dev], rounds);
                        }
                        ret->ratio[s][mode] = median(ratio[s][mode], rounds);
                        ret->cpu_ratio[s][mode] = median(cpu_ratio[s][mode], rounds);
                }
}

/* ------------------------------------------------------------------ */
/* RSS with parked readers (run in a child)                            */

enum { RSS_FK_BEFORE, RSS_FK_AFTER, RSS_BEFORE, RSS_AFTER, RSS_MAX_PARKED, _RSS_MAX };

static FkCaller parked_caller(unsigned i) {
        return (FkCaller) { .uid = 10000 + i % PARKED_UIDS, .gid = 100, .pid = 20000 + i };
}

typedef struct Drain {
        int fd;
        atomic_uint seen;
} Drain;

/* A daemon that reads every request and never answers: what the fake
 * kernel keeps for parked reads, without the daemon's share. */
static void *drain_thread(void *userdata) {
        Drain *dr = userdata;
        uint8_t buf[4096];

        for (;;) {
                struct pollfd p = { .fd = dr->fd, .events = POLLIN };
                ssize_t n = recv(dr->fd, buf, sizeof(buf), MSG_DONTWAIT);

                if (n > 0) {
                        atomic_fetch_add(&dr->seen, 1);
                        continue;
                }
                if (n == 0 || (errno != EAGAIN && errno != EINTR))
                        return NULL;
                (void) poll(&p, 1, -1);
        }
}

static void rss_fake_kernel_only(double *out) {
        FakeKernel *fk;
        Drain dr = { .fd = -1 };
        pthread_t t;
        long long until;

        must(fk_new(&fk, &dr.fd), "fk_new");
        if (pthread_create(&t, NULL, drain_thread, &dr) != 0)
                die("pthread_create failed");
        out[RSS_FK_BEFORE] = (double) vm_rss_kib();
        for (unsigned i = 0; i < PARKED; i++) {
                FkCaller c = parked_caller(i);
                must_send(fk_send_read(fk, &c, 1, PARKED_SIZE, 0), "read");
        }
        until = now_ns() + 30000000000LL;
        while (atomic_load(&dr.seen) < PARKED) {
                if (now_ns() > until)
                        die("the draining reader saw %u of %u requests", atomic_load(&dr.seen), PARKED);
                sleep_ns(1000000);
        }
        out[RSS_FK_AFTER] = (double) vm_rss_kib();
        fk_free(fk);
        pthread_join(t, NULL);
        close(dr.fd);
}

static void rss_parked(double *out) {
        static int64_t u[PARKED];
        Bench *b = bench_new();
        FakeKernel *fk;

        b->config.start_delay_usec = NO_START_MS * USEC_PER_MSEC;
        if (b->config.max_parked < PARKED)
                b->config.max_parked = PARKED;
        out[RSS_MAX_PARKED] = b->config.max_parked;
        bench_start(b);
        fk = b->fk[CUSEDEV_TRNG];
        (void) entcnt(b, CUSEDEV_TRNG);
        out[RSS_BEFORE] = (double) vm_rss_kib();
        for (unsigned i = 0; i < PARKED; i++) {
                FkCaller c = parked_caller(i);
                u[i] = must_send(fk_send_read(fk, &c, b->file[CUSEDEV_TRNG].fh, PARKED_SIZE, 0), "read");
        }
        /* The session's requests are handled in order: once this is
         * answered, every read before it was parked or refused. */
        if (entcnt(b, CUSEDEV_TRNG) != 0)
                die("/dev/truerandom served with its sources held back");
        for (unsigned i = 0; i < PARKED; i++)
                if (!fk_waiting(fk, (uint64_t) u[i]))
                        die("read %u of %u was answered instead of parked", i, PARKED);
        out[RSS_AFTER] = (double) vm_rss_kib();
        bench_free(b);
}

/* ------------------------------------------------------------------ */
/* idle CPU (run in a child)                                           */

enum { IDLE_WALL_S, IDLE_PROC_CPU_S, IDLE_LOOP_CPU_S, IDLE_WAKEUPS, IDLE_FILL_BEFORE, IDLE_FILL_AFTER,
       IDLE_CAPACITY, IDLE_LOW_WATER, _IDLE_MAX };

static double rusage_s(const struct rusage *ru) {
        return (double) ru->ru_utime.tv_sec + (double) ru->ru_utime.tv_usec / 1e6 +
               (double) ru->ru_stime.tv_sec + (double) ru->ru_stime.tv_usec / 1e6;
}

static void idle_cpu(double *out) {
        Bench *b = bench_new();
        /* daemon_new() takes the configuration over: read it first. */
        unsigned capacity = b->config.store_blocks, low_water = b->config.low_water;
        struct rusage ru0, ru1;
        long long t0, t1, loop0, loop1, until;
        int fill, last = -1;

        bench_start(b);
        wait_seeded(b);
        /* /dev/truerandom's count is the store's fill in bits. The sources
         * stop once it is at least low_water and nobody asks (after the
         * CRNG's seed took a block, that can be one short of capacity):
         * wait until the fill holds still. */
        until = now_ns() + 30000000000LL;
        while ((fill = entcnt(b, CUSEDEV_TRNG) / 256) < (int) low_water || fill != last) {
                if (now_ns() > until)
                        die("the store did not settle within 30 s (%d blocks)", fill);
                last = fill;
                sleep_ns(300000000LL);
        }
        out[IDLE_FILL_BEFORE] = fill;
        out[IDLE_CAPACITY] = capacity;
        out[IDLE_LOW_WATER] = low_water;

        getrusage(RUSAGE_SELF, &ru0);
        loop0 = clock_ns(b->loop_clock);
        t0 = now_ns();
        sleep_ns(IDLE_SECONDS * 1000000000LL);
        t1 = now_ns();
        loop1 = clock_ns(b->loop_clock);
        getrusage(RUSAGE_SELF, &ru1);

        out[IDLE_WALL_S] = (double) (t1 - t0) / 1e9;
        out[IDLE_PROC_CPU_S] = rusage_s(&ru1) - rusage_s(&ru0);
        out[IDLE_LOOP_CPU_S] = (double) (loop1 - loop0) / 1e9;
        /* Context switches of every thread: each wake-up of the daemon
         * costs at least one; this thread's own sleep is one. */
        out[IDLE_WAKEUPS] = (double) ((ru1.ru_nvcsw - ru0.ru_nvcsw) + (ru1.ru_nivcsw - ru0.ru_nivcsw));
        out[IDLE_FILL_AFTER] = entcnt(b, CUSEDEV_TRNG) / 256.0;
        bench_free(b);
}

/* ------------------------------------------------------------------ */
/* the first block through the gate (run in a child)                   */

enum { FIRST_UP_S, FIRST_BLOCK_S, FIRST_RSS_KIB, FIRST_HWM_KIB, _FIRST_MAX };

static void first_block(double *out) {
        Bench *b = bench_new();
        SourceConfig *jitter = &b->config.source[CONFIG_SOURCE_JITTER];
        uint8_t buf[32];
        long long t0;

        /* The shipped defaults for jitter (credit = auto, its cap) and the
         * gate (its default window); the file source off. */
        b->config.source[CONFIG_SOURCE_FILE].enable = false;
        jitter->enable = true;
        b->config.gate_window = GATE_WINDOW_DEFAULT;
        t0 = now_ns();
        bench_start(b);
        out[FIRST_UP_S] = (double) (now_ns() - t0) / 1e9;
        if (fk_read(b->fk[CUSEDEV_TRNG], &b->file[CUSEDEV_TRNG], buf, sizeof(buf)) <= 0)
                die("no first /dev/truerandom block");
        out[FIRST_BLOCK_S] = (double) (now_ns() - t0) / 1e9;
        out[FIRST_RSS_KIB] = (double) vm_rss_kib();
        out[FIRST_HWM_KIB] = (double) vm_kib("VmHWM");
        bench_free(b);
}

/* ------------------------------------------------------------------ */
/* the devices of one source beside /dev/truerandom                     */

enum { PS_TRNG, PS_FILE, PS_JITTER, NPS };
static const char *const ps_name[NPS] = { "truerandom", "truerandom-file", "truerandom-jitter" };
enum { PS_BPS, PS_RATIO = NPS, _PS_MAX = 2 * NPS };

/* Bytes per second one reader gets from name over PER_SOURCE_NS. */
static double per_source_trial(Bench *b, const char *name) {
        FakeKernel *fk = fakedaemon_kernel(b->daemon, name);
        static uint8_t buf[4096];
        long long t0, t;
        size_t got = 0;
        FkFile f;

        if (!fk)
                die("no /dev/%s", name);
        must(fk_open(fk, NULL, O_RDONLY, &f), "open");
        t0 = now_ns();
        do {
                ssize_t r = fk_read(fk, &f, buf, sizeof(buf));

                if (r <= 0)
                        die("/dev/%s: read: %s", name, strerror(r < 0 ? (int) -r : EIO));
                got += (size_t) r;
                t = now_ns();
        } while (t - t0 < PER_SOURCE_NS);
        must(fk_release(fk, &f), "release");
        return (double) got * 1e9 / (double) (t - t0);
}

static void per_source(double *out) {
        Bench *b = bench_new();
        double bps[NPS][PER_SOURCE_ROUNDS], ratio[NPS][PER_SOURCE_ROUNDS];
        uint8_t first[32];

        b->config.per_source_devices = true;
        b->config.store_blocks = PER_SOURCE_STORE;
        b->config.low_water = PER_SOURCE_STORE / 4;
        b->config.source[CONFIG_SOURCE_JITTER].enable = true;
        bench_start(b);
        /* Both sources past their first window before anything is timed. */
        for (int d = PS_FILE; d < NPS; d++) {
                FakeKernel *fk = fakedaemon_kernel(b->daemon, ps_name[d]);
                FkFile f;

                if (!fk)
                        die("no /dev/%s", ps_name[d]);
                must(fk_open(fk, NULL, O_RDONLY, &f), "open");
                if (fk_read(fk, &f, first, sizeof(first)) <= 0)
                        die("no first block from /dev/%s", ps_name[d]);
                must(fk_release(fk, &f), "release");
        }
        for (int r = 0; r < PER_SOURCE_ROUNDS; r++) {
                for (int i = 0; i < NPS; i++) {
                        int d = (r + i) % NPS;
                        bps[d][r] = per_source_trial(b, ps_name[d]);
                }
                for (int d = 0; d < NPS; d++)
                        ratio[d][r] = bps[d][r] / bps[PS_TRNG][r];
        }
        for (int d = 0; d < NPS; d++) {
                out[PS_BPS + d] = median(bps[d], PER_SOURCE_ROUNDS);
                out[PS_RATIO + d] = median(ratio[d], PER_SOURCE_ROUNDS);
        }
        bench_free(b);
}

/* ------------------------------------------------------------------ */

/* Runs fn in a child that starts from this process's heap as it is now
 * (single-threaded, nothing grown yet) and hands back n figures. */
static void in_child(void (*fn)(double *out), double *out, size_t n) {
        size_t want = n * sizeof(double), got = 0;
        int p[2], status;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                die("pipe: %s", strerror(errno));
        fflush(NULL);
        pid = fork();
        if (pid < 0)
                die("fork: %s", strerror(errno));
        if (pid == 0) {
                close(p[0]);
                memset(out, 0, want);
                fn(out);
                for (size_t off = 0; off < want;) {
                        ssize_t w = write(p[1], (const uint8_t *) out + off, want - off);
                        if (w < 0 && errno == EINTR)
                                continue;
                        if (w <= 0)
                                _exit(EXIT_FAILURE);
                        off += (size_t) w;
                }
                _exit(EXIT_SUCCESS);
        }
        close(p[1]);
        while (got < want) {
                ssize_t r = read(p[0], (uint8_t *) out + got, want - got);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        break;
                got += (size_t) r;
        }
        close(p[0]);
        if (waitpid(pid, &status, 0) < 0)
                die("waitpid: %s", strerror(errno));
        if (got != want || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                exit(EXIT_FAILURE);     /* the child said why */
}

int main(int argc, char *argv[]) {
        static Throughput tp;
        double fk[_RSS_MAX], rss[_RSS_MAX], idle[_IDLE_MAX], first[_FIRST_MAX], ps[_PS_MAX];
        double fk_delta, daemon_delta, rss_daemon, idle_pct, loop_pct;
        unsigned long rounds = ROUNDS_DEFAULT;
        char *end;
        if (argc > 2 || (argc == 2 && ((rounds = strtoul(argv[1], &end, 10)) < 1 || rounds > ROUNDS_MAX || *end))) {
                fprintf(stderr, "usage: %s [ROUNDS]   (1..%d, default %d)\n", argv[0], ROUNDS_MAX, ROUNDS_DEFAULT);
                return 2;
        }
        /* Blocked in every thread: only the daemon's signalfd takes them. */
        fakedaemon_block_signals();
        if (sodium_init() < 0)
                die("sodium_init failed");
        /* The daemon's start-up chatter would bury the table. */
        log_set_max_level(LOG_WARNING);

        in_child(rss_fake_kernel_only, fk, _RSS_MAX);
        in_child(rss_parked, rss, _RSS_MAX);
        in_child(idle_cpu, idle, _IDLE_MAX);
        in_child(first_block, first, _FIRST_MAX);
        in_child(per_source, ps, _PS_MAX);
        run_throughput((unsigned) rounds, &tp);

        fk_delta = fk[RSS_FK_AFTER] - fk[RSS_FK_BEFORE];
        daemon_delta = rss[RSS_AFTER] - rss[RSS_BEFORE] - fk_delta;
        rss_daemon = rss[RSS_AFTER] - fk_delta;
        idle_pct = 100.0 * idle[IDLE_PROC_CPU_S] / idle[IDLE_WALL_S];
        loop_pct = 100.0 * idle[IDLE_LOOP_CPU_S] / idle[IDLE_WALL_S];

        printf("Drop-in random vs the null device through the daemon's loop (fake kernel, socketpair)\n");
        printf("%lu rounds x %lld ms per size, mode and device, interleaved; medians\n", rounds,
               TRIAL_NS / 1000000);
        for (int mode = 0; mode < NMODES; mode++) {
                printf("\n%u read%s in flight%*s random/null\n", mode_window[mode], mode_window[mode] > 1 ? "s" : "",
                       mode_window[mode] > 1 ? 48 : 49, "");
                printf("%8s  %-7s %9s %9s %11s %12s %9s %9s\n", "request", "device", "req/s", "MB/s", "latency us",
                       "loop us/req", "by req/s", "by CPU");
                for (size_t s = 0; s < NSIZES; s++)
                        for (int dev = 0; dev < NDEVS; dev++) {
                                double r = tp.req_per_s[s][mode][dev];
                                char ratio[32] = "";

                                if (dev == DEV_RANDOM)
                                        snprintf(ratio, sizeof(ratio), " %9.3f %9.3f", tp.ratio[s][mode],
                                                 tp.cpu_ratio[s][mode]);
                                printf("%8u  %-7s %9.0f %9.1f %11.1f %12.2f%s\n", sizes[s], dev_name[dev], r,
                                       r * sizes[s] / 1e6, 1e6 * mode_window[mode] / r, tp.loop_us[s][mode][dev],
                                       ratio);
                        }
        }
        printf("latency: reads in flight / req/s. loop us/req: CPU of the daemon's thread per read, the fake\n"
               "kernel's copy of the reply included (it runs inside the daemon's write, as the kernel's does).\n"
               "by req/s: random's throughput over null's; by CPU: null's loop CPU per read over random's.\n");

        printf("\n%u /dev/truerandom reads parked from %u uids (max_parked %.0f), VmRSS of this process\n", PARKED,
               PARKED_UIDS, rss[RSS_MAX_PARKED]);
        printf("  fake kernel alone:   %8.0f -> %8.0f KiB  (+%.0f KiB: its record of the reads)\n",
               fk[RSS_FK_BEFORE], fk[RSS_FK_AFTER], fk_delta);
        printf("  daemon + fake kernel: %7.0f -> %8.0f KiB  (+%.0f KiB)\n", rss[RSS_BEFORE], rss[RSS_AFTER],
               rss[RSS_AFTER] - rss[RSS_BEFORE]);
        printf("  parking, the daemon's share: %.0f KiB (%.0f B per read)\n", daemon_delta,
               daemon_delta * 1024 / PARKED);
        printf("  with 10,000 parked, less the fake kernel's share: %.0f KiB (the whole process:\n"
               "  libraries, store, CRNG, four sessions' buffers, the fake kernel's base, this bench)\n",
               rss_daemon);

        printf("\nIdle daemon: store %.0f of %.0f blocks (low_water %.0f: the sources stopped), nobody reading\n",
               idle[IDLE_FILL_BEFORE], idle[IDLE_CAPACITY], idle[IDLE_LOW_WATER]);
        printf("  over %.1f s: process CPU %.4f s = %.4f %% of one CPU (loop thread %.4f %%),\n"
               "  %.0f context switches (this thread's sleep included); store after: %.0f blocks\n\n",
               idle[IDLE_WALL_S], idle[IDLE_PROC_CPU_S], idle_pct, loop_pct, idle[IDLE_WAKEUPS],
               idle[IDLE_FILL_AFTER]);
        printf("First block (jitter alone, credit = auto, gate windows of %u samples): devices up %.3f s,\n"
               "  first /dev/truerandom byte %.3f s after daemon_new(); process VmRSS %.0f KiB (peak %.0f KiB)\n\n",
               GATE_WINDOW_DEFAULT, first[FIRST_UP_S], first[FIRST_BLOCK_S], first[FIRST_RSS_KIB],
               first[FIRST_HWM_KIB]);
        printf("A device per source beside /dev/truerandom (file and jitter credited, store of %d blocks),\n"
               "  %d rounds of %.1f s per device, one 4 KiB read in flight; medians:\n",
               PER_SOURCE_STORE, PER_SOURCE_ROUNDS, PER_SOURCE_NS / 1e9);
        for (int d = 0; d < NPS; d++)
                printf("  %-20s %12.0f B/s  %8.3f x /dev/truerandom\n", ps_name[d], ps[PS_BPS + d], ps[PS_RATIO + d]);
        printf("\n");

        printf("{\"rounds\": %lu, \"window\": %d", rounds, WINDOW);
        for (size_t s = 0; s < NSIZES; s++)
                printf(", \"random_vs_null_%s\": %.3f", size_tag[s], tp.ratio[s][MODE_WINDOW]);
        for (size_t s = 0; s < NSIZES; s++)
                printf(", \"random_vs_null_single_%s\": %.3f", size_tag[s], tp.ratio[s][MODE_SINGLE]);
        for (size_t s = 0; s < NSIZES; s++)
                printf(", \"random_vs_null_cpu_%s\": %.3f", size_tag[s], tp.cpu_ratio[s][MODE_WINDOW]);
        for (size_t s = 0; s < NSIZES; s++)
                for (int dev = 0; dev < NDEVS; dev++) {
                        double w = tp.req_per_s[s][MODE_WINDOW][dev], one = tp.req_per_s[s][MODE_SINGLE][dev];

                        printf(", \"%s_req_per_s_%s\": %.0f, \"%s_mb_per_s_%s\": %.1f, \"%s_latency_us_%s\": %.2f"
                               ", \"%s_loop_us_per_req_%s\": %.3f",
                               dev_name[dev], size_tag[s], w, dev_name[dev], size_tag[s], w * sizes[s] / 1e6,
                               dev_name[dev], size_tag[s], 1e6 / one, dev_name[dev], size_tag[s],
                               tp.loop_us[s][MODE_WINDOW][dev]);
                }
        printf(", \"rss_10k_parked_kib\": %.0f, \"rss_process_10k_parked_kib\": %.0f, \"rss_before_parking_kib\": %.0f"
               ", \"rss_parking_daemon_kib\": %.0f, \"rss_parking_fakekernel_kib\": %.0f",
               rss_daemon, rss[RSS_AFTER], rss[RSS_BEFORE], daemon_delta, fk_delta);
        printf(", \"idle_cpu_pct\": %.4f, \"idle_loop_cpu_pct\": %.4f, \"idle_seconds\": %.1f, \"idle_ctx_switches\": %.0f",
               idle_pct, loop_pct, idle[IDLE_WALL_S], idle[IDLE_WAKEUPS]);
        printf(", \"first_up_s\": %.3f, \"first_block_s\": %.3f, \"first_rss_kib\": %.0f, \"first_hwm_kib\": %.0f",
               first[FIRST_UP_S], first[FIRST_BLOCK_S], first[FIRST_RSS_KIB], first[FIRST_HWM_KIB]);
        printf(", \"per_source_trng_bps\": %.0f, \"per_source_file_bps\": %.0f, \"per_source_jitter_bps\": %.0f"
               ", \"per_source_file_vs_trng\": %.3f, \"per_source_jitter_vs_trng\": %.3f}\n",
               ps[PS_BPS + PS_TRNG], ps[PS_BPS + PS_FILE], ps[PS_BPS + PS_JITTER], ps[PS_RATIO + PS_FILE],
               ps[PS_RATIO + PS_JITTER]);
        return 0;
}
