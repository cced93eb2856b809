/* conditioner.h - SHA-256 conditioning of credited raw samples into
 * full-entropy 32-byte blocks (SP 800-90B §3.1.5.1.1 vetted function,
 * SP 800-90C full-entropy rule).
 *
 * A block is SHA-256(domain || samples...) over samples whose credits add up to
 * at least CONDITIONER_BLOCK_MBITS (320 bits = 256 + 64). The hash state is a
 * secret: it lives in sodium_malloc'd memory and is erased on finish, reset and
 * free. Flow: health -> [conditioner] -> pending -> store (intake.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CONDITIONER_BLOCK_SIZE 32U
#define CONDITIONER_BLOCK_MBITS 320000U
/* The domain that opens every block's hash input, without its NUL: keeps
 * these blocks apart from any other SHA-256 of the same samples. */
#define CONDITIONER_DOMAIN "truerandom/pool/conditioner/v1"

typedef struct Conditioner Conditioner;

int conditioner_new(Conditioner **ret);
Conditioner *conditioner_free(Conditioner *c);

/* Absorbs samples[0..n), each credited credit_mbits (1..8000), stopping as soon
 * as a block is complete. Returns the number of samples consumed. When a block
 * completed: writes it to ret_block, its credit to *ret_block_mbits and sets
 * *ret_ready; the conditioner starts a fresh block. */
size_t conditioner_absorb(Conditioner *c, const uint8_t *samples, size_t n, uint32_t credit_mbits,
                          uint8_t ret_block[static CONDITIONER_BLOCK_SIZE], uint64_t *ret_block_mbits,
                          bool *ret_ready);

/* Discards the partial block (after a health failure). */
void conditioner_reset(Conditioner *c);

/* Credit absorbed into the partial block so far. */
uint64_t conditioner_pending_mbits(const Conditioner *c);
