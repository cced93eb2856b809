/* render.h - the status for people: `truerandomctl status` without
 * --json, at most 80 printable columns per line whatever the daemon sent
 * (on a terminal; whole lines otherwise).
 * Reads the model only through ctlstatus.h; no I/O but the FILE given.
 * Flow: ctlstatus -> [render] -> stdout. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "proto/ctlstatus.h"

#define CTL_RENDER_COLUMNS 80

/* Fields a daemon did not send show as "-". 0, or -EIO on a write error. */
int ctl_render_text(const CtlStatus *status, FILE *out);
/* The same; full: nothing cut, whatever the length of a line or a field
 * (for a pipe, a log, --full), every byte still made printable. */
int ctl_render_text_full(const CtlStatus *status, FILE *out, bool full);

typedef enum CtlMetricsFormat {
        CTL_METRICS_OPENMETRICS, /* OpenMetrics 1.0 text: counters' families without _total, info, # EOF */
        CTL_METRICS_PROMETHEUS,  /* Prometheus text exposition 0.0.4 (node_exporter's textfile collector) */
} CtlMetricsFormat;

/* The status as metrics: every number and boolean of the object as a
 * metric "truerandom_<path>" (seconds in _seconds, rates in _per_second),
 * sources and devices as labels, strings that name a state as labels of a
 * metric of value 1, the version and schema as truerandom_build_info, each
 * family with HELP and TYPE; counters for counts that only grow. A status
 * of NULL (daemon unreachable) gives truerandom_up 0 alone. 0, -ENOMEM,
 * or -EIO on a write error. */
int ctl_render_metrics(const CtlStatus *status, CtlMetricsFormat format, FILE *out);
