/* test-health.c - cutoffs against the SP 800-90B reference table, and the
 * RCT/APT/startup behaviour on stuck, biased and good data.
 * Deterministic data comes from randombytes_buf_deterministic() with fixed
 * seeds; one run uses getrandom() as a cross-check on real randomness. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "pool/health.h"

#define GOOD_SAMPLES 10000000U

typedef struct Reference {
        double h;
        unsigned rct;
        unsigned apt;
} Reference;

/* DESIGN.md §4, alpha = 2^-30, W = 512. */
static const Reference reference[] = {
        { 0.5, 61, 422 },
        { 1.0, 31, 325 },
        { 2.0, 16, 190 },
        { 4.0, 9, 71 },
        { 8.0, 5, 16 },
};

static void fill_deterministic(uint8_t *buf, size_t n, uint8_t seed_byte) {
        uint8_t seed[randombytes_SEEDBYTES];

        memset(seed, seed_byte, sizeof(seed));
        randombytes_buf_deterministic(buf, n, seed);
}

static void test_cutoffs_reference(void **state) {
        for (size_t i = 0; i < sizeof(reference) / sizeof(reference[0]); i++) {
                const Reference *ref = &reference[i];
                HealthCutoffs c;
                unsigned k;

                assert_int_equal(health_cutoffs(ref->h, -30, 512, &c), 0);
                assert_int_equal(c.rct, ref->rct);
                assert_int_equal(c.apt, ref->apt);
                assert_int_equal(c.apt_window, 512);

                assert_int_equal(health_critbinom(512, exp2(-ref->h), -30, &k), 0);
                assert_int_equal(k + 1, ref->apt);
        }
}

static void test_cutoffs_from_credit(void **state) {
        /* health_init() must arrive at the same numbers from millibits,
         * including credits like 0.3 whose quotient 30 / 0.3 is not exact
         * in binary floating point. */
        static const struct {
                uint32_t mbits;
                unsigned rct, apt;
        } cases[] = {
                { 500, 61, 422 }, { 1000, 31, 325 }, { 2000, 16, 190 },
                { 4000, 9, 71 }, { 8000, 5, 16 }, { 300, 101, 466 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                HealthTest t;

                assert_int_equal(health_init(&t, cases[i].mbits), 0);
                assert_int_equal(t.intermittent.rct, cases[i].rct);
                assert_int_equal(t.intermittent.apt, cases[i].apt);
                assert_int_equal(t.intermittent.apt_window, HEALTH_APT_WINDOW);
        }
}

static void test_critbinom_small(void **state) {
        unsigned k = 12345;

        /* Binomial(10, 1/2): P[X > 8] = 11/1024 <= 2^-5 < P[X > 7] = 56/1024. */
        assert_int_equal(health_critbinom(10, 0.5, -5, &k), 0);
        assert_int_equal(k, 8);
        /* Binomial(10, 1/2): P[X > 9] = 1/1024 > 2^-11, so k = 10. */
        assert_int_equal(health_critbinom(10, 0.5, -11, &k), 0);
        assert_int_equal(k, 10);

        k = 12345;
        assert_int_equal(health_critbinom(0, 0.5, -30, &k), -EINVAL);
        assert_int_equal(health_critbinom(512, 0.0, -30, &k), -EINVAL);
        assert_int_equal(health_critbinom(512, 1.0, -30, &k), -EINVAL);
        assert_int_equal(health_critbinom(512, 0.5, 0, &k), -EINVAL);
        assert_int_equal(k, 12345);
}

static void test_permanent_cutoffs(void **state) {
        /* alpha = 2^-60, W = 512; the APT values were checked against an
         * exact 60-digit decimal sum of the binomial tail. */
        static const struct {
                double h;
                unsigned rct, apt;
        } cases[] = {
                { 0.25, 241, 494 }, { 0.3, 201, 485 }, { 0.5, 121, 447 }, { 1, 61, 355 },
                { 2, 31, 220 }, { 4, 16, 91 }, { 8, 9, 25 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                HealthCutoffs intermittent, permanent;

                assert_int_equal(health_cutoffs(cases[i].h, HEALTH_ALPHA_LOG2_INTERMITTENT, 512, &intermittent), 0);
                assert_int_equal(health_cutoffs(cases[i].h, HEALTH_ALPHA_LOG2_PERMANENT, 512, &permanent), 0);
                assert_int_equal(permanent.rct, cases[i].rct);
                assert_int_equal(permanent.apt, cases[i].apt);
                assert_true(permanent.rct > intermittent.rct);
                assert_true(permanent.apt > intermittent.apt);
        }
}

static void test_stuck_source(void **state) {
        static const uint32_t credits[] = { 300, 1000, 8000 };

        for (size_t i = 0; i < sizeof(credits) / sizeof(credits[0]); i++) {
                HealthTest t;
                unsigned n;

                assert_int_equal(health_init(&t, credits[i]), 0);
                for (n = 1; n < t.intermittent.rct; n++)
                        assert_int_equal(health_feed(&t, 0x42), HEALTH_STARTUP);
                for (; n < t.permanent.rct; n++)
                        assert_int_equal(health_feed(&t, 0x42), HEALTH_FAIL_RCT);
                assert_int_equal(health_feed(&t, 0x42), HEALTH_PERMANENT_RCT);
                /* One failing run is one intermittent failure event. */
                assert_int_equal(t.fail_rct, 1);

                /* Disabled for good, whatever comes next. */
                for (unsigned j = 0; j < 2000; j++)
                        assert_int_equal(health_feed(&t, (uint8_t) j), HEALTH_PERMANENT_RCT);
        }
}

static void test_biased_source(void **state) {
        /* Credited 2 bits, but one value has probability 2^-0.5: true
         * min-entropy 0.5 bit, a quarter of the credit. */
        const uint32_t threshold = (uint32_t) (exp2(-0.5) * 4294967296.0);
        uint32_t draws[4 * HEALTH_APT_WINDOW * 2];
        HealthVerdict v = HEALTH_OK;
        HealthTest t;
        unsigned n;

        fill_deterministic((uint8_t *) draws, sizeof(draws), 0x5a);
        assert_int_equal(health_init(&t, 2000), 0);

        for (n = 0; n < 4 * HEALTH_APT_WINDOW; n++) {
                uint8_t other = (uint8_t) draws[2 * n + 1];

                if (other == 0x5a)
                        other ^= 1;
                v = health_feed(&t, draws[2 * n] < threshold ? 0x5a : other);
                if (v == HEALTH_FAIL_APT || v == HEALTH_PERMANENT_APT)
                        break;
        }
        assert_true(n < 4 * HEALTH_APT_WINDOW);
        assert_true(t.fail_apt >= 1);
}

static void test_bias_without_runs(void **state) {
        /* Half the samples are one value but never two in a row: the RCT
         * cannot see it, the APT must, and disable the source. */
        uint8_t others[HEALTH_APT_WINDOW];
        HealthVerdict v = HEALTH_OK;
        HealthTest t;
        unsigned n;

        fill_deterministic(others, sizeof(others), 0x17);
        assert_int_equal(health_init(&t, 2000), 0);

        for (n = 0; n < HEALTH_APT_WINDOW && !health_verdict_permanent(v); n++)
                v = health_feed(&t, n % 2 == 0 ? 0x00 : (uint8_t) (others[n] | 1));

        assert_int_equal(v, HEALTH_PERMANENT_APT);
        /* 0x00 at every even sample: its count reaches the permanent
         * cutoff 220 at sample 2 x 220 - 1. */
        assert_int_equal(n, 2 * t.permanent.apt - 1);
        assert_int_equal(t.fail_apt, 1);
        assert_int_equal(t.fail_rct, 0);
        assert_int_equal(health_feed(&t, 0x33), HEALTH_PERMANENT_APT);
}

static void run_good(const uint8_t *data, size_t n, uint32_t credit_mbits) {
        HealthVerdict v = HEALTH_STARTUP;
        size_t failures = 0;
        HealthTest t;

        assert_int_equal(health_init(&t, credit_mbits), 0);
        for (size_t i = 0; i < n; i++) {
                v = health_feed(&t, data[i]);
                if (health_verdict_failed(v))
                        failures++;
        }
        assert_int_equal(failures, 0);
        assert_int_equal(t.fail_rct, 0);
        assert_int_equal(t.fail_apt, 0);
        assert_int_equal(v, HEALTH_OK);
        assert_int_equal(t.samples, n);
}

static void test_uniform_no_failures(void **state) {
        uint8_t *data = malloc(GOOD_SAMPLES);

        assert_non_null(data);
        fill_deterministic(data, GOOD_SAMPLES, 0x01);
        run_good(data, GOOD_SAMPLES, 300);
        run_good(data, GOOD_SAMPLES, 8000);
        free(data);
}

static void test_getrandom_no_failures(void **state) {
        uint8_t *data = malloc(GOOD_SAMPLES);
        size_t got = 0;

        assert_non_null(data);
        while (got < GOOD_SAMPLES) {
                ssize_t r = getrandom(data + got, GOOD_SAMPLES - got, 0);

                if (r < 0 && errno == EINTR)
                        continue;
                assert_true(r > 0);
                got += (size_t) r;
        }
        run_good(data, GOOD_SAMPLES, 300);
        free(data);
}

static void test_startup(void **state) {
        HealthTest t;
        unsigned n;

        /* A counter never repeats a value within 256 samples: it passes
         * every test at full credit, so only the startup gate speaks. */
        assert_int_equal(health_init(&t, 8000), 0);
        for (n = 0; n < HEALTH_STARTUP_SAMPLES; n++)
                assert_int_equal(health_feed(&t, (uint8_t) n), HEALTH_STARTUP);
        assert_int_equal(health_feed(&t, (uint8_t) n++), HEALTH_OK);

        /* A failure after startup sends the source back through it. */
        for (unsigned i = 1; i < t.intermittent.rct; i++)
                assert_int_equal(health_feed(&t, 0xee), HEALTH_OK);
        assert_int_equal(health_feed(&t, 0xee), HEALTH_FAIL_RCT);
        for (n = 0; n < HEALTH_STARTUP_SAMPLES; n++)
                assert_int_equal(health_feed(&t, (uint8_t) n), HEALTH_STARTUP);
        assert_int_equal(health_feed(&t, (uint8_t) n), HEALTH_OK);
}

static void test_startup_restarts_on_failure(void **state) {
        HealthTest t;
        unsigned n;

        assert_int_equal(health_init(&t, 8000), 0);
        for (n = 0; n < 1000; n++)
                assert_int_equal(health_feed(&t, (uint8_t) n), HEALTH_STARTUP);
        for (unsigned i = 1; i < t.intermittent.rct; i++)
                assert_int_equal(health_feed(&t, 0xee), HEALTH_STARTUP);
        assert_int_equal(health_feed(&t, 0xee), HEALTH_FAIL_RCT);

        /* The 1000 passing samples before the failure count for nothing. */
        for (n = 0; n < HEALTH_STARTUP_SAMPLES; n++)
                assert_int_equal(health_feed(&t, (uint8_t) n), HEALTH_STARTUP);
        assert_int_equal(health_feed(&t, (uint8_t) n), HEALTH_OK);
}

/* Which samples no later verdict can condemn: none before the first; a
 * complete window settles at once; an open run holds back its first sample
 * and everything after it. A counter (8 bits per sample, no repeats) is the
 * clean input; runs are spliced in by hand. */
static void test_settled(void **state) {
        HealthTest t;
        uint64_t n = 0;

        assert_int_equal(health_init(&t, 8000), 0);
        assert_int_equal(health_settled(&t), 0);
        for (; n < HEALTH_APT_WINDOW - 1; n++)
                health_feed(&t, (uint8_t) n);
        /* 511 samples: the first window is open. */
        assert_int_equal(health_settled(&t), 0);
        health_feed(&t, (uint8_t) n++);
        /* 512: complete, but its last sample starts a run that may go on. */
        assert_int_equal(health_settled(&t), HEALTH_APT_WINDOW - 1);
        health_feed(&t, (uint8_t) n++);
        assert_int_equal(health_settled(&t), HEALTH_APT_WINDOW);
        for (; n < 2 * HEALTH_APT_WINDOW - 2; n++)
                health_feed(&t, (uint8_t) n);
        assert_int_equal(health_settled(&t), HEALTH_APT_WINDOW);

        /* A run of 3 (under the cutoff of 5) across the next boundary: the
         * window closes, but its last two samples wait for the run to end. */
        health_feed(&t, 0xa5);
        health_feed(&t, 0xa5);
        assert_int_equal(t.samples, 2 * HEALTH_APT_WINDOW);
        assert_int_equal(health_settled(&t), 2 * HEALTH_APT_WINDOW - 2);
        health_feed(&t, 0xa5);
        assert_int_equal(health_settled(&t), 2 * HEALTH_APT_WINDOW - 2);
        health_feed(&t, 0x5a);
        assert_int_equal(health_settled(&t), 2 * HEALTH_APT_WINDOW);
}

static void test_invalid_credit(void **state) {
        HealthCutoffs c = { .rct = 7 };
        HealthTest t;

        assert_int_equal(health_init(&t, 0), -EINVAL);
        assert_int_equal(health_init(&t, CREDIT_MBITS_MAX + 1), -EINVAL);
        assert_int_equal(health_init(&t, UINT32_MAX), -EINVAL);
        assert_int_equal(health_init(&t, 1), 0);
        assert_int_equal(health_init(&t, CREDIT_MBITS_MAX), 0);

        assert_int_equal(health_cutoffs(0.0, -30, 512, &c), -EINVAL);
        assert_int_equal(health_cutoffs(-1.0, -30, 512, &c), -EINVAL);
        assert_int_equal(health_cutoffs(8.001, -30, 512, &c), -EINVAL);
        assert_int_equal(health_cutoffs(NAN, -30, 512, &c), -EINVAL);
        assert_int_equal(health_cutoffs(1.0, 0, 512, &c), -EINVAL);
        assert_int_equal(c.rct, 7);
}

static void test_verdict_names(void **state) {
        for (HealthVerdict v = HEALTH_OK; v <= HEALTH_PERMANENT_APT; v++) {
                assert_non_null(health_verdict_to_string(v));
                for (HealthVerdict w = HEALTH_OK; w < v; w++)
                        assert_string_not_equal(health_verdict_to_string(v), health_verdict_to_string(w));
        }
        assert_false(health_verdict_failed(HEALTH_STARTUP));
        assert_true(health_verdict_failed(HEALTH_FAIL_APT));
        assert_false(health_verdict_permanent(HEALTH_FAIL_APT));
        assert_true(health_verdict_permanent(HEALTH_PERMANENT_RCT));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cutoffs_reference),
                cmocka_unit_test(test_cutoffs_from_credit),
                cmocka_unit_test(test_critbinom_small),
                cmocka_unit_test(test_permanent_cutoffs),
                cmocka_unit_test(test_stuck_source),
                cmocka_unit_test(test_biased_source),
                cmocka_unit_test(test_bias_without_runs),
                cmocka_unit_test(test_uniform_no_failures),
                cmocka_unit_test(test_getrandom_no_failures),
                cmocka_unit_test(test_startup),
                cmocka_unit_test(test_startup_restarts_on_failure),
                cmocka_unit_test(test_settled),
                cmocka_unit_test(test_invalid_credit),
                cmocka_unit_test(test_verdict_names),
        };

        if (sodium_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
