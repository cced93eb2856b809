/* test-conditioner.c - blocks are SHA-256(domain || exactly the samples
 * needed for 320 credited bits), checked against an independent one-shot
 * crypto_hash_sha256() over a concatenated buffer and against fixed digests
 * computed outside libsodium (Python hashlib). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "pool/conditioner.h"

#define SAMPLES 4096U

static uint8_t samples[SAMPLES];

static void expected_block(const uint8_t *s, size_t n, uint8_t out[static 32]) {
        const size_t domain = sizeof(CONDITIONER_DOMAIN) - 1;
        uint8_t *buf = malloc(domain + n);

        if (!buf)
                abort(); /* cmocka's asserts do not tell gcc buf is non-NULL */
        memcpy(buf, CONDITIONER_DOMAIN, domain);
        memcpy(buf + domain, s, n);
        crypto_hash_sha256(out, buf, domain + n);
        free(buf);
}

static int setup(void **state) {
        uint8_t seed[randombytes_SEEDBYTES] = { 0x42 };
        Conditioner *c;

        randombytes_buf_deterministic(samples, sizeof(samples), seed);
        if (conditioner_new(&c) < 0)
                return -1;
        *state = c;
        return 0;
}

static int teardown(void **state) {
        conditioner_free(*state);
        return 0;
}

static void test_fixed_digests(void **state) {
        /* sha256(b"truerandom/pool/conditioner/v1" + bytes(320)) */
        static const uint8_t zeros_1000[32] = {
                0xd8, 0xeb, 0x1e, 0xda, 0xe1, 0x31, 0x59, 0x7c, 0x12, 0x1e, 0x24, 0x92, 0x69, 0x26, 0xb0, 0x1e,
                0x7c, 0xc6, 0xbe, 0x30, 0xbc, 0x8d, 0xf7, 0xc1, 0x43, 0xd3, 0x8f, 0x07, 0xcc, 0x6a, 0xd7, 0x3f,
        };
        /* sha256(b"truerandom/pool/conditioner/v1" + bytes(range(256)) * 4 + bytes(range(43))) */
        static const uint8_t counter_300[32] = {
                0xb6, 0xd8, 0xc0, 0x37, 0x74, 0x90, 0xbe, 0xda, 0x08, 0xea, 0xc0, 0xf4, 0xea, 0x66, 0x2e, 0x35,
                0xeb, 0xc2, 0xbe, 0x81, 0x68, 0xcf, 0x34, 0xc6, 0xa8, 0xdc, 0xab, 0xe3, 0x56, 0xa6, 0xae, 0xac,
        };
        Conditioner *c = *state;
        uint8_t in[2000], block[32];
        uint64_t mbits = 0;
        bool ready = false;

        memset(in, 0, sizeof(in));
        assert_int_equal(conditioner_absorb(c, in, sizeof(in), 1000, block, &mbits, &ready), 320);
        assert_true(ready);
        assert_int_equal(mbits, 320000);
        assert_memory_equal(block, zeros_1000, 32);

        for (size_t i = 0; i < sizeof(in); i++)
                in[i] = (uint8_t) i;
        assert_int_equal(conditioner_absorb(c, in, sizeof(in), 300, block, &mbits, &ready), 1067);
        assert_true(ready);
        assert_int_equal(mbits, 1067 * 300);
        assert_memory_equal(block, counter_300, 32);
}

static void test_credit_1000(void **state) {
        Conditioner *c = *state;
        uint8_t block[32], expected[32];
        uint64_t mbits = 0;
        bool ready = false;

        /* Consecutive blocks take consecutive, disjoint runs of samples. */
        for (size_t b = 0; b < 3; b++) {
                const uint8_t *s = samples + 320 * b;

                assert_int_equal(conditioner_absorb(c, s, SAMPLES - 320 * b, 1000, block, &mbits, &ready), 320);
                assert_true(ready);
                assert_int_equal(mbits, CONDITIONER_BLOCK_MBITS);
                expected_block(s, 320, expected);
                assert_memory_equal(block, expected, 32);
                assert_int_equal(conditioner_pending_mbits(c), 0);
        }
}

static void test_credit_300(void **state) {
        Conditioner *c = *state;
        uint8_t block[32], expected[32];
        uint64_t mbits = 0;
        bool ready = false;

        assert_int_equal(conditioner_absorb(c, samples, SAMPLES, 300, block, &mbits, &ready), 1067);
        assert_true(ready);
        assert_int_equal(mbits, 320100);
        expected_block(samples, 1067, expected);
        assert_memory_equal(block, expected, 32);
}

static void test_chunked(void **state) {
        Conditioner *c = *state;
        uint8_t block[32], expected[32];
        uint64_t mbits = 0;
        size_t used = 0;
        bool ready = false;

        /* Feeding 7 samples at a time gives the same block, ready on the
         * call that crosses 320 bits and consuming only what it needs. */
        while (!ready) {
                size_t n = conditioner_absorb(c, samples + used, 7, 1000, block, &mbits, &ready);

                used += n;
                if (!ready) {
                        assert_int_equal(n, 7);
                        assert_int_equal(conditioner_pending_mbits(c), used * 1000);
                } else
                        assert_int_equal(n, 320 % 7);
        }
        assert_int_equal(used, 320);
        expected_block(samples, 320, expected);
        assert_memory_equal(block, expected, 32);
}

static void test_mixed_credit(void **state) {
        Conditioner *c = *state;
        uint8_t block[32], expected[32];
        uint64_t mbits = 0;
        bool ready = true;

        /* 100 samples at 1 bit leave 220 bits: 28 samples at 8 bits. */
        assert_int_equal(conditioner_absorb(c, samples, 100, 1000, block, &mbits, &ready), 100);
        assert_false(ready);
        assert_int_equal(conditioner_absorb(c, samples + 100, 1000, 8000, block, &mbits, &ready), 28);
        assert_true(ready);
        assert_int_equal(mbits, 100 * 1000 + 28 * 8000);
        expected_block(samples, 128, expected);
        assert_memory_equal(block, expected, 32);
}

static void test_reset(void **state) {
        Conditioner *c = *state;
        uint8_t block[32], expected[32];
        uint64_t mbits = 0;
        bool ready = true;

        assert_int_equal(conditioner_absorb(c, samples, 100, 1000, block, &mbits, &ready), 100);
        assert_false(ready);
        assert_int_equal(conditioner_pending_mbits(c), 100000);

        conditioner_reset(c);
        assert_int_equal(conditioner_pending_mbits(c), 0);

        /* Nothing of the discarded 100 samples reaches the next block. */
        assert_int_equal(conditioner_absorb(c, samples + 100, SAMPLES - 100, 1000, block, &mbits, &ready), 320);
        assert_true(ready);
        expected_block(samples + 100, 320, expected);
        assert_memory_equal(block, expected, 32);
}

static void test_empty_input(void **state) {
        Conditioner *c = *state;
        uint8_t block[32] = { 0 };
        uint64_t mbits = 7;
        bool ready = true;

        assert_int_equal(conditioner_absorb(c, samples, 0, 1000, block, &mbits, &ready), 0);
        assert_false(ready);
        assert_int_equal(mbits, 7);
        assert_int_equal(conditioner_pending_mbits(c), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_fixed_digests, setup, teardown),
                cmocka_unit_test_setup_teardown(test_credit_1000, setup, teardown),
                cmocka_unit_test_setup_teardown(test_credit_300, setup, teardown),
                cmocka_unit_test_setup_teardown(test_chunked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_mixed_credit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reset, setup, teardown),
                cmocka_unit_test_setup_teardown(test_empty_input, setup, teardown),
        };

        if (sodium_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
