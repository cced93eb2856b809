/* test-crng.c - the CRNG against RFC 8439 and against the construction in
 * crng.h, recomputed here from libsodium's primitives (a model that knows
 * nothing of the generator's code), plus seeding and crediting rules. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sodium.h>

#include "crng/crng.h"

#define DOMAIN_INIT "truerandom crng init v1"
#define DOMAIN_MIX "truerandom crng mix v1"
#define DOMAIN_RESEED "truerandom crng reseed v1"
#define DOMAIN_REKEY "truerandom crng rekey v1"

#define BUF CRNG_BUFFER_MIN

static const uint8_t zero_nonce[12];

static size_t min_size(size_t a, size_t b) {
        return a < b ? a : b;
}

/* cmocka's asserts do not tell the compiler they stop: abort for it. */
static void *xmalloc(size_t n) {
        void *p = malloc(n);
        if (!p)
                abort();
        return p;
}

static int compare_window(const void *a, const void *b) {
        return memcmp(a, b, 16);
}

static void fill_pattern(uint8_t *p, size_t n, uint8_t start) {
        for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t) (start + i);
}

/* ---- RFC 8439: the primitive itself ----------------------------------------- */

static void test_rfc8439_block_function(void **state) {
        /* §2.3.2: key 00..1f, nonce 00000009 0000004a 00000000, counter 1. */
        static const uint8_t nonce[12] = { 0, 0, 0, 0x09, 0, 0, 0, 0x4a, 0, 0, 0, 0 };
        static const uint8_t expect[64] = {
                0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20, 0x71, 0xc4,
                0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22, 0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e,
                0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa, 0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2,
                0xb5, 0x12, 0x9c, 0xd1, 0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e,
        };
        uint8_t key[32], block[64] = { 0 };

        fill_pattern(key, sizeof(key), 0);
        assert_int_equal(crypto_stream_chacha20_ietf_xor_ic(block, block, sizeof(block), nonce, 1, key), 0);
        assert_memory_equal(block, expect, sizeof(expect));
}

static void test_rfc8439_encryption(void **state) {
        /* §2.4.2: key 00..1f, nonce 00000000 0000004a 00000000, counter 1. */
        static const uint8_t nonce[12] = { 0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0 };
        static const char plain[] = "Ladies and Gentlemen of the class of '99: If I could offer you only "
                                    "one tip for the future, sunscreen would be it.";
        static const uint8_t expect[114] = {
                0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80, 0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d, 0x69, 0x81,
                0xe9, 0x7e, 0x7a, 0xec, 0x1d, 0x43, 0x60, 0xc2, 0x0a, 0x27, 0xaf, 0xcc, 0xfd, 0x9f, 0xae, 0x0b,
                0xf9, 0x1b, 0x65, 0xc5, 0x52, 0x47, 0x33, 0xab, 0x8f, 0x59, 0x3d, 0xab, 0xcd, 0x62, 0xb3, 0x57,
                0x16, 0x39, 0xd6, 0x24, 0xe6, 0x51, 0x52, 0xab, 0x8f, 0x53, 0x0c, 0x35, 0x9f, 0x08, 0x61, 0xd8,
                0x07, 0xca, 0x0d, 0xbf, 0x50, 0x0d, 0x6a, 0x61, 0x56, 0xa3, 0x8e, 0x08, 0x8a, 0x22, 0xb6, 0x5e,
                0x52, 0xbc, 0x51, 0x4d, 0x16, 0xcc, 0xf8, 0x06, 0x81, 0x8c, 0xe9, 0x1a, 0xb7, 0x79, 0x37, 0x36,
                0x5a, 0xf9, 0x0b, 0xbf, 0x74, 0xa3, 0x5b, 0xe6, 0xb4, 0x0b, 0x8e, 0xed, 0xf2, 0x78, 0x5e, 0x42,
                0x87, 0x4d,
        };
        uint8_t key[32], out[sizeof(expect)];

        assert_int_equal(sizeof(plain) - 1, sizeof(expect));
        fill_pattern(key, sizeof(key), 0);
        assert_int_equal(crypto_stream_chacha20_ietf_xor_ic(out, (const uint8_t *) plain, sizeof(out),
                                                            nonce, 1, key), 0);
        assert_memory_equal(out, expect, sizeof(expect));
}

/* ---- the model ------------------------------------------------------------- */

static void sha256_parts(uint8_t out[32], const char *domain, size_t nparts, ...) {
        crypto_hash_sha256_state h;
        va_list ap;

        crypto_hash_sha256_init(&h);
        crypto_hash_sha256_update(&h, (const uint8_t *) domain, strlen(domain));
        va_start(ap, nparts);
        for (size_t i = 0; i < nparts; i++) {
                const uint8_t *p = va_arg(ap, const uint8_t *);
                size_t n = va_arg(ap, size_t);
                crypto_hash_sha256_update(&h, p, n);
        }
        va_end(ap);
        crypto_hash_sha256_final(&h, out);
}

/* n bytes of ChaCha20(key, nonce 0) from block 0, in fresh memory. */
static uint8_t *keystream(const uint8_t key[32], size_t n) {
        uint8_t *p = xmalloc(n);
        assert_int_equal(crypto_stream_chacha20_ietf(p, n, zero_nonce, key), 0);
        return p;
}

static Crng *new_crng(const uint8_t initial[32]) {
        Crng *c = NULL;
        assert_int_equal(crng_new(initial, BUF, &c), 0);
        assert_non_null(c);
        return c;
}

static void test_new_rejects_bad_buffer_size(void **state) {
        static const size_t bad[] = { 0, CRNG_BUFFER_MIN - 64, CRNG_BUFFER_MIN + 32, CRNG_BUFFER_MAX + 64 };
        uint8_t initial[32] = { 0 };
        static int marker;
        Crng *c = (Crng *) &marker;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(crng_new(initial, bad[i], &c), -EINVAL);
                assert_ptr_equal(c, (Crng *) &marker);
        }
        assert_int_equal(crng_new(initial, CRNG_BUFFER_MAX, &c), 0);
        assert_false(crng_is_seeded(c));
        assert_int_equal(crng_generation(c), 0);
        assert_null(crng_free(c));
        assert_null(crng_free(NULL));
}

/* Calls of 1 B, 31 B, one crossing the buffer's end into a refill, 64 KiB
 * (drains the buffer, then the direct path), 1 B from a fresh refill; then
 * the boundary: a remainder one refill can hold is refilled, one byte more
 * goes direct. */
static void test_output_matches_construction(void **state) {
        uint8_t initial[32], key0[32], key1[32], key2[32], key3[32], key4[32], key5[32];
        const size_t cross = 4050, big = 65536;
        const size_t cross_tail = cross - (BUF - 64);        /* from the second refill */
        const size_t big_direct = big - (BUF - 32 - cross_tail);
        uint8_t *ks0, *ks1, *ks2, *ks3, *ks4, *ks5, *ks6, *out, *expect;
        Crng *c;

        fill_pattern(initial, sizeof(initial), 0xa0);
        c = new_crng(initial);

        sha256_parts(key0, DOMAIN_INIT, 1, initial, (size_t) 32);
        ks0 = keystream(key0, BUF);
        memcpy(key1, ks0, 32);
        ks1 = keystream(key1, BUF);
        memcpy(key2, ks1, 32);
        /* Direct: block 0 of key2 is the next key, blocks 1.. the output. */
        ks2 = keystream(key2, 64 + big_direct);
        memcpy(key3, ks2, 32);
        ks3 = keystream(key3, BUF);
        memcpy(key4, ks3, 32);
        ks4 = keystream(key4, BUF);
        memcpy(key5, ks4, 32);
        ks5 = keystream(key5, 64 + BUF - 31);
        ks6 = keystream(ks5, BUF);

        out = xmalloc(big);
        expect = xmalloc(big);

        crng_generate(c, out, 1);
        assert_memory_equal(out, ks0 + 32, 1);

        crng_generate(c, out, 31);
        assert_memory_equal(out, ks0 + 33, 31);

        crng_generate(c, out, cross);
        memcpy(expect, ks0 + 64, BUF - 64);
        memcpy(expect + BUF - 64, ks1 + 32, cross_tail);
        assert_memory_equal(out, expect, cross);

        crng_generate(c, out, big);
        memcpy(expect, ks1 + 32 + cross_tail, BUF - 32 - cross_tail);
        memcpy(expect + BUF - 32 - cross_tail, ks2 + 64, big_direct);
        assert_memory_equal(out, expect, big);

        crng_generate(c, out, 1);
        assert_memory_equal(out, ks3 + 32, 1);

        crng_generate(c, out, (BUF - 33) + (BUF - 32));
        memcpy(expect, ks3 + 33, BUF - 33);
        memcpy(expect + BUF - 33, ks4 + 32, BUF - 32);
        assert_memory_equal(out, expect, (BUF - 33) + (BUF - 32));

        crng_generate(c, out, BUF - 31);
        assert_memory_equal(out, ks5 + 64, BUF - 31);

        crng_generate(c, out, 1);
        assert_memory_equal(out, ks6 + 32, 1);

        /* Generating output is not reseeding. */
        assert_false(crng_is_seeded(c));
        assert_int_equal(crng_generation(c), 0);

        free(ks0), free(ks1), free(ks2), free(ks3), free(ks4), free(ks5), free(ks6);
        free(out), free(expect);
        crng_free(c);
}

/* The 32 bytes that became a key must never be served, and no output byte
 * run may be served twice: 1000 small reads across several refills. */
static void test_no_key_or_repeat_in_output(void **state) {
        enum { CALLS = 1000, SIZE = 33, WIN = 16 };
        uint8_t initial[32], key[32], *stream, *keys;
        size_t total = CALLS * SIZE, nkeys = 0, nwin;
        uint8_t (*win)[WIN];
        Crng *c;

        fill_pattern(initial, sizeof(initial), 7);
        c = new_crng(initial);
        stream = xmalloc(total);
        for (size_t i = 0; i < CALLS; i++)
                crng_generate(c, stream + i * SIZE, SIZE);

        /* The model's keys for every refill the stream needed. */
        keys = xmalloc(32 * (total / (BUF - 32) + 2));
        sha256_parts(key, DOMAIN_INIT, 1, initial, (size_t) 32);
        for (size_t served = 0; served < total; served += BUF - 32) {
                uint8_t *ks = keystream(key, BUF);
                assert_memory_equal(stream + served, ks + 32, min_size(BUF - 32, total - served));
                memcpy(key, ks, 32);
                memcpy(keys + 32 * nkeys++, key, 32);
                free(ks);
        }
        assert_true(nkeys >= 8);
        for (size_t k = 0; k < nkeys; k++)
                for (size_t i = 0; i + 32 <= total; i++)
                        assert_memory_not_equal(stream + i, keys + 32 * k, 32);

        nwin = total - WIN + 1;
        win = xmalloc(nwin * WIN);
        for (size_t i = 0; i < nwin; i++)
                memcpy(win[i], stream + i, WIN);
        qsort(win, nwin, WIN, compare_window);
        for (size_t i = 1; i < nwin; i++)
                assert_memory_not_equal(win[i - 1], win[i], WIN);

        free(win), free(keys), free(stream);
        crng_free(c);
}

/* ---- reseeding --------------------------------------------------------------- */

static void test_reseed_matches_construction(void **state) {
        uint8_t initial[32], pool[32], kernel[32], key0[32], key1[32], key2[32], key3[32];
        uint8_t acc[32], out[64], zero[32] = { 0 };
        static const char mixed[] = "written to /dev/random";
        uint8_t *ks;
        Crng *c;

        fill_pattern(initial, 32, 1);
        fill_pattern(pool, 32, 0x40);
        fill_pattern(kernel, 32, 0x80);
        c = new_crng(initial);

        /* 100 bytes leave most of a refill buffered; the reseed drops it. */
        crng_generate(c, out, 50);
        crng_generate(c, out, 50);
        crng_mix(c, mixed, 10);
        crng_mix(c, mixed + 10, sizeof(mixed) - 10);
        assert_int_equal(crng_reseed(c, pool, kernel), 0);
        assert_true(crng_is_seeded(c));
        assert_int_equal(crng_generation(c), 1);

        sha256_parts(key0, DOMAIN_INIT, 1, initial, (size_t) 32);
        ks = keystream(key0, BUF);
        memcpy(key1, ks, 32);
        free(ks);
        sha256_parts(acc, DOMAIN_MIX, 1, (const uint8_t *) mixed, sizeof(mixed));
        sha256_parts(key2, DOMAIN_RESEED, 4, key1, (size_t) 32, pool, (size_t) 32, kernel, (size_t) 32,
                     acc, (size_t) 32);
        crng_generate(c, out, sizeof(out));
        ks = keystream(key2, BUF);
        assert_memory_equal(out, ks + 32, sizeof(out));
        free(ks);

        /* Credit alone: pool is 32 zero bytes, the mix state restarted empty,
         * and the key is the one the refill above left behind. */
        memcpy(key3, key2, 32);
        ks = keystream(key3, BUF);
        memcpy(key3, ks, 32);
        free(ks);
        crng_add_credit(c, CRNG_SEED_BITS);
        assert_int_equal(crng_reseed(c, NULL, kernel), 0);
        assert_int_equal(crng_generation(c), 2);
        sha256_parts(acc, DOMAIN_MIX, 0);
        sha256_parts(key2, DOMAIN_RESEED, 4, key3, (size_t) 32, zero, (size_t) 32, kernel, (size_t) 32,
                     acc, (size_t) 32);
        crng_generate(c, out, sizeof(out));
        ks = keystream(key2, BUF);
        assert_memory_equal(out, ks + 32, sizeof(out));
        free(ks);

        crng_free(c);
}

static void test_reseed_without_entropy_changes_nothing(void **state) {
        uint8_t initial[32], kernel[32], a[200], b[200];
        Crng *c, *twin;

        fill_pattern(initial, 32, 9);
        fill_pattern(kernel, 32, 3);
        c = new_crng(initial);
        twin = new_crng(initial);

        crng_generate(c, a, 10);
        crng_generate(twin, b, 10);
        crng_mix(c, "abc", 3);
        crng_mix(twin, "abc", 3);

        assert_int_equal(crng_reseed(c, NULL, kernel), -ENODATA);
        crng_add_credit(c, CRNG_SEED_BITS - 1);
        assert_int_equal(crng_reseed(c, NULL, kernel), -ENODATA);
        assert_false(crng_is_seeded(c));
        assert_int_equal(crng_generation(c), 0);
        assert_int_equal(crng_pending_credit(c), CRNG_SEED_BITS - 1);

        /* Same buffered stream as the twin that never tried... */
        crng_generate(c, a, sizeof(a));
        crng_generate(twin, b, sizeof(b));
        assert_memory_equal(a, b, sizeof(a));

        /* ...and the same mix state: the failed reseeds did not consume it. */
        crng_add_credit(c, 1);
        crng_add_credit(twin, CRNG_SEED_BITS);
        assert_int_equal(crng_reseed(c, NULL, kernel), 0);
        assert_int_equal(crng_reseed(twin, NULL, kernel), 0);
        crng_generate(c, a, sizeof(a));
        crng_generate(twin, b, sizeof(b));
        assert_memory_equal(a, b, sizeof(a));

        crng_free(c);
        crng_free(twin);
}

static void test_credit_seeds_and_is_consumed(void **state) {
        uint8_t initial[32] = { 0 }, kernel[32] = { 0 }, pool[32] = { 0 };
        Crng *c = new_crng(initial);

        assert_int_equal(crng_pending_credit(c), 0);
        crng_add_credit(c, 100);
        crng_add_credit(c, 156);
        assert_int_equal(crng_pending_credit(c), 256);
        assert_int_equal(crng_reseed(c, NULL, kernel), 0);
        assert_true(crng_is_seeded(c));
        assert_int_equal(crng_generation(c), 1);
        assert_int_equal(crng_pending_credit(c), 0);
        assert_int_equal(crng_reseed(c, NULL, kernel), -ENODATA);
        assert_true(crng_is_seeded(c));

        /* A pool block needs no credit, and consumes what is pending. */
        crng_add_credit(c, 5);
        assert_int_equal(crng_reseed(c, pool, kernel), 0);
        assert_int_equal(crng_generation(c), 2);
        assert_int_equal(crng_pending_credit(c), 0);

        /* Pending credit saturates at 2^20 instead of wrapping. */
        crng_add_credit(c, 1U << 20);
        crng_add_credit(c, 1);
        assert_int_equal(crng_pending_credit(c), 1U << 20);
        crng_add_credit(c, UINT32_MAX);
        assert_int_equal(crng_pending_credit(c), 1U << 20);
        crng_free(c);
}

static void test_mix_changes_output(void **state) {
        uint8_t initial[32], kernel[32], pool[32], a[64], b[64], d[64];
        Crng *plain, *mixed, *same;

        fill_pattern(initial, 32, 0x11);
        fill_pattern(kernel, 32, 0x22);
        fill_pattern(pool, 32, 0x33);
        plain = new_crng(initial);
        mixed = new_crng(initial);
        same = new_crng(initial);

        /* Mixing alone changes nothing until the next reseed. */
        crng_mix(mixed, "x", 1);
        crng_mix(same, "x", 1);
        crng_generate(plain, a, sizeof(a));
        crng_generate(mixed, b, sizeof(b));
        crng_generate(same, d, sizeof(d));
        assert_memory_equal(a, b, sizeof(a));

        assert_int_equal(crng_reseed(plain, pool, kernel), 0);
        assert_int_equal(crng_reseed(mixed, pool, kernel), 0);
        assert_int_equal(crng_reseed(same, pool, kernel), 0);
        crng_generate(plain, a, sizeof(a));
        crng_generate(mixed, b, sizeof(b));
        assert_memory_not_equal(a, b, sizeof(a));

        /* The same history gives the same stream. */
        crng_generate(same, d, sizeof(d));
        assert_memory_equal(b, d, sizeof(b));

        crng_free(plain);
        crng_free(mixed);
        crng_free(same);
}

/* ---- discarding and rekeying (a cloned or restored machine) ----------------- */

/* After 64 bytes most of the first refill is still buffered. A twin that
 * kept it shows what the copies would have served; the discarded CRNG
 * serves a fresh refill from the key that refill left behind instead. */
static void test_discard_drops_buffered_keystream(void **state) {
        uint8_t initial[32], key0[32], key1[32], a[64], b[64];
        uint8_t *ks;
        Crng *c, *twin;

        fill_pattern(initial, 32, 0x51);
        c = new_crng(initial);
        twin = new_crng(initial);
        crng_generate(c, a, sizeof(a));
        crng_generate(twin, b, sizeof(b));
        assert_memory_equal(a, b, sizeof(a));

        crng_discard(c);
        crng_generate(c, a, sizeof(a));
        crng_generate(twin, b, sizeof(b));
        assert_memory_not_equal(a, b, sizeof(a));

        sha256_parts(key0, DOMAIN_INIT, 1, initial, (size_t) 32);
        ks = keystream(key0, BUF);
        /* What the twin served came from the old buffer... */
        assert_memory_equal(b, ks + 32 + 64, sizeof(b));
        memcpy(key1, ks, 32);
        free(ks);
        /* ...the discarded one starts a refill from the next key. */
        ks = keystream(key1, BUF);
        assert_memory_equal(a, ks + 32, sizeof(a));
        free(ks);

        /* Nothing else moved: not seeded, no generation, credit kept. */
        assert_false(crng_is_seeded(c));
        assert_int_equal(crng_generation(c), 0);
        crng_free(c);
        crng_free(twin);
}

static void test_rekey_matches_construction(void **state) {
        uint8_t initial[32], kernel[32], pool[32], key0[32], key1[32], key2[32], out[64], ref[64];
        uint8_t *ks;
        Crng *c, *twin;

        fill_pattern(initial, 32, 0x61);
        fill_pattern(kernel, 32, 0x71);
        fill_pattern(pool, 32, 0x81);
        c = new_crng(initial);
        twin = new_crng(initial);
        crng_generate(c, out, 10);
        crng_generate(twin, ref, 10);
        crng_mix(c, "w", 1);
        crng_mix(twin, "w", 1);
        crng_add_credit(c, 100);
        crng_add_credit(twin, 100);

        crng_rekey(c, kernel);
        sha256_parts(key0, DOMAIN_INIT, 1, initial, (size_t) 32);
        ks = keystream(key0, BUF);
        memcpy(key1, ks, 32);
        free(ks);
        sha256_parts(key2, DOMAIN_REKEY, 2, key1, (size_t) 32, kernel, (size_t) 32);
        crng_generate(c, out, sizeof(out));
        ks = keystream(key2, BUF);
        assert_memory_equal(out, ks + 32, sizeof(out));
        free(ks);

        /* Uncredited: still unseeded, no generation, credit and mix state
         * kept for the next real reseed. */
        assert_false(crng_is_seeded(c));
        assert_int_equal(crng_generation(c), 0);
        assert_int_equal(crng_pending_credit(c), 100);
        assert_int_equal(crng_reseed(c, NULL, kernel), -ENODATA);

        /* The rekeyed CRNG and its twin differ after the same reseed: the
         * kernel's bytes stay in the key. */
        assert_int_equal(crng_reseed(c, pool, kernel), 0);
        assert_int_equal(crng_reseed(twin, pool, kernel), 0);
        assert_int_equal(crng_generation(c), 1);
        crng_generate(c, out, sizeof(out));
        crng_generate(twin, ref, sizeof(ref));
        assert_memory_not_equal(out, ref, sizeof(out));
        crng_free(c);
        crng_free(twin);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rfc8439_block_function),
                cmocka_unit_test(test_rfc8439_encryption),
                cmocka_unit_test(test_new_rejects_bad_buffer_size),
                cmocka_unit_test(test_output_matches_construction),
                cmocka_unit_test(test_no_key_or_repeat_in_output),
                cmocka_unit_test(test_reseed_matches_construction),
                cmocka_unit_test(test_reseed_without_entropy_changes_nothing),
                cmocka_unit_test(test_credit_seeds_and_is_consumed),
                cmocka_unit_test(test_mix_changes_output),
                cmocka_unit_test(test_discard_drops_buffered_keystream),
                cmocka_unit_test(test_rekey_matches_construction),
        };

        if (sodium_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
