/* estimate-check.h - the comparison test-estimate and test-restart make
 * between one of NIST's values and ours: NAN must match NAN, and a value
 * must be within EA_CHECK_TOLERANCE relative. Each comparison is printed,
 * so the test's log holds the differences docs/ENTROPY.md quotes. */
#pragma once

#include <math.h>

#define EA_CHECK_TOLERANCE 0.005

static inline void ea_check_value(const char *set, const char *what, const char *estimator, double want, double got) {
        double rel;

        if (isnan(want)) {
                if (!isnan(got))
                        fail_msg("%s %s %s: NIST does not run it, got %f", set, what, estimator, got);
                return;
        }
        if (isnan(got))
                fail_msg("%s %s %s: NIST %f, got NAN", set, what, estimator, want);
        rel = fabs(got - want) / fabs(want);
        print_message("%-9s %-9s %-12s nist %9.6f  ours %9.6f  rel %.2e\n", set, what, estimator, want, got, rel);
        if (rel > EA_CHECK_TOLERANCE)
                fail_msg("%s %s %s: NIST %f, got %f (%.3f %% off)", set, what, estimator, want, got, 100.0 * rel);
}
