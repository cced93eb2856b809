/* config.h - /etc/truerandomd.conf (INI, libinih), DESIGN §9.
 *
 * Every key has a default; a file only overrides. Unknown sections or keys,
 * malformed or out-of-range values, and duplicate keys are rejected with
 * "FILE:LINE: reason" and nothing is applied: the daemon does not start on a
 * bad file and keeps the old configuration after a bad reload.
 *
 *   [device]   trng_name, random_name, urandom_name (CUSE DEVNAMEs),
 *              group (name or number), trng_mode, random_mode (octal),
 *              dropin = yes|no (serve the two CRNG devices),
 *              max_parked (waiting reads per device),
 *              null_name (a device answering zeros through the same loop,
 *              the benchmarks' floor; empty = none, the default)
 *   [pool]     store_blocks, low_water, min_healthy, start_delay_ms
 *   [crng]     reseed_interval (seconds)
 *   [control]  socket (path)
 *   [daemon]   user (name or number): who truerandomd runs as after set-up
 *              when started as root; never root
 *   [source.jitter]  enable, credit (bits per sample), buffer_kib, accesses
 *   [source.rdseed]  enable, credit
 *   [source.hwrng]   enable, credit (cap on what rng_quality justifies), path
 *   [source.kernel]  enable        (never credited)
 *   [source.file]    enable, credit, path, loop, rate (samples/s)
 * credit is decimal bits per 8-bit sample in [0, 8], kept in millibits,
 * rounded down (never more than written). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/truerandomd.conf"

typedef enum ConfigSource {
        CONFIG_SOURCE_JITTER,
        CONFIG_SOURCE_RDSEED,
        CONFIG_SOURCE_HWRNG,
        CONFIG_SOURCE_KERNEL,
        CONFIG_SOURCE_FILE,
        _CONFIG_SOURCE_MAX,
} ConfigSource;

typedef struct SourceConfig {
        bool enable;
        uint32_t credit_mbits;
        char *path;                /* hwrng, file */
        bool loop;                 /* file */
        uint64_t rate;             /* file */
        size_t jitter_buffer;      /* bytes */
        unsigned jitter_accesses;
        /* Where the file set enable and path (0: not set there), for
         * FILE:LINE in what the daemon refuses later. */
        unsigned enable_line, path_line;
} SourceConfig;

typedef struct Config {
        char *trng_name;
        char *random_name;
        char *urandom_name;
        char *group;
        unsigned group_line;       /* 0: the default */
        mode_t trng_mode;
        mode_t random_mode;
        bool dropin;
        unsigned max_parked;
        char *null_name;           /* NULL: no null device */

        unsigned store_blocks;
        unsigned low_water;
        unsigned min_healthy;
        unsigned start_delay_ms;

        unsigned reseed_interval;

        char *socket_path;

        char *user;
        unsigned user_line;        /* 0: the default */

        SourceConfig source[_CONFIG_SOURCE_MAX];
} Config;

/* Fills the built-in defaults (see truerandomd.conf(5)). -ENOMEM. */
int config_init_defaults(Config *c);

/* Loads path over the defaults. missing_ok: a missing file means defaults.
 * On error returns -errno, leaves ret untouched and sets *ret_error (malloc'd,
 * "FILE:LINE: reason" or "FILE: reason", "FILE: not found" for a missing
 * file) for the caller to log and free. A value followed by "# ..." is
 * refused: libinih would read the comment as part of it. */
int config_load(const char *path, bool missing_ok, Config *ret, char **ret_error);

void config_done(Config *c);

const char *config_source_name(ConfigSource s);
