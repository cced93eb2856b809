/* tpmcheck.c - the tpm source and the hwrng listing, on a machine or in the
 * vm suite's guest, before the daemon is wired to them.
 *
 *   tpmcheck [--path DEV | --tcti CONF] [--seconds S] [--credit BITS]
 *            [--sysfs DIR] [--reads N | --list]
 *
 * Opens the tpm source (its self-test runs), reads raw samples for S
 * seconds (default 2), then runs them through the real collector (the
 * running gate on windows of GATE_WINDOW_MIN samples with one worker,
 * health tests, SHA-256, store) at the given credit (default 1 bit per
 * sample) for S seconds, and lists every hwrng in sysfs. One line per
 * figure:
 *     tpm-open: 0 (selftest passed ...) in 12.3 ms
 *     tpm-raw: 123456 samples in 2.00 s: 61728 samples/s
 *     tpm-blocks: 150 blocks in 2.00 s at 1.000 bit/sample: 75.0 blocks/s (... gate 14 credited, 0 refused, estimate 7.2)
 *     hwrng: virtio_rng.0 (current) tpm-rng-0 (tpm 0); quality 1024; selected 0
 *     hwrng-current-tpm: -19 (No such device)
 *     hwrng-max-credit: 0 mbits/sample
 * --reads N instead reads N times, 0.5 s apart, and prints each result (a
 * TPM taken away between them shows its error); --list only lists the
 * hwrngs and what the hwrng source would credit. Exit 0 when the source opened and
 * read, 1 otherwise. Reports figures; never passes or fails on them. */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool/collector.h"
#include "pool/hwrng.h"
#include "pool/source-tpm.h"
#include "pool/source.h"
#include "pool/store.h"

#define CHUNK 4096U

typedef struct Args {
        SourceParams p;
        double seconds;
        double credit;
        unsigned reads;
        bool list;
        const char *sysfs;
} Args;

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void pause_ms(long ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

        nanosleep(&ts, NULL);
}

static int parse_args(int argc, char **argv, Args *a) {
        static const struct option options[] = {
                { "path", required_argument, NULL, 'p' },   { "tcti", required_argument, NULL, 't' },
                { "seconds", required_argument, NULL, 's' }, { "credit", required_argument, NULL, 'c' },
                { "sysfs", required_argument, NULL, 'y' },   { "reads", required_argument, NULL, 'r' },
                { "list", no_argument, NULL, 'l' },
                { NULL, 0, NULL, 0 },
        };
        int c;

        *a = (Args) { .seconds = 2.0, .credit = 1.0 };
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case 'p': a->p.path = optarg; break;
                case 't': a->p.tcti = optarg; break;
                case 's': a->seconds = atof(optarg); break;
                case 'c': a->credit = atof(optarg); break;
                case 'y': a->sysfs = optarg; break;
                case 'r': a->reads = (unsigned) atoi(optarg); break;
                case 'l': a->list = true; break;
                default: return -EINVAL;
                }
        }
        if (a->seconds <= 0.0 || a->credit <= 0.0 || a->credit > 8.0)
                return -EINVAL;
        return 0;
}

static void *open_source(Args *a) {
        SelftestResult st = { 0 };
        char text[256] = "no self-test";
        void *s = NULL;
        double t0 = now();
        int r;

        a->p.selftest = &st;
        r = source_tpm.open(&a->p, &s);
        a->p.selftest = NULL;
        if (st.run)
                selftest_describe(&st, text, sizeof(text));
        printf("tpm-open: %d (%s; %s) in %.1f ms\n", r, r < 0 ? strerror(-r) : "ok", text, (now() - t0) * 1e3);
        return r < 0 ? NULL : s;
}

/* Raw rate with the collector's first backoff (10 ms) on "nothing now". */
static int bench_raw(void *s, double seconds) {
        static uint8_t buf[CHUNK];
        double t0 = now(), elapsed = 0.0;
        unsigned long long samples = 0;
        ssize_t r = 0;

        do {
                r = source_tpm.read(s, buf, sizeof(buf));
                if (r > 0)
                        samples += (unsigned long long) r;
                else if (r == -EAGAIN)
                        pause_ms(10);
                else
                        break;
                elapsed = now() - t0;
        } while (elapsed < seconds);
        printf("tpm-raw: %llu samples in %.2f s: %.0f samples/s%s%s\n", samples, elapsed,
               elapsed > 0 ? (double) samples / elapsed : 0.0, r < 0 && r != -EAGAIN ? "; stopped: " : "",
               r < 0 && r != -EAGAIN ? strerror((int) -r) : "");
        return samples > 0 ? 0 : -EIO;
}

static int bench_blocks(const Args *a) {
        uint8_t block[STORE_BLOCK_SIZE];
        uint32_t credit = (uint32_t) (a->credit * 1000.0 + 0.5);
        CollectorGate gate = { .policy = { .credit_mbits = credit }, .window = GATE_WINDOW_MIN };
        Store *store = NULL;
        Collector *c = NULL;
        double t0, elapsed = 0.0;
        CollectorStats st;

        if (gate_new(1, &gate.gate) < 0 || gate_start(gate.gate) < 0 || store_new(1024, 1, &store) < 0 ||
            collector_new(&source_tpm, &a->p, &gate, 0, store, NULL, NULL, &c) < 0) {
                store_free(store);
                gate_free(gate.gate);
                return -ENOMEM;
        }
        t0 = now();
        do {
                ssize_t n = collector_step(c, CHUNK);

                if (n == -EAGAIN)
                        pause_ms(10);
                else if (n < 0)
                        break;
                while (store_take(store, block, STORE_BLOCK_SIZE) == 0)
                        ;
                elapsed = now() - t0;
        } while (elapsed < a->seconds);
        collector_get_stats(c, &st);
        printf("tpm-blocks: %llu blocks in %.2f s at %.3f bit/sample: %.1f blocks/s (state %s, %llu samples, "
               "%llu health failures; gate %llu credited, %llu refused, estimate %.2f)\n",
               (unsigned long long) st.blocks, elapsed, credit / 1000.0,
               elapsed > 0 ? (double) st.blocks / elapsed : 0.0, source_state_to_string(st.state),
               (unsigned long long) st.samples, (unsigned long long) (st.fail_rct + st.fail_apt),
               (unsigned long long) st.gate.credited, (unsigned long long) st.gate.refused, st.gate.estimate);
        collector_free(c);
        store_free(store);
        gate_free(gate.gate);
        return st.blocks > 0 ? 0 : -EIO;
}

static void list_hwrng(const char *sysfs) {
        HwrngList l;
        int r;

        r = hwrng_list_read(sysfs, &l);
        if (r < 0) {
                printf("hwrng: %d (%s)\n", r, strerror(-r));
                return;
        }
        printf("hwrng:");
        for (size_t i = 0; i < l.n; i++) {
                printf(" %s", l.devices[i].name);
                if (l.devices[i].current)
                        printf(" (current)");
                if (l.devices[i].tpm >= 0)
                        printf(" (tpm %d)", l.devices[i].tpm);
        }
        printf("%s; current %s; quality %d; selected %d\n", l.truncated ? " ..." : "",
               l.current[0] ? l.current : "none", l.quality, l.selected);
        r = hwrng_current_tpm(sysfs);
        printf("hwrng-current-tpm: %d (%s)\n", r, r < 0 ? strerror(-r) : "a TPM's RNG is current");
}

/* What the hwrng source would credit /dev/hwrng with, here and now. */
static void hwrng_credit(const char *sysfs) {
        SourceParams p = { .sysfs_dir = sysfs };
        void *h;
        int r;

        r = source_hwrng.open(&p, &h);
        if (r < 0) {
                printf("hwrng-max-credit: %d (%s)\n", r, strerror(-r));
                return;
        }
        printf("hwrng-max-credit: %u mbits/sample\n", source_hwrng.max_credit(h));
        source_hwrng.close(h);
}

static int repeat_reads(void *s, unsigned reads) {
        uint8_t buf[256];
        int last = 0;

        for (unsigned i = 0; i < reads; i++) {
                ssize_t r = source_tpm.read(s, buf, sizeof(buf));

                printf("tpm-read %u: %zd (%s)\n", i, r, r < 0 ? strerror((int) -r) : "ok");
                fflush(stdout);
                last = r < 0 ? (int) r : 0;
                pause_ms(500);
        }
        return last;
}

int main(int argc, char **argv) {
        Args a;
        void *s;
        int r;

        if (parse_args(argc, argv, &a) < 0) {
                fprintf(stderr, "usage: %s [--path DEV | --tcti CONF] [--seconds S] [--credit BITS] "
                                "[--sysfs DIR] [--reads N | --list]\n", argv[0]);
                return 2;
        }
        list_hwrng(a.sysfs);
        hwrng_credit(a.sysfs);
        if (a.list)
                return 0;
        if (a.p.path)
                printf("tpm-device: %s is TPM %d\n", a.p.path, source_tpm_device_index(a.p.path));
        s = open_source(&a);
        if (!s)
                return 1;
        if (a.reads) {
                r = repeat_reads(s, a.reads);
                source_tpm.close(s);
                return r < 0 ? 1 : 0;
        }
        r = bench_raw(s, a.seconds);
        source_tpm.close(s);
        if (r == 0)
                r = bench_blocks(&a);
        return r < 0 ? 1 : 0;
}
