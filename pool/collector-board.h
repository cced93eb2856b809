/* collector-board.h - what a collector's sampling thread and the loop
 * thread share: the collector's state and counters (CollectorStats),
 * which the sampling thread writes and the loop reads when woken; and the
 * stop request, which the loop makes and the sampling thread obeys, even
 * in the middle of a backoff.
 *
 * Invariants: one mutex guards the board; the sampling thread is the only
 * writer of the stats and the loop the only writer of the stop flag. A
 * change the loop must act on (a state, a block put, a verdict of the
 * running gate) is on the board before the wake that announces it, and
 * a failure's count is published with the state it leads to.
 * Flow: collector (collector.h, intake.h) -> [board] -> daemon (status,
 * journal); daemon -> [board: stop] -> collector. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "health.h"
#include "induce.h"
#include "gate.h"
#include "selftest.h"
#include "util/time-util.h"

typedef enum SourceState {
        SOURCE_STARTUP,              /* startup test running: nothing credited yet */
        SOURCE_HEALTHY,
        SOURCE_FAILED_INTERMITTENT,  /* last health verdict failed; startup re-runs */
        SOURCE_FAILED_PERMANENT,     /* disabled */
        SOURCE_UNAVAILABLE,          /* open failed (its self-test too), or device errors */
        SOURCE_REFUSED,              /* the running gate refused its last window */
        _SOURCE_STATE_MAX,
} SourceState;

/* The running gate's verdicts on a source (gate.h). */
typedef struct GateStats {
        GatePolicy policy;            /* credit = auto (with its cap) or C, as capped by the source:
                                       * the most a window may get is gate_policy_most() */
        uint32_t window;              /* samples per window */
        uint32_t credit_mbits;        /* in force: the last verdict's grant; 0 before the first, or refused */
        double estimate;              /* the last window's min-entropy, bits per sample; NAN before the first */
        uint64_t credited, refused;   /* windows */
        uint64_t refusals;            /* bursts: refused windows after a credited one (or the start) */
        bool last_refused;            /* the last verdict refused its window */
} GateStats;

/* Induced failures (induce.h) on this source since it was opened. */
typedef struct CollectorInduce {
        InduceKind kind;              /* the current or last episode's; NONE: never */
        bool active;                  /* an episode is degrading samples now */
        uint64_t episodes;            /* begun */
        uint64_t caught;              /* ended by a refusal or a health test failure */
        uint64_t uncaught;            /* ended at INDUCE_WINDOWS_MAX windows */
        uint64_t degraded;            /* the last episode's samples degraded */
        uint64_t detected_after;      /* the last caught one's samples until its verdict */
        const char *caught_by;        /* "gate", "RCT", "APT"; NULL: not caught */
        uint64_t blocks;              /* stored with an induced sample in them: 0, or a hole */
} CollectorInduce;

/* The running gate's last verdicts kept per source, for status and the
 * evidence bundle: a ring, the newest at (verdicts - 1) % this. */
#define COLLECTOR_RECENT_VERDICTS 16U

typedef struct CollectorStats {
        SourceState state;
        bool running;                 /* the thread is sampling right now */
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
        GateStats gate;
        GateVerdict recent[COLLECTOR_RECENT_VERDICTS]; /* the gate's last verdicts (a ring) */
        uint64_t verdicts;            /* taken in all: the ring holds the last min(this, 16) */
        CollectorInduce induce;
} CollectorStats;

/* Wakes the loop; called from the collector thread (eventfd write). */
typedef void (*CollectorWakeFn)(void *userdata);

typedef struct CollectorBoard {
        pthread_mutex_t lock;         /* guards everything below */
        pthread_cond_t stop_changed;  /* on CLOCK_MONOTONIC */
        bool stop;
        InduceKind induce_request;    /* asked by the loop, taken by the stepper */
        CollectorStats stats;
        CollectorWakeFn wake;         /* NULL: nobody to wake */
        void *userdata;
} CollectorBoard;

/* 0, or -ENOMEM when the mutex or condition cannot be made (then nothing
 * is left to deinit). The stats start all zero. */
int collector_board_init(CollectorBoard *b, CollectorWakeFn wake, void *userdata);
void collector_board_deinit(CollectorBoard *b);

/* Locks the board and returns its stats to change; unlocking publishes
 * them. A lock that cannot be taken abort()s. */
CollectorStats *collector_board_lock(CollectorBoard *b);
void collector_board_unlock(CollectorBoard *b);
/* Tells the loop to read the board. */
void collector_board_wake(CollectorBoard *b);

/* Adds a verdict the intake took to st's ring (the board locked). */
void collector_stats_add_verdict(CollectorStats *st, const GateVerdict *v);
/* The i-th of the ring's verdicts, oldest first (i < min(verdicts, 16)). */
const GateVerdict *collector_stats_verdict(const CollectorStats *st, size_t i);

/* Sets the state and publishes the health tests' failure counts with it;
 * wakes the loop when the state changed. */
void collector_board_set_state(CollectorBoard *b, SourceState s, const HealthTest *health);

void collector_board_get(CollectorBoard *b, CollectorStats *ret);

/* The loop asks the sampling thread to stop; a sleep in progress ends. */
void collector_board_stop(CollectorBoard *b);
bool collector_board_stopping(CollectorBoard *b);
/* Sleeps usec unless asked to stop; returns true when stopping. */
bool collector_board_sleep(CollectorBoard *b, usec_t usec);

const char *source_state_to_string(SourceState s);
