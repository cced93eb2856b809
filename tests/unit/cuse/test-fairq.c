/* test-fairq.c - the fair reader queue: FIFO within a uid, round robin across
 * uids, fair shares under continuous load, small readers not stuck behind big
 * ones, removal that skips no uid, and scale (10,000 uids / entries). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "cuse/fairq.h"

/* A parked read as the device would keep it. */
typedef struct Reader {
        FairEntry entry;
        uint32_t uid;
        unsigned id;
        uint64_t blocks_wanted;
} Reader;

static Reader *reader_of(FairEntry *e) {
        return e ? FAIRQ_ENTRY_OF(e, Reader, entry) : NULL;
}

static FairQueue *queue_new(void) {
        FairQueue *q = NULL;
        assert_int_equal(fairq_new(&q), 0);
        assert_non_null(q);
        return q;
}

static void push(FairQueue *q, Reader *r, uint32_t uid, unsigned id, uint64_t blocks) {
        *r = (Reader) { .uid = uid, .id = id, .blocks_wanted = blocks };
        assert_int_equal(fairq_push(q, &r->entry, uid), 0);
        assert_true(fairq_is_queued(&r->entry));
}

/* Serves one block to whoever's turn it is, as the TRNG device does; the
 * reader is unqueued once it has everything it asked for. */
static Reader *serve_block(FairQueue *q) {
        Reader *r = reader_of(fairq_next(q));
        if (r && --r->blocks_wanted == 0)
                fairq_remove(q, &r->entry);
        return r;
}

/* Deterministic demand sizes (fixed-seed LCG). */
static uint32_t lcg_next(uint32_t *state) {
        *state = *state * 1664525U + 1013904223U;
        return *state >> 8;
}

static void test_fifo_within_uid(void **state) {
        FairQueue *q = queue_new();
        Reader r[5];
        for (unsigned i = 0; i < 5; i++)
                push(q, &r[i], 1000, i, 1);
        assert_int_equal(fairq_size(q), 5);
        assert_int_equal(fairq_uids(q), 1);
        assert_int_equal(fairq_count_uid(q, 1000), 5);

        for (unsigned i = 0; i < 5; i++) {
                Reader *got = serve_block(q);
                assert_non_null(got);
                assert_int_equal(got->id, i);
                assert_false(fairq_is_queued(&got->entry));
        }
        assert_null(fairq_next(q));
        assert_int_equal(fairq_size(q), 0);
        assert_int_equal(fairq_uids(q), 0);
        fairq_free(q);
}

static void test_round_robin_uneven(void **state) {
        FairQueue *q = queue_new();
        Reader a[3], b[1], c[2];
        /* Arrival order: all of uid 10, then 20, then 30. */
        for (unsigned i = 0; i < 3; i++)
                push(q, &a[i], 10, 100 + i, 1);
        push(q, &b[0], 20, 200, 1);
        for (unsigned i = 0; i < 2; i++)
                push(q, &c[i], 30, 300 + i, 1);
        assert_int_equal(fairq_uids(q), 3);

        const unsigned expected[] = { 100, 200, 300, 101, 301, 102 };
        for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
                Reader *got = serve_block(q);
                assert_non_null(got);
                assert_int_equal(got->id, expected[i]);
        }
        assert_null(serve_block(q));
        fairq_free(q);
}

/* A reader stays at the head of its uid until satisfied: multi-block reads
 * interleave with other uids block by block. */
static void test_round_robin_multiblock(void **state) {
        FairQueue *q = queue_new();
        Reader a, b, c;
        push(q, &a, 1, 1, 3);
        push(q, &b, 2, 2, 1);
        push(q, &c, 3, 3, 2);

        const unsigned expected[] = { 1, 2, 3, 1, 3, 1 };
        for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
                assert_int_equal(serve_block(q)->id, expected[i]);
        assert_int_equal(fairq_size(q), 0);
        fairq_free(q);
}

/* Two busy uids: every turn the reader is taken off the queue, served one
 * block and pushed again while it wants more; a satisfied reader is replaced
 * by a new read of the same uid. */
static unsigned run_two_uids(unsigned readers_a, unsigned readers_b, unsigned turns) {
        FairQueue *q = queue_new();
        Reader r[16];
        uint32_t seed = 12345;
        unsigned n = readers_a + readers_b;
        assert_true(n <= 16);
        for (unsigned i = 0; i < n; i++)
                push(q, &r[i], i < readers_a ? 1 : 2, i, 1 + lcg_next(&seed) % 40);

        unsigned turns_a = 0;
        for (unsigned t = 0; t < turns; t++) {
                Reader *got = reader_of(fairq_next(q));
                assert_non_null(got);
                fairq_remove(q, &got->entry);
                if (got->uid == 1)
                        turns_a++;
                if (--got->blocks_wanted == 0)
                        got->blocks_wanted = 1 + lcg_next(&seed) % 40;
                assert_int_equal(fairq_push(q, &got->entry, got->uid), 0);
        }
        assert_int_equal(fairq_size(q), n);
        fairq_free(q);
        return turns_a;
}

static void test_fair_share_two_uids(void **state) {
        unsigned a = run_two_uids(8, 8, 10000);
        assert_in_range(a, 4999, 5001);
}

/* The share is per uid, not per reader: eight readers buy no more than one. */
static void test_fair_share_many_vs_one_reader(void **state) {
        unsigned a = run_two_uids(8, 1, 10000);
        assert_in_range(a, 4999, 5001);
}

static void test_three_uids_share(void **state) {
        FairQueue *q = queue_new();
        Reader r[3];
        unsigned turns[3] = { 0 };
        for (unsigned i = 0; i < 3; i++)
                push(q, &r[i], 500 + i, i, UINT64_MAX);
        for (unsigned t = 0; t < 9999; t++)
                turns[serve_block(q)->id]++;
        for (unsigned i = 0; i < 3; i++)
                assert_int_equal(turns[i], 3333);
        fairq_free(q);
}

/* A 32-byte read of a new uid is not stuck behind a 1 GiB read. */
static void test_small_reader_not_starved(void **state) {
        FairQueue *q = queue_new();
        Reader big[8], small;
        for (unsigned i = 0; i < 8; i++)
                push(q, &big[i], 1, i, (UINT64_C(1) << 30) / 32);
        for (unsigned t = 0; t < 1000; t++)
                assert_int_equal(serve_block(q)->uid, 1);

        push(q, &small, 3, 99, 1);
        unsigned waited = 0;
        Reader *got;
        do {
                got = serve_block(q);
                waited++;
        } while (got != &small && waited < 100);
        assert_ptr_equal(got, &small);
        assert_true(waited <= 2);
        assert_false(fairq_is_queued(&small.entry));
        assert_int_equal(fairq_uids(q), 1);
        fairq_free(q);
}

/* Same with two big uids: the newcomer joins the end of the current round. */
static void test_small_reader_two_big_uids(void **state) {
        FairQueue *q = queue_new();
        Reader a, b, small;
        push(q, &a, 1, 1, UINT64_C(1) << 25);
        push(q, &b, 2, 2, UINT64_C(1) << 25);
        for (unsigned t = 0; t < 7; t++)
                serve_block(q);
        push(q, &small, 3, 3, 1);
        unsigned waited = 0;
        while (serve_block(q) != &small)
                assert_true(++waited < 3);
        fairq_free(q);
}

static void test_remove_middle(void **state) {
        FairQueue *q = queue_new();
        Reader r[3];
        for (unsigned i = 0; i < 3; i++)
                push(q, &r[i], 7, i, 1);
        fairq_remove(q, &r[1].entry);
        assert_false(fairq_is_queued(&r[1].entry));
        assert_int_equal(fairq_count_uid(q, 7), 2);
        assert_int_equal(fairq_size(q), 2);
        assert_int_equal(serve_block(q)->id, 0);
        assert_int_equal(serve_block(q)->id, 2);
        assert_null(fairq_next(q));

        /* Head and tail removals keep the FIFO intact too. */
        for (unsigned i = 0; i < 3; i++)
                push(q, &r[i], 7, i, 1);
        fairq_remove(q, &r[0].entry);
        fairq_remove(q, &r[2].entry);
        assert_int_equal(serve_block(q)->id, 1);
        assert_int_equal(fairq_size(q), 0);
        fairq_free(q);
}

/* The reader whose uid has the turn goes away (interrupted): the next uid
 * keeps its turn. */
static void test_remove_current_bucket_last_entry(void **state) {
        FairQueue *q = queue_new();
        Reader a, b, c;
        push(q, &a, 1, 1, 100);
        push(q, &b, 2, 2, 100);
        push(q, &c, 3, 3, 100);

        /* uid 1 is the current turn before anything is served. */
        fairq_remove(q, &a.entry);
        assert_int_equal(fairq_uids(q), 2);
        assert_int_equal(fairq_count_uid(q, 1), 0);
        assert_ptr_equal(serve_block(q), &b);

        /* Now uid 3 has the turn; its only reader leaves. */
        fairq_remove(q, &c.entry);
        assert_ptr_equal(serve_block(q), &b);

        /* uid 1 comes back and joins the rotation behind uid 2. */
        push(q, &a, 1, 1, 100);
        assert_ptr_equal(serve_block(q), &b);
        assert_ptr_equal(serve_block(q), &a);
        assert_ptr_equal(serve_block(q), &b);
        fairq_free(q);
}

/* Same, but the turn has been passed from uid 1 to uid 2 and uid 2's reader
 * is removed: uid 3 is next, not uid 1 again. */
static void test_remove_turn_does_not_skip(void **state) {
        FairQueue *q = queue_new();
        Reader a, b, c;
        push(q, &a, 1, 1, 100);
        push(q, &b, 2, 2, 100);
        push(q, &c, 3, 3, 100);
        assert_ptr_equal(serve_block(q), &a);
        fairq_remove(q, &b.entry);
        assert_ptr_equal(serve_block(q), &c);
        assert_ptr_equal(serve_block(q), &a);
        assert_ptr_equal(serve_block(q), &c);
        fairq_free(q);
}

static void test_remove_not_queued(void **state) {
        FairQueue *q = queue_new();
        Reader queued, loose = { 0 };
        push(q, &queued, 5, 1, 1);

        fairq_remove(q, &loose.entry);
        assert_int_equal(fairq_size(q), 1);
        assert_int_equal(fairq_uids(q), 1);

        fairq_remove(q, &queued.entry);
        fairq_remove(q, &queued.entry);
        assert_int_equal(fairq_size(q), 0);
        assert_int_equal(fairq_uids(q), 0);
        assert_null(fairq_next(q));
        assert_null(fairq_pop(q));
        fairq_free(q);
}

static void test_push_twice_refused(void **state) {
        FairQueue *q = queue_new();
        Reader r;
        push(q, &r, 5, 1, 1);
        assert_int_equal(fairq_push(q, &r.entry, 5), -EBUSY);
        assert_int_equal(fairq_push(q, &r.entry, 6), -EBUSY);
        assert_int_equal(fairq_size(q), 1);
        assert_int_equal(fairq_count_uid(q, 6), 0);
        fairq_free(q);
}

static void test_pop_drains_all(void **state) {
        FairQueue *q = queue_new();
        enum { N = 100 };
        Reader r[N];
        bool seen[N] = { false };
        for (unsigned i = 0; i < N; i++)
                push(q, &r[i], i % 7, i, 1);
        assert_int_equal(fairq_uids(q), 7);

        for (unsigned i = 0; i < N; i++) {
                Reader *got = reader_of(fairq_pop(q));
                assert_non_null(got);
                assert_false(fairq_is_queued(&got->entry));
                assert_false(seen[got->id]);
                seen[got->id] = true;
                assert_int_equal(fairq_size(q), N - 1 - i);
        }
        assert_null(fairq_pop(q));
        assert_null(fairq_next(q));
        assert_int_equal(fairq_uids(q), 0);
        fairq_free(q);
}

static void test_many_uids(void **state) {
        enum { N = 10000 };
        FairQueue *q = queue_new();
        Reader *r = calloc(N, sizeof(*r));
        assert_non_null(r);
        /* Strided uids collide in any hash that keeps only low bits. */
        for (unsigned i = 0; i < N; i++)
                push(q, &r[i], i * 4096U, i, 2);
        assert_int_equal(fairq_uids(q), N);
        assert_int_equal(fairq_size(q), N);
        for (unsigned i = 0; i < N; i += 997)
                assert_int_equal(fairq_count_uid(q, i * 4096U), 1);
        assert_int_equal(fairq_count_uid(q, 4095), 0);

        /* Two rounds, each in arrival order; the second round empties. */
        for (unsigned round = 0; round < 2; round++)
                for (unsigned i = 0; i < N; i++)
                        assert_int_equal(serve_block(q)->id, i);
        assert_int_equal(fairq_uids(q), 0);
        assert_null(fairq_next(q));

        /* Refill after shrinking to nothing, remove from the middle. */
        for (unsigned i = 0; i < N; i++)
                push(q, &r[i], i, i, 1);
        for (unsigned i = 0; i < N; i += 2)
                fairq_remove(q, &r[i].entry);
        assert_int_equal(fairq_uids(q), N / 2);
        for (unsigned i = 1; i < N; i += 2)
                assert_int_equal(serve_block(q)->id, i);
        assert_int_equal(fairq_size(q), 0);
        fairq_free(q);
        free(r);
}

static void test_many_entries_one_uid(void **state) {
        enum { N = 10000 };
        FairQueue *q = queue_new();
        Reader *r = calloc(N, sizeof(*r));
        assert_non_null(r);
        for (unsigned i = 0; i < N; i++)
                push(q, &r[i], 0, i, 1);
        assert_int_equal(fairq_count_uid(q, 0), N);
        assert_int_equal(fairq_uids(q), 1);
        for (unsigned i = 0; i < N; i++)
                assert_int_equal(serve_block(q)->id, i);
        assert_int_equal(fairq_size(q), 0);
        fairq_free(q);
        free(r);
}

/* Freeing a queue that still holds entries leaves the entries alone. */
static void test_free_with_entries(void **state) {
        FairQueue *q = queue_new();
        Reader r[4];
        for (unsigned i = 0; i < 4; i++)
                push(q, &r[i], i, i, 1);
        assert_null(fairq_free(q));
        assert_null(fairq_free(NULL));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fifo_within_uid),
                cmocka_unit_test(test_round_robin_uneven),
                cmocka_unit_test(test_round_robin_multiblock),
                cmocka_unit_test(test_fair_share_two_uids),
                cmocka_unit_test(test_fair_share_many_vs_one_reader),
                cmocka_unit_test(test_three_uids_share),
                cmocka_unit_test(test_small_reader_not_starved),
                cmocka_unit_test(test_small_reader_two_big_uids),
                cmocka_unit_test(test_remove_middle),
                cmocka_unit_test(test_remove_current_bucket_last_entry),
                cmocka_unit_test(test_remove_turn_does_not_skip),
                cmocka_unit_test(test_remove_not_queued),
                cmocka_unit_test(test_push_twice_refused),
                cmocka_unit_test(test_pop_drains_all),
                cmocka_unit_test(test_many_uids),
                cmocka_unit_test(test_many_entries_one_uid),
                cmocka_unit_test(test_free_with_entries),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
