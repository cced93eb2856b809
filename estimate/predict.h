/* predict.h - the §6.3.7-6.3.10 prediction estimators: each runs a family
 * of predictors over the data, scores them, follows the best one so far,
 * and turns its record (right predictions, longest run of right ones) into
 * a min-entropy bound with ea_bound_prediction(). Symbols are s[i] < k,
 * k <= 256 (k = 2 for bits). Each returns 0 or -ENOMEM and stores the
 * min-entropy per symbol, or NAN where the data are too short for it.
 * Internal to libestimate. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* predict-window.c: most common in four sliding windows; lag 1..128. */
int ea_predict_multi_mcw(const uint8_t *s, size_t n, unsigned k, double *ret_h);
int ea_predict_lag(const uint8_t *s, size_t n, unsigned k, double *ret_h);

/* predict-context.c: Markov models of order 1..16; LZ78Y dictionary. */
int ea_predict_multi_mmc(const uint8_t *s, size_t n, unsigned k, double *ret_h);
int ea_predict_lz78y(const uint8_t *s, size_t n, unsigned k, double *ret_h);
