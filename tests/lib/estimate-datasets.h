/* estimate-datasets.h - the synthetic data sets test-estimate checks against
 * NIST's ea_non_iid: 1,000,000 8-bit samples each, generated deterministically
 * from xoshiro256** seeded by splitmix64, so the test and the files fed to
 * NIST's tool (test-estimate --write-datasets DIR) hold the same bytes.
 * test-restart reads the same sets as 1000 x 1000 restart matrices, plus
 * one with a row stuck after its restart.
 * Integer arithmetic only: the sets are identical on every compiler and libm. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define EA_DATASET_SAMPLES 1000000

typedef struct EaRng {
        uint64_t s[4];
} EaRng;

static inline uint64_t ea_rng_splitmix(uint64_t *x) {
        uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static inline void ea_rng_seed(EaRng *r, uint64_t seed) {
        for (size_t i = 0; i < 4; i++)
                r->s[i] = ea_rng_splitmix(&seed);
}

static inline uint64_t ea_rng_rotl(uint64_t x, int k) {
        return (x << k) | (x >> (64 - k));
}

static inline uint64_t ea_rng_next(EaRng *r) {
        uint64_t *s = r->s;
        uint64_t result = ea_rng_rotl(s[1] * 5, 7) * 9;
        uint64_t t = s[1] << 17;

        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = ea_rng_rotl(s[3], 45);
        return result;
}

typedef enum EaDataset {
        EA_SET_UNIFORM,  /* uniform bytes: close to 8 bits per sample */
        EA_SET_BIASED,   /* i.i.d., sum of four 4-bit values: 61 distinct values, bell-shaped */
        EA_SET_MARKOV,   /* first-order Markov: a random walk with steps -3..+4 */
        EA_SET_PERIODIC, /* a period-17 pattern with 2 bits of noise XORed in */
        EA_SET_ONEBIT,   /* one biased bit (P(1) = 3/8) in 8-bit samples */
        _EA_SET_MAX,
} EaDataset;

static const char *const ea_dataset_names[_EA_SET_MAX] = {
        [EA_SET_UNIFORM] = "uniform",
        [EA_SET_BIASED] = "biased",
        [EA_SET_MARKOV] = "markov",
        [EA_SET_PERIODIC] = "periodic",
        [EA_SET_ONEBIT] = "onebit",
};

/* Fill out[0..n) with data set `set`; each set has its own seed. */
static inline void ea_dataset_generate(EaDataset set, uint8_t *out, size_t n) {
        EaRng r;
        uint8_t pattern[17];
        uint8_t x = 0;

        ea_rng_seed(&r, 0x7472756572616e64ULL + (uint64_t)set);
        for (size_t i = 0; i < sizeof(pattern); i++)
                pattern[i] = (uint8_t)ea_rng_next(&r);

        for (size_t i = 0; i < n; i++) {
                uint64_t v = ea_rng_next(&r);

                switch (set) {
                case EA_SET_UNIFORM:
                        out[i] = (uint8_t)(v >> 56);
                        break;
                case EA_SET_BIASED:
                        out[i] = (uint8_t)(((v >> 60) & 15) + ((v >> 56) & 15) + ((v >> 52) & 15) + ((v >> 48) & 15));
                        break;
                case EA_SET_MARKOV:
                        x = (uint8_t)(x + (uint8_t)((v >> 61) & 7) - 3);
                        out[i] = x;
                        break;
                case EA_SET_PERIODIC:
                        out[i] = (uint8_t)(pattern[i % sizeof(pattern)] ^ ((v >> 62) & 3));
                        break;
                case EA_SET_ONEBIT:
                        out[i] = ((v >> 61) & 7) < 3;
                        break;
                default:
                        out[i] = 0;
                        break;
                }
        }
}

/* 1000 x 1000 restart matrix: the biased set with row 17 holding one value
 * for its first 650 samples, like a sampler that sticks right after an open
 * (issue 11 measured 623 of 1000 in one row of a real capture). */
#define EA_RESTART_ROWS 1000
#define EA_RESTART_STUCK_ROW 17
#define EA_RESTART_STUCK_LEN 650

static inline void ea_dataset_restart_stuck(uint8_t *out) {
        ea_dataset_generate(EA_SET_BIASED, out, EA_DATASET_SAMPLES);
        for (size_t j = 0; j < EA_RESTART_STUCK_LEN; j++)
                out[EA_RESTART_STUCK_ROW * EA_RESTART_ROWS + j] = 30;
}
