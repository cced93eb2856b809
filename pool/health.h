/* health.h - SP 800-90B §4.4 continuous health tests on raw samples.
 *
 * Repetition Count Test and Adaptive Proportion Test, with cutoffs computed
 * from the source's credit H (bits per 8-bit sample) and a false-positive
 * probability alpha = 2^alpha_log2:
 *   RCT: C = 1 + ceil(-alpha_log2 / H)
 *   APT: C = 1 + CRITBINOM(W, 2^-H, 1 - alpha), W = 512 (1024 for 1-bit samples)
 * CRITBINOM is computed exactly from the binomial distribution.
 * Two sets of cutoffs run side by side on the same counters: alpha = 2^-30
 * (intermittent failure: discard, count, re-run the startup test) and
 * alpha = 2^-60 (permanent failure: the source must be disabled).
 * Startup: HEALTH_STARTUP_SAMPLES consecutive passing samples before credit.
 *
 * A verdict is about more than the sample that crossed a cutoff: an APT
 * failure condemns its whole window, an RCT failure the whole run. So a
 * sample is settled only once every window and run that holds it has closed
 * without failing; health_settled() says up to which sample that is, and the
 * intake (intake.h) holds blocks out of the store until then (fail closed).
 * Flow: source -> [health] -> conditioner. Plain data, no secrets. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Credit unit everywhere in pool/: millibits (1/1000 bit) per raw sample. */
#define CREDIT_MBITS_MAX 8000U
#define HEALTH_STARTUP_SAMPLES 1024U
#define HEALTH_ALPHA_LOG2_INTERMITTENT (-30)
#define HEALTH_ALPHA_LOG2_PERMANENT (-60)
#define HEALTH_APT_WINDOW 512U

typedef struct HealthCutoffs {
        unsigned rct;        /* a run of rct identical samples fails */
        unsigned apt;        /* apt occurrences of the window's first sample fail */
        unsigned apt_window;
} HealthCutoffs;

typedef enum HealthVerdict {
        HEALTH_OK,            /* passed; creditable */
        HEALTH_STARTUP,       /* passed, but the startup test is not complete: not creditable */
        HEALTH_FAIL_RCT,      /* intermittent failures: discard pending data */
        HEALTH_FAIL_APT,
        HEALTH_PERMANENT_RCT, /* permanent failures: disable the source */
        HEALTH_PERMANENT_APT,
} HealthVerdict;

typedef struct HealthTest {
        HealthCutoffs intermittent;
        HealthCutoffs permanent;
        uint8_t rct_value;
        unsigned rct_run;
        uint8_t apt_value;
        unsigned apt_count;
        unsigned apt_index;
        unsigned startup_left;
        bool failed_permanently;
        uint64_t samples;          /* fed so far; sample numbers count from 1 */
        uint64_t rct_start;        /* number of the current run's first sample */
        uint64_t apt_start;        /* number of the current window's first sample */
        uint64_t fail_rct;
        uint64_t fail_apt;
} HealthTest;

/* Smallest k with P[Binomial(n, p) <= k] >= 1 - 2^alpha_log2. */
int health_critbinom(unsigned n, double p, int alpha_log2, unsigned *ret_k);

/* Cutoffs for credit h_bits in (0, 8] bits per sample; -EINVAL otherwise. */
int health_cutoffs(double h_bits, int alpha_log2, unsigned window, HealthCutoffs *ret);

/* credit_mbits in 1..CREDIT_MBITS_MAX; -EINVAL otherwise. Starts in startup. */
int health_init(HealthTest *t, uint32_t credit_mbits);
/* New cutoffs for credit_mbits (the running gate grants a credit per
 * window); the counters, the startup test and the runs go on. */
int health_set_credit(HealthTest *t, uint32_t credit_mbits);

/* Feeds one sample. After a permanent verdict every further call returns it
 * again. After an intermittent one the startup test runs anew. */
HealthVerdict health_feed(HealthTest *t, uint8_t sample);

/* The number of the last sample no later verdict can condemn: every APT
 * window and RCT run holding it or an earlier sample has closed clean (or
 * failed, and said so). A complete window is closed; a run is closed by the
 * first different sample. At most one window (or one run below the RCT
 * cutoff) behind the newest sample. */
static inline uint64_t health_settled(const HealthTest *t) {
        uint64_t apt = t->apt_index == 0 ? t->samples : t->apt_start - 1;
        uint64_t rct = t->rct_start - 1;

        return apt < rct ? apt : rct;
}

static inline bool health_verdict_failed(HealthVerdict v) { return v >= HEALTH_FAIL_RCT; }
static inline bool health_verdict_permanent(HealthVerdict v) { return v >= HEALTH_PERMANENT_RCT; }
const char *health_verdict_to_string(HealthVerdict v);
