/* crng.c - ChaCha20 fast-key-erasure generator (crng.h has the construction).
 *
 * Invariants, between calls:
 *   - buffer[pos..size) is keystream not yet served; buffer[0..pos) is zero,
 *     so a served byte exists only in the caller's memory;
 *   - key is the next key: it has never been output and nothing already
 *     output can be recomputed from it (fast key erasure).
 * Every refill and every direct chunk derives the following key from the
 * first 32 bytes of its own keystream before its output can leave.
 *
 * Where the secrets live: key, buffer and the mix state are born and die in
 * the one sodium_malloc'd region (erased by secret_free()). The only stack
 * temporaries holding key material are the hash states of crng_new(),
 * crng_reseed() and crng_rekey(), the mix digest of crng_reseed() and the
 * next-key block of direct_chunk(): SECRET_VAR/SECRET_BUFFER, born there
 * and erased on the way out of the function.
 * Flow: store (pool blocks) and getrandom() -> [crng] -> drop-in devices. */
#include "crng.h"

#include <errno.h>
#include <stdalign.h>
#include <string.h>

#include "pool/secret.h"

#define DOMAIN_INIT "truerandom crng init v1"
#define DOMAIN_MIX "truerandom crng mix v1"
#define DOMAIN_RESEED "truerandom crng reseed v1"
#define DOMAIN_REKEY "truerandom crng rekey v1"

#define CHACHA_BLOCK 64U
#define CREDIT_MAX (1U << 20)
/* One direct chunk, one key step. Far below the 2^32-block counter limit of
 * the IETF variant, so the counter never wraps inside a chunk. */
#define DIRECT_CHUNK_MAX ((size_t) 1 << 30)

static const uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES];

struct Crng {
        size_t size;            /* buffer bytes */
        size_t pos;             /* first unserved byte */
        uint64_t generation;
        unsigned credit;        /* pending bits, capped at CREDIT_MAX */
        bool seeded;
        crypto_hash_sha256_state mix;
        uint8_t key[CRNG_KEY_SIZE];
        alignas(CHACHA_BLOCK) uint8_t buffer[];
};

/* sodium_malloc() puts a region flush against its trailing guard page, so the
 * region is aligned as its size is: header and buffer sizes are multiples of
 * 64. */
_Static_assert(sizeof(Crng) % CHACHA_BLOCK == 0, "Crng header keeps the region aligned");

static void mix_restart(Crng *c) {
        crypto_hash_sha256_init(&c->mix);
        crypto_hash_sha256_update(&c->mix, (const uint8_t *) DOMAIN_MIX, strlen(DOMAIN_MIX));
}

int crng_new(const uint8_t initial[static CRNG_KEY_SIZE], size_t buffer_size, Crng **ret) {
        SECRET_VAR(crypto_hash_sha256_state, h);
        Crng *c;

        if (buffer_size < CRNG_BUFFER_MIN || buffer_size > CRNG_BUFFER_MAX ||
            buffer_size % CHACHA_BLOCK != 0)
                return -EINVAL;
        if (sodium_init() < 0)
                return -EIO;

        c = secret_alloc(sizeof(Crng) + buffer_size);
        if (!c)
                return -ENOMEM;

        c->size = buffer_size;
        c->pos = buffer_size;
        crypto_hash_sha256_init(&h);
        crypto_hash_sha256_update(&h, (const uint8_t *) DOMAIN_INIT, strlen(DOMAIN_INIT));
        crypto_hash_sha256_update(&h, initial, CRNG_KEY_SIZE);
        crypto_hash_sha256_final(&h, c->key);
        mix_restart(c);

        *ret = c;
        return 0;
}

Crng *crng_free(Crng *c) {
        return secret_free(c);
}

/* ---- output --------------------------------------------------------------- */

static void refill(Crng *c) {
        crypto_stream_chacha20_ietf(c->buffer, c->size, nonce, c->key);
        memcpy(c->key, c->buffer, CRNG_KEY_SIZE);
        sodium_memzero(c->buffer, CRNG_KEY_SIZE);
        c->pos = CRNG_KEY_SIZE;
}

/* Block 0 of key's keystream becomes the next key (its second half is
 * dropped), blocks 1.. are written straight into out; no copy of the output
 * ever exists in the region. */
static void direct_chunk(Crng *c, uint8_t *out, size_t n) {
        SECRET_BUFFER(block, CHACHA_BLOCK);

        crypto_stream_chacha20_ietf(block, sizeof(block), nonce, c->key);
        memset(out, 0, n);
        crypto_stream_chacha20_ietf_xor_ic(out, out, n, nonce, 1, c->key);
        memcpy(c->key, block, CRNG_KEY_SIZE);
}

void crng_generate(Crng *c, void *out, size_t n) {
        uint8_t *p = out;

        while (n > 0) {
                size_t avail = c->size - c->pos, take;

                if (avail == 0) {
                        /* What one refill cannot cover is generated in place:
                         * copying it through the buffer would only cost. */
                        if (n > c->size - CRNG_KEY_SIZE) {
                                take = MIN(n, DIRECT_CHUNK_MAX);
                                direct_chunk(c, p, take);
                                p += take;
                                n -= take;
                                continue;
                        }
                        refill(c);
                        avail = c->size - c->pos;
                }

                take = MIN(avail, n);
                memcpy(p, c->buffer + c->pos, take);
                sodium_memzero(c->buffer + c->pos, take);
                c->pos += take;
                p += take;
                n -= take;
        }
}

/* ---- mixing and crediting --------------------------------------------------- */

void crng_mix(Crng *c, const void *data, size_t n) {
        crypto_hash_sha256_update(&c->mix, data, n);
}

void crng_add_credit(Crng *c, unsigned bits) {
        c->credit = bits >= CREDIT_MAX - c->credit ? CREDIT_MAX : c->credit + bits;
}

unsigned crng_pending_credit(const Crng *c) {
        return c->credit;
}

/* ---- reseeding -------------------------------------------------------------- */

int crng_reseed(Crng *c, const uint8_t *pool, const uint8_t kernel[static CRNG_KEY_SIZE]) {
        static const uint8_t no_pool[CRNG_KEY_SIZE];
        SECRET_BUFFER(acc, crypto_hash_sha256_BYTES);
        SECRET_VAR(crypto_hash_sha256_state, h);

        if (!pool && c->credit < CRNG_SEED_BITS)
                return -ENODATA;

        crypto_hash_sha256_final(&c->mix, acc);
        mix_restart(c);

        crypto_hash_sha256_init(&h);
        crypto_hash_sha256_update(&h, (const uint8_t *) DOMAIN_RESEED, strlen(DOMAIN_RESEED));
        crypto_hash_sha256_update(&h, c->key, CRNG_KEY_SIZE);
        crypto_hash_sha256_update(&h, pool ? pool : no_pool, CRNG_KEY_SIZE);
        crypto_hash_sha256_update(&h, kernel, CRNG_KEY_SIZE);
        crypto_hash_sha256_update(&h, acc, sizeof(acc));
        crypto_hash_sha256_final(&h, c->key);

        /* Keystream from the old key must not be served after the reseed:
         * someone who learnt that key could predict it. */
        crng_discard(c);

        c->credit = 0;
        c->generation++;
        c->seeded = true;
        return 0;
}

void crng_discard(Crng *c) {
        sodium_memzero(c->buffer + c->pos, c->size - c->pos);
        c->pos = c->size;
}

void crng_rekey(Crng *c, const uint8_t kernel[static CRNG_KEY_SIZE]) {
        SECRET_VAR(crypto_hash_sha256_state, h);

        crypto_hash_sha256_init(&h);
        crypto_hash_sha256_update(&h, (const uint8_t *) DOMAIN_REKEY, strlen(DOMAIN_REKEY));
        crypto_hash_sha256_update(&h, c->key, CRNG_KEY_SIZE);
        crypto_hash_sha256_update(&h, kernel, CRNG_KEY_SIZE);
        crypto_hash_sha256_final(&h, c->key);
        crng_discard(c);
}

bool crng_is_seeded(const Crng *c) {
        return c->seeded;
}

uint64_t crng_generation(const Crng *c) {
        return c->generation;
}
