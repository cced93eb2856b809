/* predict-window.c - SP 800-90B §6.3.7 MultiMCW and §6.3.8 lag prediction.
 *
 * MultiMCW: four predictors guess the most common value of the last 63,
 * 255, 1023 and 4095 samples (ties: the most recently seen value); the
 * predictor scored best so far (ties: the later one) makes the prediction.
 * Lag: 128 predictors guess the value d samples back, d = 1..128.
 * Both keep their state incremental, O(1) or O(128) per sample, so the
 * 8,000,000-bit bitstring pass stays cheap.
 * Flow: noniid.c hands symbols in; estimates come back. */
#include "predict.h"

#include <errno.h>
#include <math.h>
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

int ea_predict_lag(const uint8_t *s, size_t n, unsigned k, double *ret_h) {
        int32_t score[LAG_MAX] = { 0 };
        uint64_t correct = 0, run = 0, longest = 0;
        size_t winner = 1;
        uint16_t *wide;

        if (n < 3) {
                *ret_h = NAN;
                return 0;
        }
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
