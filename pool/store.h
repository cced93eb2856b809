/* store.h - the bounded store of ready full-entropy TRNG blocks, and the
 * accounting that makes the /dev/truerandom invariant hold by construction:
 *
 *     bytes served x 8 <= credited bits taken into blocks x 0.8
 *
 * Every block enters with >= 320 credited bits and serves at most 32 bytes;
 * store_take() checks the running totals and abort()s if they ever disagree.
 * Blocks live in sodium_malloc'd memory and are erased as they leave. Each
 * block carries the id of the source that produced it so that a failing
 * source's unserved blocks can be purged (fail closed).
 *
 * Thread-safety: collectors (source threads) put and wait for demand; the
 * loop thread takes, purges and sets demand. One mutex guards all of it.
 * Flow: intake (conditioner, pending) -> [store] -> CUSE readers / CRNG
 * seeds. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/cleanup.h"

#define STORE_BLOCK_SIZE 32U
/* Source ids the store tells apart: store_put() takes ids below this. */
#define STORE_SOURCES_MAX 16U

typedef struct Store Store;

typedef struct StoreStats {
        size_t fill;
        size_t capacity;
        uint64_t blocks_in;
        uint64_t blocks_served;    /* taken for /dev/truerandom readers */
        uint64_t blocks_seeded;    /* taken for CRNG seeds */
        uint64_t blocks_purged;
        uint64_t credited_mbits_in;    /* of all blocks ever put */
        uint64_t credited_mbits_taken; /* of blocks taken for readers */
        uint64_t bytes_served;
        uint64_t blocks_displaced;     /* of them purged: erased to make room (store_set_wanted()) */
} StoreStats;

/* One source's share of the store, for its own device (store_take_from()). */
typedef struct StoreSourceStats {
        size_t fill;               /* its blocks stored now */
        uint64_t blocks_served;    /* its blocks taken for readers, from any device */
        uint64_t bytes_served;
} StoreSourceStats;

/* capacity >= 1 blocks; low_water < capacity: once the fill drops below
 * low_water (or while demand is set) collectors run until the store is full;
 * between low_water and full, unasked, they rest. */
int store_new(size_t capacity, size_t low_water, Store **ret);
/* Wakes waiting collectors with "stopped" first; takes NULL; returns NULL. */
Store *store_free(Store *s);
DEFINE_FREEP(Store, store_free);

/* Adds a block produced by source_id (< STORE_SOURCES_MAX) with its
 * credit (>= 320000 mbits, else -EINVAL). epoch is store_epoch() as read before the first sample of the
 * block was: after a store_purge_all() since, the block holds samples from
 * before it and is refused with -ESTALE. -ENOSPC when full, -ESHUTDOWN after
 * store_shutdown(). */
int store_put(Store *s, const uint8_t block[static STORE_BLOCK_SIZE], uint64_t credited_mbits,
              unsigned source_id, uint64_t epoch);

/* Takes the oldest block into ret_block. serve_bytes (0..32) is how many of its
 * bytes will reach a /dev/truerandom reader; 0 means the block seeds the CRNG.
 * The caller erases ret_block after use. -ENODATA when empty. */
int store_take(Store *s, uint8_t ret_block[static STORE_BLOCK_SIZE], size_t serve_bytes);

/* The oldest block of source_id, as store_take() takes the oldest of any:
 * for a device that serves one source's blocks alone. A block is taken
 * once, by whichever device asks first. -ENODATA when it has none stored,
 * -EINVAL for an id out of range. */
int store_take_from(Store *s, unsigned source_id, uint8_t ret_block[static STORE_BLOCK_SIZE],
                    size_t serve_bytes);
/* Blocks of source_id stored now (0 for an id out of range). */
size_t store_fill_from(Store *s, unsigned source_id);
void store_get_source_stats(Store *s, unsigned source_id, StoreSourceStats *ret);
/* The sources whose own readers wait (bit i: source id i), from the loop.
 * A wanted source with no block stored has demand even when the store is
 * full, and its store_put() into a full store makes room: it erases the
 * oldest block of the source that holds the most, while that source holds
 * more than it (counted purged and displaced). So one source's readers are
 * never starved by a store the others filled, and the displacement stops
 * at equal shares. */
void store_set_wanted(Store *s, uint32_t sources);

/* Erases every stored block of source_id; returns how many. */
size_t store_purge(Store *s, unsigned source_id);

/* Erases every stored block, whatever its source (the machine was cloned or
 * restored: another copy may hold the same blocks); returns how many. They
 * count as purged; served and credited totals, and so the invariant, are
 * untouched. */
size_t store_purge_all(Store *s);

/* How many store_purge_all() calls there were: a producer reads it before
 * its samples and passes it to store_put(), and starts its block afresh
 * when it changed. */
uint64_t store_epoch(Store *s);

size_t store_fill(Store *s);
void store_get_stats(Store *s, StoreStats *ret);

/* Demand from the loop thread (readers waiting, CRNG seed due). */
void store_set_demand(Store *s, bool on);

/* store_kick() calls so far: what a collector reads before it looks at its
 * stop flag and then hands to store_wait_for_demand(). */
uint64_t store_kicks(Store *s);

/* Collectors: blocks until there is demand (demand set, or fill < low_water,
 * and the store not full; or source_id is wanted and has no block stored:
 * store_set_wanted()) and returns 0, or returns -ESHUTDOWN, or -EINTR
 * once store_kick() has been called since store_kicks() returned
 * kicks_seen: a kick that lands between the caller's stop check and this
 * wait is not lost (it was: a reload that stopped a source resting on a
 * full store could wait for that thread for ever). testing: the caller's source owes a health test
 * (its startup test, or the running check's way back) whose samples are
 * never stored; then the loop's demand counts even with the store full.
 * Until such a source has passed, what is stored may not be served (a
 * source a reload restarted), so a full store must not keep it from the
 * test readers are waiting for. */
int store_wait_for_demand(Store *s, unsigned source_id, bool testing, uint64_t kicks_seen);

/* Makes every waiter in store_wait_for_demand() return -EINTR once, so one
 * collector can be stopped without shutting the store down. */
void store_kick(Store *s);
/* Non-blocking form of the same question. */
bool store_has_demand(Store *s);

/* Makes store_wait_for_demand() and store_put() return -ESHUTDOWN. */
void store_shutdown(Store *s);
