/* test-eajson.c - SP 800-90B reports as JSON (assess/eajson.h), the form
 * `truerandomctl assess --json` prints: every member it promises, a
 * report read back equal to itself, and reports that are not ours (an
 * entropy out of range, a result above its own estimators, 9-bit samples)
 * refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "assess/eajson.h"
#include "estimate/noniid.h"
#include "estimate-datasets.h"

typedef struct Report {
        EaReport report;
} Report;

/* 0 with probability 1/4, else one of the other 255 values: 2 bits. */
static Report sample_report(void) {
        Report a;
        uint8_t *buf = malloc(20000);
        EaRng r;

        assert_non_null(buf);
        ea_rng_seed(&r, 1);
        for (size_t i = 0; i < 20000; i++) {
                uint64_t v = ea_rng_next(&r);

                buf[i] = (v >> 62) == 0 ? 0 : (uint8_t) (1 + (v & 0xffffffffU) % 255);
        }
        assert_int_equal(ea_non_iid(buf, 20000, 8, &a.report), 0);
        ea_report_round(&a.report);
        free(buf);
        return a;
}

static void assert_report_equal(const EaReport *x, const EaReport *y) {
        assert_int_equal(x->samples, y->samples);
        assert_int_equal(x->bits, y->bits);
        for (unsigned e = 0; e < _EA_MAX; e++) {
                assert_true(isnan(x->original[e]) ? isnan(y->original[e]) : x->original[e] == y->original[e]);
                assert_true(isnan(x->bitstring[e]) ? isnan(y->bitstring[e]) : x->bitstring[e] == y->bitstring[e]);
        }
        assert_true(x->h_original == y->h_original);
        assert_true(isnan(x->h_bitstring) ? isnan(y->h_bitstring) : x->h_bitstring == y->h_bitstring);
        assert_true(x->min_entropy == y->min_entropy);
}

static void test_report_json(void **state) {
        Report a = sample_report();
        struct json_object *o = ea_report_to_json(&a.report), *x;
        EaReport back;

        assert_non_null(o);
        /* The members truerandomctl assess --json promises. */
        assert_true(json_object_object_get_ex(o, "h_original", NULL));
        assert_true(json_object_object_get_ex(o, "h_bitstring", NULL));
        assert_true(json_object_object_get_ex(o, "min_entropy", NULL));
        assert_true(json_object_object_get_ex(o, "samples", NULL));
        for (unsigned e = 0; e < _EA_MAX; e++)
                assert_true(json_object_object_get_ex(o, ea_estimator_name(e), NULL));
        /* 8-bit samples: no collision estimate on them, as NIST. */
        assert_true(json_object_object_get_ex(o, "collision", &x));
        assert_true(json_object_object_get_ex(x, "original", &x));
        assert_null(x);

        assert_int_equal(ea_report_from_json(o, &back), 0);
        assert_report_equal(&a.report, &back);

        /* Not ours: an entropy out of range, a result above its own
         * estimators, 9-bit samples. */
        json_object_object_add(o, "min_entropy", json_object_new_double(8.5));
        assert_int_equal(ea_report_from_json(o, &back), -EBADMSG);
        json_object_object_add(o, "min_entropy", json_object_new_double(a.report.h_original + 0.5));
        assert_int_equal(ea_report_from_json(o, &back), -EBADMSG);
        /* Above its own estimators: every estimator low, the summary
         * figures high and consistent with each other. */
        json_object_object_add(o, "min_entropy", json_object_new_double(7.9));
        json_object_object_add(o, "h_original", json_object_new_double(7.9));
        json_object_object_add(o, "h_bitstring", json_object_new_double(0.999));
        assert_int_equal(ea_report_from_json(o, &back), -EBADMSG);
        json_object_object_add(o, "h_original", ea_json_value(a.report.h_original));
        json_object_object_add(o, "min_entropy", ea_json_value(a.report.min_entropy));
        assert_int_equal(ea_report_from_json(o, &back), -EBADMSG);
        json_object_object_add(o, "h_bitstring", ea_json_value(a.report.h_bitstring));
        assert_int_equal(ea_report_from_json(o, &back), 0);
        json_object_object_add(o, "bits", json_object_new_int(9));
        assert_int_equal(ea_report_from_json(o, &back), -EBADMSG);
        json_object_put(o);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_report_json),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
