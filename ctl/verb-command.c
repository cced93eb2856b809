/* verb-command.c - the verb of every control command truerandomctl has no
 * file of its own for: served from the command's row in proto's table
 * (ctlcommand.h). A name argument is the word after the verb (SOURCE), a
 * number argument --key N; the daemon's "ok" payload, if any, is printed
 * as it came, and an error reply is the usual one line and exit code.
 * So a new control command needs no client code at all.
 * Flow: truerandomctl -> [verb-command] -> client -> daemon. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "proto/ctlcommand.h"
#include "util/cleanup.h"
#include "verb.h"

size_t verb_command_options(const CtlCommand *c, struct option *out, size_t max) {
        static const struct option global[] = { CTL_GLOBAL_OPTIONS };
        size_t n = 0;

        for (size_t i = 0; i < CTL_COMMAND_ARGS_MAX && c->args[i].arg && n + 1 < max; i++)
                if (c->args[i].arg->kind == CTL_ARG_NUMBER)
                        out[n++] = (struct option){ c->args[i].arg->key, required_argument, NULL,
                                                    CTL_OPTION_VERB + (int) i };
        for (size_t i = 0; i < ELEMENTSOF(global) && n < max; i++)
                out[n++] = global[i];
        return n;
}

unsigned verb_command_words(const CtlCommand *c) {
        unsigned n = 0;

        for (size_t i = 0; i < CTL_COMMAND_ARGS_MAX && c->args[i].arg; i++)
                n += c->args[i].arg->kind == CTL_ARG_NAME;
        return n;
}

/* Stores s as argument i of req, checked against the argument's row. */
static int set_argument(CtlRequest *req, size_t i, const char *s) {
        const CtlArg *a = req->command->args[i].arg;
        uint64_t v;

        if (a->kind == CTL_ARG_NAME) {
                if (strlen(s) == 0 || strlen(s) > CTL_SOURCE_NAME_MAX)
                        return ctl_fail(EXIT_USAGE, "%s: '%s' is not a name", req->command->name, s);
                strcpy((char *) req + a->field, s);
                return EXIT_OK;
        }
        if (ctl_parse_number(s, a->min, a->max, &v) < 0)
                return ctl_fail(EXIT_USAGE, "--%s must be a number in [%llu, %llu]", a->key,
                                (unsigned long long) a->min, (unsigned long long) a->max);
        memcpy((char *) req + a->field, &v, sizeof(v));
        return EXIT_OK;
}

/* The words after the verb, in the order of the command's name arguments. */
static int set_words(CtlRequest *req, int argc, char *argv[], int first) {
        int w = first;

        for (size_t i = 0; i < CTL_COMMAND_ARGS_MAX && req->command->args[i].arg; i++) {
                int code;

                if (req->command->args[i].arg->kind != CTL_ARG_NAME)
                        continue;
                if (w >= argc) {
                        if (req->command->args[i].required)
                                return ctl_fail(EXIT_USAGE, "%s needs a %s", req->command->name,
                                                req->command->args[i].arg->key);
                        continue;
                }
                code = set_argument(req, i, argv[w++]);
                if (code != EXIT_OK)
                        return code;
        }
        return EXIT_OK;
}

int verb_command(int argc, char *argv[], const CtlContext *ctx) {
        const CtlCommand *command = ctx->command;
        _cleanup_free_ char *socket_path = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        struct option options[CTL_COMMAND_ARGS_MAX + 8];
        CtlRequest req;
        CtlReply r;
        int c, code;

        verb_command_options(command, options, ELEMENTSOF(options));
        ctl_request_init(&req, command);
        while ((c = ctl_getopt(argc, argv, options, NULL)) >= 0) {
                if (ctl_option_global(c))
                        continue;
                if (c < CTL_OPTION_VERB || c >= CTL_OPTION_VERB + (int) CTL_COMMAND_ARGS_MAX)
                        return EXIT_USAGE;
                code = set_argument(&req, (size_t) (c - CTL_OPTION_VERB), optarg);
                if (code != EXIT_OK)
                        return code;
        }
        code = set_words(&req, argc, argv, optind + 1);
        if (code != EXIT_OK)
                return code;
        socket_path = ctl_socket_path(ctx->socket, ctx->config);
        buf = malloc(CTL_REPLY_MAX);
        if (!socket_path || !buf)
                return ctl_fail(EXIT_FAILED, "out of memory");
        code = ctl_request_ok(socket_path, &req, buf, &r);
        if (code == EXIT_OK && r.payload_size > 0) {
                fwrite(r.payload, 1, r.payload_size, stdout);
                if (r.payload[r.payload_size - 1] != '\n')
                        putchar('\n');
        }
        return code;
}
