/* ctxdict.h - the dictionaries of the MultiMMC and LZ78Y predictors: for
 * each context (up to 16 symbols, one table per context length) the count
 * of its most frequent follower and which symbol that is (ties: the larger
 * symbol, as NIST's tool breaks them), and for each (context, follower)
 * pair its count, keyed by the context with the follower appended.
 * Keys depend only on the data, never on insertion order, so a predictor
 * can prefetch the slots of the next sample while it works on this one.
 * Open-addressing hash tables, grown as they fill. Internal to libestimate. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTX_DEPTH_MAX 16U

/* Up to 17 symbols (a 16-symbol context and its follower), one byte each,
 * the newest in the lowest byte of lo. */
typedef struct CtxKey {
        uint64_t lo, hi, top;
} CtxKey;

typedef struct CtxSlot {
        CtxKey key;
        uint32_t count;      /* contexts: the best follower's count; pairs: the pair's count */
        uint8_t best;        /* contexts: the best follower */
        bool used;
} CtxSlot;

typedef struct CtxTable {
        CtxSlot *slots;
        size_t mask, used;
} CtxTable;

typedef struct CtxDict {
        CtxTable contexts[CTX_DEPTH_MAX];  /* by context length - 1 */
        CtxTable pairs[CTX_DEPTH_MAX];     /* by context length - 1 */
} CtxDict;

void ctxdict_init(CtxDict *d);
void ctxdict_deinit(CtxDict *d);

/* Context `key` of length depth + 1, or NULL. The pointer holds until the
 * next ctxdict_get() at this depth. */
CtxSlot *ctxdict_find(const CtxDict *d, unsigned depth, CtxKey key);
/* Find or create it: 0 and *ret, or -ENOMEM. */
int ctxdict_get(CtxDict *d, unsigned depth, CtxKey key, CtxSlot **ret);

/* Count one more `symbol` after context `ctx` (found at `depth` with key
 * `key`). A pair not seen before is added only if allow_new; *ret_added
 * says whether it was. 0 or -ENOMEM. */
int ctxdict_count(CtxDict *d, unsigned depth, CtxSlot *ctx, CtxKey key, uint8_t symbol, bool allow_new, bool *ret_added);

/* Start loading the slots ctxdict_find() and ctxdict_count() will touch. */
void ctxdict_prefetch(const CtxDict *d, unsigned depth, CtxKey key, uint8_t symbol);

/* key with `symbol` as its next older byte: the context one longer. */
static inline CtxKey ctxkey_extend(CtxKey k, unsigned len, uint8_t symbol) {
        if (len < 8)
                k.lo |= (uint64_t)symbol << (8 * len);
        else if (len < 16)
                k.hi |= (uint64_t)symbol << (8 * (len - 8));
        else
                k.top |= (uint64_t)symbol << (8 * (len - 16));
        return k;
}
