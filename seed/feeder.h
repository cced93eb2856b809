/* feeder.h - when the kernel seeder feeds, and what one feed does: the
 * logic of truerandom-seed-kernel, apart from its devices and clock so
 * that tests drive it with injected time and fakes.
 *
 * A feed is due: once the daemon first serves (boot), then every
 * interval after the last feed, and at once when the daemon's counters
 * of VM generation changes or resumes grew since the last look. A due
 * feed happens only while /dev/truerandom serves: otherwise it is
 * refused (nothing else is ever fed) and stays due. A feed reads
 * `blocks` 32-byte blocks, all or nothing, gives each to the kernel with
 * 8 bits of credit per byte, then reseeds the kernel's CRNG.
 * Flow: seedstatus + /dev/truerandom -> [feeder] -> kernelrnd. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed/seedstatus.h"
#include "util/time-util.h"

#define SEED_BLOCK_SIZE 32
/* Blocks one feed may take: 16 is 4096 bits, the kernel's whole input pool. */
#define FEED_BLOCKS_MAX 16U

typedef enum FeedReason {
        FEED_REASON_NONE,
        FEED_REASON_BOOT,          /* the first feed since start */
        FEED_REASON_INTERVAL,
        FEED_REASON_VM_GENERATION, /* the daemon saw a VM generation change */
        FEED_REASON_RESUME,        /* the daemon saw a resume */
        _FEED_REASON_MAX,
} FeedReason;

/* What the seeder does to the world, so tests can fake it. Each returns
 * 0 or -errno. */
typedef struct FeederOps {
        int (*status)(void *userdata, SeedStatus *ret);
        /* All n bytes from /dev/truerandom, or an error. */
        int (*read)(void *userdata, uint8_t *buf, size_t n);
        int (*add_entropy)(void *userdata, const uint8_t *buf, size_t n, unsigned bits);
        int (*reseed)(void *userdata);
} FeederOps;

typedef enum FeedResult {
        FEED_RESULT_IDLE,    /* nothing due */
        FEED_RESULT_FED,
        FEED_RESULT_REFUSED, /* due, but /dev/truerandom does not serve (or the daemon is unreachable) */
        FEED_RESULT_FAILED,  /* the kernel refused the bytes or the reseed */
} FeedResult;

/* One step's outcome, for the log. */
typedef struct FeedOutcome {
        FeedResult result;
        FeedReason reason;   /* why a feed was due */
        unsigned blocks;     /* FED: blocks given */
        unsigned bits;       /* FED: credit given */
        int error;           /* REFUSED, FAILED: -errno (0: the status said not serving) */
        /* REFUSED: "daemon" (no status), "status" (not serving), "read";
         * FAILED: "add", "reseed" */
        const char *stage;
        char why[96];        /* REFUSED by status: why the daemon does not serve */
        bool repeated;       /* REFUSED as at the last step: say it once */
} FeedOutcome;

typedef struct Feeder Feeder;

/* interval > 0, 1 <= blocks <= FEED_BLOCKS_MAX. */
int feeder_new(usec_t interval, unsigned blocks, const FeederOps *ops, void *userdata, Feeder **ret);
Feeder *feeder_free(Feeder *s);

/* Looks at the daemon and feeds if a feed is due; now is any monotonic
 * clock that counts suspend (CLOCK_BOOTTIME). */
void feeder_step(Feeder *s, usec_t now, FeedOutcome *ret);

/* When the next interval feed is due (USEC_INFINITY before the first
 * feed): the caller sleeps until min(this, now + poll). */
usec_t feeder_next_due(const Feeder *s);

const char *feed_reason_to_string(FeedReason r);
