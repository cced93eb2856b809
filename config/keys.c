/* keys.c - the keys of truerandomd.conf: a table of the fixed ones, and
 * those the rows make: each device row (config.h) its name and mode keys,
 * and dropin for the drop-ins; each source row (pool/source.h) its
 * [source.NAME] section with enable, credit and credit_cap as its
 * SourceCredit allows, then its keys of its own. A new row brings its keys;
 * nothing here names a device or a source.
 * Flow: libinih -> [keys] -> values. */
#include "parser.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "util/cleanup.h"

#define SOURCE_SECTION "source."

typedef struct FixedKey {
        const char *section;
        Key key;
} FixedKey;

#define FIXED(s, n, t, field, lo, hi) \
        { s, { .name = #n, .type = t, .offset = offsetof(Config, field), .min = lo, .max = hi } }
#define FIXED_CHOICE(s, n, field, words) \
        { s, { .name = #n, .type = KEY_CHOICE, .offset = offsetof(Config, field), .choices = words } }

static const FixedKey fixed[] = {
        FIXED("device", group, KEY_GROUP, group, 0, 0),
        FIXED("device", max_parked, KEY_UNSIGNED, max_parked, PARKED_SHARES, 1000000),
        FIXED("device", max_parked_per_uid, KEY_UNSIGNED, max_parked_per_uid, 1, 1000000 / PARKED_SHARES),
        FIXED("device", max_open_per_uid, KEY_UNSIGNED, max_open_per_uid, 1, 1000000),
        FIXED("device", max_dropin_open_per_uid, KEY_UNSIGNED, max_dropin_open_per_uid, 1, 1000000),
        FIXED("device", proc_checks_per_uid, KEY_UNSIGNED, proc_checks_per_uid, 1, 1000000),
        FIXED("pool", store_blocks, KEY_UNSIGNED, store_blocks, 1, 1048576),
        FIXED("pool", low_water, KEY_UNSIGNED, low_water, 0, 1048575),
        FIXED("pool", min_healthy, KEY_SOURCES, min_healthy, 1, 0),
        FIXED("pool", start_delay_ms, KEY_MSEC, start_delay_usec, 0, 600000),
        FIXED("pool", gate_window, KEY_UNSIGNED, gate_window, GATE_WINDOW_MIN, GATE_WINDOW_MAX),
        FIXED("crng", reseed_interval, KEY_SEC, reseed_interval_usec, 1, 86400),
        FIXED("crng", min_reseed_interval, KEY_SECONDS, min_reseed_interval_usec, 0, 3600000),
        FIXED("device", cuse, KEY_BOOL, cuse, 0, 0),
        FIXED("device", per_source_devices, KEY_BOOL, per_source_devices, 0, 0),
        FIXED("device", dropin_unrestricted_ioctl, KEY_BOOL, dropin_unrestricted_ioctl, 0, 0),
        FIXED_CHOICE("device", privileged_ioctls, privileged_ioctls, config_privileged_names),
        FIXED("control", socket, KEY_SOCKET, socket_path, 0, 0),
        FIXED("egd", socket, KEY_SOCKET_NONE, egd_socket_path, 0, 0),
        FIXED("assessment", samples, KEY_UNSIGNED, assess_samples, CONFIG_ASSESS_SAMPLES_MIN,
              CONFIG_ASSESS_SAMPLES_MAX),
        FIXED("assessment", state_directory, KEY_PATH, state_directory, 0, 0),
        FIXED("daemon", user, KEY_USER, user, 0, 0),
        FIXED("daemon", allow_induce, KEY_BOOL, allow_induce, 0, 0),
};

_Static_assert(ELEMENTSOF(fixed) <= KEYS_FIXED_MAX, "parser.h: KEYS_FIXED_MAX");
_Static_assert(_CONFIG_DEVICE_MAX <= sizeof(unsigned) * CHAR_BIT, "Key.devices has a bit per device");

/* The sources ever credited: as many may be asked to be healthy. */
static unsigned credited_sources(void) {
        unsigned n = 0;

        for (const SourceOps *const *s = source_all; *s; s++)
                n += (*s)->credit != SOURCE_CREDIT_NEVER;
        return n;
}

/* [device]'s keys from the rows: a name key each, a mode key each (rows may
 * share one), and dropin for the rows it turns off. */
static int device_key(const char *name, Key *ret) {
        unsigned mask = 0;
        int first = -1;

        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++)
                if (strcmp(name, config_devices[i].name_key) == 0) {
                        *ret = (Key){ .name = config_devices[i].name_key,
                                      .type = config_devices[i].default_name ? KEY_NAME : KEY_NAME_NONE,
                                      .offset = offsetof(DeviceConfig, name), .devices = 1U << i };
                        return i;
                }
        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++)
                if (strcmp(name, config_devices[i].mode_key) == 0) {
                        mask |= 1U << i;
                        first = first < 0 ? i : first;
                }
        if (mask) {
                *ret = (Key){ .name = config_devices[first].mode_key, .type = KEY_MODE,
                              .offset = offsetof(DeviceConfig, mode), .devices = mask };
                return _CONFIG_DEVICE_MAX + first;
        }
        if (strcmp(name, "dropin") != 0)
                return -1;
        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++)
                mask |= config_devices[i].dropin ? 1U << i : 0;
        if (!mask)
                return -1;
        *ret = (Key){ .name = "dropin", .type = KEY_BOOL, .offset = offsetof(DeviceConfig, enable), .devices = mask };
        return 2 * _CONFIG_DEVICE_MAX;
}

static KeyType source_key_type(SourceKeyType t) {
        static const KeyType types[] = {
                [SOURCE_KEY_BOOL] = KEY_BOOL,       [SOURCE_KEY_UNSIGNED] = KEY_UNSIGNED,
                [SOURCE_KEY_U64] = KEY_U64,         [SOURCE_KEY_KIB] = KEY_KIB,
                [SOURCE_KEY_PATH] = KEY_PATH,       [SOURCE_KEY_PATH_NONE] = KEY_PATH_NONE,
        };
        return types[t];
}

/* [source.NAME]'s keys from source s's row. */
static int source_key(ConfigSource s, const char *name, Key *ret) {
        const SourceOps *ops = source_all[s];
        size_t base = offsetof(Config, source) + (size_t) s * sizeof(SourceConfig);

        if (strcmp(name, "enable") == 0) {
                *ret = (Key){ .name = "enable", .type = KEY_BOOL, .offset = base + offsetof(SourceConfig, enable) };
                return 0;
        }
        if (ops->credit != SOURCE_CREDIT_NEVER && strcmp(name, "credit") == 0) {
                if (ops->credit == SOURCE_CREDIT_MEASURED)
                        *ret = (Key){ .name = "credit", .type = KEY_CREDIT_AUTO, .offset = base };
                else
                        *ret = (Key){ .name = "credit", .type = KEY_CREDIT,
                                      .offset = base + offsetof(SourceConfig, credit_mbits) };
                return 1;
        }
        if (ops->credit == SOURCE_CREDIT_MEASURED && strcmp(name, "credit_cap") == 0) {
                *ret = (Key){ .name = "credit_cap", .type = KEY_CREDIT,
                              .offset = base + offsetof(SourceConfig, credit_cap_mbits) };
                return 2;
        }
        for (int k = 0; k < SOURCE_KEYS_MAX && ops->keys[k].name; k++) {
                const SourceKey *sk = &ops->keys[k];

                if (strcmp(name, sk->name) != 0)
                        continue;
                *ret = (Key){ .name = sk->name, .type = source_key_type(sk->type),
                              .offset = base + offsetof(SourceConfig, params) + sk->offset, .min = sk->min,
                              .max = sk->max };
                return 3 + k;
        }
        return -1;
}

/* The source of a [source.NAME] section (n characters of s), or -1. */
static int source_section(const char *s, size_t n) {
        size_t prefix = strlen(SOURCE_SECTION);

        if (n <= prefix || strncmp(s, SOURCE_SECTION, prefix) != 0)
                return -1;
        s += prefix;
        n -= prefix;
        for (int i = 0; i < _CONFIG_SOURCE_MAX; i++)
                if (strlen(source_all[i]->name) == n && strncmp(source_all[i]->name, s, n) == 0)
                        return i;
        return -1;
}

bool key_section_known(const char *s, size_t n) {
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                if (strlen(fixed[i].section) == n && strncmp(fixed[i].section, s, n) == 0)
                        return true;
        return source_section(s, n) >= 0;
}

int key_find(const char *section, const char *name, Key *ret) {
        int s, r;

        for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                if (strcmp(fixed[i].section, section) == 0 && strcmp(fixed[i].key.name, name) == 0) {
                        *ret = fixed[i].key;
                        if (ret->type == KEY_SOURCES)
                                ret->max = credited_sources();
                        return (int) i;
                }
        if (strcmp(section, "device") == 0) {
                r = device_key(name, ret);
                return r < 0 ? -1 : KEYS_FIXED_MAX + r;
        }
        s = source_section(section, strlen(section));
        if (s < 0)
                return -1;
        r = source_key((ConfigSource) s, name, ret);
        return r < 0 ? -1 : KEYS_FIXED_MAX + KEYS_DEVICE_MAX + s * KEYS_SOURCE_MAX + r;
}

ParserAt parser_key_at(const Parser *p, const char *section, const char *name) {
        Key k;
        int i = key_find(section, name, &k);

        return i < 0 ? 0 : p->key_at[i];
}

int parser_handle(void *userdata, const char *section, const char *name, const char *value) {
        Parser *p = userdata;
        int s, i, r;
        Key k;

        if (p->error)
                return 0;
        if (!*section) {
                parser_fail(p, -EINVAL, p->lineno, "key '%s' outside of any [section]", name);
                return 0;
        }
        i = key_find(section, name, &k);
        if (i < 0) {
                s = source_section(section, strlen(section));
                if (s >= 0 && source_all[s]->credit == SOURCE_CREDIT_NEVER && strcmp(name, "credit") == 0)
                        parser_fail(p, -EINVAL, p->lineno, "the %s source is never credited: no credit in [%s]",
                                    source_all[s]->name, section);
                else
                        parser_fail(p, -EINVAL, p->lineno, "unknown key '%s' in [%s]", name, section);
                return 0;
        }
        /* libinih strips "; why" after a value, but not "# why": that would
         * reach us as part of the value, and a path would swallow it. */
        if (strstr(value, " #") || strstr(value, "\t#")) {
                parser_fail(p, -EINVAL, p->lineno,
                            "a comment after the value of %s is read as part of the value: put it on a line of its "
                            "own", name);
                return 0;
        }
        /* Once per file; a later file overrides an earlier one. */
        if (p->key_at[i] >= parser_at(p->file, 0)) {
                parser_fail(p, -EINVAL, p->lineno, "duplicate key '%s' in [%s], first set on line %u", name, section,
                            parser_at_line(p->key_at[i]));
                return 0;
        }
        p->key_at[i] = parser_at(p->file, p->lineno);

        r = key_apply(p, &k, section, value);
        if (r == -ENOMEM)
                parser_fail(p, -ENOMEM, p->lineno, "%s", "out of memory");
        return r >= 0;
}
