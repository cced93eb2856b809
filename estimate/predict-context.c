/* predict-context.c - SP 800-90B §6.3.9 MultiMMC and §6.3.10 LZ78Y on
 * bits; symbols of larger alphabets go to predict-symbols.c.
 *
 * MultiMMC: 16 Markov models predict the next symbol from the last 1..16
 * symbols; each model's dictionary holds at most 100,000 (context, next)
 * pairs; the model scored best so far predicts. A context unseen at one
 * length is unseen at every longer one, so the walk stops looking up there
 * and only records the new pairs.
 * LZ78Y: one dictionary of at most 65,536 contexts of length 1..16; the
 * context whose best follower was counted most often (ties: the longer
 * context) predicts.
 * Bits (k = 2) use flat arrays indexed by the context's bits: 16 lengths
 * * 2^16 contexts fit in a few MB, and the 8,000,000-bit bitstring pass is
 * the hot loop. Ties predict 1, as NIST's tool predicts the larger symbol.
 * Flow: noniid.c hands symbols in; estimates come back. */
#include "predict.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "bound.h"

#define MMC_DEPTH 16U
#define MMC_ENTRIES_MAX 100000U
#define LZ78Y_DEPTH 16U
#define LZ78Y_ENTRIES_MAX 65536U

/* Bit dictionaries: counts[len-1][2 * context + next], context = the last
 * len bits, the newest in bit 0. */
typedef struct BitDict {
        uint32_t *counts[16];
} BitDict;

static void bitdict_free(BitDict *b) {
        for (unsigned j = 0; j < 16; j++)
                free(b->counts[j]);
}

static int bitdict_alloc(BitDict *b, unsigned depth) {
        *b = (BitDict) { 0 };
        for (unsigned j = 0; j < depth; j++) {
                b->counts[j] = calloc((size_t)2 << (j + 1), sizeof(uint32_t));
                if (!b->counts[j]) {
                        bitdict_free(b);
                        return -ENOMEM;
                }
        }
        return 0;
}

static uint32_t bit_context(const uint8_t *s, size_t i, unsigned len) {
        uint32_t c = 0;

        for (unsigned j = 1; j <= len; j++)
                c |= (uint32_t)(s[i - j] & 1U) << (j - 1);
        return c;
}

static int mmc_bits(const uint8_t *s, size_t n, double *ret_h) {
        uint64_t score[MMC_DEPTH] = { 0 };
        size_t entries[MMC_DEPTH];
        unsigned winner = 0;
        Record rec = { 0 };
        BitDict b;
        int r = bitdict_alloc(&b, MMC_DEPTH);

        if (r < 0)
                return r;
        /* The first pair of each length: context s[0..d], next s[d+1]. */
        for (unsigned d = 0; d < MMC_DEPTH && d + 2 < n; d++) {
                uint32_t c = 0;

                for (unsigned j = 0; j <= d; j++)
                        c |= (uint32_t)(s[j] & 1U) << (d - j);
                b.counts[d][2 * c + (s[d + 1] & 1U)] = 1;
                entries[d] = 1;
        }
        for (size_t i = 2; i < n; i++) {
                const unsigned y = s[i] & 1U, cur_winner = winner;
                uint32_t ctx = 0;
                bool found = true;

                for (unsigned d = 0; d < MMC_DEPTH && d + 2 <= i; d++) {
                        uint32_t *e;

                        ctx |= (uint32_t)(s[i - d - 1] & 1U) << d;
                        e = &b.counts[d][2 * ctx];
                        if (found)
                                found = e[0] || e[1];
                        if (found) {
                                /* A coin toss on good data: no branch on it. */
                                const unsigned hit = (e[1] >= e[0]) == y;

                                score[d] += hit;
                                if (hit & (score[d] >= score[winner]))
                                        winner = d;
                                if (d == cur_winner)
                                        record_hit(&rec, hit);
                                if (e[y])
                                        e[y]++;
                                else if (entries[d] < MMC_ENTRIES_MAX) {
                                        e[y] = 1;
                                        entries[d]++;
                                }
                        } else if (entries[d] < MMC_ENTRIES_MAX) {
                                e[y] = 1;
                                entries[d]++;
                        }
                }
        }
        bitdict_free(&b);
        *ret_h = ea_bound_prediction(rec.correct, n - 2, rec.longest, 2);
        return 0;
}

int ea_predict_multi_mmc(const uint8_t *s, size_t n, unsigned k, const EaSuffix *x, double *ret_h) {
        if (n < 4) {
                *ret_h = NAN;
                return 0;
        }
        return k == 2 ? mmc_bits(s, n, ret_h) : ea_mmc_symbols(s, n, k, x, ret_h);
}

static int lz78y_bits(const uint8_t *s, size_t n, double *ret_h) {
        size_t entries = 0;
        uint32_t ctx;       /* the last 16 bits, the newest in bit 0 */
        Record rec = { 0 };
        BitDict b;
        int r = bitdict_alloc(&b, LZ78Y_DEPTH);

        if (r < 0)
                return r;
        /* The first pair of each length: context s[16-j..15], next s[16]. */
        for (unsigned j = 1; j <= LZ78Y_DEPTH; j++, entries++)
                b.counts[j - 1][2 * bit_context(s, LZ78Y_DEPTH, j) + (s[LZ78Y_DEPTH] & 1U)] = 1;

        ctx = bit_context(s, LZ78Y_DEPTH, LZ78Y_DEPTH);
        for (size_t i = LZ78Y_DEPTH + 1; i < n; i++) {
                const unsigned y = s[i] & 1U;
                uint32_t best = 0;
                unsigned guess = 0;

                ctx = (ctx << 1 | (s[i - 1] & 1U)) & 0xffffU;

                for (unsigned j = LZ78Y_DEPTH; j >= 1; j--) {
                        uint32_t *e = &b.counts[j - 1][2 * (ctx & ((1U << j) - 1))];
                        uint32_t c = e[0] > e[1] ? e[0] : e[1];

                        if (c > 0) {
                                if (c > best) {
                                        best = c;
                                        guess = e[0] > e[1] ? 0 : 1;
                                }
                                e[y]++;
                        } else if (entries < LZ78Y_ENTRIES_MAX) {
                                e[y] = 1;
                                entries++;
                        }
                }
                record_hit(&rec, best > 0 && guess == y);
        }
        bitdict_free(&b);
        *ret_h = ea_bound_prediction(rec.correct, n - LZ78Y_DEPTH - 1, rec.longest, 2);
        return 0;
}

int ea_predict_lz78y(const uint8_t *s, size_t n, unsigned k, const EaSuffix *x, double *ret_h) {
        if (n < LZ78Y_DEPTH + 3) {
                *ret_h = NAN;
                return 0;
        }
        return k == 2 ? lz78y_bits(s, n, ret_h) : ea_lz78y_symbols(s, n, k, x, ret_h);
}
