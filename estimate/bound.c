/* bound.c - confidence bounds and the inversions behind the compression and
 * prediction estimators (SP 800-90B §6.3.4, §6.3.7-6.3.10).
 *
 * The local bound solves P(longest run of right predictions < r) = 0.99 for
 * the per-prediction success probability p, with the spec's fixed-point
 * formula for x (iterated to convergence, in long double as NIST's tool
 * does, because the probability is raised to the power N + 1 ~ 10^6 and a
 * double loses the difference between neighbouring p). */
#include "bound.h"

#include <float.h>
#include <math.h>

/* The fixed point converges monotonically; NIST's tool stops at 66 steps
 * and so does this, so both report the same x where it is slow. */
#define RUN_FIXED_POINT_STEPS 66
#define BISECT_STEPS 1100

double ea_bound_upper(double p, double n) {
        double u = p + EA_Z_ALPHA * sqrt(p * (1.0 - p) / (n - 1.0));

        return u < 1.0 ? u : 1.0;
}

double ea_bound_bisect(double (*f)(double p, void *ctx), void *ctx, double lo, double hi, double target) {
        if (f(lo, ctx) <= target)
                return lo;
        for (int i = 0; i < BISECT_STEPS; i++) {
                double mid = lo + (hi - lo) / 2.0;

                if (!(mid > lo && mid < hi))
                        break;
                if (f(mid, ctx) > target)
                        lo = mid;
                else
                        hi = mid;
        }
        return hi;
}

typedef struct RunBound {
        long double r;  /* the run length that must not occur: longest run + 1 */
        long double n;  /* number of predictions */
} RunBound;

/* log P(no run of r right predictions in n), for success probability p. */
static double run_log_probability(double p_, void *ctx) {
        const RunBound *b = ctx;
        long double p = p_, q = 1.0L - p, x = 1.0L;

        for (int i = 0; i < RUN_FIXED_POINT_STEPS; i++) {
                long double next = 1.0L + q * powl(p, b->r) * powl(x, b->r + 1.0L);

                if (!(next - x > LDBL_EPSILON * next)) {
                        x = next;
                        break;
                }
                x = next;
        }
        return (double)(logl(1.0L - p * x) - logl((b->r + 1.0L - b->r * x) * q) - (b->n + 1.0L) * logl(x));
}

double ea_bound_prediction(uint64_t correct, uint64_t predictions, uint64_t longest_run, unsigned k) {
        double n = (double)predictions;
        double p_global = (double)correct / n;
        double p = 1.0 / (double)k;
        RunBound b = { .r = (long double)longest_run + 1.0L, .n = (long double)predictions };

        /* With no right prediction at all, the bound is the p at which that
         * outcome still has probability 1 %. */
        if (correct > 0)
                p_global = ea_bound_upper(p_global, n);
        else
                p_global = 1.0 - pow(0.01, 1.0 / n);
        if (p_global > p)
                p = p_global;

        if (p < 1.0 && run_log_probability(p, &b) > log(0.99)) {
                double p_local = ea_bound_bisect(run_log_probability, &b, p, 1.0, log(0.99));

                if (p_local > p)
                        p = p_local;
        }
        return -log2(p);
}
