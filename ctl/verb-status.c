/* verb-status.c - truerandomctl status [--json|--format=F] [--full]: the
 * daemon's status as text (render.h: 80 columns on a terminal, whole lines
 * into a pipe or with --full), as the JSON it came in, or as OpenMetrics.
 * Whatever the form, the exit code is the verdict a monitor acts on (0
 * serving, 1 degraded, 2 not serving, 3 unreachable); with no status to
 * judge, the machine forms still say so on stdout.
 * Flow: truerandomctl -> [verb-status] -> client -> daemon; -> render. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "client.h"
#include "render.h"
#include "util/cleanup.h"
#include "verb.h"

typedef enum StatusFormat {
        FORMAT_TEXT,
        FORMAT_JSON,
        FORMAT_OPENMETRICS,
        FORMAT_PROMETHEUS,
} StatusFormat;

enum {
        ARG_JSON = CTL_OPTION_VERB,
        ARG_FORMAT,
        ARG_FULL,
};

const struct option verb_status_options[] = {
        { "json", no_argument, NULL, ARG_JSON },
        { "format", required_argument, NULL, ARG_FORMAT },
        { "full", no_argument, NULL, ARG_FULL },
        CTL_GLOBAL_OPTIONS,
};

static int parse_options(int argc, char *argv[], StatusFormat *ret, bool *ret_full) {
        static const char *const formats[] = {
                [FORMAT_TEXT] = "text",
                [FORMAT_JSON] = "json",
                [FORMAT_OPENMETRICS] = "openmetrics",
                [FORMAT_PROMETHEUS] = "prometheus",
        };
        StatusFormat format = FORMAT_TEXT;
        bool json = false;
        int c;

        while ((c = ctl_getopt(argc, argv, verb_status_options, NULL)) >= 0) {
                if (c == ARG_JSON)
                        json = true;
                else if (c == ARG_FULL)
                        *ret_full = true;
                else if (c == ARG_FORMAT) {
                        for (format = 0; format < ELEMENTSOF(formats); format++)
                                if (strcmp(optarg, formats[format]) == 0)
                                        break;
                        if (format == ELEMENTSOF(formats))
                                return ctl_fail(EXIT_USAGE,
                                                "--format takes text, json, openmetrics or prometheus, not '%s'",
                                                optarg);
                } else if (!ctl_option_global(c))
                        return EXIT_USAGE;
        }
        *ret = json ? FORMAT_JSON : format;
        return EXIT_OK;
}

static CtlMetricsFormat metrics_format(StatusFormat format) {
        return format == FORMAT_PROMETHEUS ? CTL_METRICS_PROMETHEUS : CTL_METRICS_OPENMETRICS;
}

/* The verdict on the status, after printing it (*ret_judged); or, when
 * there is no status to judge, an exit code other than a verdict's. */
static int show_status(StatusFormat format, bool full, const char *socket_path, bool *ret_judged) {
        _cleanup_free_ uint8_t *buf = malloc(CTL_REPLY_MAX);
        CtlStatus *status = NULL;
        CtlRequest req;
        CtlReply r;
        int code, verdict;

        ctl_request_init(&req, ctl_command_from_string("status"));
        code = ctl_request_ok(socket_path, &req, buf, &r);
        if (code == EXIT_OK && ctl_status_parse((const char *) r.payload, r.payload_size, &status) < 0)
                code = ctl_fail(EXIT_PROTOCOL, "truerandomd sent a status this version cannot read");
        if (code != EXIT_OK)
                return code;
        verdict = (int) ctl_status_health(status);
        if (format == FORMAT_JSON) {
                fwrite(r.payload, 1, r.payload_size, stdout);
                fputc('\n', stdout);
        } else if (format == FORMAT_OPENMETRICS || format == FORMAT_PROMETHEUS)
                code = ctl_render_metrics(status, metrics_format(format), stdout) < 0 ? EXIT_FAILED : EXIT_OK;
        else
                ctl_render_text_full(status, stdout, full);
        ctl_status_free(status);
        if (code != EXIT_OK || fflush(stdout) != 0)
                return ctl_fail(EXIT_FAILED, "writing the status: %s", strerror(errno));
        *ret_judged = true;
        return verdict;
}

/* No status to show: the daemon is not there, refused, or answered
 * nothing readable. The machine-readable forms still say so on stdout, so
 * a monitor reading them never mistakes silence for an old reading. */
static int status_unreachable(StatusFormat format) {
        if (format == FORMAT_JSON) {
                struct json_object *j = json_object_new_object();

                if (j) {
                        json_object_object_add(j, "version", json_object_new_int(CTL_STATUS_VERSION));
                        json_object_object_add(j, "reachable", json_object_new_boolean(false));
                        json_object_object_add(j, "error", json_object_new_string(ctl_last_failure()));
                        puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
                        json_object_put(j);
                }
        } else if (format == FORMAT_OPENMETRICS || format == FORMAT_PROMETHEUS)
                (void) ctl_render_metrics(NULL, metrics_format(format), stdout);
        fflush(stdout);
        return EXIT_NOT_RUNNING;
}

int verb_status(int argc, char *argv[], const CtlContext *ctx) {
        _cleanup_free_ char *socket_path = NULL;
        StatusFormat format = FORMAT_TEXT;
        bool judged = false, full = false;
        int code;

        code = parse_options(argc, argv, &format, &full);
        if (code != EXIT_OK)
                return code;
        socket_path = ctl_socket_path(ctx->socket, ctx->config);
        if (!socket_path)
                code = ctl_fail(EXIT_FAILED, "out of memory");
        else
                /* 80 columns are for a terminal: into a pipe or a file,
                 * nothing is cut (the reason of a refused reload is the
                 * part a cut loses). */
                code = show_status(format, full || !isatty(STDOUT_FILENO), socket_path, &judged);
        /* The verdicts (CtlHealth), and 3 when there is none. */
        return judged ? code : status_unreachable(format);
}
