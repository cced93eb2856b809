/* test-backoff.c - the waits a reader of a source takes (pool/backoff.h):
 * 10 ms doubling to 1 s while reads give nothing, back to 10 ms once
 * samples come; "nothing now" never ends a reading, device errors do after
 * errors_max in a row, the end of a file at once; a reader without limits
 * never gives up. The stall limit, which needs a clock, is tested through
 * capture_run() in test-capture.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "pool/backoff.h"

static void test_doubles_and_starts_over(void **state) {
        static const usec_t expected[] = { 10000, 20000, 40000, 80000, 160000, 320000, 640000, 1000000, 1000000 };
        Backoff b;
        usec_t wait;

        backoff_init(&b, 0, USEC_INFINITY);
        for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
                assert_int_equal(backoff_next(&b, i % 2 ? -EAGAIN : -EIO, &wait), 0);
                assert_int_equal(wait, expected[i]);
        }
        assert_int_equal(backoff_next(&b, 4096, &wait), 0);
        assert_int_equal(wait, 0);
        assert_int_equal(backoff_next(&b, -EAGAIN, &wait), 0);
        assert_int_equal(wait, BACKOFF_MIN_USEC);
}

static void test_limits(void **state) {
        Backoff b;
        usec_t wait;

        /* Errors in a row end it; samples between them start the count
         * over; "nothing now" is not an error. */
        backoff_init(&b, 3, USEC_INFINITY);
        assert_int_equal(backoff_next(&b, -EIO, &wait), 0);
        assert_int_equal(backoff_next(&b, -EAGAIN, &wait), 0);
        assert_int_equal(backoff_next(&b, -EIO, &wait), 0);
        assert_int_equal(backoff_next(&b, 1, &wait), 0);
        assert_int_equal(backoff_next(&b, -EIO, &wait), 0);
        assert_int_equal(backoff_next(&b, -EIO, &wait), 0);
        assert_int_equal(backoff_next(&b, -ENXIO, &wait), -ENXIO);

        /* A file's end ends every reading, even one without limits. */
        backoff_init(&b, 0, USEC_INFINITY);
        assert_int_equal(backoff_next(&b, -ENODATA, &wait), -ENODATA);

        /* Without limits, errors go on for ever. */
        for (unsigned i = 0; i < 1000; i++)
                assert_int_equal(backoff_next(&b, -EIO, &wait), 0);
        assert_int_equal(wait, BACKOFF_MAX_USEC);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_doubles_and_starts_over),
                cmocka_unit_test(test_limits),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
