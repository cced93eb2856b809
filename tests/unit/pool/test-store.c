/* test-store.c - FIFO order, bounds, erase-on-take, purge, accounting and
 * the collectors' demand protocol. Blocking is checked with a waiter thread
 * and a flag: a short timeout shows "has not returned", a long one bounds
 * "returns" so a broken store fails instead of hanging. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "pool/store.h"

#define CREDIT 320000U

static void make_block(uint8_t block[static STORE_BLOCK_SIZE], unsigned tag) {
        for (unsigned i = 0; i < STORE_BLOCK_SIZE; i++)
                block[i] = (uint8_t) (tag * 31 + i);
}

static void put_tagged(Store *s, unsigned tag, unsigned source_id) {
        uint8_t block[STORE_BLOCK_SIZE];

        make_block(block, tag);
        assert_int_equal(store_put(s, block, CREDIT, source_id, store_epoch(s)), 0);
}

static void take_expect(Store *s, unsigned tag) {
        uint8_t block[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];

        make_block(expected, tag);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
        assert_memory_equal(block, expected, STORE_BLOCK_SIZE);
}

static void take_expect_empty(Store *s) {
        uint8_t block[STORE_BLOCK_SIZE], untouched[STORE_BLOCK_SIZE];

        memset(block, 0xee, sizeof(block));
        memset(untouched, 0xee, sizeof(untouched));
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), -ENODATA);
        assert_memory_equal(block, untouched, STORE_BLOCK_SIZE);
}

static void test_fifo_and_bounds(void **state) {
        uint8_t block[STORE_BLOCK_SIZE];
        Store *s;

        assert_int_equal(store_new(4, 1, &s), 0);
        take_expect_empty(s);
        for (unsigned i = 0; i < 4; i++)
                put_tagged(s, i, 1);
        make_block(block, 99);
        assert_int_equal(store_put(s, block, CREDIT, 1, store_epoch(s)), -ENOSPC);
        assert_int_equal(store_fill(s), 4);

        /* Wrap around the ring: take two, put two, order still holds. */
        take_expect(s, 0);
        take_expect(s, 1);
        put_tagged(s, 4, 1);
        put_tagged(s, 5, 1);
        for (unsigned i = 2; i < 6; i++)
                take_expect(s, i);
        take_expect_empty(s);
        store_free(s);
}

static void test_taken_once(void **state) {
        uint8_t a[STORE_BLOCK_SIZE], b[STORE_BLOCK_SIZE];
        Store *s;

        /* With one slot, a second take must not hand the same block out
         * again, and the slot must not leak it into a later take. */
        assert_int_equal(store_new(1, 0, &s), 0);
        put_tagged(s, 1, 1);
        assert_int_equal(store_take(s, a, 32), 0);
        take_expect_empty(s);
        put_tagged(s, 2, 1);
        assert_int_equal(store_take(s, b, 32), 0);
        assert_memory_not_equal(a, b, STORE_BLOCK_SIZE);
        take_expect_empty(s);
        store_free(s);
}

static void test_invalid(void **state) {
        uint8_t block[STORE_BLOCK_SIZE] = { 0 };
        Store *s = NULL;

        assert_int_equal(store_new(0, 0, &s), -EINVAL);
        assert_int_equal(store_new(4, 4, &s), -EINVAL);
        assert_null(s);

        assert_int_equal(store_new(4, 1, &s), 0);
        assert_int_equal(store_put(s, block, CREDIT - 1, 1, store_epoch(s)), -EINVAL);
        assert_int_equal(store_fill(s), 0);
        put_tagged(s, 1, 1);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE + 1), -EINVAL);
        assert_int_equal(store_fill(s), 1);
        store_free(s);
}

static void test_purge(void **state) {
        StoreStats st;
        Store *s;

        assert_int_equal(store_new(4, 1, &s), 0);
        /* Move the head off slot 0 so compaction crosses the ring's end. */
        put_tagged(s, 100, 9);
        put_tagged(s, 101, 9);
        put_tagged(s, 102, 9);
        take_expect(s, 100);
        take_expect(s, 101);
        put_tagged(s, 1, 1);
        put_tagged(s, 2, 2);
        put_tagged(s, 3, 1);

        assert_int_equal(store_purge(s, 1), 2);
        assert_int_equal(store_purge(s, 1), 0);
        assert_int_equal(store_fill(s), 2);
        put_tagged(s, 4, 3);
        put_tagged(s, 5, 1);
        take_expect(s, 102);
        take_expect(s, 2);
        take_expect(s, 4);
        take_expect(s, 5);
        take_expect_empty(s);

        store_get_stats(s, &st);
        assert_int_equal(st.blocks_purged, 2);
        store_free(s);
}

static void test_accounting(void **state) {
        uint8_t block[STORE_BLOCK_SIZE];
        StoreStats st;
        Store *s;

        assert_int_equal(store_new(8, 2, &s), 0);
        make_block(block, 1);
        assert_int_equal(store_put(s, block, 320000, 1, store_epoch(s)), 0);
        assert_int_equal(store_put(s, block, 400000, 2, store_epoch(s)), 0);
        assert_int_equal(store_put(s, block, 320100, 1, store_epoch(s)), 0);
        assert_int_equal(store_put(s, block, 330000, 3, store_epoch(s)), 0);

        assert_int_equal(store_take(s, block, 32), 0);  /* reader, 320000 */
        assert_int_equal(store_take(s, block, 0), 0);   /* CRNG seed, 400000 */
        assert_int_equal(store_take(s, block, 10), 0);  /* reader, 320100 */
        assert_int_equal(store_purge(s, 3), 1);

        store_get_stats(s, &st);
        assert_int_equal(st.fill, 0);
        assert_int_equal(st.capacity, 8);
        assert_int_equal(st.blocks_in, 4);
        assert_int_equal(st.blocks_served, 2);
        assert_int_equal(st.blocks_seeded, 1);
        assert_int_equal(st.blocks_purged, 1);
        assert_int_equal(st.blocks_in, st.blocks_served + st.blocks_seeded + st.blocks_purged + st.fill);
        assert_int_equal(st.credited_mbits_in, 320000 + 400000 + 320100 + 330000);
        assert_int_equal(st.credited_mbits_taken, 320000 + 320100);
        assert_int_equal(st.bytes_served, 42);
        assert_true(st.bytes_served * 8 * 1000 * 5 <= st.credited_mbits_taken * 4);
        store_free(s);
}

/* A clone's purge: every stored block goes, whatever its source; what was
 * served stays accounted, and the store refills from new blocks only. */
static void test_purge_all(void **state) {
        uint8_t block[STORE_BLOCK_SIZE];
        StoreStats before, st;
        Store *s;

        assert_int_equal(store_new(4, 1, &s), 0);
        assert_int_equal(store_purge_all(s), 0);
        /* Head off slot 0, then a full ring that wraps: 7, 8 | 9, 10. */
        for (unsigned i = 0; i < 4; i++)
                put_tagged(s, i, i % 2);
        assert_int_equal(store_take(s, block, 32), 0);  /* reader */
        assert_int_equal(store_take(s, block, 0), 0);   /* CRNG seed */
        assert_int_equal(store_take(s, block, 5), 0);   /* reader, short */
        put_tagged(s, 7, 1);
        put_tagged(s, 8, 2);
        put_tagged(s, 9, 3);
        assert_int_equal(store_fill(s), 4);
        /* Full: collectors rest. */
        assert_false(store_has_demand(s));
        store_get_stats(s, &before);

        assert_int_equal(store_purge_all(s), 4);
        assert_int_equal(store_fill(s), 0);
        take_expect_empty(s);
        /* Emptied: collectors are wanted again. */
        assert_true(store_has_demand(s));

        store_get_stats(s, &st);
        assert_int_equal(st.blocks_purged, before.blocks_purged + 4);
        assert_int_equal(st.blocks_in, before.blocks_in);
        assert_int_equal(st.blocks_served, 2);
        assert_int_equal(st.blocks_seeded, 1);
        assert_int_equal(st.bytes_served, 37);
        assert_int_equal(st.credited_mbits_taken, before.credited_mbits_taken);
        assert_int_equal(st.blocks_in, st.blocks_served + st.blocks_seeded + st.blocks_purged + st.fill);
        assert_true(st.bytes_served * 8 * 1000 * 5 <= st.credited_mbits_taken * 4);

        /* New blocks only, in order, across the ring's end; and serving
         * them keeps the invariant (store_take() aborts otherwise). */
        for (unsigned i = 20; i < 24; i++)
                put_tagged(s, i, 1);
        for (unsigned i = 20; i < 24; i++)
                take_expect(s, i);
        take_expect_empty(s);
        store_get_stats(s, &st);
        assert_int_equal(st.blocks_in, st.blocks_served + st.blocks_seeded + st.blocks_purged + st.fill);
        assert_true(st.bytes_served * 8 * 1000 * 5 <= st.credited_mbits_taken * 4);
        store_free(s);
}

/* A block begun before a purge_all is refused when it is finished after
 * it: its samples may be the other copy's too. */
static void test_put_after_purge_all_is_stale(void **state) {
        uint8_t block[STORE_BLOCK_SIZE];
        uint64_t before;
        StoreStats st;
        Store *s;

        assert_int_equal(store_new(4, 1, &s), 0);
        before = store_epoch(s);
        make_block(block, 1);
        assert_int_equal(store_put(s, block, CREDIT, 1, before), 0);
        assert_int_equal(store_purge_all(s), 1);
        assert_int_equal(store_epoch(s), before + 1);
        assert_int_equal(store_put(s, block, CREDIT, 1, before), -ESTALE);
        assert_int_equal(store_fill(s), 0);
        store_get_stats(s, &st);
        assert_int_equal(st.blocks_in, 1);
        assert_int_equal(st.credited_mbits_in, CREDIT);
        /* A source purge is no such event. */
        assert_int_equal(store_purge(s, 1), 0);
        assert_int_equal(store_epoch(s), before + 1);
        put_tagged(s, 2, 1);
        take_expect(s, 2);
        store_free(s);
}

typedef struct Waiter {
        Store *store;
        unsigned source_id;
        bool testing;
        uint64_t kicks; /* store_kicks() when it started */
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool done;
        int r;
} Waiter;

static void *waiter_run(void *p) {
        Waiter *w = p;
        int r = store_wait_for_demand(w->store, w->source_id, w->testing, w->kicks);

        pthread_mutex_lock(&w->lock);
        w->r = r;
        w->done = true;
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->lock);
        return NULL;
}

/* testing: a collector whose source owes a health test. */
static void waiter_start_for(Waiter *w, Store *s, unsigned source_id, bool testing) {
        pthread_condattr_t attr;

        *w = (Waiter) { .store = s, .source_id = source_id, .testing = testing, .kicks = store_kicks(s) };
        assert_int_equal(pthread_mutex_init(&w->lock, NULL), 0);
        assert_int_equal(pthread_condattr_init(&attr), 0);
        assert_int_equal(pthread_condattr_setclock(&attr, CLOCK_MONOTONIC), 0);
        assert_int_equal(pthread_cond_init(&w->cond, &attr), 0);
        pthread_condattr_destroy(&attr);
        assert_int_equal(pthread_create(&w->thread, NULL, waiter_run, w), 0);
}

static void waiter_start(Waiter *w, Store *s, bool testing) {
        waiter_start_for(w, s, 1, testing);
}

/* Whether the waiter returned within ms milliseconds. */
static bool waiter_returned(Waiter *w, long ms) {
        struct timespec deadline;
        bool done;

        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += ms / 1000;
        deadline.tv_nsec += (ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000L;
        }

        pthread_mutex_lock(&w->lock);
        while (!w->done)
                if (pthread_cond_timedwait(&w->cond, &w->lock, &deadline) == ETIMEDOUT)
                        break;
        done = w->done;
        pthread_mutex_unlock(&w->lock);
        return done;
}

static int waiter_join(Waiter *w) {
        assert_true(waiter_returned(w, 30000));
        assert_int_equal(pthread_join(w->thread, NULL), 0);
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
        return w->r;
}

static void test_demand(void **state) {
        uint8_t block[STORE_BLOCK_SIZE];
        uint64_t kicks;
        Waiter w, t;
        Store *s;

        assert_int_equal(store_new(4, 2, &s), 0);

        /* Below low water collectors run without being asked, and go on
         * past it until the store is full. */
        assert_true(store_has_demand(s));
        waiter_start(&w, s, false);
        assert_int_equal(waiter_join(&w), 0);

        put_tagged(s, 1, 1);
        assert_true(store_has_demand(s));
        put_tagged(s, 2, 1);
        assert_true(store_has_demand(s));
        put_tagged(s, 8, 1);
        put_tagged(s, 9, 1);
        assert_false(store_has_demand(s));

        /* Taken down to low water but not below: still idle. */
        assert_int_equal(store_take(s, block, 32), 0);
        assert_int_equal(store_take(s, block, 32), 0);
        assert_int_equal(store_fill(s), 2);
        assert_false(store_has_demand(s));

        /* At low water, idle until asked. */
        waiter_start(&w, s, false);
        assert_false(waiter_returned(&w, 100));
        store_set_demand(s, true);
        assert_int_equal(waiter_join(&w), 0);

        /* Full: even with demand set there is nowhere to put a block. */
        put_tagged(s, 3, 1);
        put_tagged(s, 4, 1);
        assert_false(store_has_demand(s));
        waiter_start(&w, s, false);
        assert_false(waiter_returned(&w, 100));
        /* But a source that owes its startup test runs it: its samples are
         * not stored, and what is stored may wait for it (a reload
         * restarted it). Only when asked, though: full and no demand, it
         * rests too. */
        waiter_start(&t, s, true);
        assert_int_equal(waiter_join(&t), 0);
        store_set_demand(s, false);
        waiter_start(&t, s, true);
        assert_false(waiter_returned(&t, 100));
        store_set_demand(s, true);
        assert_int_equal(waiter_join(&t), 0);
        assert_false(waiter_returned(&w, 100));
        assert_int_equal(store_take(s, block, 32), 0);
        assert_int_equal(waiter_join(&w), 0);

        /* Purging a failed source's blocks reopens the store to others. */
        store_set_demand(s, false);
        assert_false(store_has_demand(s));
        waiter_start(&w, s, false);
        assert_false(waiter_returned(&w, 100));
        assert_int_equal(store_purge(s, 1), 3);
        assert_int_equal(waiter_join(&w), 0);

        /* A kick releases an idle waiter once, without opening the store.
         * (Refilled to full, then down to low water: idle.) */
        put_tagged(s, 5, 2);
        put_tagged(s, 6, 2);
        assert_true(store_has_demand(s));
        put_tagged(s, 10, 2);
        put_tagged(s, 11, 2);
        assert_int_equal(store_take(s, block, 32), 0);
        assert_int_equal(store_take(s, block, 32), 0);
        assert_false(store_has_demand(s));
        waiter_start(&w, s, false);
        assert_false(waiter_returned(&w, 100));
        store_kick(s);
        assert_int_equal(waiter_join(&w), -EINTR);
        assert_false(store_has_demand(s));

        /* A kick that lands after a collector read the count, and so after
         * it found no stop flag, and before it waits, still releases it.
         * Read inside the wait, it was lost: a reload that stopped a source
         * resting on a full store joined that thread for ever (gcc ASan's
         * protocol run in CI, killed after 600 s). */
        kicks = store_kicks(s);
        store_kick(s);
        assert_int_equal(store_wait_for_demand(s, 1, false, kicks), -EINTR);
        assert_int_equal(store_wait_for_demand(s, 1, true, kicks), -EINTR);

        /* Shutdown releases a waiting collector and refuses more blocks. */
        waiter_start(&w, s, false);
        assert_false(waiter_returned(&w, 100));
        store_shutdown(s);
        assert_int_equal(waiter_join(&w), -ESHUTDOWN);
        assert_int_equal(store_wait_for_demand(s, 1, false, store_kicks(s)), -ESHUTDOWN);
        assert_int_equal(store_wait_for_demand(s, 1, true, store_kicks(s)), -ESHUTDOWN);
        assert_false(store_has_demand(s));
        make_block(block, 7);
        assert_int_equal(store_put(s, block, CREDIT, 2, store_epoch(s)), -ESHUTDOWN);
        store_free(s);
}

/* ---- one source's blocks (its own device) ------------------------------ */

static void take_from_expect(Store *s, unsigned source_id, unsigned tag) {
        uint8_t block[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];

        make_block(expected, tag);
        assert_int_equal(store_take_from(s, source_id, block, STORE_BLOCK_SIZE), 0);
        assert_memory_equal(block, expected, STORE_BLOCK_SIZE);
}

/* A device of one source takes that source's oldest block; the device of
 * all takes the oldest of any; a block goes to whichever asks first, once. */
static void test_take_from(void **state) {
        uint8_t block[STORE_BLOCK_SIZE];
        StoreSourceStats ss;
        StoreStats st;
        Store *s;

        assert_int_equal(store_new(8, 1, &s), 0);
        put_tagged(s, 0, 1);
        put_tagged(s, 1, 2);
        put_tagged(s, 2, 1);
        put_tagged(s, 3, 2);
        put_tagged(s, 4, 3);
        put_tagged(s, 5, 2);
        assert_int_equal(store_fill_from(s, 1), 2);
        assert_int_equal(store_fill_from(s, 2), 3);
        assert_int_equal(store_fill_from(s, 3), 1);
        assert_int_equal(store_fill_from(s, 4), 0);
        assert_int_equal(store_fill_from(s, STORE_SOURCES_MAX), 0);

        take_from_expect(s, 2, 1);
        take_from_expect(s, 2, 3);
        take_expect(s, 0);
        take_from_expect(s, 1, 2);
        assert_int_equal(store_take_from(s, 1, block, STORE_BLOCK_SIZE), -ENODATA);
        assert_int_equal(store_take_from(s, STORE_SOURCES_MAX, block, 1), -EINVAL);
        assert_int_equal(store_take_from(s, 2, block, STORE_BLOCK_SIZE + 1), -EINVAL);
        assert_int_equal(store_fill(s), 2);
        /* What is left keeps its order. */
        take_expect(s, 4);
        take_from_expect(s, 2, 5);
        take_expect_empty(s);
        assert_int_equal(store_take_from(s, 2, block, 1), -ENODATA);

        /* Served counts per source, whichever device took the block. */
        store_get_source_stats(s, 2, &ss);
        assert_int_equal(ss.blocks_served, 3);
        assert_int_equal(ss.bytes_served, 3 * STORE_BLOCK_SIZE);
        assert_int_equal(ss.fill, 0);
        store_get_source_stats(s, 1, &ss);
        assert_int_equal(ss.blocks_served, 2);
        store_get_stats(s, &st);
        assert_int_equal(st.blocks_served, 6);
        assert_int_equal(st.blocks_in, st.blocks_served + st.blocks_seeded + st.blocks_purged + st.fill);

        /* A purge keeps the counts right; ids out of range are refused. */
        put_tagged(s, 6, 1);
        put_tagged(s, 7, 2);
        put_tagged(s, 8, 1);
        assert_int_equal(store_purge(s, 1), 2);
        assert_int_equal(store_fill_from(s, 1), 0);
        assert_int_equal(store_fill_from(s, 2), 1);
        assert_int_equal(store_purge_all(s), 1);
        assert_int_equal(store_fill_from(s, 2), 0);
        make_block(block, 9);
        assert_int_equal(store_put(s, block, CREDIT, STORE_SOURCES_MAX, store_epoch(s)), -EINVAL);
        store_free(s);
}

/* A store full of one source's blocks: another source's readers wait
 * (store_set_wanted()); its blocks then displace the fullest source's
 * oldest, down to equal shares and no further. */
static void test_wanted_displaces(void **state) {
        uint8_t block[STORE_BLOCK_SIZE];
        StoreStats st;
        Store *s;

        assert_int_equal(store_new(4, 1, &s), 0);
        for (unsigned i = 0; i < 4; i++)
                put_tagged(s, i, 1);
        make_block(block, 10);
        /* Unwanted: a full store takes nothing. */
        assert_int_equal(store_put(s, block, CREDIT, 2, store_epoch(s)), -ENOSPC);

        store_set_wanted(s, UINT32_C(1) << 2);
        put_tagged(s, 10, 2);
        put_tagged(s, 11, 2);
        assert_int_equal(store_fill(s), 4);
        assert_int_equal(store_fill_from(s, 1), 2);
        assert_int_equal(store_fill_from(s, 2), 2);
        /* Equal shares: no further. */
        make_block(block, 12);
        assert_int_equal(store_put(s, block, CREDIT, 2, store_epoch(s)), -ENOSPC);
        /* Nor does a wanted source displace one holding less than it. */
        store_set_wanted(s, (UINT32_C(1) << 2) | (UINT32_C(1) << 1));
        assert_int_equal(store_put(s, block, CREDIT, 1, store_epoch(s)), -ENOSPC);

        store_get_stats(s, &st);
        assert_int_equal(st.blocks_displaced, 2);
        assert_int_equal(st.blocks_purged, 2);
        assert_int_equal(st.blocks_in, st.blocks_served + st.blocks_seeded + st.blocks_purged + st.fill);
        /* The displaced were source 1's oldest, erased, never served. */
        take_expect(s, 2);
        take_expect(s, 3);
        take_expect(s, 10);
        take_expect(s, 11);
        take_expect_empty(s);
        store_free(s);
}

/* A wanted source with no block stored has demand, full store or not; the
 * others rest. */
static void test_wanted_demand(void **state) {
        Waiter w, other;
        Store *s;

        assert_int_equal(store_new(2, 1, &s), 0);
        put_tagged(s, 0, 1);
        put_tagged(s, 1, 1);
        waiter_start_for(&w, s, 2, false);
        waiter_start_for(&other, s, 3, false);
        assert_false(waiter_returned(&w, 100));
        store_set_wanted(s, UINT32_C(1) << 2);
        assert_int_equal(waiter_join(&w), 0);
        assert_false(waiter_returned(&other, 100));
        /* With a block of its own stored, it rests again. */
        put_tagged(s, 2, 2);
        assert_int_equal(store_fill_from(s, 2), 1);
        waiter_start_for(&w, s, 2, false);
        assert_false(waiter_returned(&w, 100));
        store_shutdown(s);
        assert_int_equal(waiter_join(&w), -ESHUTDOWN);
        assert_int_equal(waiter_join(&other), -ESHUTDOWN);
        store_free(s);
}

static void test_free_null(void **state) {
        assert_null(store_free(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fifo_and_bounds),
                cmocka_unit_test(test_taken_once),
                cmocka_unit_test(test_invalid),
                cmocka_unit_test(test_purge),
                cmocka_unit_test(test_accounting),
                cmocka_unit_test(test_purge_all),
                cmocka_unit_test(test_put_after_purge_all_is_stale),
                cmocka_unit_test(test_demand),
                cmocka_unit_test(test_take_from),
                cmocka_unit_test(test_wanted_displaces),
                cmocka_unit_test(test_wanted_demand),
                cmocka_unit_test(test_free_null),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
