/* degrade.c - see degrade.h. xorshift64* as the generator: small,
 * deterministic, uniform enough for the estimators to find ~8 bits. */
#include "degrade.h"

#include <stddef.h>

static uint64_t next(uint64_t *s) {
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        return *s * UINT64_C(2685821657736338717);
}

static uint8_t byte(uint64_t *s) {
        return (uint8_t) (next(s) >> 56);
}

/* Uniform in [0, 1). */
static double unit(uint64_t *s) {
        return (double) (next(s) >> 11) / (double) (UINT64_C(1) << 53);
}

static uint8_t degraded(Degrade kind, uint64_t *s, const uint8_t *out, size_t i, size_t onset, size_t n) {
        size_t k = i - onset;

        switch (kind) {
        case DEGRADE_CHUNKS:
                /* Chunk c's 100 samples, written once, then copied 11 times. */
                return k % 1200 < 100 ? byte(s) : out[onset + k / 1200 * 1200 + k % 100];
        case DEGRADE_LAGGED:
                return i >= 777 && next(s) % 100 < 93 ? out[i - 777] : byte(s);
        case DEGRADE_WALK:
                return (uint8_t) (out[i - 1] + ((next(s) >> 63) ? 1 : -1));
        case DEGRADE_PERIOD:
                return k < DEGRADE_PERIOD_LENGTH ? byte(s) : out[i - DEGRADE_PERIOD_LENGTH];
        case DEGRADE_BIAS: {
                double p = 0.3 + 0.6 * (double) k / (double) (n - onset);
                uint8_t v = byte(s);

                return unit(s) < p ? 0 : v;
        }
        default:
                return byte(s);
        }
}

void degrade_fill(Degrade kind, uint64_t seed, size_t onset, uint8_t *out, size_t n) {
        uint64_t s = seed ? seed : 1;

        for (size_t i = 0; i < n; i++)
                out[i] = i < onset || kind == DEGRADE_NONE || i == 0 ? byte(&s) : degraded(kind, &s, out, i, onset, n);
}

const char *degrade_name(Degrade kind) {
        static const char *const names[_DEGRADE_MAX] = {
                [DEGRADE_NONE] = "none",     [DEGRADE_CHUNKS] = "chunks", [DEGRADE_LAGGED] = "lagged",
                [DEGRADE_WALK] = "walk",     [DEGRADE_PERIOD] = "period", [DEGRADE_BIAS] = "bias",
        };

        return kind < _DEGRADE_MAX ? names[kind] : NULL;
}
