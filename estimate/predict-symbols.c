/* predict-symbols.c - SP 800-90B §6.3.9 MultiMMC and §6.3.10 LZ78Y on
 * symbols of any alphabet (predict-context.c has the bit paths), one
 * context length at a time.
 *
 * Both predictors keep, per context length, a dictionary of contexts and
 * of (context, next symbol) pairs. A context of length L ending before
 * s[i] is the substring s[i-L..i), and the pair is s[i-L..i]: the
 * substrings of length L and L + 1 starting at i - L. ea_suffix_ids()
 * numbers all substrings of one length from the suffix array the t-tuple
 * estimate built, so each dictionary is a few flat arrays indexed by those
 * numbers (the best next symbol of a context and its count, the count of
 * each pair), and one pass over the data per length replaces one hash
 * lookup per length per sample.
 *
 * What ties the lengths together is kept exact:
 * - MultiMMC: a model predicts only while the shorter ones found their
 *   contexts (the walk stops at the first unseen context), and the model
 *   scored best so far predicts. Each length's pass records, per sample,
 *   whether its context was found and whether it predicted right; a last
 *   pass replays the scoring over those records.
 * - LZ78Y: the dictionary holds at most 65,536 contexts over all lengths,
 *   added in time order, longest first within a sample. A first pass finds
 *   the (sample, length) at which the 65,536th is added; the passes per
 *   length then add contexts up to that point only. The prediction is the
 *   most counted best follower over the lengths, the longest on a tie.
 * Flow: noniid.c hands symbols and their suffix array in; estimates come
 * back. */
#include "predict.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"

#define MMC_DEPTH 16U
#define MMC_ENTRIES_MAX 100000U
#define LZ78Y_DEPTH 16U
#define LZ78Y_ENTRIES_MAX 65536U

/* One context length's dictionary: contexts by number (best follower and
 * its count; a context is in the dictionary once its count is above 0),
 * pairs by number (count). */
typedef struct Dict {
        uint32_t *ctx_count;
        uint8_t *ctx_best;
        uint32_t *pair_count;
        /* The numbers of the substrings of length L (ctx_id) and L + 1
         * (pair_id) at every position, and how many there are. */
        uint32_t *ctx_id, *pair_id;
        uint32_t contexts, pairs;
} Dict;

static void dict_free(Dict *d) {
        free(d->ctx_count);
        free(d->ctx_best);
        free(d->pair_count);
        free(d->ctx_id);
        free(d->pair_id);
}

static int dict_alloc(Dict *d, size_t n) {
        *d = (Dict) {
                .ctx_count = malloc(n * sizeof(uint32_t)),
                .ctx_best = malloc(n),
                .pair_count = malloc(n * sizeof(uint32_t)),
                .ctx_id = malloc(n * sizeof(uint32_t)),
                .pair_id = malloc(n * sizeof(uint32_t)),
        };
        if (!d->ctx_count || !d->ctx_best || !d->pair_count || !d->ctx_id || !d->pair_id) {
                dict_free(d);
                return -ENOMEM;
        }
        return 0;
}

/* Moves on to context length len: the pair numbers of the last length are
 * this one's context numbers; the dictionary starts empty. */
static void dict_next_length(Dict *d, const EaSuffix *x, unsigned len) {
        uint32_t *t = d->ctx_id;

        if (len == 1)
                d->contexts = ea_suffix_ids(x, len, d->ctx_id);
        else {
                d->ctx_id = d->pair_id;
                d->pair_id = t;
                d->contexts = d->pairs;
        }
        d->pairs = ea_suffix_ids(x, len + 1, d->pair_id);
        memset(d->ctx_count, 0, d->contexts * sizeof(uint32_t));
        memset(d->ctx_best, 0, d->contexts);
        memset(d->pair_count, 0, d->pairs * sizeof(uint32_t));
}

/* One more `symbol` after context c, as pair p: the pair's count, and the
 * context's best follower (ties: the larger symbol, as NIST's tool). */
static inline void dict_count(Dict *d, uint32_t c, uint32_t p, uint8_t symbol) {
        uint32_t count = ++d->pair_count[p];

        if (count > d->ctx_count[c] || (count == d->ctx_count[c] && symbol > d->ctx_best[c])) {
                d->ctx_count[c] = count;
                d->ctx_best[c] = symbol;
        }
}

/* MultiMMC, context length d + 1: reach[i] counts the models, shortest
 * first, that found their context at sample i; this one predicts only
 * where all shorter ones did, and sets bit d of hits[i] when right. */
static void mmc_length(const uint8_t *s, size_t n, unsigned d, Dict *dict, uint8_t *reach, uint16_t *hits) {
        const uint32_t *cid = dict->ctx_id, *pid = dict->pair_id;
        size_t entries = 1;

        /* The first pair: context s[0..d], next s[d+1]. */
        dict_count(dict, cid[0], pid[0], s[d + 1]);
        for (size_t i = d + 2; i < n; i++) {
                const size_t p = i - d - 1;
                const uint32_t c = cid[p];

                if (reach[i] == d && dict->ctx_count[c] > 0) {
                        reach[i] = (uint8_t)(d + 1);
                        hits[i] |= (uint16_t)((dict->ctx_best[c] == s[i]) << d);
                        if (dict->pair_count[pid[p]] > 0)
                                dict_count(dict, c, pid[p], s[i]);
                        else if (entries < MMC_ENTRIES_MAX) {
                                dict_count(dict, c, pid[p], s[i]);
                                entries++;
                        }
                } else if (entries < MMC_ENTRIES_MAX) {
                        /* A new context, or one a shorter model did not
                         * reach: counted, and counted as an entry, as the
                         * walk over the lengths does. */
                        dict_count(dict, c, pid[p], s[i]);
                        entries++;
                }
        }
}

int ea_mmc_symbols(const uint8_t *s, size_t n, unsigned k, const EaSuffix *x, double *ret_h) {
        uint64_t score[MMC_DEPTH] = { 0 };
        Record rec = { 0 };
        unsigned winner = 0;
        uint8_t *reach = calloc(n, 1);
        uint16_t *hits = calloc(n, sizeof(*hits));
        Dict dict;
        int r = -ENOMEM;

        if (!reach || !hits || dict_alloc(&dict, n) < 0)
                goto out;
        for (unsigned d = 0; d < MMC_DEPTH && d + 2 < n; d++) {
                dict_next_length(&dict, x, d + 1);
                mmc_length(s, n, d, &dict, reach, hits);
        }
        dict_free(&dict);

        /* The scoring, as the walk over the lengths makes it: a model found
         * at sample i scores when right, and takes over when its score
         * reaches the leader's; the leader at the start of the sample is
         * the one whose record counts. */
        for (size_t i = 2; i < n; i++) {
                const unsigned cur = winner, found = reach[i];
                unsigned mask = hits[i] & ((1U << found) - 1U);

                while (mask) {
                        unsigned d = (unsigned)__builtin_ctz(mask);

                        mask &= mask - 1;
                        if (++score[d] >= score[winner])
                                winner = d;
                }
                if (cur < found)
                        record_hit(&rec, hits[i] >> cur & 1U);
        }
        *ret_h = ea_bound_prediction(rec.correct, n - 2, rec.longest, k);
        r = 0;
out:
        free(hits);
        free(reach);
        return r;
}

/* Where LZ78Y's dictionary fills: sample *ret_i, at context length
 * *ret_len (lengths go longest first), adds the last context it may; later
 * ones are not added. *ret_i = n if it never fills. */
static int lz78y_fill_point(const EaSuffix *x, size_t *ret_i, unsigned *ret_len) {
        const size_t n = x->n;
        /* new[i], bit L-1: the context of length L ending before s[i] is
         * seen for the first time there, counting from sample 16 on. */
        uint16_t *new = calloc(n, sizeof(*new));
        size_t added = 0;

        if (!new)
                return -ENOMEM;
        for (unsigned len = 1; len <= LZ78Y_DEPTH; len++) {
                /* A run of the suffix array is one substring of length len;
                 * it is added where it first occurs in range. */
                size_t first = SIZE_MAX;

                for (size_t j = 0; j < n; j++) {
                        const size_t p = (size_t)x->sa[j];

                        if (j > 0 && x->lcp[j] < len) {
                                if (first != SIZE_MAX)
                                        new[first + len] |= (uint16_t)(1U << (len - 1));
                                first = SIZE_MAX;
                        }
                        if (p + len >= LZ78Y_DEPTH && p + len < n && p < first)
                                first = p;
                }
                if (first != SIZE_MAX)
                        new[first + len] |= (uint16_t)(1U << (len - 1));
        }
        *ret_i = n;
        *ret_len = 0;
        for (size_t i = LZ78Y_DEPTH; i < n && *ret_i == n; i++) {
                const unsigned here = (unsigned)__builtin_popcount(new[i]);

                if (added + here < LZ78Y_ENTRIES_MAX) {
                        added += here;
                        continue;
                }
                for (unsigned len = LZ78Y_DEPTH; len >= 1; len--)
                        if ((new[i] >> (len - 1) & 1U) && ++added == LZ78Y_ENTRIES_MAX) {
                                *ret_i = i;
                                *ret_len = len;
                                break;
                        }
        }
        free(new);
        return 0;
}

/* LZ78Y, context length len: for each sample from 17 on, the best follower
 * of its context if that is in the dictionary and counted at least as
 * often as the best of the shorter lengths (best[], guess[]). */
static void lz78y_length(const uint8_t *s, size_t n, unsigned len, size_t fill_i, unsigned fill_len, Dict *dict,
                         uint32_t *best, uint8_t *guess) {
        const uint32_t *cid = dict->ctx_id, *pid = dict->pair_id;

        for (size_t i = LZ78Y_DEPTH; i < n; i++) {
                const size_t p = i - len;
                const uint32_t c = cid[p], count = dict->ctx_count[c];

                if (count > 0) {
                        if (i > LZ78Y_DEPTH && count >= best[i]) {
                                best[i] = count;
                                guess[i] = dict->ctx_best[c];
                        }
                        dict_count(dict, c, pid[p], s[i]);
                } else if (i < fill_i || (i == fill_i && len >= fill_len)) {
                        dict_count(dict, c, pid[p], s[i]);
                }
        }
}

int ea_lz78y_symbols(const uint8_t *s, size_t n, unsigned k, const EaSuffix *x, double *ret_h) {
        Record rec = { 0 };
        uint32_t *best = calloc(n, sizeof(*best));
        uint8_t *guess = calloc(n, 1);
        size_t fill_i;
        unsigned fill_len;
        Dict dict;
        int r = -ENOMEM;

        if (!best || !guess)
                goto out;
        r = lz78y_fill_point(x, &fill_i, &fill_len);
        if (r < 0)
                goto out;
        r = -ENOMEM;
        if (dict_alloc(&dict, n) < 0)
                goto out;
        for (unsigned len = 1; len <= LZ78Y_DEPTH; len++) {
                dict_next_length(&dict, x, len);
                lz78y_length(s, n, len, fill_i, fill_len, &dict, best, guess);
        }
        dict_free(&dict);

        for (size_t i = LZ78Y_DEPTH + 1; i < n; i++)
                record_hit(&rec, best[i] > 0 && guess[i] == s[i]);
        *ret_h = ea_bound_prediction(rec.correct, n - LZ78Y_DEPTH - 1, rec.longest, k);
        r = 0;
out:
        free(guess);
        free(best);
        return r;
}
