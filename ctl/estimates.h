/* estimates.h - what `assess` and `evidence` both do with a source's
 * samples: capture them into memory (capture.h), run the SP 800-90B
 * non-IID estimators and the restart test on them with progress on a
 * terminal, and write the result as text (each estimator, original and
 * bitstring, with 6 decimals as NIST's ea_non_iid -v gives them) and the
 * restart test as JSON beside eajson.h's report.
 * Flow: capture -> [estimates] -> verb-assess, verb-evidence. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "capture.h"
#include "estimate/noniid.h"
#include "progress.h"

/* Samples in memory, one per byte. */
typedef struct CtlSamples {
        uint8_t *p;
        size_t n, size;
} CtlSamples;

/* rows x samples of c's source into *ret (p malloc'd, the caller frees
 * it). An exit code (client.h), after saying why when not EXIT_OK. */
int ctl_samples_capture(const CtlCapture *c, uint64_t samples, uint32_t rows, CtlProgress *p, CtlSamples *ret);

/* Progress of a computation in steps (the estimators, the gate's
 * windows): userdata for ctl_steps_show(), ea_non_iid_progress()'s kind of
 * callback. */
typedef struct CtlSteps {
        CtlProgress *progress;
        const char *what;      /* "estimator", "window" */
} CtlSteps;
int ctl_steps_show(void *userdata, unsigned done, unsigned total);

/* The non-IID estimators on s (bits per sample), and the restart test
 * on a CTL_RESTART_ROWS x CTL_RESTART_SAMPLES matrix of 8-bit samples
 * against h_i; the terminal sees which estimator runs. Exit codes. */
int ctl_samples_estimate(const CtlSamples *s, unsigned bits, CtlProgress *p, EaReport *ret);
int ctl_samples_restart(const CtlSamples *matrix, double h_i, CtlProgress *p, EaRestartReport *ret);

/* The estimators' table and results, then the restart test's when rr is
 * not NULL, as `assess` prints them after its first line. */
void ctl_report_print(FILE *f, const EaReport *r, const EaRestartReport *rr);

/* The restart test as JSON (`assess --json`'s "restart"); NULL when out
 * of memory. */
struct json_object *ctl_restart_to_json(const EaRestartReport *rr);
