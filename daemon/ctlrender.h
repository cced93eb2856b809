/* ctlrender.h - the status for people: `truerandomctl status` without
 * --json, at most 80 printable columns per line whatever the daemon sent.
 * Reads the model only through ctlstatus.h; no I/O but the FILE given.
 * Flow: ctlstatus -> [ctlrender] -> stdout. */
#pragma once

#include <stdio.h>

#include "ctlstatus.h"

#define CTL_RENDER_COLUMNS 80

/* Fields a daemon did not send show as "-". 0, or -EIO on a write error. */
int ctl_render_text(const CtlStatus *status, FILE *out);
