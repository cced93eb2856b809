/* checks.c - what no single key shows: limits that bound each other, device
 * names that must differ, and what the source rows require together (a
 * path where it may be none, a credit where the row needs one, a cap only
 * with credit = auto). An error is reported on the line of the later of the
 * keys involved that the files set (at least one of them did: the defaults
 * pass every check), in a later file where they were set in two. The first error wins, as in the parse.
 * Flow: the parsed Config -> [checks] -> config_load's answer. */
#include "parser.h"
#include "sourceconf.h"
#include "util/cleanup.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static ParserAt later_line(const Parser *p, const char *section, const char *a, const char *b) {
        ParserAt la = parser_key_at(p, section, a), lb = parser_key_at(p, section, b);
        return la > lb ? la : lb;
}

/* The same across two sections. */
static ParserAt later_line2(const Parser *p, const char *sa, const char *a, const char *sb, const char *b) {
        ParserAt la = parser_key_at(p, sa, a), lb = parser_key_at(p, sb, b);
        return la > lb ? la : lb;
}

static void check_limits(Parser *p) {
        const Config *c = p->config;
        usec_t min_ms = c->min_reseed_interval_usec / USEC_PER_MSEC;

        /* A floor above the period would quietly make the periodic reseeds
         * rarer than configured. */
        if (c->min_reseed_interval_usec > c->reseed_interval_usec)
                parser_fail_at(p, -EINVAL, later_line(p, "crng", "min_reseed_interval", "reseed_interval"),
                            "min_reseed_interval must be at most reseed_interval (%u.%03u s > %u s)",
                            (unsigned) (min_ms / 1000), (unsigned) (min_ms % 1000),
                            (unsigned) (c->reseed_interval_usec / USEC_PER_SEC));
        if (c->max_parked_per_uid && c->max_parked_per_uid > c->max_parked / PARKED_SHARES)
                parser_fail_at(p, -EINVAL, later_line(p, "device", "max_parked_per_uid", "max_parked"),
                            "max_parked_per_uid must be at most max_parked / %u (%u), so that 8 uids and root can "
                            "always park a read", PARKED_SHARES, c->max_parked / PARKED_SHARES);
        if (c->low_water >= c->store_blocks)
                parser_fail_at(p, -EINVAL, later_line(p, "pool", "low_water", "store_blocks"),
                            "low_water must be < store_blocks (%u >= %u)", c->low_water, c->store_blocks);
}

/* Every pair of named devices, once. A device whose name may be none is
 * the one to change, and is reported on its own line. */
static void check_device_names(Parser *p) {
        const Config *c = p->config;

        for (int j = 1; j < _CONFIG_DEVICE_MAX; j++)
                for (int i = 0; i < j; i++) {
                        const ConfigDeviceRow *a = &config_devices[i], *b = &config_devices[j];
                        const ConfigDeviceRow *optional = !b->default_name ? b : !a->default_name ? a : NULL;

                        if (!c->device[i].name || !c->device[j].name || strcmp(c->device[i].name, c->device[j].name))
                                continue;
                        if (optional)
                                parser_fail_at(p, -EINVAL, parser_key_at(p, "device", optional->name_key),
                                            "%s must differ from the other device names", optional->name_key);
                        else
                                parser_fail_at(p, -EINVAL, later_line(p, "device", a->name_key, b->name_key),
                                            "%s and %s must differ", a->name_key, b->name_key);
                }
}

/* With per_source_devices, each credited source's device name
 * (TRNG_NAME-SOURCE) must fit and differ from every other device's. */
static void check_source_device_names(Parser *p) {
        const Config *c = p->config;
        ParserAt line = parser_key_at(p, "device", "per_source_devices");

        if (!c->cuse || !c->per_source_devices)
                return;
        if (!config_device_served(&c->device[CONFIG_DEVICE_TRNG])) {
                parser_fail_at(p, -EINVAL, line, "per_source_devices = yes needs trng_name: the devices are named after it");
                return;
        }
        for (ConfigSource s = 0; s < _CONFIG_SOURCE_MAX; s++) {
                char name[CONFIG_DEVICE_NAME_MAX + 1];

                if (!sourceconf_creditable(&c->source[s], s))
                        continue;
                if (config_source_device_name(c, s, name) < 0) {
                        parser_fail_at(p, -EINVAL, MAX(line, parser_key_at(p, "device", "trng_name")),
                                    "trng_name is too long for per_source_devices: %s-%s exceeds %u characters",
                                    c->device[CONFIG_DEVICE_TRNG].name, source_all[s]->name,
                                    CONFIG_DEVICE_NAME_MAX);
                        return;
                }
                for (ConfigDevice i = 0; i < _CONFIG_DEVICE_MAX; i++)
                        if (c->device[i].name && strcmp(c->device[i].name, name) == 0)
                                parser_fail_at(p, -EINVAL, MAX(line, parser_key_at(p, "device", config_devices[i].name_key)),
                                            "%s = %s is the name of source %s's own device (per_source_devices)",
                                            config_devices[i].name_key, name, source_all[s]->name);
        }
}

/* The key that sets SourceParams.path, when the row has one. */
static const SourceKey *path_key(const SourceOps *ops) {
        for (int k = 0; k < SOURCE_KEYS_MAX && ops->keys[k].name; k++)
                if (ops->keys[k].offset == offsetof(SourceParams, path))
                        return &ops->keys[k];
        return NULL;
}

ParserAt parser_source_path_at(const Parser *p, ConfigSource s) {
        const SourceKey *k = path_key(source_all[s]);
        char section[64];

        snprintf(section, sizeof(section), "source.%s", source_all[s]->name);
        return k ? parser_key_at(p, section, k->name) : 0;
}

/* What the rows require of an enabled source: a path where it may be none
 * (it could never open), a credit where the row serves nothing without. */
static void check_sources_enabled(Parser *p) {
        for (int s = 0; s < _CONFIG_SOURCE_MAX; s++) {
                const SourceConfig *sc = &p->config->source[s];
                const SourceOps *ops = source_all[s];
                const SourceKey *path = path_key(ops);
                char section[64];

                if (!sc->enable)
                        continue;
                snprintf(section, sizeof(section), "source.%s", ops->name);
                if (path && path->type == SOURCE_KEY_PATH_NONE && !sc->params.path)
                        parser_fail_at(p, -EINVAL, later_line(p, section, "enable", path->name),
                                    "%s is enabled but has no %s", section, path->name);
                if (ops->credit_required && sc->credit_mbits == 0 && !sc->credit_auto)
                        parser_fail_at(p, -EINVAL, later_line(p, section, "enable", "credit"),
                                    "%s is enabled but its credit is 0", section);
        }
}

/* A cap that could never apply would only mislead. */
static void check_sources_caps(Parser *p) {
        for (int s = 0; s < _CONFIG_SOURCE_MAX; s++) {
                const SourceConfig *sc = &p->config->source[s];
                char section[64];
                ParserAt cap;

                snprintf(section, sizeof(section), "source.%s", source_all[s]->name);
                cap = parser_key_at(p, section, "credit_cap");
                if (!cap)
                        continue;
                if (!sc->credit_auto)
                        parser_fail_at(p, -EINVAL, later_line(p, section, "credit", "credit_cap"),
                                    "credit_cap applies to credit = auto only, and credit is a number here");
                else if (sc->credit_cap_mbits == 0)
                        parser_fail_at(p, -EINVAL, cap,
                                    "credit_cap = 0 would credit nothing: set credit = 0 (or enable = no) instead");
        }
}

/* A daemon that serves nothing would run its sources for no one; one
 * socket path for two servers would make the second fail at start. */
static void check_served(Parser *p) {
        const Config *c = p->config;

        if (!c->cuse && !c->egd_socket_path)
                parser_fail_at(p, -EINVAL, later_line2(p, "device", "cuse", "egd", "socket"),
                            "[device] cuse = no and no [egd] socket: nothing would be served");
        else if (c->egd_socket_path && strcmp(c->egd_socket_path, c->socket_path) == 0)
                parser_fail_at(p, -EINVAL, later_line2(p, "egd", "socket", "control", "socket"),
                            "[egd] socket must differ from [control] socket");
}

void parser_check(Parser *p) {
        check_limits(p);
        check_served(p);
        check_device_names(p);
        check_source_device_names(p);
        check_sources_enabled(p);
        check_sources_caps(p);
}
