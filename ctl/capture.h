/* capture.h - raw samples for truerandomctl raw and assess: through
 * truerandomd's raw export (root), or --direct: the source opened in this
 * process with exactly the sampler and parameters truerandomd's
 * configuration gives it (sourceconf.h), no daemon and no CUSE needed, so
 * an auditor can characterise a machine before the daemon runs there, or
 * where the kernel has no CUSE. Samples go to a sink as they come.
 * Flow: source or daemon -> [capture] -> verb-raw, verb-assess. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "progress.h"

/* 0, or a -errno that ends the capture. */
typedef int (*CtlSinkFn)(void *userdata, const uint8_t *samples, size_t n);

typedef struct CtlCapture {
        const char *source;
        uint64_t samples;          /* per row */
        uint32_t rows;             /* > 1: the source reopened before each */
        bool direct;
        const char *config_path;   /* --config; NULL: the default file */
        const char *socket_path;   /* NULL: the configuration's */
} CtlCapture;

/* Captures into sink (named sink_name in errors), drawing progress on p.
 * An exit code (client.h), after saying why when not EXIT_OK. */
int ctl_capture(const CtlCapture *c, CtlProgress *p, CtlSinkFn sink, void *userdata, const char *sink_name);

/* The names of the sources that have raw samples, from pool's table:
 * "jitter, rdseed, hwrng, file", in buf. */
const char *ctl_capture_sources(char *buf, size_t size);
