/* ctlassess.h - truerandomctl assess: the SP 800-90B §6.3 non-IID
 * estimators (estimate/noniid.h, the project's own, checked against NIST's
 * ea_non_iid) on N raw samples of a source, captured as `raw` captures them
 * (through truerandomd, or --direct in this process), or on a capture file
 * from any machine (--file, --bits: no daemon at all). It prints every
 * estimator and the result as `ea_non_iid -v FILE bits` does (6 decimals),
 * or one JSON object (eajson.h: h_original, h_bitstring, min_entropy,
 * samples, one member per estimator). --restart adds the §3.1.4 restart
 * test as `ea_restart` runs it: a 1000 x 1000 matrix captured after the
 * main capture, checked against its min-entropy.
 * The estimators run here, on this machine's CPU; a terminal sees which
 * one is running. Flow: capture or a file -> [ctlassess] -> stdout. */
#pragma once

#include <stdbool.h>

#include "capture.h"

typedef struct CtlAssess {
        CtlCapture capture;   /* a source (capture.source), or ... */
        const char *file;     /* ... a capture file, one sample per byte */
        unsigned bits;        /* bits per sample, 1..8 (file only; a source's are 8) */
        bool restart;
        bool json;
} CtlAssess;

/* An exit code (client.h): EXIT_OK, EXIT_RESTART when the restart test
 * failed, another after saying why. */
int ctl_assess(const CtlAssess *a);
