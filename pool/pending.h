/* pending.h - finished blocks held back until the verdicts on all their
 * samples are in.
 *
 * A block is finished as soon as its samples' credit reaches 320 bits, but
 * a verdict on a sample can come later: an APT window or an RCT run that
 * fails condemns every sample in it, including those already hashed. So
 * each finished block waits here, tagged with the number of its last
 * sample, until the caller says that every sample up to some number is
 * settled (health_settled(); the running gate's verdicts will join it),
 * and only then goes to the store. A failure drops every held block.
 *
 * A ring of fixed size, oldest first; filling it is a broken invariant of
 * the caller's sizing (abort()). Secrets: the blocks live in
 * secret_alloc() memory; a slot is erased when its block is dropped,
 * handed on or cleared, and the ring when it is freed.
 * Flow: conditioner -> [pending] -> store. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conditioner.h"
#include "util/cleanup.h"

typedef struct PendingBlock {
        uint8_t data[CONDITIONER_BLOCK_SIZE];
        uint64_t mbits;        /* credit that went into it */
        uint64_t last;         /* the number of its last sample (health's count) */
        bool induced;          /* an induced failure's sample went into it (intake.c) */
} PendingBlock;

typedef struct Pending Pending;

/* Room for max blocks. */
int pending_new(size_t max, Pending **ret);
/* Erases and frees; takes NULL; returns NULL. */
Pending *pending_free(Pending *p);
DEFINE_FREEP(Pending, pending_free);

/* The slot the next block is finished into (conditioner_absorb() writes
 * it); it counts as held only after pending_commit(). */
PendingBlock *pending_slot(Pending *p);
/* Holds the block just finished in pending_slot(). */
void pending_commit(Pending *p, uint64_t mbits, uint64_t last);

/* The oldest held block if every sample of it is settled (its last <=
 * settled), else NULL. */
PendingBlock *pending_ready(Pending *p, uint64_t settled);
/* Erases the oldest held block and lets it go (handed on, or lost). */
void pending_pop(Pending *p);
/* Erases every held block. */
void pending_clear(Pending *p);

size_t pending_count(const Pending *p);
