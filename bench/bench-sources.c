/* bench-sources.c - throughput and cost of each noise source on this machine.
 *
 *   bench-sources [--auto] [--window N]
 *
 * For every source that opens here (jitter, rdseed, hwrng, kernel): raw
 * samples per second straight from the source, then the full collector path
 * (the running gate on windows of N samples, default GATE_WINDOW_DEFAULT,
 * judged by one worker thread; health tests, SHA-256 conditioning, store)
 * for ~2 s with the store drained as it fills: credited bits per second,
 * TRNG blocks per second and CPU seconds per block of the sampling thread
 * (CLOCK_THREAD_CPUTIME_ID; the collector runs on this thread), and the
 * gate's windows and samples judged per second (gate_get_counts) with the
 * CPU its worker took as a share of the wall time (the process's CPU time
 * less this thread's: the worker is the only other thread). A source
 * credited 0 (kernel, virtio-rng) makes no blocks.
 * Also the time each open takes (jitter and rdseed run their self-test
 * there), and what the gate's verdict on one window and the health tests
 * cost per sample, beside a jitter sample's own.
 * Each source's policy is its row's below; --auto makes every one
 * credit = auto, capped at the row's credit.
 * Prints a human table, then one JSON object keyed by source name as the
 * last line. It reports figures; it never passes or fails on them. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool/collector.h"
#include "pool/conditioner.h"
#include "pool/health.h"
#include "pool/gate.h"
#include "pool/secret.h"
#include "pool/source.h"
#include "pool/store.h"

#define RAW_SECONDS 1.0
#define PIPE_SECONDS 2.0
#define CHUNK 4096U
#define CHECK_SAMPLES (1U << 26)
#define GATE_JUDGED 4U

/* The sources measured, each under a policy of the running gate: jitter at
 * credit = 150 mbits, the figure from before credit = auto (under half of
 * 0.322, 0.331 and 0.456 bit per sample measured on a loaded 2-vCPU EPYC
 * VM; docs/ENTROPY.md); rdseed at its default; hwrng at auto capped by what
 * its driver claims (8 bits, capped by rng_quality: no window could earn a
 * fixed 8 bits, which needs an estimate of 16); kernel never, as in the
 * daemon. */
typedef struct Bench {
        const SourceOps *ops;
        uint32_t credit;        /* mbits per sample, or auto's cap; 0: raw rate only */
        bool auto_credit;
} Bench;

typedef struct Options {
        bool auto_credit;       /* every source credit = auto */
        uint32_t window;
} Options;

typedef struct Result {
        const SourceOps *ops;
        const char *name;
        int error;                 /* open() error, 0 if it opened */
        double open_ms;            /* one open(), self-test included */
        uint32_t credit;           /* mbits per sample after capping */
        double raw_per_s;
        double credited_bits_per_s;
        double blocks_per_s;
        double cpu_per_block;      /* seconds; 0 when no block */
        uint64_t blocks;
        uint64_t health_failures;  /* intermittent RCT + APT during the run */
        bool auto_credit;
        double gate_windows_per_s; /* judged by the gate's worker during the run */
        double gate_samples_per_s;
        double gate_cpu_share;     /* the worker's CPU time / wall time */
        uint64_t credited, refused;
        double estimate;           /* the last window's, bits per sample */
} Result;

static double now(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void pause_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = 0, .tv_nsec = (long) ms * 1000000L };

        nanosleep(&ts, NULL);
}

/* Raw rate, with the collector's first backoff step (10 ms) on "nothing
 * now", so a non-blocking device is measured as the daemon would see it. */
static double bench_raw(const SourceOps *ops, void *state) {
        static uint8_t buf[CHUNK];
        uint64_t samples = 0;
        double start = now(CLOCK_MONOTONIC), elapsed = 0.0;

        do {
                ssize_t r = ops->read(state, buf, sizeof(buf));

                if (r > 0)
                        samples += (uint64_t) r;
                else if (r == -EAGAIN)
                        pause_ms(10);
                else
                        break;
                elapsed = now(CLOCK_MONOTONIC) - start;
        } while (elapsed < RAW_SECONDS);
        sodium_memzero(buf, sizeof(buf));
        return elapsed > 0.0 ? (double) samples / elapsed : 0.0;
}

static void bench_pipeline(Gate *gate, const GatePolicy *policy, uint32_t window, Result *res) {
        const SourceOps *ops = res->ops;
        uint8_t block[STORE_BLOCK_SIZE];
        double start, cpu_start, proc_start, elapsed = 0.0, cpu, proc;
        uint64_t windows0, samples0, windows, samples;
        CollectorGate g = { .gate = gate, .policy = *policy, .window = window };
        CollectorStats st;
        Collector *c;
        Store *s;

        if (store_new(1024, 1, &s) < 0 || collector_new(ops, NULL, &g, 0, s, NULL, NULL, &c) < 0)
                abort();
        collector_get_stats(c, &st);
        res->credit = gate_policy_most(&st.gate.policy);
        if (st.state == SOURCE_UNAVAILABLE) {
                collector_free(c);
                store_free(s);
                return;
        }

        gate_get_counts(gate, &windows0, &samples0);
        start = now(CLOCK_MONOTONIC);
        cpu_start = now(CLOCK_THREAD_CPUTIME_ID);
        proc_start = now(CLOCK_PROCESS_CPUTIME_ID);
        do {
                ssize_t n = collector_step(c, CHUNK);

                if (n == -EAGAIN)
                        pause_ms(10);
                else if (n < 0)
                        break;
                /* Drain as a reader would, so the store never refuses. */
                while (store_take(s, block, STORE_BLOCK_SIZE) == 0)
                        ;
                elapsed = now(CLOCK_MONOTONIC) - start;
        } while (elapsed < PIPE_SECONDS);
        cpu = now(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
        proc = now(CLOCK_PROCESS_CPUTIME_ID) - proc_start;
        gate_get_counts(gate, &windows, &samples);
        sodium_memzero(block, sizeof(block));

        collector_get_stats(c, &st);
        res->blocks = st.blocks;
        res->health_failures = st.fail_rct + st.fail_apt;
        res->credited = st.gate.credited;
        res->refused = st.gate.refused;
        res->estimate = st.gate.estimate;
        if (elapsed > 0.0) {
                res->credited_bits_per_s = (double) st.credited_mbits / 1000.0 / elapsed;
                res->blocks_per_s = (double) st.blocks / elapsed;
                res->gate_windows_per_s = (double) (windows - windows0) / elapsed;
                res->gate_samples_per_s = (double) (samples - samples0) / elapsed;
                res->gate_cpu_share = proc > cpu ? (proc - cpu) / elapsed : 0.0;
        }
        res->cpu_per_block = st.blocks ? cpu / (double) st.blocks : 0.0;
        /* Takes back the window the gate may still be judging. */
        collector_free(c);
        store_free(s);
}

static void bench_one(const Bench *b, const Options *o, Gate *gate, Result *res) {
        const SourceOps *ops = b->ops;
        GatePolicy policy = { .auto_credit = b->auto_credit || o->auto_credit };
        double start;
        void *state;

        *res = (Result) { .ops = ops, .name = ops->name, .auto_credit = policy.auto_credit, .estimate = NAN };
        start = now(CLOCK_MONOTONIC);
        res->error = ops->open(NULL, &state);
        res->open_ms = (now(CLOCK_MONOTONIC) - start) * 1e3;
        if (res->error < 0)
                return;
        res->raw_per_s = bench_raw(ops, state);
        ops->close(state);
        /* Never credited by design: no block can come out of it. */
        if (b->credit == 0)
                return;
        if (policy.auto_credit)
                policy.cap_mbits = b->credit;
        else
                policy.credit_mbits = b->credit;
        bench_pipeline(gate, &policy, o->window, res);
}

/* Nanoseconds per sample of the gate's verdict on one window and of the
 * health tests, each alone over the same pseudo-random samples (at
 * jitter's credit above; neither refuses nor fails them). */
static void bench_checks(uint32_t window, double *ret_gate_ns, double *ret_health_ns) {
        const GatePolicy policy = { .credit_mbits = 150 };
        uint8_t *buf = malloc(CHECK_SAMPLES);
        uint64_t x = 0x9e3779b97f4a7c15ULL, sink = 0;
        GateVerdict v;
        HealthTest h;
        double start;

        if (!buf || health_init(&h, 150) < 0)
                abort();
        for (size_t i = 0; i < CHECK_SAMPLES; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                buf[i] = (uint8_t) x;
        }
        start = now(CLOCK_THREAD_CPUTIME_ID);
        for (unsigned i = 0; i < GATE_JUDGED; i++) {
                if (gate_judge(buf + (size_t) i * window, window, &policy, NULL, &v) < 0)
                        abort();
                sink += v.credit_mbits;
        }
        *ret_gate_ns = (now(CLOCK_THREAD_CPUTIME_ID) - start) * 1e9 / ((double) GATE_JUDGED * window);
        start = now(CLOCK_THREAD_CPUTIME_ID);
        for (size_t i = 0; i < CHECK_SAMPLES; i++)
                sink += health_feed(&h, buf[i]);
        *ret_health_ns = (now(CLOCK_THREAD_CPUTIME_ID) - start) * 1e9 / CHECK_SAMPLES;
        /* The results are used: neither loop can be dropped. */
        if (sink == 0)
                abort();
        free(buf);
}

static int parse_options(int argc, char **argv, Options *ret) {
        static const struct option longopts[] = {
                { "auto", no_argument, NULL, 'a' },
                { "window", required_argument, NULL, 'w' },
                { NULL, 0, NULL, 0 },
        };
        Options o = { .window = GATE_WINDOW_DEFAULT };
        unsigned long w;
        char *end;
        int opt;

        while ((opt = getopt_long(argc, argv, "", longopts, NULL)) >= 0)
                switch (opt) {
                case 'a':
                        o.auto_credit = true;
                        break;
                case 'w':
                        errno = 0;
                        w = strtoul(optarg, &end, 10);
                        if (errno || *end || w < GATE_WINDOW_MIN || w > GATE_WINDOW_MAX)
                                return -EINVAL;
                        o.window = (uint32_t) w;
                        break;
                default:
                        return -EINVAL;
                }
        if (optind != argc)
                return -EINVAL;
        *ret = o;
        return 0;
}

int main(int argc, char **argv) {
        const Bench list[] = {
                { &source_jitter, 150, false },
                { &source_rdseed, 250, false },
                { &source_hwrng, 8000, true },
                { &source_kernel, 0, false },
        };
        Result res[ELEMENTSOF(list)];
        double gate_ns, health_ns, jitter_ns;
        Options o;
        Gate *gate;
        size_t i;

        if (parse_options(argc, argv, &o) < 0) {
                fprintf(stderr, "usage: %s [--auto] [--window %u..%u]\n", argv[0], GATE_WINDOW_MIN, GATE_WINDOW_MAX);
                return 2;
        }
        if (sodium_init() < 0 || gate_new(1, &gate) < 0 || gate_start(gate) < 0)
                return 1;

        for (i = 0; i < ELEMENTSOF(list); i++)
                bench_one(&list[i], &o, gate, &res[i]);
        gate_free(gate);
        bench_checks(o.window, &gate_ns, &health_ns);
        jitter_ns = res[0].raw_per_s > 0 ? 1e9 / res[0].raw_per_s : 0;

        printf("%-8s %9s %14s %10s %16s %12s %14s %9s %10s %14s %8s %9s\n", "source", "open ms", "raw samples/s",
               "credit", "credited bits/s", "blocks/s", "CPU s/block", "failures", "windows/s", "gate samples/s",
               "gate CPU", "refused");
        for (i = 0; i < ELEMENTSOF(list); i++) {
                const Result *r = &res[i];
                char credit[16];

                if (r->error < 0) {
                        printf("%-8s unavailable: %s\n", r->name, strerror(-r->error));
                        continue;
                }
                snprintf(credit, sizeof(credit), "%s%.3f", r->auto_credit ? "auto<=" : "", r->credit / 1000.0);
                printf("%-8s %9.2f %14.0f %10s %16.0f %12.1f ", r->name, r->open_ms, r->raw_per_s, credit,
                       r->credited_bits_per_s, r->blocks_per_s);
                if (r->blocks)
                        printf("%14.3g ", r->cpu_per_block);
                else
                        printf("%14s ", "-");
                printf("%9" PRIu64 " %10.2f %14.0f %7.1f%% %4" PRIu64 "/%-4" PRIu64 "\n", r->health_failures,
                       r->gate_windows_per_s, r->gate_samples_per_s, 100.0 * r->gate_cpu_share, r->refused,
                       r->credited + r->refused);
        }
        printf("(open: jitter and rdseed run their self-test there; raw: source reads alone; the rest through"
               " the running gate (windows of %u samples, one worker), health tests, SHA-256 and the store;"
               " credit in bits per 8-bit sample; gate CPU: the worker's CPU time over the wall time)\n",
               o.window);
        printf("gate verdict: %.1f ns/sample (%.1f ms a window); health tests (RCT + APT): %.2f ns/sample;"
               " a jitter sample: %.1f ns\n", gate_ns, gate_ns * o.window / 1e6, health_ns, jitter_ns);

        printf("{");
        for (i = 0; i < ELEMENTSOF(list); i++) {
                const Result *r = &res[i];

                printf("%s\"%s\":", i ? "," : "", r->name);
                if (r->error < 0)
                        printf("{\"available\":false,\"error\":%d}", r->error);
                else
                        printf("{\"available\":true,\"open_ms\":%.3f,\"raw_samples_per_s\":%.0f,"
                               "\"credit_auto\":%s,\"credit_mbits\":%u,\"credited_bits_per_s\":%.1f,"
                               "\"blocks_per_s\":%.2f,\"cpu_s_per_block\":%.3g,\"health_failures\":%" PRIu64 ","
                               "\"gate_windows_per_s\":%.3f,\"gate_samples_per_s\":%.0f,\"gate_cpu_share\":%.4f,"
                               "\"gate_credited\":%" PRIu64 ",\"gate_refused\":%" PRIu64 "}",
                               r->open_ms, r->raw_per_s, r->auto_credit ? "true" : "false", r->credit,
                               r->credited_bits_per_s, r->blocks_per_s, r->cpu_per_block, r->health_failures,
                               r->gate_windows_per_s, r->gate_samples_per_s, r->gate_cpu_share, r->credited,
                               r->refused);
        }
        printf(",\"gate\":{\"window\":%u,\"ns_per_sample\":%.3f,\"health_ns_per_sample\":%.3f,"
               "\"jitter_ns_per_sample\":%.1f}}\n", o.window, gate_ns, health_ns, jitter_ns);
        return 0;
}
