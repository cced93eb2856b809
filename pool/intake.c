/* intake.c - a source's samples through the health tests and the
 * conditioner to the store (the invariants are in intake.h).
 *
 * Conditioning runs in stretches: samples are fed to the tests one by
 * one, and the stretch that passed is conditioned when a window or run
 * closes (so that what it vetted leaves at once), at a failure's edge, and
 * at the end of a chunk.
 * Secrets: the hash state lives in the conditioner, finished blocks in
 * pending (pending.c says where each is erased); the health and running
 * check states, which hold recent sample values, are erased on free.
 * Flow: source -> [intake: health -> conditioner -> pending] -> store. */
#include "intake.h"

#include <errno.h>
#include <stdlib.h>

#include "conditioner.h"
#include "health.h"
#include "online.h"
#include "pending.h"
#include "secret.h"

struct Intake {
        Store *store;                  /* borrowed */
        CollectorBoard *board;         /* borrowed: the collector's */
        unsigned source_id;
        uint32_t credit_mbits;
        SourceState state;             /* the board's, but for SOURCE_UNAVAILABLE */

        HealthTest health;
        OnlineCheck online;
        Conditioner *conditioner;
        Pending *pending;
        uint64_t epoch;                /* the store's, when the partial block began */
        bool stale;                    /* this chunk was read before a purge */
        uint64_t settled;              /* health_settled() when last looked */
};

/* Unsettled samples: at most a window, or a run short of the RCT cutoff;
 * every block but the first among them takes at least ceil(320000 /
 * credit) samples. One more for the block being finished while the ring
 * is looked at. */
static size_t intake_pending_max(const HealthTest *health, uint32_t credit_mbits) {
        return (size_t) MAX(health->intermittent.apt_window, health->intermittent.rct) * credit_mbits /
                       CONDITIONER_BLOCK_MBITS +
               2;
}

int intake_new(uint32_t credit_mbits, unsigned source_id, Store *store, CollectorBoard *board, Intake **ret) {
        _cleanup_(intake_freep) Intake *in = NULL;
        CollectorStats *st;
        int r;

        if (!store || !board || !ret)
                return -EINVAL;
        in = calloc(1, sizeof(*in));
        if (!in)
                return -ENOMEM;
        *in = (Intake) {
                .store = store,
                .board = board,
                .source_id = source_id,
                .credit_mbits = credit_mbits,
                .state = SOURCE_STARTUP,
                .epoch = store_epoch(store),
        };
        r = health_init(&in->health, credit_mbits);
        if (r < 0)
                return r;
        r = online_init(&in->online, credit_mbits);
        if (r < 0)
                return r;
        r = conditioner_new(&in->conditioner);
        if (r < 0)
                return r;
        r = pending_new(intake_pending_max(&in->health, credit_mbits), &in->pending);
        if (r < 0)
                return r;

        st = collector_board_lock(board);
        st->credit_mbits = credit_mbits;
        st->online = in->online.stats;
        st->state = in->state;
        collector_board_unlock(board);
        *ret = TAKE_PTR(in);
        return 0;
}

Intake *intake_free(Intake *in) {
        if (!in)
                return NULL;
        conditioner_free(in->conditioner);
        pending_free(in->pending);
        sodium_memzero(&in->health, sizeof(in->health));
        sodium_memzero(&in->online, sizeof(in->online));
        free(in);
        return NULL;
}

SourceState intake_state(const Intake *in) {
        return in->state;
}

bool intake_owes_test(const Intake *in) {
        return in->health.startup_left > 0 || online_stopped(&in->online);
}

static void intake_set_state(Intake *in, SourceState s) {
        in->state = s;
        collector_board_set_state(in->board, s, &in->health);
}

/* ---- blocks ------------------------------------------------------------ */

/* A store_purge_all() (the machine was cloned or restored) makes every
 * sample read before it stale: the partial block and the held ones start
 * afresh. */
static void intake_restart_block(Intake *in) {
        conditioner_reset(in->conditioner);
        pending_clear(in->pending);
        in->epoch = store_epoch(in->store);
}

/* Fail closed: nothing conditioned, held or stored before the failure
 * survives. */
static void intake_discard(Intake *in) {
        conditioner_reset(in->conditioner);
        pending_clear(in->pending);
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

                used = conditioner_absorb(in->conditioner, p, n, in->credit_mbits, b->data, &mbits, &ready);
                p += used;
                n -= used;
                number += used;
                if (ready)
                        pending_commit(in->pending, mbits, number - 1);
        }
}

/* Moves the held blocks whose samples are all settled to the store, oldest
 * first. Returns 0, or -ESHUTDOWN once the store stopped. */
static int intake_release(Intake *in) {
        PendingBlock *b;

        in->settled = health_settled(&in->health);
        while ((b = pending_ready(in->pending, in->settled))) {
                uint64_t mbits = b->mbits;
                CollectorStats *st;
                int r;

                r = store_put(in->store, b->data, mbits, in->source_id, in->epoch);
                pending_pop(in->pending);
                if (r == -ESTALE) {
                        /* The store was purged after these samples were
                         * read: they, the held blocks and the rest of the
                         * chunk go (the health tests still see them). */
                        intake_restart_block(in);
                        in->stale = true;
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
                collector_board_unlock(in->board);
                collector_board_wake(in->board);
        }
        return 0;
}

/* ---- verdicts ---------------------------------------------------------- */

/* A window of the running check ended. Returns true when crediting
 * stops: the caller drops what it has not conditioned yet. The loop hears
 * of every window (once per 65,536 samples) with its figures already on
 * the board, so a stopped source, which makes no blocks to wake it, is
 * still logged at once. A stop purges first, and publishes the window's
 * figures with the state they lead to: whoever sees the stop counted sees
 * its source failed and its blocks gone. */
static bool intake_online_event(Intake *in, OnlineEvent e) {
        bool stop = e == ONLINE_EVENT_STOP;
        CollectorStats *st;

        if (stop) {
                intake_discard(in);
                in->state = SOURCE_FAILED_ESTIMATE;
        } else if (e == ONLINE_EVENT_RESUME && in->state == SOURCE_FAILED_ESTIMATE)
                in->state = in->health.startup_left > 0 ? SOURCE_STARTUP : SOURCE_HEALTHY;
        st = collector_board_lock(in->board);
        st->online = in->online.stats;
        st->state = in->state;
        collector_board_unlock(in->board);
        collector_board_wake(in->board);
        return stop;
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
         * passed, so one purge per episode is enough. A stopped running
         * check is purged already and keeps the state: it is what stands
         * between the source and credit. */
        if (in->state != SOURCE_FAILED_INTERMITTENT && !online_stopped(&in->online)) {
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
        st->online = in->online.stats;
        collector_board_unlock(in->board);
}

/* ---- feeding ----------------------------------------------------------- */

void intake_prepare(Intake *in) {
        /* The epoch before the read: a purge after it refuses the block. */
        if (store_epoch(in->store) != in->epoch)
                intake_restart_block(in);
        in->stale = false;
}

int intake_feed(Intake *in, const uint8_t *samples, size_t n) {
        uint64_t base = in->health.samples;   /* samples[i] is health's number base + i + 1 */
        size_t start = 0, i;
        int r = 0;

        for (i = 0; i < n; i++) {
                HealthVerdict v = health_feed(&in->health, samples[i]);
                OnlineEvent e = online_feed(&in->online, samples[i]);

                /* On a stop, the run so far belongs to the window that
                 * failed: it is dropped unconditioned (what was put is
                 * purged), and from here on nothing is credited. */
                if (e != ONLINE_EVENT_NONE && intake_online_event(in, e))
                        start = i;
                if (v == HEALTH_OK && !online_stopped(&in->online)) {
                        if (in->state != SOURCE_HEALTHY)
                                intake_set_state(in, SOURCE_HEALTHY);
                        /* A window or run that closed ends a stretch. */
                        if (health_settled(&in->health) == in->settled)
                                continue;
                        intake_absorb(in, samples + start, i + 1 - start, base + start + 1);
                        start = i + 1;
                        r = intake_release(in);
                        if (r < 0)
                                break;
                        continue;
                }

                /* Startup samples follow a failure or the start, and a
                 * stopped running check followed its own discard: never a
                 * stretch of creditable ones, so nothing to condition. */
                start = i + 1;
                if (v != HEALTH_OK && v != HEALTH_STARTUP && intake_health_failed(in, v))
                        break;
        }
        if (r == 0 && i == n) {
                intake_absorb(in, samples + start, i - start, base + start + 1);
                r = intake_release(in);
        }
        intake_publish(in, n);
        return r;
}
