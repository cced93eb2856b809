/* capture.h - raw samples of a source for an SP 800-90B assessment (the
 * daemon's credit = auto, truerandomctl assess and raw --direct), handed
 * to a sink as they come: into memory for the estimators, or to a file.
 *
 * A capture opens its own instance of the source, exactly as the collector
 * and the control socket's raw export do, and reads it in the collector's
 * chunk size, so the samples are the very ones the health tests would see.
 * R rows reopen the source before each row (SP 800-90B §3.1.4's restart
 * matrix). It waits as the collector does while the source has nothing
 * (backoff.h: 10 ms doubling to 1 s) and rides out a few device errors in
 * a row; more, or no sample for CAPTURE_STALL_USEC, end it. The samples
 * are not secret: this instance feeds nothing.
 * Flow: source -> [capture] -> estimators (estimate/). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "source.h"
#include "util/time-util.h"

/* The collector's read size (COLLECTOR_CHUNK; collector.c checks that
 * they agree). */
#define CAPTURE_CHUNK 4096U
/* Device errors in a row that end a capture (the four before the last
 * wait 10 + 20 + 40 + 80 ms). */
#define CAPTURE_ERRORS_MAX 5U
#define CAPTURE_STALL_USEC (60U * USEC_PER_SEC)

/* Takes the samples as they come: n > 0 new samples (in order, row after
 * row), with done of total captured so far; and n = 0 after every backoff
 * while the source has nothing, so a caller can stop a capture that
 * waits. A negative return (say -ECANCELED) ends the capture with that
 * value. */
typedef int (*CaptureSinkFn)(void *userdata, const uint8_t *samples, size_t n, uint64_t done, uint64_t total);

/* Captures rows x samples raw samples into sink. 0, or: the -errno of an
 * open (-ENODEV: no such source here), -ENODATA (a file ended),
 * -ETIMEDOUT (stalled), a device error, the sink's refusal; -EINVAL on bad
 * arguments. */
int capture_run(const SourceOps *ops, const SourceParams *params, uint64_t samples, unsigned rows,
                CaptureSinkFn sink, void *userdata);

/* A sink that copies into a buffer of total bytes (userdata: the buffer). */
int capture_to_buffer(void *userdata, const uint8_t *samples, size_t n, uint64_t done, uint64_t total);
