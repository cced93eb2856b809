/* seedopts.h - truerandom-seed-kernel's command line (getopt_long), into
 * plain values; the program's manual is truerandom-seed-kernel(8).
 * Times are usec_t; only the parsing here speaks seconds. No I/O.
 * Flow: argv -> [seedopts] -> feeder -> main's loop. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "seed/feeder.h"
#include "util/time-util.h"

#define SEED_INTERVAL_DEFAULT (600 * USEC_PER_SEC) /* jitterentropy-rngd's */
#define SEED_POLL_DEFAULT (5 * USEC_PER_SEC)
#define SEED_SECONDS_MAX (7U * 24U * 3600U)
#define SEED_DEVICE_DEFAULT "/dev/truerandom"

typedef enum SeedAction {
        SEED_ACTION_RUN,
        SEED_ACTION_HELP,
        SEED_ACTION_VERSION,
} SeedAction;

typedef struct SeedOptions {
        SeedAction action;
        usec_t interval;    /* between feeds */
        usec_t poll;        /* between looks at the daemon's status */
        unsigned blocks;    /* 32-byte blocks per feed */
        bool once;          /* feed once (waiting for the device to serve), then exit */
        const char *device; /* points into argv, or the default */
        const char *socket; /* the daemon's control socket */
} SeedOptions;

/* Parses argv (getopt_long: it permutes argv and uses optind). 0 and
 * *ret, or -EINVAL with a static reason in *ret_error; *ret_error is set
 * to an empty string on success. */
int seed_options_parse(int argc, char **argv, SeedOptions *ret, char *ret_error, size_t error_size);

/* The --help text. */
const char *seed_options_usage(void);
