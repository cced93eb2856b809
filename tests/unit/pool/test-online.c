/* test-online.c - the running check on its own: the §6.3.1 estimate, the
 * cutoffs it judges windows by, and its verdicts on seeded i.i.d. streams
 * near its bound (credit 0.5: a most common value above 50 % is flagged):
 * one at 49.2 %, 11 standard deviations inside the cutoff (a window is
 * flagged with probability < 10^-27), is never flagged in 1000 windows;
 * one at 52.2 %, 4 outside, is flagged in every window, stopped at the
 * fourth, and resumes after four good windows in a row. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>

#include "pool/online.h"

static uint64_t rng;

static uint64_t next(void) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

/* One window: value 7 with probability pcm / 100000, else uniform. */
static OnlineEvent feed_window(OnlineCheck *o, unsigned pcm) {
        OnlineEvent e = ONLINE_EVENT_NONE;

        for (unsigned i = 0; i < ONLINE_WINDOW; i++) {
                uint64_t x = next();
                e = online_feed(o, x % 100000 < pcm ? 7 : (uint8_t) (x >> 32));
        }
        return e;
}

static void test_estimate(void **state) {
        /* p = 1/2: 0.5 + 2.576 x sqrt(0.25 / 65535) = 0.50503. */
        assert_true(fabs(online_estimate_bits(32768) - 0.98557) < 1e-4);
        assert_true(online_estimate_bits(ONLINE_WINDOW) == 0.0);
        assert_true(isnan(online_estimate_bits(0)));
        assert_string_equal(online_state_to_string(ONLINE_STOPPED), "stopped");
        assert_null(online_state_to_string(_ONLINE_STATE_MAX));
}

static void test_init(void **state) {
        OnlineCheck o;

        assert_int_equal(online_init(&o, 0), -EINVAL);
        assert_int_equal(online_init(&o, 8001), -EINVAL);
        assert_int_equal(online_init(NULL, 500), -EINVAL);
        /* Credit 4 and above: 2 x credit is capped at the 8 bits a sample
         * holds, so uniform bytes are what the bound asks for. */
        assert_int_equal(online_init(&o, 8000), 0);
        assert_true(o.stats.cutoff_flag > ONLINE_WINDOW / 256 && o.stats.cutoff_flag < ONLINE_WINDOW / 128);
        assert_int_equal(online_init(&o, 500), 0);
        assert_int_equal(o.stats.cutoff_flag, 33670);
        assert_int_equal(o.stats.cutoff_stop, 47159);
        assert_int_equal(o.stats.state, ONLINE_PENDING);
}

static void test_inside_bound_never_flagged(void **state) {
        OnlineCheck o;

        rng = 0x5eed;
        assert_int_equal(online_init(&o, 500), 0);
        /* 49 % plus its share of the uniform rest: p = 0.492. */
        for (unsigned w = 0; w < 1000; w++)
                assert_int_equal(feed_window(&o, 49000), ONLINE_EVENT_WINDOW);
        assert_int_equal(o.stats.windows, 1000);
        assert_int_equal(o.stats.flagged, 0);
        assert_int_equal(o.stats.state, ONLINE_OK);
}

static void test_outside_bound_stopped_then_resumes(void **state) {
        uint32_t stop_max;
        OnlineCheck o;

        rng = 0x5eed;
        assert_int_equal(online_init(&o, 500), 0);
        for (unsigned w = 1; w < ONLINE_STOP_WINDOWS; w++) {
                assert_int_equal(feed_window(&o, 52000), ONLINE_EVENT_WINDOW);
                assert_int_equal(o.stats.state, ONLINE_FLAGGED);
        }
        assert_int_equal(feed_window(&o, 52000), ONLINE_EVENT_STOP);
        assert_true(online_stopped(&o));
        stop_max = o.stats.stop_max;
        assert_true(stop_max > o.stats.cutoff_flag && stop_max <= o.stats.cutoff_stop);
        assert_int_equal(o.stats.last_max, stop_max);
        /* A good window between bad ones does not resume it, and does not
         * change what the stop is reported by: whoever looks later (the
         * loop logs after the fact) still sees the stopping window. */
        assert_int_equal(feed_window(&o, 0), ONLINE_EVENT_WINDOW);
        assert_int_equal(o.stats.stop_max, stop_max);
        assert_true(o.stats.last_max < o.stats.cutoff_flag);
        assert_int_equal(feed_window(&o, 52000), ONLINE_EVENT_WINDOW);
        for (unsigned w = 1; w < ONLINE_RECOVER_WINDOWS; w++)
                assert_int_equal(feed_window(&o, 0), ONLINE_EVENT_WINDOW);
        assert_true(online_stopped(&o));
        assert_int_equal(feed_window(&o, 0), ONLINE_EVENT_RESUME);
        assert_int_equal(o.stats.state, ONLINE_OK);
        assert_int_equal(o.stats.flagged, ONLINE_STOP_WINDOWS + 1);
        assert_int_equal(o.stats.stops, 1);
        /* Flagged again: the run starts afresh, no stop at once. */
        assert_int_equal(feed_window(&o, 52000), ONLINE_EVENT_WINDOW);
        assert_int_equal(o.stats.state, ONLINE_FLAGGED);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_estimate),
                cmocka_unit_test(test_init),
                cmocka_unit_test(test_inside_bound_never_flagged),
                cmocka_unit_test(test_outside_bound_stopped_then_resumes),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
