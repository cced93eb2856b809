/* intake.h - the way of one credited source's raw samples into the store:
 * the running gate's verdict on every window (gate.h), then the health
 * tests on the samples of credited windows, SHA-256 conditioning of the
 * samples they passed at the window's credit, and finished blocks held
 * until the health tests' verdicts on all their samples are in.
 *
 *     samples --> window --> gate (worker thread) --> verdict
 *                                 credited: health (RCT, APT, startup) --> conditioner --> pending --> store
 *                                 refused:  nothing, and a purge            (held until settled)
 *
 * Invariants:
 *   - no sample reaches the health tests' credited path or the
 *     conditioner before the gate's verdict on the window that holds it:
 *     the samples are cut into consecutive windows of `window` samples
 *     (the first starts at the source's first sample, as `truerandomctl
 *     assess --gate` cuts a capture); a window is conditioned at the
 *     credit its verdict granted, a refused one never;
 *   - two windows at most are held: one filling while the other is
 *     judged; when the filling one is full before the verdict is in, the
 *     sampling thread waits for it (sampling keeps pace with the gate);
 *   - a refused window throws away the held blocks, the partial block and
 *     this source's unserved blocks in the store (fail closed), and leaves
 *     the source SOURCE_REFUSED until a window is credited;
 *   - a sample is conditioned only after health_feed() said HEALTH_OK for
 *     it, at cutoffs for its window's credit; samples of the startup test
 *     and of failing health windows never are;
 *   - a finished block leaves pending (pending.h) for the store only once
 *     every APT window and RCT run holding its samples has closed clean
 *     (health_settled()); so a window that fails after a block finished
 *     takes that block with it before anyone could read it. A health
 *     failure throws away the held blocks, the partial block and the
 *     source's unserved blocks in the store, as a refusal does;
 *   - no block holds a sample read before a store_purge_all() (the machine
 *     was cloned): intake_prepare() drops the windows, the partial and the
 *     held blocks when the store's epoch moved, and a block finished across
 *     a purge is refused by the store.
 * Each verdict, state change, failure count and block put is published on
 * the collector's board (collector-board.h), which wakes the loop.
 * Threads: one sampling thread (or a test) owns an intake; the gate's
 * workers read a submitted window until its verdict is taken. Nothing
 * here logs. Secrets: the windows are secret_alloc()'d and erased once
 * judged and passed on.
 * Flow: source -> [intake: gate -> health -> conditioner -> pending] -> store. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector-board.h"
#include "gate.h"
#include "store.h"
#include "util/cleanup.h"

typedef struct Intake Intake;

/* An intake whose windows of `window` samples (GATE_WINDOW_MIN..MAX) gate
 * judges under policy (its credit or cap 1..8000 millibits, already
 * capped by the source), putting blocks of source_id into store;
 * publishes the policy and SOURCE_STARTUP on board. gate, store and board
 * are borrowed and outlive it. */
int intake_new(const GatePolicy *policy, uint32_t window, Gate *gate, unsigned source_id, Store *store,
               CollectorBoard *board, Intake **ret);
/* Takes its window back from the gate, erases its state; takes NULL;
 * returns NULL. */
Intake *intake_free(Intake *in);
DEFINE_FREEP(Intake, intake_free);

/* Call right before reading the samples the next intake_feed() takes:
 * if the store was purged since the partial block began, the windows, it
 * and the held blocks start afresh; a verdict that is in is taken. 0, or
 * -ESHUTDOWN once the store stopped. */
int intake_prepare(Intake *in);

/* Takes n > 0 raw samples, as read, into the filling window; passes on a
 * window whose verdict is in. Returns 0, or -ESHUTDOWN once the store
 * stopped. After a permanent failure (the state says so) the rest of the
 * samples are ignored and nothing more should be fed. */
int intake_feed_samples(Intake *in, const uint8_t *samples, size_t n, bool induced);
static inline int intake_feed(Intake *in, const uint8_t *samples, size_t n) {
        return intake_feed_samples(in, samples, n, false);
}
/* The same for samples an induced failure degraded (induce.h): the
 * windows remember which they are, and a block stored with one of them in
 * it is counted (CollectorStats.induce.blocks). */
static inline int intake_feed_induced(Intake *in, const uint8_t *samples, size_t n) {
        return intake_feed_samples(in, samples, n, true);
}
/* Samples the filling window still takes: feeding that many ends it, and
 * the next sample is the first of a window. */
size_t intake_window_room(const Intake *in);
/* Samples per window. */
uint32_t intake_window_size(const Intake *in);

/* Waits for the verdict on the window being judged, if any, and passes it
 * on: for a source that ended (a file), whose last full window would
 * otherwise never count. The partial window is never judged. 0 or
 * -ESHUTDOWN. */
int intake_finish(Intake *in);

/* The state as the gate and the health tests have it (the board may show
 * SOURCE_UNAVAILABLE over it while the device fails). */
SourceState intake_state(const Intake *in);

/* Whether a test must pass before anything is credited again: the startup
 * test (at start, after a reload restarted the source, after an
 * intermittent failure), or the gate's verdict on a window after a
 * refusal. */
bool intake_owes_test(const Intake *in);
