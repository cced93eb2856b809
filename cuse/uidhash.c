/* uidhash.c - records found by uid, and a count per uid (uidhash.h).
 *
 * Invariants: every node is on the chain its uid hashes to for the current
 * table size; n counts the nodes; a UidCount entry exists exactly while its
 * count is at least one.
 * Flow: CUSE request uid -> [uidhash] -> fair queue, per-uid limits. */
#include "uidhash.h"

#include <errno.h>
#include <stdlib.h>

#define UIDHASH_TABLE_MIN 16U

static size_t uidhash_slot(size_t table_size, uint32_t uid) {
        uint64_t h = (uint64_t)uid * UINT64_C(0x9E3779B97F4A7C15);
        return (size_t)(h >> 32) & (table_size - 1);
}

int uidhash_init(UidHash *h) {
        *h = (UidHash){ .table = calloc(UIDHASH_TABLE_MIN, sizeof(*h->table)) };
        if (!h->table)
                return -ENOMEM;
        h->table_size = UIDHASH_TABLE_MIN;
        return 0;
}

void uidhash_done(UidHash *h) {
        free(h->table);
        *h = (UidHash){ 0 };
}

UidNode *uidhash_find(const UidHash *h, uint32_t uid) {
        UidNode *n;

        LIST_FOREACH(n, &h->table[uidhash_slot(h->table_size, uid)], chain)
                if (n->uid == uid)
                        return n;
        return NULL;
}

/* Best effort: without memory the chains only get longer, and every
 * operation stays correct, so a failed grow must not fail the add. */
static void uidhash_grow(UidHash *h) {
        size_t old_size = h->table_size;
        struct UidChain *old = h->table, *table = calloc(old_size * 2, sizeof(*table));
        UidNode *n;

        if (!table)
                return;
        h->table = table;
        h->table_size = old_size * 2;
        for (size_t i = 0; i < old_size; i++)
                while ((n = LIST_FIRST(&old[i]))) {
                        LIST_REMOVE(n, chain);
                        LIST_INSERT_HEAD(&table[uidhash_slot(h->table_size, n->uid)], n, chain);
                }
        free(old);
}

void uidhash_add(UidHash *h, UidNode *n, uint32_t uid) {
        if ((h->n + 1) * 4 > h->table_size * 3)
                uidhash_grow(h);
        n->uid = uid;
        LIST_INSERT_HEAD(&h->table[uidhash_slot(h->table_size, uid)], n, chain);
        h->n++;
}

void uidhash_remove(UidHash *h, UidNode *n) {
        LIST_REMOVE(n, chain);
        h->n--;
}

UidNode *uidhash_pop(UidHash *h) {
        for (size_t i = 0; i < h->table_size && h->n > 0; i++) {
                UidNode *n = LIST_FIRST(&h->table[i]);
                if (n) {
                        uidhash_remove(h, n);
                        return n;
                }
        }
        return NULL;
}

/* ------------------------------------------------------------------ */
/* a count per uid                                                     */

typedef struct UidCountEntry {
        UidNode node;
        unsigned count;
} UidCountEntry;

int uidcount_init(UidCount *c) {
        return uidhash_init(&c->hash);
}

/* Every uid back to none; the table stays. */
static void uidcount_clear(UidCount *c) {
        UidNode *n;

        while ((n = uidhash_pop(&c->hash)))
                free(UIDHASH_ENTRY(n, UidCountEntry, node));
}

void uidcount_done(UidCount *c) {
        uidcount_clear(c);
        uidhash_done(&c->hash);
}

unsigned uidcount_get(const UidCount *c, uint32_t uid) {
        UidNode *n = uidhash_find(&c->hash, uid);
        return n ? UIDHASH_ENTRY(n, UidCountEntry, node)->count : 0;
}

int uidcount_inc(UidCount *c, uint32_t uid) {
        UidNode *n = uidhash_find(&c->hash, uid);
        UidCountEntry *e;

        if (n) {
                UIDHASH_ENTRY(n, UidCountEntry, node)->count++;
                return 0;
        }
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->count = 1;
        uidhash_add(&c->hash, &e->node, uid);
        return 0;
}

void uidcount_dec(UidCount *c, uint32_t uid) {
        UidNode *n = uidhash_find(&c->hash, uid);
        UidCountEntry *e;

        if (!n)
                abort(); /* a count below zero: the caller's books are wrong */
        e = UIDHASH_ENTRY(n, UidCountEntry, node);
        if (--e->count == 0) {
                uidhash_remove(&c->hash, n);
                free(e);
        }
}

/* ------------------------------------------------------------------ */
/* a budget per uid and window                                         */

int uidrate_init(UidRate *r) {
        *r = (UidRate){ 0 };
        return uidcount_init(&r->count);
}

void uidrate_done(UidRate *r) {
        uidcount_done(&r->count);
}

bool uidrate_take(UidRate *r, uint32_t uid, uint64_t now, uint64_t window, unsigned max) {
        /* A new window (or a clock that went back): every count from 0. */
        if (!r->started || now < r->window_start || now - r->window_start >= window) {
                uidcount_clear(&r->count);
                r->window_start = now;
                r->started = true;
        }
        if (uidcount_get(&r->count, uid) >= max)
                return false;
        return uidcount_inc(&r->count, uid) == 0;
}
