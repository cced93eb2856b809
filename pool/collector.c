/* collector.c - one thread per source: raw samples -> health -> conditioner
 * -> store, only while the store wants blocks.
 *
 * Invariants:
 *   - a sample is credited only after health_feed() said HEALTH_OK for it;
 *     samples of the startup test and of failing windows are never absorbed;
 *   - a finished block waits here, out of the store, until every APT window
 *     and RCT run holding its samples has closed clean (health_settled());
 *     so a window that fails after a block finished takes that block with it
 *     before anyone could read it. The wait is at most one window (512
 *     samples) or one run below the RCT cutoff after the block's last sample;
 *   - a health failure throws away the waiting blocks, the partial block,
 *     and this source's unserved blocks in the store (fail closed), so no
 *     block built before a failure is served after it was detected;
 *   - so does the running check when it stops crediting, and while it is
 *     stopped no sample is absorbed (it keeps counting them, to resume);
 *   - no block holds a sample read before a store_purge_all() (the machine
 *     was cloned): the partial and waiting blocks restart when the store's
 *     epoch moved, and a block finished across a purge is refused by the
 *     store;
 *   - device errors back off (backoff.h: 10 ms doubling to 1 s) on a condition
 *     variable that collector_free() signals, so a broken device never spins
 *     and never delays shutdown by more than one source read (~1 s).
 * Threads: the sampling thread owns the source, the health state, the
 * conditioner and the sample buffer; the mutex guards the stats and the stop
 * flag, which the loop thread reads and sets.
 * Secrets: raw samples are born in the secret_alloc()'d sample buffer and
 * erased after each step; the hash state lives in the conditioner; a finished
 * block waits in the secret_alloc()'d pending ring and is erased there once
 * the store has copied it, refused it (full: its credit is lost), or a
 * failure discarded it.
 * Flow: source -> health -> conditioner -> [collector puts into] store. */
#include "collector.h"
#include "backoff.h"
#include "conditioner.h"
#include "secret.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COLLECTOR_CHUNK 4096U

/* A finished block whose windows have not all closed yet. */
typedef struct PendingBlock {
        uint8_t data[CONDITIONER_BLOCK_SIZE];
        uint64_t mbits;
        uint64_t last;                 /* health's number of its last sample */
} PendingBlock;

struct Collector {
        const SourceOps *ops;
        void *source;                  /* NULL when unavailable */
        unsigned source_id;
        Store *store;
        CollectorWakeFn wake;
        void *userdata;

        /* Owned by whoever steps: the thread, or a test calling step. */
        HealthTest health;
        OnlineCheck online;
        Conditioner *conditioner;
        uint64_t epoch;                /* the store's, when the partial block began */
        bool stale;                    /* this chunk was read before a purge */
        uint8_t *samples;              /* COLLECTOR_CHUNK, secret_alloc() */
        PendingBlock *pending;         /* ring of pending_max, secret_alloc() */
        size_t pending_max, pending_head, pending_n;
        uint64_t settled;              /* health_settled() when last looked */
        SourceState state_before_error;

        pthread_t thread;
        bool thread_started;

        pthread_mutex_t lock;          /* guards everything below */
        pthread_cond_t stop_changed;
        bool stop;
        CollectorStats stats;
};

static void collector_lock(Collector *c) {
        if (pthread_mutex_lock(&c->lock) != 0)
                abort();
}

static void collector_unlock(Collector *c) {
        if (pthread_mutex_unlock(&c->lock) != 0)
                abort();
}

static void collector_wake(Collector *c) {
        if (c->wake)
                c->wake(c->userdata);
}

static SourceState collector_state(Collector *c) {
        SourceState s;

        collector_lock(c);
        s = c->stats.state;
        collector_unlock(c);
        return s;
}

/* Only the sampling thread sets a state, and it publishes the health
 * tests' counts with it: a failure is never seen before it is counted. */
static void collector_set_state(Collector *c, SourceState s) {
        bool changed;

        collector_lock(c);
        changed = c->stats.state != s;
        c->stats.state = s;
        c->stats.fail_rct = c->health.fail_rct;
        c->stats.fail_apt = c->health.fail_apt;
        collector_unlock(c);
        if (changed)
                collector_wake(c);
}

static void collector_set_running(Collector *c, bool running) {
        collector_lock(c);
        c->stats.running = running;
        collector_unlock(c);
}

/* ---- one step ------------------------------------------------------- */

/* A store_purge_all() (the machine was cloned or restored) makes every
 * sample read before it stale: the partial block and the waiting ones
 * start afresh. */
static void collector_restart_block(Collector *c) {
        conditioner_reset(c->conditioner);
        sodium_memzero(c->pending, c->pending_max * sizeof(*c->pending));
        c->pending_head = c->pending_n = 0;
        c->epoch = store_epoch(c->store);
}

/* Conditions samples that all passed the health tests; the first is sample
 * number `number`. Finished blocks wait in the pending ring. Nothing of a
 * chunk read before a purge is absorbed. */
static void collector_absorb(Collector *c, const uint8_t *p, size_t n, uint64_t number) {
        uint32_t credit = c->stats.credit_mbits;

        while (n > 0 && !c->stale) {
                PendingBlock *b;
                uint64_t mbits = 0;
                bool ready = false;
                size_t used;

                /* The ring is sized for everything one window and one run
                 * can hold (collector_new()); more is a broken invariant. */
                if (c->pending_n == c->pending_max)
                        abort();
                b = &c->pending[(c->pending_head + c->pending_n) % c->pending_max];
                used = conditioner_absorb(c->conditioner, p, n, credit, b->data, &mbits, &ready);
                p += used;
                n -= used;
                number += used;
                if (!ready)
                        continue;
                b->mbits = mbits;
                b->last = number - 1;
                c->pending_n++;
        }
}

/* Moves the blocks whose windows all closed clean to the store, oldest
 * first. Returns 0, or -ESHUTDOWN once the store stopped. */
static int collector_release(Collector *c) {
        uint64_t settled = health_settled(&c->health);

        c->settled = settled;
        while (c->pending_n > 0) {
                PendingBlock *b = &c->pending[c->pending_head];
                uint64_t mbits = b->mbits;
                int r;

                if (b->last > settled)
                        break;
                r = store_put(c->store, b->data, mbits, c->source_id, c->epoch);
                sodium_memzero(b, sizeof(*b));
                c->pending_head = (c->pending_head + 1) % c->pending_max;
                c->pending_n--;
                if (r == -ESTALE) {
                        /* The store was purged after these samples were
                         * read: they, the waiting blocks and the rest of
                         * the chunk go (the health tests still see them). */
                        collector_restart_block(c);
                        c->stale = true;
                        return 0;
                }
                if (r == -ENOSPC)
                        /* Nobody wants it now; the thread goes back to
                         * waiting for demand after this step. */
                        continue;
                if (r < 0)
                        return r;

                collector_lock(c);
                c->stats.blocks++;
                c->stats.credited_mbits += mbits;
                collector_unlock(c);
                collector_wake(c);
        }
        return 0;
}

/* Fail closed: nothing conditioned, waiting or stored before the failure
 * survives. */
static void collector_discard(Collector *c) {
        conditioner_reset(c->conditioner);
        sodium_memzero(c->pending, c->pending_max * sizeof(*c->pending));
        c->pending_head = c->pending_n = 0;
        store_purge(c->store, c->source_id);
}

static void collector_read_failed(Collector *c, int error) {
        bool changed = false;

        /* "Nothing now" is normal for a non-blocking device or a contended
         * RDSEED: back off, but it is not a fault of the source. */
        if (error == -EAGAIN)
                return;

        collector_lock(c);
        c->stats.read_errors++;
        c->stats.last_error = error;
        if (c->stats.state != SOURCE_UNAVAILABLE) {
                c->state_before_error = c->stats.state;
                c->stats.state = SOURCE_UNAVAILABLE;
                changed = true;
        }
        collector_unlock(c);
        if (changed)
                collector_wake(c);
}

static void collector_read_succeeded(Collector *c) {
        bool changed = false;

        collector_lock(c);
        if (c->stats.state == SOURCE_UNAVAILABLE) {
                c->stats.state = c->state_before_error;
                changed = true;
        }
        collector_unlock(c);
        if (changed)
                collector_wake(c);
}

/* A window of the running check ended. Returns true when crediting
 * stops: the caller drops what it has not absorbed yet. The loop hears of
 * every window (once per 65,536 samples) with its figures already in the
 * stats, so a stopped source, which makes no blocks to wake it, is still
 * logged at once. A stop purges first, and publishes the window's figures
 * with the state they lead to: whoever sees the stop counted sees its
 * source failed and its blocks gone. */
static bool collector_online_event(Collector *c, OnlineEvent e) {
        SourceState was = c->stats.state;
        bool stop = e == ONLINE_EVENT_STOP;

        if (stop)
                collector_discard(c);
        collector_lock(c);
        c->stats.online = c->online.stats;
        if (stop)
                c->stats.state = SOURCE_FAILED_ESTIMATE;
        else if (e == ONLINE_EVENT_RESUME && was == SOURCE_FAILED_ESTIMATE)
                c->stats.state = c->health.startup_left > 0 ? SOURCE_STARTUP : SOURCE_HEALTHY;
        collector_unlock(c);
        collector_wake(c);
        return stop;
}

ssize_t collector_step(Collector *c, size_t max_samples) {
        size_t n, start = 0, i;
        uint64_t base;
        ssize_t got;
        int r = 0;

        if (!c || max_samples == 0)
                return -EINVAL;
        if (!c->source || collector_state(c) == SOURCE_FAILED_PERMANENT)
                return -ENODEV;

        /* The epoch before the read: a purge after it refuses the block. */
        if (store_epoch(c->store) != c->epoch)
                collector_restart_block(c);
        c->stale = false;
        n = MIN(max_samples, (size_t) COLLECTOR_CHUNK);
        got = c->ops->read(c->source, c->samples, n);
        if (got < 0) {
                collector_read_failed(c, (int) got);
                return got;
        }
        if (got == 0 || (size_t) got > n)
                /* Outside the SourceOps contract: a broken source. */
                abort();
        collector_read_succeeded(c);

        /* samples[i] is health's sample number base + i + 1. */
        base = c->health.samples;
        for (i = 0; i < (size_t) got; i++) {
                HealthVerdict v = health_feed(&c->health, c->samples[i]);
                OnlineEvent e = online_feed(&c->online, c->samples[i]);

                /* On a stop, the run so far belongs to the window that
                 * failed: it is dropped unabsorbed (what was put is purged),
                 * and from here on nothing is credited. */
                if (e != ONLINE_EVENT_NONE && collector_online_event(c, e))
                        start = i;
                if (v == HEALTH_OK && !online_stopped(&c->online)) {
                        if (c->stats.state != SOURCE_HEALTHY)
                                collector_set_state(c, SOURCE_HEALTHY);
                        /* Conditioning runs in stretches; a window or run
                         * that closed ends one, so that what it vetted
                         * leaves at once rather than a step later. */
                        if (health_settled(&c->health) == c->settled)
                                continue;
                        collector_absorb(c, c->samples + start, i + 1 - start, base + start + 1);
                        start = i + 1;
                        r = collector_release(c);
                        if (r < 0)
                                break;
                        continue;
                }

                /* Startup samples follow a failure or the start, and a
                 * stopped running check followed its own discard: never a
                 * stretch of creditable ones, so nothing to absorb. */
                start = i + 1;
                if (v == HEALTH_OK || v == HEALTH_STARTUP)
                        continue;

                if (health_verdict_permanent(v)) {
                        collector_discard(c);
                        collector_lock(c);
                        if (v == HEALTH_PERMANENT_RCT)
                                c->stats.permanent_rct = 1;
                        else
                                c->stats.permanent_apt = 1;
                        collector_unlock(c);
                        collector_set_state(c, SOURCE_FAILED_PERMANENT);
                        break;
                }

                /* Intermittent: nothing is credited again until a new
                 * startup test passed, so one purge per episode is enough.
                 * A stopped running check is purged already and keeps the
                 * state: it is what stands between the source and credit. */
                if (c->stats.state != SOURCE_FAILED_INTERMITTENT && !online_stopped(&c->online)) {
                        collector_discard(c);
                        collector_set_state(c, SOURCE_FAILED_INTERMITTENT);
                }
        }
        if (r == 0 && i == (size_t) got) {
                collector_absorb(c, c->samples + start, i - start, base + start + 1);
                r = collector_release(c);
        }

        sodium_memzero(c->samples, (size_t) got);

        collector_lock(c);
        c->stats.samples += (uint64_t) got;
        c->stats.pending_blocks = c->pending_n;
        c->stats.fail_rct = c->health.fail_rct;
        c->stats.fail_apt = c->health.fail_apt;
        c->stats.online = c->online.stats;
        collector_unlock(c);

        return r < 0 ? r : got;
}

/* ---- the thread ----------------------------------------------------- */

static bool collector_stopping(Collector *c) {
        bool stop;

        collector_lock(c);
        stop = c->stop;
        collector_unlock(c);
        return stop;
}

/* Sleeps usec unless asked to stop; returns true when stopping. */
static bool collector_sleep(Collector *c, usec_t usec) {
        struct timespec until = usec_to_timespec(now_usec(CLOCK_MONOTONIC) + usec);
        bool stop;

        collector_lock(c);
        while (!c->stop) {
                int r = pthread_cond_timedwait(&c->stop_changed, &c->lock, &until);

                if (r == ETIMEDOUT)
                        break;
                if (r != 0)
                        abort();
        }
        stop = c->stop;
        collector_unlock(c);
        return stop;
}

/* Whether the source has a health test to pass before it is credited
 * again: its startup test (at start, after a reload restarted it, after an
 * intermittent failure), or the running check's clean windows after a
 * stop. The sampling thread owns both states. */
static bool collector_owes_test(const Collector *c) {
        return c->health.startup_left > 0 || online_stopped(&c->online);
}

static void *collector_thread(void *userdata) {
        Collector *c = userdata;
        Backoff backoff;

        /* A collector never gives up on its source: it waits, ever less
         * often, until the device answers or it is stopped. */
        backoff_init(&backoff, 0, USEC_INFINITY);
        while (!collector_stopping(c)) {
                usec_t wait;
                ssize_t r;

                r = store_wait_for_demand(c->store, collector_owes_test(c));
                if (r == -EINTR)
                        continue; /* kicked: check whether we are to stop */
                if (r < 0 || collector_stopping(c))
                        break;

                collector_set_running(c, true);
                r = collector_step(c, COLLECTOR_CHUNK);
                collector_set_running(c, false);

                if (collector_state(c) == SOURCE_FAILED_PERMANENT)
                        break;
                /* The store is gone, or a file ended: nothing more to do. */
                if (r == -ESHUTDOWN || r == -ENODATA)
                        break;
                if (backoff_next(&backoff, r, &wait) < 0)
                        break;
                if (wait > 0 && collector_sleep(c, wait))
                        break;
        }
        return NULL;
}

/* ---- lifetime ------------------------------------------------------- */

int collector_new(const SourceOps *ops, const SourceParams *params, uint32_t credit_mbits,
                  unsigned source_id, Store *store, CollectorWakeFn wake, void *userdata,
                  Collector **ret) {
        pthread_condattr_t attr;
        SourceParams p;
        Collector *c;
        uint32_t max;
        int r;

        if (!ops || !store || !ret || credit_mbits == 0 || credit_mbits > CREDIT_MBITS_MAX)
                return -EINVAL;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->ops = ops;
        c->source_id = source_id;
        c->store = store;
        c->epoch = store_epoch(store);
        c->wake = wake;
        c->userdata = userdata;

        if (pthread_mutex_init(&c->lock, NULL) != 0) {
                free(c);
                return -ENOMEM;
        }
        /* Backoff deadlines on the monotonic clock: a wall-clock step must
         * neither stall a source nor make it spin. */
        if (pthread_condattr_init(&attr) != 0 ||
            pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0 ||
            pthread_cond_init(&c->stop_changed, &attr) != 0) {
                pthread_mutex_destroy(&c->lock);
                free(c);
                return -ENOMEM;
        }
        pthread_condattr_destroy(&attr);

        r = conditioner_new(&c->conditioner);
        if (r < 0)
                goto fail;
        c->samples = secret_alloc(COLLECTOR_CHUNK);
        if (!c->samples) {
                r = -ENOMEM;
                goto fail;
        }

        c->stats.state = SOURCE_UNAVAILABLE;
        p = params ? *params : (SourceParams) { 0 };
        p.selftest = &c->stats.selftest;
        r = ops->open(&p, &c->source);
        if (r == -ENOMEM)
                goto fail;
        if (r < 0) {
                c->source = NULL;
                c->stats.last_error = r;
                *ret = c;
                return 0;
        }

        max = ops->max_credit(c->source);
        credit_mbits = MIN(credit_mbits, max);
        if (credit_mbits == 0) {
                /* Nothing to credit: the source must not feed the store. */
                ops->close(c->source);
                c->source = NULL;
                c->stats.last_error = -EPERM;
                *ret = c;
                return 0;
        }

        r = health_init(&c->health, credit_mbits);
        if (r < 0)
                goto fail;
        r = online_init(&c->online, credit_mbits);
        if (r < 0)
                goto fail;
        c->stats.online = c->online.stats;
        /* Unsettled samples: at most a window, or a run short of the RCT
         * cutoff; every block but the first among them takes at least
         * ceil(320000 / credit) samples. One more for the block being
         * finished while the ring is looked at. */
        c->pending_max = (size_t) MAX(c->health.intermittent.apt_window, c->health.intermittent.rct) *
                                 credit_mbits / CONDITIONER_BLOCK_MBITS + 2;
        c->pending = secret_alloc(c->pending_max * sizeof(*c->pending));
        if (!c->pending) {
                r = -ENOMEM;
                goto fail;
        }
        c->stats.credit_mbits = credit_mbits;
        c->stats.state = SOURCE_STARTUP;

        *ret = c;
        return 0;

fail:
        collector_free(c);
        return r;
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

Collector *collector_free(Collector *c) {
        if (!c)
                return NULL;

        if (c->thread_started) {
                collector_lock(c);
                c->stop = true;
                if (pthread_cond_broadcast(&c->stop_changed) != 0)
                        abort();
                collector_unlock(c);
                /* It may be waiting for demand that will not come. */
                store_kick(c->store);
                pthread_join(c->thread, NULL);
        }

        if (c->source)
                c->ops->close(c->source);
        conditioner_free(c->conditioner);
        secret_free(c->samples);
        secret_free(c->pending);
        sodium_memzero(&c->health, sizeof(c->health));
        sodium_memzero(&c->online, sizeof(c->online));
        pthread_cond_destroy(&c->stop_changed);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
}

/* ---- status --------------------------------------------------------- */

void collector_get_stats(Collector *c, CollectorStats *ret) {
        collector_lock(c);
        *ret = c->stats;
        collector_unlock(c);
}

const char *collector_name(const Collector *c) {
        return c->ops->name;
}

const char *source_state_to_string(SourceState s) {
        static const char *const table[_SOURCE_STATE_MAX] = {
                [SOURCE_STARTUP] = "startup",
                [SOURCE_HEALTHY] = "healthy",
                [SOURCE_FAILED_INTERMITTENT] = "failed-intermittent",
                [SOURCE_FAILED_PERMANENT] = "failed-permanent",
                [SOURCE_UNAVAILABLE] = "unavailable",
                [SOURCE_FAILED_ESTIMATE] = "failed-estimate",
        };

        if ((unsigned) s >= _SOURCE_STATE_MAX)
                return NULL;
        return table[s];
}
