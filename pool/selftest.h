/* selftest.h - the sampler self-test a source runs at every open, before
 * any sample of it is used, and every threshold it applies (this table is
 * the one place they live; docs/ENTROPY.md repeats each with its reason).
 *
 * In the spirit of jitterentropy's power-up test (jent_time_entropy_init):
 * it asks whether the sampler works on this machine at all, not whether a
 * credit holds (the startup and continuous health tests, and the running
 * gate in gate.h, judge the credit). So the thresholds are fixed, set
 * where a sampler has plainly stopped measuring anything: the lowest of
 * them asks for a most common value below 90 %, about 0.15 bit per sample,
 * the least any credit here is ever based on.
 *
 * jitter: after a warm-up, SELFTEST_SAMPLES clock deltas are taken; the
 * clock must not go backwards and must advance over every walk; the clock's
 * step is measured from them (selftest_clock_step()); the reduced 8-bit
 * samples must take enough values, must not be stuck or periodic, must not
 * hold their lowest bit nearly constant, and the first SELFTEST_ROW of
 * them must not be nearly stuck: the earliest samples judged, where a
 * collapse after an open (it fades as the caches warm) shows most; the
 * rows a restart test reads begin after the discarded window. rdseed: SELFTEST_WORDS words, none repeated and none all
 * zeros or all ones; tpm: the same check on words of its answers. hwrng,
 * kernel and file have none (docs/ENTROPY.md).
 * Plain data, no secrets: the window is discarded, never credited.
 * Flow: [source open: self-test] -> health -> conditioner -> store. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the thresholds ------------------------------------------------------ */

/* Deltas in the window: enough for the step estimate to see past a rare
 * odd delta (0.2 to 0.6 % of opens here had one in 4096), and four rows of
 * SELFTEST_ROW; jitterentropy's power-up test takes 1024. */
#define SELFTEST_SAMPLES 4096U
/* The row right after an open, as SP 800-90B's restart test cuts it. */
#define SELFTEST_ROW 1000U

/* Warm-up before the window, in sweeps of the buffer by the walk: the
 * cache state an open leaves behind (a buffer just written, or one evicted)
 * shapes the samples until the walk has touched every line several times.
 * Measured here: a flushed 4 MiB buffer took 8192 samples of 64 accesses
 * (8 sweeps of its 65,536 lines) to reach its steady distribution; at 4096
 * (where the window used to start) rows still held half the steady most
 * common count. Bounded below for tiny buffers and above so that an open
 * of the largest buffer with the fewest accesses stays under a second. */
#define SELFTEST_WARMUP_SWEEPS 8U
#define SELFTEST_WARMUP_MIN 256U
#define SELFTEST_WARMUP_MAX 131072U

/* Clock reads that went backwards: a counter read can lag by a few ticks
 * when the thread moves to a CPU whose TSC is not perfectly in step (the
 * allowance jitterentropy makes); more is a clock that is not monotonic. */
#define SELFTEST_BACKWARDS_MAX 3U
/* Deltas the clock step need not divide (1/256 of the window): a clock
 * that steps by 2 but shows a rare odd delta (TCG: 0.1 %; natively here
 * one in 4096 on 0.2 % of opens) still steps by 2, and dividing by 1
 * would leave the lowest sample bit nearly constant. */
#define SELFTEST_STEP_OUTLIERS (SELFTEST_SAMPLES / 256U)
/* Zero deltas (the clock did not tick during a whole walk: it is coarser
 * than the walk), allowed only as rarely as step outliers. */
#define SELFTEST_ZERO_MAX (SELFTEST_SAMPLES / 256U)
/* Fewer distinct 8-bit samples than this in the window: the timing falls on
 * a handful of clock steps (a coarse or emulated clock). The fewest seen
 * in a window of a working sampler: 22 (the committed EPYC capture). */
#define SELFTEST_DISTINCT_MIN 8U
/* Stuck samples, jitterentropy's definition (first, second or third
 * difference zero, here on the 8-bit samples), at most 90 % of the window
 * as jitterentropy allows (JENT_STUCK_INIT_THRES). Seen: at most 21 %. */
#define SELFTEST_STUCK_MAX (SELFTEST_SAMPLES * 9U / 10U)
/* The lowest bit of the reduced delta holding one value in more than 15/16
 * of the window: a missed clock step (TCG, undivided: 99.9 % even). The
 * high bits are legitimately near-constant and are not tested. Seen: at
 * most 70 % (EPYC, 4096-sample windows); a source whose lowest bit is
 * 94 % one value has under 0.1 bit of min-entropy in it. */
#define SELFTEST_LOW_BIT_MAX (SELFTEST_SAMPLES * 15U / 16U)
/* Periodicity: for each lag 1..SELFTEST_LAGS, the share of samples equal
 * to the one that many places earlier; above 90 % at any lag the sequence
 * repeats itself (a predictor would be right 9 times in 10: 0.15 bit).
 * Every period up to half the window, so that each lag still has 2048
 * pairs to judge by. Seen: at most 30 % (EPYC), 5 % here. */
#define SELFTEST_LAGS (SELFTEST_SAMPLES / 2U)
#define SELFTEST_LAG_MATCH_PERCENT 90U
/* The row right after an open: its most common value at most 900 times in
 * 1000 (90 %, as above). Seen: 483 in the EPYC capture's 1000-sample
 * windows, 772 in the restart test of its documented capture A. */
#define SELFTEST_ROW_MAX 900U

/* rdseed: 64-bit words read at open. A repeated word in 64 has probability
 * 2^-53 from a working unit; a stuck one repeats at once, and an all-zero
 * or all-one word is how RDRAND/RDSEED units have been seen to fail. */
#define SELFTEST_WORDS 64U

/* ---- the verdict --------------------------------------------------------- */

typedef enum SelftestReason {
        SELFTEST_PASSED,
        SELFTEST_CLOCK_BACKWARDS,   /* more than SELFTEST_BACKWARDS_MAX */
        SELFTEST_COARSE_CLOCK,      /* more than SELFTEST_ZERO_MAX zero deltas */
        SELFTEST_FEW_VALUES,
        SELFTEST_STUCK,
        SELFTEST_CONSTANT_LOW_BIT,
        SELFTEST_PERIODIC,
        SELFTEST_STUCK_AFTER_OPEN,  /* the first row */
        SELFTEST_STUCK_WORD,        /* rdseed */
        _SELFTEST_REASON_MAX,
} SelftestReason;

/* What a self-test measured. Counts are out of `samples` (row_max out of
 * SELFTEST_ROW, stuck_word out of SELFTEST_WORDS). */
typedef struct SelftestResult {
        bool run;                   /* false: the source has no self-test */
        SelftestReason reason;      /* SELFTEST_PASSED, or the first check that failed */
        uint64_t step;              /* jitter: the clock step divided out */
        uint32_t warmup;            /* jitter: samples discarded before the window */
        uint32_t samples;           /* the window */
        uint32_t backwards, zero;   /* jitter: clock reads that went back; zero deltas */
        uint32_t distinct, stuck;
        uint32_t low_bit;           /* samples whose lowest bit is its majority value */
        uint32_t lag, lag_match;    /* the best lag and how many samples it matched */
        uint32_t row_max;           /* the first row's most common value's count */
        uint32_t words;             /* rdseed: words checked */
} SelftestResult;

/* "passed", "clock-backwards", "coarse-clock", "few-values", "stuck",
 * "constant-low-bit", "periodic", "stuck-after-open", "stuck-word"; NULL
 * out of range. Also the status's and the journal's names. */
const char *selftest_reason_to_string(SelftestReason r);

/* One line for people: the verdict, the figure that decided it and its
 * limit ("low bit of the reduced delta 4092 of 4096 one value (limit
 * 3840): a missed clock step"). Returns buf. */
char *selftest_describe(const SelftestResult *r, char *buf, size_t size);

/* The warm-up for a buffer of buffer_bytes walked by `accesses` accesses
 * per sample: SELFTEST_WARMUP_SWEEPS sweeps of its 64-byte lines,
 * clamped to SELFTEST_WARMUP_MIN..MAX. */
uint32_t selftest_warmup_samples(size_t buffer_bytes, unsigned accesses);

/* The clock's step: the largest g that divides every positive delta but at
 * most SELFTEST_STEP_OUTLIERS of them (zero and backward deltas are not
 * looked at); 0 when there are fewer positive deltas than outliers + 2.
 * A clock stepping by 26 with one odd delta in 4096 gives 26, where the
 * plain GCD gives 1. */
uint64_t selftest_clock_step(const uint64_t *deltas, size_t n);

/* The checks on 8-bit samples alone (distinct values, stuck, lowest bit,
 * periodicity, the first row), n >= SELFTEST_ROW. Fills *ret (run, samples
 * and the figures; step, warmup, backwards, zero left 0) and returns its
 * reason. */
SelftestReason selftest_samples(const uint8_t *samples, size_t n, SelftestResult *ret);

/* jitter: the whole test on raw clock deltas (now - previous, as unsigned
 * 64-bit differences, so a clock that went back shows as a huge delta),
 * n >= SELFTEST_ROW: backwards, zero deltas, the step, then the sample
 * checks on (delta / step) & 0xff. Fills *ret (warmup left to the caller)
 * and returns its reason. */
SelftestReason selftest_deltas(const uint64_t *deltas, size_t n, SelftestResult *ret);

/* rdseed and tpm: n words, none repeated, none 0 or ~0. */
SelftestReason selftest_words(const uint64_t *words, size_t n, SelftestResult *ret);
