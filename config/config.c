/* config.c - /etc/truerandomd.conf: the defaults, and a file and its
 * drop-ins loaded over them.
 *
 * The files are parsed into a private Config that starts as the defaults;
 * the caller's Config is written only once every file and the checks that
 * span keys have passed, so a bad reload leaves the running configuration
 * as it was. The first error wins and ends the parse. The defaults of the
 * devices and the sources are their rows' (devices.c, pool/source.h); the
 * keys are in keys.c, their values in values.c, the lines in reader.c, the
 * checks in checks.c, the error in parser.c.
 * Flow: main and SIGHUP -> [config] -> the wiring in daemon/. */
#include "config-build.h"
#include "parser.h"

#include <dirent.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/cleanup.h"

unsigned config_max_parked_per_uid(const Config *c) {
        if (c->max_parked_per_uid)
                return c->max_parked_per_uid;
        return c->max_parked >= PARKED_SHARES ? c->max_parked / PARKED_SHARES : 1;
}

const char *config_at_str(ConfigAt at, const char *path, char *buf, size_t size) {
        if (at.line)
                snprintf(buf, size, "%s:%u", at.file, at.line);
        else
                snprintf(buf, size, "%s", path ? path : "defaults");
        return buf;
}

const char *config_source_name(ConfigSource s) {
        return (unsigned) s < _CONFIG_SOURCE_MAX ? source_all[s]->name : NULL;
}

/* ---- defaults ------------------------------------------------------------------ */

void config_done(Config *c) {
        for (unsigned i = 0; i < c->n_files; i++)
                free(c->files[i]);
        free(c->files);
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
                .max_dropin_open_per_uid = 65536,
                .proc_checks_per_uid = 1000,
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
        crypto_hash_sha256(c.sha256, (const unsigned char *) "", 0);
        *ret = c;
        c = (Config){ 0 };
        return 0;
}

/* ---- the files over them -------------------------------------------------------- */

static ConfigAt config_at(const Parser *p, ParserAt at) {
        if (!at)
                return (ConfigAt){ 0 };
        return (ConfigAt){ .file = p->config->files[(at >> 32) - 1], .line = parser_at_line(at) };
}

/* Where the files set what the daemon may refuse later, for FILE:LINE. */
static void note_places(const Parser *p, Config *c) {
        c->group_at = config_at(p, parser_key_at(p, "device", "group"));
        c->user_at = config_at(p, parser_key_at(p, "daemon", "user"));
        for (int s = 0; s < _CONFIG_SOURCE_MAX; s++) {
                char section[64];

                snprintf(section, sizeof(section), "source.%s", source_all[s]->name);
                c->source[s].enable_at = config_at(p, parser_key_at(p, section, "enable"));
                c->source[s].path_at = config_at(p, parser_source_path_at(p, (ConfigSource) s));
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
}

/* Appends path to the files; it is the one being read from now on. */
static int add_file(Parser *p, const char *path) {
        Config *c = p->config;
        char **files = reallocarray(c->files, c->n_files + 1, sizeof(*files));

        if (!files)
                return -ENOMEM;
        c->files = files;
        if (!(files[c->n_files] = strdup(path)))
                return -ENOMEM;
        p->file = c->n_files++;
        p->lineno = 0;
        return 0;
}

/* Reads one file over what came before; missing_ok: a missing file is
 * left out of the files. -ENOMEM, else 0 with any error in p. */
static int read_file(Parser *p, const char *path, bool missing_ok) {
        Config *c = p->config;
        struct stat st;

        if (add_file(p, path) < 0)
                return -ENOMEM;
        p->f = fopen(path, "re");
        if (!p->f) {
                if (errno == ENOENT && missing_ok) {
                        free(c->files[--c->n_files]);
                        return 0;
                }
                parser_fail(p, -errno, 0, "%s", errno == ENOENT ? "not found" : "cannot open");
                return 0;
        }
        crypto_hash_sha256_update(&p->digest, (const unsigned char *) path, strlen(path) + 1);
        if (fstat(fileno(p->f), &st) < 0)
                parser_fail(p, -errno, 0, "%s", "cannot open");
        else if (S_ISDIR(st.st_mode))
                parser_fail(p, -EISDIR, 0, "%s", "is a directory");
        else
                parse(p);
        fclose(p->f);
        p->f = NULL;
        return 0;
}

/* The drop-ins: visible names ending in ".conf", in byte order (as
 * systemd orders its own), so that 10-site.conf comes before 20-host.conf
 * whatever the locale. */
static int dropin_filter(const struct dirent *e) {
        size_t n = strlen(e->d_name);

        return e->d_name[0] != '.' && n > 5 && strcmp(e->d_name + n - 5, ".conf") == 0;
}

static int dropin_order(const struct dirent **a, const struct dirent **b) {
        return strcmp((*a)->d_name, (*b)->d_name);
}

/* path.d/NAME.conf over what came before. A missing directory is no drop-in;
 * one that cannot be read is an error, as a file would be. */
static int read_dropins(Parser *p, const char *path) {
        _cleanup_free_ char *dir = NULL, *file = NULL;
        struct dirent **names = NULL;
        int n, r = 0;

        if (asprintf(&dir, "%s.d", path) < 0)
                return -ENOMEM;
        n = scandir(dir, &names, dropin_filter, dropin_order);
        if (n < 0 && errno == ENOENT)
                return 0;
        if (n < 0 || n > CONFIG_DROPINS_MAX) {
                int e = n < 0 ? -errno : -EINVAL;

                r = add_file(p, dir);
                /* "DIR: strerror", or this reason. */
                parser_fail(p, e, 0, "more than %u drop-ins", CONFIG_DROPINS_MAX);
        }
        for (int i = 0; i < n; i++) {
                if (r >= 0 && !p->error) {
                        free(file);
                        file = NULL;
                        r = asprintf(&file, "%s/%s", dir, names[i]->d_name) < 0 ? -ENOMEM : read_file(p, file, false);
                }
                free(names[i]);
        }
        free(names);
        return r;
}

int config_load(const char *path, bool missing_ok, Config *ret, char **ret_error) {
        _cleanup_(config_done) Config c = { 0 };
        Parser p = { .config = &c };
        int r;

        r = config_init_defaults(&c);
        if (r < 0)
                return r;
        crypto_hash_sha256_init(&p.digest);

        r = read_file(&p, path, missing_ok);
        if (r >= 0 && !p.error)
                r = read_dropins(&p, path);
        free(p.line);
        if (r < 0)
                return r;
        if (!p.error)
                parser_check(&p);
        if (p.error) {
                if (ret_error)
                        *ret_error = parser_format_error(&p);
                return p.error;
        }
        note_places(&p, &c);
        crypto_hash_sha256_final(&p.digest, c.sha256);
        *ret = c;
        c = (Config){ 0 };
        return 0;
}
