/* store.c - the bounded FIFO of full-entropy TRNG blocks and its accounting.
 *
 * A ring of capacity slots in secret_alloc() memory; each slot holds a
 * 32-byte block, the credit that went into it and the id of its source.
 * Invariants: the fill slots from head on are live, every other slot is all
 * zero; a block exists in exactly one slot, so taking or purging it erases
 * its only copy inside the store. Every put carries >= 320 credited bits and
 * every take serves <= 32 bytes, so bytes_served x 8 <= credited bits taken
 * x 0.8 holds by construction; store_take() re-checks it and abort()s.
 * Each source's blocks are counted (fill_of), so that a device serving one
 * source alone finds its oldest block by a scan of the ring, and a wanted
 * source can displace another's blocks from a full store.
 * One mutex guards everything; one condition variable wakes collectors
 * when demand may have appeared (take, purge, set_demand, set_wanted,
 * shutdown).
 * Secrets: blocks are born in store_put() (copied from the intake) and
 * erased in store_take(), store_purge(), store_purge_all() and store_free().
 * Flow: intake (conditioner, pending) -> [store] -> CUSE readers / CRNG
 * seeds. */
#include "store.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conditioner.h"
#include "secret.h"

typedef struct StoreBlock {
        uint8_t data[STORE_BLOCK_SIZE];
        uint64_t credited_mbits;
        unsigned source_id;
} StoreBlock;

struct Store {
        pthread_mutex_t lock;
        pthread_cond_t demand_changed;
        StoreBlock *ring;
        size_t capacity;
        size_t low_water;
        size_t head;
        size_t fill;
        bool demand;
        bool shutdown;
        uint64_t kicks;          /* store_kick() calls: waiters return -EINTR */
        bool refilling;          /* fell below low_water, not full again yet */
        uint64_t epoch;          /* store_purge_all() calls */
        uint32_t wanted;         /* store_set_wanted(): bit i, source i */
        size_t fill_of[STORE_SOURCES_MAX];
        StoreSourceStats of[STORE_SOURCES_MAX]; /* served counts; fill is fill_of */
        StoreStats stats;
};

/* A lock that cannot be taken is a broken process, not an error to report. */
static void store_lock(Store *s) {
        if (pthread_mutex_lock(&s->lock) != 0)
                abort();
}

static void store_unlock(Store *s) {
        if (pthread_mutex_unlock(&s->lock) != 0)
                abort();
}

static void store_wake(Store *s) {
        if (pthread_cond_broadcast(&s->demand_changed) != 0)
                abort();
}

static StoreBlock *store_slot(Store *s, size_t i) {
        return &s->ring[(s->head + i) % s->capacity];
}

static void add_or_abort(uint64_t *total, uint64_t x) {
        /* Centuries away at any real entropy rate; a wrapped total would
         * make the invariant check meaningless, so stop instead. */
        if (__builtin_add_overflow(*total, x, total))
                abort();
}

/* Hysteresis: once below low_water the collectors fill the store up, so a
 * burst of readers finds it full rather than just above the mark. */
static bool store_demand_locked(const Store *s, unsigned source_id, bool testing) {
        if (s->shutdown)
                return false;
        if (source_id < STORE_SOURCES_MAX && (s->wanted & (UINT32_C(1) << source_id)) && s->fill_of[source_id] == 0)
                return true;
        return (testing && s->demand) ||
               (s->fill < s->capacity && (s->demand || s->refilling || s->fill < s->low_water));
}

static void store_update_refilling(Store *s) {
        if (s->fill < s->low_water)
                s->refilling = true;
        else if (s->fill == s->capacity)
                s->refilling = false;
}

/* Removes the block in slot i (from head), keeping the others' order:
 * the later ones move up one, and the slot left at the end is erased. */
static void store_remove_locked(Store *s, size_t i) {
        StoreBlock *b = store_slot(s, i);

        s->fill_of[b->source_id]--;
        for (size_t j = i; j + 1 < s->fill; j++)
                memcpy(store_slot(s, j), store_slot(s, j + 1), sizeof(StoreBlock));
        sodium_memzero(store_slot(s, s->fill - 1), sizeof(StoreBlock));
        s->fill--;
        store_update_refilling(s);
}

/* A full store and a wanted source_id: erases the oldest block of the
 * source holding the most blocks, if it holds more than source_id does
 * after the put (so shares never cross). true when a slot was freed. */
static bool store_displace_locked(Store *s, unsigned source_id) {
        unsigned most = source_id;

        if (!(s->wanted & (UINT32_C(1) << source_id)))
                return false;
        for (unsigned i = 0; i < STORE_SOURCES_MAX; i++)
                if (s->fill_of[i] > s->fill_of[most])
                        most = i;
        if (most == source_id || s->fill_of[most] <= s->fill_of[source_id] + 1)
                return false;
        for (size_t i = 0; i < s->fill; i++)
                if (store_slot(s, i)->source_id == most) {
                        store_remove_locked(s, i);
                        s->stats.blocks_purged++;
                        s->stats.blocks_displaced++;
                        return true;
                }
        return false;
}

/* A Store with its lock and condition made and nothing else, which
 * store_free() can take apart; NULL without memory. */
static Store *store_alloc(void) {
        _cleanup_free_ Store *s = calloc(1, sizeof(*s));

        if (!s || pthread_mutex_init(&s->lock, NULL) != 0)
                return NULL;
        if (pthread_cond_init(&s->demand_changed, NULL) != 0) {
                pthread_mutex_destroy(&s->lock);
                return NULL;
        }
        return TAKE_PTR(s);
}

int store_new(size_t capacity, size_t low_water, Store **ret) {
        _cleanup_(store_freep) Store *s = NULL;

        if (!ret || capacity == 0 || low_water >= capacity ||
            capacity > SIZE_MAX / sizeof(StoreBlock))
                return -EINVAL;
        if (sodium_init() < 0)
                return -EIO;

        s = store_alloc();
        if (!s)
                return -ENOMEM;
        s->ring = secret_alloc(capacity * sizeof(StoreBlock));
        if (!s->ring)
                return -ENOMEM;
        s->capacity = capacity;
        s->low_water = low_water;
        s->refilling = true;

        *ret = TAKE_PTR(s);
        return 0;
}

Store *store_free(Store *s) {
        if (!s)
                return NULL;

        /* Waiters must be woken and joined by their owners before the
         * mutex dies; the shutdown here covers callers that forgot the
         * first half. */
        store_shutdown(s);
        pthread_cond_destroy(&s->demand_changed);
        pthread_mutex_destroy(&s->lock);
        secret_free(s->ring);
        free(s);
        return NULL;
}

int store_put(Store *s, const uint8_t block[static STORE_BLOCK_SIZE], uint64_t credited_mbits,
              unsigned source_id, uint64_t epoch) {
        StoreBlock *b;

        if (credited_mbits < CONDITIONER_BLOCK_MBITS || source_id >= STORE_SOURCES_MAX)
                return -EINVAL;

        store_lock(s);
        if (s->shutdown) {
                store_unlock(s);
                return -ESHUTDOWN;
        }
        /* Checked under the lock that store_purge_all() takes: no block
         * begun before a purge gets in after it. */
        if (epoch != s->epoch) {
                store_unlock(s);
                return -ESTALE;
        }
        if (s->fill == s->capacity && !store_displace_locked(s, source_id)) {
                store_unlock(s);
                return -ENOSPC;
        }

        b = store_slot(s, s->fill);
        memcpy(b->data, block, STORE_BLOCK_SIZE);
        b->credited_mbits = credited_mbits;
        b->source_id = source_id;
        s->fill_of[source_id]++;
        s->fill++;
        store_update_refilling(s);
        s->stats.blocks_in++;
        add_or_abort(&s->stats.credited_mbits_in, credited_mbits);
        store_unlock(s);
        return 0;
}

/* Takes the block in slot i for a reader (serve_bytes > 0) or a seed. */
static void store_take_locked(Store *s, size_t i, uint8_t ret_block[static STORE_BLOCK_SIZE], size_t serve_bytes) {
        StoreBlock *b = store_slot(s, i);

        if (serve_bytes > 0) {
                s->stats.blocks_served++;
                add_or_abort(&s->stats.credited_mbits_taken, b->credited_mbits);
                add_or_abort(&s->stats.bytes_served, serve_bytes);
                s->of[b->source_id].blocks_served++;
                add_or_abort(&s->of[b->source_id].bytes_served, serve_bytes);
                /* bytes x 8 x 1000 x 5 <= mbits x 4, i.e. bytes x 10000 <=
                 * mbits; dividing instead of multiplying cannot overflow and
                 * is exact for integers. */
                if (s->stats.bytes_served > s->stats.credited_mbits_taken / 10000)
                        abort();
        } else
                s->stats.blocks_seeded++;

        memcpy(ret_block, b->data, STORE_BLOCK_SIZE);
        if (i == 0) {
                /* The oldest: the ring's head moves on. */
                s->fill_of[b->source_id]--;
                sodium_memzero(b, sizeof(*b));
                s->head = (s->head + 1) % s->capacity;
                s->fill--;
                store_update_refilling(s);
        } else
                store_remove_locked(s, i);
        store_wake(s);
}

int store_take(Store *s, uint8_t ret_block[static STORE_BLOCK_SIZE], size_t serve_bytes) {
        if (serve_bytes > STORE_BLOCK_SIZE)
                return -EINVAL;

        store_lock(s);
        if (s->fill == 0) {
                store_unlock(s);
                return -ENODATA;
        }
        store_take_locked(s, 0, ret_block, serve_bytes);
        store_unlock(s);
        return 0;
}

int store_take_from(Store *s, unsigned source_id, uint8_t ret_block[static STORE_BLOCK_SIZE],
                    size_t serve_bytes) {
        int r = -ENODATA;

        if (serve_bytes > STORE_BLOCK_SIZE || source_id >= STORE_SOURCES_MAX)
                return -EINVAL;

        store_lock(s);
        for (size_t i = 0; s->fill_of[source_id] > 0 && i < s->fill; i++)
                if (store_slot(s, i)->source_id == source_id) {
                        store_take_locked(s, i, ret_block, serve_bytes);
                        r = 0;
                        break;
                }
        store_unlock(s);
        return r;
}

size_t store_fill_from(Store *s, unsigned source_id) {
        size_t fill;

        if (source_id >= STORE_SOURCES_MAX)
                return 0;
        store_lock(s);
        fill = s->fill_of[source_id];
        store_unlock(s);
        return fill;
}

void store_get_source_stats(Store *s, unsigned source_id, StoreSourceStats *ret) {
        *ret = (StoreSourceStats) { 0 };
        if (source_id >= STORE_SOURCES_MAX)
                return;
        store_lock(s);
        *ret = s->of[source_id];
        ret->fill = s->fill_of[source_id];
        store_unlock(s);
}

void store_set_wanted(Store *s, uint32_t sources) {
        store_lock(s);
        if (s->wanted != sources) {
                s->wanted = sources;
                store_wake(s);
        }
        store_unlock(s);
}

/* Erases the blocks of source_id, or every block with all. */
static size_t store_purge_locked(Store *s, bool all, unsigned source_id) {
        size_t kept = 0, removed = 0;

        /* Compact towards the head, keeping order. A purged block's slot is
         * either overwritten by a later kept block or erased below, and so
         * is the old slot of every block that moved. */
        for (size_t i = 0; i < s->fill; i++) {
                StoreBlock *b = store_slot(s, i);

                if (all || b->source_id == source_id) {
                        s->fill_of[b->source_id]--;
                        removed++;
                        continue;
                }
                if (removed > 0)
                        memcpy(store_slot(s, kept), b, sizeof(*b));
                kept++;
        }
        for (size_t i = kept; i < s->fill; i++)
                sodium_memzero(store_slot(s, i), sizeof(StoreBlock));
        s->fill = kept;
        store_update_refilling(s);
        s->stats.blocks_purged += removed;

        if (removed > 0)
                store_wake(s);
        return removed;
}

size_t store_purge(Store *s, unsigned source_id) {
        size_t removed;

        store_lock(s);
        removed = store_purge_locked(s, false, source_id);
        store_unlock(s);
        return removed;
}

size_t store_purge_all(Store *s) {
        size_t removed;

        store_lock(s);
        removed = store_purge_locked(s, true, 0);
        s->epoch++;
        store_unlock(s);
        return removed;
}

uint64_t store_epoch(Store *s) {
        uint64_t epoch;

        store_lock(s);
        epoch = s->epoch;
        store_unlock(s);
        return epoch;
}

size_t store_fill(Store *s) {
        size_t fill;

        store_lock(s);
        fill = s->fill;
        store_unlock(s);
        return fill;
}

void store_get_stats(Store *s, StoreStats *ret) {
        store_lock(s);
        *ret = s->stats;
        ret->fill = s->fill;
        ret->capacity = s->capacity;
        store_unlock(s);
}

void store_set_demand(Store *s, bool on) {
        store_lock(s);
        if (s->demand != on) {
                s->demand = on;
                store_wake(s);
        }
        store_unlock(s);
}

uint64_t store_kicks(Store *s) {
        uint64_t kicks;

        store_lock(s);
        kicks = s->kicks;
        store_unlock(s);
        return kicks;
}

int store_wait_for_demand(Store *s, unsigned source_id, bool testing, uint64_t kicks_seen) {
        int r;

        store_lock(s);
        while (!s->shutdown && !store_demand_locked(s, source_id, testing) && s->kicks == kicks_seen)
                if (pthread_cond_wait(&s->demand_changed, &s->lock) != 0)
                        abort();
        r = s->shutdown ? -ESHUTDOWN : s->kicks != kicks_seen ? -EINTR : 0;
        store_unlock(s);
        return r;
}

void store_kick(Store *s) {
        store_lock(s);
        s->kicks++;
        store_wake(s);
        store_unlock(s);
}

bool store_has_demand(Store *s) {
        bool demand;

        store_lock(s);
        demand = store_demand_locked(s, STORE_SOURCES_MAX, false);
        store_unlock(s);
        return demand;
}

void store_shutdown(Store *s) {
        store_lock(s);
        s->shutdown = true;
        store_wake(s);
        store_unlock(s);
}
