/* noniid-internal.h - the pieces of ea_non_iid() that the restart check
 * (restart.c) runs on its row and column datasets. Internal to libestimate. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "noniid.h"

/* mapped[i] = rank of samples[i] among the distinct values; *ret_k = how
 * many there are. -EINVAL if a sample has bits set above `bits`. */
int ea_map_symbols(const uint8_t *samples, size_t n, unsigned bits, uint8_t *mapped, unsigned *ret_k);

/* Where a long assessment has got to: fn (may be NULL) hears of every
 * step done, and a negative return from it ends the assessment with that
 * value. */
typedef struct EaProgress {
        EaProgressFn fn;
        void *userdata;
        unsigned done, total;
} EaProgress;

/* Steps assess_symbols() reports for an alphabet of k symbols. */
unsigned ea_progress_steps(unsigned k);

/* The estimators on mapped symbols alone (no bitstring pass), as NIST's
 * ea_restart runs them: original[] and h_original = min_entropy; k = 1
 * gives 0. 0, -ENOMEM, or what progress returned. */
int ea_assess_mapped(const uint8_t *mapped, size_t n, unsigned k, unsigned bits, EaProgress *progress,
                     EaReport *ret);
