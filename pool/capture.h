/* capture.h - raw samples of a source, captured into memory for an
 * SP 800-90B assessment (the daemon's credit = auto, truerandomctl assess
 * and raw --direct).
 *
 * A capture opens its own instance of the source, exactly as the collector
 * and the control socket's raw export do, and reads it in the collector's
 * chunk size, so the samples are the very ones the health tests would see.
 * R rows reopen the source before each row (SP 800-90B §3.1.4's restart
 * matrix). Like the collector it backs off while the source has nothing
 * (10 ms doubling to 1 s) and rides out a few device errors in a row; more,
 * or no sample for CAPTURE_STALL_MS, end it. The samples are not secret:
 * this instance feeds nothing.
 * Flow: source -> [capture] -> estimators (estimate/). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "source.h"

/* The collector's read size (collector.c). */
#define CAPTURE_CHUNK 4096U
/* Device errors in a row that end a capture (about 0.3 s of backoff). */
#define CAPTURE_ERRORS_MAX 5U
#define CAPTURE_STALL_MS 60000U

/* Called after every read and every backoff, with the samples captured so
 * far of the total; a negative return (say -ECANCELED) ends the capture
 * with that value. fn may be NULL. */
typedef int (*CaptureProgressFn)(void *userdata, uint64_t done, uint64_t total);

/* Fills buf with rows x samples raw samples, row after row. 0, or: the
 * -errno of an open (-ENODEV: no such source here), -ENODATA (a file
 * ended), -ETIMEDOUT (stalled), a device error, the progress callback's
 * refusal; -EINVAL on bad arguments. buf is partly written on failure. */
int capture_run(const SourceOps *ops, const SourceParams *params, size_t samples, unsigned rows, uint8_t *buf,
                CaptureProgressFn fn, void *userdata);
