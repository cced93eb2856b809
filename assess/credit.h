/* credit.h - the credit a source gets, and where it comes from.
 *
 *   explicit  credit = N in the configuration: N, whatever was measured;
 *             but when N is above half the estimate measured on this
 *             machine (a stored assessment whose identity matches), the
 *             journal and status say so (above_bound)
 *   auto      credit = auto: half the SP 800-90B min-entropy measured here
 *             (min(H_original, 8 H_bitstring), bits per 8-bit sample) ...
 *   capped    ... unless credit_cap is lower, which then wins
 *   pending   credit = auto with no assessment for this machine yet: no
 *             credit until one is made
 * An assessment stands behind a credit only while it holds: made for the
 * identity of the machine and sampler as they are now, and from at least
 * the [assessment] samples configured (an operator who raised them asked
 * for a more certain estimate than a smaller capture gives).
 * Half, because the estimators measure a sample of one run of one machine
 * and a credit should leave room for what they cannot see (DESIGN §4,
 * docs/ENTROPY.md). Credits are millibits, rounded down.
 * Pure functions. Flow: assessment -> [credit] -> collector (daemon). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "assessment.h"
#include "config/config.h"

typedef enum CreditOrigin {
        CREDIT_EXPLICIT,
        CREDIT_AUTO,
        CREDIT_CAPPED,
        CREDIT_PENDING,
        _CREDIT_ORIGIN_MAX,
} CreditOrigin;

typedef struct CreditDecision {
        CreditOrigin origin;
        uint32_t credit_mbits;   /* in force; 0 while pending (or when nothing is justified) */
        bool has_estimate;       /* an assessment of this machine stands behind it */
        double min_entropy;      /* that assessment's, bits per sample */
        uint32_t bound_mbits;    /* half of it, the most it justifies */
        bool above_bound;        /* explicit credit above bound_mbits */
} CreditDecision;

/* Half of a min-entropy, in millibits, rounded down: what an assessment
 * justifies. 0 for NAN or anything not positive. */
uint32_t credit_bound_mbits(double min_entropy);

/* The decision for a source configured as sc, given the assessment of this
 * machine (NULL when none matches its identity). */
void credit_decide(const SourceConfig *sc, const Assessment *a, CreditDecision *ret);

/* Whether assessment a may stand behind a credit now: its identity equals
 * now, and it was made from at least `samples` samples. When not, *why
 * (when given) says how, to follow "the stored one ": "holds for another
 * machine or sampler: clocksource was tsc, now hpet", "was made from 50000
 * samples, fewer than [assessment] samples = 1000000". */
bool credit_assessment_holds(const Assessment *a, const Identity *now, size_t samples, char *why, size_t why_size);

/* "explicit", "auto", "capped", "pending". */
const char *credit_origin_to_string(CreditOrigin o);
