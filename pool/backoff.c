/* backoff.c - when a reader of a source reads again (see backoff.h).
 * Flow: source -> [backoff: when to read again] -> collector, capture. */
#include "backoff.h"

#include <errno.h>

#include "util/cleanup.h"

void backoff_init(Backoff *b, unsigned errors_max, usec_t stall_usec) {
        *b = (Backoff) {
                .errors_max = errors_max,
                .stall_usec = stall_usec,
                .wait = BACKOFF_MIN_USEC,
                /* A reader that never gives up need not read the clock. */
                .progress = stall_usec == USEC_INFINITY ? 0 : now_usec(CLOCK_MONOTONIC),
        };
}

int backoff_next(Backoff *b, ssize_t n, usec_t *ret_wait) {
        if (n > 0) {
                b->wait = BACKOFF_MIN_USEC;
                b->errors = 0;
                if (b->stall_usec != USEC_INFINITY)
                        b->progress = now_usec(CLOCK_MONOTONIC);
                *ret_wait = 0;
                return 0;
        }
        if (n == -ENODATA)
                return -ENODATA;
        if (n != -EAGAIN && b->errors_max > 0 && ++b->errors >= b->errors_max)
                return (int) n;
        if (b->stall_usec != USEC_INFINITY && now_usec(CLOCK_MONOTONIC) - b->progress >= b->stall_usec)
                return -ETIMEDOUT;
        *ret_wait = b->wait;
        b->wait = MIN(b->wait * 2, BACKOFF_MAX_USEC);
        return 0;
}
