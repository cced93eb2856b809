/* test-ctlstatus.c - reading the status object: what json-c accepts is
 * narrowed to one status object, every look-up checks its type, and what a
 * hostile or confused daemon may send (malformed, truncated, too deep,
 * another version) is refused whole. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proto/ctlstatus.h"

static CtlStatus *parse(const char *s) {
        CtlStatus *st = NULL;
        int r = ctl_status_parse(s, strlen(s), &st);
        if (r < 0)
                fail_msg("'%s' was refused: %d", s, r);
        return st;
}

static void test_status_values(void **state) {
        CtlStatus *st = parse(" {\"version\":1,\"a\":[1,-2.5e1,{\"k\":0.25},true,null,\"x\\\"\\\\\\/\\b\\f\\n\\r\\t\"],"
                              "\"u\":\"\\u00e9\\ud83d\\ude00\",\"e\":{},\"b\":false,\"n\":18446744073709551615,"
                              "\"z\":\"a\\u0000b\",\"i\":1e999,\"nan\":NaN}\n");
        const CtlStatusObject *root = ctl_status_root(st);
        double v = -1;
        bool b = true;

        assert_true(ctl_status_get_number(root, "version", &v));
        assert_true(v == 1.0);
        assert_int_equal(ctl_status_get_count(root, "a"), 6);
        assert_null(ctl_status_get_element(root, "a", 0));
        assert_non_null(ctl_status_get_element(root, "a", 2));
        assert_true(ctl_status_get_number(ctl_status_get_element(root, "a", 2), "k", &v));
        assert_true(v == 0.25);
        assert_null(ctl_status_get_element(root, "a", 6));
        assert_string_equal(ctl_status_get_string(root, "u"), "\xc3\xa9\xf0\x9f\x98\x80");
        assert_non_null(ctl_status_get_object(root, "e"));
        assert_true(ctl_status_get_bool(root, "b", &b));
        assert_false(b);
        assert_true(ctl_status_get_number(root, "n", &v));
        assert_true(v == 18446744073709551615.0);

        /* Wrong types and missing keys read as absent, outputs untouched. */
        v = 7;
        b = true;
        assert_false(ctl_status_get_number(root, "u", &v));
        assert_false(ctl_status_get_number(root, "missing", &v));
        assert_false(ctl_status_get_bool(root, "version", &b));
        assert_true(v == 7 && b);
        assert_null(ctl_status_get_string(root, "version"));
        assert_null(ctl_status_get_object(root, "a"));
        assert_int_equal(ctl_status_get_count(root, "e"), 0);
        assert_false(ctl_status_is_true(root, "missing"));
        assert_false(ctl_status_is_true(NULL, "b"));
        /* A NUL inside would cut the string short; infinity is no JSON number. */
        assert_null(ctl_status_get_string(root, "z"));
        assert_false(ctl_status_get_number(root, "i", &v));
        assert_false(ctl_status_get_number(root, "nan", &v));
        ctl_status_free(st);
}

static void test_status_malformed(void **state) {
        static const char *const bad[] = {
                "", " ", "{", "}", "[]", "1", "\"x\"", "null", "{}", "{\"version\":0}", "{\"version\":\"1\"}",
                "{\"version\":true}", "{\"version\":1,}", "{\"version\":1 \"b\":2}", "{version:1}",
                "{\"version\":1,\"a\":[1,]}", "{\"version\":1,\"a\":01}",
                "{\"version\":1,\"a\":.5}", "{\"version\":1,\"a\":+1}", "{\"version\":1,\"a\":0x10}",
"{\"version\":1,\"a\":'x'}", "{\"version\":1,\"a\":\"\\x\"}",
                "{\"version\":1,\"a\":\"\\u12g4\"}", "{\"version\":1,\"a\":tru}", "{\"version\":1} {}",
                "{\"version\":1}x", "{\"version\":1,\"a\":\"\xff\"}", "{\"version\":1,\"a\":\"abc}",
        };
        /* Not here: "1." and NaN, which json-c's strict mode reads (as 1, and
         * as a NaN that ctl_status_get_number() refuses: test_status_values). */
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                CtlStatus *st = (CtlStatus *) 0x1;
                if (ctl_status_parse(bad[i], strlen(bad[i]), &st) != -EBADMSG)
                        fail_msg("'%s' was accepted", bad[i]);
                assert_ptr_equal(st, (CtlStatus *) 0x1);
        }
        assert_int_equal(ctl_status_parse(NULL, 0, &(CtlStatus *){ NULL }), -EBADMSG);
        /* A NUL byte inside the packet ends nothing early. */
        assert_int_equal(ctl_status_parse("{\"version\":1}\0", 14, &(CtlStatus *){ NULL }), -EBADMSG);
}

static void test_status_depth(void **state) {
        char deep[2 * CTL_STATUS_DEPTH_MAX + 32];
        CtlStatus *st = NULL;
        size_t n;

        /* The root object and DEPTH_MAX - 1 arrays inside it: accepted. */
        for (size_t levels = CTL_STATUS_DEPTH_MAX - 1; levels <= CTL_STATUS_DEPTH_MAX; levels++) {
                n = (size_t) snprintf(deep, sizeof(deep), "{\"version\":1,\"d\":");
                for (size_t i = 0; i < levels; i++)
                        deep[n++] = '[';
                for (size_t i = 0; i < levels; i++)
                        deep[n++] = ']';
                deep[n++] = '}';
                if (levels < CTL_STATUS_DEPTH_MAX) {
                        assert_int_equal(ctl_status_parse(deep, n, &st), 0);
                        st = ctl_status_free(st);
                } else
                        assert_int_equal(ctl_status_parse(deep, n, &st), -EBADMSG);
        }
}

static void test_status_truncated(void **state) {
        static const char doc[] = "{\"version\":1,\"a\":[1,2.5,\"x\\u00e9\"],\"b\":{\"c\":true}}";

        /* No proper prefix of a status is a status. */
        for (size_t n = 0; n < sizeof(doc) - 1; n++) {
                char *copy = malloc(n ? n : 1);
                CtlStatus *st = NULL;

                assert_non_null(copy);
                memcpy(copy, doc, n);
                assert_int_equal(ctl_status_parse(copy, n, &st), -EBADMSG);
                free(copy);
        }
}

static CtlHealth health(const char *json) {
        CtlStatus *st = parse(json);
        CtlHealth h = ctl_status_health(st);

        ctl_status_free(st);
        return h;
}

#define SRC(state) "{\"name\":\"x\",\"credited\":true,\"state\":\"" state "\"}"

static void test_status_health(void **state) {
        assert_int_equal(health("{\"version\":2,\"ready\":true,\"trng_serving\":true,\"min_healthy\":1,"
                                "\"sources\":[" SRC("healthy") "," SRC("unavailable") "]}"),
                         CTL_HEALTH_SERVING);
        /* A failed credited source degrades; so do too few healthy ones. */
        assert_int_equal(health("{\"version\":2,\"ready\":true,\"trng_serving\":true,\"min_healthy\":1,"
                                "\"sources\":[" SRC("healthy") "," SRC("failed-permanent") "]}"),
                         CTL_HEALTH_DEGRADED);
        assert_int_equal(health("{\"version\":2,\"ready\":true,\"trng_serving\":true,\"min_healthy\":2,"
                                "\"sources\":[" SRC("healthy") "," SRC("startup") "]}"),
                         CTL_HEALTH_DEGRADED);
        /* Not serving /dev/truerandom, starting, or stopping. */
        assert_int_equal(health("{\"version\":2,\"ready\":true,\"trng_serving\":false,\"sources\":[]}"),
                         CTL_HEALTH_NOT_SERVING);
        assert_int_equal(health("{\"version\":2,\"ready\":false,\"trng_serving\":true}"), CTL_HEALTH_NOT_SERVING);
        assert_int_equal(health("{\"version\":2,\"ready\":true,\"stopping\":true}"), CTL_HEALTH_NOT_SERVING);
        /* A schema-1 daemon is judged by "ready" and its sources. */
        assert_int_equal(health("{\"version\":1,\"ready\":true,\"sources\":[" SRC("healthy") "]}"),
                         CTL_HEALTH_SERVING);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_status_values),
                cmocka_unit_test(test_status_malformed),
                cmocka_unit_test(test_status_depth),
                cmocka_unit_test(test_status_truncated),
                cmocka_unit_test(test_status_health),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
