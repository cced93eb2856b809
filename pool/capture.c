/* capture.c - raw samples of a source, to a sink (see capture.h).
 * Flow: source -> [capture] -> estimators (estimate/). */
#include "capture.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "util/cleanup.h"

#define BACKOFF_MIN_MS 10U
#define BACKOFF_MAX_MS 1000U

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000U + (uint64_t) ts.tv_nsec / 1000000U;
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000U, .tv_nsec = (long) (ms % 1000U) * 1000000L };

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
        uint64_t progress = now_ms(), got = 0;
        unsigned backoff = BACKOFF_MIN_MS, errors = 0;
        uint8_t chunk[CAPTURE_CHUNK];
        int r;

        while (got < samples) {
                size_t want = (size_t) MIN(samples - got, (uint64_t) CAPTURE_CHUNK);
                ssize_t n = ops->read(state, chunk, want);

                if (n == -ENODATA)
                        return -ENODATA;
                if (n < 0 && n != -EAGAIN && ++errors >= CAPTURE_ERRORS_MAX)
                        return (int) n;
                if (n < 0) {
                        if (now_ms() - progress >= CAPTURE_STALL_MS)
                                return -ETIMEDOUT;
                        sleep_ms(backoff);
                        backoff = MIN(backoff * 2, BACKOFF_MAX_MS);
                        r = sink(userdata, chunk, 0, *done, total);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (n == 0 || (size_t) n > want)
                        return -EIO;
                got += (uint64_t) n;
                *done += (uint64_t) n;
                backoff = BACKOFF_MIN_MS;
                errors = 0;
                progress = now_ms();
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
