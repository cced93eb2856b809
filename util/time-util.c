/* time-util.c - see time-util.h. */
#include "time-util.h"

usec_t now_usec(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return timespec_to_usec(&ts);
}
