/* test-verb.c - what truerandomctl's verbs share: options parsed from a
 * verb's table (short options read off its rows, options before and after
 * the verb alike), numbers within bounds, and the source names its usage
 * and messages take from pool's table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/capture.h"
#include "ctl/verb.h"
#include "pool/source.h"

enum { ARG_FLAG = CTL_OPTION_VERB };

static const struct option options[] = {
        { "samples", required_argument, NULL, 'n' },
        { "flag", no_argument, NULL, ARG_FLAG },
        CTL_GLOBAL_OPTIONS,
};

static void test_getopt_from_table(void **state) {
        char *argv[] = { "truerandomctl", "-n", "5", "raw", "--flag", "jitter", "-s", "/x", "--samples=7", NULL };
        int argc = 9, c, index, seen[4] = { 0 };

        optind = 0;
        while ((index = -1, c = ctl_getopt(argc, argv, options, &index)) >= 0) {
                if (c == 'n')
                        seen[0] += strcmp(optarg, "5") == 0 || strcmp(optarg, "7") == 0;
                else if (c == ARG_FLAG) {
                        seen[1]++;
                        assert_string_equal(options[index].name, "flag");
                } else if (c == 's') {
                        seen[2]++;
                        assert_true(ctl_option_global(c));
                } else
                        seen[3]++;
        }
        assert_int_equal(seen[0], 2);
        assert_int_equal(seen[1], 1);
        assert_int_equal(seen[2], 1);
        assert_int_equal(seen[3], 0);
        /* Permuted: the verb and its SOURCE after the options. */
        assert_int_equal(argc - optind, 2);
        assert_string_equal(argv[optind], "raw");
        assert_string_equal(argv[optind + 1], "jitter");
        assert_false(ctl_option_global('n'));
        assert_false(ctl_option_global(ARG_FLAG));
}

static void test_parse_number(void **state) {
        uint64_t v = 42;

        assert_int_equal(ctl_parse_number("8", 1, 8, &v), 0);
        assert_int_equal(v, 8);
        assert_int_equal(ctl_parse_number("9", 1, 8, &v), -ERANGE);
        assert_int_equal(ctl_parse_number("0", 1, 8, &v), -ERANGE);
        assert_int_equal(ctl_parse_number("-1", 1, 8, &v), -EINVAL);
        assert_int_equal(ctl_parse_number("", 1, 8, &v), -EINVAL);
        assert_int_equal(ctl_parse_number("3x", 1, 8, &v), -ERANGE);
        assert_int_equal(v, 8);
}

/* Every source with raw samples, in the table's order; kernel
 * (getrandom()) has none. */
static void test_sources_from_pool(void **state) {
        char buf[128], small[10];

        assert_string_equal(ctl_capture_sources(buf, sizeof(buf)), "jitter, rdseed, hwrng, tpm, file");
        for (const SourceOps *const *s = source_all; *s; s++)
                if (*s != &source_kernel)
                        assert_non_null(strstr(buf, (*s)->name));
        assert_null(strstr(buf, "kernel"));
        /* Cut, never overrun. */
        assert_true(strlen(ctl_capture_sources(small, sizeof(small))) < sizeof(small));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_getopt_from_table),
                cmocka_unit_test(test_parse_number),
                cmocka_unit_test(test_sources_from_pool),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
