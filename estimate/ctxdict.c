/* ctxdict.c - context and (context, follower) dictionaries for the MultiMMC
 * and LZ78Y predictors (SP 800-90B §6.3.9, §6.3.10).
 *
 * Linear probing over power-of-two tables kept at most half full. A pair's
 * key is its context shifted one byte older with the follower as the newest
 * byte, so it is known before the context is found and can be prefetched.
 * Entries are never removed: both predictors cap their dictionaries.
 * Flow: predict-context.c only. */
#include "ctxdict.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_INITIAL 1024U

static size_t ctx_hash(CtxKey k) {
        uint64_t h = k.lo * 0x9e3779b97f4a7c15ULL;

        h ^= (k.hi + 0x632be59bd9b4e019ULL) * 0xc2b2ae3d27d4eb4fULL;
        h ^= (k.top + 0x165667b19e3779f9ULL) * 0x27d4eb2f165667c5ULL;
        h ^= h >> 31;
        h *= 0xd6e8feb86659fd93ULL;
        return (size_t)(h ^ (h >> 32));
}

static bool ctx_equal(CtxKey a, CtxKey b) {
        return a.lo == b.lo && a.hi == b.hi && a.top == b.top;
}

static CtxSlot *table_slot(const CtxTable *t, CtxKey key) {
        size_t i = ctx_hash(key) & t->mask;

        while (t->slots[i].used && !ctx_equal(t->slots[i].key, key))
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
                        if (t->slots[i].used)
                                *table_slot(&grown, t->slots[i].key) = t->slots[i];
        free(t->slots);
        *t = grown;
        return 0;
}

/* The slot for key (unused if absent), with room to insert it. */
static int table_reserve(CtxTable *t, CtxKey key, CtxSlot **ret) {
        if (!t->slots || 2 * (t->used + 1) > t->mask + 1) {
                int r = table_grow(t);

                if (r < 0)
                        return r;
        }
        *ret = table_slot(t, key);
        return 0;
}

static CtxSlot *table_find(const CtxTable *t, CtxKey key) {
        CtxSlot *s;

        if (!t->slots)
                return NULL;
        s = table_slot(t, key);
        return s->used ? s : NULL;
}

void ctxdict_init(CtxDict *d) {
        memset(d, 0, sizeof(*d));
}

void ctxdict_deinit(CtxDict *d) {
        for (unsigned i = 0; i < CTX_DEPTH_MAX; i++) {
                free(d->contexts[i].slots);
                free(d->pairs[i].slots);
        }
        memset(d, 0, sizeof(*d));
}

CtxSlot *ctxdict_find(const CtxDict *d, unsigned depth, CtxKey key) {
        return table_find(&d->contexts[depth], key);
}

int ctxdict_get(CtxDict *d, unsigned depth, CtxKey key, CtxSlot **ret) {
        CtxTable *t = &d->contexts[depth];
        CtxSlot *s;
        int r = table_reserve(t, key, &s);

        if (r < 0)
                return r;
        if (!s->used) {
                *s = (CtxSlot) { .key = key, .used = true };
                t->used++;
        }
        *ret = s;
        return 0;
}

static CtxKey pair_key(CtxKey key, uint8_t symbol) {
        CtxKey p = {
                .lo = (key.lo << 8) | symbol,
                .hi = (key.hi << 8) | (key.lo >> 56),
                .top = key.hi >> 56,
        };

        return p;
}

int ctxdict_count(CtxDict *d, unsigned depth, CtxSlot *ctx, CtxKey key, uint8_t symbol, bool allow_new, bool *ret_added) {
        CtxTable *t = &d->pairs[depth];
        CtxKey pk = pair_key(key, symbol);
        CtxSlot *s;

        *ret_added = false;
        if (!allow_new) {
                s = table_find(t, pk);
                if (!s)
                        return 0;
        } else {
                int r = table_reserve(t, pk, &s);

                if (r < 0)
                        return r;
                if (!s->used) {
                        *s = (CtxSlot) { .key = pk, .used = true };
                        t->used++;
                        *ret_added = true;
                }
        }
        s->count++;
        if (s->count > ctx->count || (s->count == ctx->count && symbol > ctx->best)) {
                ctx->count = s->count;
                ctx->best = symbol;
        }
        return 0;
}

void ctxdict_prefetch(const CtxDict *d, unsigned depth, CtxKey key, uint8_t symbol) {
        const CtxTable *c = &d->contexts[depth], *p = &d->pairs[depth];

        if (c->slots)
                __builtin_prefetch(&c->slots[ctx_hash(key) & c->mask]);
        if (p->slots)
                __builtin_prefetch(&p->slots[ctx_hash(pair_key(key, symbol)) & p->mask]);
}
