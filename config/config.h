/* config.h - /etc/truerandomd.conf (INI, libinih), DESIGN §9.
 *
 * Every key has a default; a file only overrides. After the file come its
 * drop-ins, /etc/truerandomd.conf.d/NAME.conf (the file's name and ".d"), in
 * the byte order of their names, each over what came before: a fleet's
 * local settings live beside the packaged file, which upgrades then
 * replace without a prompt. Unknown sections or keys, malformed or
 * out-of-range values, and duplicate keys in one file are rejected with
 * "FILE:LINE: reason" and nothing is applied: the daemon does not start on a
 * bad file and keeps the old configuration after a bad reload.
 *
 *   [device]   trng_name, random_name, urandom_name (CUSE DEVNAMEs),
 *              group (name or number), trng_mode, random_mode (octal),
 *              dropin = yes|no (serve the two CRNG devices),
 *              max_parked (waiting reads per device), max_parked_per_uid
 *              (of them one uid's but root's; default max_parked / 9),
 *              max_open_per_uid (/dev/truerandom files of one uid but root),
 *              max_dropin_open_per_uid (files of each other device, the
 *              same way), proc_checks_per_uid (looks at /proc per uid and
 *              second: privileged ioctls, the accounts of opens),
 *              null_name (a device answering zeros through the same loop,
 *              the benchmarks' floor; empty = none, the default),
 *              per_source_devices = yes|no (also TRNG_NAME-SOURCE for
 *              each credited source, its blocks alone; default no),
 *              dropin_unrestricted_ioctl = yes|no (no: the drop-ins
 *              register without CUSE_UNRESTRICTED_IOCTL and refuse
 *              RNDADDENTROPY; default yes),
 *              privileged_ioctls = capability|host-root|none (who the
 *              drop-ins' privileged ioctls admit; default capability)
 *   [pool]     store_blocks, low_water, min_healthy, start_delay_ms,
 *              gate_window (samples per window the running gate judges)
 *   [crng]     reseed_interval (seconds), min_reseed_interval (seconds, up to
 *              3 decimals: the least time between reseeds that take a block)
 *              cuse = yes|no (no: no CUSE device at all, for a host without
 *              /dev/cuse that serves EGD; the keys above then serve nothing)
 *   [control]  socket (path)
 *   [egd]      socket (path, or none: the default): the EGD protocol for
 *              hypervisors and tools (daemon/egd/), mode 0660, [device] group
 *   [daemon]   user (name or number): who truerandomd runs as after set-up
 *              when started as root; never root; allow_induce = yes|no
 *              (default no): truerandomctl induce may degrade a source
 *   [assessment] samples: read for old files' sake, it grants nothing (the
 *              running gate credits, pool/gate.h); state_directory: the
 *              ledger's
 *   [source.NAME] for each row of pool/source.h's table: enable; credit
 *              (bits per sample, or auto where the row measures raw noise)
 *              and credit_cap (auto only), unless the row is never credited
 *              (kernel); then the keys of the row's own (its SourceKeys:
 *              jitter's buffer_kib, hwrng's path, file's path, loop, rate)
 * credit is decimal bits per 8-bit sample in [0, 8], kept in millibits,
 * rounded down (never more than written); or `auto`: half the SP 800-90B
 * estimate of each window the running gate judges, at most credit_cap.
 * Durations are kept as usec_t; the file speaks seconds and milliseconds.
 * Flow: main and SIGHUP -> [config] -> the wiring in daemon/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pool/gate.h"
#include "pool/source.h"
#include "util/time-util.h"

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/truerandomd.conf"
/* [assessment] samples: SP 800-90B asks for 1,000,000; fewer make the
 * estimates less certain (the tests use fewer to stay quick), more cost
 * about 270 MB of memory per million while the estimators run. */
#define CONFIG_ASSESS_SAMPLES_DEFAULT 1000000U
#define CONFIG_ASSESS_SAMPLES_MIN 10000U
#define CONFIG_ASSESS_SAMPLES_MAX 10000000U

/* ---- sources: an index into pool/source.h's table --------------------------- */

typedef enum ConfigSource {
#define CONFIG_SOURCE_(ID, name) CONFIG_SOURCE_##ID,
        SOURCE_TABLE(CONFIG_SOURCE_)
#undef CONFIG_SOURCE_
        _CONFIG_SOURCE_MAX,
} ConfigSource;

/* Where the files set a key: one of Config.files and its line; { NULL, 0 }
 * where none did. For FILE:LINE in what the daemon refuses later. */
typedef struct ConfigAt {
        const char *file;
        unsigned line;
} ConfigAt;

/* "FILE:LINE" where the files set the key; path where none did (NULL:
 * "defaults"). Returns buf. */
const char *config_at_str(ConfigAt at, const char *path, char *buf, size_t size);

typedef struct SourceConfig {
        bool enable;
        uint32_t credit_mbits;     /* explicit credit; 0 with credit_auto */
        bool credit_auto;          /* credit = auto */
        uint32_t credit_cap_mbits; /* the most credit = auto may give */
        /* The row's keys of its own; path is malloc'd (config_done frees
         * it), NULL for a source without one. */
        SourceParams params;
        ConfigAt enable_at, path_at; /* where the files set enable and path */
} SourceConfig;

/* ---- devices: one row each -------------------------------------------------- */

/* X(ID, name key, default name, mode key, default mode, group, dropin):
 * the device's [device] keys and their defaults (no default name: none
 * until the file names one), whether its node's group is [device] group
 * (else root's), whether [device] dropin = no turns it off. Rows that share
 * a mode key share its value, and so its default. */
#define CONFIG_DEVICE_TABLE(X)                                                                 \
        X(TRNG, "trng_name", "truerandom", "trng_mode", 0440, true, false)                    \
        X(RANDOM, "random_name", "truerandom-random", "random_mode", 0666, false, true)       \
        X(URANDOM, "urandom_name", "truerandom-urandom", "random_mode", 0666, false, true)    \
        X(NULL, "null_name", NULL, "random_mode", 0666, false, false)

typedef enum ConfigDevice {
#define CONFIG_DEVICE_(ID, ...) CONFIG_DEVICE_##ID,
        CONFIG_DEVICE_TABLE(CONFIG_DEVICE_)
#undef CONFIG_DEVICE_
        _CONFIG_DEVICE_MAX,
} ConfigDevice;

typedef struct ConfigDeviceRow {
        const char *name_key;
        const char *default_name;  /* NULL: none unless named (empty or none in the file) */
        const char *mode_key;
        mode_t default_mode;
        bool group;                /* the node's group is [device] group, else root's */
        bool dropin;               /* served only with [device] dropin = yes */
} ConfigDeviceRow;

extern const ConfigDeviceRow config_devices[_CONFIG_DEVICE_MAX];

/* [device] privileged_ioctls: who the drop-ins' privileged ioctls admit
 * (cuse/privilege.h says what each reads). */
typedef enum ConfigPrivileged {
        CONFIG_PRIVILEGED_CAPABILITY, /* CAP_SYS_ADMIN in the initial user namespace, as the kernel */
        CONFIG_PRIVILEGED_HOST_ROOT,  /* that, uid 0, and the daemon's pid namespace */
        CONFIG_PRIVILEGED_NONE,       /* nobody */
        _CONFIG_PRIVILEGED_MAX,
} ConfigPrivileged;

/* Their words in the file, NULL-terminated. */
extern const char *const config_privileged_names[_CONFIG_PRIVILEGED_MAX + 1];

typedef struct DeviceConfig {
        char *name;                /* the CUSE DEVNAME, /dev/NAME; NULL: none */
        mode_t mode;
        bool enable;               /* false: [device] dropin = no */
} DeviceConfig;

#define CONFIG_SHA256_BYTES 32U

/* ---- the configuration ------------------------------------------------------- */

typedef struct Config {
        DeviceConfig device[_CONFIG_DEVICE_MAX];
        /* The files read, in order: the file (unless it was missing and
         * that was allowed), then its drop-ins; malloc'd. */
        char **files;
        unsigned n_files;
        /* SHA-256 of the files as read, in order: each one's path, a NUL,
         * then its bytes; so, with FILES in that order,
         *   for f in FILES; do printf '%s\0' "$f"; cat "$f"; done | sha256sum
         * The defaults alone (no file read) hash the empty string. */
        uint8_t sha256[CONFIG_SHA256_BYTES];

        char *group;
        ConfigAt group_at;
        unsigned max_parked;
        unsigned max_parked_per_uid; /* 0: unset, max_parked / 9 (config_max_parked_per_uid()) */
        unsigned max_open_per_uid;
        unsigned max_dropin_open_per_uid;
        unsigned proc_checks_per_uid; /* looks at /proc per uid and second */

        unsigned store_blocks;
        unsigned low_water;
        unsigned min_healthy;
        usec_t start_delay_usec;
        unsigned gate_window;      /* samples per window of the running gate (pool/gate.h) */

        usec_t reseed_interval_usec;
        usec_t min_reseed_interval_usec;

        bool cuse;                 /* [device] cuse: serve the CUSE devices (no: EGD and control only) */
        bool per_source_devices;   /* [device] per_source_devices: a TRNG device per credited source */
        bool dropin_unrestricted_ioctl; /* [device]: the drop-ins with CUSE_UNRESTRICTED_IOCTL (RNDADDENTROPY) */
        unsigned privileged_ioctls; /* [device]: ConfigPrivileged, who the drop-ins' privileged ioctls admit */
        char *socket_path;
        char *egd_socket_path;     /* [egd] socket; NULL: none (the default) */

        unsigned assess_samples;
        char *state_directory;
        char *user;
        ConfigAt user_at;
        bool allow_induce;             /* [daemon]: truerandomctl induce is served */

        SourceConfig source[_CONFIG_SOURCE_MAX];
} Config;

/* Fills the built-in defaults (see truerandomd.conf(5)). -ENOMEM. */
int config_init_defaults(Config *c);

/* At most this many drop-ins are read; more is an error. */
#define CONFIG_DROPINS_MAX 128

/* Loads path, then its drop-ins (path.d/NAME.conf), over the defaults.
 * missing_ok: a missing file means the defaults (and the drop-ins, if
 * any); a missing drop-in directory means none. On error returns -errno, leaves ret untouched and sets *ret_error (malloc'd,
 * "FILE:LINE: reason" or "FILE: reason", "FILE: not found" for a missing
 * file) for the caller to log and free. A value followed by "# ..." is
 * refused: libinih would read the comment as part of it. */
int config_load(const char *path, bool missing_ok, Config *ret, char **ret_error);

void config_done(Config *c);

/* The quota of waiting reads per uid in effect: as set, else max_parked / 9
 * (at least 1). */
unsigned config_max_parked_per_uid(const Config *c);

/* "I[.F]": a decimal number in thousandths (credit = 0.5 is 500 millibits),
 * further decimals dropped so that the value never exceeds what was
 * written; at most max thousandths, and the largest whole value itself
 * only with a zero fraction. 0, -EINVAL (not such a number) or -ERANGE.
 * truerandomctl reads --credit and --cap with it, as the file reads them. */
int config_parse_milli(const char *s, uint32_t max, uint32_t *ret);

/* The row's name; NULL past the table. */
const char *config_source_name(ConfigSource s);

/* Longest CUSE DEVNAME: a per-source device's too (TRNG_NAME-SOURCE). */
#define CONFIG_DEVICE_NAME_MAX 64

/* The name of source s's own device with [device] per_source_devices:
 * trng_name, '-', the source's name (truerandom-jitter). -EINVAL when no
 * trng_name is served; -ENAMETOOLONG past CONFIG_DEVICE_NAME_MAX. */
int config_source_device_name(const Config *c, ConfigSource s, char ret[static CONFIG_DEVICE_NAME_MAX + 1]);

/* Whether the device is served: enabled and named. */
static inline bool config_device_served(const DeviceConfig *d) {
        return d->enable && d->name;
}
