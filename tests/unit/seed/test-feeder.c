/* test-feeder.c - the kernel seeder's schedule and feed, with injected
 * time and a fake daemon, device and kernel:
 *   - boot: nothing is fed before the daemon serves; the refusal is
 *     reported once, not at every poll; the first serving look feeds;
 *   - interval: nothing before last feed + interval, a feed at it;
 *   - a VM generation change or a resume the daemon counted feeds at the
 *     next look, even between intervals; one seen while not serving stays
 *     due; a restarted daemon's counters starting anew feed nothing;
 *   - a feed: each block read once, given with 8 bits per byte, then one
 *     reseed; a failed read refuses (nothing given), a refused ioctl is a
 *     failure; a failed reseed after the blocks went in still moves the
 *     schedule on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "seed/feeder.h"

#define S USEC_PER_SEC
#define INTERVAL (600 * S)
#define ADDS_MAX 64

static struct {
        int status_error;
        SeedStatus status;
        int read_error;            /* < 0: every read fails */
        unsigned read_fail_at;     /* > 0: the read of this number (1-based) fails */
        unsigned reads;
        uint8_t next_byte;         /* each block read is filled with a new byte */
        int add_error;
        unsigned adds;
        uint8_t added[ADDS_MAX];   /* the fill of each block given */
        size_t added_size[ADDS_MAX];
        unsigned added_bits[ADDS_MAX];
        int reseed_error;
        unsigned reseeds;
} fake;

static int fake_status(void *userdata, SeedStatus *ret) {
        if (fake.status_error < 0)
                return fake.status_error;
        *ret = fake.status;
        return 0;
}

static int fake_read(void *userdata, uint8_t *buf, size_t n) {
        fake.reads++;
        if (fake.read_error < 0 || fake.reads == fake.read_fail_at)
                return fake.read_error < 0 ? fake.read_error : -ECONNABORTED;
        memset(buf, ++fake.next_byte, n);
        return 0;
}

static int fake_add(void *userdata, const uint8_t *buf, size_t n, unsigned bits) {
        if (fake.add_error < 0)
                return fake.add_error;
        assert_true(fake.adds < ADDS_MAX);
        for (size_t i = 1; i < n; i++)
                assert_int_equal(buf[i], buf[0]);
        fake.added[fake.adds] = buf[0];
        fake.added_size[fake.adds] = n;
        fake.added_bits[fake.adds] = bits;
        fake.adds++;
        return 0;
}

static int fake_reseed(void *userdata) {
        fake.reseeds++;
        return fake.reseed_error;
}

static const FeederOps ops = { fake_status, fake_read, fake_add, fake_reseed };

static void serving(bool on) {
        fake.status.serving = on;
        snprintf(fake.status.why, sizeof(fake.status.why), "%s", on ? "" : "truerandomd is starting");
}

static int setup(void **state) {
        Feeder *s = NULL;

        memset(&fake, 0, sizeof(fake));
        serving(true);
        assert_int_equal(feeder_new(INTERVAL, 1, &ops, NULL, &s), 0);
        *state = s;
        return 0;
}

static int teardown(void **state) {
        feeder_free(*state);
        return 0;
}

static FeedOutcome step(void **state, usec_t now) {
        FeedOutcome o;

        feeder_step(*state, now, &o);
        return o;
}

/* Fed at boot, at 100 s. */
static void boot(void **state) {
        FeedOutcome o = step(state, 100 * S);

        assert_int_equal(o.result, FEED_RESULT_FED);
        assert_int_equal(o.reason, FEED_REASON_BOOT);
}

static void test_boot_waits_for_serving(void **state) {
        FeedOutcome o;

        serving(false);
        o = step(state, 1 * S);
        assert_int_equal(o.result, FEED_RESULT_REFUSED);
        assert_int_equal(o.reason, FEED_REASON_BOOT);
        assert_string_equal(o.stage, "status");
        assert_string_equal(o.why, "truerandomd is starting");
        assert_false(o.repeated);
        o = step(state, 6 * S);
        assert_int_equal(o.result, FEED_RESULT_REFUSED);
        assert_true(o.repeated);
        /* Nothing else was fed meanwhile, nor read. */
        assert_int_equal(fake.reads, 0);
        assert_int_equal(fake.adds, 0);
        assert_int_equal(fake.reseeds, 0);
        assert_int_equal(feeder_next_due(*state), USEC_INFINITY);

        serving(true);
        o = step(state, 11 * S);
        assert_int_equal(o.result, FEED_RESULT_FED);
        assert_int_equal(o.reason, FEED_REASON_BOOT);
        assert_int_equal(o.blocks, 1);
        assert_int_equal(o.bits, 256);
        assert_int_equal(fake.adds, 1);
        assert_int_equal(fake.added_size[0], 32);
        assert_int_equal(fake.added_bits[0], 256);
        assert_int_equal(fake.reseeds, 1);
        assert_int_equal(feeder_next_due(*state), 11 * S + INTERVAL);
}

static void test_interval(void **state) {
        boot(state);
        for (usec_t t = 105 * S; t < 100 * S + INTERVAL; t += 5 * S)
                assert_int_equal(step(state, t).result, FEED_RESULT_IDLE);
        assert_int_equal(step(state, 100 * S + INTERVAL - 1).result, FEED_RESULT_IDLE);
        assert_int_equal(fake.reads, 1);
        FeedOutcome o = step(state, 100 * S + INTERVAL);
        assert_int_equal(o.result, FEED_RESULT_FED);
        assert_int_equal(o.reason, FEED_REASON_INTERVAL);
        assert_int_equal(fake.reads, 2);
        assert_int_equal(fake.reseeds, 2);
        assert_int_equal(feeder_next_due(*state), 100 * S + 2 * INTERVAL);
        /* A late look (a long sleep) feeds once and counts from then. */
        o = step(state, 100 * S + 5 * INTERVAL);
        assert_int_equal(o.reason, FEED_REASON_INTERVAL);
        assert_int_equal(feeder_next_due(*state), 100 * S + 6 * INTERVAL);
}

static void test_vm_generation_and_resume(void **state) {
        FeedOutcome o;

        fake.status.vm_generation_changes = 3;
        fake.status.resumes = 7;
        boot(state);
        /* Counters as they were: nothing. */
        assert_int_equal(step(state, 105 * S).result, FEED_RESULT_IDLE);
        fake.status.vm_generation_changes = 4;
        o = step(state, 110 * S);
        assert_int_equal(o.result, FEED_RESULT_FED);
        assert_int_equal(o.reason, FEED_REASON_VM_GENERATION);
        assert_int_equal(step(state, 115 * S).result, FEED_RESULT_IDLE);
        fake.status.resumes = 8;
        o = step(state, 120 * S);
        assert_int_equal(o.result, FEED_RESULT_FED);
        assert_int_equal(o.reason, FEED_REASON_RESUME);
        /* The interval counts from the last feed, whatever its reason. */
        assert_int_equal(feeder_next_due(*state), 120 * S + INTERVAL);
        assert_int_equal(fake.reseeds, 3);
}

static void test_event_while_not_serving(void **state) {
        FeedOutcome o;

        boot(state);
        serving(false);
        fake.status.vm_generation_changes = 1;
        o = step(state, 110 * S);
        assert_int_equal(o.result, FEED_RESULT_REFUSED);
        assert_int_equal(o.reason, FEED_REASON_VM_GENERATION);
        assert_int_equal(fake.reads, 1);
        serving(true);
        o = step(state, 115 * S);
        assert_int_equal(o.result, FEED_RESULT_FED);
        assert_int_equal(o.reason, FEED_REASON_VM_GENERATION);
}

static void test_daemon_restart_counts_anew(void **state) {
        fake.status.vm_generation_changes = 2;
        fake.status.resumes = 2;
        boot(state);
        fake.status.vm_generation_changes = 0;
        fake.status.resumes = 0;
        assert_int_equal(step(state, 105 * S).result, FEED_RESULT_IDLE);
        fake.status.resumes = 1;
        assert_int_equal(step(state, 110 * S).reason, FEED_REASON_RESUME);
}

static void test_daemon_unreachable(void **state) {
        FeedOutcome o;

        fake.status_error = -ECONNREFUSED;
        o = step(state, 1 * S);
        assert_int_equal(o.result, FEED_RESULT_REFUSED);
        assert_string_equal(o.stage, "daemon");
        assert_int_equal(o.error, -ECONNREFUSED);
        assert_int_equal(fake.reads, 0);
        fake.status_error = 0;
        boot(state);
        /* Nothing due: an unreachable daemon is nothing to report. */
        fake.status_error = -ENOENT;
        assert_int_equal(step(state, 105 * S).result, FEED_RESULT_IDLE);
}

static void test_read_fails(void **state) {
        FeedOutcome o;

        fake.read_error = -EIO;
        o = step(state, 1 * S);
        assert_int_equal(o.result, FEED_RESULT_REFUSED);
        assert_string_equal(o.stage, "read");
        assert_int_equal(o.error, -EIO);
        assert_int_equal(fake.adds, 0);
        assert_int_equal(fake.reseeds, 0);
        /* Still due: the next look tries again. */
        fake.read_error = 0;
        o = step(state, 6 * S);
        assert_int_equal(o.result, FEED_RESULT_FED);
        assert_int_equal(o.reason, FEED_REASON_BOOT);
}

static void test_add_fails(void **state) {
        FeedOutcome o;

        fake.add_error = -EPERM;
        o = step(state, 1 * S);
        assert_int_equal(o.result, FEED_RESULT_FAILED);
        assert_string_equal(o.stage, "add");
        assert_false(o.repeated);
        assert_int_equal(fake.reseeds, 0);
        o = step(state, 6 * S);
        assert_true(o.repeated);
        assert_int_equal(feeder_next_due(*state), USEC_INFINITY);
}

static void test_reseed_fails(void **state) {
        FeedOutcome o;

        fake.reseed_error = -ENODATA;
        o = step(state, 1 * S);
        assert_int_equal(o.result, FEED_RESULT_FAILED);
        assert_string_equal(o.stage, "reseed");
        assert_int_equal(fake.adds, 1);
        /* The block is in the kernel's pool: the schedule moves on. */
        assert_int_equal(feeder_next_due(*state), 1 * S + INTERVAL);
        assert_int_equal(step(state, 6 * S).result, FEED_RESULT_IDLE);
}

static void test_blocks(void **state) {
        Feeder *s = NULL;
        FeedOutcome o;

        assert_int_equal(feeder_new(INTERVAL, 4, &ops, NULL, &s), 0);
        feeder_step(s, 1 * S, &o);
        assert_int_equal(o.result, FEED_RESULT_FED);
        assert_int_equal(o.blocks, 4);
        assert_int_equal(o.bits, 1024);
        assert_int_equal(fake.reseeds, 1);
        /* Each block read once and given once, in order. */
        for (unsigned i = 0; i < 4; i++)
                assert_int_equal(fake.added[i], i + 1);
        /* A read failing after two blocks: those two stay given. */
        fake.read_fail_at = 7;
        feeder_step(s, 1 * S + INTERVAL, &o);
        assert_int_equal(o.result, FEED_RESULT_FED);
        assert_int_equal(o.blocks, 2);
        assert_int_equal(fake.adds, 6);
        assert_int_equal(fake.reseeds, 2);
        feeder_free(s);
}

static void test_new_checks(void **state) {
        Feeder *s = NULL;

        assert_int_equal(feeder_new(0, 1, &ops, NULL, &s), -EINVAL);
        assert_int_equal(feeder_new(INTERVAL, 0, &ops, NULL, &s), -EINVAL);
        assert_int_equal(feeder_new(INTERVAL, 17, &ops, NULL, &s), -EINVAL);
        assert_null(s);
        assert_null(feeder_free(NULL));
        assert_string_equal(feed_reason_to_string(FEED_REASON_VM_GENERATION), "vm-generation-change");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_boot_waits_for_serving, setup, teardown),
                cmocka_unit_test_setup_teardown(test_interval, setup, teardown),
                cmocka_unit_test_setup_teardown(test_vm_generation_and_resume, setup, teardown),
                cmocka_unit_test_setup_teardown(test_event_while_not_serving, setup, teardown),
                cmocka_unit_test_setup_teardown(test_daemon_restart_counts_anew, setup, teardown),
                cmocka_unit_test_setup_teardown(test_daemon_unreachable, setup, teardown),
                cmocka_unit_test_setup_teardown(test_read_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_add_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reseed_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_blocks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_new_checks, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
