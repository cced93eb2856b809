/* capture.c - raw samples of a source into memory (see capture.h).
 * Flow: source -> [capture] -> estimators (estimate/). */
#include "capture.h"

#include <errno.h>
#include <time.h>

#include "secret.h"

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

static int report(CaptureProgressFn fn, void *userdata, uint64_t done, uint64_t total) {
        return fn ? fn(userdata, done, total) : 0;
}

/* One row of an open source into buf; *done counts every sample so far. */
static int capture_row(const SourceOps *ops, void *state, uint8_t *buf, size_t samples, uint64_t *done,
                       uint64_t total, CaptureProgressFn fn, void *userdata) {
        uint64_t progress = now_ms();
        unsigned backoff = BACKOFF_MIN_MS, errors = 0;
        size_t got = 0;
        int r;

        while (got < samples) {
                size_t want = MIN(samples - got, (size_t) CAPTURE_CHUNK);
                ssize_t n = ops->read(state, buf + got, want);

                if (n == -ENODATA)
                        return -ENODATA;
                if (n < 0 && n != -EAGAIN && ++errors >= CAPTURE_ERRORS_MAX)
                        return (int) n;
                if (n < 0) {
                        if (now_ms() - progress >= CAPTURE_STALL_MS)
                                return -ETIMEDOUT;
                        sleep_ms(backoff);
                        backoff = MIN(backoff * 2, BACKOFF_MAX_MS);
                        r = report(fn, userdata, *done, total);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (n == 0 || (size_t) n > want)
                        return -EIO;
                got += (size_t) n;
                *done += (uint64_t) n;
                backoff = BACKOFF_MIN_MS;
                errors = 0;
                progress = now_ms();
                r = report(fn, userdata, *done, total);
                if (r < 0)
                        return r;
        }
        return 0;
}

int capture_run(const SourceOps *ops, const SourceParams *params, size_t samples, unsigned rows, uint8_t *buf,
                CaptureProgressFn fn, void *userdata) {
        uint64_t done = 0, total = (uint64_t) samples * rows;
        int r = 0;

        if (!ops || !buf || samples == 0 || rows == 0 || samples > SIZE_MAX / rows)
                return -EINVAL;
        for (unsigned row = 0; row < rows && r >= 0; row++) {
                void *state = NULL;

                /* Every row starts from a freshly opened source, as
                 * ea_restart's rows must. */
                r = ops->open(params, &state);
                if (r < 0)
                        break;
                r = capture_row(ops, state, buf + (size_t) row * samples, samples, &done, total, fn, userdata);
                ops->close(state);
        }
        return r < 0 ? r : 0;
}
