/* test-ratewin.c - the credit rate in the status does not depend on who
 * else asks: the same loop events give the same figure to a reader that
 * asks every 100 ms and to one that asks once; the window moves every 5 s
 * of loop time and covers the last 5 to 10 s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon/ratewin.h"

#define S 1000000ULL

/* Credit in millibits at time t: 1000 bits/s for 10 s, then 100 bits/s. */
static uint64_t credit_at(uint64_t t) {
        return t <= 10 * S ? t / 1000 * 1000 : 10000000ULL + (t - 10 * S) / 10000 * 1000;
}

static void test_polling_changes_nothing(void **state) {
        RateWindow quiet = { 0 }, polled = { 0 };
        double seen = -1;

        /* The loop moves both windows alike, once a second; one of them is
         * also read every 100 ms. */
        for (uint64_t t = S; t <= 13 * S; t += S / 10) {
                if (t % S == 0) {
                        rate_window_advance(&quiet, credit_at(t), t);
                        rate_window_advance(&polled, credit_at(t), t);
                }
                seen = rate_window_bits_per_s(&polled, credit_at(t), t);
        }
        assert_true(seen == rate_window_bits_per_s(&quiet, credit_at(13 * S), 13 * S));
        assert_memory_equal(&quiet, &polled, sizeof(quiet));
}

static void test_window_follows_the_loop(void **state) {
        RateWindow w = { 0 };
        double r;

        assert_true(rate_window_bits_per_s(&w, 0, S) == 0);
        rate_window_advance(&w, credit_at(S), S);
        for (uint64_t t = 2 * S; t <= 6 * S; t += S)
                rate_window_advance(&w, credit_at(t), t);
        /* Moved at 6 s: the window starts at 1 s. */
        assert_int_equal(w.start_usec, S);
        assert_int_equal(w.next_usec, 6 * S);
        r = rate_window_bits_per_s(&w, credit_at(6 * S), 6 * S);
        assert_true(r > 999 && r < 1001);
        for (uint64_t t = 7 * S; t <= 16 * S; t += S)
                rate_window_advance(&w, credit_at(t), t);
        /* From 11 s (moved at 16 s): the slower rate alone. */
        assert_int_equal(w.start_usec, 11 * S);
        r = rate_window_bits_per_s(&w, credit_at(16 * S), 16 * S);
        assert_true(r > 99 && r < 101);
        /* A counter that went back (a source restarted) reads as 0. */
        assert_true(rate_window_bits_per_s(&w, 0, 17 * S) == 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_polling_changes_nothing),
                cmocka_unit_test(test_window_follows_the_loop),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
