/* collector.h - one thread per credited source: read raw samples and hand
 * them to the source's intake (intake.h: health tests, conditioning, full
 * entropy blocks into the store), only while the store wants blocks.
 *
 * It runs only on demand (store_wait_for_demand): an idle daemon with a full
 * store burns no CPU. A source that owes a test (startup, a credited window
 * after a refusal) also runs when the loop asks for blocks with
 * the store full: its test's samples are never stored, and readers may be
 * waiting for it to pass (a source a reload restarted). What happens to
 * the samples (the running gate judges each window before any of it
 * counts; a block reaches the store only once the health windows over
 * its samples closed clean; a refusal or failure discards and purges; a
 * purge of the whole store restarts the windows and partial blocks) is
 * the intake's, see intake.h. Waiting for the gate's verdict paces the
 * sampling: it never runs more than a window ahead of the gate.
 * On a permanent health failure the thread stops for good. The source's
 * self-test at open (selftest.h) is kept in the stats; a failed one leaves
 * the collector unavailable (last_error -EDOM). Device errors back off
 * (backoff.h: 10 ms doubling to 1 s); they never spin. Nothing here logs:
 * the wake callback tells the loop thread that blocks or events are ready,
 * and the loop reads collector_get_stats() (collector-board.h) to log
 * changes.
 * Flow: source -> [collector: read, intake] -> store. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collector-board.h"
#include "gate.h"
#include "source.h"
#include "store.h"

/* The most samples one read takes (capture.h reads the same). */
#define COLLECTOR_CHUNK 4096U

typedef struct Collector Collector;

/* How the source's windows are judged: by gate (borrowed, outlives the
 * collector), window samples each (GATE_WINDOW_MIN..MAX), under policy. */
typedef struct CollectorGate {
        Gate *gate;
        GatePolicy policy;
        uint32_t window;
} CollectorGate;

/* Opens the source (an unavailable source still yields a collector in state
 * SOURCE_UNAVAILABLE, so status can show it). The policy's credit or cap
 * (1..8000 millibits) is capped by the source's max_credit(); when that
 * leaves 0 the collector is SOURCE_UNAVAILABLE with last_error -EPERM
 * (nothing to credit). The source's self-test lands in the stats
 * (params->selftest is not used). */
int collector_new(const SourceOps *ops, const SourceParams *params, const CollectorGate *gate,
                  unsigned source_id, Store *store, CollectorWakeFn wake, void *userdata,
                  Collector **ret);

/* Starts the thread (no-op for an unavailable source). */
int collector_start(Collector *c);

/* Asks for an induced failure of kind (STUCK, BIAS or REPEAT; induce.h):
 * the thread begins it at the next window's first sample and ends it when
 * a verdict caught it or at its bound; the stats' induce member shows
 * each step. -EBUSY while one is asked or running, -ENODEV for an
 * unavailable source. Any thread. */
int collector_induce(Collector *c, InduceKind kind);

/* Stops and joins the thread, erases its state; takes NULL; returns NULL.
 * Call store_shutdown() first when tearing down the whole pool: a thread
 * parked in store_wait_for_demand() only sees its stop flag once the store
 * wakes it (shutdown, or demand). A thread in a source read or a backoff
 * stops within ~1 s. */
Collector *collector_free(Collector *c);

/* One synchronous step, for tests and the thread alike: reads up to
 * max_samples (at most COLLECTOR_CHUNK per call), tests, conditions, puts
 * finished blocks (a block that finds the store full is erased). Returns
 * samples read, or -errno from the source or the store (-ESHUTDOWN), or
 * -ENODEV when there is no source (unavailable) or it failed permanently.
 * Not to be mixed with a running thread. */
ssize_t collector_step(Collector *c, size_t max_samples);
/* A source that ended (a file): waits for the verdict on the window the
 * gate has and passes it on, as the thread does when its source ends.
 * 0, -ESHUTDOWN, or -ENODEV for an unavailable source. */
int collector_finish(Collector *c);

void collector_get_stats(Collector *c, CollectorStats *ret);
const char *collector_name(const Collector *c);
