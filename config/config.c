/* config.c - /etc/truerandomd.conf: the defaults, and a file loaded over
 * them.
 *
 * A file is parsed into a private Config that starts as the defaults; the
 * caller's Config is written only once the whole file and the checks that
 * span keys have passed, so a bad reload leaves the running configuration
 * as it was. The first error wins and ends the parse. The defaults of the
 * devices and the sources are their rows' (devices.c, pool/source.h); the
 * keys are in keys.c, their values in values.c, the lines in reader.c, the
 * checks in checks.c, the error in parser.c.
 * Flow: main and SIGHUP -> [config] -> the wiring in daemon/. */
#include "config-build.h"
#include "parser.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"

unsigned config_max_parked_per_uid(const Config *c) {
        if (c->max_parked_per_uid)
                return c->max_parked_per_uid;
        return c->max_parked >= PARKED_SHARES ? c->max_parked / PARKED_SHARES : 1;
}

const char *config_source_name(ConfigSource s) {
        return (unsigned) s < _CONFIG_SOURCE_MAX ? source_all[s]->name : NULL;
}

/* ---- defaults ------------------------------------------------------------------ */

void config_done(Config *c) {
        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++)
                free(c->device[i].name);
        free(c->group);
        free(c->socket_path);
        free(c->egd_socket_path);
        free(c->state_directory);
        free(c->user);
        for (int i = 0; i < _CONFIG_SOURCE_MAX; i++)
                free((char *) c->source[i].params.path);
        *c = (Config) { 0 };
}

/* A copy of s into *ret, or NULL for NULL; -ENOMEM. */
static int strdup_null(const char *s, char **ret) {
        *ret = s ? strdup(s) : NULL;
        return s && !*ret ? -ENOMEM : 0;
}

/* The devices' and the sources' defaults, from their rows. */
static int init_rows(Config *c) {
        char *path;

        for (int i = 0; i < _CONFIG_DEVICE_MAX; i++) {
                c->device[i] = (DeviceConfig){ .mode = config_devices[i].default_mode, .enable = true };
                if (strdup_null(config_devices[i].default_name, &c->device[i].name) < 0)
                        return -ENOMEM;
        }
        for (int i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                const SourceDefaults *d = &source_all[i]->defaults;

                if (strdup_null(d->params.path, &path) < 0)
                        return -ENOMEM;
                c->source[i] = (SourceConfig){
                        .enable = d->enable,
                        .credit_mbits = d->credit_mbits,
                        .credit_auto = d->credit_auto,
                        .credit_cap_mbits = d->credit_cap_mbits,
                        .params = d->params,
                };
                c->source[i].params.path = path;
        }
        return 0;
}

int config_init_defaults(Config *ret) {
        _cleanup_(config_done) Config c = {
                .max_parked = 16384,
                .max_open_per_uid = 1024,
                .store_blocks = 1024,
                .low_water = 256,
                .min_healthy = 1,
                .start_delay_usec = 0,
                .gate_window = GATE_WINDOW_DEFAULT,
                .reseed_interval_usec = 60 * USEC_PER_SEC,
                .min_reseed_interval_usec = 1 * USEC_PER_SEC,
                .assess_samples = CONFIG_ASSESS_SAMPLES_DEFAULT,
                .cuse = true,
                .dropin_unrestricted_ioctl = true,
        };

        if (init_rows(&c) < 0 || strdup_null("truerandom", &c.group) < 0 ||
            strdup_null(RUNSTATEDIR "/truerandomd/control", &c.socket_path) < 0 ||
            strdup_null(STATEDIR, &c.state_directory) < 0 || strdup_null("truerandomd", &c.user) < 0)
                return -ENOMEM;
        *ret = c;
        c = (Config){ 0 };
        return 0;
}

/* ---- a file over them ----------------------------------------------------------- */

/* Where the file set what the daemon may refuse later, for FILE:LINE. */
static void note_lines(const Parser *p, Config *c) {
        c->group_line = parser_key_line(p, "device", "group");
        c->user_line = parser_key_line(p, "daemon", "user");
        for (int s = 0; s < _CONFIG_SOURCE_MAX; s++) {
                char section[64];

                snprintf(section, sizeof(section), "source.%s", source_all[s]->name);
                c->source[s].enable_line = parser_key_line(p, section, "enable");
                c->source[s].path_line = parser_source_path_line(p, (ConfigSource) s);
        }
}

static void parse(Parser *p) {
        int r = ini_parse_stream(parser_read, p, parser_handle, p);

        /* Only our reader and handler stop a parse, and each records why;
         * anything else libinih saw is a syntax error. */
        if (r > 0)
                parser_fail(p, -EINVAL, (unsigned) r, "syntax error");
        else if (r < 0)
                parser_fail(p, -ENOMEM, 0, "%s", "out of memory");
        if (!p->error)
                parser_check(p);
        note_lines(p, p->config);
}

int config_load(const char *path, bool missing_ok, Config *ret, char **ret_error) {
        _cleanup_(config_done) Config c = { 0 };
        Parser p = { .path = path, .config = &c };
        int r;

        r = config_init_defaults(&c);
        if (r < 0)
                return r;

        p.f = fopen(path, "re");
        if (p.f) {
                parse(&p);
                fclose(p.f);
                free(p.line);
        } else if (errno != ENOENT || !missing_ok)
                parser_fail(&p, -errno, 0, "%s", errno == ENOENT ? "not found" : "cannot open");

        if (p.error) {
                if (ret_error)
                        *ret_error = parser_format_error(&p);
                return p.error;
        }
        *ret = c;
        c = (Config){ 0 };
        return 0;
}
