/* fairq.c - the fair queue of waiting /dev/truerandom reads.
 *
 * One FairBucket per waiting uid holds that uid's entries as a FIFO. Buckets
 * are found by uid in a chained hash table (power-of-two size, grows at load
 * 3/4) and sit in the rotation, a list read as a ring (after the last comes
 * the first); q->turn is the bucket whose turn it is. Invariants: a bucket
 * exists exactly while it holds at least one entry; every bucket is in the
 * rotation; a new uid joins the rotation just before q->turn, i.e. at the
 * end of the current round, so it can neither jump the queue nor wait more
 * than one round. Lists are glibc's <sys/queue.h>.
 * Flow: store -> [fair queue picks the reader] -> CUSE reply. */
#include "fairq.h"

#include <errno.h>
#include <stdlib.h>

#define FAIRQ_TABLE_MIN 16U

struct FairBucket {
        uint32_t uid;
        size_t count;
        TAILQ_HEAD(, FairEntry) entries;      /* first = oldest */
        TAILQ_ENTRY(FairBucket) ring;         /* the rotation */
        LIST_ENTRY(FairBucket) chain;         /* hash chain */
};

LIST_HEAD(FairChain, FairBucket);

struct FairQueue {
        struct FairChain *table;
        size_t table_size;                    /* power of two */
        size_t n_buckets;
        size_t n_entries;
        TAILQ_HEAD(, FairBucket) ring;
        FairBucket *turn;                     /* NULL iff empty */
        /* One emptied bucket kept back: a reader that is unqueued and pushed
         * again (served one block, wants more) never needs an allocation, so
         * that push cannot fail. */
        FairBucket *spare;
};

static size_t fairq_hash(const FairQueue *q, uint32_t uid) {
        /* Fibonacci hashing: consecutive and strided uids both spread over
         * the table, because the high bits of the product depend on all of
         * the uid's bits. */
        uint64_t h = (uint64_t) uid * UINT64_C(0x9E3779B97F4A7C15);
        return (size_t) (h >> 32) & (q->table_size - 1);
}

int fairq_new(FairQueue **ret) {
        FairQueue *q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->table = calloc(FAIRQ_TABLE_MIN, sizeof(*q->table));
        if (!q->table) {
                free(q);
                return -ENOMEM;
        }
        q->table_size = FAIRQ_TABLE_MIN;
        TAILQ_INIT(&q->ring);
        *ret = q;
        return 0;
}

FairQueue *fairq_free(FairQueue *q) {
        if (!q)
                return NULL;
        for (size_t i = 0; i < q->table_size; i++) {
                FairBucket *b;
                while ((b = LIST_FIRST(&q->table[i]))) {
                        LIST_REMOVE(b, chain);
                        free(b);
                }
        }
        free(q->table);
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
        FairBucket *b;

        LIST_FOREACH(b, &q->table[fairq_hash(q, uid)], chain)
                if (b->uid == uid)
                        return b;
        return NULL;
}

/* Best effort: without memory the chains only get longer, every operation
 * stays correct, so a failed grow must not fail the push. */
static void fairq_grow(FairQueue *q) {
        size_t old_size = q->table_size;
        struct FairChain *old = q->table;
        struct FairChain *table = calloc(old_size * 2, sizeof(*table));
        FairBucket *b;

        if (!table)
                return;
        q->table = table;
        q->table_size = old_size * 2;
        for (size_t i = 0; i < old_size; i++)
                while ((b = LIST_FIRST(&old[i]))) {
                        LIST_REMOVE(b, chain);
                        LIST_INSERT_HEAD(&table[fairq_hash(q, b->uid)], b, chain);
                }
        free(old);
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
        if ((q->n_buckets + 1) * 4 > q->table_size * 3)
                fairq_grow(q);

        *b = (FairBucket) { .uid = uid };
        TAILQ_INIT(&b->entries);
        LIST_INSERT_HEAD(&q->table[fairq_hash(q, uid)], b, chain);

        if (q->turn)
                TAILQ_INSERT_BEFORE(q->turn, b, ring);
        else {
                TAILQ_INSERT_TAIL(&q->ring, b, ring);
                q->turn = b;
        }
        q->n_buckets++;
        return b;
}

static void fairq_drop_bucket(FairQueue *q, FairBucket *b) {
        FairBucket *next = fairq_ring_next(q, b);

        LIST_REMOVE(b, chain);
        /* The turn moves to the bucket after b, which is the uid that would
         * have come next anyway: removing the current uid skips nobody. */
        if (q->turn == b)
                q->turn = next == b ? NULL : next;
        TAILQ_REMOVE(&q->ring, b, ring);
        q->n_buckets--;

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
        return q->n_buckets;
}

size_t fairq_count_uid(const FairQueue *q, uint32_t uid) {
        const FairBucket *b = fairq_find(q, uid);
        return b ? b->count : 0;
}
