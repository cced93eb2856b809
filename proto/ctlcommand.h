/* ctlcommand.h - the commands of the control protocol, as one table: each
 * row a command's name, whether truerandomd serves it to root only, and
 * the key=value arguments it takes with their bounds. ctlproto.c parses
 * and formats requests from these rows; the daemon finds a command's
 * handler by its name (daemon/control/commands.c); truerandomctl's verbs
 * name the command they send (ctl/verb-*.c).
 *
 * Adding a command is a row here and a row and a function in the daemon
 * (daemon/commands.c); truerandomctl serves it from this row. An
 * argument is a row of ctlcommand.c's argument table, stored in the
 * CtlRequest field it names (a new kind of value needs a field there).
 * Pure data, no I/O.
 * Flow: truerandomctl -> [ctlcommand] -> socket -> control -> daemon. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum CtlArgKind {
        CTL_ARG_NAME,   /* 1..CTL_SOURCE_NAME_MAX of [A-Za-z0-9._-], in a char[CTL_SOURCE_NAME_MAX + 1] */
        CTL_ARG_NUMBER, /* decimal, no sign or leading zero, in [min, max], in a uint64_t */
} CtlArgKind;

typedef struct CtlArg {
        const char *key;
        CtlArgKind kind;
        uint64_t min, max;      /* a number's bounds */
        uint64_t fallback;      /* a number's value when a request does not give it */
        size_t field;           /* offsetof() its value in CtlRequest */
} CtlArg;

#define CTL_COMMAND_ARGS_MAX 4U

typedef struct CtlCommandArg {
        const CtlArg *arg;
        bool required;
} CtlCommandArg;

typedef struct CtlCommand {
        const char *name;
        bool root;                                  /* truerandomd serves it to uid 0 only */
        /* truerandomd serves it to uid 0 and to a peer holding
         * CAP_SYS_ADMIN in its user namespace, the initial one: what may
         * feed the kernel's pool may say it did (truerandom-seed-kernel). */
        bool admin;
        CtlCommandArg args[CTL_COMMAND_ARGS_MAX];   /* in wire order, the rest { NULL } */
        /* truerandomctl's line of help for it. A command truerandomctl has
         * no verb of its own for is served from this row alone: a name
         * argument is given as a word, a number as --key N, and an "ok"
         * reply's payload is printed (ctl/verb-command.c). */
        const char *help;
} CtlCommand;

/* kernel-fed's reasons, as truerandom-seed-kernel names its feeds (in the
 * order of seed/feeder.h's FeedReason after NONE), and the daemon checks
 * them. */
#define CTL_FEED_REASONS 4U
extern const char *const ctl_feed_reasons[CTL_FEED_REASONS];
/* Whether s is one of them. */
bool ctl_feed_reason_known(const char *s);

/* Every command, ended by a row whose name is NULL. */
extern const CtlCommand ctl_commands[];
/* Every argument any command takes, ended by a row whose key is NULL. */
extern const CtlArg ctl_args[];

/* The command of that name (n bytes, not NUL-terminated), or NULL. */
const CtlCommand *ctl_command_lookup(const char *name, size_t n);
/* The same for a C string. */
const CtlCommand *ctl_command_from_string(const char *name);
/* Whether c is a row of ctl_commands[]. */
bool ctl_command_valid(const CtlCommand *c);
