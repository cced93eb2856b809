/* verb-assess.c - truerandomctl assess SOURCE | --file FILE: the SP
 * 800-90B §6.3 non-IID estimators (estimate/noniid.h, the project's own,
 * checked against NIST's ea_non_iid) on N raw samples of a source,
 * captured as `raw` captures them (through truerandomd, or --direct in
 * this process), or on a capture file from any machine (--file, --bits:
 * no daemon at all). It prints every estimator and the result as
 * `ea_non_iid -v FILE bits` does (6 decimals), or one JSON object
 * (eajson.h: h_original, h_bitstring, min_entropy, samples, one member per
 * estimator). --restart adds the §3.1.4 restart test as `ea_restart` runs
 * it: a 1000 x 1000 matrix captured after the main capture, checked
 * against its min-entropy; the exit code is EXIT_RESTART when it fails.
 * The estimators run here, on this machine's CPU; a terminal sees which
 * one is running. --gate replays the daemon's running gate instead
 * (assess-gate.h): the capture cut into windows, each judged as the
 * daemon judges it, a verdict per window.
 * Flow: capture or a file -> [verb-assess] (-> assess-gate) -> stdout. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "assess-gate.h"
#include "assess/eajson.h"
#include "capture.h"
#include "estimates.h"
#include "client.h"
#include "estimate/noniid.h"
#include "proto/ctlproto.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "verb.h"

typedef struct Assess {
        CtlCapture capture;   /* a source (capture.source), or ... */
        const char *file;     /* ... a capture file, one sample per byte */
        unsigned bits;        /* bits per sample, 1..8 (file only; a source's are 8) */
        bool restart;
        bool json;
        bool gate;            /* --gate: the running gate's replay, with: */
        uint32_t window;      /* samples per window */
        GatePolicy policy;    /* --credit, --cap (bits: from bits) */
} Assess;

/* The size of a capture file, checked: EXIT_OK or the usage error. */
static int file_size(int fd, const char *path, uint32_t window, size_t *ret) {
        struct stat st;

        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return ctl_fail(EXIT_USAGE, "%s: not a regular file", path);
        if (window > 0 && (uint64_t) st.st_size < window)
                return ctl_fail(EXIT_USAGE, "%s: %" PRIu64 " samples, fewer than one window of %" PRIu32 " (--window)",
                                path, (uint64_t) st.st_size, window);
        if ((uint64_t) st.st_size < EA_SAMPLES_MIN || (uint64_t) st.st_size > EA_SAMPLES_MAX)
                return ctl_fail(EXIT_USAGE, "%s: %" PRIu64 " samples; the estimators take %u to %zu (SP 800-90B asks "
                                            "for 1,000,000)", path, (uint64_t) st.st_size, EA_SAMPLES_MIN, EA_SAMPLES_MAX);
        *ret = (size_t) st.st_size;
        return EXIT_OK;
}

/* A capture file, whole, of at least window samples (0: the estimators'
 * least); each sample checked against bits. */
static int load_file(const char *path, unsigned bits, uint32_t window, CtlSamples *ret) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ uint8_t *data = NULL;
        CtlSamples b = { 0 };
        int code;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return ctl_fail(errno == ENOENT ? EXIT_USAGE : EXIT_FAILED, "%s: %s", path, strerror(errno));
        code = file_size(fd, path, window, &b.size);
        if (code != EXIT_OK)
                return code;
        b.p = data = malloc(b.size);
        if (!data)
                return ctl_fail(EXIT_FAILED, "out of memory for %zu samples", b.size);
        while (b.n < b.size) {
                ssize_t k = read(fd, b.p + b.n, b.size - b.n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return ctl_fail(EXIT_FAILED, "reading %s: %s", path, k < 0 ? strerror(errno) : "it shrank");
                b.n += (size_t) k;
        }
        for (size_t i = 0; i < b.n; i++)
                if (b.p[i] >> bits)
                        return ctl_fail(EXIT_USAGE, "%s: the sample at offset %zu is %u, more than %u bits (--bits)",
                                        path, i, b.p[i], bits);
        *ret = b;
        data = NULL;
        return EXIT_OK;
}

/* ---- output -------------------------------------------------------------------------- */

static void print_origin(const Assess *a, size_t samples, unsigned bits) {
        if (a->file)
                printf("%s: %zu samples of %u bits\n", a->file, samples, bits);
        else
                printf("%s: %zu samples of 8 bits, captured %s\n", a->capture.source, samples,
                       a->capture.direct ? "in this process (--direct)" : "through truerandomd");
}

static void print_text(const Assess *a, const EaReport *r, const EaRestartReport *rr) {
        print_origin(a, r->samples, r->bits);
        ctl_report_print(stdout, r, rr);
}

/* Where the samples came from: file, or source and captured. */
static int put_origin(const Assess *a, struct json_object *o) {
        int r = 0;

        if (a->file)
                return json_put(o, "file", json_object_new_string(a->file));
        r |= json_put(o, "source", json_object_new_string(a->capture.source));
        r |= json_put(o, "captured", json_object_new_string(a->capture.direct ? "direct" : "truerandomd"));
        return r;
}

/* Prints o (r: whether building it failed) on one line and drops it. */
static int emit_json(struct json_object *o, int r) {
        const char *text;

        text = r || !o ? NULL : json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (text)
                puts(text);
        json_object_put(o);
        return text ? EXIT_OK : ctl_fail(EXIT_FAILED, "out of memory");
}

static int print_json(const Assess *a, const EaReport *rep, const EaRestartReport *rr) {
        struct json_object *o = ea_report_to_json(rep);
        int r = o ? 0 : -ENOMEM;

        r |= put_origin(a, o);
        if (rr)
                r |= json_put(o, "restart", ctl_restart_to_json(rr));
        return emit_json(o, r);
}

/* ---- --gate ------------------------------------------------------------------------- */

static int gate(const Assess *a) {
        CtlSamples samples = { 0 };
        CtlProgress p;
        CtlSteps s = { .progress = &p, .what = "window" };
        AssessGate g;
        int code, r;

        ctl_progress_init(&p, a->file ? "assess" : a->capture.source);
        code = a->file ? load_file(a->file, a->bits, a->window, &samples) : ctl_samples_capture(&a->capture, a->capture.samples, 1, &p, &samples);
        if (code != EXIT_OK)
                return code;
        ctl_progress_restart(&p);
        r = assess_gate_run(samples.p, samples.n, a->window, &a->policy, ctl_steps_show, &s, &g);
        free(samples.p);
        if (r < 0) {
                ctl_progress_break(&p);
                return ctl_fail(EXIT_FAILED, "the gate: %s", strerror(-r));
        }
        if (a->json) {
                struct json_object *o = assess_gate_to_json(&g);

                code = emit_json(o, o ? put_origin(a, o) : -ENOMEM);
        } else {
                print_origin(a, samples.n, a->policy.bits);
                assess_gate_print(&g, stdout);
        }
        assess_gate_done(&g);
        if (code == EXIT_OK && fflush(stdout) != 0)
                code = ctl_fail(EXIT_FAILED, "writing the result: %s", strerror(errno));
        return code;
}

/* ---- the whole capture -------------------------------------------------------------- */

static int assess(const Assess *a) {
        CtlSamples samples = { 0 }, matrix = { 0 };
        EaRestartReport rr;
        EaReport rep;
        CtlProgress p;
        int code;

        ctl_progress_init(&p, a->file ? "assess" : a->capture.source);
        if (a->file)
                code = load_file(a->file, a->bits, 0, &samples);
        else {
                code = ctl_samples_capture(&a->capture, a->capture.samples, 1, &p, &samples);
                if (code == EXIT_OK && a->restart)
                        code = ctl_samples_capture(&a->capture, CTL_RESTART_SAMPLES, CTL_RESTART_ROWS, &p, &matrix);
        }
        if (code == EXIT_OK)
                code = ctl_samples_estimate(&samples, a->file ? a->bits : 8, &p, &rep);
        if (code == EXIT_OK && a->restart)
                code = ctl_samples_restart(&matrix, rep.min_entropy, &p, &rr);
        if (code == EXIT_OK && a->json)
                code = print_json(a, &rep, a->restart ? &rr : NULL);
        else if (code == EXIT_OK)
                print_text(a, &rep, a->restart ? &rr : NULL);
        if (code == EXIT_OK && fflush(stdout) != 0)
                code = ctl_fail(EXIT_FAILED, "writing the result: %s", strerror(errno));
        if (code == EXIT_OK && a->restart && !rr.passed)
                code = EXIT_RESTART;
        free(samples.p);
        free(matrix.p);
        return code;
}

/* ---- the verb ---------------------------------------------------------------------- */

enum {
        ARG_RESTART = CTL_OPTION_VERB,
        ARG_DIRECT,
        ARG_JSON,
        ARG_GATE,
        ARG_CREDIT,
        ARG_CAP,
        ARG_WINDOW,
};

const struct option verb_assess_options[] = {
        { "samples", required_argument, NULL, 'n' },
        { "restart", no_argument, NULL, ARG_RESTART },
        { "direct", no_argument, NULL, ARG_DIRECT },
        { "json", no_argument, NULL, ARG_JSON },
        { "file", required_argument, NULL, 'f' },
        { "bits", required_argument, NULL, 'b' },
        { "gate", no_argument, NULL, ARG_GATE },
        { "credit", required_argument, NULL, ARG_CREDIT },
        { "cap", required_argument, NULL, ARG_CAP },
        { "window", required_argument, NULL, ARG_WINDOW },
        CTL_GLOBAL_OPTIONS,
};

/* The options given, for the checks that tie them together. */
typedef struct Given {
        bool samples, bits, credit, cap, window;
} Given;

/* --gate's own: EXIT_OK or the usage error. The policy and the default
 * capture follow from the rest. */
static int check_gate(Assess *a, const Given *g) {
        if ((g->credit || g->cap || g->window) && !a->gate)
                return ctl_fail(EXIT_USAGE, "--credit, --cap and --window apply to assess --gate only");
        if (!a->gate)
                return EXIT_OK;
        if (a->restart)
                return ctl_fail(EXIT_USAGE, "--restart does not apply to assess --gate");
        if (g->cap && !a->policy.auto_credit)
                return ctl_fail(EXIT_USAGE, "--cap applies to --credit auto only");
        if (g->samples && a->capture.samples < a->window)
                return ctl_fail(EXIT_USAGE, "assess --gate --samples %" PRIu64 ": fewer than one window of %" PRIu32
                                            " (--window)", a->capture.samples, a->window);
        if (!g->samples)
                a->capture.samples = (uint64_t) ASSESS_GATE_WINDOWS_DEFAULT * a->window;
        if (!g->cap)
                a->policy.cap_mbits = assess_gate_default_cap(a->capture.source);
        a->policy.bits = a->file ? a->bits : 8;
        return EXIT_OK;
}

/* Which options go together; EXIT_OK or the usage error. */
static int check_options(Assess *a, const Given *g) {
        if ((g->samples || a->restart || a->capture.direct) && a->file)
                return ctl_fail(EXIT_USAGE, "--samples, --restart and --direct apply to raw and to assess SOURCE only");
        if (g->bits && !a->file)
                return ctl_fail(EXIT_USAGE, "--bits applies to assess --file only: a source's samples have 8 bits");
        if (!!a->file == !!a->capture.source)
                return ctl_fail(EXIT_USAGE, "assess takes a SOURCE or --file FILE (one of them)");
        if (g->samples && (a->capture.samples < EA_SAMPLES_MIN || a->capture.samples > EA_SAMPLES_MAX))
                return ctl_fail(EXIT_USAGE, "assess --samples must be in [%u, %zu]", EA_SAMPLES_MIN, EA_SAMPLES_MAX);
        return check_gate(a, g);
}

/* The options of the gate; EXIT_OK, or the usage error. */
static int parse_gate_option(int c, Assess *a, Given *g) {
        uint64_t v;

        switch (c) {
        case ARG_GATE:
                a->gate = true;
                return EXIT_OK;
        case ARG_CREDIT:
                g->credit = true;
                if (assess_gate_parse_credit(optarg, &a->policy) < 0)
                        return ctl_fail(EXIT_USAGE, "--credit must be auto or bits per sample in (0, 8], such as 0.5");
                return EXIT_OK;
        case ARG_CAP:
                g->cap = true;
                if (assess_gate_parse_cap(optarg, &a->policy) < 0)
                        return ctl_fail(EXIT_USAGE, "--cap must be bits per sample in (0, 8], such as 1.0");
                return EXIT_OK;
        case ARG_WINDOW:
                g->window = true;
                if (ctl_parse_number(optarg, GATE_WINDOW_MIN, GATE_WINDOW_MAX, &v) < 0)
                        return ctl_fail(EXIT_USAGE, "--window must be a number of samples in [%u, %u]", GATE_WINDOW_MIN,
                                        GATE_WINDOW_MAX);
                a->window = (uint32_t) v;
                return EXIT_OK;
        default:
                return ctl_option_global(c) ? EXIT_OK : EXIT_USAGE;
        }
}

static int parse_options(int argc, char *argv[], Assess *a) {
        Given g = { 0 };
        uint64_t v;
        int c, code;

        while ((c = ctl_getopt(argc, argv, verb_assess_options, NULL)) >= 0)
                switch (c) {
                case 'n':
                        if (ctl_parse_number(optarg, 1, CTL_RAW_SAMPLES_MAX, &a->capture.samples) < 0)
                                return ctl_fail(EXIT_USAGE, "--samples must be a number in [1, %u]",
                                                CTL_RAW_SAMPLES_MAX);
                        g.samples = true;
                        break;
                case ARG_RESTART:
                        a->restart = true;
                        break;
                case ARG_DIRECT:
                        a->capture.direct = true;
                        break;
                case ARG_JSON:
                        a->json = true;
                        break;
                case 'f':
                        a->file = optarg;
                        break;
                case 'b':
                        if (ctl_parse_number(optarg, 1, 8, &v) < 0)
                                return ctl_fail(EXIT_USAGE, "--bits must be a number in [1, 8]");
                        a->bits = (unsigned) v;
                        g.bits = true;
                        break;
                default:
                        code = parse_gate_option(c, a, &g);
                        if (code != EXIT_OK)
                                return code;
                }
        a->capture.source = optind + 1 < argc ? argv[optind + 1] : NULL;
        return check_options(a, &g);
}

int verb_assess(int argc, char *argv[], const CtlContext *ctx) {
        Assess a = { .capture = { .samples = CTL_RAW_SAMPLES_DEFAULT, .rows = 1, .config_path = ctx->config,
                                     .socket_path = ctx->socket },
                        .bits = 8,
                        .window = GATE_WINDOW_DEFAULT,
                        .policy = { .auto_credit = true } };
        int code;

        code = parse_options(argc, argv, &a);
        if (code != EXIT_OK)
                return code;
        return a.gate ? gate(&a) : assess(&a);
}
