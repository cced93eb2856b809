/* test-capture.c - capture_run() as an assessment relies on it: rows x
 * samples to the sink in row order, each row from a freshly opened source, every open
 * closed again whatever happens; a source with nothing now is waited for
 * and one that stays silent ends the capture (-ETIMEDOUT); a few device
 * errors in a row are ridden out, CAPTURE_ERRORS_MAX are not; the end of
 * a file, a failing open and a refusal from the progress callback come
 * straight up. Time is faked by wrapping clock_nanosleep() and
 * clock_gettime(), so the backoffs cost nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool/capture.h"

/* ---- fake time --------------------------------------------------------- */

static bool fake_time;
static uint64_t fake_ns, sleeps;

int __real_clock_gettime(clockid_t clock, struct timespec *ts);
int __wrap_clock_gettime(clockid_t clock, struct timespec *ts);
int __wrap_clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem);

int __wrap_clock_gettime(clockid_t clock, struct timespec *ts) {
        if (!fake_time)
                return __real_clock_gettime(clock, ts);
        ts->tv_sec = (time_t) (fake_ns / 1000000000U);
        ts->tv_nsec = (long) (fake_ns % 1000000000U);
        return 0;
}

int __wrap_clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem) {
        sleeps++;
        fake_ns += (uint64_t) req->tv_sec * 1000000000U + (uint64_t) req->tv_nsec;
        return 0;
}

/* ---- a scripted source ---------------------------------------------------- */

/* Each open is an instance numbered from 1; a read fills with that number,
 * unless the script says otherwise for read number i (counted over all
 * instances). */
static struct {
        int open_error;          /* open fails with it from open number open_fail_at */
        unsigned open_fail_at;
        unsigned opens, closes, reads;
        int script[64];          /* 0: data; else the read's -errno */
        ssize_t too_many_at;     /* > 0: that read claims one sample more than asked */
        int forever;             /* every read from number forever_from on returns it (0: data) */
        unsigned forever_from;
} src;

static int fake_open(const SourceParams *p, void **ret) {
        src.opens++;
        if (src.open_error && src.opens >= src.open_fail_at)
                return src.open_error;
        *ret = (void *) (uintptr_t) src.opens;
        return 0;
}

static ssize_t fake_read(void *state, uint8_t *buf, size_t n) {
        unsigned i = src.reads++;
        int what = src.forever_from && i >= src.forever_from ? src.forever : i < 64 ? src.script[i] : 0;

        if (what < 0)
                return what;
        if (src.too_many_at > 0 && (ssize_t) i + 1 == src.too_many_at)
                return (ssize_t) n + 1;
        n = n > 1000 ? 1000 : n;  /* short reads, as a device gives them */
        memset(buf, (int) (uintptr_t) state, n);
        return (ssize_t) n;
}

static void fake_close(void *state) {
        src.closes++;
}

static const SourceOps fake_ops = {
        .name = "fake",
        .open = fake_open,
        .read = fake_read,
        .close = fake_close,
};

static int setup(void **state) {
        memset(&src, 0, sizeof(src));
        fake_time = true;
        fake_ns = 1000000000U;
        sleeps = 0;
        return 0;
}

static int teardown(void **state) {
        fake_time = false;
        return 0;
}

/* ---- progress --------------------------------------------------------- */

typedef struct Progress {
        uint8_t *buf;            /* where the samples go */
        uint64_t last, total, calls;
        bool monotonic;
        uint64_t stop_after;     /* refuse once done reaches it (0: never) */
} Progress;

static int on_progress(void *userdata, const uint8_t *samples, size_t n, uint64_t done, uint64_t total) {
        Progress *p = userdata;

        if (p->buf)
                capture_to_buffer(p->buf, samples, n, done, total);
        p->monotonic = p->monotonic && done >= p->last && done <= total;
        p->last = done;
        p->total = total;
        p->calls++;
        return p->stop_after && done >= p->stop_after ? -ECANCELED : 0;
}

/* ---- tests ----------------------------------------------------------------- */

static void test_rows_reopen(void **state) {
        uint8_t buf[3 * 2500];
        Progress p = { .buf = buf, .monotonic = true };

        assert_int_equal(capture_run(&fake_ops, NULL, 2500, 3, on_progress, &p), 0);
        assert_int_equal(src.opens, 3);
        assert_int_equal(src.closes, 3);
        for (unsigned row = 0; row < 3; row++)
                for (size_t i = 0; i < 2500; i++)
                        assert_int_equal(buf[row * 2500 + i], row + 1);
        assert_true(p.monotonic);
        assert_int_equal(p.last, 7500);
        assert_int_equal(p.total, 7500);
        assert_int_equal(sleeps, 0);
}

static void test_waits_for_a_quiet_source(void **state) {
        uint8_t buf[3000];

        src.script[0] = src.script[1] = src.script[2] = -EAGAIN;
        assert_int_equal(capture_run(&fake_ops, NULL, sizeof(buf), 1, capture_to_buffer, buf), 0);
        assert_int_equal(sleeps, 3);
        /* 10 + 20 + 40 ms: backing off, not spinning. */
        assert_int_equal(fake_ns - 1000000000U, 70000000U);
        assert_int_equal(buf[2999], 1);
}

static void test_stall_ends_it(void **state) {
        uint8_t buf[3000];

        src.forever = -EAGAIN;
        src.forever_from = 1;
        src.script[0] = -EAGAIN;
        assert_int_equal(capture_run(&fake_ops, NULL, sizeof(buf), 1, capture_to_buffer, buf), -ETIMEDOUT);
        assert_true(fake_ns - 1000000000U >= (uint64_t) CAPTURE_STALL_USEC * 1000U);
        assert_true(fake_ns - 1000000000U < (uint64_t) (CAPTURE_STALL_USEC + 2U * USEC_PER_SEC) * 1000U);
        assert_int_equal(src.closes, src.opens);
}

static void test_device_errors(void **state) {
        uint8_t buf[3000];

        /* Fewer than the limit in a row, twice: ridden out. */
        for (unsigned i = 0; i < CAPTURE_ERRORS_MAX - 1; i++)
                src.script[i] = src.script[i + CAPTURE_ERRORS_MAX] = -EIO;
        assert_int_equal(capture_run(&fake_ops, NULL, sizeof(buf), 1, capture_to_buffer, buf), 0);

        setup(state);
        for (unsigned i = 0; i < CAPTURE_ERRORS_MAX; i++)
                src.script[i + 1] = -EIO;
        assert_int_equal(capture_run(&fake_ops, NULL, sizeof(buf), 1, capture_to_buffer, buf), -EIO);
        assert_int_equal(src.reads, CAPTURE_ERRORS_MAX + 1);
        assert_int_equal(src.closes, 1);
}

static void test_end_and_open_errors(void **state) {
        uint8_t buf[4 * 1000];

        src.script[2] = -ENODATA;
        assert_int_equal(capture_run(&fake_ops, NULL, 4000, 1, capture_to_buffer, buf), -ENODATA);
        assert_int_equal(src.closes, 1);

        setup(state);
        src.open_error = -ENODEV;
        src.open_fail_at = 1;
        assert_int_equal(capture_run(&fake_ops, NULL, 1000, 4, capture_to_buffer, buf), -ENODEV);
        assert_int_equal(src.closes, 0);

        /* A restart whose reopen fails: the rows before it were closed. */
        setup(state);
        src.open_error = -EBUSY;
        src.open_fail_at = 3;
        assert_int_equal(capture_run(&fake_ops, NULL, 1000, 4, capture_to_buffer, buf), -EBUSY);
        assert_int_equal(src.closes, 2);

        setup(state);
        src.too_many_at = 2;
        assert_int_equal(capture_run(&fake_ops, NULL, 4000, 1, capture_to_buffer, buf), -EIO);
}

static void test_cancel(void **state) {
        uint8_t buf[10 * 1000];
        Progress p = { .buf = buf, .monotonic = true, .stop_after = 3000 };

        assert_int_equal(capture_run(&fake_ops, NULL, 1000, 10, on_progress, &p), -ECANCELED);
        assert_int_equal(p.last, 3000);
        assert_int_equal(src.opens, 3);
        assert_int_equal(src.closes, 3);

        /* A quiet source: the callback hears of every backoff too, so a
         * caller can stop a capture that waits. */
        setup(state);
        src.forever = -EAGAIN;
        src.forever_from = 1;
        src.script[0] = -EAGAIN;
        p = (Progress){ .monotonic = true };
        assert_int_equal(capture_run(&fake_ops, NULL, 1000, 1, on_progress, &p), -ETIMEDOUT);
        assert_true(p.calls > 5);
}

static int refuse_at_once(void *userdata, const uint8_t *samples, size_t n, uint64_t done, uint64_t total) {
        return -ECANCELED;
}

static void test_cancel_while_waiting(void **state) {
        uint8_t buf[1000];

        src.forever = -EAGAIN;
        src.forever_from = 1;
        src.script[0] = -EAGAIN;
        assert_int_equal(capture_run(&fake_ops, NULL, sizeof(buf), 1, refuse_at_once, NULL), -ECANCELED);
        assert_int_equal(sleeps, 1);
        assert_int_equal(src.closes, 1);
}

static void test_bad_arguments(void **state) {
        uint8_t buf[16];

        assert_int_equal(capture_run(NULL, NULL, 16, 1, capture_to_buffer, buf), -EINVAL);
        assert_int_equal(capture_run(&fake_ops, NULL, 16, 1, NULL, NULL), -EINVAL);
        assert_int_equal(capture_run(&fake_ops, NULL, 0, 1, capture_to_buffer, buf), -EINVAL);
        assert_int_equal(capture_run(&fake_ops, NULL, 16, 0, capture_to_buffer, buf), -EINVAL);
        assert_int_equal(capture_run(&fake_ops, NULL, UINT64_MAX / 2, 3, capture_to_buffer, buf), -EINVAL);
        assert_int_equal(src.opens, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_rows_reopen, setup, teardown),
                cmocka_unit_test_setup_teardown(test_waits_for_a_quiet_source, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stall_ends_it, setup, teardown),
                cmocka_unit_test_setup_teardown(test_device_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_end_and_open_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cancel_while_waiting, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
