/* bound.h - the statistics the §6.3 estimators share: the 99 % upper
 * confidence bound on a proportion, a bisection for the decreasing
 * functions the compression and prediction estimators invert, and the
 * §6.3.7-6.3.10 prediction estimate from a predictor's score.
 * Internal to libestimate. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* z_{1-0.005}: SP 800-90B's 99 % two-sided normal quantile. */
#define EA_Z_ALPHA 2.5758293035489008

/* p + z * sqrt(p(1-p)/(n-1)), capped at 1. */
double ea_bound_upper(double p, double n);

/* The p in [lo, hi] where the decreasing f(p) crosses target; lo if f(lo)
 * is already at or below it. */
double ea_bound_bisect(double (*f)(double p, void *ctx), void *ctx, double lo, double hi, double target);

/* Min-entropy per sample from a predictor that was right `correct` times
 * out of `predictions`, with a longest run of `longest_run` right ones,
 * over an alphabet of k symbols (§6.3.7 steps 5-9: the larger of the
 * global and local bounds on the probability of a right prediction). */
double ea_bound_prediction(uint64_t correct, uint64_t predictions, uint64_t longest_run, unsigned k);
