/* progress.h - truerandomctl's progress on a terminal (stderr), for
 * work that takes seconds to minutes: a capture
 *     jitter   [#########.....................]  30% 300000/1000000 1.2 MB/s 0:05 left
 * and the estimators
 *     jitter   [#############.................] estimator 6 of 13, 2.1 s
 * Drawn at most every CTL_PROGRESS_EVERY_USEC (100 ms), each line
 * covering the last; nothing at all when stderr is not a terminal
 * (scripts, logs).
 * Flow: capture, verb-assess -> [progress] -> stderr. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "util/time-util.h"

#define CTL_PROGRESS_WIDTH 30
#define CTL_PROGRESS_EVERY_USEC (100U * USEC_PER_MSEC)

typedef struct CtlProgress {
        char label[16];
        bool on;                  /* stderr is a terminal */
        bool drawn;               /* a line is on screen, not yet ended */
        usec_t started, shown;    /* CLOCK_MONOTONIC */
} CtlProgress;

void ctl_progress_init(CtlProgress *p, const char *label);
/* Samples captured: rate and time left while it runs, "done" at the end. */
void ctl_progress_samples(CtlProgress *p, uint64_t done, uint64_t total, bool last);
/* Steps of a computation (what: "estimator", "restart estimator"). */
void ctl_progress_steps(CtlProgress *p, const char *what, unsigned done, unsigned total, bool last);
/* Ends a line half drawn, before an error message is printed. */
void ctl_progress_break(CtlProgress *p);
/* Starts timing anew (the next phase). */
void ctl_progress_restart(CtlProgress *p);
