/* test-cusehub.c - the hub and its real device handlers, driven by a test
 * that plays both the kernel (fakekernel.h) and the loop: it calls
 * cusedev_process(), cusehub_pump() and cusehub_serve_backlog() itself, one
 * call per loop turn, so what a single turn answers is counted exactly,
 * with no threads and no timing.
 *
 * What it holds the hub to: no turn answers more than a bounded batch,
 * however many reads waited for the first seed (issue 12 review: all of
 * them at once stalled the loop past the watchdog in a slow guest); every
 * waiting read gets exactly one reply, an interrupted one EINTR; and the
 * before_request callback runs before every request a turn handles, inside
 * a drain too (issue 14 review: the VM fork and resume checks). */
#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cuse/cusedev.h"
#include "fakekernel.h"

#define READ_SIZE 131072U
#define PARKED 2000

/* Most seed-waiting reads one turn may answer. */
#define PER_TURN (CUSEHUB_BACKLOG_BYTES / READ_SIZE)

typedef struct Bench {
        Store *store;
        Crng *crng;
        Seeder *seeder;
        CuseHub *hub;
        CuseDev *dev;
        FakeKernel *fk;
        uint64_t fh;
        unsigned backlog_calls;
        unsigned before_calls;
} Bench;

static void on_backlog(void *userdata) {
        ((Bench *)userdata)->backlog_calls++;
}

static void on_before_request(void *userdata) {
        ((Bench *)userdata)->before_calls++;
}

/* One turn of the loop for the session: what on_cuse_io does. */
static void turn_process(Bench *b) {
        int r = cusedev_process(b->dev);
        assert_true(r == 0 || r == -EAGAIN);
}

/* name: a DEVNAME of its own, free even when an earlier test failed and
 * left its fake behind. */
static Bench *bench_new(CuseDevKind kind, const char *name) {
        static const uint8_t initial[CRNG_KEY_SIZE] = { 1 };
        Bench *b = calloc(1, sizeof(*b));
        CuseHubCallbacks cb = { .backlog = on_backlog, .before_request = on_before_request };
        CuseDevParams p = { .name = name, .uid = (uid_t)-1, .gid = (gid_t)-1, .mode = 0666 };
        FkInit init;
        FkMsg m;
        int64_t u;
        int fd;

        assert_non_null(b);
        cb.userdata = b;
        assert_int_equal(store_new(64, 16, &b->store), 0);
        assert_int_equal(crng_new(initial, 8192, &b->crng), 0);
        assert_int_equal(seeder_new(&(SeederParams){ 0 }, b->store, b->crng, &b->seeder), 0);
        assert_int_equal(cusehub_new(&(CuseHubParams){ .limits = { .max_parked = 4096,
                                                                    .max_parked_per_uid = 2048,
                                                                    .max_open_per_uid = 16,
                                                                    .max_dropin_open_per_uid = 16 } },
                                     b->store, b->crng, b->seeder, &cb, &b->hub),
                         0);
        assert_int_equal(fk_new(&b->fk, &fd), 0);
        assert_int_equal(cusedev_new(b->hub, kind, &p, fd, &fk_daemon_io, &b->dev), 0);
        u = fk_send_init(b->fk);
        assert_true(u > 0);
        turn_process(b);
        assert_int_equal(fk_init_await(b->fk, u, &init), 0);
        u = fk_send_open(b->fk, NULL, O_RDONLY);
        assert_true(u > 0);
        turn_process(b);
        assert_int_equal(fk_expect_reply(b->fk, (uint64_t)u, 0, &m), 0);
        assert_int_equal(m.error, 0);
        assert_int_equal(m.len, sizeof(struct fuse_open_out));
        b->fh = ((const struct fuse_open_out *)m.data)->fh;
        return b;
}

static void bench_free(Bench *b) {
        const char *last = NULL;

        cusehub_shutdown(b->hub, EIO);
        b->hub = cusehub_free(b->hub);
        /* The hub never sent the kernel anything it would reject, a second
         * reply to one request included. */
        if (fk_violations(b->fk, &last) != 0)
                fail_msg("the kernel would reject: %s", last);
        fk_free(b->fk);
        seeder_free(b->seeder);
        crng_free(b->crng);
        store_free(b->store);
        free(b);
}

/* A credited block in the store and the pump: the CRNG's first seed. */
static void first_seed(Bench *b) {
        uint8_t block[STORE_BLOCK_SIZE] = { 7 };

        assert_int_equal(store_put(b->store, block, 320000, 1, store_epoch(b->store)), 0);
        cusehub_pump(b->hub);
}

/* Takes every reply sent so far (the fake kernel holds them as they are
 * written) and marks which of u[] each answers: the number taken. */
static unsigned take_replies(Bench *b, const int64_t *u, unsigned *answered, int *error, size_t n) {
        unsigned count = 0;
        FkMsg m;

        while (fk_recv(b->fk, 0, &m) == 0) {
                if (m.kind != FK_MSG_REPLY)
                        continue;
                count++;
                for (size_t i = 0; i < n; i++) {
                        if ((int64_t)m.unique != u[i])
                                continue;
                        answered[i]++;
                        error[i] = m.error;
                        if (m.error == 0)
                                assert_int_equal(m.len, READ_SIZE);
                }
        }
        return count;
}

static void test_first_seed_answers_in_batches(void **state) {
        Bench *b = bench_new(CUSEDEV_RANDOM, "cusehub-test-seed");
        int64_t *u = calloc(PARKED + 1, sizeof(*u));
        unsigned *answered = calloc(PARKED + 1, sizeof(*answered));
        int *error = calloc(PARKED + 1, sizeof(*error));
        const int64_t last = PARKED - 1;
        unsigned turns = 0, n;
        bool more = true;

        assert_non_null(u);
        assert_non_null(answered);
        assert_non_null(error);
        /* 2000 reads of 128 KiB from four uids wait for the first seed. */
        for (int i = 0; i < PARKED; i++) {
                FkCaller c = { .uid = 1000 + (uint32_t)(i % 4), .gid = 100, .pid = (uint32_t)getpid() };

                u[i] = fk_send_read(b->fk, &c, b->fh, READ_SIZE, 0);
                assert_true(u[i] > 0);
                turn_process(b);
        }
        assert_int_equal(take_replies(b, u, answered, error, PARKED), 0);

        /* The turn that seeds answers at most a batch, and asks the loop
         * for more turns. */
        first_seed(b);
        n = take_replies(b, u, answered, error, PARKED);
        print_message("replies in the turn of the first seed: %u of %d\n", n, PARKED);
        assert_true(n <= PER_TURN);
        assert_true(b->backlog_calls >= 1);

        while (more) {
                more = cusehub_serve_backlog(b->hub);
                n = take_replies(b, u, answered, error, PARKED + 1);
                assert_true(n <= PER_TURN);
                turns++;
                if (turns == 10) {
                        /* Another request and an interrupt between the
                         * batches: the request is answered at once, and the
                         * last waiting read gets EINTR, its only reply. */
                        FkCaller other = { .uid = 2000, .gid = 100, .pid = (uint32_t)getpid() };

                        assert_int_equal(answered[last], 0);
                        assert_true(fk_waiting(b->fk, (uint64_t)u[last]));
                        assert_true(fk_send_interrupt(b->fk, (uint64_t)u[last]) > 0);
                        u[PARKED] = fk_send_read(b->fk, &other, b->fh, READ_SIZE, 0);
                        b->before_calls = 0;
                        turn_process(b);
                        assert_int_equal(b->before_calls, 2);
                        n = take_replies(b, u, answered, error, PARKED + 1);
                        /* The interrupt, the new read, and one batch. */
                        assert_true(n <= PER_TURN + 2);
                        assert_int_equal(answered[last], 1);
                        assert_int_equal(error[last], -EINTR);
                        assert_int_equal(answered[PARKED], 1);
                        assert_int_equal(error[PARKED], 0);
                        more = true;
                }
        }
        print_message("turns after the seed: %u, at most %u replies each\n", turns, (unsigned)PER_TURN);
        assert_true(turns >= (PARKED - 1 - PER_TURN) / PER_TURN);
        for (int i = 0; i < PARKED; i++) {
                assert_int_equal(answered[i], 1);
                assert_int_equal(error[i], i == last ? -EINTR : 0);
        }
        free(u);
        free(answered);
        free(error);
        bench_free(b);
}

/* A long read's later request (offset > 0) makes cusedev_process() read on
 * while the session has requests queued: 1 + CUSEDEV_DRAIN_MAX requests in
 * one call, and before_request before each. */
static void test_before_request_in_a_drain(void **state) {
        Bench *b = bench_new(CUSEDEV_RANDOM, "cusehub-test-drain");
        struct fuse_read_in in = { .fh = b->fh, .offset = READ_SIZE, .size = READ_SIZE };
        int64_t u[1 + CUSEDEV_DRAIN_MAX];
        unsigned answered[1 + CUSEDEV_DRAIN_MAX] = { 0 };
        int error[1 + CUSEDEV_DRAIN_MAX];

        first_seed(b);
        u[0] = fk_send(b->fk, FUSE_READ, NULL, 0, &in, sizeof(in));
        assert_true(u[0] > 0);
        for (int i = 1; i <= CUSEDEV_DRAIN_MAX; i++) {
                u[i] = fk_send_read(b->fk, NULL, b->fh, READ_SIZE, 0);
                assert_true(u[i] > 0);
        }
        b->before_calls = 0;
        turn_process(b);
        print_message("requests handled in one call: %d, before_request calls: %u\n", 1 + CUSEDEV_DRAIN_MAX,
                      b->before_calls);
        assert_int_equal(b->before_calls, 1 + CUSEDEV_DRAIN_MAX);
        /* The drain read them all; the deferred one is answered too. */
        assert_int_equal(take_replies(b, u, answered, error, 1 + CUSEDEV_DRAIN_MAX), 1 + CUSEDEV_DRAIN_MAX);
        for (int i = 0; i <= CUSEDEV_DRAIN_MAX; i++)
                assert_int_equal(answered[i], 1);
        bench_free(b);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_first_seed_answers_in_batches),
                cmocka_unit_test(test_before_request_in_a_drain),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
