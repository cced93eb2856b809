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

#include <math.h>
#include <string.h>

#include "bound.h"

#define MCW_WINDOWS 4
static const size_t mcw_window[MCW_WINDOWS] = { 63, 255, 1023, 4095 };

typedef struct MostCommon {
        uint32_t count[256];
        size_t last[256];    /* index of the latest occurrence */
        unsigned value;      /* the window's most common value */
} MostCommon;

static void mcw_add(MostCommon *w, uint8_t v, size_t i) {
        w->count[v]++;
        w->last[v] = i;
        if (w->count[v] >= w->count[w->value])
                w->value = v;
}

/* The window moves on by one: `out` leaves, s[i] = `in` arrives. */
static void mcw_slide(MostCommon *w, uint8_t out, uint8_t in, size_t i, unsigned k) {
        w->count[out]--;
        if (out != w->value) {
                mcw_add(w, in, i);
                return;
        }
        w->count[in]++;
        w->last[in] = i;
        /* The most common value lost one: find the new one, the latest
         * seen among those tied for the top count. */
        for (unsigned v = 0; v < k; v++) {
                if (w->count[v] > w->count[w->value] ||
                    (w->count[v] == w->count[w->value] && w->count[v] > 0 && w->last[v] > w->last[w->value]))
                        w->value = v;
        }
}

double ea_predict_multi_mcw(const uint8_t *s, size_t n, unsigned k) {
        static const size_t first = 63;
        MostCommon w[MCW_WINDOWS];
        uint64_t score[MCW_WINDOWS] = { 0 }, correct = 0, run = 0, longest = 0;
        unsigned winner = 0;

        if (n <= mcw_window[MCW_WINDOWS - 1])
                return NAN;
        memset(w, 0, sizeof(w));
        for (unsigned j = 0; j < MCW_WINDOWS; j++)
                for (size_t i = 0; i < mcw_window[j]; i++)
                        mcw_add(&w[j], s[i], i);

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
                                mcw_slide(&w[j], s[i - mcw_window[j]], s[i], i, k);
        }
        return ea_bound_prediction(correct, n - first, longest, k);
}

#define LAG_MAX 128

double ea_predict_lag(const uint8_t *s, size_t n, unsigned k) {
        uint32_t score[LAG_MAX + 1] = { 0 };
        uint64_t correct = 0, run = 0, longest = 0;
        size_t winner = 1;

        if (n < 3)
                return NAN;
        for (size_t i = 1; i < n; i++) {
                const uint8_t cur = s[i];
                const size_t lags = i < LAG_MAX ? i : LAG_MAX;
                uint32_t best = 0, high = score[winner];

                if (s[i - winner] == cur) {
                        correct++;
                        if (++run > longest)
                                longest = run;
                } else {
                        run = 0;
                }
                /* Branch-free scoring: on bits half the lags match. */
                for (size_t d = 1; d <= lags; d++) {
                        uint32_t hit = s[i - d] == cur;

                        score[d] += hit;
                        best = (hit && score[d] > best) ? score[d] : best;
                }
                /* Scored in order d = 1..128, a lag takes over when it ties
                 * or passes the leader: the last lag at the top score wins. */
                if (best >= high)
                        for (size_t d = lags; d >= 1; d--)
                                if (score[d] == best && s[i - d] == cur) {
                                        winner = d;
                                        break;
                                }
        }
        return ea_bound_prediction(correct, n - 1, longest, k);
}
