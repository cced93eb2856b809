/* capture.c - raw samples of a source, to a sink (see capture.h).
 *
 * Invariants: every open is closed again, whatever ends the capture; a
 * sink hears of samples in order and of every backoff (n = 0). The waits
 * are backoff.h's, slept on CLOCK_MONOTONIC. The samples are no secret:
 * this instance of the source feeds nothing.
 * Flow: source -> [capture] -> estimators (estimate/). */
#include "capture.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "backoff.h"
#include "util/cleanup.h"

static void sleep_usec(usec_t usec) {
        struct timespec ts = usec_to_timespec(usec);

        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
                ;
}

int capture_to_buffer(void *userdata, const uint8_t *samples, size_t n, uint64_t done, uint64_t total) {
        if (n > 0)
                memcpy((uint8_t *) userdata + (done - n), samples, n);
        return 0;
}

/* One row of an open source into sink; *done counts every sample so far. */
static int capture_row(const SourceOps *ops, void *state, uint64_t samples, uint64_t *done, uint64_t total,
                       CaptureSinkFn sink, void *userdata) {
        uint8_t chunk[CAPTURE_CHUNK];
        uint64_t got = 0;
        Backoff backoff;
        int r;

        backoff_init(&backoff, CAPTURE_ERRORS_MAX, CAPTURE_STALL_USEC);
        while (got < samples) {
                size_t want = (size_t) MIN(samples - got, (uint64_t) CAPTURE_CHUNK);
                ssize_t n = ops->read(state, chunk, want);
                usec_t wait;

                if (n == 0 || n > (ssize_t) want)
                        return -EIO;
                r = backoff_next(&backoff, n, &wait);
                if (r < 0)
                        return r;
                if (wait > 0) {
                        sleep_usec(wait);
                        r = sink(userdata, chunk, 0, *done, total);
                        if (r < 0)
                                return r;
                        continue;
                }
                got += (uint64_t) n;
                *done += (uint64_t) n;
                r = sink(userdata, chunk, (size_t) n, *done, total);
                if (r < 0)
                        return r;
        }
        return 0;
}

int capture_run(const SourceOps *ops, const SourceParams *params, uint64_t samples, unsigned rows,
                CaptureSinkFn sink, void *userdata) {
        uint64_t done = 0, total;
        int r = 0;

        if (!ops || !sink || samples == 0 || rows == 0 || samples > UINT64_MAX / rows)
                return -EINVAL;
        total = samples * rows;
        for (unsigned row = 0; row < rows && r >= 0; row++) {
                void *state = NULL;

                /* Every row starts from a freshly opened source, as
                 * ea_restart's rows must. */
                r = ops->open(params, &state);
                if (r < 0)
                        break;
                r = capture_row(ops, state, samples, &done, total, sink, userdata);
                ops->close(state);
        }
        return r < 0 ? r : 0;
}
