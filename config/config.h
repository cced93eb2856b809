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
 *              max_parked (waiting reads per device), max_parked_per_uid
 *              (of them one uid's but root's; default max_parked / 9),
 *              max_open_per_uid (/dev/truerandom files of one uid but root),
 *              null_name (a device answering zeros through the same loop,
 *              the benchmarks' floor; empty = none, the default)
 *   [pool]     store_blocks, low_water, min_healthy, start_delay_ms
 *   [crng]     reseed_interval (seconds), min_reseed_interval (seconds, up to
 *              3 decimals: the least time between reseeds that take a block)
 *   [control]  socket (path)
 *   [daemon]   user (name or number): who truerandomd runs as after set-up
 *              when started as root; never root
 *   [assessment] samples, state_directory (where credit = auto keeps what
 *              it measured: assessment.json)
 *   [source.jitter]  enable, credit (bits per sample, or auto), credit_cap,
 *                    buffer_kib, accesses
 *   [source.rdseed]  enable, credit
 *   [source.hwrng]   enable, credit (cap on what rng_quality justifies), path
 *   [source.kernel]  enable        (never credited)
 *   [source.file]    enable, credit (or auto), credit_cap, path, loop,
 *                    rate (samples/s)
 * credit is decimal bits per 8-bit sample in [0, 8], kept in millibits,
 * rounded down (never more than written); or `auto`: half the SP 800-90B
 * estimate measured on this machine, at most credit_cap (only for sources
 * whose raw noise the estimators can judge: jitter and file). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/truerandomd.conf"
/* [assessment] samples: SP 800-90B asks for 1,000,000; fewer make the
 * estimates less certain (the tests use fewer to stay quick), more cost
 * about 270 MB of memory per million while the estimators run. */
#define CONFIG_ASSESS_SAMPLES_DEFAULT 1000000U
#define CONFIG_ASSESS_SAMPLES_MIN 10000U
#define CONFIG_ASSESS_SAMPLES_MAX 10000000U

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
        uint32_t credit_mbits;     /* explicit credit; 0 with credit_auto */
        bool credit_auto;          /* credit = auto */
        uint32_t credit_cap_mbits; /* the most credit = auto may give */
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
        unsigned max_parked_per_uid; /* 0: unset, max_parked / 9 (config_max_parked_per_uid()) */
        unsigned max_open_per_uid;
        char *null_name;           /* NULL: no null device */

        unsigned store_blocks;
        unsigned low_water;
        unsigned min_healthy;
        unsigned start_delay_ms;

        unsigned reseed_interval;
        unsigned min_reseed_interval_ms;

        char *socket_path;

        unsigned assess_samples;
        char *state_directory;
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

/* The quota of waiting reads per uid in effect: as set, else max_parked / 9
 * (at least 1). */
unsigned config_max_parked_per_uid(const Config *c);

const char *config_source_name(ConfigSource s);
