/* verb-raw.c - truerandomctl raw SOURCE [--samples N] [--restart] [-o FILE]
 * [--direct]: raw 8-bit samples, one per byte, as NIST's ea_non_iid and
 * ea_restart read them, through the daemon (root) or --direct in this
 * process (capture.h), to stdout or to a file that appears only when
 * complete (capture-file.h). Never to a terminal.
 * Flow: truerandomctl -> [verb-raw] -> capture -> stdout or capture-file. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture-file.h"
#include "capture.h"
#include "client.h"
#include "util/fdio.h"
#include "verb.h"

enum {
        ARG_RESTART = CTL_OPTION_VERB,
        ARG_DIRECT,
};

const struct option verb_raw_options[] = {
        { "samples", required_argument, NULL, 'n' },
        { "restart", no_argument, NULL, ARG_RESTART },
        { "output", required_argument, NULL, 'o' },
        { "direct", no_argument, NULL, ARG_DIRECT },
        CTL_GLOBAL_OPTIONS,
};

/* The capture the options ask for, into *c, and the file (NULL: stdout). */
static int parse_options(int argc, char *argv[], CtlCapture *c, const char **ret_output) {
        bool samples_set = false, restart = false;
        const char *output = NULL;
        int opt;

        while ((opt = ctl_getopt(argc, argv, verb_raw_options, NULL)) >= 0)
                switch (opt) {
                case 'n':
                        if (ctl_parse_number(optarg, 1, CTL_RAW_SAMPLES_MAX, &c->samples) < 0)
                                return ctl_fail(EXIT_USAGE, "--samples must be a number in [1, %u]",
                                                CTL_RAW_SAMPLES_MAX);
                        samples_set = true;
                        break;
                case ARG_RESTART:
                        restart = true;
                        break;
                case 'o':
                        output = optarg;
                        break;
                case ARG_DIRECT:
                        c->direct = true;
                        break;
                default:
                        if (!ctl_option_global(opt))
                                return EXIT_USAGE;
                }
        if (restart && samples_set)
                return ctl_fail(EXIT_USAGE, "--restart always takes %u x %u samples; drop --samples",
                                CTL_RESTART_ROWS, CTL_RESTART_SAMPLES);
        if (!output && isatty(STDOUT_FILENO))
                return ctl_fail(EXIT_USAGE, "refusing to write binary samples to a terminal; use -o FILE or redirect");
        if (restart) {
                c->samples = CTL_RESTART_SAMPLES;
                c->rows = CTL_RESTART_ROWS;
        }
        *ret_output = output;
        return EXIT_OK;
}

static int write_sink(void *userdata, const uint8_t *samples, size_t n) {
        return fd_write_all(*(int *) userdata, samples, n);
}

/* The capture into output, which appears only when it is complete. */
static int raw_to_file(const CtlCapture *c, CtlProgress *p, const char *output) {
        int out, code, r;

        out = capture_file_create(output);
        if (out < 0)
                return ctl_fail(EXIT_FAILED, "cannot create a file beside %s: %s", output, strerror(-out));
        code = ctl_capture(c, p, write_sink, &out, output);
        r = capture_file_end(out, output, code == EXIT_OK);
        if (code == EXIT_OK && r < 0)
                code = ctl_fail(EXIT_FAILED, "writing %s: %s", output, strerror(-r));
        if (code != EXIT_OK)
                fprintf(stderr, "truerandomctl: removed the incomplete capture; %s was not written\n", output);
        return code;
}

int verb_raw(int argc, char *argv[], const CtlContext *ctx) {
        CtlCapture c = { .samples = CTL_RAW_SAMPLES_DEFAULT, .rows = 1, .config_path = ctx->config,
                         .socket_path = ctx->socket };
        const char *output = NULL;
        CtlProgress p;
        int code, out = STDOUT_FILENO;

        code = parse_options(argc, argv, &c, &output);
        if (code != EXIT_OK)
                return code;
        c.source = argv[optind + 1];
        ctl_progress_init(&p, c.source);
        if (output)
                return raw_to_file(&c, &p, output);
        return ctl_capture(&c, &p, write_sink, &out, "stdout");
}
