/* clockjump.c - CLOCK_BOOTTIME against CLOCK_MONOTONIC (see clockjump.h). */
#include "clockjump.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* A reading whose two CLOCK_MONOTONIC reads lie further apart than this
 * (the thread was preempted in between) is taken again. */
#define BRACKET_MAX_USEC 1000ULL
#define READ_TRIES 4

struct ClockJump {
        uint64_t threshold_usec;
        uint64_t baseline_usec;    /* CLOCK_BOOTTIME - CLOCK_MONOTONIC last reported */
        bool have_baseline;
        ClockJumpFn fn;
        void *userdata;
        int timer_fd;
        sd_event_source *timer;
        ClockJumpStats stats;
};

static uint64_t now_usec(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

/* CLOCK_BOOTTIME - CLOCK_MONOTONIC, to within BRACKET_MAX_USEC. */
static int read_offset(uint64_t *ret_offset, uint64_t *ret_mono) {
        for (int i = 0; i < READ_TRIES; i++) {
                uint64_t m1 = now_usec(CLOCK_MONOTONIC);
                uint64_t b = now_usec(CLOCK_BOOTTIME);
                uint64_t m2 = now_usec(CLOCK_MONOTONIC);
                uint64_t mid = m1 + (m2 - m1) / 2;

                if (m1 == 0 || b == 0 || m2 < m1 || m2 - m1 > BRACKET_MAX_USEC || b < mid)
                        continue;
                *ret_offset = b - mid;
                *ret_mono = m2;
                return 0;
        }
        return -EAGAIN;
}

void clockjump_check(ClockJump *j) {
        uint64_t offset, mono, slept;

        if (read_offset(&offset, &mono) < 0)
                return;
        if (!j->have_baseline || offset < j->baseline_usec) {
                /* No reading yet, or the clocks disagree with the kernel's
                 * rule (boot time never falls behind): start again from here. */
                j->baseline_usec = offset;
                j->have_baseline = true;
                return;
        }
        slept = offset - j->baseline_usec;
        if (slept <= j->threshold_usec)
                return;
        j->baseline_usec = offset;
        j->stats.jumps++;
        j->stats.slept_usec += slept;
        j->stats.last_jump_usec = mono;
        j->fn(j->userdata, slept);
}

/* Far in the future, so it never expires; only a set of the wall clock or a
 * resume cancels it. */
static int arm(ClockJump *j) {
        struct itimerspec its = { .it_value = { .tv_sec = (time_t)1 << 40 } };

        if (timerfd_settime(j->timer_fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) < 0)
                return -errno;
        return 0;
}

static int on_timer(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ClockJump *j = userdata;
        uint64_t expirations;

        /* ECANCELED: the wall clock was set, or the machine resumed; the
         * timer must be armed again to hear of the next time. */
        if (read(fd, &expirations, sizeof(expirations)) < 0 && errno == ECANCELED) {
                j->stats.wakeups++;
                (void)arm(j);
        }
        clockjump_check(j);
        return 0;
}

int clockjump_new(sd_event *event, uint64_t threshold_usec, ClockJumpFn fn, void *userdata, ClockJump **ret) {
        ClockJump *j;
        int r;

        if (!fn || threshold_usec == 0 || !ret)
                return -EINVAL;
        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        *j = (ClockJump){ .threshold_usec = threshold_usec, .fn = fn, .userdata = userdata, .timer_fd = -1 };
        clockjump_check(j);
        if (event) {
                j->timer_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
                if (j->timer_fd < 0) {
                        r = -errno;
                        goto fail;
                }
                r = arm(j);
                if (r >= 0)
                        r = sd_event_add_io(event, &j->timer, j->timer_fd, EPOLLIN, on_timer, j);
                if (r < 0)
                        goto fail;
                /* Before the devices: a request that wakes the loop together
                 * with a resume is served after the jump was reported. */
                (void)sd_event_source_set_priority(j->timer, SD_EVENT_PRIORITY_IMPORTANT);
                (void)sd_event_source_set_description(j->timer, "clockjump");
        }
        *ret = j;
        return 0;

fail:
        clockjump_free(j);
        return r;
}

ClockJump *clockjump_free(ClockJump *j) {
        if (!j)
                return NULL;
        j->timer = sd_event_source_disable_unref(j->timer);
        if (j->timer_fd >= 0)
                close(j->timer_fd);
        free(j);
        return NULL;
}

void clockjump_get_stats(const ClockJump *j, ClockJumpStats *ret) {
        *ret = j->stats;
}
