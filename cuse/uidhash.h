/* uidhash.h - records found by uid, and a count per uid built on them
 * (DESIGN §6): the fair queue finds a waiting uid's bucket here, the
 * devices count each uid's open files.
 *
 * Intrusive: the caller embeds a UidNode in its record, and the table
 * allocates only its array of chains (a power of two, doubled at load 3/4;
 * a failed doubling only makes the chains longer). Fibonacci hashing: the
 * high bits of uid x 2^64/phi depend on all of the uid's bits, so
 * consecutive and strided uids both spread. Lookups are O(1) on average.
 * Plain data, no secrets, no locks. Lists are glibc's <sys/queue.h>.
 * Flow: CUSE request uid -> [uidhash] -> fair queue, per-uid limits and
 * budgets. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

typedef struct UidNode {
        LIST_ENTRY(UidNode) chain;
        uint32_t uid;
} UidNode;

typedef struct UidHash {
        LIST_HEAD(UidChain, UidNode) *table;
        size_t table_size;          /* power of two */
        size_t n;
} UidHash;

/* 0 or -ENOMEM. */
int uidhash_init(UidHash *h);
/* Frees the table, not the nodes: empty it first (uidhash_pop()). */
void uidhash_done(UidHash *h);

UidNode *uidhash_find(const UidHash *h, uint32_t uid);
/* Adds n under uid, which must not be there yet. Never fails. */
void uidhash_add(UidHash *h, UidNode *n, uint32_t uid);
void uidhash_remove(UidHash *h, UidNode *n);
/* Removes and returns any node; NULL when empty. */
UidNode *uidhash_pop(UidHash *h);

#define UIDHASH_ENTRY(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

/* How many of something each uid holds; a uid holding none takes no
 * memory. */
typedef struct UidCount {
        UidHash hash;
} UidCount;

int uidcount_init(UidCount *c);
void uidcount_done(UidCount *c);
unsigned uidcount_get(const UidCount *c, uint32_t uid);
/* 0 or -ENOMEM (a uid's first needs an entry). */
int uidcount_inc(UidCount *c, uint32_t uid);
/* uid must hold at least one. */
void uidcount_dec(UidCount *c, uint32_t uid);

/* How often each uid did something in the current window of time, for a
 * budget per uid: a fixed window, at whose end every count starts again
 * from 0 and the memory of the old one is freed. So a uid spends at most
 * max in any window, and twice that across a window's edge. */
typedef struct UidRate {
        UidCount count;
        uint64_t window_start;  /* in the caller's clock */
        bool started;           /* a window was ever started */
} UidRate;

int uidrate_init(UidRate *r);
void uidrate_done(UidRate *r);
/* Spends one of uid's max in the window (of length window) that now falls
 * in: true, or false when uid spent all of them already (or its first
 * spending found no memory: refused, for the caller to fail closed). A
 * window starts at the first spending after the last one ended. */
bool uidrate_take(UidRate *r, uint32_t uid, uint64_t now, uint64_t window, unsigned max);
