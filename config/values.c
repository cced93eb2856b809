/* values.c - one value of truerandomd.conf checked and stored, by its key's
 * type: names, accounts, modes, booleans, integers, credits, durations and
 * paths. A value is stored only whole and valid; otherwise the parse
 * records why ("KEY must be ...") and stops. Durations are stored as usec_t
 * whatever unit the file speaks.
 * Flow: keys -> [values] -> the parser's Config. */
#include "parser.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#define NAME_LEN_MAX CONFIG_DEVICE_NAME_MAX
#define GROUP_LEN_MAX 32
#define CREDIT_MBITS_MAX 8000U
#define SOCKET_PATH_MAX (sizeof(((struct sockaddr_un *) NULL)->sun_path) - 1)
#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

/* ---- parsing ------------------------------------------------------------------ */

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

int config_parse_milli(const char *s, uint32_t max, uint32_t *ret) {
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
        size_t n = strspn(s, NAME_CHARS);

        /* A leading '.' or '-' would allow "." and ".." as /dev entries and
         * names that read as options. */
        return n > 0 && n <= NAME_LEN_MAX && s[n] == '\0' && s[0] != '.' && s[0] != '-';
}

/* A name as useradd and groupadd accept it, or an id (not (uid_t) -1). */
static bool valid_account(const char *s) {
        uint64_t id;
        size_t n;

        if (parse_u64(s, 0, UINT32_MAX - 1, &id) == 0)
                return true;
        n = strspn(s, NAME_CHARS);
        return n > 0 && n <= GROUP_LEN_MAX && s[n] == '\0' && s[0] != '-' && (s[0] < '0' || s[0] > '9');
}

static bool valid_path(const char *s, size_t max) {
        size_t n = strlen(s);
        return s[0] == '/' && n <= max;
}

/* field is a char *, or a const char * this Config owns (SourceParams.path):
 * copied as bytes, so either type is written as what it is. */
static int set_string(void *field, const char *value) {
        char *copy = NULL, *old;

        if (value) {
                copy = strdup(value);
                if (!copy)
                        return -ENOMEM;
        }
        memcpy(&old, field, sizeof(old));
        free(old);
        memcpy(field, &copy, sizeof(copy));
        return 0;
}

/* ---- storing, by type ------------------------------------------------------- */

static int store_name(Parser *p, const Key *k, const char *value, void *field) {
        if (k->type == KEY_NAME_NONE && (!*value || strcmp(value, "none") == 0))
                return set_string(field, NULL);
        if (valid_name(value))
                return set_string(field, value);
        parser_fail(p, -EINVAL, p->lineno,
                    "%s must be %s1 to %d characters of [A-Za-z0-9._-], not starting with '.' or '-'", k->name,
                    k->type == KEY_NAME_NONE ? "empty, none, or " : "", NAME_LEN_MAX);
        return -EINVAL;
}

static int store_account(Parser *p, const Key *k, const char *value, void *field) {
        if (valid_account(value))
                return set_string(field, value);
        parser_fail(p, -EINVAL, p->lineno, "%s must be a %s name or a number", k->name,
                    k->type == KEY_USER ? "user" : "group");
        return -EINVAL;
}

static int store_integer(Parser *p, const Key *k, const char *value, void *field) {
        uint64_t v;

        if (parse_u64(value, k->min, k->max, &v) < 0) {
                parser_fail(p, -EINVAL, p->lineno, "%s must be a decimal integer in [%llu, %llu]", k->name,
                            (unsigned long long) k->min, (unsigned long long) k->max);
                return -EINVAL;
        }
        switch (k->type) {
        case KEY_UNSIGNED:
        case KEY_SOURCES:
                *(unsigned *) field = (unsigned) v;
                return 0;
        case KEY_U64:
                *(uint64_t *) field = v;
                return 0;
        case KEY_KIB:
                *(size_t *) field = (size_t) v * 1024;
                return 0;
        case KEY_MSEC:
                *(usec_t *) field = v * USEC_PER_MSEC;
                return 0;
        case KEY_SEC:
                *(usec_t *) field = v * USEC_PER_SEC;
                return 0;
        default:
                abort();
        }
}

static int store_credit(Parser *p, const Key *k, const char *section, const char *value, void *field) {
        if (strcmp(value, "auto") == 0 && strcmp(k->name, "credit") == 0) {
                parser_fail(p, -EINVAL, p->lineno,
                            "credit = auto measures raw noise, and [%s] gives conditioned output the estimators "
                            "cannot judge: give a number of bits", section);
                return -EINVAL;
        }
        if (config_parse_milli(value, CREDIT_MBITS_MAX, field) < 0) {
                parser_fail(p, -EINVAL, p->lineno, "%s must be a decimal number of bits in [0, 8]", k->name);
                return -EINVAL;
        }
        return 0;
}

static int store_credit_auto(Parser *p, const Key *k, const char *value, SourceConfig *sc) {
        uint32_t mbits;

        if (strcmp(value, "auto") == 0) {
                sc->credit_auto = true;
                sc->credit_mbits = 0;
                return 0;
        }
        if (config_parse_milli(value, CREDIT_MBITS_MAX, &mbits) < 0) {
                parser_fail(p, -EINVAL, p->lineno, "%s must be auto or a decimal number of bits in [0, 8]", k->name);
                return -EINVAL;
        }
        sc->credit_auto = false;
        sc->credit_mbits = mbits;
        return 0;
}

static int store_seconds(Parser *p, const Key *k, const char *value, usec_t *field) {
        uint32_t ms;

        if (config_parse_milli(value, (uint32_t) k->max, &ms) < 0) {
                parser_fail(p, -EINVAL, p->lineno,
                            "%s must be a decimal number of seconds in [%llu, %llu], at most 3 decimals", k->name,
                            (unsigned long long) k->min / 1000, (unsigned long long) k->max / 1000);
                return -EINVAL;
        }
        *field = (usec_t) ms * USEC_PER_MSEC;
        return 0;
}

static int store_path(Parser *p, const Key *k, const char *value, void *field) {
        bool socket = k->type == KEY_SOCKET || k->type == KEY_SOCKET_NONE;
        size_t max = socket ? SOCKET_PATH_MAX : PATH_MAX - 1;

        if ((k->type == KEY_PATH_NONE || k->type == KEY_SOCKET_NONE) && strcmp(value, "none") == 0)
                return set_string(field, NULL);
        if (valid_path(value, max))
                return set_string(field, value);
        if (socket)
                parser_fail(p, -EINVAL, p->lineno, "%s must be an absolute path of at most %zu bytes%s", k->name,
                            SOCKET_PATH_MAX, k->type == KEY_SOCKET_NONE ? ", or none" : "");
        else
                parser_fail(p, -EINVAL, p->lineno, "%s must be an absolute path%s", k->name,
                            k->type == KEY_PATH_NONE ? " or none" : "");
        return -EINVAL;
}

/* One of the key's words; the message lists them. */
static int store_choice(Parser *p, const Key *k, const char *value, void *field) {
        char words[160] = "";
        size_t n = 0;

        for (unsigned i = 0; k->choices[i]; i++)
                if (strcmp(value, k->choices[i]) == 0) {
                        *(unsigned *) field = i;
                        return 0;
                }
        for (unsigned i = 0; k->choices[i] && n < sizeof(words); i++)
                n += (size_t) snprintf(words + n, sizeof(words) - n, "%s%s", i ? ", " : "", k->choices[i]);
        parser_fail(p, -EINVAL, p->lineno, "%s must be one of %s", k->name, words);
        return -EINVAL;
}

static int store(Parser *p, const Key *k, const char *section, const char *value, void *field) {
        switch (k->type) {
        case KEY_NAME:
        case KEY_NAME_NONE:
                return store_name(p, k, value, field);
        case KEY_GROUP:
        case KEY_USER:
                return store_account(p, k, value, field);
        case KEY_MODE:
                if (parse_mode(value, field) == 0)
                        return 0;
                parser_fail(p, -EINVAL, p->lineno, "%s must be octal like 0440, at most 0777", k->name);
                return -EINVAL;
        case KEY_BOOL:
                if (parse_bool(value, field) == 0)
                        return 0;
                parser_fail(p, -EINVAL, p->lineno, "%s must be yes or no", k->name);
                return -EINVAL;
        case KEY_UNSIGNED:
        case KEY_U64:
        case KEY_KIB:
        case KEY_SOURCES:
        case KEY_MSEC:
        case KEY_SEC:
                return store_integer(p, k, value, field);
        case KEY_CREDIT:
                return store_credit(p, k, section, value, field);
        case KEY_CREDIT_AUTO:
                return store_credit_auto(p, k, value, field);
        case KEY_SECONDS:
                return store_seconds(p, k, value, field);
        case KEY_PATH:
        case KEY_PATH_NONE:
        case KEY_SOCKET:
        case KEY_SOCKET_NONE:
                return store_path(p, k, value, field);
        case KEY_CHOICE:
                return store_choice(p, k, value, field);
        }
        abort();
}

int key_apply(Parser *p, const Key *k, const char *section, const char *value) {
        int r;

        if (!k->devices)
                return store(p, k, section, value, (uint8_t *) p->config + k->offset);
        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++) {
                if (!(k->devices & (1U << i)))
                        continue;
                r = store(p, k, section, value, (uint8_t *) &p->config->device[i] + k->offset);
                if (r < 0)
                        return r;
        }
        return 0;
}
