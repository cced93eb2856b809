/* fairq.c - the fair queue of waiting /dev/truerandom reads.
 *
 * One FairBucket per waiting uid holds that uid's entries as a FIFO.
 * Buckets are found by uid in a UidHash (uidhash.h) and sit in the
 * rotation, a list read as a ring (after the last comes the first); q->turn
 * is the bucket whose turn it is. Invariants: a bucket exists exactly while
 * it holds at least one entry; every bucket is in the rotation; a new uid
 * joins the rotation just before q->turn, i.e. at the end of the current
 * round, so it can neither jump the queue nor wait more than one round.
 * Lists are glibc's <sys/queue.h>.
 * Flow: store -> [fair queue picks the reader] -> CUSE reply. */
#include "fairq.h"

#include <errno.h>
#include <stdlib.h>

#include "uidhash.h"

struct FairBucket {
        UidNode node;                         /* by uid */
        size_t count;
        TAILQ_HEAD(, FairEntry) entries;      /* first = oldest */
        TAILQ_ENTRY(FairBucket) ring;         /* the rotation */
};

struct FairQueue {
        UidHash buckets;
        size_t n_entries;
        TAILQ_HEAD(, FairBucket) ring;
        FairBucket *turn;                     /* NULL iff empty */
        /* One emptied bucket kept back: a reader that is unqueued and pushed
         * again (served one block, wants more) never needs an allocation, so
         * that push cannot fail. */
        FairBucket *spare;
};

int fairq_new(FairQueue **ret) {
        FairQueue *q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        if (uidhash_init(&q->buckets) < 0) {
                free(q);
                return -ENOMEM;
        }
        TAILQ_INIT(&q->ring);
        *ret = q;
        return 0;
}

FairQueue *fairq_free(FairQueue *q) {
        UidNode *n;

        if (!q)
                return NULL;
        while ((n = uidhash_pop(&q->buckets)))
                free(UIDHASH_ENTRY(n, FairBucket, node));
        uidhash_done(&q->buckets);
        free(q->spare);
        free(q);
        return NULL;
}

/* The rotation is a ring: after the last bucket comes the first. */
static FairBucket *fairq_ring_next(FairQueue *q, FairBucket *b) {
        FairBucket *next = TAILQ_NEXT(b, ring);
        return next ? next : TAILQ_FIRST(&q->ring);
}

static FairBucket *fairq_find(const FairQueue *q, uint32_t uid) {
        UidNode *n = uidhash_find(&q->buckets, uid);
        return n ? UIDHASH_ENTRY(n, FairBucket, node) : NULL;
}

static FairBucket *fairq_add_bucket(FairQueue *q, uint32_t uid) {
        FairBucket *b = q->spare;
        if (b)
                q->spare = NULL;
        else {
                b = malloc(sizeof(*b));
                if (!b)
                        return NULL;
        }

        *b = (FairBucket) { 0 };
        TAILQ_INIT(&b->entries);
        uidhash_add(&q->buckets, &b->node, uid);

        if (q->turn)
                TAILQ_INSERT_BEFORE(q->turn, b, ring);
        else {
                TAILQ_INSERT_TAIL(&q->ring, b, ring);
                q->turn = b;
        }
        return b;
}

static void fairq_drop_bucket(FairQueue *q, FairBucket *b) {
        FairBucket *next = fairq_ring_next(q, b);

        uidhash_remove(&q->buckets, &b->node);
        /* The turn moves to the bucket after b, which is the uid that would
         * have come next anyway: removing the current uid skips nobody. */
        if (q->turn == b)
                q->turn = next == b ? NULL : next;
        TAILQ_REMOVE(&q->ring, b, ring);

        if (q->spare)
                free(b);
        else
                q->spare = b;
}

int fairq_push(FairQueue *q, FairEntry *e, uint32_t uid) {
        if (e->bucket)
                return -EBUSY;
        FairBucket *b = fairq_find(q, uid);
        if (!b) {
                b = fairq_add_bucket(q, uid);
                if (!b)
                        return -ENOMEM;
        }
        TAILQ_INSERT_TAIL(&b->entries, e, link);
        e->bucket = b;
        b->count++;
        q->n_entries++;
        return 0;
}

FairEntry *fairq_next(FairQueue *q) {
        FairBucket *b = q->turn;
        if (!b)
                return NULL;
        q->turn = fairq_ring_next(q, b);
        return TAILQ_FIRST(&b->entries);
}

void fairq_remove(FairQueue *q, FairEntry *e) {
        FairBucket *b = e->bucket;
        if (!b)
                return;
        TAILQ_REMOVE(&b->entries, e, link);
        e->bucket = NULL;
        q->n_entries--;
        if (--b->count == 0)
                fairq_drop_bucket(q, b);
}

FairEntry *fairq_pop(FairQueue *q) {
        if (!q->turn)
                return NULL;
        FairEntry *e = TAILQ_FIRST(&q->turn->entries);
        fairq_remove(q, e);
        return e;
}

bool fairq_is_queued(const FairEntry *e) {
        return e->bucket != NULL;
}

size_t fairq_size(const FairQueue *q) {
        return q->n_entries;
}

size_t fairq_uids(const FairQueue *q) {
        return q->buckets.n;
}

size_t fairq_count_uid(const FairQueue *q, uint32_t uid) {
        const FairBucket *b = fairq_find(q, uid);
        return b ? b->count : 0;
}
