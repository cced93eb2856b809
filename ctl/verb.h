/* verb.h - what every verb of truerandomctl shares: the global options,
 * the context they give, and the option parsing each verb does on its own
 * table (getopt_long, with the short options read off the table). The
 * verbs themselves are rows of truerandomctl.c's table, one file each
 * (verb-*.c); their functions are declared here.
 *
 * Options may stand before or after the verb, as getopt_long permutes
 * them: truerandomctl.c finds the verb and handles the global options,
 * then the verb parses argv again, its own options only; argv[optind] is
 * then the verb's name and what follows its SOURCE arguments.
 * Flow: truerandomctl -> [verb] -> verb-*.c. */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the global options say. */
typedef struct CtlContext {
        const char *socket;   /* --socket; NULL: the configuration's */
        const char *config;   /* --config; NULL: the default file */
        const struct CtlCommand *command; /* verb_command(): the command it serves */
} CtlContext;

/* Long options without a letter take values from here up; each verb
 * numbers its own from CTL_OPTION_VERB. */
enum {
        CTL_OPTION_VERSION = 0x100,
        CTL_OPTION_VERB = 0x200,
};

/* The rows every verb's table ends with. */
#define CTL_GLOBAL_OPTIONS                                                     \
        { "socket", required_argument, NULL, 's' },                            \
        { "config", required_argument, NULL, 'c' },                            \
        { "help", no_argument, NULL, 'h' },                                    \
        { "version", no_argument, NULL, CTL_OPTION_VERSION },                  \
        { NULL, 0, NULL, 0 }

/* getopt_long() over options (ended by a NULL name), its short options
 * being the rows whose value is a letter. *ret_index (may be NULL) gets
 * the row of a long option. */
int ctl_getopt(int argc, char *argv[], const struct option *options, int *ret_index);
/* Whether getopt's c is a global option (truerandomctl.c's, a verb skips it). */
bool ctl_option_global(int c);

/* A decimal number in [min, max]: 0, or -EINVAL, -ERANGE. */
int ctl_parse_number(const char *s, uint64_t min, uint64_t max, uint64_t *ret);

/* ---- the verbs: each parses argv with its options and returns an exit code
 * (client.h) ---- */

extern const struct option verb_status_options[];
int verb_status(int argc, char *argv[], const CtlContext *ctx);
extern const struct option verb_raw_options[];
int verb_raw(int argc, char *argv[], const CtlContext *ctx);
extern const struct option verb_assess_options[];
int verb_assess(int argc, char *argv[], const CtlContext *ctx);
extern const struct option verb_ledger_options[];
int verb_ledger(int argc, char *argv[], const CtlContext *ctx);
extern const struct option verb_evidence_options[];
int verb_evidence(int argc, char *argv[], const CtlContext *ctx);
/* verb-command.c: any control command without a verb of its own, served
 * from its row of proto's table (ctx->command). */
struct CtlCommand;
int verb_command(int argc, char *argv[], const CtlContext *ctx);
/* Its options (a --key N per number argument, then the global ones, then
 * the NULL row) into out[max]; returns how many were written. */
size_t verb_command_options(const struct CtlCommand *c, struct option *out, size_t max);
/* How many words (name arguments) may follow it. */
unsigned verb_command_words(const struct CtlCommand *c);
