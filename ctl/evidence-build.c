/* evidence-build.c - truerandomctl evidence -o FILE.tar: the captures,
 * their reports, the other parts, the README, in one bundle (see
 * evidence-build.h).
 * Flow: capture, estimates, evidence-parts -> [evidence-build]
 *       -> bundle-out -> FILE.tar. */
#include "evidence-build.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "assess/eajson.h"
#include "bundle-out.h"
#include "capture-file.h"
#include "client.h"
#include "config-build.h"
#include "config/sourceconf.h"
#include "estimates.h"
#include "evidence-parts.h"
#include "proto/ctlstatus.h"
#include "util/cleanup.h"
#include "util/json-util.h"

typedef struct SourceResult {
        EaReport report;
        EaRestartReport restart;
} SourceResult;

typedef struct Build {
        const CtlEvidence *args;
        const char *config_path;          /* the file read: --config or the default */
        Config config;
        struct json_object *status;       /* the daemon's; NULL with --direct */
        char *status_text;
        size_t status_size;
        const char *sources[CTL_EVIDENCE_SOURCES_MAX];
        size_t n_sources;
        SourceResult results[CTL_EVIDENCE_SOURCES_MAX];
        CtlBundle bundle;
} Build;

/* ---- what to capture ------------------------------------------------------------------- */

static int load_config(Build *b) {
        char *error = NULL;
        int r, code;

        b->config_path = b->args->config_path ? b->args->config_path : CONFIG_DEFAULT_PATH;
        /* The daemon's own reading: a named file must exist, the default
         * may be absent (built-in defaults). */
        r = config_load(b->config_path, !b->args->config_path, &b->config, &error);
        if (r < 0) {
                code = ctl_fail(EXIT_FAILED, "%s", error ? error : strerror(-r));
                free(error);
                return code;
        }
        return EXIT_OK;
}

static int fetch_status(Build *b) {
        _cleanup_free_ char *socket_path = ctl_socket_path(b->args->socket_path, b->args->config_path);
        _cleanup_free_ uint8_t *buf = malloc(CTL_REPLY_MAX);
        CtlStatus *status = NULL;
        CtlRequest req;
        CtlReply r;
        int code;

        if (!socket_path || !buf)
                return ctl_fail(EXIT_FAILED, "out of memory");
        ctl_request_init(&req, ctl_command_from_string("status"));
        code = ctl_request_ok(socket_path, &req, buf, &r);
        if (code != EXIT_OK)
                return code;
        if (ctl_status_parse((const char *) r.payload, r.payload_size, &status) < 0)
                return ctl_fail(EXIT_PROTOCOL, "truerandomd sent a status this version cannot read");
        ctl_status_free(status);
        /* Parsed strictly above; kept as text (the bundle's status.json,
         * byte for byte) and as an object of our own to read parts from. */
        b->status_text = strndup((const char *) r.payload, r.payload_size);
        b->status_size = r.payload_size;
        b->status = b->status_text ? json_tokener_parse(b->status_text) : NULL;
        if (!b->status)
                return ctl_fail(EXIT_FAILED, "out of memory");
        return EXIT_OK;
}

/* The credited sources: the daemon's, or with --direct the
 * configuration's. */
static int credited_sources(Build *b) {
        struct json_object *list = NULL;

        if (b->args->direct) {
                for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX && b->n_sources < CTL_EVIDENCE_SOURCES_MAX; i++)
                        if (sourceconf_creditable(&b->config.source[i], i))
                                b->sources[b->n_sources++] = config_source_name(i);
        } else if (json_object_object_get_ex(b->status, "sources", &list) &&
                   json_object_is_type(list, json_type_array))
                for (size_t i = 0; i < json_object_array_length(list) && b->n_sources < CTL_EVIDENCE_SOURCES_MAX; i++) {
                        struct json_object *s = json_object_array_get_idx(list, i), *v;

                        if (json_object_object_get_ex(s, "credited", &v) && json_object_get_boolean(v) &&
                            json_object_object_get_ex(s, "name", &v) && json_object_is_type(v, json_type_string))
                                b->sources[b->n_sources++] = json_object_get_string(v);
                }
        if (b->n_sources == 0)
                return ctl_fail(EXIT_SOURCE, "no credited source %s; name one", b->args->direct
                                ? "in the configuration" : "in the daemon's status");
        return EXIT_OK;
}

static int choose_sources(Build *b) {
        char name[EVIDENCE_NAME_MAX + 1];

        if (b->args->n_sources == 0)
                return credited_sources(b);
        for (size_t i = 0; i < b->args->n_sources; i++) {
                for (size_t j = 0; j < i; j++)
                        if (strcmp(b->args->sources[i], b->args->sources[j]) == 0)
                                return ctl_fail(EXIT_USAGE, "source %s named twice", b->args->sources[i]);
                snprintf(name, sizeof(name), "%s-restart.bin", b->args->sources[i]);
                if (strlen(b->args->sources[i]) > CTL_SOURCE_NAME_MAX || !evidence_name_ok(name) ||
                    strchr(b->args->sources[i], '/'))
                        return ctl_fail(EXIT_SOURCE, "unknown source '%s'", b->args->sources[i]);
                b->sources[b->n_sources++] = b->args->sources[i];
        }
        return EXIT_OK;
}

/* ---- a source: its captures and their reports ------------------------------------- */

static int report_text(Build *b, const char *source, const SourceResult *res) {
        _cleanup_free_ char *text = NULL;
        char name[EVIDENCE_NAME_MAX + 1];
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return ctl_fail(EXIT_FAILED, "out of memory");
        fprintf(f, "%s: %zu samples of 8 bits, captured %s\n", source, res->report.samples,
                b->args->direct ? "in this process (--direct)" : "through truerandomd");
        ctl_report_print(f, &res->report, &res->restart);
        if (fclose(f) != 0)
                return ctl_fail(EXIT_FAILED, "out of memory");
        snprintf(name, sizeof(name), "%s-report.txt", source);
        return ctl_bundle_add(&b->bundle, name, text, size, "the estimators and the restart test (assess --restart)");
}

static int report_json(Build *b, const char *source, const SourceResult *res) {
        struct json_object *o = ea_report_to_json(&res->report);
        char name[EVIDENCE_NAME_MAX + 1];
        int r = o ? 0 : -ENOMEM;

        r |= json_put(o, "source", json_object_new_string(source));
        r |= json_put(o, "captured", json_object_new_string(b->args->direct ? "direct" : "truerandomd"));
        r |= json_put(o, "restart", ctl_restart_to_json(&res->restart));
        if (r) {
                json_object_put(o);
                o = NULL;
        }
        snprintf(name, sizeof(name), "%s-report.json", source);
        return ctl_bundle_json(&b->bundle, name, o, "the same as JSON (assess --restart --json)");
}

static int source_part(Build *b, size_t i) {
        const char *source = b->sources[i];
        CtlCapture c = { .source = source, .direct = b->args->direct, .config_path = b->args->config_path,
                         .socket_path = b->args->socket_path };
        CtlSamples samples = { 0 }, matrix = { 0 };
        SourceResult *res = &b->results[i];
        char name[EVIDENCE_NAME_MAX + 1];
        CtlProgress p;
        int code;

        ctl_progress_init(&p, source);
        code = ctl_samples_capture(&c, CTL_RAW_SAMPLES_DEFAULT, 1, &p, &samples);
        snprintf(name, sizeof(name), "%s.bin", source);
        if (code == EXIT_OK)
                code = ctl_bundle_add(&b->bundle, name, samples.p, samples.n, "raw 8-bit samples, one per byte");
        if (code == EXIT_OK)
                code = ctl_samples_capture(&c, CTL_RESTART_SAMPLES, CTL_RESTART_ROWS, &p, &matrix);
        snprintf(name, sizeof(name), "%s-restart.bin", source);
        if (code == EXIT_OK)
                code = ctl_bundle_add(&b->bundle, name, matrix.p, matrix.n,
                                      "1000 rows of 1000 samples, the source restarted before each row");
        if (code == EXIT_OK)
                code = ctl_samples_estimate(&samples, 8, &p, &res->report);
        if (code == EXIT_OK)
                code = ctl_samples_restart(&matrix, res->report.min_entropy, &p, &res->restart);
        if (code == EXIT_OK)
                code = report_text(b, source, res);
        if (code == EXIT_OK)
                code = report_json(b, source, res);
        free(samples.p);
        free(matrix.p);
        return code;
}

/* ---- README.txt -------------------------------------------------------------------------- */

static void readme_source(FILE *f, const char *s, const SourceResult *res) {
        const EaReport *r = &res->report;
        const EaRestartReport *rr = &res->restart;

        fprintf(f, "%s\n\n  ea_non_iid -v %s.bin 8\n", s, s);
        fprintf(f, "      reproduces H_original %.6f, H_bitstring %.6f and min(H_original, 8 X H_bitstring)\n"
                   "      %.6f: the min-entropy per sample in %s-report.txt and %s-report.json\n",
                r->h_original, r->h_bitstring, r->min_entropy, s, s);
        fprintf(f, "  ea_restart -n -v %s-restart.bin 8 %.6f\n", s, r->min_entropy);
        fprintf(f, "      with H_I = %.6f, the min-entropy above: reproduces the restart test in\n"
                   "      %s-report.txt (\"restart\" in %s-report.json): the sanity check (a value at most\n"
                   "      %u times in a row or column: %u, %u: %s)",
                r->min_entropy, s, s, rr->cutoff, rr->max_row_count, rr->max_col_count,
                rr->sanity_passed ? "passed" : "FAILED");
        if (rr->sanity_passed)
                fprintf(f, ", H_r %.6f, H_c %.6f", rr->h_r, rr->h_c);
        fprintf(f, "; the test %s\n\n", rr->passed ? "passed" : "FAILED");
}

static int readme(Build *b, bool is_signed) {
        _cleanup_free_ char *text = NULL;
        char when[32] = "?";
        size_t size = 0;
        time_t now = time(NULL);
        struct tm tm;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return ctl_fail(EXIT_FAILED, "out of memory");
        if (gmtime_r(&now, &tm))
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        fprintf(f, "truerandom evidence bundle\n\n"
                   "Made by truerandomctl %s at %s, the samples captured %s.\n\n", TRUERANDOM_VERSION, when,
                b->args->direct ? "in truerandomctl's own process (--direct: no daemon)" : "through truerandomd");
        fprintf(f, "Check it: truerandomctl evidence verify BUNDLE.tar%s\n"
                   "      or: tar xf BUNDLE.tar && sha256sum -c MANIFEST\n", is_signed ? " --key PUBFILE" : "");
        if (is_signed)
                fprintf(f, "      and: openssl pkeyutl -verify -pubin -inkey PUBFILE -rawin -in MANIFEST "
                           "-sigfile MANIFEST.sig\n");
        fprintf(f, "\nEach figure again with NIST's SP 800-90B tools (SP800-90B_EntropyAssessment,\n"
                   "https://github.com/usnistgov/SP800-90B_EntropyAssessment), in the extracted bundle:\n\n");
        for (size_t i = 0; i < b->n_sources; i++)
                readme_source(f, b->sources[i], &b->results[i]);
        fprintf(f, "Contents (a part that is absent is a JSON file {\"absent\": why}):\n%s", ctl_bundle_contents(&b->bundle));
        fprintf(f, "  %-22s %s\n  %-22s %s\n", "README.txt", "this file", EVIDENCE_MANIFEST,
                "the SHA-256 of every file, as sha256sum writes it");
        if (is_signed)
                fprintf(f, "  %-22s %s\n", EVIDENCE_SIGNATURE, "the Ed25519 signature over MANIFEST, 64 bytes");
        if (fclose(f) != 0)
                return ctl_fail(EXIT_FAILED, "out of memory");
        return ctl_bundle_add(&b->bundle, "README.txt", text, size, NULL);
}

/* ---- the whole bundle ---------------------------------------------------------------- */

/* Everything into the open bundle, signed if a key was given. */
static int write_parts(Build *b) {
        int code = EXIT_OK;

        for (size_t i = 0; i < b->n_sources && code == EXIT_OK; i++)
                code = source_part(b, i);
        if (code == EXIT_OK)
                code = evidence_parts_status(&b->bundle, b->status, b->status_text, b->status_size);
        if (code == EXIT_OK)
                code = evidence_parts_config(&b->bundle, &b->config, b->config_path, b->status);
        if (code == EXIT_OK)
                code = evidence_parts_machine(&b->bundle, b->status);
        if (code == EXIT_OK)
                code = evidence_parts_ledger(&b->bundle, b->config.state_directory);
        if (code == EXIT_OK)
                code = readme(b, b->args->sk != NULL);
        if (code == EXIT_OK)
                code = ctl_bundle_finish(&b->bundle, b->args->sk);
        return code;
}

/* The bundle into a temporary file beside output, renamed when whole. */
static int write_bundle(Build *b) {
        const char *output = b->args->output;
        int fd, code, r;

        fd = capture_file_create(output);
        if (fd < 0)
                return ctl_fail(EXIT_FAILED, "cannot create a file beside %s: %s", output, strerror(-fd));
        code = ctl_bundle_init(&b->bundle, fd, output);
        if (code == EXIT_OK)
                code = write_parts(b);
        r = capture_file_end(fd, output, code == EXIT_OK);
        if (code == EXIT_OK && r < 0)
                code = ctl_fail(EXIT_FAILED, "writing %s: %s", output, strerror(-r));
        if (code != EXIT_OK)
                fprintf(stderr, "truerandomctl: removed the incomplete bundle; %s was not written\n", output);
        return code;
}

static void print_summary(const Build *b, usec_t started) {
        struct stat st;
        long long size = stat(b->args->output, &st) == 0 ? (long long) st.st_size : -1;

        printf("%s: %lld bytes, %zu files%s, made in %.1f s\n", b->args->output, size, b->bundle.files,
               b->args->sk ? ", signed" : "", (double) (now_usec(CLOCK_MONOTONIC) - started) / USEC_PER_SEC);
        for (size_t i = 0; i < b->n_sources; i++)
                printf("%s: min-entropy %.6f bits per sample; restart test %s\n", b->sources[i],
                       b->results[i].report.min_entropy, b->results[i].restart.passed ? "passed" : "FAILED");
}

int ctl_evidence_build(const CtlEvidence *args) {
        Build b = { .args = args };
        usec_t started = now_usec(CLOCK_MONOTONIC);
        int code;

        code = load_config(&b);
        if (code != EXIT_OK)
                return code;
        if (!args->direct)
                code = fetch_status(&b);
        if (code == EXIT_OK)
                code = choose_sources(&b);
        if (code == EXIT_OK)
                code = write_bundle(&b);
        if (code == EXIT_OK)
                print_summary(&b, started);
        ctl_bundle_done(&b.bundle);
        json_object_put(b.status);
        free(b.status_text);
        config_done(&b.config);
        if (code == EXIT_OK && fflush(stdout) != 0)
                code = ctl_fail(EXIT_FAILED, "writing: %s", strerror(errno));
        return code;
}
