/* clockjump.h - notices that the machine was suspended: CLOCK_BOOTTIME runs
 * on through a suspend and CLOCK_MONOTONIC does not, and the kernel changes
 * the difference between them only when it injects the time slept (suspend
 * to RAM or idle, hibernation). A change of that difference by more than a
 * threshold is one jump, reported once.
 *
 * What it does not see: a virtual machine that was paused, saved and
 * restored (QEMU stop/cont, migration, snapshots) keeps both clocks still
 * while it does not run, so neither moves against the other; that is the
 * VM generation watcher's case (vmgenid.h).
 *
 * What wakes it: nothing periodic. The kernel cancels CLOCK_REALTIME
 * timerfds armed with TFD_TIMER_CANCEL_ON_SET on every resume (timerfd_resume)
 * and whenever the wall clock is set; this module keeps one such timer on the
 * loop and checks the clocks when it fires. The daemon also calls
 * clockjump_check() before every request the devices handle, those read in
 * one drain included (three vDSO clock reads, through the hub's
 * before_request callback), so a request that reaches the daemon after a
 * resume is served after the callback ran.
 * Loop thread only; it never logs.
 * Flow: kernel clocks -> [clockjump] -> daemon -> reseed. */
#pragma once

#include <stdint.h>

#include <systemd/sd-event.h>

/* Suspends shorter than this are not reported. Reading the two clocks is not
 * atomic; the reads are bracketed, so the error is far below this. */
#define CLOCKJUMP_THRESHOLD_USEC 50000ULL

typedef struct ClockJump ClockJump;

/* slept_usec: by how much CLOCK_BOOTTIME moved ahead of CLOCK_MONOTONIC. */
typedef void (*ClockJumpFn)(void *userdata, uint64_t slept_usec);

typedef struct ClockJumpStats {
        uint64_t jumps;
        uint64_t slept_usec;       /* all jumps together */
        uint64_t last_jump_usec;   /* CLOCK_MONOTONIC when the last was seen; 0: none */
        uint64_t wakeups;          /* times the timer fired (resumes, clock sets) */
} ClockJumpStats;

/* event may be NULL (no timer: the caller checks by itself). threshold_usec
 * >= 1. The current difference of the clocks is the baseline. */
int clockjump_new(sd_event *event, uint64_t threshold_usec, ClockJumpFn fn, void *userdata, ClockJump **ret);
/* Takes NULL; returns NULL. */
ClockJump *clockjump_free(ClockJump *j);

/* Compares the clocks; calls fn once if the difference moved by more than
 * the threshold since the last report, and takes the new difference as the
 * baseline. */
void clockjump_check(ClockJump *j);

void clockjump_get_stats(const ClockJump *j, ClockJumpStats *ret);
