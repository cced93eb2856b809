/* seeder.h - when the CRNG is seeded and reseeded, and from what: the one
 * policy every trigger goes through (DESIGN §5, issue 14).
 *
 *   first seed     the first store block, or 256 bits of ioctl credit
 *   PERIODIC       the daemon's reseed_interval timer
 *   IOCTL          RNDRESEEDCRNG on a drop-in
 *   CONTROL        truerandomctl reseed
 *   RESUME         suspend/resume, a CLOCK_BOOTTIME jump: the store is kept
 *   VM_GENERATION  the machine was cloned or restored; at once, before the
 *                  caller serves another byte: every stored block is purged
 *                  (and the collectors' partial blocks restart: the store's
 *                  epoch), the buffered keystream discarded and the key
 *                  rekeyed from getrandom() (the kernel has reseeded by
 *                  then), whatever kernel_mix says
 *   LOST_RECORDS   kernel log records were lost before they were read: one
 *                  may have announced a VM generation change. The buffer is
 *                  discarded and the key rekeyed from getrandom() every
 *                  time (cheap); the store is purged as for VM_GENERATION
 *                  but at most once per SEEDER_LOST_PURGE_USEC (issue 23: a
 *                  user who floods the kernel log loses records at will).
 *                  A loss within that time of the last purge, of either
 *                  trigger, holds the purge until the time is up; then
 *                  seeder_pump() purges once for every loss held. A loss
 *                  that purged asks for a reseed as VM_GENERATION does; one
 *                  that only rekeyed asks for none.
 *
 * Every trigger asks for a reseed from the next store block, mixed with
 * getrandom() output where kernel_mix says so. A request waits ("pending")
 * until seeder_pump() finds a block; while it is due it takes precedence over
 * /dev/truerandom readers: the hub pumps the seeder before its readers, and
 * seeder_wants_block() keeps the sources running. Requests that arrive while
 * one is pending join it: one block serves them all.
 *
 * Rate limit (issue 12): reseeds that take a store block are at most one per
 * min_interval_usec (0: no limit). A request within the interval stays
 * pending and falls due when it ends (seeder_next_due()); until then readers
 * get the blocks. A VM generation change is never held back, and the first
 * seed neither.
 *
 * Borrowed: the Store and the Crng outlive the Seeder. Loop thread only; it
 * never logs. Counters in SeederStats are what status shows.
 * Flow: store -> [seeder] -> crng -> drop-in devices. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "crng.h"
#include "pool/store.h"
#include "util/time-util.h"

/* Lost kernel log records purge the store at most this often. */
#define SEEDER_LOST_PURGE_USEC (10 * USEC_PER_SEC)

typedef enum SeedTrigger {
        SEED_TRIGGER_PERIODIC,
        SEED_TRIGGER_IOCTL,
        SEED_TRIGGER_CONTROL,
        SEED_TRIGGER_VM_GENERATION,
        SEED_TRIGGER_RESUME,
        SEED_TRIGGER_LOST_RECORDS,
        _SEED_TRIGGER_MAX,
} SeedTrigger;

/* What seeder_pump() and seeder_seed_from_credit() did. */
typedef enum SeedResult {
        SEED_NONE,      /* nothing due, or no block yet */
        SEED_RESEEDED,  /* a reseed of a seeded CRNG */
        SEED_FIRST,     /* the first seed: the drop-in random stops blocking */
} SeedResult;

typedef struct SeederParams {
        bool kernel_mix;              /* mix getrandom() into seeds ([source.kernel] enable) */
        usec_t min_interval_usec;     /* between reseeds that take a store block; 0: no limit */
        /* The clock for the limit and for last_reseed_usec; NULL:
         * CLOCK_MONOTONIC. */
        usec_t (*now_usec)(void *userdata);
        void *userdata;
} SeederParams;

typedef struct SeederStats {
        uint64_t requests[_SEED_TRIGGER_MAX];  /* accepted triggers */
        uint64_t reseeds[_SEED_TRIGGER_MAX];   /* reseeds that served a request of this trigger */
        uint64_t joined;                       /* requests that joined a pending one */
        uint64_t seeds;                        /* every credited (re)seed, the first included */
        uint64_t rekeys;                       /* uncredited getrandom() rekeys (VM_GENERATION,
                                                * LOST_RECORDS) */
        uint64_t vm_generation_changes;        /* store purges: every VM_GENERATION, and the
                                                * LOST_RECORDS purges */
        uint64_t vm_blocks_purged;             /* stored blocks erased by them */
        usec_t last_reseed_usec;               /* of the last credited seed; 0: never */
        bool pending;                          /* a reseed waits for a block */
} SeederStats;

typedef struct Seeder Seeder;

int seeder_new(const SeederParams *params, Store *store, Crng *crng, Seeder **ret);
/* Takes NULL; returns NULL. */
Seeder *seeder_free(Seeder *s);

/* The one entry point for every trigger. Records the request (VM_GENERATION
 * also purges, discards and rekeys at once; LOST_RECORDS discards and
 * rekeys, and purges unless the limit holds it); the block is taken by the
 * next seeder_pump(), which the caller runs next (cusehub_pump() does it
 * first). 0; -ENODATA when the CRNG has no first seed yet (every trigger
 * but VM_GENERATION and LOST_RECORDS: the first seed comes anyway);
 * -EINVAL. */
int seeder_trigger(Seeder *s, SeedTrigger trigger);

/* Purges the store if a held LOST_RECORDS purge is due, then takes a store
 * block for the first seed or a due reseed, if there is one. Run before
 * any /dev/truerandom reader is served. */
SeedResult seeder_pump(Seeder *s);

/* Seeds an unseeded CRNG from ioctl credit once it reaches CRNG_SEED_BITS
 * (no store block); SEED_FIRST if it did. */
SeedResult seeder_seed_from_credit(Seeder *s);

/* The CRNG needs a store block now: the sources should run and the block
 * goes to it before readers. */
bool seeder_wants_block(const Seeder *s);

/* Whether a reseed or a held purge is pending; *ret_usec (on the params'
 * clock) is when the first of them is due: a reseed may take a block now or
 * earlier when due, later while the rate limit holds it; a held purge is
 * due SEEDER_LOST_PURGE_USEC after the last purge. The caller arms a timer
 * for it and pumps then. */
bool seeder_next_due(const Seeder *s, usec_t *ret_usec);

/* Applies a reloaded limit; a pending reseed's due time follows it. */
void seeder_set_min_interval(Seeder *s, usec_t min_interval_usec);

void seeder_get_stats(const Seeder *s, SeederStats *ret);

const char *seed_trigger_to_string(SeedTrigger t);
