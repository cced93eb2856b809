/* source-jitter.c - CPU timing jitter of a memory-access loop.
 *
 * Each sample is the time taken by a fixed number of pseudo-randomly placed
 * read-modify-writes over a buffer larger than the caches, measured with the
 * TSC (x86-64) or CLOCK_MONOTONIC. Cache and TLB misses, DRAM refresh and
 * interrupts make that time vary. Timestamps form one chain: every clock read
 * ends one sample and starts the next, so no interval goes unmeasured.
 *
 * A clock that advances in steps of k (a virtualised TSC steps by 21 or 26
 * on AMD EPYC, by 2 on the Intel Xeon machines) would leave log2(k)'s
 * worth of constant low bits, so every delta is divided by the step and
 * the raw sample is the low 8 bits of the quotient.
 *
 * Every open runs the self-test (selftest.h) before a sample leaves:
 *   1. the buffer is written once (first-touch page faults would otherwise
 *      dominate the first samples);
 *   2. a warm-up of SELFTEST_WARMUP_SWEEPS sweeps of the buffer by the
 *      walk is discarded: the cache state the open left behind shapes the
 *      samples until then (docs/ENTROPY.md has the measurement);
 *   3. SELFTEST_SAMPLES deltas are measured, the step is taken from them
 *      (the largest step that divides all but 1/256 of them: the plain GCD
 *      missed it whenever one odd delta came along), and the self-test
 *      judges them; a failure is -EDOM and the source is never read.
 * The samples of 2 and 3 are thrown away, never credited.
 *
 * Credit: credit = auto by default, half of what the SP 800-90B estimators
 * measure for this sampler on the machine it runs on, at most 1 bit per
 * sample whatever they say (docs/ENTROPY.md). The address generator is not
 * a secret: the entropy is in the timing, not in where the loop goes.
 * Flow: [source] -> health -> conditioner -> store. */
#include "source.h"
#include "secret.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define JITTER_BUFFER_DEFAULT (4U << 20)
#define JITTER_BUFFER_MIN 4096U
#define JITTER_ACCESSES_DEFAULT 64U

typedef struct Jitter {
        volatile uint8_t *buffer;
        size_t mask;           /* buffer size - 1, a power of two */
        unsigned accesses;
        uint64_t walk;         /* xorshift state choosing addresses */
        uint64_t last;         /* timestamp that ended the previous sample */
        uint64_t step;         /* the clock's step, measured at open */
        uint64_t (*clock)(void);
} Jitter;

static uint64_t jitter_clock_default(void) {
#if defined(__x86_64__) || defined(__i386__)
        return __rdtsc();
#else
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000U + (uint64_t) ts.tv_nsec;
#endif
}

/* One interval of the chain: the memory walk, then the clock read that ends
 * it. The store through a volatile pointer keeps the compiler from dropping
 * the walk; the read of the same byte makes each access a real round trip. */
static uint64_t jitter_delta(Jitter *j) {
        uint64_t x = j->walk, now, d;

        for (unsigned i = 0; i < j->accesses; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                j->buffer[x & j->mask] += (uint8_t) x;
        }
        j->walk = x;
        now = j->clock();
        d = now - j->last;
        j->last = now;
        return d;
}

static void jitter_free(Jitter *j) {
        free((void *) j->buffer);
        /* The last timestamp and the walk state bound the next samples. */
        sodium_memzero(j, sizeof(*j));
        free(j);
}

static int jitter_open(const SourceParams *p, void **ret_state) {
        size_t size = p && p->jitter_buffer ? p->jitter_buffer : JITTER_BUFFER_DEFAULT;
        unsigned accesses = p && p->jitter_accesses ? p->jitter_accesses : JITTER_ACCESSES_DEFAULT;
        _cleanup_free_ uint64_t *deltas = NULL;
        SelftestResult result;
        uint32_t warmup;
        Jitter *j;

        /* A power of two lets the walk mask instead of divide. */
        if (size < JITTER_BUFFER_MIN || (size & (size - 1)) != 0)
                return -EINVAL;

        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        j->buffer = malloc(size);
        deltas = calloc(SELFTEST_SAMPLES, sizeof(*deltas));
        if (!j->buffer || !deltas) {
                jitter_free(j);
                return -ENOMEM;
        }
        /* Touch every page now: first-touch page faults would otherwise
         * dominate the first samples. */
        memset((void *) j->buffer, 0x5a, size);
        j->mask = size - 1;
        j->accesses = accesses;
        j->clock = p && p->jitter_clock ? p->jitter_clock : jitter_clock_default;
        j->walk = 0x9e3779b97f4a7c15ULL ^ j->clock();
        if (j->walk == 0)
                j->walk = 1;
        j->last = j->clock();

        warmup = selftest_warmup_samples(size, accesses);
        for (uint32_t i = 0; i < warmup; i++)
                (void) jitter_delta(j);
        for (size_t i = 0; i < SELFTEST_SAMPLES; i++)
                deltas[i] = p && p->selftest_induce && i > 0 ? deltas[0] : jitter_delta(j);
        (void) selftest_deltas(deltas, SELFTEST_SAMPLES, &result);
        result.warmup = warmup;
        if (p && p->selftest)
                *p->selftest = result;
        if (result.reason != SELFTEST_PASSED) {
                jitter_free(j);
                return -EDOM;
        }
        j->step = result.step;

        *ret_state = j;
        return 0;
}

static ssize_t jitter_read(void *state, uint8_t *buf, size_t n) {
        Jitter *j = state;

        if (n == 0)
                return -EINVAL;
        /* Bounded so that one read stays well inside the ~1 s contract even
         * on a slow clock: a sample costs a few microseconds at most. */
        n = MIN(n, (size_t) 65536);
        for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t) (jitter_delta(j) / j->step);
        return (ssize_t) n;
}

static uint32_t jitter_max_credit(void *state) {
        return UINT32_MAX;
}

static void jitter_close(void *state) {
        Jitter *j = state;

        if (j)
                jitter_free(j);
}

const SourceOps source_jitter = {
        .name = "jitter",
        .help = "timing jitter of a memory-access loop",
        .credit = SOURCE_CREDIT_MEASURED,
        .defaults = {
                .enable = true,
                .credit_auto = true,
                .credit_cap_mbits = 1000,
                .params = { .jitter_buffer = JITTER_BUFFER_DEFAULT, .jitter_accesses = JITTER_ACCESSES_DEFAULT },
        },
        /* buffer_kib: a power of two, or open() fails (-EINVAL). */
        .keys = {
                { "buffer_kib", SOURCE_KEY_KIB, offsetof(SourceParams, jitter_buffer), 64, 262144 },
                { "accesses", SOURCE_KEY_UNSIGNED, offsetof(SourceParams, jitter_accesses), 1, 65536 },
        },
        .open = jitter_open,
        .read = jitter_read,
        .max_credit = jitter_max_credit,
        .close = jitter_close,
};
