/* crng.h - the ChaCha20 CRNG behind the drop-in /dev/random and /dev/urandom.
 *
 * Fast key erasure (Bernstein 2017; Linux since 5.18): every refill computes
 * ChaCha20(key, nonce 0) keystream; its first 32 bytes replace the key before
 * any output leaves, the rest is served and erased as it is served. Requests
 * larger than the buffer are generated straight into the caller's memory with
 * the same rule: once the buffer is drained, a remainder larger than one
 * refill's output (buffer_size - 32) takes block 0 of the keystream as the
 * next key and blocks 1.. as output, in chunks of at most 1 GiB.
 *
 * Keying (all SHA-256, libsodium):
 *   new:    key = SHA-256("truerandom crng init v1" || initial[32])
 *   mix:    acc = SHA-256 running state over "truerandom crng mix v1" || data...
 *   reseed: key = SHA-256("truerandom crng reseed v1" || key || pool[32]
 *                         || kernel[32] || acc digest);  acc restarts
 *           (pool = 32 zero bytes when reseeding from credit alone)
 *   rekey:  key = SHA-256("truerandom crng rekey v1" || key || kernel[32])
 *           (uncredited: acc, credit, generation and "seeded" untouched)
 *   (domain strings without their NUL)
 * Reseeding and rekeying discard the buffered keystream. "Seeded" means a reseed had
 * >= 256 credited bits behind it: a pool block, or RNDADDENTROPY credit
 * accumulated with crng_add_credit().
 *
 * The key, buffer and mix state live in one sodium_malloc'd region; exactly
 * this file touches them. Single-threaded: the loop thread owns it.
 * Flow: store -> [crng] -> drop-in devices. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRNG_KEY_SIZE 32U
#define CRNG_SEED_BITS 256U
#define CRNG_BUFFER_MIN 4096U
#define CRNG_BUFFER_MAX 16384U

typedef struct Crng Crng;

/* buffer_size in [CRNG_BUFFER_MIN, CRNG_BUFFER_MAX], a multiple of 64. The CRNG
 * starts unseeded but keyed from initial (getrandom() output in the daemon),
 * so unseeded output is best effort, like GRND_INSECURE. */
int crng_new(const uint8_t initial[static CRNG_KEY_SIZE], size_t buffer_size, Crng **ret);
Crng *crng_free(Crng *c);

/* Fills out[0..n) (any n). Works seeded or not; the caller decides policy. */
void crng_generate(Crng *c, void *out, size_t n);

/* Mixes uncredited input (writes, RNDADDENTROPY data) into the next reseed. */
void crng_mix(Crng *c, const void *data, size_t n);

/* Credit for what was mixed (RNDADDENTROPY/RNDADDTOENTCNT), capped at 2^20. */
void crng_add_credit(Crng *c, unsigned bits);
unsigned crng_pending_credit(const Crng *c);

/* Reseeds. pool is a conditioned TRNG block (>= 320 credited bits) or NULL;
 * without it the pending credit must be >= CRNG_SEED_BITS, else -ENODATA and
 * nothing changes. On success the pending credit is consumed, the generation
 * increments and the CRNG is seeded. */
int crng_reseed(Crng *c, const uint8_t *pool, const uint8_t kernel[static CRNG_KEY_SIZE]);

/* Erases the buffered keystream: the next output comes from a fresh refill.
 * For a machine that was cloned or restored, whose other copies hold the
 * same buffer. Key, credit, mix state and generation are untouched. */
void crng_discard(Crng *c);

/* Folds kernel (getrandom() output) into the key at once and discards the
 * buffered keystream, without credit: neither seeds nor counts as a reseed.
 * After a VM generation change it makes the copies' streams differ before a
 * fresh pool block can reseed them. */
void crng_rekey(Crng *c, const uint8_t kernel[static CRNG_KEY_SIZE]);

bool crng_is_seeded(const Crng *c);
uint64_t crng_generation(const Crng *c);
