/* ctxdict.c - context -> follower-count dictionaries for the MultiMMC and
 * LZ78Y predictors (SP 800-90B §6.3.9, §6.3.10).
 *
 * Linear probing over power-of-two tables kept at most half full; a slot
 * value of 0 marks it empty, so a context node is stored as node + 1 and a
 * follower count is always at least 1. Entries are never removed: both
 * predictors cap their dictionaries instead.
 * Flow: predict-context.c only. */
#include "ctxdict.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_INITIAL 1024U

static size_t ctx_hash(CtxKey k) {
        uint64_t h = k.lo * 0x9e3779b97f4a7c15ULL ^ (k.hi + 0x632be59bd9b4e019ULL) * 0xc2b2ae3d27d4eb4fULL;

        h ^= h >> 31;
        h *= 0xd6e8feb86659fd93ULL;
        return (size_t)(h ^ (h >> 32));
}

static bool ctx_equal(CtxKey a, CtxKey b) {
        return a.lo == b.lo && a.hi == b.hi;
}

static CtxSlot *table_slot(const CtxTable *t, CtxKey key) {
        size_t i = ctx_hash(key) & t->mask;

        while (t->slots[i].value != 0 && !ctx_equal(t->slots[i].key, key))
                i = (i + 1) & t->mask;
        return &t->slots[i];
}

static int table_grow(CtxTable *t) {
        size_t cap = t->slots ? 2 * (t->mask + 1) : TABLE_INITIAL;
        CtxTable grown = { .slots = calloc(cap, sizeof(CtxSlot)), .mask = cap - 1, .used = t->used };

        if (!grown.slots)
                return -ENOMEM;
        if (t->slots)
                for (size_t i = 0; i <= t->mask; i++)
                        if (t->slots[i].value != 0)
                                *table_slot(&grown, t->slots[i].key) = t->slots[i];
        free(t->slots);
        *t = grown;
        return 0;
}

/* The slot for key, empty if absent; grows first so an insert fits. */
static int table_reserve(CtxTable *t, CtxKey key, CtxSlot **ret) {
        if (!t->slots || 2 * (t->used + 1) > t->mask + 1) {
                int r = table_grow(t);

                if (r < 0)
                        return r;
        }
        *ret = table_slot(t, key);
        return 0;
}

void ctxdict_init(CtxDict *d) {
        memset(d, 0, sizeof(*d));
}

void ctxdict_deinit(CtxDict *d) {
        for (unsigned i = 0; i < CTX_DEPTH_MAX; i++)
                free(d->contexts[i].slots);
        free(d->followers.slots);
        free(d->nodes);
        memset(d, 0, sizeof(*d));
}

uint32_t ctxdict_find(const CtxDict *d, unsigned depth, CtxKey key) {
        const CtxTable *t = &d->contexts[depth];
        const CtxSlot *s;

        if (!t->slots)
                return CTX_NONE;
        s = table_slot(t, key);
        return s->value ? (uint32_t)(s->value - 1) : CTX_NONE;
}

int ctxdict_get(CtxDict *d, unsigned depth, CtxKey key, uint32_t *ret_node) {
        CtxSlot *s;
        int r = table_reserve(&d->contexts[depth], key, &s);

        if (r < 0)
                return r;
        if (s->value == 0) {
                if (d->n_nodes == d->cap_nodes) {
                        size_t cap = d->cap_nodes ? 2 * d->cap_nodes : TABLE_INITIAL;
                        CtxNode *nodes = realloc(d->nodes, cap * sizeof(*nodes));

                        if (!nodes)
                                return -ENOMEM;
                        d->nodes = nodes;
                        d->cap_nodes = cap;
                }
                if (d->n_nodes >= CTX_NONE)
                        return -ENOMEM;
                d->nodes[d->n_nodes] = (CtxNode) { 0 };
                s->key = key;
                s->value = ++d->n_nodes;
                d->contexts[depth].used++;
        }
        *ret_node = (uint32_t)(s->value - 1);
        return 0;
}

int ctxdict_count(CtxDict *d, uint32_t node, uint8_t symbol, bool allow_new, bool *ret_added) {
        CtxKey key = { .lo = ((uint64_t)node << 8) | symbol };
        CtxNode *n = &d->nodes[node];
        CtxSlot *s;
        int r = table_reserve(&d->followers, key, &s);

        if (r < 0)
                return r;
        *ret_added = false;
        if (s->value == 0) {
                if (!allow_new)
                        return 0;
                s->key = key;
                d->followers.used++;
                *ret_added = true;
        }
        s->value++;
        if (s->value > n->best_count || (s->value == n->best_count && symbol > n->best)) {
                n->best_count = s->value;
                n->best = symbol;
        }
        return 0;
}
