/* capture.h - raw samples for truerandomctl raw and assess: through
 * truerandomd's raw export (root), or --direct: the source opened in this
 * process with exactly the sampler and parameters truerandomd's
 * configuration gives it (sourceconf.h), no daemon and no CUSE needed, so
 * an auditor can characterise a machine before the daemon runs there, or
 * where the kernel has no CUSE. Samples go to a sink as they come.
 * `raw` writes them to stdout or to a file, which appears under its name
 * only once complete: a capture that fails half-way, or is ended by SIGINT,
 * SIGTERM, SIGHUP or SIGPIPE, leaves no file (and an older one as it was).
 * Flow: source or daemon -> [capture] -> file, or ctlassess. */
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

/* truerandomctl raw: the capture to output (NULL: stdout). */
int ctl_raw(const CtlCapture *c, const char *output);
