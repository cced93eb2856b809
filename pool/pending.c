/* pending.c - the ring of finished blocks held until settled (see
 * pending.h).
 *
 * Invariants: the n slots from head on hold blocks, oldest first; every
 * other slot is all zero, except the one a block is being finished into.
 * Secrets: a block is born in pending_slot() (the conditioner writes it)
 * and erased in pending_pop() (after the store copied it, or refused it),
 * pending_clear() (a failure, or a purge of the store) or pending_free().
 * Flow: conditioner -> [pending] -> store. */
#include "pending.h"

#include <errno.h>
#include <stdlib.h>

#include "secret.h"

struct Pending {
        PendingBlock *ring;    /* max slots, secret_alloc() */
        size_t max, head, n;
};

int pending_new(size_t max, Pending **ret) {
        _cleanup_(pending_freep) Pending *p = NULL;

        if (max == 0 || max > SIZE_MAX / sizeof(PendingBlock))
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->ring = secret_alloc(max * sizeof(PendingBlock));
        if (!p->ring)
                return -ENOMEM;
        p->max = max;
        *ret = TAKE_PTR(p);
        return 0;
}

Pending *pending_free(Pending *p) {
        if (!p)
                return NULL;
        secret_free(p->ring);
        free(p);
        return NULL;
}

PendingBlock *pending_slot(Pending *p) {
        /* The caller sizes the ring for everything that can be unsettled
         * at once; more is a broken invariant, not a runtime condition. */
        if (p->n == p->max)
                abort();
        return &p->ring[(p->head + p->n) % p->max];
}

void pending_commit(Pending *p, uint64_t mbits, uint64_t last) {
        PendingBlock *b = pending_slot(p);

        b->mbits = mbits;
        b->last = last;
        p->n++;
}

PendingBlock *pending_ready(Pending *p, uint64_t settled) {
        if (p->n == 0 || p->ring[p->head].last > settled)
                return NULL;
        return &p->ring[p->head];
}

void pending_pop(Pending *p) {
        if (p->n == 0)
                abort();
        sodium_memzero(&p->ring[p->head], sizeof(PendingBlock));
        p->head = (p->head + 1) % p->max;
        p->n--;
}

void pending_clear(Pending *p) {
        sodium_memzero(p->ring, p->max * sizeof(PendingBlock));
        p->head = p->n = 0;
}

size_t pending_count(const Pending *p) {
        return p->n;
}
