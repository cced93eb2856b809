/* conditioner.c - SHA-256 conditioning of credited raw samples into 32-byte
 * full-entropy blocks.
 *
 * A block is SHA-256(CONDITIONER_DOMAIN || samples) over exactly as many
 * samples as it takes for their credit to reach CONDITIONER_BLOCK_MBITS, and
 * not one more: surplus samples belong to the next block, so no credit is
 * hashed away uncounted. Invariant: the hash state always holds the domain
 * plus exactly the samples counted in pending_mbits.
 * Secrets: the hash state is born in conditioner_new() in secret_alloc()
 * memory and erased on every block, reset and free; the finished block goes
 * straight to the caller's buffer.
 * Flow: health -> [conditioner] -> pending -> store (intake.h). */
#include "conditioner.h"

#include <errno.h>
#include <stdlib.h>

#include "health.h"
#include "secret.h"

struct Conditioner {
        crypto_hash_sha256_state state;
        uint64_t pending_mbits;
};

static void conditioner_start(Conditioner *c) {
        /* Erase before re-initialising: init does not promise to overwrite
         * every byte of the previous state. */
        sodium_memzero(&c->state, sizeof(c->state));
        crypto_hash_sha256_init(&c->state);
        crypto_hash_sha256_update(&c->state, (const unsigned char *) CONDITIONER_DOMAIN,
                                  sizeof(CONDITIONER_DOMAIN) - 1);
        c->pending_mbits = 0;
}

int conditioner_new(Conditioner **ret) {
        Conditioner *c;

        if (!ret)
                return -EINVAL;
        if (sodium_init() < 0)
                return -EIO;

        c = secret_alloc(sizeof(*c));
        if (!c)
                return -ENOMEM;
        conditioner_start(c);

        *ret = c;
        return 0;
}

Conditioner *conditioner_free(Conditioner *c) {
        return secret_free(c);
}

size_t conditioner_absorb(Conditioner *c, const uint8_t *samples, size_t n, uint32_t credit_mbits,
                          uint8_t ret_block[static CONDITIONER_BLOCK_SIZE], uint64_t *ret_block_mbits,
                          bool *ret_ready) {
        uint64_t missing, needed;
        size_t take;

        /* A credit outside the health tests' range means the caller lost
         * track of its source: crediting anything now would be a lie. */
        if (!c || credit_mbits == 0 || credit_mbits > CREDIT_MBITS_MAX || (n > 0 && !samples))
                abort();

        missing = CONDITIONER_BLOCK_MBITS - c->pending_mbits;
        needed = (missing + credit_mbits - 1) / credit_mbits;
        take = needed < n ? (size_t) needed : n;

        if (take > 0)
                crypto_hash_sha256_update(&c->state, samples, take);
        c->pending_mbits += (uint64_t) take * credit_mbits;

        if (c->pending_mbits < CONDITIONER_BLOCK_MBITS) {
                *ret_ready = false;
                return take;
        }

        crypto_hash_sha256_final(&c->state, ret_block);
        *ret_block_mbits = c->pending_mbits;
        *ret_ready = true;
        conditioner_start(c);
        return take;
}

void conditioner_reset(Conditioner *c) {
        if (c)
                conditioner_start(c);
}

uint64_t conditioner_pending_mbits(const Conditioner *c) {
        return c ? c->pending_mbits : 0;
}
