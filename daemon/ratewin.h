/* ratewin.h - a source's credit rate for the status, over the last 5 to
 * 10 s. The loop moves the window on its own events; a status request
 * only reads it (const), so no poller changes what another one sees.
 * Flow: daemon loop -> [ratewin] -> status. */
#pragma once

#include <stdint.h>

#include "util/time-util.h"

#define RATE_WINDOW_USEC (5 * USEC_PER_SEC)

typedef struct RateWindow {
        usec_t start_usec;                /* where the window starts; 0: not yet */
        uint64_t start_mbits;
        usec_t next_usec;                 /* where the next one will */
        uint64_t next_mbits;
} RateWindow;

/* The loop saw mbits credited in all at now: the window moves on once the
 * next start is RATE_WINDOW_USEC old. */
void rate_window_advance(RateWindow *w, uint64_t mbits, usec_t now);

/* Bits per second credited since the window's start; 0 before any. */
double rate_window_bits_per_s(const RateWindow *w, uint64_t mbits, usec_t now);
