/* test-seedopts.c - truerandom-seed-kernel's command line: the defaults
 * (600 s like jitterentropy-rngd, a 5 s poll, one block, the default
 * device and socket), each option in its long and short form, and every
 * bad value refused with a reason rather than taken. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "seed/seedopts.h"

#define PARSE(ret, err, ...)                                                                 \
        __extension__({                                                                      \
                char *argv_[] = { "truerandom-seed-kernel", __VA_ARGS__, NULL };             \
                seed_options_parse((int) (sizeof(argv_) / sizeof(argv_[0])) - 1, argv_, ret, \
                                   err, sizeof(err));                                        \
        })

static void test_defaults(void **state) {
        char *argv[] = { "truerandom-seed-kernel", NULL };
        char err[128];
        SeedOptions o;

        assert_int_equal(seed_options_parse(1, argv, &o, err, sizeof(err)), 0);
        assert_int_equal(o.action, SEED_ACTION_RUN);
        assert_int_equal(o.interval, 600 * USEC_PER_SEC);
        assert_int_equal(o.poll, 5 * USEC_PER_SEC);
        assert_int_equal(o.blocks, 1);
        assert_false(o.once);
        assert_string_equal(o.device, "/dev/truerandom");
        assert_string_equal(o.socket, "/run/truerandomd/control");
        assert_string_equal(err, "");
}

static void test_options(void **state) {
        char err[128];
        SeedOptions o;

        assert_int_equal(PARSE(&o, err, "--interval", "60", "--poll=2", "--blocks", "4",
                                             "--device", "/tmp/fifo", "--socket", "/tmp/sock", "--once"), 0);
        assert_int_equal(o.interval, 60 * USEC_PER_SEC);
        assert_int_equal(o.poll, 2 * USEC_PER_SEC);
        assert_int_equal(o.blocks, 4);
        assert_string_equal(o.device, "/tmp/fifo");
        assert_string_equal(o.socket, "/tmp/sock");
        assert_true(o.once);
        assert_int_equal(PARSE(&o, err, "-i", "1", "-b16", "-d", "/x", "-1"), 0);
        assert_int_equal(o.interval, USEC_PER_SEC);
        assert_int_equal(o.blocks, 16);
        assert_true(o.once);
        assert_int_equal(PARSE(&o, err, "--help"), 0);
        assert_int_equal(o.action, SEED_ACTION_HELP);
        assert_int_equal(PARSE(&o, err, "--version"), 0);
        assert_int_equal(o.action, SEED_ACTION_VERSION);
}

static void test_refused(void **state) {
        static const char *const bad[][2] = {
                { "--interval", "0" },   { "--interval", "604801" }, { "--interval", "-5" },
                { "--interval", "10s" }, { "--interval", " 10" },    { "--interval", "" },
                { "--poll", "0" },       { "--blocks", "0" },        { "--blocks", "17" },
                { "--device", "" },      { "--socket", "" },         { "--interval", "99999999999999999999" },
        };
        SeedOptions o = { .blocks = 99 };
        char err[128];

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(PARSE(&o, err, (char *) bad[i][0], (char *) bad[i][1]), -EINVAL);
                assert_true(strlen(err) > 0);
        }
        assert_int_equal(PARSE(&o, err, "--bogus"), -EINVAL);
        assert_non_null(strstr(err, "--help"));
        assert_int_equal(PARSE(&o, err, "--interval"), -EINVAL);
        assert_int_equal(PARSE(&o, err, "stray"), -EINVAL);
        assert_non_null(strstr(err, "stray"));
        /* Written only on success. */
        assert_int_equal(o.blocks, 99);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_defaults),
                cmocka_unit_test(test_options),
                cmocka_unit_test(test_refused),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
