/* collector-board.c - a collector's shared state (see collector-board.h).
 * No secrets: counts and states only.
 * Flow: collector -> [board] -> daemon; daemon -> [board: stop] -> collector. */
#include "collector-board.h"

#include <errno.h>
#include <stdlib.h>

int collector_board_init(CollectorBoard *b, CollectorWakeFn wake, void *userdata) {
        pthread_condattr_t attr;
        int r;

        *b = (CollectorBoard) { .wake = wake, .userdata = userdata };
        if (pthread_mutex_init(&b->lock, NULL) != 0)
                return -ENOMEM;
        /* Backoff deadlines on the monotonic clock: a wall-clock step must
         * neither stall a source nor make it spin. */
        r = pthread_condattr_init(&attr);
        if (r == 0) {
                if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0)
                        r = pthread_cond_init(&b->stop_changed, &attr);
                else
                        r = EINVAL;
                pthread_condattr_destroy(&attr);
        }
        if (r != 0) {
                pthread_mutex_destroy(&b->lock);
                return -ENOMEM;
        }
        return 0;
}

void collector_board_deinit(CollectorBoard *b) {
        pthread_cond_destroy(&b->stop_changed);
        pthread_mutex_destroy(&b->lock);
}

CollectorStats *collector_board_lock(CollectorBoard *b) {
        if (pthread_mutex_lock(&b->lock) != 0)
                abort();
        return &b->stats;
}

void collector_board_unlock(CollectorBoard *b) {
        if (pthread_mutex_unlock(&b->lock) != 0)
                abort();
}

void collector_board_wake(CollectorBoard *b) {
        if (b->wake)
                b->wake(b->userdata);
}

void collector_board_set_state(CollectorBoard *b, SourceState s, const HealthTest *health) {
        CollectorStats *st = collector_board_lock(b);
        bool changed = st->state != s;

        st->state = s;
        st->fail_rct = health->fail_rct;
        st->fail_apt = health->fail_apt;
        collector_board_unlock(b);
        if (changed)
                collector_board_wake(b);
}

void collector_board_get(CollectorBoard *b, CollectorStats *ret) {
        *ret = *collector_board_lock(b);
        collector_board_unlock(b);
}

void collector_board_stop(CollectorBoard *b) {
        collector_board_lock(b);
        b->stop = true;
        if (pthread_cond_broadcast(&b->stop_changed) != 0)
                abort();
        collector_board_unlock(b);
}

bool collector_board_stopping(CollectorBoard *b) {
        bool stop;

        collector_board_lock(b);
        stop = b->stop;
        collector_board_unlock(b);
        return stop;
}

bool collector_board_sleep(CollectorBoard *b, usec_t usec) {
        struct timespec until = usec_to_timespec(now_usec(CLOCK_MONOTONIC) + usec);
        bool stop;

        collector_board_lock(b);
        while (!b->stop) {
                int r = pthread_cond_timedwait(&b->stop_changed, &b->lock, &until);

                if (r == ETIMEDOUT)
                        break;
                if (r != 0)
                        abort();
        }
        stop = b->stop;
        collector_board_unlock(b);
        return stop;
}

const char *source_state_to_string(SourceState s) {
        static const char *const table[_SOURCE_STATE_MAX] = {
                [SOURCE_STARTUP] = "startup",
                [SOURCE_HEALTHY] = "healthy",
                [SOURCE_FAILED_INTERMITTENT] = "failed-intermittent",
                [SOURCE_FAILED_PERMANENT] = "failed-permanent",
                [SOURCE_UNAVAILABLE] = "unavailable",
                [SOURCE_REFUSED] = "refused",
        };

        if ((unsigned) s >= _SOURCE_STATE_MAX)
                return NULL;
        return table[s];
}

void collector_stats_add_verdict(CollectorStats *st, const GateVerdict *v) {
        st->recent[st->verdicts % COLLECTOR_RECENT_VERDICTS] = *v;
        st->verdicts++;
}

const GateVerdict *collector_stats_verdict(const CollectorStats *st, size_t i) {
        uint64_t kept = st->verdicts < COLLECTOR_RECENT_VERDICTS ? st->verdicts : COLLECTOR_RECENT_VERDICTS;

        return &st->recent[(st->verdicts - kept + i) % COLLECTOR_RECENT_VERDICTS];
}
