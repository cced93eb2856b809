/* intake.c - a source's samples through the running gate, the health
 * tests and the conditioner to the store (the invariants are in intake.h).
 *
 * Windows: win[filling] takes the samples as read; when it is full it
 * goes to the gate and the other one (once its verdict was taken) fills.
 * A verdict is taken as soon as it is in (looked at on every feed), or
 * waited for when both windows are full.
 * Conditioning runs in stretches: a credited window's samples are fed to
 * the health tests one by one, and the stretch that passed is conditioned
 * when an APT window or RCT run closes (so that what it vetted leaves at
 * once), at a failure's edge, and at the end of the window.
 * Secrets: the windows are secret_alloc()'d and erased once passed on or
 * dropped; the hash state lives in the conditioner, finished blocks in
 * pending (pending.c says where each is erased); the health state, which
 * holds recent sample values, is erased on free.
 * Flow: source -> [intake: gate -> health -> conditioner -> pending] -> store. */
#include "intake.h"

#include <errno.h>
#include <stdlib.h>

#include <math.h>
#include <string.h>

#include "conditioner.h"
#include "health.h"
#include "pending.h"
#include "secret.h"

/* A window of samples: filling, or with the gate. */
typedef struct IntakeWindow {
        uint8_t *samples;              /* the intake's window size, secret_alloc() */
        size_t n;
        size_t induced_from, induced_to; /* samples[induced_from..induced_to) were degraded (induce.h) */
        bool submitted;                /* job is the gate's until its verdict is taken */
        GateJob job;
} IntakeWindow;

struct Intake {
        Store *store;                  /* borrowed */
        CollectorBoard *board;         /* borrowed: the collector's */
        Gate *gate;                    /* borrowed */
        unsigned source_id;
        SourceState state;             /* the board's, but for SOURCE_UNAVAILABLE */
        /* Published on the board: the policy, the window size, and the
         * credit in force (the grant of the window being passed on). */
        GateStats gate_stats;

        IntakeWindow win[2];
        unsigned filling;              /* win[filling] takes samples */
        uint64_t fed;                  /* samples fed into windows: the next one's number, from 0 */
        bool drop_windows;             /* a purge was met while a window was passed on */

        HealthTest health;
        Conditioner *conditioner;
        Pending *pending;
        uint64_t epoch;                /* the store's, when the partial block began */
        bool stale;                    /* the window being passed on was read before a purge */
        uint64_t settled;              /* health_settled() when last looked */
        /* Induced samples passed to the health tests, in health's numbering
         * (first..last; 0..0: none, it counts from 1), and whether the
         * partial block took one: such a block is counted when stored
         * (induce.blocks), the evidence that none reaches a reader. */
        uint64_t induced_first, induced_last;
        bool block_induced;
};

/* Unsettled samples: at most a health window, or a run short of the RCT
 * cutoff; every block but the first among them takes at least
 * ceil(320000 / credit) samples. At the most a window can be granted
 * the health window dominates; at lower credits a run is longer, but
 * (1 + 30 / h) x h bits stay under one block. One more for that, one for
 * the block being finished while the ring is looked at. */
static size_t intake_pending_max(uint32_t max_mbits) {
        HealthTest t;

        if (health_init(&t, max_mbits) < 0)
                return 0;
        return (size_t) MAX(t.intermittent.apt_window, t.intermittent.rct) * max_mbits / CONDITIONER_BLOCK_MBITS + 3;
}

int intake_new(const GatePolicy *policy, uint32_t window, Gate *gate, unsigned source_id, Store *store,
               CollectorBoard *board, Intake **ret) {
        _cleanup_(intake_freep) Intake *in = NULL;
        CollectorStats *st;
        uint32_t max_mbits;
        int r;

        if (!policy || !gate || !store || !board || !ret || window < GATE_WINDOW_MIN || window > GATE_WINDOW_MAX)
                return -EINVAL;
        max_mbits = gate_policy_most(policy);
        if (max_mbits == 0 || max_mbits > CREDIT_MBITS_MAX)
                return -EINVAL;
        in = calloc(1, sizeof(*in));
        if (!in)
                return -ENOMEM;
        *in = (Intake) {
                .store = store,
                .board = board,
                .gate = gate,
                .source_id = source_id,
                .state = SOURCE_STARTUP,
                .gate_stats = { .policy = *policy, .window = window, .estimate = NAN },
                .epoch = store_epoch(store),
        };
        for (unsigned i = 0; i < 2; i++) {
                in->win[i].samples = secret_alloc(window);
                if (!in->win[i].samples)
                        return -ENOMEM;
        }
        r = health_init(&in->health, max_mbits);
        if (r < 0)
                return r;
        r = conditioner_new(&in->conditioner);
        if (r < 0)
                return r;
        r = pending_new(intake_pending_max(max_mbits), &in->pending);
        if (r < 0)
                return r;

        st = collector_board_lock(board);
        st->gate = in->gate_stats;
        st->state = in->state;
        collector_board_unlock(board);
        *ret = TAKE_PTR(in);
        return 0;
}

/* The gate lets go of the window; its samples are erased. */
static void intake_window_drop(Intake *in, IntakeWindow *w) {
        if (w->submitted)
                gate_cancel(in->gate, &w->job);
        w->submitted = false;
        sodium_memzero(w->samples, w->n);
        w->n = 0;
        w->induced_from = w->induced_to = 0;
}

Intake *intake_free(Intake *in) {
        if (!in)
                return NULL;
        for (unsigned i = 0; i < 2; i++)
                if (in->win[i].samples) {
                        intake_window_drop(in, &in->win[i]);
                        secret_free(in->win[i].samples);
                }
        conditioner_free(in->conditioner);
        pending_free(in->pending);
        sodium_memzero(&in->health, sizeof(in->health));
        free(in);
        return NULL;
}

SourceState intake_state(const Intake *in) {
        return in->state;
}

bool intake_owes_test(const Intake *in) {
        return in->health.startup_left > 0 || in->state == SOURCE_REFUSED;
}

static void intake_set_state(Intake *in, SourceState s) {
        in->state = s;
        collector_board_set_state(in->board, s, &in->health);
}

/* ---- blocks ------------------------------------------------------------ */

/* A store_purge_all() (the machine was cloned or restored) makes every
 * sample read before it stale: the partial block and the held ones start
 * afresh. The windows go too (intake_prepare(), or after the window being
 * passed on: drop_windows). */
static void intake_restart_block(Intake *in) {
        conditioner_reset(in->conditioner);
        pending_clear(in->pending);
        in->block_induced = false;
        in->epoch = store_epoch(in->store);
}

static void intake_restart(Intake *in) {
        intake_restart_block(in);
        for (unsigned i = 0; i < 2; i++)
                intake_window_drop(in, &in->win[i]);
        in->drop_windows = false;
}

/* Fail closed: nothing conditioned, held or stored before the failure
 * survives. */
static void intake_discard(Intake *in) {
        conditioner_reset(in->conditioner);
        pending_clear(in->pending);
        in->block_induced = false;
        store_purge(in->store, in->source_id);
}

/* Conditions samples that all passed the health tests; the first is sample
 * number `number`. Finished blocks are held in pending. Nothing of a chunk
 * read before a purge is conditioned. */
static void intake_absorb(Intake *in, const uint8_t *p, size_t n, uint64_t number) {
        while (n > 0 && !in->stale) {
                PendingBlock *b = pending_slot(in->pending);
                uint64_t mbits = 0;
                bool ready = false;
                size_t used;

                used = conditioner_absorb(in->conditioner, p, n, in->gate_stats.credit_mbits, b->data, &mbits,
                                          &ready);
                /* Samples number..number + used - 1 went into this block. */
                if (used > 0 && number <= in->induced_last && number + used - 1 >= in->induced_first)
                        in->block_induced = true;
                p += used;
                n -= used;
                number += used;
                if (ready) {
                        b->induced = in->block_induced;
                        in->block_induced = false;
                        pending_commit(in->pending, mbits, number - 1);
                }
        }
}

/* Moves the held blocks whose samples are all settled to the store, oldest
 * first. Returns 0, or -ESHUTDOWN once the store stopped. */
static int intake_release(Intake *in) {
        PendingBlock *b;

        in->settled = health_settled(&in->health);
        while ((b = pending_ready(in->pending, in->settled))) {
                uint64_t mbits = b->mbits;
                bool induced = b->induced;
                CollectorStats *st;
                int r;

                r = store_put(in->store, b->data, mbits, in->source_id, in->epoch);
                pending_pop(in->pending);
                if (r == -ESTALE) {
                        /* The store was purged after these samples were
                         * read: they, the held blocks, the rest of the
                         * window and the windows behind it go (the health
                         * tests still see this one's). */
                        intake_restart_block(in);
                        in->stale = true;
                        in->drop_windows = true;
                        return 0;
                }
                if (r == -ENOSPC)
                        /* Nobody wants it now; the thread goes back to
                         * waiting for demand after this step. */
                        continue;
                if (r < 0)
                        return r;

                st = collector_board_lock(in->board);
                st->blocks++;
                st->credited_mbits += mbits;
                st->induce.blocks += induced;
                collector_board_unlock(in->board);
                collector_board_wake(in->board);
        }
        return 0;
}

/* ---- verdicts ---------------------------------------------------------- */

/* The gate refused a window: none of its samples counts, and nothing
 * conditioned, held or stored from this source survives it (the blocks
 * before it were judged too, but a source that just fell into a regime the
 * gate refuses may have been sliding into it already). Published with
 * the state it leads to: whoever sees the refusal counted sees the blocks
 * gone. */
static void intake_refused(Intake *in, const GateVerdict *v) {
        CollectorStats *st;

        intake_discard(in);
        in->gate_stats.refused++;
        if (!in->gate_stats.last_refused)
                in->gate_stats.refusals++;
        in->gate_stats.last_refused = true;
        in->gate_stats.credit_mbits = 0;
        in->gate_stats.estimate = v->estimate;
        in->state = SOURCE_REFUSED;
        st = collector_board_lock(in->board);
        collector_stats_add_verdict(st, v);
        st->gate = in->gate_stats;
        st->state = in->state;
        collector_board_unlock(in->board);
        collector_board_wake(in->board);
}

/* The gate credited a window: its samples go to the health tests at
 * cutoffs for its credit, and to the conditioner at that credit. */
static void intake_credited(Intake *in, const GateVerdict *v) {
        CollectorStats *st;

        /* The grant is in 1..the policy's most, which health_init() took.
         * The cutoffs already are the in-force credit's when it did not
         * move (a refusal sets it to 0). */
        if (v->credit_mbits != in->gate_stats.credit_mbits && health_set_credit(&in->health, v->credit_mbits) < 0)
                abort();
        in->gate_stats.credited++;
        in->gate_stats.last_refused = false;
        in->gate_stats.credit_mbits = v->credit_mbits;
        in->gate_stats.estimate = v->estimate;
        if (in->state == SOURCE_REFUSED)
                in->state = in->health.startup_left > 0 ? SOURCE_STARTUP : SOURCE_HEALTHY;
        st = collector_board_lock(in->board);
        collector_stats_add_verdict(st, v);
        st->gate = in->gate_stats;
        st->state = in->state;
        collector_board_unlock(in->board);
        collector_board_wake(in->board);
}

/* A sample failed a health test. Returns true when the source is disabled
 * for good. */
static bool intake_health_failed(Intake *in, HealthVerdict v) {
        CollectorStats *st;

        if (health_verdict_permanent(v)) {
                intake_discard(in);
                st = collector_board_lock(in->board);
                if (v == HEALTH_PERMANENT_RCT)
                        st->permanent_rct = 1;
                else
                        st->permanent_apt = 1;
                collector_board_unlock(in->board);
                intake_set_state(in, SOURCE_FAILED_PERMANENT);
                return true;
        }

        /* Intermittent: nothing is credited again until a new startup test
         * passed, so one purge per episode is enough. */
        if (in->state != SOURCE_FAILED_INTERMITTENT) {
                intake_discard(in);
                intake_set_state(in, SOURCE_FAILED_INTERMITTENT);
        }
        return false;
}

/* The counters a chunk moved, in one go. */
static void intake_publish(Intake *in, size_t n) {
        CollectorStats *st = collector_board_lock(in->board);

        st->samples += (uint64_t) n;
        st->pending_blocks = pending_count(in->pending);
        st->fail_rct = in->health.fail_rct;
        st->fail_apt = in->health.fail_apt;
        collector_board_unlock(in->board);
}

/* ---- passing a credited window on -------------------------------------- */

/* Health tests, conditioning and release for the samples of a credited
 * window. Returns 0, or -ESHUTDOWN once the store stopped. */
static int intake_pass(Intake *in, const IntakeWindow *w) {
        const uint8_t *samples = w->samples;
        size_t n = w->n;
        uint64_t base = in->health.samples;   /* samples[i] is health's number base + i + 1 */
        size_t start = 0, i;
        int r = 0;

        if (w->induced_to > w->induced_from) {
                in->induced_first = base + w->induced_from + 1;
                in->induced_last = base + w->induced_to;
        }

        for (i = 0; i < n; i++) {
                HealthVerdict v = health_feed(&in->health, samples[i]);

                if (v == HEALTH_OK) {
                        if (in->state != SOURCE_HEALTHY)
                                intake_set_state(in, SOURCE_HEALTHY);
                        /* A window or run that closed ends a stretch. */
                        if (health_settled(&in->health) == in->settled)
                                continue;
                        intake_absorb(in, samples + start, i + 1 - start, base + start + 1);
                        start = i + 1;
                        r = intake_release(in);
                        if (r < 0)
                                return r;
                        continue;
                }

                /* Startup samples follow a failure or the start: never a
                 * stretch of creditable ones, so nothing to condition. */
                start = i + 1;
                if (v != HEALTH_STARTUP && intake_health_failed(in, v))
                        return 0;
        }
        intake_absorb(in, samples + start, n - start, base + start + 1);
        return intake_release(in);
}

/* Takes the verdict on the window the gate has (waiting for it when wait,
 * else only when it is in) and passes the window on. 0 or -ESHUTDOWN. */
static int intake_take_verdict(Intake *in, bool wait) {
        IntakeWindow *w = &in->win[in->filling ^ 1U];
        int r = 0;

        if (!w->submitted || (!wait && !gate_done(in->gate, &w->job)))
                return 0;
        r = gate_wait(in->gate, &w->job);
        w->submitted = false;
        if (r == 0 && in->state != SOURCE_FAILED_PERMANENT) {
                if (w->job.verdict.credit_mbits == 0)
                        intake_refused(in, &w->job.verdict);
                else {
                        intake_credited(in, &w->job.verdict);
                        r = intake_pass(in, w);
                }
        } else
                r = 0; /* cancelled: the gate is going away */
        intake_window_drop(in, w);
        in->stale = false;
        if (in->drop_windows)
                intake_restart(in);
        return r;
}

/* The filling window is full: to the gate with it, once the other one is
 * free. 0 or -ESHUTDOWN. */
static int intake_submit(Intake *in) {
        IntakeWindow *w = &in->win[in->filling];
        int r;

        r = intake_take_verdict(in, true);
        if (r < 0 || w->n < in->gate_stats.window)
                return r; /* a purge met on the way dropped this one too */
        w->job = (GateJob) {
                .samples = w->samples,
                .n = w->n,
                .policy = in->gate_stats.policy,
                .start = in->fed - w->n,
        };
        r = gate_submit(in->gate, &w->job);
        if (r < 0)
                return -ESHUTDOWN;
        w->submitted = true;
        in->filling ^= 1U;
        return 0;
}

/* ---- feeding ----------------------------------------------------------- */

int intake_prepare(Intake *in) {
        /* The epoch before the read: a purge after it refuses the block. */
        if (store_epoch(in->store) != in->epoch)
                intake_restart(in);
        in->stale = false;
        /* A verdict that came in since the last feed counts now, not when
         * the next samples come (a slow source, a FIFO gone quiet). */
        return in->state == SOURCE_FAILED_PERMANENT ? 0 : intake_take_verdict(in, false);
}

uint32_t intake_window_size(const Intake *in) {
        return in->gate_stats.window;
}

size_t intake_window_room(const Intake *in) {
        return in->gate_stats.window - in->win[in->filling].n;
}

int intake_feed_samples(Intake *in, const uint8_t *samples, size_t n, bool induced) {
        size_t fed = n;
        int r = 0;

        while (n > 0 && r == 0 && in->state != SOURCE_FAILED_PERMANENT) {
                IntakeWindow *w = &in->win[in->filling];
                size_t take = MIN(n, in->gate_stats.window - w->n);

                if (induced) {
                        if (w->induced_to == w->induced_from)
                                w->induced_from = w->n;
                        w->induced_to = w->n + take;
                }
                memcpy(w->samples + w->n, samples, take);
                w->n += take;
                in->fed += take;
                samples += take;
                n -= take;
                /* A full window goes to the gate; else a verdict that is
                 * in is taken now. */
                r = w->n == in->gate_stats.window ? intake_submit(in) : intake_take_verdict(in, false);
        }
        intake_publish(in, fed);
        return r;
}

int intake_finish(Intake *in) {
        int r = intake_take_verdict(in, true);

        intake_publish(in, 0);
        return r;
}
