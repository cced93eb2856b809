/* seeder.c - the CRNG's seeding policy (seeder.h has the rules).
 *
 * Invariants: pending is the set of triggers a reseed still owes, empty or
 * not; a reseed that takes a store block serves all of them at once, and
 * the limit counts from it (has_last, last_block_usec). Nothing here waits:
 * a request without a block stays pending until a later seeder_pump().
 * purge_held only while the last purge is less than SEEDER_LOST_PURGE_USEC
 * old, as seen by the next seeder_pump(); the purges are thus at least that
 * far apart unless VM_GENERATION comes between.
 * Secrets: the store block is born in seeder_pump() (store_take() copies
 * it out) and the getrandom() bytes in reseed() and rekey()
 * (fill_kernel()); both live in stack SECRET_BUFFERs, erased on every path
 * out of those functions. The key they make stays in the Crng.
 * Flow: store -> [seeder] -> crng -> drop-in devices. */
#include "seeder.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "pool/secret.h"

struct Seeder {
        SeederParams params;
        Store *store;
        Crng *crng;
        unsigned pending;          /* bit per SeedTrigger */
        bool unlimited;            /* a purge (VM_GENERATION, LOST_RECORDS) is pending: no limit */
        bool has_last;
        usec_t last_block_usec;    /* the last reseed that took a store block */
        bool has_purge;
        usec_t last_purge_usec;    /* the last store_purge_all() */
        bool purge_held;           /* a LOST_RECORDS purge waits for the limit */
        SeederStats stats;
};

static usec_t monotonic_usec(void *userdata) {
        return now_usec(CLOCK_MONOTONIC);
}

static usec_t seeder_now(const Seeder *s) {
        return s->params.now_usec(s->params.userdata);
}

int seeder_new(const SeederParams *params, Store *store, Crng *crng, Seeder **ret) {
        Seeder *s;

        if (!params || !store || !crng || !ret)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->params = *params;
        if (!s->params.now_usec)
                s->params.now_usec = monotonic_usec;
        s->store = store;
        s->crng = crng;
        *ret = s;
        return 0;
}

Seeder *seeder_free(Seeder *s) {
        free(s);
        return NULL;
}

const char *seed_trigger_to_string(SeedTrigger t) {
        static const char *const names[_SEED_TRIGGER_MAX] = {
                [SEED_TRIGGER_PERIODIC] = "periodic",
                [SEED_TRIGGER_IOCTL] = "ioctl",
                [SEED_TRIGGER_CONTROL] = "control",
                [SEED_TRIGGER_VM_GENERATION] = "vm_generation",
                [SEED_TRIGGER_RESUME] = "resume",
                [SEED_TRIGGER_LOST_RECORDS] = "lost_records",
        };
        return t < _SEED_TRIGGER_MAX ? names[t] : "unknown";
}

/* getrandom() output into out; false (and out zero) when there is none.
 * Defence in depth only, never credited: GRND_INSECURE never blocks;
 * kernels before 5.6 lack it, so fall back to a non-blocking read. */
static bool fill_kernel(uint8_t out[static CRNG_KEY_SIZE]) {
        if (getrandom(out, CRNG_KEY_SIZE, GRND_INSECURE) == CRNG_KEY_SIZE ||
            getrandom(out, CRNG_KEY_SIZE, GRND_NONBLOCK) == CRNG_KEY_SIZE)
                return true;
        sodium_memzero(out, CRNG_KEY_SIZE);
        return false;
}

/* A credited seed: the kernel's bytes where wanted (else zeros; the credited
 * part carries the seed). */
static void reseed(Seeder *s, const uint8_t *block) {
        SECRET_BUFFER(kernel, CRNG_KEY_SIZE);

        if (!s->params.kernel_mix || !fill_kernel(kernel))
                sodium_memzero(kernel, sizeof(kernel));
        if (crng_reseed(s->crng, block, kernel) < 0)
                abort(); /* a block, or credit checked by the caller: impossible */
        s->stats.seeds++;
        s->stats.last_reseed_usec = seeder_now(s);
}

/* A machine whose copies share the store: none of it may be served again,
 * and the reseed that follows takes a fresh block at once. */
static void purge(Seeder *s) {
        s->stats.vm_generation_changes++;
        s->stats.vm_blocks_purged += store_purge_all(s->store);
        s->has_purge = true;
        s->last_purge_usec = seeder_now(s);
        s->purge_held = false;
        s->unlimited = true;
}

/* ... and the key and the buffer: getrandom() whatever kernel_mix says:
 * right after the change it is the only input the copies do not share.
 * Only a kernel of 5.18 or later reports a change, and there GRND_INSECURE
 * fails only under a seccomp filter that forbids getrandom() (the unit's
 * allows it); then the buffer is still discarded, the daemon warns, and
 * the copies' drop-in streams are alike until the next fresh block. */
static void rekey(Seeder *s) {
        SECRET_BUFFER(kernel, CRNG_KEY_SIZE);

        if (fill_kernel(kernel)) {
                crng_rekey(s->crng, kernel);
                s->stats.rekeys++;
        } else
                crng_discard(s->crng);
}

static bool purge_allowed(const Seeder *s) {
        return !s->has_purge || seeder_now(s) >= s->last_purge_usec + SEEDER_LOST_PURGE_USEC;
}

/* Lost records: rekeyed always, purged unless the limit holds it (then a
 * later seeder_pump() purges); whether it purged now. */
static bool lost_records(Seeder *s) {
        rekey(s);
        if (!purge_allowed(s)) {
                s->purge_held = true;
                return false;
        }
        purge(s);
        return true;
}

static bool due_at(const Seeder *s, usec_t *ret_usec) {
        if (s->unlimited || !s->has_last || s->params.min_interval_usec == 0) {
                *ret_usec = 0;
                return true;
        }
        *ret_usec = s->last_block_usec + s->params.min_interval_usec;
        return false;
}

static bool reseed_due(const Seeder *s) {
        usec_t at;

        if (!s->pending)
                return false;
        /* The rate limit: the one place it is decided. */
        return due_at(s, &at) || seeder_now(s) >= at;
}

int seeder_trigger(Seeder *s, SeedTrigger trigger) {
        if (trigger >= _SEED_TRIGGER_MAX)
                return -EINVAL;
        if (trigger == SEED_TRIGGER_VM_GENERATION) {
                purge(s);
                rekey(s);
        } else if (trigger == SEED_TRIGGER_LOST_RECORDS && !lost_records(s)) {
                /* Rekeyed only: the next fresh block is no fresher for it. */
                s->stats.requests[trigger]++;
                return 0;
        } else if (trigger != SEED_TRIGGER_LOST_RECORDS && !crng_is_seeded(s->crng))
                return -ENODATA;
        s->stats.requests[trigger]++;
        if (s->pending)
                s->stats.joined++;
        s->pending |= 1U << trigger;
        return 0;
}

SeedResult seeder_pump(Seeder *s) {
        SECRET_BUFFER(block, STORE_BLOCK_SIZE);
        bool first = !crng_is_seeded(s->crng);

        if (s->purge_held && purge_allowed(s)) {
                purge(s);
                s->pending |= 1U << SEED_TRIGGER_LOST_RECORDS;
        }
        if (!first && !reseed_due(s))
                return SEED_NONE;
        if (store_take(s->store, block, 0) < 0)
                return SEED_NONE;
        reseed(s, block);
        for (SeedTrigger t = 0; t < _SEED_TRIGGER_MAX; t++)
                if (s->pending & (1U << t))
                        s->stats.reseeds[t]++;
        s->pending = 0;
        s->unlimited = false;
        s->has_last = true;
        s->last_block_usec = seeder_now(s);
        return first ? SEED_FIRST : SEED_RESEEDED;
}

SeedResult seeder_seed_from_credit(Seeder *s) {
        if (crng_is_seeded(s->crng) || crng_pending_credit(s->crng) < CRNG_SEED_BITS)
                return SEED_NONE;
        reseed(s, NULL);
        return SEED_FIRST;
}

bool seeder_wants_block(const Seeder *s) {
        return !crng_is_seeded(s->crng) || reseed_due(s);
}

bool seeder_next_due(const Seeder *s, usec_t *ret_usec) {
        usec_t at = 0;

        if (!s->pending && !s->purge_held)
                return false;
        if (s->pending && due_at(s, &at))
                at = seeder_now(s);
        if (s->purge_held && (!s->pending || s->last_purge_usec + SEEDER_LOST_PURGE_USEC < at))
                at = s->last_purge_usec + SEEDER_LOST_PURGE_USEC;
        if (ret_usec)
                *ret_usec = at;
        return true;
}

void seeder_set_min_interval(Seeder *s, usec_t min_interval_usec) {
        s->params.min_interval_usec = min_interval_usec;
}

void seeder_get_stats(const Seeder *s, SeederStats *ret) {
        *ret = s->stats;
        ret->pending = s->pending != 0;
}
