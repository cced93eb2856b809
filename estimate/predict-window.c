/* predict-window.c - SP 800-90B §6.3.7 MultiMCW and §6.3.8 lag prediction.
 *
 * MultiMCW: four predictors guess the most common value of the last 63,
 * 255, 1023 and 4095 samples (ties: the most recently seen value); the
 * predictor scored best so far (ties: the later one) makes the prediction.
 * Lag: 128 predictors guess the value d samples back, d = 1..128.
 * Both keep their state incremental, O(1) or O(128) per sample; on bits
 * (the 8,000,000-bit bitstring pass) MultiMCW counts ones and lag steps
 * only the lags near the top score.
 * Flow: noniid.c hands symbols in; estimates come back. */
#include "predict.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"

#define MCW_WINDOWS 4
static const size_t mcw_window[MCW_WINDOWS] = { 63, 255, 1023, 4095 };

typedef struct MostCommon {
        uint32_t count[256];
        uint32_t with[4096 + 1];  /* with[c]: how many values occur c > 0 times */
        uint32_t top;             /* count[value] */
        unsigned value;           /* the window's most common value */
} MostCommon;

static void mcw_count(MostCommon *w, uint8_t v, int delta) {
        if (w->count[v] > 0)
                w->with[w->count[v]]--;
        w->count[v] = (uint32_t)((int32_t)w->count[v] + delta);
        if (w->count[v] > 0)
                w->with[w->count[v]]++;
}

static void mcw_add(MostCommon *w, uint8_t v) {
        mcw_count(w, v, +1);
        if (w->count[v] >= w->top) {
                w->value = v;
                w->top = w->count[v];
        }
}

/* The window s[i-size .. i-1] moves on to s[i-size+1 .. i]. */
static void mcw_slide(MostCommon *w, const uint8_t *s, size_t i, size_t size) {
        const uint8_t out = s[i - size], in = s[i];

        mcw_count(w, out, -1);
        if (out != w->value) {
                mcw_add(w, in);
                return;
        }
        mcw_count(w, in, +1);
        /* The most common value lost one (and may have got it back): the
         * new top count is within one of the old, and among the values
         * holding it the latest seen wins, which is the first found
         * walking back from the newest sample. */
        if (w->with[w->top + 1] > 0)
                w->top++;
        else if (w->with[w->top] == 0)
                w->top--;
        for (size_t p = i;; p--)
                if (w->count[s[p]] == w->top) {
                        w->value = s[p];
                        return;
                }
}

/* Bits: a full window of odd size has a strict majority, so its most
 * common value is whether more than half of it is 1, and a count of ones
 * per window is the whole state. */
static double mcw_bits(const uint8_t *s, size_t n) {
        static const size_t first = 63;
        uint64_t score[MCW_WINDOWS] = { 0 };
        size_t ones[MCW_WINDOWS] = { 0 };
        Record rec = { 0 };
        unsigned winner = 0;

        for (unsigned j = 0; j < MCW_WINDOWS; j++)
                for (size_t i = 0; i < mcw_window[j]; i++)
                        ones[j] += s[i];
        for (size_t i = first; i < n; i++) {
                const unsigned y = s[i];

                record_hit(&rec, (2 * ones[winner] > mcw_window[winner]) == y);
                for (unsigned j = 0; j < MCW_WINDOWS; j++) {
                        if (i < mcw_window[j])
                                break;
                        if ((2 * ones[j] > mcw_window[j]) == y && ++score[j] >= score[winner])
                                winner = j;
                }
                for (unsigned j = 0; j < MCW_WINDOWS; j++) {
                        if (i < mcw_window[j])
                                break;
                        ones[j] = ones[j] + y - s[i - mcw_window[j]];
                }
        }
        return ea_bound_prediction(rec.correct, n - first, rec.longest, 2);
}

int ea_predict_multi_mcw(const uint8_t *s, size_t n, unsigned k, double *ret_h) {
        static const size_t first = 63;
        uint64_t score[MCW_WINDOWS] = { 0 }, correct = 0, run = 0, longest = 0;
        unsigned winner = 0;
        MostCommon *w;

        if (n <= mcw_window[MCW_WINDOWS - 1]) {
                *ret_h = NAN;
                return 0;
        }
        if (k == 2) {
                *ret_h = mcw_bits(s, n);
                return 0;
        }
        /* 70 KB of counters: on the heap, for callers on small thread stacks. */
        w = calloc(MCW_WINDOWS, sizeof(*w));
        if (!w)
                return -ENOMEM;
        for (unsigned j = 0; j < MCW_WINDOWS; j++)
                for (size_t i = 0; i < mcw_window[j]; i++)
                        mcw_add(&w[j], s[i]);

        for (size_t i = first; i < n; i++) {
                if (w[winner].value == s[i]) {
                        correct++;
                        if (++run > longest)
                                longest = run;
                } else {
                        run = 0;
                }
                /* A window predicts only once it is full. */
                for (unsigned j = 0; j < MCW_WINDOWS; j++)
                        if (i >= mcw_window[j] && w[j].value == s[i] && ++score[j] >= score[winner])
                                winner = j;
                for (unsigned j = 0; j < MCW_WINDOWS; j++)
                        if (i >= mcw_window[j])
                                mcw_slide(&w[j], s, i, mcw_window[j]);
        }
        free(w);
        *ret_h = ea_bound_prediction(correct, n - first, longest, k);
        return 0;
}

#define LAG_MAX 128

/* Lag d's score lives at score[LAG_MAX - d], so that the lags of sample i
 * line up with its history hist[0..127] = s[i-128 .. i-1] in order and the
 * per-sample loop over all 128 lags is a straight, fixed-length,
 * vectorisable pass. */
static void lag_step(const uint16_t *hist, uint16_t cur, int32_t score[static LAG_MAX], size_t *winner) {
        const int32_t high = score[LAG_MAX - *winner];
        int32_t best = 0;

        for (size_t j = 0; j < LAG_MAX; j++) {
                int32_t hit = hist[j] == cur;
                int32_t v;

                score[j] += hit;
                v = score[j] & -hit;
                best = v > best ? v : best;
        }
        /* Scored in order d = 1..128, a lag takes over when it ties or passes
         * the leader: the last lag at the top score wins. */
        if (best > 0 && best >= high)
                for (size_t j = 0; j < LAG_MAX; j++)
                        if (score[j] == best && hist[j] == cur) {
                                *winner = LAG_MAX - j;
                                return;
                        }
}

/* Bits: 128 lags, one at a time, would cost 128 steps a bit on the
 * 8,000,000-bit bitstring. But the leader holds the top score, and a lag
 * takes over only when it is right with a score at most one below the
 * top; a score gains at most one a step, so a lag D below the top cannot
 * take over within the next D - 1 steps. In blocks of LAG_BLOCK steps only
 * the lags that might are stepped one by one (on random data one or two);
 * the others wait in a heap by the step at which they might next matter,
 * and are then brought up to date by counting their right guesses 64 at
 * a time over the packed bits. */
#define LAG_BLOCK 8U

typedef struct LagBits {
        uint64_t *packed;            /* bit i of the data at bit i % 64 of word i / 64, two words of slack */
        int64_t score[LAG_MAX + 1];  /* by lag d = 1..128: right guesses in steps 1..upto[d]-1 */
        size_t upto[LAG_MAX + 1];
        /* The lags not stepped, a binary min-heap on the first step at
         * which each might take over. */
        size_t heap_due[LAG_MAX];
        uint8_t heap_lag[LAG_MAX];
        unsigned heap_size;
} LagBits;

static void lag_heap_push(LagBits *l, size_t due, uint8_t d) {
        unsigned i = l->heap_size++;

        while (i > 0 && l->heap_due[(i - 1) / 2] > due) {
                l->heap_due[i] = l->heap_due[(i - 1) / 2];
                l->heap_lag[i] = l->heap_lag[(i - 1) / 2];
                i = (i - 1) / 2;
        }
        l->heap_due[i] = due;
        l->heap_lag[i] = d;
}

static uint8_t lag_heap_pop(LagBits *l) {
        const uint8_t first = l->heap_lag[0];
        const size_t due = l->heap_due[--l->heap_size];
        const uint8_t d = l->heap_lag[l->heap_size];
        unsigned i = 0;

        for (;;) {
                unsigned c = 2 * i + 1;

                if (c >= l->heap_size)
                        break;
                if (c + 1 < l->heap_size && l->heap_due[c + 1] < l->heap_due[c])
                        c++;
                if (l->heap_due[c] >= due)
                        break;
                l->heap_due[i] = l->heap_due[c];
                l->heap_lag[i] = l->heap_lag[c];
                i = c;
        }
        l->heap_due[i] = due;
        l->heap_lag[i] = d;
        return first;
}

static uint64_t lag_word(const uint64_t *packed, size_t pos) {
        const size_t k = pos / 64, shift = pos % 64;

        return shift ? packed[k] >> shift | packed[k + 1] << (64 - shift) : packed[k];
}

static unsigned lag_popcount(uint64_t x) {
        x -= (x >> 1) & 0x5555555555555555ULL;
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
        return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

/* Lag d's score up to step `to` (exclusive): right guesses counted 64 at
 * a time; a lag reaching before the first bit guesses nothing. */
static void lag_catch_up(LagBits *l, size_t d, size_t to) {
        size_t from = l->upto[d] > d ? l->upto[d] : d;

        for (size_t pos = from; pos < to; pos += 64) {
                uint64_t same = ~(lag_word(l->packed, pos) ^ lag_word(l->packed, pos - d));

                if (to - pos < 64)
                        same &= (UINT64_C(1) << (to - pos)) - 1;
                l->score[d] += lag_popcount(same);
        }
        l->upto[d] = to;
}

/* Steps i in [b, e) for the lags in active[] (in order of d); the
 * record of the leader's predictions, the leader and the top score. */
static void lag_block(LagBits *l, const uint8_t *s, size_t b, size_t e, const uint8_t *active, unsigned count,
                      Record *rec, size_t *winner, int64_t *top) {
        for (size_t i = b; i < e; i++) {
                const uint8_t y = s[i];
                int64_t best = 0;
                size_t best_d = 0;

                record_hit(rec, s[i - *winner] == y);
                /* In order d = 1..128 a lag takes over when it ties or
                 * passes the leader: the last right lag at the top score
                 * wins. Branch-free: right or wrong is a coin toss. */
                for (unsigned a = 0; a < count; a++) {
                        const size_t d = active[a];
                        const int64_t hit = (d <= i) & (s[(i - d) & -(size_t)(d <= i)] == y);
                        const int64_t score = l->score[d] + hit;
                        const bool take = hit & (score >= best);

                        l->score[d] = score;
                        best = take ? score : best;
                        best_d = take ? d : best_d;
                }
                if (best > 0 && best >= *top) {
                        *winner = best_d;
                        *top = best;
                }
        }
}

static int lag_bits(const uint8_t *s, size_t n, double *ret_h) {
        LagBits *l = calloc(1, sizeof(*l));
        uint8_t active[LAG_MAX];
        unsigned count = 0;
        size_t winner = 1;
        int64_t top = 0;   /* score[winner]: no lag scores more */
        Record rec = { 0 };

        if (!l)
                return -ENOMEM;
        l->packed = calloc(n / 64 + 2, sizeof(uint64_t));
        if (!l->packed) {
                free(l);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                l->packed[i / 64] |= (uint64_t)(s[i] & 1U) << (i % 64);
        for (size_t d = 1; d <= LAG_MAX; d++) {
                l->upto[d] = 1;
                active[count++] = (uint8_t)d;
        }
        for (size_t b = 1; b < n; b += LAG_BLOCK) {
                const size_t e = n - b < LAG_BLOCK ? n : b + LAG_BLOCK;
                unsigned kept = 0;

                while (l->heap_size > 0 && l->heap_due[0] < e) {
                        const uint8_t d = lag_heap_pop(l);
                        unsigned a = count++;

                        lag_catch_up(l, d, b);
                        for (; a > 0 && active[a - 1] > d; a--)
                                active[a] = active[a - 1];
                        active[a] = d;
                }
                lag_block(l, s, b, e, active, count, &rec, &winner, &top);
                for (unsigned a = 0; a < count; a++) {
                        const uint8_t d = active[a];
                        const int64_t below = top - l->score[d];

                        l->upto[d] = e;
                        if (below <= (int64_t)LAG_BLOCK + 1)
                                active[kept++] = d;
                        else
                                lag_heap_push(l, e + (size_t)below - 1, d);
                }
                count = kept;
        }
        free(l->packed);
        free(l);
        *ret_h = ea_bound_prediction(rec.correct, n - 1, rec.longest, 2);
        return 0;
}

int ea_predict_lag(const uint8_t *s, size_t n, unsigned k, double *ret_h) {
        int32_t score[LAG_MAX] = { 0 };
        uint64_t correct = 0, run = 0, longest = 0;
        size_t winner = 1;
        uint16_t *wide;

        if (n < 3) {
                *ret_h = NAN;
                return 0;
        }
        if (k == 2)
                return lag_bits(s, n, ret_h);
        /* A 16-bit copy with 128 entries in front: lags reaching before the
         * first sample see 0xffff, which matches no byte, so the first 128
         * samples need no special case. */
        wide = malloc((n + LAG_MAX) * sizeof(*wide));
        if (!wide)
                return -ENOMEM;
        for (size_t j = 0; j < LAG_MAX; j++)
                wide[j] = 0xffff;
        for (size_t i = 0; i < n; i++)
                wide[LAG_MAX + i] = s[i];

        for (size_t i = 1; i < n; i++) {
                if (s[i - winner] == s[i]) {
                        correct++;
                        if (++run > longest)
                                longest = run;
                } else {
                        run = 0;
                }
                lag_step(wide + i, s[i], score, &winner);
        }
        free(wide);
        *ret_h = ea_bound_prediction(correct, n - 1, longest, k);
        return 0;
}
