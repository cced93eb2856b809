/* evidence-parts.c - the bundle's parts besides the captures (see
 * evidence-parts.h). Flow: status, config, machine, ledger ->
 * [evidence-parts] -> bundle-out. */
#include "evidence-parts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "client.h"
#include "ledger/verify.h"
#include "machine.h"
#include "pool/health.h"
#include "util/cleanup.h"
#include "util/fdio.h"
#include "util/json-util.h"

/* The largest file copied whole: a configuration file or a ledger file
 * (the ledger rotates long before). */
#define PART_FILE_MAX (64U * 1024U * 1024U)

#define NO_DAEMON "--direct: no daemon was asked"

static struct json_object *member(struct json_object *o, const char *key) {
        struct json_object *v = NULL;

        return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A new reference to o's member, a copy the bundle's JSON may hold. */
static struct json_object *member_ref(struct json_object *o, const char *key) {
        return json_object_get(member(o, key));
}

/* The credited sources of the status, each as {"name", key: its member},
 * into a new array; *ret_found: how many had key. */
static struct json_object *per_source(struct json_object *status, const char *key, size_t *ret_found) {
        struct json_object *sources = member(status, "sources"), *a = json_object_new_array();

        *ret_found = 0;
        for (size_t i = 0; a && json_object_is_type(sources, json_type_array) &&
                           i < json_object_array_length(sources); i++) {
                struct json_object *s = json_object_array_get_idx(sources, i), *o;

                if (!json_object_get_boolean(member(s, "credited")))
                        continue;
                o = json_object_new_object();
                if (json_put(o, "name", member_ref(s, "name")) < 0 ||
                    json_put_nullable(o, key, member_ref(s, key)) < 0 || json_object_array_add(a, o) < 0) {
                        json_object_put(o);
                        json_object_put(a);
                        return NULL;
                }
                *ret_found += member(s, key) != NULL;
        }
        return a;
}

/* gate.json: each credited source's "gate" as the status gives it: the
 * gate's counts, its last verdict and (schema 10) its last 16 verdicts,
 * "recent_verdicts"; an older daemon's status has no such list, and the
 * file says it is absent. */
static int gate_part(CtlBundle *b, struct json_object *status) {
        struct json_object *o, *absent, *a;
        size_t found, listed = 0;
        int r = 0;

        a = per_source(status, "gate", &found);
        if (found == 0) {
                json_object_put(a);
                return ctl_bundle_absent(b, "gate.json", "the running gate's verdicts",
                                         "the daemon's status has no \"gate\" for any credited source");
        }
        for (size_t i = 0; i < json_object_array_length(a); i++)
                listed += member(member(json_object_array_get_idx(a, i), "gate"), "recent_verdicts") != NULL;
        o = json_object_new_object();
        absent = json_object_new_object();
        r |= json_put(o, "sources", a);
        if (listed == 0)
                r |= json_put(absent, "recent_verdicts",
                              json_object_new_string("this daemon's status holds each gate's counts and its last "
                                                     "verdict, not a list of recent ones (status schema < 10)"));
        r |= json_put(o, "absent", absent);
        if (r) {
                json_object_put(o);
                o = NULL;
        }
        return ctl_bundle_json(b, "gate.json", o,
                               listed ? "the running gate per credited source: its counts and its last 16 verdicts "
                                        "(each window's first sample, estimate, credit)"
                                      : "the running gate per credited source: windows credited and refused, "
                                        "the last verdict and estimate (recent verdicts: absent)");
}

static struct json_object *cutoffs_json(const HealthCutoffs *c, int alpha_log2) {
        struct json_object *o = json_object_new_object();

        if (json_put(o, "alpha_log2", json_object_new_int(alpha_log2)) < 0 ||
            json_put(o, "rct_cutoff", json_object_new_int((int) c->rct)) < 0 ||
            json_put(o, "apt_cutoff", json_object_new_int((int) c->apt)) < 0 ||
            json_put(o, "apt_window", json_object_new_int((int) c->apt_window)) < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* One credited source's cutoffs at the credit in force (status's
 * credit_bits), made by pool/health.c's health_init() as the daemon's
 * intake makes them; null with a reason when nothing is credited now. */
static struct json_object *source_cutoffs(struct json_object *s) {
        struct json_object *o = json_object_new_object();
        double credit = json_object_get_double(member(s, "credit_bits"));
        uint32_t mbits = (uint32_t) (credit * 1000.0 + 0.5);
        HealthTest t;
        int r = 0;

        r |= json_put(o, "name", member_ref(s, "name"));
        r |= json_put(o, "credit_bits", member_ref(s, "credit_bits"));
        if (mbits == 0 || mbits > CREDIT_MBITS_MAX || health_init(&t, mbits) < 0) {
                r |= json_put_nullable(o, "intermittent", NULL);
                r |= json_put_nullable(o, "permanent", NULL);
                r |= json_put(o, "why_null", json_object_new_string("no credit in force now (refused, or no window "
                                                                     "judged yet): no cutoffs apply"));
        } else {
                r |= json_put(o, "startup_samples", json_object_new_int(HEALTH_STARTUP_SAMPLES));
                r |= json_put(o, "intermittent", cutoffs_json(&t.intermittent, HEALTH_ALPHA_LOG2_INTERMITTENT));
                r |= json_put(o, "permanent", cutoffs_json(&t.permanent, HEALTH_ALPHA_LOG2_PERMANENT));
        }
        if (r) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

/* health.json: the SP 800-90B §4.4 cutoffs and alpha in force per
 * credited source: computed here by the daemon's own function at the
 * credit the status says is in force (the status does not carry them). */
static int health_part(CtlBundle *b, struct json_object *status) {
        struct json_object *sources = member(status, "sources"), *a = json_object_new_array();

        for (size_t i = 0; a && json_object_is_type(sources, json_type_array) && i < json_object_array_length(sources);
             i++) {
                struct json_object *s = json_object_array_get_idx(sources, i), *o;

                if (!json_object_get_boolean(member(s, "credited")))
                        continue;
                o = source_cutoffs(s);
                if (!o || json_object_array_add(a, o) < 0) {
                        json_object_put(o);
                        json_object_put(a);
                        a = NULL;
                }
        }
        if (!a)
                return ctl_fail(EXIT_FAILED, "out of memory");
        return ctl_bundle_json(b, "health.json", a,
                               "the health-test cutoffs and alpha in force per credited source, computed by "
                               "pool/health.c's health_init() at the credit in force the status reports");
}

int evidence_parts_status(CtlBundle *b, struct json_object *status, const char *text, size_t size) {
        int code;

        if (!status) {
                code = ctl_bundle_absent(b, "status.json", "the daemon's status and counters since start", NO_DAEMON);
                if (code == EXIT_OK)
                        code = ctl_bundle_absent(b, "gate.json", "the running gate's verdicts", NO_DAEMON);
                if (code == EXIT_OK)
                        code = ctl_bundle_absent(b, "health.json", "the health-test cutoffs and alpha in force",
                                                 NO_DAEMON);
                return code;
        }
        code = ctl_bundle_add(b, "status.json", text, size,
                              "the daemon's status as it came (truerandomctl status --json): counters since start");
        if (code == EXIT_OK)
                code = gate_part(b, status);
        if (code == EXIT_OK)
                code = health_part(b, status);
        return code;
}

/* ---- the configuration --------------------------------------------------------------- */

/* "config/N-NAME": NAME the file's own name, each byte a bundle name may
 * not hold made '_'. */
static void config_name(size_t i, const char *path, char ret[static EVIDENCE_NAME_MAX + 1]) {
        const char *base = strrchr(path, '/');

        snprintf(ret, EVIDENCE_NAME_MAX + 1, "config/%zu-%s", i + 1, base ? base + 1 : path);
        for (char *p = ret + strlen("config/"); *p; p++)
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-", *p))
                        *p = '_';
}

/* One configuration file, copied; its entry in files. */
static int config_file(CtlBundle *b, size_t i, const char *path, struct json_object *files) {
        char name[EVIDENCE_NAME_MAX + 1];
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ char *data = NULL;
        struct json_object *f = json_object_new_object();
        size_t n = 0;
        int r = fd < 0 ? -errno : fd_read_all(fd, PART_FILE_MAX, &data, &n), code = EXIT_OK;

        config_name(i, path, name);
        if (json_put(f, "path", json_object_new_string(path)) < 0 || json_object_array_add(files, f) < 0) {
                json_object_put(f);
                return ctl_fail(EXIT_FAILED, "out of memory");
        }
        if (r < 0)
                return json_put(f, "absent", json_object_new_string(strerror(-r))) < 0
                               ? ctl_fail(EXIT_FAILED, "out of memory") : EXIT_OK;
        code = ctl_bundle_add(b, name, data, n, path);
        if (code == EXIT_OK && json_put(f, "file", json_object_new_string(name)) < 0)
                code = ctl_fail(EXIT_FAILED, "out of memory");
        return code;
}

int evidence_parts_config(CtlBundle *b, const Config *config, const char *config_path, struct json_object *status) {
        struct json_object *o = json_object_new_object(), *files = json_object_new_array(), *absent;
        char sha[2 * CONFIG_SHA256_BYTES + 1];
        int code = EXIT_OK, r = 0;

        absent = json_object_new_object();
        if (json_put(o, "files", files) < 0 || !absent) {
                json_object_put(o);
                json_object_put(absent);
                return ctl_fail(EXIT_FAILED, "out of memory");
        }
        for (unsigned i = 0; i < config->n_files && code == EXIT_OK; i++)
                code = config_file(b, i, config->files[i], files);
        sodium_bin2hex(sha, sizeof(sha), config->sha256, CONFIG_SHA256_BYTES);
        r |= json_put(o, "read_from", json_object_new_string(config_path));
        r |= json_put(o, "read_by", json_object_new_string("truerandomctl, while it made this bundle"));
        r |= json_put(o, "sha256", json_object_new_string(sha));
        r |= json_put(o, "sha256_of", json_object_new_string("for each file in order: its path, a NUL, its bytes "
                                                             "(the ledger's config_sha256)"));
        if (config->n_files == 0)
                r |= json_put(absent, "files", json_object_new_string("no file read: the built-in defaults"));
        if (status && member(status, "config"))
                r |= json_put(o, "daemon", member_ref(status, "config"));
        else
                r |= json_put(absent, "daemon", json_object_new_string(
                                status ? "the daemon's status does not name its configuration: compare sha256 with "
                                         "the config_sha256 of the ledger's last start or reload record"
                                       : NO_DAEMON));
        r |= json_put(o, "absent", absent);
        if (code != EXIT_OK || r) {
                json_object_put(o);
                return code != EXIT_OK ? code : ctl_fail(EXIT_FAILED, "out of memory");
        }
        return ctl_bundle_json(b, "config.json", o, "the configuration files read and their SHA-256");
}

/* ---- machine and build ------------------------------------------------------------------ */

int evidence_parts_machine(CtlBundle *b, struct json_object *status) {
        struct json_object *build = ctl_build_to_json();
        int code, r;

        code = ctl_bundle_json(b, "machine.json", ctl_machine_to_json(),
                               "CPU vendor, family, model, microcode; hypervisor; clocksource; kernel");
        if (code != EXIT_OK) {
                json_object_put(build);
                return code;
        }
        if (status && member(status, "daemon_version"))
                r = json_put(build, "daemon_version", member_ref(status, "daemon_version"));
        else
                r = json_put(member(build, "absent"), "daemon_version",
                             json_object_new_string(status ? "not in the daemon's status" : NO_DAEMON));
        /* build_id is truerandomctl's own: the daemon's binary is not
         * this one, and its status does not give its build id. */
        if (r == 0)
                r = json_put(member(build, "absent"), "daemon_build_id",
                             json_object_new_string(status ? "not in the daemon's status" : NO_DAEMON));
        if (r < 0) {
                json_object_put(build);
                build = NULL; /* out of memory: ctl_bundle_json() says so */
        }
        return ctl_bundle_json(b, "build.json", build, "truerandomctl's version and build id, the daemon's version");
}

/* ---- the ledger ------------------------------------------------------------------------- */

static int ledger_copy(CtlBundle *b, int dir_fd, const LedgerFile *f) {
        char name[EVIDENCE_NAME_MAX + 1];
        _cleanup_close_ int fd = openat(dir_fd, f->name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        _cleanup_free_ char *data = NULL;
        size_t n;
        int r;

        if (fd < 0)
                return ctl_fail(EXIT_FAILED, "ledger file %s: %s", f->name, strerror(errno));
        /* Read whole first: the daemon may append while the bundle is
         * made, and a tar entry's size is written before its bytes. */
        r = fd_read_all(fd, PART_FILE_MAX, &data, &n);
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "ledger file %s: %s", f->name, strerror(-r));
        snprintf(name, sizeof(name), "ledger/%s", f->name);
        return ctl_bundle_add(b, name, data, n, NULL);
}

int evidence_parts_ledger(CtlBundle *b, const char *dir) {
        _cleanup_(ledger_report_freep) LedgerReport *report = NULL;
        _cleanup_close_ int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ LedgerFile *files = NULL;
        _cleanup_free_ char *why = NULL, *what = NULL;
        struct json_object *o = NULL;
        size_t n = 0;
        int r, code = EXIT_OK;

        r = dir_fd < 0 ? -errno : ledger_files_list(dir_fd, &files, &n);
        if (r == 0 && n == 0)
                r = -ENOENT;
        if (r < 0) {
                if (asprintf(&why, "%s: %s", dir, r == -ENOENT ? "no ledger there" : strerror(-r)) < 0)
                        return ctl_fail(EXIT_FAILED, "out of memory");
                return ctl_bundle_absent(b, "ledger-verify.json", "the ledger and its check", why);
        }
        for (size_t i = 0; i < n && code == EXIT_OK; i++)
                code = ledger_copy(b, dir_fd, &files[i]);
        if (code != EXIT_OK)
                return code;
        r = ledger_verify(dir_fd, NULL, &report);
        if (r == 0)
                r = ledger_report_to_json(report, &o);
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "checking the ledger in %s: %s", dir, strerror(-r));
        if (asprintf(&what, "the check of ledger/ (%zu file%s from %s; truerandomctl ledger --verify --directory "
                            "ledger)", n, n == 1 ? "" : "s", dir) < 0) {
                json_object_put(o);
                return ctl_fail(EXIT_FAILED, "out of memory");
        }
        return ctl_bundle_json(b, "ledger-verify.json", o, what);
}
