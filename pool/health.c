/* health.c - SP 800-90B §4.4 continuous health tests (RCT and APT).
 *
 * Cutoffs come from the credit H alone, so an over-credited source fails
 * instead of being believed: the RCT cutoff from the run length whose
 * probability is alpha, the APT cutoff from the exact binomial upper tail
 * (summed in log space, no normal approximation). Both the intermittent
 * (2^-30) and the permanent (2^-60) cutoffs are checked against the same
 * counters, which keep counting through intermittent failures so that a
 * stuck source climbs on to its permanent cutoff. Once permanent, the state
 * is frozen and the verdict repeats. Plain data, no secrets.
 * Flow: source -> [health] -> conditioner. */
#include "health.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

/* Bounds keep the tail sum's loop and its log-space terms meaningful:
 * 2^-1000 is still a normal double. */
#define CRITBINOM_N_MAX (1U << 20)
#define ALPHA_LOG2_MIN (-1000)

static double log_add(double a, double b) {
        /* log(e^a + e^b) without underflowing terms far below DBL_MIN. */
        if (a == -INFINITY)
                return b;
        if (b == -INFINITY)
                return a;
        if (a < b) {
                double x = a;
                a = b;
                b = x;
        }
        return a + log1p(exp(b - a));
}

static double log_factorial(unsigned n) {
        int sign;

        /* lgamma() writes the global signgam; the _r form is safe when
         * several collector threads initialise at once. */
        return lgamma_r((double) n + 1.0, &sign);
}

int health_critbinom(unsigned n, double p, int alpha_log2, unsigned *ret_k) {
        if (n == 0 || n > CRITBINOM_N_MAX || !(p > 0.0 && p < 1.0) ||
            alpha_log2 >= 0 || alpha_log2 < ALPHA_LOG2_MIN || !ret_k)
                return -EINVAL;

        double log_alpha = alpha_log2 * M_LN2;
        double log_p = log(p), log_q = log1p(-p);
        double log_n = log_factorial(n);
        double log_tail = -INFINITY;

        /* Subtracting the lower CDF from 1 would lose everything below
         * 2^-53. Instead sum the upper tail P[X >= j] from j = n down:
         * terms grow towards the mode, so the smallest are added first.
         * The answer is the largest j whose tail P[X >= j] exceeds alpha:
         * then P[X > j] <= alpha < P[X > j - 1]. */
        for (unsigned j = n;; j--) {
                double log_term = log_n - log_factorial(j) - log_factorial(n - j) +
                                  j * log_p + (n - j) * log_q;

                log_tail = log_add(log_tail, log_term);
                if (log_tail > log_alpha) {
                        *ret_k = j;
                        return 0;
                }
                if (j == 0)
                        break;
        }

        /* P[X >= 0] = 1 > alpha, so the loop always returns. */
        abort();
}

static int rct_cutoff(double h_bits, int alpha_log2, unsigned *ret) {
        double x = -alpha_log2 / h_bits;
        double r = nearbyint(x);
        double c;

        /* 30 / 0.3 is 100 in exact arithmetic but not in binary floating
         * point; a quotient that is an integer up to rounding must not gain
         * a spurious +1 from ceil(). */
        if (fabs(x - r) <= 1e-9 * r)
                c = r;
        else
                c = ceil(x);
        if (c >= (double) UINT_MAX)
                return -ERANGE;

        *ret = 1U + (unsigned) c;
        return 0;
}

int health_cutoffs(double h_bits, int alpha_log2, unsigned window, HealthCutoffs *ret) {
        HealthCutoffs c = { .apt_window = window };
        unsigned k;
        int r;

        if (!(h_bits > 0.0 && h_bits <= 8.0) || window < 2 || !ret ||
            alpha_log2 >= 0 || alpha_log2 < ALPHA_LOG2_MIN)
                return -EINVAL;

        r = rct_cutoff(h_bits, alpha_log2, &c.rct);
        if (r < 0)
                return r;

        /* A cutoff above the window (tiny credits) can never trip; the RCT
         * still guards such a source. */
        r = health_critbinom(window, exp2(-h_bits), alpha_log2, &k);
        if (r < 0)
                return r;
        c.apt = 1U + k;

        *ret = c;
        return 0;
}

int health_set_credit(HealthTest *t, uint32_t credit_mbits) {
        HealthCutoffs intermittent, permanent;
        double h = credit_mbits / 1000.0;
        int r;

        if (!t || credit_mbits == 0 || credit_mbits > CREDIT_MBITS_MAX)
                return -EINVAL;
        r = health_cutoffs(h, HEALTH_ALPHA_LOG2_INTERMITTENT, HEALTH_APT_WINDOW, &intermittent);
        if (r < 0)
                return r;
        r = health_cutoffs(h, HEALTH_ALPHA_LOG2_PERMANENT, HEALTH_APT_WINDOW, &permanent);
        if (r < 0)
                return r;
        t->intermittent = intermittent;
        t->permanent = permanent;
        return 0;
}

int health_init(HealthTest *t, uint32_t credit_mbits) {
        if (!t)
                return -EINVAL;
        *t = (HealthTest) {
                .startup_left = HEALTH_STARTUP_SAMPLES,
                /* Nothing fed, nothing settled: health_settled() is 0. */
                .rct_start = 1,
                .apt_start = 1,
        };
        return health_set_credit(t, credit_mbits);
}

HealthVerdict health_feed(HealthTest *t, uint8_t sample) {
        bool apt_hit = false;

        /* The counters froze on the failing sample; RCT wins ties below, so
         * a run still at its permanent cutoff means the RCT was the one. */
        if (t->failed_permanently)
                return t->rct_run >= t->permanent.rct ? HEALTH_PERMANENT_RCT : HEALTH_PERMANENT_APT;

        t->samples++;

        if (t->rct_run > 0 && sample == t->rct_value)
                t->rct_run++;
        else {
                t->rct_value = sample;
                t->rct_run = 1;
                t->rct_start = t->samples;
        }

        if (t->apt_index == 0) {
                t->apt_value = sample;
                t->apt_count = 1;
                t->apt_start = t->samples;
        } else if (sample == t->apt_value) {
                t->apt_count++;
                apt_hit = true;
        }
        if (++t->apt_index >= t->intermittent.apt_window)
                t->apt_index = 0;

        /* Count failure events, not failing samples: a run or a window
         * crosses its intermittent cutoff once. */
        if (t->rct_run == t->intermittent.rct)
                t->fail_rct++;
        if (apt_hit && t->apt_count == t->intermittent.apt)
                t->fail_apt++;

        if (t->rct_run >= t->permanent.rct) {
                t->failed_permanently = true;
                return HEALTH_PERMANENT_RCT;
        }
        if (t->apt_count >= t->permanent.apt) {
                t->failed_permanently = true;
                return HEALTH_PERMANENT_APT;
        }

        /* The APT verdict stays failed for the rest of its window, as in
         * SP 800-90B's loop: the whole window is suspect once it crossed. */
        if (t->rct_run >= t->intermittent.rct || t->apt_count >= t->intermittent.apt) {
                t->startup_left = HEALTH_STARTUP_SAMPLES;
                return t->rct_run >= t->intermittent.rct ? HEALTH_FAIL_RCT : HEALTH_FAIL_APT;
        }

        if (t->startup_left > 0) {
                t->startup_left--;
                return HEALTH_STARTUP;
        }
        return HEALTH_OK;
}

const char *health_verdict_to_string(HealthVerdict v) {
        static const char *const table[] = {
                [HEALTH_OK] = "ok",
                [HEALTH_STARTUP] = "startup",
                [HEALTH_FAIL_RCT] = "rct-failure",
                [HEALTH_FAIL_APT] = "apt-failure",
                [HEALTH_PERMANENT_RCT] = "rct-permanent",
                [HEALTH_PERMANENT_APT] = "apt-permanent",
        };

        if ((unsigned) v >= sizeof(table) / sizeof(table[0]))
                return NULL;
        return table[v];
}
