/* counting.h - the §6.3.1-6.3.4 estimators that count: most common value
 * (any alphabet), and the collision, Markov and compression estimators
 * (binary data only: symbols 0 and 1). Each returns min-entropy per symbol,
 * or NAN where there are too few samples for it. Internal to libestimate. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* s[i] < k, k <= 256. */
double ea_count_mcv(const uint8_t *s, size_t n, unsigned k);
double ea_count_collision(const uint8_t *s, size_t n);
double ea_count_markov(const uint8_t *s, size_t n);
/* -ENOMEM or 0; *ret_h is the estimate. */
int ea_count_compression(const uint8_t *s, size_t n, double *ret_h);
