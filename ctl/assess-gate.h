/* assess-gate.h - truerandomctl assess --gate: the auditor's replay of the
 * daemon's running gate (pool/gate.h) on a capture. The capture is cut as
 * a collector cuts a credited source's stream: window k holds samples
 * [k W, (k+1) W), each full window is judged by gate_judge() itself (the
 * daemon's code and policy, not a copy of them), and a trailing partial
 * window is neither judged nor credited. The result is what the daemon
 * would have credited of these samples: each window's estimate and
 * credit, and the samples and bits credited in all (released windows
 * only; a refused window counts for nothing).
 * Judging and printing only: the capture, the options and the exit codes
 * are verb-assess's.
 * Flow: capture or a file -> verb-assess -> [assess-gate] -> stdout. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pool/gate.h"

struct json_object;

/* The windows --gate captures from a source unless --samples says
 * otherwise: enough for the verdicts to vary the way the daemon's do. */
#define ASSESS_GATE_WINDOWS_DEFAULT 16U

typedef struct AssessGate {
        uint32_t window;           /* samples per window */
        GatePolicy policy;
        size_t samples;            /* in the capture */
        size_t n_windows;          /* full windows, all judged */
        GateVerdict *verdicts;     /* n_windows, in order; malloc'd */
        uint64_t samples_credited; /* in released windows */
        uint64_t mbits_credited;   /* over released windows: samples x credit */
} AssessGate;

/* After each window: done of total judged (EaProgressFn's form). A
 * negative return stops the replay with it. */
typedef int (*AssessGateProgressFn)(void *userdata, unsigned done, unsigned total);

/* --credit: "auto", or bits per sample in (0, 8] read as the
 * configuration file reads credit (config_parse_milli()); --cap: the
 * latter. 0 with *p updated, or -EINVAL. */
int assess_gate_parse_credit(const char *s, GatePolicy *p);
int assess_gate_parse_cap(const char *s, GatePolicy *p);

/* credit = auto's cap when the user gives none: the default credit_cap of
 * source's row (pool/source.h) when that row's credit is auto, else the
 * jitter row's, the source the daemon credits by measuring (source may
 * be NULL: a capture file). */
uint32_t assess_gate_default_cap(const char *source);

/* Replays the gate on samples[0..n) with windows of `window` samples.
 * 0 with *ret filled (assess_gate_done() frees it); -EINVAL for a window
 * outside GATE_WINDOW_MIN..GATE_WINDOW_MAX or a policy gate_judge()
 * refuses, -ENODATA for fewer samples than one window, -ENOMEM, or fn's
 * error. Refused windows are verdicts, not errors. */
int assess_gate_run(const uint8_t *samples, size_t n, uint32_t window, const GatePolicy *policy,
                    AssessGateProgressFn fn, void *userdata, AssessGate *ret);

void assess_gate_done(AssessGate *g);

/* Text: a line on the policy, one per window, one with the totals. */
void assess_gate_print(const AssessGate *g, FILE *f);

/* The object truerandomctl(1) documents (window, policy, windows,
 * samples_credited, bits_credited, ...); NULL when out of memory. */
struct json_object *assess_gate_to_json(const AssessGate *g);
