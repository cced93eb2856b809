/* tuple.h - §6.3.5 t-tuple and §6.3.6 longest repeated substring (LRS)
 * estimates, both from one suffix array. Internal to libestimate. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Min-entropy per symbol of s[0..n), n <= INT32_MAX; NAN where the spec's
 * threshold leaves nothing to estimate (no symbol occurs 35 times for
 * t-tuple; the LRS is shorter than the t-tuple cutoff for LRS).
 * 0 or -ENOMEM. */
int ea_tuple_estimate(const uint8_t *s, size_t n, double *ret_t_tuple, double *ret_lrs);
