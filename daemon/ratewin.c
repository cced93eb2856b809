/* ratewin.c - the credit-rate window (see ratewin.h). */
#include "ratewin.h"

void rate_window_advance(RateWindow *w, uint64_t mbits, usec_t now) {
        if (w->start_usec == 0) {
                w->start_usec = w->next_usec = now;
                w->start_mbits = w->next_mbits = mbits;
                return;
        }
        if (now - w->next_usec >= RATE_WINDOW_USEC) {
                w->start_usec = w->next_usec;
                w->start_mbits = w->next_mbits;
                w->next_usec = now;
                w->next_mbits = mbits;
        }
}

double rate_window_bits_per_s(const RateWindow *w, uint64_t mbits, usec_t now) {
        if (w->start_usec == 0 || now <= w->start_usec || mbits < w->start_mbits)
                return 0;
        return (double) (mbits - w->start_mbits) / 1000.0 / ((double) (now - w->start_usec) / (double) USEC_PER_SEC);
}
