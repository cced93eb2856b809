/* test-assess-gate.c - truerandomctl assess --gate's replay (ctl/assess-gate.h):
 * a capture cut into the daemon's windows, each the verdict gate_judge()
 * gives that very window; i.i.d. uniform windows all released under
 * credit = 1.0; a window of one 100-byte chunk repeated refused among
 * them; the totals the sums over released windows; the JSON object in
 * the documented shape; --credit and --cap read as the configuration
 * reads credit. Data from a fixed-seed xoshiro256** (estimate-datasets.h),
 * windows of GATE_WINDOW_MIN to keep it quick. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "ctl/assess-gate.h"
#include "estimate-datasets.h"

#define W GATE_WINDOW_MIN

static const GatePolicy credit_one = { .auto_credit = false, .credit_mbits = 1000 };

static void fill_uniform(uint8_t *out, size_t n, uint64_t seed) {
        EaRng rng;

        ea_rng_seed(&rng, seed);
        for (size_t i = 0; i < n; i++)
                out[i] = (uint8_t) (ea_rng_next(&rng) >> 56);
}

/* windows uniform windows of W, then (stuck >= 0) window `stuck` made of
 * one random 100-byte chunk repeated, then `tail` more uniform samples. */
static uint8_t *stream(unsigned windows, int stuck, size_t tail, size_t *ret_n) {
        size_t n = (size_t) windows * W + tail;
        uint8_t *s = malloc(n), chunk[100];

        assert_non_null(s);
        fill_uniform(s, n, 0x9a7e);
        if (stuck >= 0) {
                fill_uniform(chunk, sizeof(chunk), 0xc0ffee);
                for (size_t i = 0; i < W; i++)
                        s[(size_t) stuck * W + i] = chunk[i % sizeof(chunk)];
        }
        *ret_n = n;
        return s;
}

/* (a) i.i.d. uniform bytes, four windows: every one released at 1.0, and
 * each verdict is gate_judge()'s on that window (the cut is the daemon's). */
static void test_uniform_all_released(void **state) {
        size_t n;
        uint8_t *s = stream(4, -1, 0, &n);
        AssessGate g;

        assert_int_equal(assess_gate_run(s, n, W, &credit_one, NULL, NULL, &g), 0);
        assert_int_equal(g.n_windows, 4);
        for (size_t k = 0; k < g.n_windows; k++) {
                GateVerdict direct;

                assert_int_equal(gate_judge(s + k * W, W, &credit_one, NULL, &direct), 0);
                assert_int_equal(g.verdicts[k].start, k * W);
                assert_int_equal(g.verdicts[k].samples, W);
                assert_true(g.verdicts[k].estimate == direct.estimate);
                assert_int_equal(g.verdicts[k].credit_mbits, 1000);
        }
        assert_int_equal(g.samples_credited, 4 * W);
        assert_int_equal(g.mbits_credited, (uint64_t) 4 * W * 1000);
        assess_gate_done(&g);
        free(s);
}

/* (b) a window of one 100-byte chunk repeated, between uniform ones: that
 * window alone refused, its estimate below 1 bit; the totals leave it out.
 * A trailing partial window is never judged. */
static void test_repeated_chunk_refused(void **state) {
        size_t n;
        uint8_t *s = stream(4, 2, W / 2, &n);
        AssessGate g;

        assert_int_equal(assess_gate_run(s, n, W, &credit_one, NULL, NULL, &g), 0);
        assert_int_equal(g.n_windows, 4);
        assert_int_equal(g.samples, n);
        for (size_t k = 0; k < g.n_windows; k++)
                assert_int_equal(g.verdicts[k].credit_mbits, k == 2 ? 0 : 1000);
        assert_true(g.verdicts[2].estimate < 1.0);
        assert_true(g.verdicts[1].estimate >= 2.0);
        assert_int_equal(g.samples_credited, 3 * W);
        assert_int_equal(g.mbits_credited, (uint64_t) 3 * W * 1000);
        assess_gate_done(&g);
        free(s);
}

/* credit = auto: each window min(cap, h / 2), so the totals are not a
 * multiple of one credit. */
static void test_auto(void **state) {
        GatePolicy p = { .auto_credit = true, .cap_mbits = 2500 };
        size_t n;
        uint8_t *s = stream(3, 1, 0, &n);
        uint64_t mbits = 0;
        AssessGate g;

        assert_int_equal(assess_gate_run(s, n, W, &p, NULL, NULL, &g), 0);
        for (size_t k = 0; k < g.n_windows; k++) {
                uint32_t want = gate_credit(&p, g.verdicts[k].estimate);

                assert_int_equal(g.verdicts[k].credit_mbits, want);
                mbits += (uint64_t) W * want;
        }
        assert_int_equal(g.verdicts[1].credit_mbits, 0);
        assert_true(g.verdicts[0].credit_mbits > 0 && g.verdicts[0].credit_mbits <= 2500);
        assert_int_equal(g.mbits_credited, mbits);
        assess_gate_done(&g);
        free(s);
}

static int count_calls(void *userdata, unsigned done, unsigned total) {
        unsigned *calls = userdata;

        assert_int_equal(done, ++*calls);
        assert_int_equal(total, 2);
        return done == 2 ? -EINTR : 0;
}

static void test_bad_arguments(void **state) {
        GatePolicy none = { .auto_credit = false, .credit_mbits = 0 };
        size_t n;
        uint8_t *s = stream(2, -1, 0, &n);
        unsigned calls = 0;
        AssessGate g = { 0 };

        assert_int_equal(assess_gate_run(s, n, W - 1, &credit_one, NULL, NULL, &g), -EINVAL);
        assert_int_equal(assess_gate_run(s, n, GATE_WINDOW_MAX + 1, &credit_one, NULL, NULL, &g), -EINVAL);
        assert_int_equal(assess_gate_run(s, n, W, &none, NULL, NULL, &g), -EINVAL);
        /* Fewer samples than one window: nothing to judge. */
        assert_int_equal(assess_gate_run(s, 3 * W - 1, 3 * W, &credit_one, NULL, NULL, &g), -ENODATA);
        /* The progress callback sees each window and can stop the replay. */
        assert_int_equal(assess_gate_run(s, n, W, &credit_one, count_calls, &calls, &g), -EINTR);
        assert_int_equal(calls, 2);
        assert_null(g.verdicts);
        free(s);
}

/* (c) the JSON object: its members and types, and totals that add up
 * from the windows listed. */
static void test_json(void **state) {
        size_t n;
        uint8_t *s = stream(3, 1, 100, &n);
        struct json_object *o, *v, *windows, *policy;
        uint64_t samples = 0;
        double bits = 0.0;
        AssessGate g;

        assert_int_equal(assess_gate_run(s, n, W, &credit_one, NULL, NULL, &g), 0);
        o = assess_gate_to_json(&g);
        assert_non_null(o);
        /* Through text, as a reader gets it. */
        v = json_tokener_parse(json_object_to_json_string(o));
        json_object_put(o);
        o = v;
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "window", &v) && json_object_get_int64(v) == W);
        assert_true(json_object_object_get_ex(o, "policy", &policy));
        assert_true(json_object_object_get_ex(policy, "credit", &v) && json_object_is_type(v, json_type_double));
        assert_true(json_object_get_double(v) == 1.0);
        assert_true(json_object_object_get_ex(policy, "cap", &v) && v == NULL);
        assert_true(json_object_object_get_ex(o, "windows", &windows));
        assert_true(json_object_is_type(windows, json_type_array));
        assert_int_equal(json_object_array_length(windows), 3);
        for (size_t k = 0; k < 3; k++) {
                struct json_object *w = json_object_array_get_idx(windows, k), *released, *credit, *n_w, *start;

                assert_true(json_object_object_get_ex(w, "start", &start) && json_object_get_int64(start) == (int64_t) (k * W));
                assert_true(json_object_object_get_ex(w, "samples", &n_w) && json_object_get_int64(n_w) == W);
                assert_true(json_object_object_get_ex(w, "estimate", &v) && json_object_is_type(v, json_type_double));
                assert_true(json_object_object_get_ex(w, "credit", &credit));
                assert_true(json_object_object_get_ex(w, "released", &released) &&
                            json_object_is_type(released, json_type_boolean));
                assert_true(json_object_get_boolean(released) == (k != 1));
                assert_true((json_object_get_double(credit) > 0) == json_object_get_boolean(released));
                if (json_object_get_boolean(released)) {
                        samples += (uint64_t) json_object_get_int64(n_w);
                        bits += (double) json_object_get_int64(n_w) * json_object_get_double(credit);
                }
        }
        assert_true(json_object_object_get_ex(o, "samples_credited", &v) && json_object_get_int64(v) == (int64_t) samples);
        assert_int_equal(samples, 2 * W);
        assert_true(json_object_object_get_ex(o, "bits_credited", &v) && fabs(json_object_get_double(v) - bits) < 1e-6);
        json_object_put(o);
        assess_gate_done(&g);
        free(s);
}

/* The text: a line per window in the documented form, then the totals. */
static void test_text(void **state) {
        size_t n, size = 0;
        uint8_t *s = stream(2, 1, 0, &n);
        char *text = NULL;
        AssessGate g;
        FILE *f;

        assert_int_equal(assess_gate_run(s, n, W, &credit_one, NULL, NULL, &g), 0);
        f = open_memstream(&text, &size);
        assert_non_null(f);
        assess_gate_print(&g, f);
        assert_int_equal(fclose(f), 0);
        assert_non_null(strstr(text, "\nwindow 0: samples 0..4095 estimate "));
        assert_non_null(strstr(text, " bits/sample: credit 1.000\nwindow 1: samples 4096..8191 estimate 0."));
        assert_non_null(strstr(text, " bits/sample: REFUSED\ncredited: 4096 samples (1 of 2 windows released), "
                                     "4096.000 bits\n"));
        free(text);
        assess_gate_done(&g);
        free(s);
}

static void test_parse(void **state) {
        GatePolicy p = { 0 };

        assert_int_equal(assess_gate_parse_credit("0.5", &p), 0);
        assert_false(p.auto_credit);
        assert_int_equal(p.credit_mbits, 500);
        /* Further decimals dropped, as the configuration reads credit. */
        assert_int_equal(assess_gate_parse_credit("0.3339", &p), 0);
        assert_int_equal(p.credit_mbits, 333);
        assert_int_equal(assess_gate_parse_credit("8", &p), 0);
        assert_int_equal(p.credit_mbits, 8000);
        assert_int_equal(assess_gate_parse_credit("auto", &p), 0);
        assert_true(p.auto_credit);
        for (const char **bad = (const char *[]){ "0", "0.0", "8.001", "9", "-1", "", "abc", "1.", "auto2", NULL };
             *bad; bad++)
                assert_int_equal(assess_gate_parse_credit(*bad, &p), -EINVAL);
        assert_int_equal(assess_gate_parse_cap("1.0", &p), 0);
        assert_int_equal(p.cap_mbits, 1000);
        assert_int_equal(assess_gate_parse_cap("auto", &p), -EINVAL);
        assert_int_equal(assess_gate_parse_cap("0", &p), -EINVAL);
        /* The default cap: the source's own under credit = auto, else
         * jitter's (the daemon's measured source, 1 bit). */
        assert_int_equal(assess_gate_default_cap("jitter"), 1000);
        assert_int_equal(assess_gate_default_cap(NULL), 1000);
        assert_int_equal(assess_gate_default_cap("rdseed"), 1000);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_uniform_all_released),
                cmocka_unit_test(test_repeated_chunk_refused),
                cmocka_unit_test(test_auto),
                cmocka_unit_test(test_bad_arguments),
                cmocka_unit_test(test_json),
                cmocka_unit_test(test_text),
                cmocka_unit_test(test_parse),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
