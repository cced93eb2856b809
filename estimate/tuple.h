/* tuple.h - §6.3.5 t-tuple and §6.3.6 longest repeated substring (LRS)
 * estimates, both from one suffix array. Internal to libestimate. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "suffix.h"

/* Min-entropy per symbol of s[0..n), n <= INT32_MAX; NAN where the spec's
 * threshold leaves nothing to estimate (no symbol occurs 35 times for
 * t-tuple; the LRS is shorter than the t-tuple cutoff for LRS). With
 * ret_suffix, the suffix array is kept there for the context predictors
 * (the caller frees it with ea_suffix_free()); without, the LCP array is
 * built over it and the peak stays at 8 bytes per symbol.
 * 0, -EINVAL or -ENOMEM. */
int ea_tuple_estimate(const uint8_t *s, size_t n, double *ret_t_tuple, double *ret_lrs, EaSuffix *ret_suffix);
