/* bench-sources.c - throughput and cost of each noise source on this machine.
 *
 * For every source that opens here (jitter, rdseed, hwrng, kernel): raw
 * samples per second straight from the source, then the full collector path
 * (health tests, SHA-256 conditioning, store) for ~2 s with the store drained
 * as it fills: credited bits per second, TRNG blocks per second and CPU
 * seconds per block (CLOCK_THREAD_CPUTIME_ID; the collector runs on this
 * thread). A source credited 0 (kernel, virtio-rng) makes no blocks.
 * Also the time each open takes (jitter and rdseed run their self-test
 * there), and what the running check (pool/online.h) costs per sample,
 * beside the health tests' cost and a jitter sample's own.
 * Prints a human table, then one JSON object keyed by source name as the
 * last line. It reports figures; it never passes or fails on them. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool/collector.h"
#include "pool/conditioner.h"
#include "pool/health.h"
#include "pool/online.h"
#include "pool/secret.h"
#include "pool/source.h"
#include "pool/store.h"

#define RAW_SECONDS 1.0
#define PIPE_SECONDS 2.0
#define CHUNK 4096U
#define CHECK_SAMPLES (1U << 26)

/* The sources measured, each at a fixed credit through the pipeline (the
 * benchmark cannot wait for credit = auto): jitter at 150 mbits, the figure
 * from before credit = auto (under half of 0.322, 0.331 and 0.456 bit per
 * sample measured on a loaded 2-vCPU EPYC VM; docs/ENTROPY.md); rdseed at
 * its default; hwrng at whatever its driver claims (8 bits, capped by
 * rng_quality); kernel never, as in the daemon. */
typedef struct Bench {
        const SourceOps *ops;
        uint32_t credit;        /* mbits per sample; 0: raw rate only */
} Bench;

typedef struct Result {
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

static void bench_pipeline(const SourceOps *ops, uint32_t credit, Result *res) {
        uint8_t block[STORE_BLOCK_SIZE];
        double start, cpu_start, elapsed = 0.0, cpu;
        CollectorStats st;
        Collector *c;
        Store *s;
        /* Never credited by design: no block can come out of it. */
        if (credit == 0)
                return;
        if (store_new(1024, 1, &s) < 0 ||
            collector_new(ops, NULL, credit, 0, s, NULL, NULL, &c) < 0)
                abort();
        collector_get_stats(c, &st);
        res->credit = st.credit_mbits;
        if (st.state == SOURCE_UNAVAILABLE) {
                collector_free(c);
                store_free(s);
                return;
        }

        start = now(CLOCK_MONOTONIC);
        cpu_start = now(CLOCK_THREAD_CPUTIME_ID);
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
        sodium_memzero(block, sizeof(block));

        collector_get_stats(c, &st);
        res->blocks = st.blocks;
        res->health_failures = st.fail_rct + st.fail_apt;
        if (elapsed > 0.0) {
                res->credited_bits_per_s = (double) st.credited_mbits / 1000.0 / elapsed;
                res->blocks_per_s = (double) st.blocks / elapsed;
        }
        res->cpu_per_block = st.blocks ? cpu / (double) st.blocks : 0.0;
        collector_free(c);
        store_free(s);
}

static void bench_one(const Bench *b, Result *res) {
        const SourceOps *ops = b->ops;
        double start;
        void *state;

        *res = (Result) { .name = ops->name };
        start = now(CLOCK_MONOTONIC);
        res->error = ops->open(NULL, &state);
        res->open_ms = (now(CLOCK_MONOTONIC) - start) * 1e3;
        if (res->error < 0)
                return;
        res->raw_per_s = bench_raw(ops, state);
        ops->close(state);
        bench_pipeline(ops, b->credit, res);
}

/* Nanoseconds per sample of the running check and of the health tests,
 * each alone over the same pseudo-random samples (at jitter's credit
 * above; neither fails on them). */
static void bench_checks(double *ret_online_ns, double *ret_health_ns) {
        uint8_t *buf = malloc(CHECK_SAMPLES);
        uint64_t x = 0x9e3779b97f4a7c15ULL, sink = 0;
        OnlineCheck o;
        HealthTest h;
        double start;

        if (!buf || online_init(&o, 150) < 0 || health_init(&h, 150) < 0)
                abort();
        for (size_t i = 0; i < CHECK_SAMPLES; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                buf[i] = (uint8_t) x;
        }
        start = now(CLOCK_THREAD_CPUTIME_ID);
        for (size_t i = 0; i < CHECK_SAMPLES; i++)
                sink += online_feed(&o, buf[i]);
        *ret_online_ns = (now(CLOCK_THREAD_CPUTIME_ID) - start) * 1e9 / CHECK_SAMPLES;
        start = now(CLOCK_THREAD_CPUTIME_ID);
        for (size_t i = 0; i < CHECK_SAMPLES; i++)
                sink += health_feed(&h, buf[i]);
        *ret_health_ns = (now(CLOCK_THREAD_CPUTIME_ID) - start) * 1e9 / CHECK_SAMPLES;
        /* The results are used: neither loop can be dropped. */
        if (sink == 0 || o.stats.windows != CHECK_SAMPLES / ONLINE_WINDOW)
                abort();
        free(buf);
}

int main(void) {
        const Bench list[] = {
                { &source_jitter, 150 },
                { &source_rdseed, 250 },
                { &source_hwrng, 8000 },
                { &source_kernel, 0 },
        };
        Result res[ELEMENTSOF(list)];
        double online_ns, health_ns, jitter_ns;
        size_t i;

        if (sodium_init() < 0)
                return 1;

        for (i = 0; i < ELEMENTSOF(list); i++)
                bench_one(&list[i], &res[i]);
        bench_checks(&online_ns, &health_ns);
        jitter_ns = res[0].raw_per_s > 0 ? 1e9 / res[0].raw_per_s : 0;

        printf("%-8s %9s %14s %8s %16s %12s %14s %9s\n", "source", "open ms", "raw samples/s", "credit",
               "credited bits/s", "blocks/s", "CPU s/block", "failures");
        for (i = 0; i < ELEMENTSOF(list); i++) {
                const Result *r = &res[i];

                if (r->error < 0) {
                        printf("%-8s unavailable: %s\n", r->name, strerror(-r->error));
                        continue;
                }
                printf("%-8s %9.2f %14.0f %8.3f %16.0f %12.1f ", r->name, r->open_ms, r->raw_per_s,
                       r->credit / 1000.0, r->credited_bits_per_s, r->blocks_per_s);
                if (r->blocks)
                        printf("%14.3g %9" PRIu64 "\n", r->cpu_per_block, r->health_failures);
                else
                        printf("%14s %9" PRIu64 "\n", "-", r->health_failures);
        }
        printf("(open: jitter and rdseed run their self-test there; raw: source reads alone; the rest through"
               " health tests, the running check, SHA-256 and the store; credit in bits per 8-bit sample)\n");
        printf("running check: %.2f ns/sample; health tests (RCT + APT): %.2f ns/sample; a jitter sample: %.1f ns"
               " (the check is %.1f %% of it)\n", online_ns, health_ns, jitter_ns,
               jitter_ns > 0 ? 100.0 * online_ns / jitter_ns : 0.0);

        printf("{");
        for (i = 0; i < ELEMENTSOF(list); i++) {
                const Result *r = &res[i];

                printf("%s\"%s\":", i ? "," : "", r->name);
                if (r->error < 0)
                        printf("{\"available\":false,\"error\":%d}", r->error);
                else
                        printf("{\"available\":true,\"open_ms\":%.3f,\"raw_samples_per_s\":%.0f,"
                               "\"credit_mbits\":%u,\"credited_bits_per_s\":%.1f,\"blocks_per_s\":%.2f,"
                               "\"cpu_s_per_block\":%.3g,\"health_failures\":%" PRIu64 "}",
                               r->open_ms, r->raw_per_s, r->credit, r->credited_bits_per_s, r->blocks_per_s,
                               r->cpu_per_block, r->health_failures);
        }
        printf(",\"running_check\":{\"ns_per_sample\":%.3f,\"health_ns_per_sample\":%.3f,"
               "\"jitter_ns_per_sample\":%.1f}}\n", online_ns, health_ns, jitter_ns);
        return 0;
}
