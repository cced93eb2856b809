/* test-estimate.c - libestimate's SP 800-90B §6.3 estimators against the
 * values NIST's reference tool prints for the same data (estimate-expected.h):
 * every estimator within 0.5 % of NIST's on each data set, NAN exactly where
 * the tool skips it, and the argument checks.
 * The synthetic data sets come from estimate-datasets.h;
 *     test-estimate --write-datasets DIR
 * writes them to DIR/<name>.bin, the files NIST's tool was run on. */
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
#include "estimate-expected.h"
#include "estimate/noniid.h"


static uint8_t *load_file(const char *name, size_t *ret_n) {
        char path[4096];
        uint8_t *buf = malloc(2 * EA_DATASET_SAMPLES);
        FILE *f;
        size_t n;

        assert_non_null(buf);
        snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, name);
        f = fopen(path, "rb");
        assert_non_null(f);
        n = fread(buf, 1, 2 * EA_DATASET_SAMPLES, f);
        fclose(f);
        assert_int_equal(n, EA_DATASET_SAMPLES);
        *ret_n = n;
        return buf;
}

static uint8_t *load_set(const EaExpected *x, size_t *ret_n) {
        uint8_t *buf;

        if (x->file)
                return load_file(x->file, ret_n);
        buf = malloc(EA_DATASET_SAMPLES);
        assert_non_null(buf);
        ea_dataset_generate((EaDataset)x->set, buf, EA_DATASET_SAMPLES);
        *ret_n = EA_DATASET_SAMPLES;
        return buf;
}

static void test_against_nist(void **state) {
        const EaExpected *x = *state;
        EaReport r;
        size_t n;
        uint8_t *buf = load_set(x, &n);

        assert_int_equal(ea_non_iid(buf, n, 8, &r), 0);
        free(buf);
        assert_int_equal(r.samples, n);
        assert_int_equal(r.bits, 8);
        for (unsigned e = 0; e < _EA_MAX; e++) {
                ea_check_value(x->name, "original", ea_estimator_name(e), x->original[e], r.original[e]);
                ea_check_value(x->name, "bitstring", ea_estimator_name(e), x->bitstring[e], r.bitstring[e]);
        }
        ea_check_value(x->name, "result", "H_original", x->h_original, r.h_original);
        ea_check_value(x->name, "result", "H_bitstring", x->h_bitstring, r.h_bitstring);
        ea_check_value(x->name, "result", "min", x->min_entropy, r.min_entropy);
}

static void test_names(void **state) {
        static const char *const want[_EA_MAX] = {
                "mcv", "collision", "markov", "compression", "t_tuple",
                "lrs", "multi_mcw", "lag", "multi_mmc", "lz78y",
        };

        for (unsigned e = 0; e < _EA_MAX; e++)
                assert_string_equal(ea_estimator_name(e), want[e]);
        assert_null(ea_estimator_name(_EA_MAX));
        assert_null(ea_estimator_name((EaEstimator)-1));
}

static void test_bad_arguments(void **state) {
        uint8_t buf[4096];
        EaReport r, untouched;

        for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (uint8_t)(i * 7 % 4);
        memset(&r, 0xa5, sizeof(r));
        untouched = r;

        assert_int_equal(ea_non_iid(NULL, sizeof(buf), 8, &r), -EINVAL);
        assert_int_equal(ea_non_iid(buf, sizeof(buf), 8, NULL), -EINVAL);
        assert_int_equal(ea_non_iid(buf, sizeof(buf), 0, &r), -EINVAL);
        assert_int_equal(ea_non_iid(buf, sizeof(buf), 9, &r), -EINVAL);
        assert_int_equal(ea_non_iid(buf, EA_SAMPLES_MIN - 1, 8, &r), -EINVAL);
        assert_int_equal(ea_non_iid(buf, EA_SAMPLES_MAX + 1, 8, &r), -EINVAL);
        /* Values 0..3 do not fit in one bit: NIST's tool refuses the file. */
        assert_int_equal(ea_non_iid(buf, sizeof(buf), 1, &r), -EINVAL);
        assert_memory_equal(&r, &untouched, sizeof(r));

        assert_int_equal(ea_non_iid(buf, sizeof(buf), 2, &r), 0);
        assert_int_equal(r.bits, 2);
        assert_true(r.min_entropy >= 0.0 && r.min_entropy <= 2.0);
}

static void test_constant_has_no_entropy(void **state) {
        uint8_t buf[5000];
        EaReport r;

        memset(buf, 0x2a, sizeof(buf));
        assert_int_equal(ea_non_iid(buf, sizeof(buf), 8, &r), 0);
        assert_true(r.min_entropy == 0.0);
        assert_true(r.h_original == 0.0);
        for (unsigned e = 0; e < _EA_MAX; e++) {
                assert_true(isnan(r.original[e]));
                assert_true(isnan(r.bitstring[e]));
        }
}

/* Short inputs run what they can: every value is NAN or a min-entropy in
 * range, never garbage from a too-short buffer (ASan watches the reads). */
static void test_short_inputs(void **state) {
        static const size_t lengths[] = { EA_SAMPLES_MIN, 17, 100, 4095, 4096, 6006, 6007, 20000 };
        uint8_t *buf = malloc(20000);
        EaRng rng;

        assert_non_null(buf);
        ea_rng_seed(&rng, 42);
        for (size_t i = 0; i < 20000; i++)
                buf[i] = (uint8_t)(ea_rng_next(&rng) >> 60);
        for (size_t l = 0; l < sizeof(lengths) / sizeof(lengths[0]); l++) {
                EaReport r;

                assert_int_equal(ea_non_iid(buf, lengths[l], 4, &r), 0);
                for (unsigned e = 0; e < _EA_MAX; e++) {
                        assert_true(isnan(r.original[e]) || (r.original[e] >= 0.0 && r.original[e] <= 4.0));
                        assert_true(isnan(r.bitstring[e]) || (r.bitstring[e] >= 0.0 && r.bitstring[e] <= 1.0));
                }
                assert_true(r.min_entropy >= 0.0 && r.min_entropy <= 4.0);
        }
        free(buf);
}

typedef struct Seen {
        unsigned calls, last_done, total, stop_at;
        bool monotonic;
} Seen;

static int count_steps(void *userdata, unsigned done, unsigned total) {
        Seen *s = userdata;

        s->monotonic = s->monotonic && done == s->last_done + 1 && (s->calls == 0 || total == s->total);
        s->calls++;
        s->last_done = done;
        s->total = total;
        return s->stop_at && done == s->stop_at ? -ECANCELED : 0;
}

/* Progress: one call per step, counting up to its total, the same report
 * as without it; a refusal ends the assessment with that value and leaves
 * the report untouched. Binary samples take one pass of 7 steps, others
 * 6 on the samples and 7 on the bitstring. */
static void test_progress(void **state) {
        uint8_t buf[20000];
        EaReport plain, r, untouched;
        EaRestartReport rr;
        Seen seen = { .monotonic = true };
        EaRng rng;

        ea_rng_seed(&rng, 7);
        for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (uint8_t)(ea_rng_next(&rng) >> 60);
        assert_int_equal(ea_non_iid(buf, sizeof(buf), 4, &plain), 0);
        assert_int_equal(ea_non_iid_progress(buf, sizeof(buf), 4, count_steps, &seen, &r), 0);
        assert_true(seen.monotonic);
        assert_int_equal(seen.total, 13);
        assert_int_equal(seen.calls, 13);
        assert_memory_equal(&plain, &r, sizeof(r));

        for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] &= 1;
        seen = (Seen){ .monotonic = true };
        assert_int_equal(ea_non_iid_progress(buf, sizeof(buf), 1, count_steps, &seen, &r), 0);
        assert_int_equal(seen.calls, 7);
        assert_int_equal(seen.total, 7);

        memset(&r, 0x5a, sizeof(r));
        untouched = r;
        seen = (Seen){ .monotonic = true, .stop_at = 3 };
        assert_int_equal(ea_non_iid_progress(buf, sizeof(buf), 1, count_steps, &seen, &r), -ECANCELED);
        assert_int_equal(seen.calls, 3);
        assert_memory_equal(&r, &untouched, sizeof(r));

        /* The restart check: rows then columns, 6 steps each (ea_restart
         * makes no bitstring pass). */
        for (size_t i = 0; i < 100 * 100; i++)
                buf[i] = (uint8_t)(ea_rng_next(&rng) >> 60);
        seen = (Seen){ .monotonic = true };
        assert_int_equal(ea_restart_progress(buf, 100, 100, 4, 1.0, count_steps, &seen, &rr), 0);
        assert_true(seen.monotonic);
        assert_int_equal(seen.calls, 12);
        seen = (Seen){ .monotonic = true, .stop_at = 8 };
        assert_int_equal(ea_restart_progress(buf, 100, 100, 4, 1.0, count_steps, &seen, &rr), -ECANCELED);
}

static int write_datasets(const char *dir) {
        uint8_t *buf = malloc(EA_DATASET_SAMPLES);

        if (!buf)
                return 1;
        for (int s = 0; s < _EA_SET_MAX; s++) {
                char path[4096];
                FILE *f;

                ea_dataset_generate((EaDataset)s, buf, EA_DATASET_SAMPLES);
                snprintf(path, sizeof(path), "%s/%s.bin", dir, ea_dataset_names[s]);
                f = fopen(path, "wb");
                if (!f || fwrite(buf, 1, EA_DATASET_SAMPLES, f) != EA_DATASET_SAMPLES || fclose(f) != 0) {
                        fprintf(stderr, "test-estimate: cannot write %s\n", path);
                        free(buf);
                        return 1;
                }
        }
        free(buf);
        return 0;
}

#define NIST_TEST(i) cmocka_unit_test_prestate(test_against_nist, (void *)&ea_expected[i])

int main(int argc, char **argv) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_bad_arguments),
                cmocka_unit_test(test_progress),
                cmocka_unit_test(test_constant_has_no_entropy),
                cmocka_unit_test(test_short_inputs),
                NIST_TEST(0),
                NIST_TEST(1),
                NIST_TEST(2),
                NIST_TEST(3),
                NIST_TEST(4),
                NIST_TEST(5),
        };

        _Static_assert(sizeof(ea_expected) / sizeof(ea_expected[0]) == 6, "one NIST_TEST per data set");
        if (argc == 3 && strcmp(argv[1], "--write-datasets") == 0)
                return write_datasets(argv[2]);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
