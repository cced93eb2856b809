/* ctxdict.h - the dictionaries of the MultiMMC and LZ78Y predictors: for
 * each context (up to 16 symbols, one table per context length) the counts
 * of the symbols that followed it, and the current prediction (the most
 * frequent follower; ties: the larger symbol, as NIST's tool breaks them).
 * Open-addressing hash tables, grown as they fill. Internal to libestimate. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTX_DEPTH_MAX 16U
#define CTX_NONE UINT32_MAX

/* A context of up to 16 symbols, packed one byte each. */
typedef struct CtxKey {
        uint64_t lo, hi;
} CtxKey;

typedef struct CtxSlot {
        CtxKey key;
        uint64_t value;      /* 0: empty; node + 1, or a follower count */
} CtxSlot;

typedef struct CtxTable {
        CtxSlot *slots;
        size_t mask, used;
} CtxTable;

typedef struct CtxNode {
        uint64_t best_count;
        uint8_t best;
} CtxNode;

typedef struct CtxDict {
        CtxTable contexts[CTX_DEPTH_MAX];  /* by context length - 1 */
        CtxTable followers;                /* (node, symbol) -> count */
        CtxNode *nodes;
        size_t n_nodes, cap_nodes;
} CtxDict;

void ctxdict_init(CtxDict *d);
void ctxdict_deinit(CtxDict *d);

/* The node of context `key` of length depth + 1, or CTX_NONE. */
uint32_t ctxdict_find(const CtxDict *d, unsigned depth, CtxKey key);
/* Find or create it: 0 and *ret_node, or -ENOMEM. */
int ctxdict_get(CtxDict *d, unsigned depth, CtxKey key, uint32_t *ret_node);

/* Count one more `symbol` after `node`. A follower not seen before is added
 * only if allow_new; *ret_added says whether it was. 0 or -ENOMEM. */
int ctxdict_count(CtxDict *d, uint32_t node, uint8_t symbol, bool allow_new, bool *ret_added);

static inline const CtxNode *ctxdict_node(const CtxDict *d, uint32_t node) {
        return &d->nodes[node];
}

/* key with `symbol` as its next older byte: the context one longer. */
static inline CtxKey ctxkey_extend(CtxKey k, unsigned len, uint8_t symbol) {
        if (len < 8)
                k.lo |= (uint64_t)symbol << (8 * len);
        else
                k.hi |= (uint64_t)symbol << (8 * (len - 8));
        return k;
}
