/* source.h - the noise sources behind one small interface.
 *
 * A source yields raw 8-bit samples, exactly what the health tests and the
 * conditioner see. Each instance belongs to one thread (its collector, or an
 * export). Sources never spin: a failing device makes read() return -errno and
 * the caller backs off. No source logs; errors go up as -errno.
 * jitter and rdseed run a self-test (selftest.h) at every open, before any
 * sample is handed out; a failed one is -EDOM from open(), with what it
 * measured in SourceParams.selftest.
 *
 *   jitter  timing deltas of a memory-access loop, divided by the clock's
 *           step measured at open; low 8 bits of the reduced delta
 *   rdseed  x86 RDSEED, runtime-detected (-ENODEV when absent), bounded retry
 *   hwrng   /dev/hwrng; its credit comes from sysfs rng_quality
 *   kernel  getrandom(); never credited (CRNG defence in depth only)
 *   file    replays a file of raw samples (tests, re-checking a capture)
 * Flow: [source] -> health -> conditioner -> store. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "selftest.h"

typedef struct SourceParams {
        const char *path;          /* hwrng: device (NULL: /dev/hwrng); file: required */
        const char *sysfs_dir;     /* hwrng: NULL = /sys/class/misc/hw_random (tests point elsewhere) */
        bool loop;                 /* file: start over at the end (else -ENODATA there) */
        uint64_t rate;             /* file: samples per second, 0 = unlimited */
        size_t jitter_buffer;      /* jitter: buffer bytes, 0 = 4 MiB */
        unsigned jitter_accesses;  /* jitter: accesses between clock reads, 0 = 64 */
        uint64_t (*jitter_clock)(void); /* jitter: NULL = rdtsc (x86) or CLOCK_MONOTONIC;
                                         * fault injection gives a clock that stalls */
        SelftestResult *selftest;  /* out, may be NULL: open() writes its self-test here,
                                    * passed or not; a source without one leaves it alone
                                    * (zero it first: run = false then) */
} SourceParams;

typedef struct SourceOps {
        const char *name;
        /* Measured default credit, millibits per sample (see docs/ENTROPY.md). */
        uint32_t default_credit;
        /* -ENODEV when the source does not exist on this machine; -EDOM
         * when its self-test failed (p->selftest says why). */
        int (*open)(const SourceParams *p, void **ret_state);
        /* 1..n samples, or -EAGAIN (nothing now, try later), -ENODATA (a file
         * at its end), another -errno (device error). Returns within ~1 s. */
        ssize_t (*read)(void *state, uint8_t *buf, size_t n);
        /* Highest credit this instance can justify (hwrng: from rng_quality,
         * 0 on virtio-rng); UINT32_MAX when the source has no opinion. */
        uint32_t (*max_credit)(void *state);
        void (*close)(void *state);
} SourceOps;

extern const SourceOps source_jitter;
extern const SourceOps source_rdseed;
extern const SourceOps source_hwrng;
extern const SourceOps source_kernel;
extern const SourceOps source_file;

/* NULL-terminated, in the order status lists them. */
extern const SourceOps *const source_all[];

const SourceOps *source_lookup(const char *name);

/* Pure helpers behind rdseed, exposed so tests can drive them (jitter's
 * are the self-test's, selftest.h). */

/* One attempt at a 64-bit seed word: true and *ret written on success. */
typedef bool (*SourceSeedStepFn)(uint64_t *ret);

/* Fills buf[0..n) from step(), at most tries_per_word attempts per 64-bit
 * word (pausing between them), counting failed attempts into *failures.
 * Returns the bytes filled (short when a word ran out of tries after at least
 * one byte), or -EAGAIN when none. */
ssize_t source_rdseed_fill(SourceSeedStepFn step, unsigned tries_per_word, uint8_t *buf, size_t n,
                           uint64_t *failures);
