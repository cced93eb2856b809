/* degrade.h - deterministic sample streams for the running gate's tests
 * (issue 19): i.i.d. uniform bytes, then from `onset` on one of the ways
 * a source fails that its most common value cannot see. The same seed
 * gives the same stream, so a unit test, the protocol suite (through the
 * daemon's file source) and truerandomctl assess --gate can be shown the
 * same samples.
 *
 *   DEGRADE_NONE        i.i.d. uniform throughout
 *   DEGRADE_CHUNKS      random 100-sample chunks, each repeated 12 times
 *   DEGRADE_LAGGED      93 % of samples copy the one 777 places earlier
 *   DEGRADE_WALK        a slow +-1 random walk over all 256 values
 *   DEGRADE_PERIOD      one random stretch of DEGRADE_PERIOD_LENGTH
 *                       samples, repeated (a period > 2048)
 *   DEGRADE_BIAS        a drifting bias: 0 with probability rising from
 *                       0.3 to 0.9, else uniform (min-entropy < 1.74 bit
 *                       throughout the segment)
 * Every degraded segment has a true min-entropy below 2 bits per sample,
 * so at credit = 1 no window wholly inside it may be credited. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef enum Degrade {
        DEGRADE_NONE,
        DEGRADE_CHUNKS,
        DEGRADE_LAGGED,
        DEGRADE_WALK,
        DEGRADE_PERIOD,
        DEGRADE_BIAS,
        _DEGRADE_MAX,
} Degrade;

#define DEGRADE_PERIOD_LENGTH 3001U

/* Fills out[0..n): uniform up to onset, then the degradation. */
void degrade_fill(Degrade kind, uint64_t seed, size_t onset, uint8_t *out, size_t n);

/* "none", "chunks", "lagged", "walk", "period", "bias". */
const char *degrade_name(Degrade kind);
