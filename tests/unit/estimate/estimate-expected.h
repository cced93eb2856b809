/* estimate-expected.h - NIST's values for the data sets test-estimate checks:
 * the output of NIST's reference tool, usnistgov/SP800-90B_EntropyAssessment
 * at commit 68ed165fd7a3eeef26b87a546ba23f338e82a3f3 (v1.1.7, 2024-07-12),
 * built with its own cpp/Makefile (g++ 12, -O2), run as
 *     ea_non_iid -v FILE 8
 * on the files `test-estimate --write-datasets DIR` writes (the synthetic
 * sets of estimate-datasets.h) and on tests/data/jitter-raw-1M.bin.
 * SHA-256 of the files, as the tool printed them:
 *     uniform   74b714424ba660f114ae12fffe0ca08d2d8cb6425023f6bd4d4f0347e0116538
 *     biased    8238567bc788a81aadb61f021e20b1e6279b5bec22fced69ce72d4f91231fa03
 *     markov    666db88eddcdcba7d702328345ca6c5a106e7a36db851704efc8d46c5a7fff7c
 *     periodic  f411fe9b976dc28c6076880eb37e4125925e85b2542a4fa470c34fad16ddcc90
 *     onebit    5ee25ed9b8f05d2808fba8b5a6cbe417f5332979e05b906b3cc97dba6c294fc4
 *     jitter    4c73509b6727f65105ed12af204212a8b497480d1d5a7362dea9c6a186044a33
 * Values as the tool prints them (6 decimals); NAN where the tool does not
 * run the estimator (collision, Markov and compression on non-binary
 * samples; the whole bitstring pass on binary samples). */
#pragma once

#include <math.h>

#include "estimate/noniid.h"

typedef struct EaExpected {
        const char *name;
        const char *file;            /* under tests/data/, or NULL: generated */
        int set;                     /* EaDataset, or -1 for a file */
        double original[_EA_MAX];
        double bitstring[_EA_MAX];
        double h_original, h_bitstring, min_entropy;
} EaExpected;

/*                      mcv        collision  markov     compress.  t_tuple    lrs        multi_mcw  lag        multi_mmc  lz78y */
static const EaExpected ea_expected[] = {
        { "uniform", NULL, EA_SET_UNIFORM,
          .original =  {  7.883070,       NAN,       NAN,       NAN,  7.333766,  7.937064,  7.918862,  7.983069,  7.927525,  7.927145 },
          .bitstring = {  0.998292,  0.948449,  0.999214,  0.895512,  0.931491,  0.981516,  0.998076,  0.998575,  0.998647,  0.999038 },
          .h_original = 7.333766, .h_bitstring = 0.895512, .min_entropy = 7.164095 },
        { "biased", NULL, EA_SET_BIASED,
          .original =  {  4.565347,       NAN,       NAN,       NAN,  4.432002,  4.935944,  4.416482,  5.044757,  4.589983,  4.590661 },
          .bitstring = {  0.667790,  1.000000,  0.672779,  0.386244,  0.608828,  0.676716,  0.667825,  0.674193,  0.503337,  0.667790 },
          .h_original = 4.416482, .h_bitstring = 0.386244, .min_entropy = 3.089954 },
        { "markov", NULL, EA_SET_MARKOV,
          .original =  {  7.868897,       NAN,       NAN,       NAN,  4.417294,  3.377528,  3.779861,  2.989120,  2.929462,  2.929459 },
          .bitstring = {  0.998105,  1.000000,  0.999464,  0.321713,  0.487333,  0.458741,  0.595845,  0.410607,  0.286740,  0.723748 },
          .h_original = 2.929459, .h_bitstring = 0.286740, .min_entropy = 2.293922 },
        { "periodic", NULL, EA_SET_PERIODIC,
          .original =  {  4.475868,       NAN,       NAN,       NAN,  2.672978,  2.220127,  4.489076,  1.991231,  1.991080,  2.382783 },
          .bitstring = {  0.956730,  0.788530,  0.948144,  0.715810,  0.356000,  0.300390,  0.957500,  0.800870,  0.195466,  0.947099 },
          .h_original = 1.991080, .h_bitstring = 0.195466, .min_entropy = 1.563729 },
        { "onebit", NULL, EA_SET_ONEBIT,
          .original =  {  0.675456,  0.670098,  0.677795,  0.463442,  0.664589,  0.908953,  0.675748,  0.908318,  0.675463,  0.675466 },
          .bitstring = {       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN,       NAN },
          .h_original = 0.463442, .h_bitstring = NAN, .min_entropy = 0.463442 },
        { "jitter", "jitter-raw-1M.bin", -1,
          .original =  {  2.558212,       NAN,       NAN,       NAN,  1.311120,  1.668920,  1.937341,  2.012087,  1.864645,  2.003380 },
          .bitstring = {  0.945569,  1.000000,  0.936417,  0.315244,  0.193005,  0.228501,  0.942498,  0.261919,  0.305371,  0.935677 },
          .h_original = 1.311120, .h_bitstring = 0.193005, .min_entropy = 1.311120 },
};
