/* selftest.c - the sampler self-test at open (thresholds and reasons in
 * selftest.h).
 *
 * Pure functions over arrays the source hands in, so that tests feed them
 * coarse, periodic or one-bit-stuck sequences directly. The checks run in
 * a fixed order and the first that fails names the verdict; every figure
 * is measured whatever the verdict, for the status and the journal.
 * Plain data, no secrets: the window is discarded by the source.
 * Flow: [source open: self-test] -> health -> conditioner -> store. */
#include "selftest.h"

#include <stdio.h>
#include <string.h>

#define CACHE_LINE 64U

const char *selftest_reason_to_string(SelftestReason r) {
        static const char *const table[_SELFTEST_REASON_MAX] = {
                [SELFTEST_PASSED] = "passed",
                [SELFTEST_CLOCK_BACKWARDS] = "clock-backwards",
                [SELFTEST_COARSE_CLOCK] = "coarse-clock",
                [SELFTEST_FEW_VALUES] = "few-values",
                [SELFTEST_STUCK] = "stuck",
                [SELFTEST_CONSTANT_LOW_BIT] = "constant-low-bit",
                [SELFTEST_PERIODIC] = "periodic",
                [SELFTEST_STUCK_AFTER_OPEN] = "stuck-after-open",
                [SELFTEST_STUCK_WORD] = "stuck-word",
        };

        if ((unsigned) r >= _SELFTEST_REASON_MAX)
                return NULL;
        return table[r];
}

static uint32_t lag_limit(const SelftestResult *r) {
        return (r->samples - r->lag) * SELFTEST_LAG_MATCH_PERCENT / 100U;
}

char *selftest_describe(const SelftestResult *r, char *buf, size_t size) {
        uint32_t n = r->samples;

        switch (r->reason) {
        case SELFTEST_PASSED:
                if (r->words)
                        snprintf(buf, size, "passed (%u words, none repeated)", r->words);
                else
                        snprintf(buf, size,
                                 "passed (step %llu, %u of %u samples after a %u-sample warm-up: %u values, "
                                 "low bit %u%% one value, %u%% stuck, first row's most common value %u times)",
                                 (unsigned long long) r->step, n, n, r->warmup, r->distinct,
                                 n ? r->low_bit * 100U / n : 0, n ? r->stuck * 100U / n : 0, r->row_max);
                break;
        case SELFTEST_CLOCK_BACKWARDS:
                snprintf(buf, size, "the clock went backwards %u times in %u reads (limit %u): not monotonic",
                         r->backwards, n, SELFTEST_BACKWARDS_MAX);
                break;
        case SELFTEST_COARSE_CLOCK:
                snprintf(buf, size, "the clock did not advance over %u of %u walks (limit %u): too coarse",
                         r->zero, n, SELFTEST_ZERO_MAX);
                break;
        case SELFTEST_FEW_VALUES:
                snprintf(buf, size, "%u distinct values in %u samples (at least %u needed): a coarse clock",
                         r->distinct, n, SELFTEST_DISTINCT_MIN);
                break;
        case SELFTEST_STUCK:
                snprintf(buf, size, "%u of %u samples stuck (limit %u)", r->stuck, n, SELFTEST_STUCK_MAX);
                break;
        case SELFTEST_CONSTANT_LOW_BIT:
                snprintf(buf, size, "low bit of the reduced delta %u of %u one value (limit %u): a missed clock step",
                         r->low_bit, n, SELFTEST_LOW_BIT_MAX);
                break;
        case SELFTEST_PERIODIC:
                snprintf(buf, size, "%u of %u samples repeat the one %u places earlier (limit %u): periodic",
                         r->lag_match, n - r->lag, r->lag, lag_limit(r));
                break;
        case SELFTEST_STUCK_AFTER_OPEN:
                snprintf(buf, size, "the first %u samples after the warm-up hold one value %u times (limit %u)",
                         SELFTEST_ROW, r->row_max, SELFTEST_ROW_MAX);
                break;
        case SELFTEST_STUCK_WORD:
                snprintf(buf, size, "a repeated, all-zero or all-one word in %u words", r->words);
                break;
        default:
                snprintf(buf, size, "unknown verdict %d", (int) r->reason);
                break;
        }
        return buf;
}

uint32_t selftest_warmup_samples(size_t buffer_bytes, unsigned accesses) {
        uint64_t lines = buffer_bytes / CACHE_LINE, w;

        if (accesses == 0)
                return SELFTEST_WARMUP_MAX;
        w = (lines * SELFTEST_WARMUP_SWEEPS + accesses - 1) / accesses;
        if (w < SELFTEST_WARMUP_MIN)
                return SELFTEST_WARMUP_MIN;
        if (w > SELFTEST_WARMUP_MAX)
                return SELFTEST_WARMUP_MAX;
        return (uint32_t) w;
}

/* ---- the clock's step -------------------------------------------------- */

static uint64_t gcd2(uint64_t a, uint64_t b) {
        while (b) {
                uint64_t t = a % b;
                a = b;
                b = t;
        }
        return a;
}

static bool usable(uint64_t d) {
        /* Zero: no tick. Top bit set: the clock went back (or a delta of
         * centuries). Neither says anything about the step. */
        return d != 0 && (int64_t) d > 0;
}

/* Does g divide all but at most SELFTEST_STEP_OUTLIERS usable deltas? */
static bool divides_most(uint64_t g, const uint64_t *d, size_t n) {
        unsigned misses = 0;

        for (size_t i = 0; i < n; i++)
                if (usable(d[i]) && d[i] % g != 0 && ++misses > SELFTEST_STEP_OUTLIERS)
                        return false;
        return true;
}

/* Tries the divisors of h, largest first; keeps the best that divides most. */
static uint64_t best_divisor(uint64_t h, uint64_t best, const uint64_t *d, size_t n) {
        /* Divisors come in pairs (k, h / k), k <= sqrt(h); the large one of
         * each pair is tried as k grows, the small ones on the way back. */
        uint64_t k;

        for (k = 1; k <= h / k; k++)
                if (h % k == 0 && h / k > best && divides_most(h / k, d, n))
                        return h / k;
        for (; k >= 1; k--)
                if (k <= h / k && h % k == 0 && k > best && divides_most(k, d, n))
                        return k;
        return best;
}

uint64_t selftest_clock_step(const uint64_t *deltas, size_t n) {
        uint64_t pair[2], best = 0;
        size_t pairs = 0, have = 0, usable_n = 0;

        for (size_t i = 0; i < n; i++)
                usable_n += usable(deltas[i]);
        if (usable_n < SELFTEST_STEP_OUTLIERS + 2)
                return 0;

        /* The step divides every delta but a few. Of the first
         * OUTLIERS + 1 disjoint pairs of usable deltas at least one holds
         * no outlier, so the step divides that pair's GCD: the candidates
         * are those GCDs' divisors, and the largest that divides most
         * deltas is the step. */
        for (size_t i = 0; i < n && pairs <= SELFTEST_STEP_OUTLIERS; i++) {
                if (!usable(deltas[i]))
                        continue;
                pair[have++] = deltas[i];
                if (have < 2)
                        continue;
                have = 0;
                pairs++;
                best = best_divisor(gcd2(pair[0], pair[1]), best, deltas, n);
        }
        /* Fewer pairs than that (a window that is mostly zeros): the plain
         * GCD of what there is. */
        if (best == 0)
                for (size_t i = 0; i < n; i++)
                        if (usable(deltas[i]))
                                best = gcd2(best, deltas[i]);
        return best;
}

/* ---- the checks ---------------------------------------------------------- */

/* How many of s[lag..n) equal the sample lag places earlier, eight pairs a
 * step. In x = a ^ b a zero byte is a match; adding 0x7f to each byte's low
 * seven bits carries into its top bit unless they are all zero, so the top
 * bits that (t | x) leaves clear mark exactly the zero bytes. The marks,
 * shifted down to 1 per byte, add up in byte lanes that are folded before
 * any could pass 255. The lag loop covers every period up to half the
 * window: 6 M pairs at each open. */
static uint32_t lag_matches(const uint8_t *s, size_t n, size_t lag) {
        const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL, ones = 0x0101010101010101ULL;
        uint32_t match = 0;
        size_t i = lag;

        while (i + 8 <= n) {
                uint64_t lanes = 0;

                for (unsigned k = 0; k < 255 && i + 8 <= n; k++, i += 8) {
                        uint64_t a, b, x;

                        memcpy(&a, s + i, 8);
                        memcpy(&b, s + i - lag, 8);
                        x = a ^ b;
                        lanes += (~(((x & low7) + low7) | x | low7) >> 7) & ones;
                }
                lanes = (lanes & 0x00ff00ff00ff00ffULL) + ((lanes >> 8) & 0x00ff00ff00ff00ffULL);
                match += (uint32_t) ((lanes * 0x0001000100010001ULL) >> 48);
        }
        for (; i < n; i++)
                match += s[i] == s[i - lag];
        return match;
}

SelftestReason selftest_samples(const uint8_t *s, size_t n, SelftestResult *ret) {
        uint32_t count[256] = { 0 }, row[256] = { 0 };
        SelftestResult r = { .run = true, .samples = (uint32_t) n };
        uint32_t odd = 0;
        uint8_t d_prev = 0;

        for (size_t i = 0; i < n; i++) {
                count[s[i]]++;
                if (i < SELFTEST_ROW && ++row[s[i]] > r.row_max)
                        r.row_max = row[s[i]];
                odd += s[i] & 1U;
                /* jitterentropy's stuck test: the timestamps' first,
                 * second or third difference is zero. A sample is already
                 * the first difference (a zero one is the clock check's),
                 * so here: the sample equals the one before, or the step
                 * between them equals the step before (modulo 256). */
                if (i > 0) {
                        uint8_t d = (uint8_t) (s[i] - s[i - 1]);

                        if (d == 0 || (i > 1 && d == d_prev))
                                r.stuck++;
                        d_prev = d;
                }
        }
        for (unsigned v = 0; v < 256; v++)
                r.distinct += count[v] > 0;
        r.low_bit = odd > n - odd ? odd : (uint32_t) n - odd;

        for (uint32_t lag = 1; lag <= SELFTEST_LAGS && lag <= n / 2; lag++) {
                uint32_t match = lag_matches(s, n, lag);

                /* Compared as shares: a longer lag has fewer pairs. */
                if (r.lag == 0 || (uint64_t) match * (n - r.lag) > (uint64_t) r.lag_match * (n - lag)) {
                        r.lag = lag;
                        r.lag_match = match;
                }
        }

        if (r.distinct < SELFTEST_DISTINCT_MIN)
                r.reason = SELFTEST_FEW_VALUES;
        else if (r.stuck > (uint64_t) SELFTEST_STUCK_MAX * n / SELFTEST_SAMPLES)
                r.reason = SELFTEST_STUCK;
        else if (r.low_bit > (uint64_t) SELFTEST_LOW_BIT_MAX * n / SELFTEST_SAMPLES)
                r.reason = SELFTEST_CONSTANT_LOW_BIT;
        else if (r.lag > 0 && r.lag_match > lag_limit(&r))
                r.reason = SELFTEST_PERIODIC;
        else if (r.row_max > SELFTEST_ROW_MAX)
                r.reason = SELFTEST_STUCK_AFTER_OPEN;
        *ret = r;
        return r.reason;
}

SelftestReason selftest_deltas(const uint64_t *deltas, size_t n, SelftestResult *ret) {
        uint8_t samples[SELFTEST_SAMPLES];
        uint32_t backwards = 0, zero = 0;
        SelftestResult r;
        uint64_t step;

        if (n > SELFTEST_SAMPLES)
                n = SELFTEST_SAMPLES;
        for (size_t i = 0; i < n; i++) {
                zero += deltas[i] == 0;
                backwards += (int64_t) deltas[i] < 0;
        }
        step = selftest_clock_step(deltas, n);
        if (step == 0)
                step = 1;
        for (size_t i = 0; i < n; i++)
                samples[i] = (uint8_t) (deltas[i] / step);

        (void) selftest_samples(samples, n, &r);
        r.step = step;
        r.backwards = backwards;
        r.zero = zero;
        /* The clock first: a broken clock explains whatever the samples do. */
        if (backwards > SELFTEST_BACKWARDS_MAX)
                r.reason = SELFTEST_CLOCK_BACKWARDS;
        else if (zero > SELFTEST_ZERO_MAX)
                r.reason = SELFTEST_COARSE_CLOCK;
        *ret = r;
        return r.reason;
}

SelftestReason selftest_words(const uint64_t *w, size_t n, SelftestResult *ret) {
        SelftestResult r = { .run = true, .words = (uint32_t) n };

        for (size_t i = 0; i < n && r.reason == SELFTEST_PASSED; i++) {
                if (w[i] == 0 || w[i] == UINT64_MAX)
                        r.reason = SELFTEST_STUCK_WORD;
                for (size_t j = 0; j < i && r.reason == SELFTEST_PASSED; j++)
                        if (w[i] == w[j])
                                r.reason = SELFTEST_STUCK_WORD;
        }
        *ret = r;
        return r.reason;
}
