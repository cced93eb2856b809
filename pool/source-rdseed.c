/* source-rdseed.c - x86 RDSEED.
 *
 * RDSEED is detected at run time (CPUID leaf 7, EBX bit 18); without it open()
 * returns -ENODEV and the instruction is never executed. The device is shared
 * by every core and fails (carry clear) under contention, so each 64-bit word
 * gets a bounded number of attempts with PAUSE between them; when they run
 * out, read() returns the bytes it has or -EAGAIN and the collector backs off.
 * Raw samples are the bytes of the RDSEED words.
 *
 * Self-test at open (selftest.h): SELFTEST_WORDS words, none repeated and
 * none all zeros or all ones, or open() is -EDOM. The timing checks of the
 * jitter source mean nothing for conditioned output; what does is a unit
 * that hands out the same word, or zeros with the carry flag set, which is
 * how RDRAND/RDSEED units have failed in the field. The words are thrown
 * away.
 *
 * Credit: 250 mbits per 8-bit sample (1/32 bit per bit). RDSEED hands out
 * the vendor's conditioned output; its raw noise is out of our health tests'
 * reach, so it is credited low and the operator may raise it.
 * Flow: [source] -> health -> conditioner -> store. */
#include "source.h"
#include "secret.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define RDSEED_TRIES_PER_WORD 100U
/* Rounds of fill at open before a contended unit counts as "nothing now". */
#define RDSEED_SELFTEST_ROUNDS 100U

typedef struct Rdseed {
        uint64_t failures;     /* failed attempts, for diagnostics */
} Rdseed;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
        __asm__ volatile("pause");
#endif
}

ssize_t source_rdseed_fill(SourceSeedStepFn step, unsigned tries_per_word, uint8_t *buf, size_t n,
                           uint64_t *failures) {
        size_t done = 0;

        if (!step || tries_per_word == 0 || n == 0)
                return -EINVAL;

        while (done < n) {
                uint64_t word;
                size_t k;
                unsigned t;

                for (t = 0; t < tries_per_word; t++) {
                        if (step(&word))
                                break;
                        if (failures)
                                (*failures)++;
                        cpu_relax();
                }
                if (t == tries_per_word)
                        break;
                k = MIN(n - done, sizeof(word));
                memcpy(buf + done, &word, k);
                sodium_memzero(&word, sizeof(word));
                done += k;
        }
        return done > 0 ? (ssize_t) done : -EAGAIN;
}

#if defined(__x86_64__)
static bool rdseed_supported(void) {
        unsigned eax, ebx, ecx, edx;

        if (__get_cpuid_max(0, NULL) < 7)
                return false;
        if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
                return false;
        return (ebx & (1U << 18)) != 0;
}

static bool rdseed_step(uint64_t *ret) {
        uint64_t v;
        unsigned char ok;

        __asm__ volatile("rdseed %0\n\tsetc %1" : "=r"(v), "=qm"(ok) : : "cc");
        if (!ok)
                return false;
        *ret = v;
        return true;
}
#else
static bool rdseed_supported(void) {
        return false;
}

static bool rdseed_step(uint64_t *ret) {
        abort();
}
#endif

static int rdseed_selftest(const SourceParams *p, uint64_t *failures) {
        uint64_t words[SELFTEST_WORDS];
        uint8_t *buf = (uint8_t *) words;
        SelftestResult result;
        size_t have = 0;

        for (unsigned round = 0; have < sizeof(words) && round < RDSEED_SELFTEST_ROUNDS; round++) {
                ssize_t n = source_rdseed_fill(rdseed_step, RDSEED_TRIES_PER_WORD, buf + have,
                                               sizeof(words) - have, failures);
                if (n > 0)
                        have += (size_t) n;
        }
        if (have < sizeof(words)) {
                sodium_memzero(words, sizeof(words));
                return -EAGAIN;
        }
        if (p && p->selftest_induce)
                for (size_t i = 1; i < SELFTEST_WORDS; i++)
                        words[i] = words[0];
        (void) selftest_words(words, SELFTEST_WORDS, &result);
        sodium_memzero(words, sizeof(words));
        if (p && p->selftest)
                *p->selftest = result;
        return result.reason == SELFTEST_PASSED ? 0 : -EDOM;
}

static int rdseed_open(const SourceParams *p, void **ret_state) {
        Rdseed *r;
        int e;

        if (!rdseed_supported())
                return -ENODEV;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        e = rdseed_selftest(p, &r->failures);
        if (e < 0) {
                free(r);
                return e;
        }
        *ret_state = r;
        return 0;
}

static ssize_t rdseed_read(void *state, uint8_t *buf, size_t n) {
        Rdseed *r = state;

        return source_rdseed_fill(rdseed_step, RDSEED_TRIES_PER_WORD, buf, n, &r->failures);
}

static uint32_t rdseed_max_credit(void *state) {
        return UINT32_MAX;
}

static void rdseed_close(void *state) {
        free(state);
}

const SourceOps source_rdseed = {
        .name = "rdseed",
        .help = "x86 RDSEED, detected at run time",
        .credit = SOURCE_CREDIT_FIXED,
        .defaults = { .enable = true, .credit_mbits = 250 },
        .absent = "this CPU has no RDSEED",
        .open = rdseed_open,
        .read = rdseed_read,
        .max_credit = rdseed_max_credit,
        .close = rdseed_close,
};
