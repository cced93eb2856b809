/* config.c - /etc/truerandomd.conf: defaults, INI parsing, validation.
 *
 * A file is parsed into a private Config that starts as the defaults; the
 * caller's Config is written only once the whole file and the checks that
 * span keys have passed, so a bad reload leaves the running configuration
 * as it was. The first error wins and ends the parse.
 *
 * libinih reports only the line of the first failure, and in this build its
 * handler gets no line number; so lines reach libinih through our own reader,
 * which counts them, and which also rejects what libinih would pass over
 * silently or misread: unknown or unterminated [section] lines (seen even
 * when empty), over-long lines (libinih would split them) and indented lines
 * (libinih would take them as continuations of the previous value).
 * Flow: main and SIGHUP -> [config] -> the wiring in daemon/. */
#include "config-build.h"
#include "config.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

/* The waiting reads of a device are shared out so that eight uids at their
 * quota and root's reserve (one quota more) fit in max_parked: however many
 * readers one uid starts, every other uid can park as long as fewer than
 * eight hold their full quota, and root always can (issue 12). So the
 * default max_parked_per_uid is max_parked / 9, and a value set by hand is
 * held to it too. */
#define PARKED_SHARES 9U
#define NAME_LEN_MAX 64
#define GROUP_LEN_MAX 32
#define CREDIT_MBITS_MAX 8000U
#define SOCKET_PATH_MAX (sizeof(((struct sockaddr_un *) NULL)->sun_path) - 1)

/* ---- the keys --------------------------------------------------------------- */

typedef enum KeyType {
        KEY_NAME,       /* char *: a CUSE device name */
        KEY_NAME_NONE,  /* char *: a CUSE device name, or empty/"none" for NULL */
        KEY_GROUP,      /* char *: group name or number, resolved by the daemon */
        KEY_USER,       /* char *: user name or number, resolved by the daemon */
        KEY_MODE,       /* mode_t, octal */
        KEY_BOOL,       /* bool */
        KEY_UNSIGNED,   /* unsigned in [min, max] */
        KEY_U64,        /* uint64_t in [min, max] */
        KEY_KIB,        /* size_t bytes, written in KiB in [min, max] */
        KEY_CREDIT,     /* uint32_t millibits */
        KEY_CREDIT_AUTO, /* uint32_t millibits in SourceConfig.credit_mbits, or auto */
        KEY_SECONDS,    /* unsigned milliseconds, written in seconds with up to 3 decimals, <= max */
        KEY_PATH,       /* char *: absolute path */
        KEY_PATH_NONE,  /* char *: absolute path, or "none" for NULL */
        KEY_SOCKET,     /* char *: absolute path that fits sockaddr_un */
} KeyType;

typedef struct Key {
        const char *section;
        const char *name;
        KeyType type;
        size_t offset;
        uint64_t min, max;
} Key;

#define DEVICE(n, t, ...) { "device", #n, t, offsetof(Config, n), __VA_ARGS__ }
#define POOL(n, ...) { "pool", #n, KEY_UNSIGNED, offsetof(Config, n), __VA_ARGS__ }
#define SOURCE(S, s, n, field, t, ...) \
        { "source." s, n, t, offsetof(Config, source[CONFIG_SOURCE_##S].field), __VA_ARGS__ }

static const Key keys[] = {
        DEVICE(trng_name, KEY_NAME, 0, 0),
        DEVICE(random_name, KEY_NAME, 0, 0),
        DEVICE(urandom_name, KEY_NAME, 0, 0),
        DEVICE(group, KEY_GROUP, 0, 0),
        DEVICE(trng_mode, KEY_MODE, 0, 0),
        DEVICE(random_mode, KEY_MODE, 0, 0),
        DEVICE(dropin, KEY_BOOL, 0, 0),
        DEVICE(max_parked, KEY_UNSIGNED, PARKED_SHARES, 1000000),
        DEVICE(max_parked_per_uid, KEY_UNSIGNED, 1, 1000000 / PARKED_SHARES),
        DEVICE(max_open_per_uid, KEY_UNSIGNED, 1, 1000000),
        DEVICE(null_name, KEY_NAME_NONE, 0, 0),
        POOL(store_blocks, 1, 1048576),
        POOL(low_water, 0, 1048575),
        POOL(min_healthy, 1, _CONFIG_SOURCE_MAX - 1),     /* every source but kernel */
        POOL(start_delay_ms, 0, 600000),
        { "crng", "reseed_interval", KEY_UNSIGNED, offsetof(Config, reseed_interval), 1, 86400 },
        { "crng", "min_reseed_interval", KEY_SECONDS, offsetof(Config, min_reseed_interval_ms), 0, 3600000 },
        { "control", "socket", KEY_SOCKET, offsetof(Config, socket_path), 0, 0 },
        { "assessment", "samples", KEY_UNSIGNED, offsetof(Config, assess_samples), CONFIG_ASSESS_SAMPLES_MIN,
          CONFIG_ASSESS_SAMPLES_MAX },
        { "assessment", "state_directory", KEY_PATH, offsetof(Config, state_directory), 0, 0 },
        { "daemon", "user", KEY_USER, offsetof(Config, user), 0, 0 },
        SOURCE(JITTER, "jitter", "enable", enable, KEY_BOOL, 0, 0),
        SOURCE(JITTER, "jitter", "credit", credit_mbits, KEY_CREDIT_AUTO, 0, 0),
        SOURCE(JITTER, "jitter", "credit_cap", credit_cap_mbits, KEY_CREDIT, 0, 0),
        SOURCE(JITTER, "jitter", "buffer_kib", jitter_buffer, KEY_KIB, 64, 262144),
        SOURCE(JITTER, "jitter", "accesses", jitter_accesses, KEY_UNSIGNED, 1, 65536),
        SOURCE(RDSEED, "rdseed", "enable", enable, KEY_BOOL, 0, 0),
        SOURCE(RDSEED, "rdseed", "credit", credit_mbits, KEY_CREDIT, 0, 0),
        SOURCE(HWRNG, "hwrng", "enable", enable, KEY_BOOL, 0, 0),
        SOURCE(HWRNG, "hwrng", "credit", credit_mbits, KEY_CREDIT, 0, 0),
        SOURCE(HWRNG, "hwrng", "path", path, KEY_PATH, 0, 0),
        SOURCE(KERNEL, "kernel", "enable", enable, KEY_BOOL, 0, 0),
        SOURCE(FILE, "file", "enable", enable, KEY_BOOL, 0, 0),
        SOURCE(FILE, "file", "credit", credit_mbits, KEY_CREDIT_AUTO, 0, 0),
        SOURCE(FILE, "file", "credit_cap", credit_cap_mbits, KEY_CREDIT, 0, 0),
        SOURCE(FILE, "file", "path", path, KEY_PATH_NONE, 0, 0),
        SOURCE(FILE, "file", "loop", loop, KEY_BOOL, 0, 0),
        SOURCE(FILE, "file", "rate", rate, KEY_U64, 0, 1000000000),
};

enum { NKEYS = sizeof(keys) / sizeof(keys[0]) };
_Static_assert(NKEYS <= 64, "a uint64_t marks the keys seen");

static const char *const sections[] = {
        "device", "pool", "crng", "control", "daemon", "assessment",
        "source.jitter", "source.rdseed", "source.hwrng", "source.kernel", "source.file",
};

static const char *const source_names[_CONFIG_SOURCE_MAX] = {
        [CONFIG_SOURCE_JITTER] = "jitter",
        [CONFIG_SOURCE_RDSEED] = "rdseed",
        [CONFIG_SOURCE_HWRNG] = "hwrng",
        [CONFIG_SOURCE_KERNEL] = "kernel",
        [CONFIG_SOURCE_FILE] = "file",
};

unsigned config_max_parked_per_uid(const Config *c) {
        if (c->max_parked_per_uid)
                return c->max_parked_per_uid;
        return c->max_parked >= PARKED_SHARES ? c->max_parked / PARKED_SHARES : 1;
}

const char *config_source_name(ConfigSource s) {
        return (unsigned) s < _CONFIG_SOURCE_MAX ? source_names[s] : NULL;
}

static int key_index(const char *section, const char *name) {
        for (int i = 0; i < NKEYS; i++)
                if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
                        return i;
        return -1;
}

/* ---- defaults ------------------------------------------------------------------ */

void config_done(Config *c) {
        free(c->trng_name);
        free(c->random_name);
        free(c->urandom_name);
        free(c->null_name);
        free(c->group);
        free(c->socket_path);
        free(c->state_directory);
        free(c->user);
        for (int i = 0; i < _CONFIG_SOURCE_MAX; i++)
                free(c->source[i].path);
        *c = (Config) { 0 };
}

int config_init_defaults(Config *ret) {
        Config c = {
                .trng_mode = 0440,
                .random_mode = 0666,
                .dropin = true,
                .max_parked = 16384,
                .max_open_per_uid = 1024,
                .store_blocks = 1024,
                .low_water = 256,
                .min_healthy = 1,
                .start_delay_ms = 0,
                .reseed_interval = 60,
                .assess_samples = CONFIG_ASSESS_SAMPLES_DEFAULT,
                .min_reseed_interval_ms = 1000,
                .source = {
                        /* Measured where it runs; at most 1 bit per sample
                         * whatever the estimators say (docs/ENTROPY.md). */
                        [CONFIG_SOURCE_JITTER] = {
                                .enable = true, .credit_auto = true, .credit_cap_mbits = 1000,
                                .jitter_buffer = 4096 * 1024, .jitter_accesses = 64,
                        },
                        [CONFIG_SOURCE_RDSEED] = { .enable = true, .credit_mbits = 250 },
                        [CONFIG_SOURCE_HWRNG] = { .enable = true, .credit_mbits = 4000 },
                        [CONFIG_SOURCE_KERNEL] = { .enable = true },
                        [CONFIG_SOURCE_FILE] = { .enable = false, .credit_cap_mbits = 8000 },
                },
        };

        c.trng_name = strdup("truerandom");
        c.random_name = strdup("truerandom-random");
        c.urandom_name = strdup("truerandom-urandom");
        c.group = strdup("truerandom");
        c.socket_path = strdup(RUNSTATEDIR "/truerandomd/control");
        c.state_directory = strdup(STATEDIR);
        c.user = strdup("truerandomd");
        c.source[CONFIG_SOURCE_HWRNG].path = strdup("/dev/hwrng");
        if (!c.trng_name || !c.random_name || !c.urandom_name || !c.group || !c.socket_path || !c.user ||
            !c.state_directory || !c.source[CONFIG_SOURCE_HWRNG].path) {
                config_done(&c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

/* ---- values ---------------------------------------------------------------------- */

/* Decimal digits only: no sign, no spaces, no base prefix. */
static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        if (!*s)
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t) (*s - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

static int parse_bool(const char *s, bool *ret) {
        static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };

        for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
                if (strcasecmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

static int parse_mode(const char *s, mode_t *ret) {
        mode_t m = 0;
        size_t n = strlen(s);

        if (n == 0 || n > 4)
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '7')
                        return -EINVAL;
                m = m * 8 + (mode_t) (*s - '0');
        }
        if (m > 0777)
                return -EINVAL;
        *ret = m;
        return 0;
}

/* "I[.F]": a decimal number in thousandths, further decimals dropped so
 * that the value never exceeds what was written; at most max thousandths,
 * and the largest whole value itself only with a zero fraction. */
static int parse_milli(const char *s, uint32_t max, uint32_t *ret) {
        uint32_t whole = 0, frac = 0;
        bool frac_nonzero = false;
        size_t digits = 0;

        for (; *s >= '0' && *s <= '9'; s++, digits++) {
                whole = whole * 10 + (uint32_t) (*s - '0');
                if (whole > max / 1000)
                        return -ERANGE;
        }
        if (digits == 0)
                return -EINVAL;
        if (*s == '.') {
                s++;
                for (digits = 0; *s >= '0' && *s <= '9'; s++, digits++) {
                        if (digits < 3)
                                frac = frac * 10 + (uint32_t) (*s - '0');
                        frac_nonzero = frac_nonzero || *s != '0';
                }
                if (digits == 0)
                        return -EINVAL;
                for (; digits < 3; digits++)
                        frac *= 10;
        }
        if (*s)
                return -EINVAL;
        if (whole * 1000 + frac > max || (whole * 1000 == max && frac_nonzero))
                return -ERANGE;
        *ret = whole * 1000 + frac;
        return 0;
}

static bool valid_name(const char *s) {
        size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");

        /* A leading '.' or '-' would allow "." and ".." as /dev entries and
         * names that read as options. */
        return n > 0 && n <= NAME_LEN_MAX && s[n] == '\0' && s[0] != '.' && s[0] != '-';
}

/* A name as useradd and groupadd accept it, or an id (not (uid_t) -1). */
static bool valid_group(const char *s) {
        uint64_t gid;
        size_t n;

        if (parse_u64(s, 0, UINT32_MAX - 1, &gid) == 0)
                return true;
        n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
        return n > 0 && n <= GROUP_LEN_MAX && s[n] == '\0' && s[0] != '-' && (s[0] < '0' || s[0] > '9');
}

static bool valid_path(const char *s, size_t max) {
        size_t n = strlen(s);
        return s[0] == '/' && n <= max;
}

/* ---- the parse --------------------------------------------------------------------- */

typedef struct Parser {
        const char *path;
        FILE *f;
        Config *config;
        char *line;             /* getline()'s buffer */
        size_t line_size;
        unsigned lineno;
        uint64_t seen;          /* bit i: keys[i] set in this file */
        unsigned key_line[NKEYS];
        /* the first error; error == 0 while there is none */
        int error;
        unsigned error_line;
        char reason[256];
} Parser;

__attribute__((format(printf, 4, 5)))
static void fail(Parser *p, int error, unsigned line, const char *fmt, ...) {
        va_list ap;

        if (p->error)
                return;
        p->error = error;
        p->error_line = line;
        va_start(ap, fmt);
        vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
        va_end(ap);
}

static bool known_section(const char *s, size_t n) {
        for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
                if (strlen(sections[i]) == n && strncmp(sections[i], s, n) == 0)
                        return true;
        return false;
}

/* Checks what only the raw line shows, then hands libinih the line without
 * its indentation. Returns NULL (end of input) from the first error on. */
static char *reader(char *str, int num, void *userdata) {
        Parser *p = userdata;
        ssize_t n;
        char *s, *end;

        if (p->error)
                return NULL;
        errno = 0;
        n = getline(&p->line, &p->line_size, p->f);
        if (n < 0) {
                if (ferror(p->f))
                        fail(p, errno > 0 ? -errno : -EIO, 0, "%s", "cannot read");
                return NULL;
        }
        p->lineno++;

        if (strlen(p->line) != (size_t) n) {
                fail(p, -EINVAL, p->lineno, "syntax error: NUL byte in line");
                return NULL;
        }
        s = p->line;
        if (p->lineno == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
                s += 3;         /* a UTF-8 byte order mark */
        s += strspn(s, " \t\r\n\v\f");
        /* libinih gets the text without its line ending (any run of CR
         * and LF), then one "\n": the limit leaves room for "\r\n\0" after
         * the text, whichever ending the file has. */
        size_t len = strlen(s);
        while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
                len--;
        if (num < 4 || len > (size_t) num - 4) {
                fail(p, -EINVAL, p->lineno, "line too long (at most %d characters)", num - 4);
                return NULL;
        }

        if (s[0] == '[') {
                end = strchr(s, ']');
                if (!end) {
                        fail(p, -EINVAL, p->lineno, "syntax error: '[' without ']'");
                        return NULL;
                }
                if (!known_section(s + 1, (size_t) (end - s - 1))) {
                        fail(p, -EINVAL, p->lineno, "unknown section [%.*s]", (int) (end - s - 1), s + 1);
                        return NULL;
                }
                end += 1 + strspn(end + 1, " \t\r\n\v\f");
                if (*end && *end != ';' && *end != '#') {
                        fail(p, -EINVAL, p->lineno, "syntax error: text after ']'");
                        return NULL;
                }
        } else if (*s && *s != ';' && *s != '#' && !strpbrk(s, "=:")) {
                fail(p, -EINVAL, p->lineno, "syntax error: expected 'key = value'");
                return NULL;
        }

        memcpy(str, s, len);
        memcpy(str + len, "\n", 2);
        return str;
}

static int set_string(char **field, const char *value) {
        char *copy = NULL;

        if (value) {
                copy = strdup(value);
                if (!copy)
                        return -ENOMEM;
        }
        free(*field);
        *field = copy;
        return 0;
}

/* Validates one value and stores it, or says why not. */
static int apply(Parser *p, const Key *k, const char *value) {
        void *field = (uint8_t *) p->config + k->offset;
        const char *name = k->name;
        uint64_t v;
        int r;

        switch (k->type) {
        case KEY_NAME:
                if (!valid_name(value)) {
                        fail(p, -EINVAL, p->lineno,
                             "%s must be 1 to %d characters of [A-Za-z0-9._-], not starting with '.' or '-'",
                             name, NAME_LEN_MAX);
                        return -EINVAL;
                }
                return set_string(field, value);
        case KEY_NAME_NONE:
                if (!*value || strcmp(value, "none") == 0)
                        return set_string(field, NULL);
                if (!valid_name(value)) {
                        fail(p, -EINVAL, p->lineno,
                             "%s must be empty, none, or 1 to %d characters of [A-Za-z0-9._-], not starting with '.' or '-'",
                             name, NAME_LEN_MAX);
                        return -EINVAL;
                }
                return set_string(field, value);
        case KEY_GROUP:
        case KEY_USER:
                if (!valid_group(value)) {
                        fail(p, -EINVAL, p->lineno, "%s must be a %s name or a number", name,
                             k->type == KEY_USER ? "user" : "group");
                        return -EINVAL;
                }
                return set_string(field, value);
        case KEY_MODE:
                if (parse_mode(value, field) < 0) {
                        fail(p, -EINVAL, p->lineno, "%s must be octal like 0440, at most 0777", name);
                        return -EINVAL;
                }
                return 0;
        case KEY_BOOL:
                if (parse_bool(value, field) < 0) {
                        fail(p, -EINVAL, p->lineno, "%s must be yes or no", name);
                        return -EINVAL;
                }
                return 0;
        case KEY_UNSIGNED:
        case KEY_U64:
        case KEY_KIB:
                r = parse_u64(value, k->min, k->max, &v);
                if (r < 0) {
                        fail(p, -EINVAL, p->lineno, "%s must be a decimal integer in [%llu, %llu]", name,
                             (unsigned long long) k->min, (unsigned long long) k->max);
                        return -EINVAL;
                }
                if (k->type == KEY_UNSIGNED)
                        *(unsigned *) field = (unsigned) v;
                else if (k->type == KEY_U64)
                        *(uint64_t *) field = v;
                else
                        *(size_t *) field = (size_t) v * 1024;
                return 0;
        case KEY_CREDIT:
                if (strcmp(value, "auto") == 0 && strcmp(name, "credit") == 0) {
                        fail(p, -EINVAL, p->lineno,
                             "credit = auto measures raw noise, and [%s] gives conditioned output the estimators "
                             "cannot judge: give a number of bits",
                             k->section);
                        return -EINVAL;
                }
                if (parse_milli(value, CREDIT_MBITS_MAX, field) < 0) {
                        fail(p, -EINVAL, p->lineno, "%s must be a decimal number of bits in [0, 8]", name);
                        return -EINVAL;
                }
                return 0;
        case KEY_CREDIT_AUTO: {
                SourceConfig *sc = (SourceConfig *) ((uint8_t *) field - offsetof(SourceConfig, credit_mbits));

                if (strcmp(value, "auto") == 0) {
                        sc->credit_auto = true;
                        sc->credit_mbits = 0;
                        return 0;
                }
                if (parse_milli(value, CREDIT_MBITS_MAX, field) < 0) {
                        fail(p, -EINVAL, p->lineno, "%s must be auto or a decimal number of bits in [0, 8]", name);
                        return -EINVAL;
                }
                sc->credit_auto = false;
                return 0;
        }
        case KEY_SECONDS:
                if (parse_milli(value, (uint32_t) k->max, field) < 0) {
                        fail(p, -EINVAL, p->lineno,
                             "%s must be a decimal number of seconds in [%llu, %llu], at most 3 decimals", name,
                             (unsigned long long) k->min / 1000, (unsigned long long) k->max / 1000);
                        return -EINVAL;
                }
                return 0;
        case KEY_PATH:
                if (!valid_path(value, PATH_MAX - 1)) {
                        fail(p, -EINVAL, p->lineno, "%s must be an absolute path", name);
                        return -EINVAL;
                }
                return set_string(field, value);
        case KEY_PATH_NONE:
                if (strcmp(value, "none") == 0)
                        return set_string(field, NULL);
                if (!valid_path(value, PATH_MAX - 1)) {
                        fail(p, -EINVAL, p->lineno, "%s must be an absolute path or none", name);
                        return -EINVAL;
                }
                return set_string(field, value);
        case KEY_SOCKET:
                if (!valid_path(value, SOCKET_PATH_MAX)) {
                        fail(p, -EINVAL, p->lineno, "%s must be an absolute path of at most %zu bytes", name,
                             SOCKET_PATH_MAX);
                        return -EINVAL;
                }
                return set_string(field, value);
        }
        abort();
}

/* libinih's handler: nonzero to go on. */
static int handler(void *userdata, const char *section, const char *name, const char *value) {
        Parser *p = userdata;
        int i, r;

        if (p->error)
                return 0;
        if (!*section) {
                fail(p, -EINVAL, p->lineno, "key '%s' outside of any [section]", name);
                return 0;
        }
        i = key_index(section, name);
        if (i < 0) {
                if (strcmp(section, "source.kernel") == 0 && strcmp(name, "credit") == 0)
                        fail(p, -EINVAL, p->lineno, "the kernel source is never credited: no credit in [%s]",
                             section);
                else
                        fail(p, -EINVAL, p->lineno, "unknown key '%s' in [%s]", name, section);
                return 0;
        }
        /* libinih strips "; why" after a value, but not "# why": that would
         * reach us as part of the value, and a path would swallow it. */
        if (strstr(value, " #") || strstr(value, "\t#")) {
                fail(p, -EINVAL, p->lineno,
                     "a comment after the value of %s is read as part of the value: put it on a line of its own",
                     name);
                return 0;
        }
        if (p->seen & (UINT64_C(1) << i)) {
                fail(p, -EINVAL, p->lineno, "duplicate key '%s' in [%s], first set on line %u", name, section,
                     p->key_line[i]);
                return 0;
        }
        p->seen |= UINT64_C(1) << i;
        p->key_line[i] = p->lineno;

        r = apply(p, &keys[i], value);
        if (r == -ENOMEM)
                fail(p, -ENOMEM, p->lineno, "%s", "out of memory");
        return r >= 0;
}

/* The line an error that spans keys is reported on: the later of the keys
 * this file set (at least one of them, as the defaults pass every check). */
static unsigned later_line(const Parser *p, const char *section, const char *a, const char *b) {
        unsigned la = p->key_line[key_index(section, a)], lb = p->key_line[key_index(section, b)];
        return la > lb ? la : lb;
}

static void check(Parser *p) {
        const Config *c = p->config;
        const SourceConfig *file = &c->source[CONFIG_SOURCE_FILE];

        /* A floor above the period would quietly make the periodic reseeds
         * rarer than configured. */
        if (c->min_reseed_interval_ms > c->reseed_interval * 1000U)
                fail(p, -EINVAL, later_line(p, "crng", "min_reseed_interval", "reseed_interval"),
                     "min_reseed_interval must be at most reseed_interval (%u.%03u s > %u s)",
                     c->min_reseed_interval_ms / 1000, c->min_reseed_interval_ms % 1000, c->reseed_interval);
        if (c->max_parked_per_uid && c->max_parked_per_uid > c->max_parked / PARKED_SHARES)
                fail(p, -EINVAL, later_line(p, "device", "max_parked_per_uid", "max_parked"),
                     "max_parked_per_uid must be at most max_parked / %u (%u), so that 8 uids and root can always "
                     "park a read", PARKED_SHARES, c->max_parked / PARKED_SHARES);
        if (c->low_water >= c->store_blocks)
                fail(p, -EINVAL, later_line(p, "pool", "low_water", "store_blocks"),
                     "low_water must be < store_blocks (%u >= %u)", c->low_water, c->store_blocks);

        if (strcmp(c->trng_name, c->random_name) == 0)
                fail(p, -EINVAL, later_line(p, "device", "trng_name", "random_name"),
                     "trng_name and random_name must differ");
        if (strcmp(c->trng_name, c->urandom_name) == 0)
                fail(p, -EINVAL, later_line(p, "device", "trng_name", "urandom_name"),
                     "trng_name and urandom_name must differ");
        if (strcmp(c->random_name, c->urandom_name) == 0)
                fail(p, -EINVAL, later_line(p, "device", "random_name", "urandom_name"),
                     "random_name and urandom_name must differ");
        if (c->null_name && (strcmp(c->null_name, c->trng_name) == 0 || strcmp(c->null_name, c->random_name) == 0 ||
                             strcmp(c->null_name, c->urandom_name) == 0))
                fail(p, -EINVAL, later_line(p, "device", "null_name", "null_name"),
                     "null_name must differ from the other device names");

        /* The file source exists to replay test data under a credit; enabled
         * without either it could only mislead. */
        if (file->enable && !file->path)
                fail(p, -EINVAL, later_line(p, "source.file", "enable", "path"),
                     "source.file is enabled but has no path");
        if (file->enable && file->credit_mbits == 0 && !file->credit_auto)
                fail(p, -EINVAL, later_line(p, "source.file", "enable", "credit"),
                     "source.file is enabled but its credit is 0");

        for (ConfigSource s = 0; s < _CONFIG_SOURCE_MAX; s++) {
                const SourceConfig *sc = &c->source[s];
                char section[32];
                int cap;

                snprintf(section, sizeof(section), "source.%s", source_names[s]);
                cap = key_index(section, "credit_cap");
                if (cap < 0 || !(p->seen & (UINT64_C(1) << cap)))
                        continue;
                /* A cap that could never apply would only mislead. */
                if (!sc->credit_auto)
                        fail(p, -EINVAL, later_line(p, section, "credit", "credit_cap"),
                             "credit_cap applies to credit = auto only, and credit is a number here");
                else if (sc->credit_cap_mbits == 0)
                        fail(p, -EINVAL, p->key_line[cap],
                             "credit_cap = 0 would credit nothing: set credit = 0 (or enable = no) instead");
        }
}

static char *format_error(const Parser *p) {
        char buf[128], *s;
        int r;

        if (p->error_line > 0)
                r = asprintf(&s, "%s:%u: %s", p->path, p->error_line, p->reason);
        else if (p->error == -ENOENT)
                r = asprintf(&s, "%s: %s", p->path, p->reason);
        else
                /* GNU strerror_r(): thread-safe, returns the text. */
                r = asprintf(&s, "%s: %s", p->path, strerror_r(-p->error, buf, sizeof(buf)));
        return r < 0 ? NULL : s;
}

int config_load(const char *path, bool missing_ok, Config *ret, char **ret_error) {
        Config c;
        Parser p = { .path = path, .config = &c };
        int r;

        r = config_init_defaults(&c);
        if (r < 0)
                return r;

        p.f = fopen(path, "re");
        if (!p.f) {
                if (errno == ENOENT && missing_ok) {
                        *ret = c;
                        return 0;
                }
                fail(&p, -errno, 0, "%s", errno == ENOENT ? "not found" : "cannot open");
        } else {
                r = ini_parse_stream(reader, &p, handler, &p);
                /* Only our reader and handler stop a parse, and each records
                 * why; anything else libinih saw is a syntax error. */
                if (r > 0)
                        fail(&p, -EINVAL, (unsigned) r, "syntax error");
                else if (r < 0)
                        fail(&p, -ENOMEM, 0, "%s", "out of memory");
                fclose(p.f);
                free(p.line);
                if (!p.error)
                        check(&p);
                c.group_line = p.key_line[key_index("device", "group")];
                c.user_line = p.key_line[key_index("daemon", "user")];
                for (ConfigSource s = 0; s < _CONFIG_SOURCE_MAX; s++) {
                        char section[32];
                        int k;

                        snprintf(section, sizeof(section), "source.%s", config_source_name(s));
                        k = key_index(section, "enable");
                        c.source[s].enable_line = k >= 0 ? p.key_line[k] : 0;
                        k = key_index(section, "path");
                        c.source[s].path_line = k >= 0 ? p.key_line[k] : 0;
                }
        }

        if (p.error) {
                r = p.error;
                if (ret_error)
                        *ret_error = format_error(&p);
                config_done(&c);
                return r;
        }
        *ret = c;
        return 0;
}
