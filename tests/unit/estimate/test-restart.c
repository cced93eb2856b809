/* test-restart.c - ea_restart() (SP 800-90B §3.1.4) against NIST's
 * `ea_restart` on 1000 x 1000 matrices (restart-expected.h): the sanity
 * check's cutoff and verdict, the estimators on the row and column
 * datasets within 0.5 %, and the final verdict; the exact cutoff against a
 * brute-force sum over the multinomial; the argument checks.
 *     test-restart --write-datasets DIR
 * writes the matrices not already written by test-estimate. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate-check.h"
#include "estimate-datasets.h"
#include "estimate/noniid.h"
#include "estimate/restart.h"
#include "restart-expected.h"

#define N_ROW 1000

static double alpha_restart(void) {
        return 1.0 - exp(log(0.99) / (2.0 * N_ROW));
}

static void test_against_nist(void **state) {
        const RestartExpected *x = *state;
        uint8_t *m = malloc(EA_DATASET_SAMPLES);
        EaRestartReport r;

        assert_non_null(m);
        if (x->set >= 0)
                ea_dataset_generate((EaDataset)x->set, m, EA_DATASET_SAMPLES);
        else
                ea_dataset_restart_stuck(m);
        assert_int_equal(ea_restart(m, N_ROW, N_ROW, 8, x->h_i, &r), 0);
        free(m);

        print_message("%s: cutoff %u (NIST %u), X_max %u (NIST %u)\n", x->name, r.cutoff, x->cutoff,
                      r.max_row_count > r.max_col_count ? r.max_row_count : r.max_col_count, x->x_max);
        assert_int_equal(r.rows, N_ROW);
        assert_int_equal(r.cols, N_ROW);
        assert_true(r.h_i == x->h_i);
        /* NIST's cutoff is a Monte Carlo estimate of the quantile ours
         * computes exactly: two runs of the tool on the same H_I = 3.089954
         * gave 169 and 170 (ours: 169). One count either way is its noise;
         * test_cutoff_exact checks ours against an exact sum. */
        assert_true(r.cutoff + 1 >= x->cutoff && r.cutoff <= x->cutoff + 1);
        assert_int_equal(r.max_row_count > r.max_col_count ? r.max_row_count : r.max_col_count, x->x_max);
        assert_int_equal(r.sanity_passed, x->sanity_passed);
        for (unsigned e = 0; e < _EA_MAX; e++) {
                ea_check_value(x->name, "row", ea_estimator_name(e), x->row[e], r.row.original[e]);
                ea_check_value(x->name, "col", ea_estimator_name(e), x->col[e], r.col.original[e]);
                assert_true(isnan(r.row.bitstring[e]) && isnan(r.col.bitstring[e]));
        }
        ea_check_value(x->name, "", "H_r", x->h_r, r.h_r);
        ea_check_value(x->name, "", "H_c", x->h_c, r.h_c);
        ea_check_value(x->name, "", "min", x->min_entropy, r.min_entropy);
        assert_int_equal(r.passed, x->passed);
}

/* P(max <= x) for n = 1000 draws from up to three values, summed over
 * every outcome: an independent check of the Poisson-conditioning method. */
static double brute_max_cdf(const double p[3], unsigned x) {
        const int n = N_ROW;
        double total = 0.0, lf[N_ROW + 1];

        for (int i = 0; i <= n; i++)
                lf[i] = lgamma(i + 1.0);
        for (int a = 0; a <= n && a <= (int)x; a++)
                for (int b = 0; a + b <= n && b <= (int)x; b++) {
                        int c = n - a - b;
                        double t;

                        if (c > (int)x || (c > 0 && p[2] == 0.0))
                                continue;
                        t = lf[n] - lf[a] - lf[b] - lf[c] + a * log(p[0]) + b * log(p[1]);
                        if (c > 0)
                                t += c * log(p[2]);
                        total += exp(t);
                }
        return total;
}

static void test_cutoff_exact(void **state) {
        /* Min-entropies with at most three values in the worst-case
         * distribution: 2^-h twice and the rest once. */
        static const double hs[] = { 1.0, 1.2, 1.311120, 1.5, 1.584962500721156 };

        for (size_t i = 0; i < sizeof(hs) / sizeof(hs[0]); i++) {
                double q = exp2(-hs[i]), p[3] = { q, q, 1.0 - 2.0 * q };
                unsigned cutoff, lo = N_ROW / 3, hi = N_ROW;

                if (p[2] < 1e-12)
                        p[2] = 0.0;
                while (lo < hi) {
                        unsigned mid = lo + (hi - lo) / 2;

                        if (brute_max_cdf(p, mid) >= 1.0 - alpha_restart())
                                hi = mid;
                        else
                                lo = mid + 1;
                }
                assert_int_equal(ea_restart_cutoff(N_ROW, hs[i], alpha_restart(), &cutoff), 0);
                print_message("h = %f: cutoff %u, brute force %u\n", hs[i], cutoff, lo);
                assert_int_equal(cutoff, lo);
        }
}

static void test_cutoff_edges(void **state) {
        unsigned c, prev = N_ROW + 1;

        /* One value: every row holds it 1000 times. */
        assert_int_equal(ea_restart_cutoff(N_ROW, 0.0, alpha_restart(), &c), 0);
        assert_int_equal(c, N_ROW);
        /* More entropy, fewer repeats allowed. */
        for (double h = 0.5; h <= 8.0; h += 0.5) {
                assert_int_equal(ea_restart_cutoff(N_ROW, h, alpha_restart(), &c), 0);
                assert_true(c < prev);
                assert_true(c >= (unsigned)(N_ROW * exp2(-h)));
                prev = c;
        }
        assert_int_equal(ea_restart_cutoff(N_ROW, -0.1, alpha_restart(), &c), -EINVAL);
        assert_int_equal(ea_restart_cutoff(N_ROW, 8.1, alpha_restart(), &c), -EINVAL);
        assert_int_equal(ea_restart_cutoff(N_ROW, NAN, alpha_restart(), &c), -EINVAL);
        assert_int_equal(ea_restart_cutoff(N_ROW, 1.0, 0.0, &c), -EINVAL);
        assert_int_equal(ea_restart_cutoff(0, 1.0, alpha_restart(), &c), -EINVAL);
}

static void test_bad_arguments(void **state) {
        uint8_t m[64 * 64];
        EaRestartReport r, untouched;

        for (size_t i = 0; i < sizeof(m); i++)
                m[i] = (uint8_t)(i * 13 % 16);
        memset(&r, 0xa5, sizeof(r));
        untouched = r;
        assert_int_equal(ea_restart(NULL, 64, 64, 8, 2.0, &r), -EINVAL);
        assert_int_equal(ea_restart(m, 64, 64, 8, 2.0, NULL), -EINVAL);
        assert_int_equal(ea_restart(m, 32, 128, 8, 2.0, &r), -EINVAL);
        assert_int_equal(ea_restart(m, 64, 64, 0, 2.0, &r), -EINVAL);
        assert_int_equal(ea_restart(m, 64, 64, 9, 2.0, &r), -EINVAL);
        assert_int_equal(ea_restart(m, 64, 64, 8, -1.0, &r), -EINVAL);
        assert_int_equal(ea_restart(m, 64, 64, 4, 4.5, &r), -EINVAL);
        assert_int_equal(ea_restart(m, 64, 64, 8, NAN, &r), -EINVAL);
        /* Values up to 15 do not fit in 3 bits. */
        assert_int_equal(ea_restart(m, 64, 64, 3, 2.0, &r), -EINVAL);
        assert_int_equal(ea_restart(m, 2, 2, 8, 2.0, &r), -EINVAL);
        assert_memory_equal(&r, &untouched, sizeof(r));

        assert_int_equal(ea_restart(m, 64, 64, 4, 2.0, &r), 0);
        assert_int_equal(r.rows, 64);
        assert_int_equal(r.row.samples, 64 * 64);
}

static int write_datasets(const char *dir) {
        char path[4096];
        uint8_t *buf = malloc(EA_DATASET_SAMPLES);
        FILE *f;

        if (!buf)
                return 1;
        ea_dataset_restart_stuck(buf);
        snprintf(path, sizeof(path), "%s/restart-stuck.bin", dir);
        f = fopen(path, "wb");
        if (!f || fwrite(buf, 1, EA_DATASET_SAMPLES, f) != EA_DATASET_SAMPLES || fclose(f) != 0) {
                fprintf(stderr, "test-restart: cannot write %s\n", path);
                free(buf);
                return 1;
        }
        free(buf);
        return 0;
}

#define NIST_TEST(i) cmocka_unit_test_prestate(test_against_nist, (void *)&restart_expected[i])

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bad_arguments),
                cmocka_unit_test(test_cutoff_edges),
                cmocka_unit_test(test_cutoff_exact),
                NIST_TEST(0),
                NIST_TEST(1),
                NIST_TEST(2),
        };

        _Static_assert(sizeof(restart_expected) / sizeof(restart_expected[0]) == 3, "one NIST_TEST per matrix");
        if (argc == 3 && strcmp(argv[1], "--write-datasets") == 0)
                return write_datasets(argv[2]);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
