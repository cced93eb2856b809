/* test-uidhash.c - records found by uid, and counts per uid: finding after
 * the table grew, removing any node, consecutive and strided uids (the
 * shapes real uid ranges have), a count that frees its entry at zero, and
 * a budget per uid and window on an injected clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "cuse/uidhash.h"

typedef struct Rec {
        UidNode node;
        int value;
} Rec;

static void fill_and_check(uint32_t first, uint32_t stride, size_t n) {
        UidHash h;
        Rec *r = calloc(n, sizeof(*r));
        size_t longest = 0;

        assert_non_null(r);
        assert_int_equal(uidhash_init(&h), 0);
        for (size_t i = 0; i < n; i++) {
                r[i].value = (int)i;
                uidhash_add(&h, &r[i].node, first + (uint32_t)i * stride);
        }
        assert_int_equal(h.n, n);
        /* Every record is found under its uid after the table grew. */
        for (size_t i = 0; i < n; i++) {
                UidNode *node = uidhash_find(&h, first + (uint32_t)i * stride);
                assert_non_null(node);
                assert_int_equal(UIDHASH_ENTRY(node, Rec, node)->value, (int)i);
        }
        assert_null(uidhash_find(&h, first + (uint32_t)n * stride));
        /* Load at most 3/4, and the uids spread: no chain is long. */
        assert_true(h.n * 4 <= h.table_size * 3);
        for (size_t i = 0; i < h.table_size; i++) {
                size_t len = 0;
                UidNode *node;
                LIST_FOREACH(node, &h.table[i], chain)
                        len++;
                if (len > longest)
                        longest = len;
        }
        assert_true(longest <= 12);
        /* Half removed: the rest still found, the removed not. */
        for (size_t i = 0; i < n; i += 2)
                uidhash_remove(&h, &r[i].node);
        for (size_t i = 0; i < n; i++)
                assert_true((uidhash_find(&h, first + (uint32_t)i * stride) != NULL) == (i % 2 == 1));
        for (size_t left = n / 2; left > 0; left--)
                assert_non_null(uidhash_pop(&h));
        assert_null(uidhash_pop(&h));
        assert_int_equal(h.n, 0);
        uidhash_done(&h);
        free(r);
}

static void test_consecutive_uids(void **state) {
        fill_and_check(1000, 1, 10000);
}

static void test_strided_uids(void **state) {
        /* Container uid ranges come 65536 apart. */
        fill_and_check(100000, 65536, 2000);
}

static void test_count(void **state) {
        UidCount c;

        assert_int_equal(uidcount_init(&c), 0);
        assert_int_equal(uidcount_get(&c, 1000), 0);
        for (int i = 0; i < 5; i++)
                assert_int_equal(uidcount_inc(&c, 1000), 0);
        assert_int_equal(uidcount_inc(&c, 0), 0);
        assert_int_equal(uidcount_get(&c, 1000), 5);
        assert_int_equal(uidcount_get(&c, 0), 1);
        assert_int_equal(uidcount_get(&c, 1001), 0);
        assert_int_equal(c.hash.n, 2);
        for (int i = 0; i < 5; i++)
                uidcount_dec(&c, 1000);
        /* At zero the entry is gone. */
        assert_int_equal(uidcount_get(&c, 1000), 0);
        assert_int_equal(c.hash.n, 1);
        /* Entries still held are freed with the table. */
        for (uint32_t u = 0; u < 100; u++)
                assert_int_equal(uidcount_inc(&c, 5000 + u), 0);
        uidcount_done(&c);
}

/* Each uid its own max per window; a new window (or a clock that went
 * back) starts every count again; a window starts at the first spending
 * after the last one ended. */
static void test_rate(void **state) {
        UidRate r;

        assert_int_equal(uidrate_init(&r), 0);
        for (int i = 0; i < 5; i++)
                assert_true(uidrate_take(&r, 1000, 100 + i, 1000, 5));
        assert_false(uidrate_take(&r, 1000, 200, 1000, 5));
        assert_false(uidrate_take(&r, 1000, 1099, 1000, 5));
        /* Another uid spends its own. */
        for (int i = 0; i < 5; i++)
                assert_true(uidrate_take(&r, 1001, 1099, 1000, 5));
        assert_false(uidrate_take(&r, 1001, 1099, 1000, 5));
        /* The window that began at 100 ends at 1100. */
        assert_true(uidrate_take(&r, 1000, 1100, 1000, 5));
        for (int i = 0; i < 4; i++)
                assert_true(uidrate_take(&r, 1000, 1100, 1000, 5));
        assert_false(uidrate_take(&r, 1000, 2099, 1000, 5));
        /* Long quiet: the next window starts at the next spending. */
        assert_true(uidrate_take(&r, 1000, 50000, 1000, 5));
        /* A clock that went back starts a window too. */
        for (int i = 0; i < 4; i++)
                assert_true(uidrate_take(&r, 1000, 50000, 1000, 5));
        assert_false(uidrate_take(&r, 1000, 50000, 1000, 5));
        assert_true(uidrate_take(&r, 1000, 10, 1000, 5));
        uidrate_done(&r);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_consecutive_uids),
                cmocka_unit_test(test_strided_uids),
                cmocka_unit_test(test_count),
                cmocka_unit_test(test_rate),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
