/* collector.c - a source's sampling thread: open the source, wait for
 * demand, read a chunk, hand it to the intake, back off when the device
 * has nothing (see collector.h).
 *
 * Invariants:
 *   - the source's samples go nowhere but the intake, which alone decides
 *     what is credited, by the gate's verdicts and the health tests
 *     (intake.h has its invariants);
 *   - a device error shows the source SOURCE_UNAVAILABLE on the board until
 *     a read succeeds again, then the intake's own state is back;
 *   - device errors and "nothing now" back off (backoff.h) on the board's
 *     stop condition, which collector_free() signals, so a broken device
 *     never spins and never delays shutdown by more than one source read
 *     (~1 s).
 * Threads: the sampling thread owns the source, the intake and the sample
 * buffer; the board (collector-board.h) is what it shares with the loop
 * thread: the stats it writes and the stop flag the loop sets.
 * Secrets: raw samples are born in the secret_alloc()'d sample buffer by
 * the source's read and erased there after each step, whatever the intake
 * made of them; what they become is the intake's.
 * Flow: source -> [collector: read, intake] -> store. */
#include "collector.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "backoff.h"
#include "capture.h"
#include "intake.h"
#include "secret.h"

_Static_assert(CAPTURE_CHUNK == COLLECTOR_CHUNK, "a capture reads what the collector reads");

struct Collector {
        const SourceOps *ops;
        void *source;                  /* NULL when unavailable */
        Store *store;                  /* borrowed */
        unsigned source_id;            /* its blocks' tag in the store */

        /* Owned by whoever steps: the thread, or a test calling step. */
        Intake *intake;                /* NULL when unavailable */
        uint8_t *samples;              /* COLLECTOR_CHUNK, secret_alloc() */
        /* An induced failure (induce.h): asked, then begun at the next
         * window's first sample; the verdicts counted when it began. */
        InduceKind induce_armed;
        Induce induce;                 /* kind NONE: no episode open */
        uint64_t induce_refused, induce_rct, induce_apt;
        uint64_t induce_after;         /* real samples fed since its last degraded one */

        pthread_t thread;
        bool thread_started;
        CollectorBoard board;          /* shared with the loop thread */
};

static void collector_set_running(Collector *c, bool running) {
        collector_board_lock(&c->board)->running = running;
        collector_board_unlock(&c->board);
}

/* ---- one step ------------------------------------------------------- */

static void collector_read_failed(Collector *c, int error) {
        CollectorStats *st;
        bool changed;

        /* "Nothing now" is normal for a non-blocking device or a contended
         * RDSEED: back off, but it is not a fault of the source. */
        if (error == -EAGAIN)
                return;

        st = collector_board_lock(&c->board);
        st->read_errors++;
        st->last_error = error;
        changed = st->state != SOURCE_UNAVAILABLE;
        st->state = SOURCE_UNAVAILABLE;
        collector_board_unlock(&c->board);
        if (changed)
                collector_board_wake(&c->board);
}

static void collector_read_succeeded(Collector *c) {
        CollectorStats *st = collector_board_lock(&c->board);
        bool changed = st->state == SOURCE_UNAVAILABLE;

        if (changed)
                st->state = intake_state(c->intake);
        collector_board_unlock(&c->board);
        if (changed)
                collector_board_wake(&c->board);
}

int collector_finish(Collector *c) {
        SourceState shown;
        int r;

        if (!c)
                return -EINVAL;
        if (!c->intake)
                return -ENODEV;
        shown = collector_board_lock(&c->board)->state;
        collector_board_unlock(&c->board);
        r = intake_finish(c->intake);
        /* The verdict's state is the intake's; a source whose device
         * failed or ended still shows unavailable (until a read succeeds,
         * which for an ended file is never). */
        if (shown == SOURCE_UNAVAILABLE) {
                collector_board_lock(&c->board)->state = SOURCE_UNAVAILABLE;
                collector_board_unlock(&c->board);
                collector_board_wake(&c->board);
        }
        return r;
}

/* ---- induced failures ------------------------------------------------ */

int collector_induce(Collector *c, InduceKind kind) {
        CollectorStats *st;
        int r = 0;

        if (!c || (kind != INDUCE_STUCK && kind != INDUCE_BIAS && kind != INDUCE_REPEAT))
                return -EINVAL;
        if (!c->intake)
                return -ENODEV;
        st = collector_board_lock(&c->board);
        if (st->induce.active || c->board.induce_request != INDUCE_NONE)
                r = -EBUSY;
        else
                c->board.induce_request = kind;
        collector_board_unlock(&c->board);
        return r;
}

/* The verdicts an episode waits for, as the board has them now. */
static void induce_counts(Collector *c, uint64_t *refused, uint64_t *rct, uint64_t *apt) {
        const CollectorStats *st = collector_board_lock(&c->board);

        *refused = st->gate.refused;
        *rct = st->fail_rct;
        *apt = st->fail_apt;
        collector_board_unlock(&c->board);
}

/* Before a read: takes a request, and begins the episode when the next
 * sample is a window's first. Returns how many samples the read may take
 * so that a window not yet begun is filled with real ones first. */
static size_t induce_before_read(Collector *c, size_t n) {
        size_t room = intake_window_room(c->intake);
        CollectorStats *st;

        if (c->induce_armed == INDUCE_NONE && !induce_active(&c->induce)) {
                st = collector_board_lock(&c->board);
                c->induce_armed = c->board.induce_request;
                c->board.induce_request = INDUCE_NONE;
                collector_board_unlock(&c->board);
        }
        if (c->induce_armed == INDUCE_NONE)
                return n;
        if (room < intake_window_size(c->intake))
                return MIN(n, room);
        if (induce_begin(&c->induce, c->induce_armed, (uint64_t) INDUCE_WINDOWS_MAX * room) < 0)
                abort();
        induce_counts(c, &c->induce_refused, &c->induce_rct, &c->induce_apt);
        st = collector_board_lock(&c->board);
        st->induce.kind = c->induce_armed;
        st->induce.active = true;
        st->induce.episodes++;
        st->induce.degraded = 0;
        st->induce.detected_after = 0;
        st->induce.caught_by = NULL;
        collector_board_unlock(&c->board);
        collector_board_wake(&c->board);
        c->induce_armed = INDUCE_NONE;
        return n;
}

/* After the intake took a chunk (or a verdict): an episode ends when a
 * verdict caught it, or at its bound. */
static void induce_after(Collector *c) {
        uint64_t refused, rct, apt;
        const char *by = NULL;
        CollectorStats *st;

        if (!induce_active(&c->induce) && c->induce.kind == INDUCE_NONE)
                return;
        induce_counts(c, &refused, &rct, &apt);
        if (refused > c->induce_refused)
                by = "gate";
        else if (rct > c->induce_rct)
                by = "RCT";
        else if (apt > c->induce_apt)
                by = "APT";
        /* Past its last degraded sample, the verdicts on the windows it
         * reached are still to come: two windows' time. */
        if (!by && (induce_active(&c->induce) || c->induce_after < 2ULL * intake_window_size(c->intake)))
                return;
        st = collector_board_lock(&c->board);
        st->induce.active = false;
        st->induce.degraded = c->induce.done;
        if (by) {
                st->induce.caught++;
                st->induce.caught_by = by;
                st->induce.detected_after = c->induce.done;
        } else
                st->induce.uncaught++;
        collector_board_unlock(&c->board);
        collector_board_wake(&c->board);
        induce_end(&c->induce);
        c->induce.kind = INDUCE_NONE;
        c->induce_after = 0;
}

/* ---- one step ------------------------------------------------------- */

/* Feeds what was read: the degraded part first, then the rest as read. */
static int collector_feed(Collector *c, size_t got) {
        size_t bad = induce_apply(&c->induce, c->samples, got);
        int r = 0;

        if (bad > 0)
                r = intake_feed_induced(c->intake, c->samples, bad);
        if (r == 0 && got > bad)
                r = intake_feed(c->intake, c->samples + bad, got - bad);
        if (bad > 0) {
                collector_board_lock(&c->board)->induce.degraded = c->induce.done;
                collector_board_unlock(&c->board);
        }
        if (c->induce.kind != INDUCE_NONE)
                c->induce_after += got - bad;
        return r;
}

ssize_t collector_step(Collector *c, size_t max_samples) {
        size_t n;
        ssize_t got;
        int r;

        if (!c || max_samples == 0)
                return -EINVAL;
        if (!c->source || intake_state(c->intake) == SOURCE_FAILED_PERMANENT)
                return -ENODEV;

        r = intake_prepare(c->intake);
        if (r < 0)
                return r;
        induce_after(c);
        n = induce_before_read(c, MIN(max_samples, (size_t) COLLECTOR_CHUNK));
        got = c->ops->read(c->source, c->samples, n);
        if (got < 0) {
                collector_read_failed(c, (int) got);
                return got;
        }
        if (got == 0 || (size_t) got > n)
                /* Outside the SourceOps contract: a broken source. */
                abort();
        collector_read_succeeded(c);

        r = collector_feed(c, (size_t) got);
        sodium_memzero(c->samples, (size_t) got);
        if (r == 0)
                induce_after(c);
        return r < 0 ? r : got;
}

/* ---- the thread ----------------------------------------------------- */

static void *collector_thread(void *userdata) {
        Collector *c = userdata;
        Backoff backoff;

        /* A collector never gives up on its source: it waits, ever less
         * often, until the device answers or it is stopped. */
        backoff_init(&backoff, 0, USEC_INFINITY);
        for (;;) {
                /* Read before the stop flag: collector_free() sets the flag,
                 * then kicks, so a stop this check misses is a kick the
                 * wait sees. */
                uint64_t kicks = store_kicks(c->store);
                usec_t wait;
                ssize_t r;

                if (collector_board_stopping(&c->board))
                        break;
                r = store_wait_for_demand(c->store, c->source_id, intake_owes_test(c->intake), kicks);
                if (r == -EINTR)
                        continue; /* kicked: check whether we are to stop */
                if (r < 0 || collector_board_stopping(&c->board))
                        break;

                collector_set_running(c, true);
                r = collector_step(c, COLLECTOR_CHUNK);
                collector_set_running(c, false);

                if (intake_state(c->intake) == SOURCE_FAILED_PERMANENT)
                        break;
                /* A file ended: its last window's verdict still counts. */
                if (r == -ENODATA)
                        (void) collector_finish(c);
                /* The store is gone, or a file ended: nothing more to do. */
                if (r == -ESHUTDOWN || r == -ENODATA)
                        break;
                if (backoff_next(&backoff, r, &wait) < 0)
                        break;
                if (wait > 0 && collector_board_sleep(&c->board, wait))
                        break;
        }
        return NULL;
}

/* ---- lifetime ------------------------------------------------------- */

Collector *collector_free(Collector *c) {
        if (!c)
                return NULL;

        if (c->thread_started) {
                collector_board_stop(&c->board);
                /* It may be waiting for demand that will not come. */
                store_kick(c->store);
                pthread_join(c->thread, NULL);
        }

        if (c->source)
                c->ops->close(c->source);
        intake_free(c->intake);
        secret_free(c->samples);
        sodium_memzero(&c->induce, sizeof(c->induce));
        collector_board_deinit(&c->board);
        free(c);
        return NULL;
}

DEFINE_FREEP(Collector, collector_free);

/* A collector with its board made and nothing else: from here on
 * collector_free() can take it apart. SOURCE_UNAVAILABLE until
 * collector_open() says otherwise. */
static int collector_alloc(const SourceOps *ops, Store *store, CollectorWakeFn wake, void *userdata,
                           Collector **ret) {
        _cleanup_free_ Collector *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        r = collector_board_init(&c->board, wake, userdata);
        if (r < 0)
                return r;
        c->ops = ops;
        c->store = store;
        c->board.stats.state = SOURCE_UNAVAILABLE;
        *ret = TAKE_PTR(c);
        return 0;
}

/* An open that failed (its self-test too), or a source with nothing to
 * credit: the collector stays, unavailable, so that status shows why. */
static int collector_unavailable(Collector *c, int error) {
        collector_board_lock(&c->board)->last_error = error;
        collector_board_unlock(&c->board);
        return 0;
}

/* Opens the source and its intake. 0 also when the source is unavailable;
 * < 0 only when something could not be made (-ENOMEM). */
static int collector_open(Collector *c, const SourceParams *params, const CollectorGate *gate,
                          unsigned source_id) {
        SourceParams p = params ? *params : (SourceParams) { 0 };
        SelftestResult selftest = { 0 };
        GatePolicy policy = gate->policy;
        uint32_t *credit = policy.auto_credit ? &policy.cap_mbits : &policy.credit_mbits;
        void *source = NULL;
        int r;

        p.selftest = &selftest;
        r = c->ops->open(&p, &source);
        collector_board_lock(&c->board)->selftest = selftest;
        collector_board_unlock(&c->board);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return collector_unavailable(c, r);

        *credit = MIN(*credit, c->ops->max_credit(source));
        if (*credit == 0) {
                /* Nothing to credit: the source must not feed the store. */
                c->ops->close(source);
                return collector_unavailable(c, -EPERM);
        }
        c->source = source;
        return intake_new(&policy, gate->window, gate->gate, source_id, c->store, &c->board, &c->intake);
}

int collector_new(const SourceOps *ops, const SourceParams *params, const CollectorGate *gate,
                  unsigned source_id, Store *store, CollectorWakeFn wake, void *userdata,
                  Collector **ret) {
        _cleanup_(collector_freep) Collector *c = NULL;
        uint32_t credit;
        int r;

        if (!ops || !gate || !gate->gate || !store || !ret || source_id >= STORE_SOURCES_MAX)
                return -EINVAL;
        credit = gate_policy_most(&gate->policy);
        if (credit == 0 || credit > CREDIT_MBITS_MAX || gate->window < GATE_WINDOW_MIN ||
            gate->window > GATE_WINDOW_MAX)
                return -EINVAL;
        r = collector_alloc(ops, store, wake, userdata, &c);
        if (r < 0)
                return r;
        c->samples = secret_alloc(COLLECTOR_CHUNK);
        if (!c->samples)
                return -ENOMEM;
        c->source_id = source_id;
        r = collector_open(c, params, gate, source_id);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

int collector_start(Collector *c) {
        sigset_t all, old;
        char name[16];
        int r;

        if (!c)
                return -EINVAL;
        if (!c->source || c->thread_started)
                return 0;

        /* Signals belong to the loop thread (signalfd); a source thread
         * must never be picked to run a handler. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = pthread_create(&c->thread, NULL, collector_thread, c);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0)
                return -r;
        c->thread_started = true;

        snprintf(name, sizeof(name), "tr-%s", c->ops->name);
        (void) pthread_setname_np(c->thread, name);
        return 0;
}

/* ---- status --------------------------------------------------------- */

void collector_get_stats(Collector *c, CollectorStats *ret) {
        collector_board_get(&c->board, ret);
}

const char *collector_name(const Collector *c) {
        return c->ops->name;
}
