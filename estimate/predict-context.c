/* predict-context.c - SP 800-90B §6.3.9 MultiMMC and §6.3.10 LZ78Y.
 *
 * MultiMMC: 16 Markov models predict the next symbol from the last 1..16
 * symbols; each model's dictionary holds at most 100,000 (context, next)
 * pairs; the model scored best so far predicts. A context unseen at one
 * length is unseen at every longer one, so the walk stops looking up there
 * and only records the new pairs.
 * LZ78Y: one dictionary of at most 65,536 contexts of length 1..16; the
 * context whose best follower was counted most often (ties: the longer
 * context) predicts.
 * Bits (k = 2) use flat arrays indexed by the context's bits instead of
 * hash tables: 16 lengths * 2^16 contexts fit in a few MB, and the
 * 8,000,000-bit bitstring pass is the hot loop. Ties predict 1, as the
 * hash path predicts the larger symbol.
 * Flow: noniid.c hands symbols in; estimates come back. */
#include "predict.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "bound.h"
#include "ctxdict.h"

#define MMC_DEPTH 16U
#define MMC_ENTRIES_MAX 100000U
#define LZ78Y_DEPTH 16U
#define LZ78Y_ENTRIES_MAX 65536U

typedef struct Record {
        uint64_t correct, run, longest;
} Record;

static void record_hit(Record *r, bool hit) {
        if (hit) {
                r->correct++;
                if (++r->run > r->longest)
                        r->longest = r->run;
        } else {
                r->run = 0;
        }
}

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
                                unsigned guess = e[0] > e[1] ? 0 : 1;

                                if (guess == y && ++score[d] >= score[winner])
                                        winner = d;
                                if (d == cur_winner)
                                        record_hit(&rec, guess == y);
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

/* keys[l]: the context of length l + 1 ending just before s[i]. */
static void context_keys(const uint8_t *s, size_t i, unsigned depth, CtxKey keys[static CTX_DEPTH_MAX]) {
        CtxKey key = { 0 };

        for (unsigned l = 0; l < depth && l < i; l++)
                keys[l] = key = ctxkey_extend(key, l, s[i - 1 - l]);
}

static int mmc_symbols(const uint8_t *s, size_t n, unsigned k, double *ret_h) {
        uint64_t score[MMC_DEPTH] = { 0 };
        size_t entries[MMC_DEPTH];
        unsigned winner = 0, reach = MMC_DEPTH;
        Record rec = { 0 };
        CtxKey keys[2][CTX_DEPTH_MAX];
        CtxDict dict;
        bool added;
        int r = 0;

        ctxdict_init(&dict);
        for (unsigned d = 0; d < MMC_DEPTH && d + 2 < n; d++) {
                CtxSlot *ctx;

                context_keys(s, d + 1, d + 1, keys[0]);
                r = ctxdict_get(&dict, d, keys[0][d], &ctx);
                if (r < 0)
                        goto out;
                r = ctxdict_count(&dict, d, ctx, keys[0][d], s[d + 1], true, &added);
                if (r < 0)
                        goto out;
                entries[d] = 1;
        }
        context_keys(s, 2, MMC_DEPTH, keys[0]);
        for (size_t i = 2; i < n; i++) {
                const unsigned cur_winner = winner;
                const unsigned depths = i - 2 < MMC_DEPTH - 1 ? (unsigned)(i - 1) : MMC_DEPTH;
                const CtxKey *key = keys[i & 1];
                bool found = true;

                /* The next sample's slots load while this one is scored:
                 * those up to one past the depth reached, and those that
                 * may still get new entries. */
                if (i + 1 < n) {
                        context_keys(s, i + 1, MMC_DEPTH, keys[(i + 1) & 1]);
                        for (unsigned d = 0; d < depths; d++)
                                if (d <= reach + 1 || entries[d] < MMC_ENTRIES_MAX)
                                        ctxdict_prefetch(&dict, d, keys[(i + 1) & 1][d], s[i + 1]);
                }
                reach = 0;
                for (unsigned d = 0; d < depths; d++) {
                        CtxSlot *ctx = NULL;

                        if (found) {
                                ctx = ctxdict_find(&dict, d, key[d]);
                                found = ctx != NULL;
                        }
                        if (found) {
                                bool hit = ctx->best == s[i];

                                reach = d;
                                if (hit && ++score[d] >= score[winner])
                                        winner = d;
                                if (d == cur_winner)
                                        record_hit(&rec, hit);
                                r = ctxdict_count(&dict, d, ctx, key[d], s[i], entries[d] < MMC_ENTRIES_MAX, &added);
                                if (r < 0)
                                        goto out;
                                entries[d] += added;
                        } else if (entries[d] < MMC_ENTRIES_MAX) {
                                r = ctxdict_get(&dict, d, key[d], &ctx);
                                if (r < 0)
                                        goto out;
                                r = ctxdict_count(&dict, d, ctx, key[d], s[i], true, &added);
                                if (r < 0)
                                        goto out;
                                entries[d]++;
                        }
                }
        }
        *ret_h = ea_bound_prediction(rec.correct, n - 2, rec.longest, k);
out:
        ctxdict_deinit(&dict);
        return r;
}

int ea_predict_multi_mmc(const uint8_t *s, size_t n, unsigned k, double *ret_h) {
        if (n < 4) {
                *ret_h = NAN;
                return 0;
        }
        return k == 2 ? mmc_bits(s, n, ret_h) : mmc_symbols(s, n, k, ret_h);
}

static int lz78y_bits(const uint8_t *s, size_t n, double *ret_h) {
        size_t entries = 0;
        Record rec = { 0 };
        BitDict b;
        int r = bitdict_alloc(&b, LZ78Y_DEPTH);

        if (r < 0)
                return r;
        /* The first pair of each length: context s[16-j..15], next s[16]. */
        for (unsigned j = 1; j <= LZ78Y_DEPTH; j++, entries++)
                b.counts[j - 1][2 * bit_context(s, LZ78Y_DEPTH, j) + (s[LZ78Y_DEPTH] & 1U)] = 1;

        for (size_t i = LZ78Y_DEPTH + 1; i < n; i++) {
                const unsigned y = s[i] & 1U;
                const uint32_t ctx = bit_context(s, i, LZ78Y_DEPTH);
                uint32_t best = 0;
                unsigned guess = 0;

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

static int lz78y_symbols(const uint8_t *s, size_t n, unsigned k, double *ret_h) {
        size_t entries = 0;
        Record rec = { 0 };
        CtxDict dict;
        CtxKey keys[2][CTX_DEPTH_MAX];
        bool added;
        int r = 0;

        ctxdict_init(&dict);
        context_keys(s, LZ78Y_DEPTH, LZ78Y_DEPTH, keys[0]);
        for (unsigned j = 1; j <= LZ78Y_DEPTH; j++, entries++) {
                CtxSlot *ctx;

                r = ctxdict_get(&dict, j - 1, keys[0][j - 1], &ctx);
                if (r < 0)
                        goto out;
                r = ctxdict_count(&dict, j - 1, ctx, keys[0][j - 1], s[LZ78Y_DEPTH], true, &added);
                if (r < 0)
                        goto out;
        }
        context_keys(s, LZ78Y_DEPTH + 1, LZ78Y_DEPTH, keys[(LZ78Y_DEPTH + 1) & 1]);
        for (size_t i = LZ78Y_DEPTH + 1; i < n; i++) {
                const CtxKey *key = keys[i & 1];
                uint64_t best = 0;
                uint8_t guess = 0;

                if (i + 1 < n) {
                        context_keys(s, i + 1, LZ78Y_DEPTH, keys[(i + 1) & 1]);
                        for (unsigned j = 0; j < LZ78Y_DEPTH; j++)
                                ctxdict_prefetch(&dict, j, keys[(i + 1) & 1][j], s[i + 1]);
                }
                /* Longest context first: it wins ties. */
                for (unsigned j = LZ78Y_DEPTH; j >= 1; j--) {
                        CtxSlot *ctx = ctxdict_find(&dict, j - 1, key[j - 1]);

                        if (ctx) {
                                if (ctx->count > best) {
                                        best = ctx->count;
                                        guess = ctx->best;
                                }
                                r = ctxdict_count(&dict, j - 1, ctx, key[j - 1], s[i], true, &added);
                                if (r < 0)
                                        goto out;
                        } else if (entries < LZ78Y_ENTRIES_MAX) {
                                r = ctxdict_get(&dict, j - 1, key[j - 1], &ctx);
                                if (r < 0)
                                        goto out;
                                r = ctxdict_count(&dict, j - 1, ctx, key[j - 1], s[i], true, &added);
                                if (r < 0)
                                        goto out;
                                entries++;
                        }
                }
                record_hit(&rec, best > 0 && guess == s[i]);
        }
        *ret_h = ea_bound_prediction(rec.correct, n - LZ78Y_DEPTH - 1, rec.longest, k);
out:
        ctxdict_deinit(&dict);
        return r;
}

int ea_predict_lz78y(const uint8_t *s, size_t n, unsigned k, double *ret_h) {
        if (n < LZ78Y_DEPTH + 3) {
                *ret_h = NAN;
                return 0;
        }
        return k == 2 ? lz78y_bits(s, n, ret_h) : lz78y_symbols(s, n, k, ret_h);
}
