/* intake.h - the way of one credited source's raw samples into the store:
 * health tests and running check on every sample, SHA-256 conditioning of
 * the samples they passed, and finished blocks held until the verdicts on
 * all their samples are in.
 *
 *     samples --> health (RCT, APT, startup) --+--> conditioner --> pending --> store
 *             \-> running check (online.h) ----/     (held until settled)
 *
 * Invariants:
 *   - a sample is conditioned only after health_feed() said HEALTH_OK for
 *     it while the running check credits; samples of the startup test and
 *     of failing windows never are;
 *   - a finished block leaves pending (pending.h) for the store only once
 *     every APT window and RCT run holding its samples has closed clean
 *     (health_settled()); so a window that fails after a block finished
 *     takes that block with it before anyone could read it. The wait is at
 *     most one window (512 samples) or one run below the RCT cutoff after
 *     the block's last sample. The running gate of SP 800-90B estimates
 *     (DESIGN §4) will hold blocks the same way, until its verdict;
 *   - a health failure throws away the held blocks, the partial block and
 *     this source's unserved blocks in the store (fail closed), so no block
 *     built before a failure is served after it was detected; so does the
 *     running check when it stops crediting, and while it is stopped no
 *     sample is conditioned (it keeps counting them, to resume);
 *   - no block holds a sample read before a store_purge_all() (the machine
 *     was cloned): intake_prepare() restarts the partial and held blocks
 *     when the store's epoch moved, and a block finished across a purge is
 *     refused by the store.
 * Each state change, failure count and block put is published on the
 * collector's board (collector-board.h), which wakes the loop.
 * Threads: one sampling thread (or a test) owns an intake. Nothing here
 * logs.
 * Flow: source -> [intake: health -> conditioner -> pending] -> store. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector-board.h"
#include "store.h"
#include "util/cleanup.h"

typedef struct Intake Intake;

/* An intake for samples credited credit_mbits each (1..8000), putting
 * blocks of source_id into store; publishes its credit, the running
 * check's figures and SOURCE_STARTUP on board. store and board are
 * borrowed and outlive it. */
int intake_new(uint32_t credit_mbits, unsigned source_id, Store *store, CollectorBoard *board, Intake **ret);
/* Erases its state; takes NULL; returns NULL. */
Intake *intake_free(Intake *in);
DEFINE_FREEP(Intake, intake_free);

/* Call right before reading the samples the next intake_feed() takes:
 * if the store was purged since the partial block began, it and the held
 * blocks start afresh. */
void intake_prepare(Intake *in);

/* Takes n > 0 raw samples, as read. Returns 0, or -ESHUTDOWN once the
 * store stopped. After a permanent failure (the state says so) the rest
 * of the samples are ignored and nothing more should be fed. */
int intake_feed(Intake *in, const uint8_t *samples, size_t n);

/* The state as the health tests and the running check have it (the board
 * may show SOURCE_UNAVAILABLE over it while the device fails). */
SourceState intake_state(const Intake *in);

/* Whether a health test must pass before anything is credited again: the
 * startup test (at start, after a reload restarted the source, after an
 * intermittent failure), or the running check's clean windows after a
 * stop. */
bool intake_owes_test(const Intake *in);
