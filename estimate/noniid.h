/* noniid.h - SP 800-90B §6.3 non-IID min-entropy estimators and the §3.1.4
 * restart sanity check, as the project's own code.
 *
 * ea_non_iid() computes what NIST's reference tool prints for
 * `ea_non_iid -v FILE bits`: the ten estimators on the samples (mapped down
 * to their distinct values, as the tool does when fewer than 2^bits occur)
 * and on the bitstring (each sample's `bits` bits, most significant first),
 * H_original, H_bitstring and min(H_original, bits * H_bitstring).
 * The collision, Markov and compression estimators are defined for binary
 * data only: they run on the original samples only when those take exactly
 * two values, and then (as in the tool) no bitstring pass is made.
 *
 * The bottom layer: it reads bytes and knows nothing of sources, devices or
 * the daemon; pool/, crng/, cuse/ and daemon/ may use it. Plain data, no
 * secrets. Pure computation: no global or static state is written, so
 * calls on several threads at once are safe (test-exact checks it), one
 * call per report.
 * Cost of one call on 8-bit samples (bench-estimate prints it): heap
 * peak about 46 bytes per sample plus 3 MiB (the bitstring's suffix
 * array, 32 bytes per sample, and the bitstring, 8), up to about 76 for
 * data with long repeats; 5 MiB at 65,536 samples, 14 MiB at 262,144,
 * 47 MiB at 1,000,000. CPU time grows a little faster than the count:
 * about 0.55 M samples/s on one native core at 65,536 to 1,000,000
 * samples. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum EaEstimator {
        EA_MCV,
        EA_COLLISION,
        EA_MARKOV,
        EA_COMPRESSION,
        EA_T_TUPLE,
        EA_LRS,
        EA_MULTI_MCW,
        EA_LAG,
        EA_MULTI_MMC,
        EA_LZ78Y,
        _EA_MAX,
} EaEstimator;

/* "mcv", "collision", "markov", "compression", "t_tuple", "lrs",
 * "multi_mcw", "lag", "multi_mmc", "lz78y": also the JSON member names.
 * NULL for a value out of range. */
const char *ea_estimator_name(EaEstimator e);

typedef struct EaReport {
        size_t samples;
        unsigned bits;              /* bits per sample as given, 1..8 */
        double original[_EA_MAX];   /* min-entropy per sample; NAN where NIST does not run it on the original data */
        double bitstring[_EA_MAX];  /* min-entropy per bit on the bitstring; NAN where not run */
        double h_original, h_bitstring, min_entropy; /* min_entropy = min(h_original, bits*h_bitstring) as ea_non_iid reports */
} EaReport;

/* SP 800-90B §6.3, as NIST's `ea_non_iid -v FILE bits` computes it.
 * -EINVAL on bad args (NULL pointers, bits outside 1..8, fewer than
 * EA_SAMPLES_MIN samples, a sample with bits set above `bits`, more than
 * EA_SAMPLES_MAX samples), -ENOMEM.
 * h_bitstring is NAN where no bitstring pass is made (binary data).
 * Samples that all hold one value have no entropy: NIST's tool refuses
 * them; here every estimator is NAN and h_original, min_entropy are 0. */
int ea_non_iid(const uint8_t *samples, size_t n, unsigned bits, EaReport *ret);

/* Progress of a long assessment (seconds per million samples): called after
 * each step with the steps done so far and their total (the total depends
 * on the data: fewer steps for binary samples). Runs on the caller's
 * thread. Return 0 to go on; a negative value (say -ECANCELED) ends the
 * assessment, which then returns that value and writes nothing. */
typedef int (*EaProgressFn)(void *userdata, unsigned done, unsigned total);

/* ea_non_iid() with a progress callback (fn may be NULL). */
int ea_non_iid_progress(const uint8_t *samples, size_t n, unsigned bits, EaProgressFn fn, void *userdata,
                        EaReport *ret);

/* Below this the estimators' statistics are meaningless (SP 800-90B asks
 * for 1,000,000 samples; NIST's tool only warns below that). */
#define EA_SAMPLES_MIN 16U
/* The suffix array of the bitstring is indexed with 32-bit integers. */
#define EA_SAMPLES_MAX ((size_t)INT32_MAX / 8U)

typedef struct EaRestartReport {
        size_t rows, cols;
        double h_i;                 /* the initial entropy estimate it was checked against */
        unsigned max_row_count, max_col_count, cutoff;
        bool sanity_passed;         /* §3.1.4.3 sanity check */
        EaReport row, col;          /* estimators on the row and column datasets */
        double h_r, h_c, min_entropy; bool passed; /* as NIST's ea_restart reports */
} EaRestartReport;

/* SP 800-90B §3.1.4, as NIST's `ea_restart -v FILE bits h_i` computes it:
 * the sanity check (the most common value's count in every row and column
 * against a cutoff computed exactly, where the tool simulates it), then the
 * estimators on the row and column datasets (no bitstring pass; row and
 * col hold them, NAN when the sanity check failed, as the tool stops
 * there); passed = sanity_passed && min(h_r, h_c) >= h_i / 2, and
 * min_entropy = min(h_r, h_c, h_i).
 * matrix is rows*cols samples, row-major (the restart capture's file layout).
 * -EINVAL on bad args (NULL pointers, rows != cols, bits outside 1..8,
 * h_i outside 0..bits, fewer than EA_SAMPLES_MIN samples, a sample with
 * bits set above `bits`), -ENOMEM. */
int ea_restart(const uint8_t *matrix, size_t rows, size_t cols, unsigned bits, double h_i, EaRestartReport *ret);
/* ea_restart() with a progress callback, as ea_non_iid_progress(). */
int ea_restart_progress(const uint8_t *matrix, size_t rows, size_t cols, unsigned bits, double h_i, EaProgressFn fn,
                        void *userdata, EaRestartReport *ret);
