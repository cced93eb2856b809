/* truerandomctl.c - the command line of truerandomd's control client:
 * status, raw sample export and assessment for SP 800-90B, reseed.
 *
 * This file parses the command line (getopt_long) and runs status and
 * reseed; raw lives in capture.c, assess in ctlassess.c, the socket and
 * the exit codes in client.c. One request per connection (ctlproto.h).
 * Every failure is one line on stderr and a documented exit code
 * (truerandomctl(1)). */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "config-build.h"
#include "config/config.h"
#include "ctlassess.h"
#include "capture.h"
#include "client.h"
#include "render.h"
#include "estimate/noniid.h"
#include "proto/ctlproto.h"

typedef enum StatusFormat {
        FORMAT_TEXT,
        FORMAT_JSON,
        FORMAT_OPENMETRICS,
} StatusFormat;

typedef enum Command {
        COMMAND_STATUS,
        COMMAND_RESEED,
        COMMAND_RAW,
        COMMAND_ASSESS,
} Command;

typedef struct Options {
        Command command;
        const char *socket;
        const char *config;
        StatusFormat format;
        bool format_set, json, samples_set, restart, direct, bits_set;
        uint64_t samples;
        unsigned bits;
        const char *source, *output, *file;
} Options;

static void usage(FILE *f) {
        fprintf(f,
                "Usage: truerandomctl [OPTIONS] COMMAND [ARGUMENTS]\n"
                "Query and control truerandomd; capture and assess its noise sources.\n\n"
                "Commands:\n"
                "  status [--json|--format=F] sources, store, devices, CRNG; exit 0 serving,\n"
                "                           1 degraded, 2 not serving, 3 unreachable\n"
                "  raw SOURCE [--samples N] [--restart] [-o FILE] [--direct]\n"
                "                           raw 8-bit samples for SP 800-90B tools (root)\n"
                "  assess SOURCE [--samples N] [--restart] [--json] [--direct]\n"
                "                           the SP 800-90B non-IID estimators on a capture\n"
                "  assess --file FILE [--bits B] [--json]\n"
                "                           the same on a capture file, no daemon needed\n"
                "  reseed                   reseed the CRNG now (root)\n\n"
                "Options:\n"
                "  -s, --socket PATH   control socket (default: [control] socket of the\n"
                "                      configuration, else %s/truerandomd/control)\n"
                "  -c, --config FILE   the configuration (default %s)\n"
                "      --json          status or assess as JSON (stable, see truerandomctl(1))\n"
                "      --format=F      status as text, json, or openmetrics (Prometheus)\n"
                "  -n, --samples N     samples to capture (default %u)\n"
                "      --restart       raw: %u rows of %u samples, the source restarted before\n"
                "                      each (ea_restart's input); assess: the restart test too\n"
                "      --direct        capture in this process with the sampler and parameters\n"
                "                      of the configuration: no daemon, no CUSE\n"
                "  -o, --output FILE   raw: write samples to FILE (default: stdout)\n"
                "  -f, --file FILE     assess: a capture file, one sample per byte\n"
                "  -b, --bits B        assess --file: bits per sample, 1 to 8 (default 8)\n"
                "  -h, --help          this help\n"
                "      --version       print the version\n",
                RUNSTATEDIR, CONFIG_DEFAULT_PATH, CTL_RAW_SAMPLES_DEFAULT, CTL_RESTART_ROWS, CTL_RESTART_SAMPLES);
}

static int parse_number(const char *s, uint64_t min, uint64_t max, uint64_t *ret) {
        char *end;
        unsigned long long v;

        if (!*s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end || v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

/* Which options each command takes; EXIT_OK or the usage error. */
static int check_combination(const Options *o) {
        bool status = o->command == COMMAND_STATUS, raw = o->command == COMMAND_RAW,
             assess = o->command == COMMAND_ASSESS, capture = raw || (assess && !o->file);

        if (o->format_set && !status)
                return ctl_fail(EXIT_USAGE, "--format applies to status only");
        if (o->json && !status && !assess)
                return ctl_fail(EXIT_USAGE, "--json applies to status and assess only");
        if ((o->samples_set || o->restart || o->direct) && !capture)
                return ctl_fail(EXIT_USAGE, "--samples, --restart and --direct apply to raw and to assess SOURCE only");
        if (o->output && !raw)
                return ctl_fail(EXIT_USAGE, "--output applies to raw only");
        if ((o->file || o->bits_set) && !assess)
                return ctl_fail(EXIT_USAGE, "--file and --bits apply to assess only");
        if (o->bits_set && !o->file)
                return ctl_fail(EXIT_USAGE, "--bits applies to assess --file only: a source's samples have 8 bits");
        if (assess && !!o->file == !!o->source)
                return ctl_fail(EXIT_USAGE, "assess takes a SOURCE or --file FILE (one of them)");
        if (raw && o->restart && o->samples_set)
                return ctl_fail(EXIT_USAGE, "--restart always takes %u x %u samples; drop --samples",
                                CTL_RESTART_ROWS, CTL_RESTART_SAMPLES);
        if (assess && o->samples_set && (o->samples < EA_SAMPLES_MIN || o->samples > EA_SAMPLES_MAX))
                return ctl_fail(EXIT_USAGE, "assess --samples must be in [%u, %zu]", EA_SAMPLES_MIN, EA_SAMPLES_MAX);
        if (raw && !o->output && isatty(STDOUT_FILENO))
                return ctl_fail(EXIT_USAGE, "refusing to write binary samples to a terminal; use -o FILE or redirect");
        return EXIT_OK;
}

/* Returns EXIT_OK, or the exit code after printing why. */
static int parse_args(int argc, char *argv[], Options *o) {
        enum { ARG_JSON = 0x100, ARG_FORMAT, ARG_RESTART, ARG_DIRECT, ARG_VERSION };
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },
                { "config", required_argument, NULL, 'c' },
                { "json", no_argument, NULL, ARG_JSON },
                { "format", required_argument, NULL, ARG_FORMAT },
                { "samples", required_argument, NULL, 'n' },
                { "restart", no_argument, NULL, ARG_RESTART },
                { "direct", no_argument, NULL, ARG_DIRECT },
                { "output", required_argument, NULL, 'o' },
                { "file", required_argument, NULL, 'f' },
                { "bits", required_argument, NULL, 'b' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { 0 },
        };
        static const char *const commands[] = {
                [COMMAND_STATUS] = "status",
                [COMMAND_RESEED] = "reseed",
                [COMMAND_RAW] = "raw",
                [COMMAND_ASSESS] = "assess",
        };
        const char *command;
        uint64_t v;
        int c;

        o->samples = CTL_RAW_SAMPLES_DEFAULT;
        o->bits = 8;
        while ((c = getopt_long(argc, argv, "s:c:n:o:f:b:h", options, NULL)) >= 0) {
                switch (c) {
                case 's':
                        o->socket = optarg;
                        break;
                case 'c':
                        o->config = optarg;
                        break;
                case ARG_JSON:
                        o->json = true;
                        break;
                case ARG_FORMAT:
                        if (strcmp(optarg, "text") == 0)
                                o->format = FORMAT_TEXT;
                        else if (strcmp(optarg, "json") == 0)
                                o->format = FORMAT_JSON;
                        else if (strcmp(optarg, "openmetrics") == 0)
                                o->format = FORMAT_OPENMETRICS;
                        else
                                return ctl_fail(EXIT_USAGE, "--format takes text, json or openmetrics, not '%s'", optarg);
                        o->format_set = true;
                        break;
                case 'n':
                        if (parse_number(optarg, 1, CTL_RAW_SAMPLES_MAX, &o->samples) < 0)
                                return ctl_fail(EXIT_USAGE, "--samples must be a number in [1, %u]", CTL_RAW_SAMPLES_MAX);
                        o->samples_set = true;
                        break;
                case ARG_RESTART:
                        o->restart = true;
                        break;
                case ARG_DIRECT:
                        o->direct = true;
                        break;
                case 'o':
                        o->output = optarg;
                        break;
                case 'f':
                        o->file = optarg;
                        break;
                case 'b':
                        if (parse_number(optarg, 1, 8, &v) < 0)
                                return ctl_fail(EXIT_USAGE, "--bits must be a number in [1, 8]");
                        o->bits = (unsigned) v;
                        o->bits_set = true;
                        break;
                case 'h':
                        usage(stdout);
                        exit(EXIT_OK);
                case ARG_VERSION:
                        printf("truerandomctl %s\n", TRUERANDOM_VERSION);
                        exit(EXIT_OK);
                default:
                        usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc)
                return ctl_fail(EXIT_USAGE, "missing command (status, raw, assess or reseed); see --help");
        command = argv[optind++];
        for (c = 0; c < (int) (sizeof(commands) / sizeof(commands[0])); c++)
                if (strcmp(command, commands[c]) == 0)
                        break;
        if (c == (int) (sizeof(commands) / sizeof(commands[0])))
                return ctl_fail(EXIT_USAGE, "unknown command '%s' (status, raw, assess or reseed)", command);
        o->command = (Command) c;
        if ((o->command == COMMAND_RAW || o->command == COMMAND_ASSESS) && optind < argc)
                o->source = argv[optind++];
        if (o->command == COMMAND_RAW && !o->source)
                return ctl_fail(EXIT_USAGE, "raw needs a SOURCE (jitter, rdseed, hwrng, file)");
        if (optind < argc)
                return ctl_fail(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
        if (o->json && o->command == COMMAND_STATUS) {
                o->format = FORMAT_JSON;
                o->format_set = true;
        }
        return check_combination(o);
}

/* The verdict on the status, after printing it; or, when there is no
 * status to judge, an exit code other than a verdict's. */
/* One request, one "ok" reply into buf (CTL_REPLY_MAX bytes). */
static int request_ok(const char *socket_path, const char *command, uint8_t *buf, CtlReply *ret) {
        CtlRequest req;
        int fd = -1, code;

        ctl_request_init(&req, ctl_command_from_string(command));
        if (!buf)
                return ctl_fail(EXIT_FAILED, "out of memory");
        code = ctl_request(socket_path, &req, CTL_CLIENT_TIMEOUT_S, &fd);
        if (code == EXIT_OK)
                code = ctl_receive(fd, buf, CTL_CLIENT_TIMEOUT_S, ret);
        if (code == EXIT_OK && ret->kind != CTL_REPLY_OK)
                code = ctl_reply_error(ret);
        if (fd >= 0)
                close(fd);
        return code;
}

static int do_status(const Options *o, const char *socket_path, bool *ret_judged) {
        CtlStatus *status = NULL;
        uint8_t *buf = malloc(CTL_REPLY_MAX);
        CtlReply r;
        int code, verdict;

        code = request_ok(socket_path, "status", buf, &r);
        if (code == EXIT_OK && ctl_status_parse((const char *) r.payload, r.payload_size, &status) < 0)
                code = ctl_fail(EXIT_PROTOCOL, "truerandomd sent a status this version cannot read");
        if (code == EXIT_OK) {
                verdict = (int) ctl_status_health(status);
                if (o->format == FORMAT_JSON) {
                        fwrite(r.payload, 1, r.payload_size, stdout);
                        fputc('\n', stdout);
                } else if (o->format == FORMAT_OPENMETRICS)
                        code = ctl_render_openmetrics(status, stdout) < 0 ? EXIT_FAILED : EXIT_OK;
                else
                        ctl_render_text(status, stdout);
                ctl_status_free(status);
                if (code != EXIT_OK || fflush(stdout) != 0)
                        code = ctl_fail(EXIT_FAILED, "writing the status: %s", strerror(errno));
                else {
                        *ret_judged = true;
                        code = verdict;
                }
        }
        free(buf);
        return code;
}

/* No status to show: the daemon is not there, refused, or answered
 * nothing readable. The machine-readable forms still say so on stdout, so
 * a monitor reading them never mistakes silence for an old reading. */
static int status_unreachable(const Options *o) {
        if (o->format == FORMAT_JSON) {
                struct json_object *j = json_object_new_object();

                if (j) {
                        json_object_object_add(j, "version", json_object_new_int(CTL_STATUS_VERSION));
                        json_object_object_add(j, "reachable", json_object_new_boolean(false));
                        json_object_object_add(j, "error", json_object_new_string(ctl_last_failure()));
                        puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
                        json_object_put(j);
                }
        } else if (o->format == FORMAT_OPENMETRICS)
                (void) ctl_render_openmetrics(NULL, stdout);
        fflush(stdout);
        return EXIT_NOT_RUNNING;
}

static int do_reseed(const char *socket_path) {
        uint8_t *buf = malloc(CTL_REPLY_MAX);
        CtlReply r;
        int code = request_ok(socket_path, "reseed", buf, &r);

        free(buf);
        return code;
}

int main(int argc, char *argv[]) {
        Options o = { 0 };
        CtlCapture capture;
        char *socket_path = NULL;
        bool judged = false;
        int code;

        code = parse_args(argc, argv, &o);
        if (code != EXIT_OK)
                return code;
        capture = (CtlCapture){
                .source = o.source,
                .samples = o.restart && o.command == COMMAND_RAW ? CTL_RESTART_SAMPLES : o.samples,
                .rows = o.restart && o.command == COMMAND_RAW ? CTL_RESTART_ROWS : 1,
                .direct = o.direct,
                .config_path = o.config,
                .socket_path = o.socket,
        };
        switch (o.command) {
        case COMMAND_RAW:
                return ctl_raw(&capture, o.output);
        case COMMAND_ASSESS:
                return ctl_assess(&(CtlAssess){ .capture = capture, .file = o.file, .bits = o.bits,
                                                .restart = o.restart, .json = o.json });
        default:
                break;
        }
        socket_path = o.socket ? strdup(o.socket) : ctl_configured_socket(o.config);
        if (!socket_path)
                code = ctl_fail(EXIT_FAILED, "out of memory");
        else if (o.command == COMMAND_STATUS)
                code = do_status(&o, socket_path, &judged);
        else
                code = do_reseed(socket_path);
        /* status: the verdicts (CtlHealth), and 3 when there is none. */
        if (o.command == COMMAND_STATUS && !judged)
                code = status_unreachable(&o);
        free(socket_path);
        return code;
}
