/* restart.h - the pieces of the SP 800-90B §3.1.4 restart test that
 * ea_restart() (restart.c) is built from, exposed for its unit test.
 * Internal to libestimate. */
#pragma once

#include <stddef.h>

/* The §3.1.4.3 sanity check's cutoff: the smallest x such that, for n
 * samples from the distribution with the largest collision bound at
 * min-entropy h (floor(2^h) values of probability 2^-h and one holding the
 * rest), the most common value occurs at most x times with probability at
 * least 1 - alpha. Computed exactly, where NIST's tool simulates it. */
int ea_restart_cutoff(size_t n, double h, double alpha, unsigned *ret);
