/* fairq.h - the fair queue of waiting reads (DESIGN §6): /dev/truerandom
 * deals its blocks from it; every device counts its waiting reads per uid
 * in it for the per-uid bounds.
 *
 * Round robin across uids, FIFO within a uid: each call of fairq_next() hands
 * out the oldest entry of the uid whose turn it is and passes the turn on, so
 * N busy uids each get ~1/N of the blocks and a 32-byte reader is never stuck
 * behind a 1 GiB one. Intrusive: the caller embeds FairEntry in its own
 * record; the queue never allocates per entry, only per waiting uid, and
 * lookups are O(1) (uidhash.h). Plain data, no secrets, no locks.
 * Flow: store -> [fair queue picks the reader] -> CUSE reply. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

typedef struct FairBucket FairBucket;

typedef struct FairEntry {
        TAILQ_ENTRY(FairEntry) link;   /* within the uid's FIFO */
        FairBucket *bucket;            /* NULL while not queued */
} FairEntry;

typedef struct FairQueue FairQueue;

int fairq_new(FairQueue **ret);
/* Forgets queued entries (does not touch them); takes NULL; returns NULL. */
FairQueue *fairq_free(FairQueue *q);

/* Queues e at the tail of uid's FIFO. -EBUSY if e is already queued;
 * -ENOMEM. Removing an entry and at once pushing it again for the same uid
 * never fails: the emptied uid bucket is kept back for it. */
int fairq_push(FairQueue *q, FairEntry *e, uint32_t uid);

/* The oldest entry of the uid whose turn it is; the turn passes to the next
 * waiting uid. The entry stays queued. NULL when empty. */
FairEntry *fairq_next(FairQueue *q);

/* Unqueues e (no-op if not queued). An emptied uid leaves the rotation. */
void fairq_remove(FairQueue *q, FairEntry *e);

/* Unqueues and returns any entry (for draining at shutdown); NULL if empty. */
FairEntry *fairq_pop(FairQueue *q);

bool fairq_is_queued(const FairEntry *e);
size_t fairq_size(const FairQueue *q);
size_t fairq_uids(const FairQueue *q);
/* Entries queued for uid. */
size_t fairq_count_uid(const FairQueue *q, uint32_t uid);

#define FAIRQ_ENTRY_OF(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
