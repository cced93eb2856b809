/* induce.h - an induced failure: a source's next samples degraded inside
 * the running daemon, in the production path (the collector, between the
 * read and the intake), so that an auditor sees the gate or the health
 * tests catch it (truerandomctl induce, [daemon] allow_induce).
 *
 * An episode degrades the samples as read, from the first sample of a
 * gate window, until the intake reports it caught (a refused window, an
 * RCT or APT failure) or INDUCE_WINDOWS_MAX windows went by; it never
 * outlives that bound. The kinds:
 *
 *   stuck    every sample the episode's first real one: the gate's
 *            estimate is 0 and the window is refused under any policy
 *   bias     INDUCE_BIAS_KEEP - 1 of every INDUCE_BIAS_KEEP samples one
 *            value, the rest as read: the estimate falls to about 0.1
 *            bit/sample, refused under a set credit above half of that;
 *            under credit = auto the gate grants half of it instead (a
 *            credit change, not a refusal: the credit still follows what
 *            was measured)
 *   repeat   the episode's first INDUCE_REPEAT_PERIOD real samples over
 *            and over: the estimators' predictors find the period and the
 *            estimate is about 0, refused under any policy
 *
 * The fourth kind, selftest, reopens the source with its self-test fed a
 * stuck window instead (SourceParams.selftest_induce); the daemon drives
 * it, here it only has its name.
 * Plain data, no I/O; the samples degraded stay as secret as the ones
 * read (the caller's buffer). Flow: source -> [induce] -> intake. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INDUCE_WINDOWS_MAX 4U
#define INDUCE_BIAS_KEEP 16U
#define INDUCE_REPEAT_PERIOD 16U

typedef enum InduceKind {
        INDUCE_NONE,
        INDUCE_STUCK,
        INDUCE_BIAS,
        INDUCE_REPEAT,
        INDUCE_SELFTEST,
        _INDUCE_KIND_MAX,
} InduceKind;

/* "stuck", "bias", "repeat", "selftest"; NULL for NONE or out of range. */
const char *induce_kind_to_string(InduceKind k);
/* -EINVAL for another name. */
int induce_kind_from_string(const char *s, InduceKind *ret);

typedef struct Induce {
        InduceKind kind;               /* NONE: no episode */
        uint64_t left;                 /* samples still to degrade */
        uint64_t done;                 /* samples degraded so far */
        uint8_t first[INDUCE_REPEAT_PERIOD];
        unsigned have;                 /* of first[] */
} Induce;

/* An episode of kind (STUCK, BIAS or REPEAT) of at most samples samples. */
int induce_begin(Induce *e, InduceKind kind, uint64_t samples);
/* Ends it; its counts stay readable until the next begin. */
void induce_end(Induce *e);
bool induce_active(const Induce *e);
/* Degrades samples[0..n) in place, as far as the episode goes; returns
 * how many were degraded (the first ones). */
size_t induce_apply(Induce *e, uint8_t *samples, size_t n);
