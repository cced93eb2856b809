/* backoff.h - how a reader of a source waits when the source gives
 * nothing: the one policy of the collector's thread and of a capture
 * (capture.h, which the control socket's raw export uses too).
 *
 * A read that yields no sample, "nothing now" (-EAGAIN) or a device error
 * alike, is followed by a wait of BACKOFF_MIN_USEC, doubling up to
 * BACKOFF_MAX_USEC; the first read that yields samples starts it over. So
 * a broken or starved device never makes its reader spin, and a working
 * one is read back to back. A reader may give up: after errors_max device
 * errors in a row (-EAGAIN is not one), or after stall_usec without a
 * sample; the end of a file source (-ENODATA) always ends the reading.
 * The judging is here, the waiting is the reader's: the collector waits
 * on a condition its owner can signal, a capture sleeps and then asks its
 * sink whether to go on.
 * It lives in pool/ rather than util/ because the judging is the
 * SourceOps read contract (source.h): what -EAGAIN and -ENODATA mean.
 * Plain data, one reader each; no secrets, no I/O besides the clock.
 * Flow: source -> [backoff: when to read again] -> collector, capture. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "util/time-util.h"

#define BACKOFF_MIN_USEC (10U * USEC_PER_MSEC)
#define BACKOFF_MAX_USEC USEC_PER_SEC

typedef struct Backoff {
        unsigned errors_max;  /* device errors in a row that end the reading; 0: never */
        usec_t stall_usec;    /* no sample for this long ends it; USEC_INFINITY: never */
        usec_t wait;          /* the wait after the next read without samples */
        unsigned errors;      /* device errors in a row */
        usec_t progress;      /* CLOCK_MONOTONIC when samples last came (or the start) */
} Backoff;

/* A reader about to start reading. */
void backoff_init(Backoff *b, unsigned errors_max, usec_t stall_usec);

/* Judges what a read returned: n > 0 samples, or -errno. Returns 0 with
 * *ret_wait = 0 when samples came (read on at once), 0 with *ret_wait > 0
 * when the reader waits that long before the next read, or the -errno
 * that ends the reading: -ENODATA (a file ended), the device error that
 * made errors_max in a row, or -ETIMEDOUT (stall_usec without a sample).
 * n == 0 is outside the SourceOps contract: the caller checks it. */
int backoff_next(Backoff *b, ssize_t n, usec_t *ret_wait);
