/* test-pending.c - finished blocks held until settled (pool/pending.h):
 * a block is ready only once every sample in it is settled, oldest first;
 * a slot being finished is not held until committed; popping and clearing
 * erase what they drop; the ring wraps. Overfilling it is a broken
 * invariant of the caller (abort()), not tested here. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "pool/pending.h"

static void finish(Pending *p, uint8_t fill, uint64_t mbits, uint64_t last) {
        PendingBlock *b = pending_slot(p);

        memset(b->data, fill, sizeof(b->data));
        pending_commit(p, mbits, last);
}

static void test_held_until_settled(void **state) {
        static const uint8_t zero[sizeof(PendingBlock)];
        Pending *p = NULL;
        PendingBlock *b;

        assert_int_equal(pending_new(3, &p), 0);
        assert_null(pending_ready(p, UINT64_MAX));

        finish(p, 0xa1, 320000, 100);
        finish(p, 0xa2, 321000, 180);
        /* Being finished is not held. */
        memset(pending_slot(p)->data, 0xa3, CONDITIONER_BLOCK_SIZE);
        assert_int_equal(pending_count(p), 2);

        assert_null(pending_ready(p, 99));
        b = pending_ready(p, 100);
        assert_non_null(b);
        assert_int_equal(b->data[0], 0xa1);
        assert_int_equal(b->mbits, 320000);
        assert_int_equal(b->last, 100);
        pending_pop(p);
        assert_memory_equal(b, zero, sizeof(*b));
        assert_int_equal(pending_count(p), 1);
        /* The second is not settled by the first's number. */
        assert_null(pending_ready(p, 179));

        /* Wraps around: two more fit beside the one held. */
        finish(p, 0xa4, 320000, 260);
        finish(p, 0xa5, 320000, 340);
        assert_int_equal(pending_count(p), 3);
        for (uint8_t fill = 0xa2; fill <= 0xa5; fill++) {
                if (fill == 0xa3)
                        continue;
                b = pending_ready(p, 1000);
                assert_non_null(b);
                assert_int_equal(b->data[0], fill);
                pending_pop(p);
        }
        assert_int_equal(pending_count(p), 0);
        assert_null(pending_ready(p, UINT64_MAX));
        pending_free(p);
}

static void test_clear(void **state) {
        static const uint8_t zero[sizeof(PendingBlock)];
        Pending *p = NULL;
        PendingBlock *first;

        assert_int_equal(pending_new(4, &p), 0);
        finish(p, 0x11, 320000, 10);
        first = pending_ready(p, 10);
        finish(p, 0x12, 320000, 20);
        pending_clear(p);
        assert_int_equal(pending_count(p), 0);
        assert_null(pending_ready(p, UINT64_MAX));
        assert_memory_equal(first, zero, sizeof(*first));

        /* Usable again from the start. */
        finish(p, 0x13, 320000, 30);
        assert_int_equal(pending_ready(p, 30)->data[0], 0x13);
        assert_null(pending_free(p));
        assert_null(pending_free(NULL));
}

static void test_invalid(void **state) {
        Pending *p = NULL;

        assert_int_equal(pending_new(0, &p), -EINVAL);
        assert_int_equal(pending_new(SIZE_MAX, &p), -EINVAL);
        assert_null(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_held_until_settled),
                cmocka_unit_test(test_clear),
                cmocka_unit_test(test_invalid),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
