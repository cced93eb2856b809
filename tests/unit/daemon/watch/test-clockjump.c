/* test-clockjump.c - a suspend (CLOCK_BOOTTIME moving ahead of
 * CLOCK_MONOTONIC) is reported exactly once, with how long the machine
 * slept; clocks that run together, small drifts and readings torn by
 * preemption report nothing. The clocks are injected by wrapping
 * clock_gettime (-Wl,--wrap=clock_gettime). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "daemon/watch/clockjump.h"

#define MS 1000ULL
#define S 1000000ULL

/* The injected clocks, in microseconds. Each read of CLOCK_MONOTONIC moves
 * both clocks on by `step` (time passes between reads); `tear` reads from
 * now on see a monotonic clock that moved 10 ms between the two bracketing
 * reads (the thread was preempted). */
static uint64_t mono = 1000 * S, boot_extra = 0, step = 1;
static int tear;
static unsigned reads;

int __wrap_clock_gettime(clockid_t clock, struct timespec *ts);
int __wrap_clock_gettime(clockid_t clock, struct timespec *ts) {
        uint64_t v;

        reads++;
        if (clock == CLOCK_MONOTONIC) {
                mono += step;
                if (tear > 0 && reads % 3 == 0) {
                        mono += 10 * MS;
                        tear--;
                }
                v = mono;
        } else if (clock == CLOCK_BOOTTIME) {
                v = mono + boot_extra;
        } else {
                errno = EINVAL;
                return -1;
        }
        ts->tv_sec = (time_t)(v / S);
        ts->tv_nsec = (long)(v % S * 1000);
        return 0;
}

static unsigned calls;
static uint64_t last_slept;

static void on_jump(void *userdata, uint64_t slept_usec) {
        calls++;
        last_slept = slept_usec;
}

static int setup(void **state) {
        mono = 1000 * S;
        boot_extra = 0;
        step = 1;
        tear = 0;
        reads = 0;
        calls = 0;
        last_slept = 0;
        return 0;
}

static ClockJump *new_jump(void) {
        ClockJump *j = NULL;

        assert_int_equal(clockjump_new(NULL, CLOCKJUMP_THRESHOLD_USEC, on_jump, NULL, &j), 0);
        assert_non_null(j);
        return j;
}

static void test_clocks_together(void **state) {
        ClockJump *j = new_jump();
        ClockJumpStats st;

        for (int i = 0; i < 10000; i++) {
                mono += 37 * MS;
                clockjump_check(j);
        }
        assert_int_equal(calls, 0);
        clockjump_get_stats(j, &st);
        assert_int_equal(st.jumps, 0);
        clockjump_free(j);
}

static void test_one_suspend_one_report(void **state) {
        ClockJump *j = new_jump();
        ClockJumpStats st;

        mono += 3 * S;
        boot_extra += 5 * S;   /* slept 5 s */
        clockjump_check(j);
        assert_int_equal(calls, 1);
        /* Within the bracket of the reads (a few microseconds). */
        assert_true(last_slept >= 5 * S - 5 && last_slept <= 5 * S + 5);
        /* The same jump is not reported again, however often it is checked. */
        for (int i = 0; i < 1000; i++) {
                mono += 1 * MS;
                clockjump_check(j);
        }
        assert_int_equal(calls, 1);
        clockjump_get_stats(j, &st);
        assert_int_equal(st.jumps, 1);
        assert_true(st.last_jump_usec > 1000 * S);

        /* A second suspend is a second report; the total adds up. */
        boot_extra += 2 * S;
        clockjump_check(j);
        assert_int_equal(calls, 2);
        clockjump_get_stats(j, &st);
        assert_int_equal(st.jumps, 2);
        assert_true(st.slept_usec >= 7 * S - 10 && st.slept_usec <= 7 * S + 10);
        clockjump_free(j);
}

static void test_below_threshold(void **state) {
        ClockJump *j = new_jump();

        boot_extra += CLOCKJUMP_THRESHOLD_USEC / 2;
        clockjump_check(j);
        assert_int_equal(calls, 0);
        /* Measured from the last report, not from the last check: short
         * sleeps that add up past the threshold are reported once. */
        boot_extra += CLOCKJUMP_THRESHOLD_USEC / 2 + 10;
        clockjump_check(j);
        assert_int_equal(calls, 1);
        clockjump_free(j);
}

static void test_torn_reading_reports_nothing(void **state) {
        ClockJump *j = new_jump();

        /* Every reading torn by 10 ms: no reading at all, no report. A torn
         * reading taken at face value would look like a 5 ms suspend or a
         * clock running backwards. */
        tear = 1000;
        for (int i = 0; i < 10; i++)
                clockjump_check(j);
        assert_int_equal(calls, 0);
        /* The reading after a torn one is good: a real jump is seen. */
        tear = 1;
        boot_extra += 1 * S;
        clockjump_check(j);
        assert_int_equal(calls, 1);
        assert_true(last_slept >= 1 * S - 5 && last_slept <= 1 * S + 5);
        clockjump_free(j);
}

static void test_with_a_loop(void **state) {
        ClockJump *j = NULL;
        sd_event *e = NULL;

        /* The resume wake-up (a cancelled CLOCK_REALTIME timerfd) needs a
         * resume to fire: the vm-restore check suspends a real guest. Here:
         * it is created and torn down cleanly on a loop. */
        assert_int_equal(sd_event_new(&e), 0);
        assert_int_equal(clockjump_new(e, CLOCKJUMP_THRESHOLD_USEC, on_jump, NULL, &j), 0);
        assert_int_equal(sd_event_run(e, 0), 0);
        assert_int_equal(calls, 0);
        assert_null(clockjump_free(j));
        sd_event_unref(e);
        assert_int_equal(clockjump_new(NULL, 0, on_jump, NULL, &j), -EINVAL);
        assert_int_equal(clockjump_new(NULL, 1, NULL, NULL, &j), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_clocks_together, setup),
                cmocka_unit_test_setup(test_one_suspend_one_report, setup),
                cmocka_unit_test_setup(test_below_threshold, setup),
                cmocka_unit_test_setup(test_torn_reading_reports_nothing, setup),
                cmocka_unit_test_setup(test_with_a_loop, setup),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
