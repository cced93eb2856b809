/* restart-expected.h - NIST's values for the restart matrices test-restart
 * checks: the output of NIST's reference tool,
 * usnistgov/SP800-90B_EntropyAssessment at commit
 * 68ed165fd7a3eeef26b87a546ba23f338e82a3f3 (v1.1.7), built with its own
 * cpp/Makefile (g++ 12, -O2), run as
 *     ea_restart -v FILE 8 H_I
 * on 1000 x 1000 matrices (row-major, 1,000,000 bytes):
 *     good      the biased set of estimate-datasets.h, H_I = 3.089954 (its
 *               ea_non_iid estimate): passes
 *     periodic  the periodic set, H_I = 5: passes the sanity check, fails
 *               validation (H_r, H_c < H_I / 2)
 *     stuck     ea_dataset_restart_stuck() (test-restart --write-datasets
 *               DIR writes it), H_I = 3.089954: fails the sanity check; the
 *               tool then stops, so there are no estimates (NAN)
 * X_cutoff is the tool's simulation (5,000,000 rounds from /dev/urandom);
 * X_max = max(largest row count, largest column count). Estimates as the
 * tool prints them (6 decimals); the tool makes no bitstring pass here.
 * Where validation fails the tool prints no min(H_r, H_c, H_I): the value
 * below is that minimum of the H_r, H_c and H_I it printed. */
#pragma once

#include <math.h>
#include <stdbool.h>

#include "estimate/noniid.h"

typedef struct RestartExpected {
        const char *name;
        int set;                     /* EaDataset, or -1: ea_dataset_restart_stuck() */
        double h_i;
        unsigned cutoff, x_max;
        bool sanity_passed;
        double row[_EA_MAX], col[_EA_MAX];
        double h_r, h_c, min_entropy;
        bool passed;
} RestartExpected;

/*                    mcv        collision  markov     compress.  t_tuple    lrs        multi_mcw  lag        multi_mmc  lz78y */
static const RestartExpected restart_expected[] = {
        { "good", EA_SET_BIASED, 3.089954, 169, 68, true,
          .row = {  4.565347,       NAN,       NAN,       NAN,  4.432002,  4.935944,  4.416482,  5.044757,  4.589983,  4.590661 },
          .col = {  4.565347,       NAN,       NAN,       NAN,  4.437007,  5.036934,  4.616459,  5.028779,  4.596043,  4.596864 },
          .h_r = 4.416482, .h_c = 4.437007, .min_entropy = 3.089954, .passed = true },
        { "periodic", EA_SET_PERIODIC, 4.500000, 80, 69, true,
          .row = {  4.475868,       NAN,       NAN,       NAN,  2.672978,  2.220127,  4.489076,  1.991231,  1.991080,  2.382783 },
          .col = {  4.475868,       NAN,       NAN,       NAN,  2.685759,  2.220127,  4.490184,  2.016637,  1.864645,  2.383062 },
          .h_r = 1.991080, .h_c = 1.864645, .min_entropy = 1.864645, .passed = false },
        { "stuck", -1, 3.089954, 170, 669, false,
          .row = {       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN },
          .col = {       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN },
          .h_r = NAN, .h_c = NAN, .min_entropy = NAN, .passed = false },
};
