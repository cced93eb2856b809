/* source.h - the noise sources: one table, one row each.
 *
 * A source yields raw 8-bit samples, exactly what the health tests and the
 * conditioner see. Each instance belongs to one thread (its collector, or an
 * export). Sources never spin: a failing device makes read() return -errno and
 * the caller backs off. No source logs; errors go up as -errno.
 * jitter, rdseed and tpm run a self-test (selftest.h) at every open, before any
 * sample is handed out; a failed one is -EDOM from open(), with what it
 * measured in SourceParams.selftest.
 *
 * A source's row (its SourceOps, in its own file) is all the program knows
 * about it: its name and one line of help, how it may be credited, the
 * defaults of its [source.NAME] section and the keys of its own there (kept
 * in SourceParams), and the calls that sample it. The configuration parses
 * and compares from the row, the daemon's reload and --check-config check
 * its path from it, truerandomctl's help lists its name. Adding a source is
 * its file here, its line in SOURCE_TABLE below and its file in meson.build
 * (a setting of its own is also a field of SourceParams). Each source's
 * file opens with how it samples and why it is credited as it is.
 * Flow: [source] -> health -> conditioner -> store. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "selftest.h"

/* The sources, in the order status and the configuration list them:
 * credited hardware-independent first, then hardware, then the
 * never-credited and test-only sources. X(ID, name): source_<name> is the
 * row, ID names its index (config.h's CONFIG_SOURCE_<ID>). */
#define SOURCE_TABLE(X)                                                        \
        X(JITTER, jitter)                                                      \
        X(RDSEED, rdseed)                                                      \
        X(HWRNG, hwrng)                                                        \
        X(TPM, tpm)                                                            \
        X(KERNEL, kernel)                                                      \
        X(FILE, file)

/* What a source is opened with: the settings of its own (the keys of its
 * row point into here), and what tests inject. */
typedef struct SourceParams {
        const char *path;          /* hwrng: device (NULL: /dev/hwrng); file: required;
                                    * tpm: device (NULL: /dev/tpmrm0) */
        const char *tcti;          /* tpm: a TCTI configuration in place of path
                                    * ("swtpm:path=/run/swtpm.sock"); NULL: "device:PATH" */
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
        bool selftest_induce;      /* an induced failure (induce.h): the self-test judges its
                                    * window stuck at its first value, as a dead sampler gives */
} SourceParams;

/* How [source.NAME] credit may be set. */
typedef enum SourceCredit {
        /* Never credited, no credit key: mixed into CRNG seeds only, and no
         * raw samples to export or assess (its output is conditioned by a
         * generator whose entropy cannot be checked: kernel). */
        SOURCE_CREDIT_NEVER,
        /* credit = BITS: conditioned output, which the estimators cannot
         * judge (rdseed, hwrng). */
        SOURCE_CREDIT_FIXED,
        /* credit = BITS or auto, and credit_cap: raw noise, which the
         * estimators judge (jitter, file). */
        SOURCE_CREDIT_MEASURED,
} SourceCredit;

/* A key of a source's own in [source.NAME], after enable, credit and
 * credit_cap, which every row has as its SourceCredit says. */
typedef enum SourceKeyType {
        SOURCE_KEY_BOOL,           /* bool */
        SOURCE_KEY_UNSIGNED,       /* unsigned, in [min, max] */
        SOURCE_KEY_U64,            /* uint64_t, in [min, max] */
        SOURCE_KEY_KIB,            /* size_t bytes, written in KiB in [min, max] */
        SOURCE_KEY_PATH,           /* const char *: an absolute path */
        SOURCE_KEY_PATH_NONE,      /* const char *: an absolute path, or none (NULL) */
} SourceKeyType;

typedef struct SourceKey {
        const char *name;          /* NULL: no more keys */
        SourceKeyType type;
        size_t offset;             /* of its field in SourceParams */
        uint64_t min, max;         /* numbers, as written (KiB for SOURCE_KEY_KIB) */
} SourceKey;

#define SOURCE_KEYS_MAX 4

/* [source.NAME] when the file says nothing (truerandomd.conf(5)). */
typedef struct SourceDefaults {
        bool enable;
        bool credit_auto;          /* credit = auto (SOURCE_CREDIT_MEASURED only) */
        uint32_t credit_mbits;     /* else credit, millibits per sample */
        uint32_t credit_cap_mbits; /* credit_cap (SOURCE_CREDIT_MEASURED only) */
        SourceParams params;       /* the keys of its own */
} SourceDefaults;

typedef struct SourceOps {
        const char *name;          /* [source.NAME], status, truerandomctl raw NAME */
        const char *help;          /* one line: what it samples */
        SourceCredit credit;
        /* Enabled with credit = 0 is a mistake the configuration refuses:
         * the source serves nothing uncredited (file). */
        bool credit_required;
        SourceDefaults defaults;
        SourceKey keys[SOURCE_KEYS_MAX];
        /* -ENODEV from open() in words, where no path says it ("this CPU has
         * no RDSEED"); NULL: the path, or the error, says it. */
        const char *absent;

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

#define SOURCE_EXTERN_(ID, name) extern const SourceOps source_##name;
SOURCE_TABLE(SOURCE_EXTERN_)
#undef SOURCE_EXTERN_

/* The rows of SOURCE_TABLE, in its order, then NULL. */
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
