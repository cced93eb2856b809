/* time-util.h - time in one unit: microseconds, as usec_t (systemd's
 * convention). Code computes in usec_t only; parsing and printing are the
 * only places that speak seconds or milliseconds, and they convert with
 * the constants below. No state. */
#pragma once

#include <stdint.h>
#include <time.h>

typedef uint64_t usec_t;

#define USEC_INFINITY ((usec_t)UINT64_MAX)
#define NSEC_PER_USEC ((uint64_t)1000ULL)
#define USEC_PER_MSEC ((usec_t)1000ULL)
#define USEC_PER_SEC ((usec_t)1000000ULL)
#define USEC_PER_MINUTE (60ULL * USEC_PER_SEC)

/* clock_gettime(clock) in microseconds; 0 if the clock cannot be read
 * (an unknown clock id: a caller's bug, not a runtime condition). */
usec_t now_usec(clockid_t clock);

static inline usec_t timespec_to_usec(const struct timespec *ts) {
        return (usec_t)ts->tv_sec * USEC_PER_SEC + (usec_t)ts->tv_nsec / NSEC_PER_USEC;
}

static inline struct timespec usec_to_timespec(usec_t u) {
        return (struct timespec){ .tv_sec = (time_t)(u / USEC_PER_SEC),
                                  .tv_nsec = (long)((u % USEC_PER_SEC) * NSEC_PER_USEC) };
}

/* Seconds as a double, for printing rates and durations only. */
static inline double usec_to_seconds(usec_t u) {
        return (double)u / (double)USEC_PER_SEC;
}
