/* test-gate.c - the running gate (pool/gate.h): what a verdict grants, the
 * failure classes the most common value cannot see (tests/lib/degrade.h),
 * i.i.d. data credited without false refusals, and the worker threads:
 * the verdicts they reach are gate_judge()'s, cancelling a queued or
 * running job, freeing with jobs queued. Small windows (GATE_WINDOW_MIN
 * and a few of them) keep it quick; the estimators are the same at any
 * size. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "degrade.h"
#include "estimate-datasets.h"
#include "pool/gate.h"

#define W 8192U

static const GatePolicy credit_one = { .auto_credit = false, .credit_mbits = 1000 };
static const GatePolicy credit_auto = { .auto_credit = true, .cap_mbits = 1000 };

static void test_credit(void **state) {
        GatePolicy quarter = { .auto_credit = false, .credit_mbits = 250 };

        /* auto: half the estimate, rounded down, at most the cap. */
        assert_int_equal(gate_credit(&credit_auto, 0.5), 250);
        assert_int_equal(gate_credit(&credit_auto, 0.7771), 388);
        assert_int_equal(gate_credit(&credit_auto, 2.6), 1000);
        assert_int_equal(gate_credit(&credit_auto, 8.0), 1000);
        assert_int_equal(gate_credit(&credit_auto, 0.0), 0);
        assert_int_equal(gate_credit(&credit_auto, -1.0), 0);
        assert_int_equal(gate_credit(&credit_auto, NAN), 0);
        /* credit = C: all of C with the margin h >= 2C, else nothing. */
        assert_int_equal(gate_credit(&credit_one, 2.0), 1000);
        assert_int_equal(gate_credit(&credit_one, 7.9), 1000);
        assert_int_equal(gate_credit(&credit_one, 1.999), 0);
        assert_int_equal(gate_credit(&quarter, 0.5), 250);
        assert_int_equal(gate_credit(&quarter, 0.499), 0);
        assert_int_equal(gate_credit(&quarter, NAN), 0);
}

/* bits: the estimators judge B-bit samples (min(H_original, B x
 * H_bitstring)); 0 is 8, the daemon's; above 8 is refused. Uniform 4-bit
 * samples hold at most 4 bits each: judged as 4-bit samples the estimate
 * is about 3 on a window this small; judged as bytes, their four constant
 * bits pull the bitstring estimate, and so the verdict, far below. */
static void test_bits(void **state) {
        GatePolicy four = credit_auto, eight = credit_auto, nine = credit_auto;
        uint8_t *s = malloc(W);
        GateVerdict v4, v8, v0;
        EaRng rng;

        assert_non_null(s);
        four.bits = 4;
        eight.bits = 8;
        nine.bits = 9;
        ea_rng_seed(&rng, 0x4b17);
        for (size_t i = 0; i < W; i++)
                s[i] = (uint8_t) (ea_rng_next(&rng) >> 60);
        assert_int_equal(gate_judge(s, W, &nine, NULL, &v4), -EINVAL);
        assert_int_equal(gate_judge(s, W, &four, NULL, &v4), 0);
        assert_int_equal(gate_judge(s, W, &eight, NULL, &v8), 0);
        assert_int_equal(gate_judge(s, W, &credit_auto, NULL, &v0), 0);
        printf("# 4-bit uniform: %.6f as 4-bit samples, %.6f as bytes\n", v4.estimate, v8.estimate);
        assert_true(v4.estimate > 2.5 && v4.estimate <= 4.0);
        assert_true(v8.estimate < v4.estimate - 1.0);
        assert_true(v0.estimate == v8.estimate);
        free(s);
}

static void test_bad_arguments(void **state) {
        uint8_t buf[GATE_WINDOW_MIN] = { 0 };
        GatePolicy none = { .auto_credit = false, .credit_mbits = 0 };
        GatePolicy too_much = { .auto_credit = true, .cap_mbits = 8001 };
        GateVerdict v;

        assert_int_equal(gate_judge(buf, GATE_WINDOW_MIN - 1, &credit_one, NULL, &v), -EINVAL);
        assert_int_equal(gate_judge(NULL, GATE_WINDOW_MIN, &credit_one, NULL, &v), -EINVAL);
        assert_int_equal(gate_judge(buf, GATE_WINDOW_MIN, &none, NULL, &v), -EINVAL);
        assert_int_equal(gate_judge(buf, GATE_WINDOW_MIN, &too_much, NULL, &v), -EINVAL);
        /* One value throughout: no entropy, refused (not an error). */
        assert_int_equal(gate_judge(buf, GATE_WINDOW_MIN, &credit_one, NULL, &v), 0);
        assert_int_equal(v.credit_mbits, 0);
        assert_true(v.estimate == 0.0);
}

/* Judges `windows` windows of a stream whose degradation starts at window
 * `onset_window` (plus `offset` samples); returns how many windows wholly
 * before the onset were credited, and fails on a window wholly or partly
 * after it that was. */
static unsigned judge_stream(Degrade kind, unsigned windows, unsigned onset_window, size_t offset) {
        size_t onset = (size_t) onset_window * W + offset;
        uint8_t *s = malloc((size_t) windows * W);
        unsigned clean_credited = 0;

        assert_non_null(s);
        degrade_fill(kind, 0x5eed + kind, onset, s, (size_t) windows * W);
        for (unsigned w = 0; w < windows; w++) {
                GateVerdict v;

                assert_int_equal(gate_judge(s + (size_t) w * W, W, &credit_one, NULL, &v), 0);
                if ((size_t) (w + 1) * W <= onset || kind == DEGRADE_NONE) {
                        clean_credited += v.credit_mbits == 1000;
                        continue;
                }
                if (v.credit_mbits != 0)
                        fail_msg("%s: window %u (samples %zu..%zu, onset %zu) credited %u mbits at estimate %.3f",
                                 degrade_name(kind), w, (size_t) w * W, (size_t) (w + 1) * W - 1, onset,
                                 v.credit_mbits, v.estimate);
                /* auto never grants more than half of it, nor 1 bit here. */
                assert_true(gate_credit(&credit_auto, v.estimate) < 1000);
        }
        free(s);
        return clean_credited;
}

static void test_failure_classes(void **state) {
        for (Degrade k = DEGRADE_CHUNKS; k < _DEGRADE_MAX; k++) {
                /* The onset on a window's edge, then inside one: the window
                 * that straddles it is refused too. */
                assert_int_equal(judge_stream(k, 4, 2, 0), 2);
                assert_int_equal(judge_stream(k, 4, 1, W / 2), 1);
        }
}

static void test_iid_not_refused(void **state) {
        /* At credit = 1 (estimate >= 2 needed) an i.i.d. source loses no
         * window: at least 90 % are asked for; all are seen here. */
        unsigned credited = judge_stream(DEGRADE_NONE, 12, 0, 0);

        assert_true(credited * 10 >= 12 * 9);
}

static void test_workers_agree(void **state) {
        enum { JOBS = 6 };
        uint8_t *s = malloc((size_t) JOBS * W);
        GateJob jobs[JOBS] = { 0 };
        uint64_t windows, samples;
        Gate *g;

        assert_non_null(s);
        degrade_fill(DEGRADE_LAGGED, 7, (size_t) 3 * W, s, (size_t) JOBS * W);
        assert_int_equal(gate_new(2, &g), 0);
        assert_int_equal(gate_start(g), 0);
        for (unsigned i = 0; i < JOBS; i++) {
                jobs[i].samples = s + (size_t) i * W;
                jobs[i].n = W;
                jobs[i].policy = credit_one;
                jobs[i].start = (uint64_t) i * W;
                assert_int_equal(gate_submit(g, &jobs[i]), 0);
        }
        /* A queued or running job cannot be submitted again. */
        assert_int_equal(gate_submit(g, &jobs[JOBS - 1]), -EINVAL);
        for (unsigned i = 0; i < JOBS; i++) {
                GateVerdict direct;

                assert_int_equal(gate_wait(g, &jobs[i]), 0);
                assert_true(gate_done(g, &jobs[i]));
                assert_int_equal(gate_judge(s + (size_t) i * W, W, &credit_one, NULL, &direct), 0);
                assert_int_equal(jobs[i].verdict.start, (uint64_t) i * W);
                assert_int_equal(jobs[i].verdict.credit_mbits, direct.credit_mbits);
                assert_true(jobs[i].verdict.estimate == direct.estimate);
                assert_int_equal(jobs[i].verdict.credit_mbits != 0, i < 3);
        }
        gate_get_counts(g, &windows, &samples);
        assert_int_equal(windows, JOBS);
        assert_int_equal(samples, (uint64_t) JOBS * W);
        gate_free(g);
        free(s);
}

static void test_cancel(void **state) {
        enum { JOBS = 8 };
        uint8_t *s = malloc(W);
        GateJob jobs[JOBS] = { 0 };
        GateJob idle = { 0 };
        unsigned cancelled = 0;
        Gate *g;

        assert_non_null(s);
        degrade_fill(DEGRADE_NONE, 3, 0, s, W);
        assert_int_equal(gate_new(1, &g), 0);
        assert_int_equal(gate_start(g), 0);
        assert_int_equal(gate_wait(g, &idle), -EINVAL);
        for (unsigned i = 0; i < JOBS; i++) {
                jobs[i] = (GateJob){ .samples = s, .n = W, .policy = credit_one };
                assert_int_equal(gate_submit(g, &jobs[i]), 0);
        }
        /* One worker: the first runs (or ran), the rest wait their turn.
         * Each cancelled job is done and its samples no longer read. */
        for (unsigned i = 0; i < JOBS; i++) {
                gate_cancel(g, &jobs[i]);
                assert_true(gate_done(g, &jobs[i]));
                cancelled += gate_wait(g, &jobs[i]) == -ECANCELED;
        }
        assert_true(cancelled >= JOBS - 1);
        /* A cancelled job can go again, and then gives its verdict. */
        assert_int_equal(gate_submit(g, &jobs[0]), 0);
        assert_int_equal(gate_wait(g, &jobs[0]), 0);
        assert_int_equal(jobs[0].verdict.credit_mbits, 1000);
        /* Freed with jobs queued: they end cancelled, nobody waits forever. */
        for (unsigned i = 1; i < JOBS; i++)
                assert_int_equal(gate_submit(g, &jobs[i]), 0);
        gate_free(g);
        for (unsigned i = 1; i < JOBS; i++)
                assert_true(jobs[i].state == GATE_JOB_DONE);
        free(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_credit),
                cmocka_unit_test(test_bad_arguments),
                cmocka_unit_test(test_bits),
                cmocka_unit_test(test_failure_classes),
                cmocka_unit_test(test_iid_not_refused),
                cmocka_unit_test(test_workers_agree),
                cmocka_unit_test(test_cancel),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
