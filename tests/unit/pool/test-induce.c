/* test-induce.c - an induced failure's samples (pool/induce.h): the kinds
 * by name; stuck makes every sample the episode's first, bias keeps one in
 * INDUCE_BIAS_KEEP as read and sets the rest to that value, repeat gives
 * the first INDUCE_REPEAT_PERIOD samples over and over; across chunks of
 * any size alike; the episode ends at its bound, leaving later samples as
 * read, and after induce_end() nothing is touched. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "pool/induce.h"

#define N 1000

static void fill(uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t) (i * 37 + 11 + (i >> 8));
}

/* The episode over `n` read as chunks of `chunk`. */
static void run(InduceKind kind, uint64_t bound, size_t chunk, const uint8_t *in, uint8_t *out) {
        Induce e;

        assert_int_equal(induce_begin(&e, kind, bound), 0);
        memcpy(out, in, N);
        for (size_t at = 0, done = 0; at < N; at += chunk) {
                size_t k = chunk < N - at ? chunk : N - at;
                size_t d = induce_apply(&e, out + at, k);

                assert_int_equal(d, bound > done ? (bound - done < k ? bound - done : k) : 0);
                done += d;
        }
        assert_false(induce_active(&e));
}

static void test_kinds(void **state) {
        uint8_t in[N], out[N];
        const size_t chunks[] = { 1, 7, 16, 333, N };

        fill(in, N);
        for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
                run(INDUCE_STUCK, 600, chunks[c], in, out);
                for (size_t i = 0; i < N; i++)
                        assert_int_equal(out[i], i < 600 ? in[0] : in[i]);
                run(INDUCE_BIAS, 600, chunks[c], in, out);
                for (size_t i = 0; i < N; i++)
                        assert_int_equal(out[i], i >= 600 || i % INDUCE_BIAS_KEEP == INDUCE_BIAS_KEEP - 1 ? in[i] : in[0]);
                run(INDUCE_REPEAT, 600, chunks[c], in, out);
                for (size_t i = 0; i < N; i++)
                        assert_int_equal(out[i], i < 600 ? in[i % INDUCE_REPEAT_PERIOD] : in[i]);
        }
}

static void test_names_and_bounds(void **state) {
        InduceKind k = INDUCE_NONE;
        uint8_t b[4] = { 1, 2, 3, 4 };
        Induce e;

        for (k = INDUCE_STUCK; k < _INDUCE_KIND_MAX; k++) {
                InduceKind back;

                assert_non_null(induce_kind_to_string(k));
                assert_int_equal(induce_kind_from_string(induce_kind_to_string(k), &back), 0);
                assert_int_equal(back, k);
        }
        assert_null(induce_kind_to_string(INDUCE_NONE));
        assert_null(induce_kind_to_string(_INDUCE_KIND_MAX));
        assert_int_equal(induce_kind_from_string("melt", &k), -EINVAL);
        assert_int_equal(induce_kind_from_string(NULL, &k), -EINVAL);
        /* selftest reopens the source instead; an empty episode is none. */
        assert_int_equal(induce_begin(&e, INDUCE_SELFTEST, 10), -EINVAL);
        assert_int_equal(induce_begin(&e, INDUCE_NONE, 10), -EINVAL);
        assert_int_equal(induce_begin(&e, INDUCE_STUCK, 0), -EINVAL);
        /* Ended early: nothing more is touched. */
        assert_int_equal(induce_begin(&e, INDUCE_STUCK, 100), 0);
        assert_int_equal(induce_apply(&e, b, 2), 2);
        assert_true(induce_active(&e));
        induce_end(&e);
        assert_false(induce_active(&e));
        assert_int_equal(induce_apply(&e, b + 2, 2), 0);
        assert_memory_equal(b, ((uint8_t[]) { 1, 1, 3, 4 }), 4);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kinds),
                cmocka_unit_test(test_names_and_bounds),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
