/* predict.h - the §6.3.7-6.3.10 prediction estimators: each runs a family
 * of predictors over the data, scores them, follows the best one so far,
 * and turns its record (right predictions, longest run of right ones) into
 * a min-entropy bound with ea_bound_prediction(). Symbols are s[i] < k,
 * k <= 256 (k = 2 for bits). Each returns 0 or -ENOMEM and stores the
 * min-entropy per symbol, or NAN where the data are too short for it.
 * Internal to libestimate. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "suffix.h"

/* predict-window.c: most common in four sliding windows; lag 1..128. */
int ea_predict_multi_mcw(const uint8_t *s, size_t n, unsigned k, double *ret_h);
int ea_predict_lag(const uint8_t *s, size_t n, unsigned k, double *ret_h);

/* predict-context.c: Markov models of order 1..16; LZ78Y dictionary. For
 * k > 2, x is the suffix array of s (ea_tuple_estimate() keeps it); for
 * bits it is not used and may be NULL. */
int ea_predict_multi_mmc(const uint8_t *s, size_t n, unsigned k, const EaSuffix *x, double *ret_h);
int ea_predict_lz78y(const uint8_t *s, size_t n, unsigned k, const EaSuffix *x, double *ret_h);

/* predict-symbols.c: the same for k > 2, n >= 4 (MultiMMC) and n >= 19
 * (LZ78Y). */
int ea_mmc_symbols(const uint8_t *s, size_t n, unsigned k, const EaSuffix *x, double *ret_h);
int ea_lz78y_symbols(const uint8_t *s, size_t n, unsigned k, const EaSuffix *x, double *ret_h);

/* A predictor's record: right predictions, the current and the longest
 * run of them (what ea_bound_prediction() takes). */
typedef struct Record {
        uint64_t correct, run, longest;
} Record;

/* Branch-free: on good data right or wrong is a coin toss. */
static inline void record_hit(Record *r, bool hit) {
        r->correct += hit;
        r->run = (r->run + 1) & -(uint64_t)hit;
        r->longest = r->run > r->longest ? r->run : r->longest;
}
