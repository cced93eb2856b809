/* collector.h - one thread per credited source: read raw samples, run the
 * health tests, condition, and put full-entropy blocks into the store.
 *
 * It runs only on demand (store_wait_for_demand): an idle daemon with a full
 * store burns no CPU. A source that owes a health test (startup, the
 * running check's way back) also runs when the loop asks for blocks with
 * the store full: its test's samples are never stored, and readers may be
 * waiting for it to pass (a source a reload restarted). A finished block
 * reaches the store only once every health-test window and run over its
 * samples has closed clean. On an intermittent health failure it discards
 * its partial and waiting blocks, purges its unserved blocks from the store
 * and re-runs the startup test; on a permanent one it stops for good. After a store_purge_all() (a cloned
 * machine) its partial and waiting blocks start afresh: no sample read
 * before the purge reaches a block. The running check (online.h) watches
 * every sample too: when it stops crediting, the same discard and purge
 * happen, and nothing is credited until it resumes. The source's self-test
 * at open (selftest.h) is kept in the stats; a failed one leaves the
 * collector unavailable (last_error -EDOM). Device errors back off
 * exponentially (10 ms .. 1 s); they never spin. Nothing here logs: the wake
 * callback tells the loop thread that blocks or events are ready, and the loop
 * reads collector_get_stats() to log changes.
 * Flow: source -> health -> conditioner -> [collector puts into] store. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "health.h"
#include "online.h"
#include "source.h"
#include "store.h"

typedef enum SourceState {
        SOURCE_STARTUP,              /* startup test running: nothing credited yet */
        SOURCE_HEALTHY,
        SOURCE_FAILED_INTERMITTENT,  /* last health verdict failed; startup re-runs */
        SOURCE_FAILED_PERMANENT,     /* disabled */
        SOURCE_UNAVAILABLE,          /* open failed (its self-test too), or device errors */
        SOURCE_FAILED_ESTIMATE,      /* the running check stopped crediting it */
        _SOURCE_STATE_MAX,
} SourceState;

typedef struct CollectorStats {
        SourceState state;
        bool running;                 /* the thread is sampling right now */
        uint32_t credit_mbits;        /* per sample, as configured and capped */
        uint64_t samples;             /* raw samples read */
        uint64_t credited_mbits;      /* credit that went into finished blocks */
        uint64_t blocks;              /* put into the store */
        uint64_t pending_blocks;      /* finished, waiting for their windows to close */
        uint64_t fail_rct;            /* intermittent failures by test */
        uint64_t fail_apt;
        uint64_t permanent_rct;       /* 0 or 1 */
        uint64_t permanent_apt;
        uint64_t read_errors;         /* device errors; -EAGAIN ("nothing now") backs off uncounted */
        int last_error;               /* -errno of the last read error, 0 if none */
        SelftestResult selftest;      /* at open; run = false: the source has none */
        OnlineStats online;           /* the running check */
} CollectorStats;

typedef struct Collector Collector;

/* Wakes the loop; called from the collector thread (eventfd write). */
typedef void (*CollectorWakeFn)(void *userdata);

/* Opens the source (an unavailable source still yields a collector in state
 * SOURCE_UNAVAILABLE, so status can show it). credit_mbits 1..8000 is capped by
 * the source's max_credit(); when that leaves 0 the collector is
 * SOURCE_UNAVAILABLE with last_error -EPERM (nothing to credit). The
 * source's self-test lands in the stats (params->selftest is not used). */
int collector_new(const SourceOps *ops, const SourceParams *params, uint32_t credit_mbits,
                  unsigned source_id, Store *store, CollectorWakeFn wake, void *userdata,
                  Collector **ret);

/* Starts the thread (no-op for an unavailable source). */
int collector_start(Collector *c);

/* Stops and joins the thread, erases its state; takes NULL; returns NULL.
 * Call store_shutdown() first when tearing down the whole pool: a thread
 * parked in store_wait_for_demand() only sees its stop flag once the store
 * wakes it (shutdown, or demand). A thread in a source read or a backoff
 * stops within ~1 s. */
Collector *collector_free(Collector *c);

/* One synchronous step, for tests and the thread alike: reads up to
 * max_samples (at most 4096 per call), tests, conditions, puts finished
 * blocks (a block that finds the store full is erased). Returns samples read,
 * or -errno from the source or the store (-ESHUTDOWN), or -ENODEV when there
 * is no source (unavailable) or it failed permanently. Not to be mixed with a
 * running thread. */
ssize_t collector_step(Collector *c, size_t max_samples);

void collector_get_stats(Collector *c, CollectorStats *ret);
const char *collector_name(const Collector *c);
const char *source_state_to_string(SourceState s);
