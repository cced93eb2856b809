/* truerandomctl.c - truerandomd's control client: status, raw sample
 * export and assessment for SP 800-90B, reseed.
 *
 * The verbs are the table below, each a file of its own (verb-*.c) that
 * parses its own options (verb.h); the socket, the capture, the progress
 * bar and the renderers are modules (client.h, capture.h, progress.h,
 * render.h). This file finds the verb wherever the options stand, takes
 * the options every verb shares, checks the SOURCE arguments' count, and
 * writes the usage from the tables: the verbs from this one, the sources
 * from pool's. Every failure is one line on stderr and a documented exit
 * code (truerandomctl(1)).
 * Every control command without a row below is a verb too, served from
 * its row of proto's table by verb-command.c: a new control command needs
 * nothing here. A verb of its own (its own options, its own output) is a
 * file verb-NAME.c (the function and its option table, declared in
 * verb.h), a row below, the file in meson.build. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess-gate.h"
#include "capture.h"
#include "client.h"
#include "config-build.h"
#include "config/config.h"
#include "evidence-build.h"
#include "proto/ctlcommand.h"
#include "proto/ctlproto.h"
#include "util/cleanup.h"
#include "verb.h"

typedef struct Verb {
        const char *name;
        const CtlCommand *command;          /* served by verb_command(); NULL: by run */
        unsigned min_sources, max_sources;  /* SOURCE arguments after it */
        bool root;                          /* the daemon serves it to root only */
        int (*run)(int argc, char *argv[], const CtlContext *ctx);
        const struct option *options;
        /* The usage: up to three forms, each its synopsis and its line of help. */
        struct {
                const char *synopsis, *help;
        } usage[3];
} Verb;

static const Verb own_verbs[] = {
        { "status", NULL, 0, 0, false, verb_status, verb_status_options,
          { { "[--json|--format=F] [--full]",
              "sources, store, devices, CRNG; exit 0 serving,\n1 degraded, 2 not serving, 3 unreachable" } } },
        { "raw", NULL, 1, 1, true, verb_raw, verb_raw_options,
          { { "SOURCE [--samples N] [--restart] [-o FILE] [--direct]", "raw 8-bit samples for SP 800-90B tools" } } },
        { "assess", NULL, 0, 1, false, verb_assess, verb_assess_options,
          { { "SOURCE [--samples N] [--restart] [--json] [--direct]",
              "the SP 800-90B non-IID estimators on a capture" },
            { "--file FILE [--bits B] [--json]", "the same on a capture file, no daemon needed" },
            { "SOURCE|--file FILE --gate [--credit C|auto] [--cap C] [--window N]",
              "the daemon's running gate replayed: each window's\nestimate and credit, what it would credit" } } },
        { "ledger", NULL, 0, 0, false, verb_ledger, verb_ledger_options,
          { { "[--json] [--directory DIR]", "the daemon's ledger of events, oldest first" },
            { "--verify [--anchor SEQ:HASH] [--json] [--directory DIR]",
              "check its hash chain: each change by position;\nexit 8 when it does not hold" } } },
        { "evidence", NULL, 0, CTL_EVIDENCE_SOURCES_MAX, true, verb_evidence, verb_evidence_options,
          { { "-o FILE.tar [SOURCE...] [--direct] [--sign KEYFILE]",
              "the auditor's bundle: for each credited source\n1,000,000 samples, the restart matrix, the\n"
              "estimators; status, configuration, machine,\nledger; a MANIFEST of SHA-256s and README.txt" },
            { "verify FILE.tar [--key PUBFILE]",
              "check a bundle's MANIFEST and signature; exit 8\nnaming each file that fails" },
            { "keygen SECRETFILE PUBFILE", "an Ed25519 key pair for --sign and --key" } } },
};

/* own_verbs, then every control command that has none of them: filled by
 * verbs_init() from proto's table. */
#define VERBS_MAX 32U
#define COMMAND_OPTIONS_MAX (CTL_COMMAND_ARGS_MAX + 8U)
static Verb verbs_all[VERBS_MAX];
static size_t n_verbs;
static struct option command_options[VERBS_MAX][COMMAND_OPTIONS_MAX];
static char command_synopsis[VERBS_MAX][96];

static bool own_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(own_verbs); i++)
                if (strcmp(own_verbs[i].name, name) == 0)
                        return true;
        return false;
}

/* "SOURCE [--samples N]": a command's arguments as its verb takes them,
 * a name argument as its key in capitals. */
static const char *command_usage(const CtlCommand *c, char *buf, size_t size) {
        size_t k = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < CTL_COMMAND_ARGS_MAX && c->args[i].arg && k < size; i++) {
                const CtlArg *a = c->args[i].arg;
                bool opt = !c->args[i].required;
                char key[32];
                size_t j;

                for (j = 0; a->key[j] && j + 1 < sizeof(key); j++)
                        key[j] = a->kind == CTL_ARG_NAME ? (char) toupper((unsigned char) a->key[j]) : a->key[j];
                key[j] = '\0';
                k += (size_t) snprintf(buf + k, size - k, "%s%s%s%s%s", k ? " " : "", opt ? "[" : "",
                                       a->kind == CTL_ARG_NAME ? "" : "--", key,
                                       a->kind == CTL_ARG_NAME ? (opt ? "]" : "") : (opt ? " N]" : " N"));
        }
        return buf;
}

static void verbs_init(void) {
        for (size_t i = 0; i < ELEMENTSOF(own_verbs); i++)
                verbs_all[n_verbs++] = own_verbs[i];
        for (const CtlCommand *c = ctl_commands; c->name && n_verbs < VERBS_MAX; c++) {
                size_t k = n_verbs;

                if (own_verb(c->name))
                        continue;
                verb_command_options(c, command_options[k], COMMAND_OPTIONS_MAX);
                verbs_all[n_verbs++] = (Verb){
                        .name = c->name, .command = c, .max_sources = verb_command_words(c),
                        .root = c->root, .run = verb_command, .options = command_options[k],
                        .usage = { { command_usage(c, command_synopsis[k], sizeof(command_synopsis[k])),
                                     c->help ? c->help : "" } },
                };
                for (size_t i = 0; i < CTL_COMMAND_ARGS_MAX && c->args[i].arg; i++)
                        if (c->args[i].required && c->args[i].arg->kind == CTL_ARG_NAME)
                                verbs_all[k].min_sources++;
        }
}

/* ---- usage, from the tables ------------------------------------------------------ */

/* "status, raw, assess or reseed" */
static const char *verb_names(char *buf, size_t size) {
        size_t k = 0;

        for (size_t i = 0; i < n_verbs && k < size; i++)
                k += (size_t) snprintf(buf + k, size - k, "%s%s", i == 0 ? "" : i + 1 < n_verbs ? ", " : " or ",
                                       verbs_all[i].name);
        return buf;
}

/* "  name synopsis" and its help from column 27, on the same line when
 * there is room; the help's own lines indented alike. */
static void usage_verb(FILE *f, const Verb *v) {
        for (size_t i = 0; i < ELEMENTSOF(v->usage) && v->usage[i].help; i++) {
                char form[128];
                int n = snprintf(form, sizeof(form), "%s%s%s", v->name, *v->usage[i].synopsis ? " " : "",
                                 v->usage[i].synopsis);

                if (n <= 26)
                        fprintf(f, "  %-24s ", form);
                else
                        fprintf(f, "  %s\n%27s", form, "");
                for (const char *h = v->usage[i].help, *nl;; h = nl + 1) {
                        nl = strchr(h, '\n');
                        fprintf(f, "%.*s", nl ? (int) (nl - h) : (int) strlen(h), h);
                        if (!nl)
                                break;
                        fprintf(f, "\n%27s", "");
                }
                fprintf(f, "%s\n", i == 0 && v->root ? " (root)" : "");
        }
}

static void usage(FILE *f) {
        char sources[128];

        fprintf(f, "Usage: truerandomctl [OPTIONS] COMMAND [ARGUMENTS]\n"
                   "Query and control truerandomd; capture and assess its noise sources.\n\n"
                   "Commands:\n");
        for (size_t i = 0; i < n_verbs; i++)
                usage_verb(f, &verbs_all[i]);
        fprintf(f,
                "SOURCE is one of %s (as enabled in the configuration).\n\n"
                "Options:\n"
                "  -s, --socket PATH   control socket (default: [control] socket of the\n"
                "                      configuration, else %s/truerandomd/control)\n"
                "  -c, --config FILE   the configuration (default %s)\n"
                "      --json          status or assess as JSON (stable, see truerandomctl(1))\n"
                "      --format=F      status as text, json, openmetrics (OpenMetrics 1.0) or\n"
                "                      prometheus (Prometheus text 0.0.4)\n"
                "  -n, --samples N     samples to capture (default %u)\n"
                "      --restart       raw: %u rows of %u samples, the source restarted before\n"
                "                      each (ea_restart's input); assess: the restart test too\n"
                "      --direct        capture in this process with the sampler and parameters\n"
                "                      of the configuration: no daemon, no CUSE\n"
                "  -o, --output FILE   raw: write samples to FILE (default: stdout); evidence:\n"
                "                      the bundle, a tar\n"
                "      --sign KEYFILE  evidence: sign the MANIFEST with this Ed25519 secret key\n"
                "      --key PUBFILE   evidence verify: check the signature with this public key\n"
                "  -f, --file FILE     assess: a capture file, one sample per byte\n"
                "  -b, --bits B        assess --file: bits per sample, 1 to 8 (default 8)\n"
                "      --gate          assess: windows judged as the running gate judges them\n"
                "      --window N      assess --gate: N samples a window, %u..%u (default\n"
                "                      %u); of a SOURCE, %u windows are captured unless\n"
                "                      --samples says otherwise\n"
                "      --credit C      assess --gate: auto (half the estimate, the default), or\n"
                "                      C bits per sample, granted when the estimate is >= 2 C\n"
                "      --cap C         assess --gate --credit auto: the most it grants (default\n"
                "                      the source's credit_cap, else jitter's: %.1f)\n"
                "  -h, --help          this help\n"
                "      --version       print the version\n",
                ctl_capture_sources(sources, sizeof(sources)), RUNSTATEDIR, CONFIG_DEFAULT_PATH,
                CTL_RAW_SAMPLES_DEFAULT, CTL_RESTART_ROWS, CTL_RESTART_SAMPLES, GATE_WINDOW_MIN, GATE_WINDOW_MAX,
                GATE_WINDOW_DEFAULT, ASSESS_GATE_WINDOWS_DEFAULT, assess_gate_default_cap(NULL) / 1000.0);
}

/* ---- finding the verb --------------------------------------------------------------- */

static const Verb *verb_lookup(const char *name) {
        for (size_t i = 0; i < n_verbs; i++)
                if (strcmp(verbs_all[i].name, name) == 0)
                        return &verbs_all[i];
        return NULL;
}

static bool verb_takes(const Verb *v, const char *option) {
        for (const struct option *o = v->options; o->name; o++)
                if (strcmp(o->name, option) == 0)
                        return true;
        return false;
}

/* Every verb's options once (by name), so that the verb can be found
 * wherever the options stand; malloc'd. */
static struct option *all_options(void) {
        size_t n = 0, k = 0;
        struct option *all;

        for (size_t i = 0; i < n_verbs; i++)
                for (const struct option *o = verbs_all[i].options; o->name; o++)
                        n++;
        all = calloc(n + 1, sizeof(*all));
        for (size_t i = 0; all && i < n_verbs; i++)
                for (const struct option *o = verbs_all[i].options; o->name; o++) {
                        bool seen = false;
                        for (size_t j = 0; j < k; j++)
                                seen = seen || strcmp(all[j].name, o->name) == 0;
                        if (!seen)
                                all[k++] = *o;
                }
        return all;
}

/* "--json applies to status and assess only" */
static int misplaced(const char *option) {
        char where[128] = "";
        size_t k = 0, n = 0, total = 0;

        for (size_t i = 0; i < n_verbs; i++)
                total += verb_takes(&verbs_all[i], option);
        for (size_t i = 0; i < n_verbs && k < sizeof(where); i++)
                if (verb_takes(&verbs_all[i], option))
                        k += (size_t) snprintf(where + k, sizeof(where) - k, "%s%s",
                                               n++ == 0 ? "" : n < total ? ", " : " and ", verbs_all[i].name);
        return ctl_fail(EXIT_USAGE, "--%s applies to %s only", option, where);
}

/* One pass over every option of every verb: the global ones taken into
 * *ctx, --help and --version answered, the others' names kept in given[]
 * (argc entries) to be checked against the verb. On return argv[optind]
 * is the verb, if there is one. */
static int parse_global(int argc, char *argv[], CtlContext *ctx, const char **given) {
        _cleanup_free_ struct option *all = all_options();
        size_t n = 0;
        int c, index;

        if (!all)
                return ctl_fail(EXIT_FAILED, "out of memory");
        while ((index = -1, c = ctl_getopt(argc, argv, all, &index)) >= 0) {
                if (c == '?') {
                        usage(stderr);
                        return EXIT_USAGE;
                }
                if (c == 'h') {
                        usage(stdout);
                        exit(EXIT_OK);
                }
                if (c == CTL_OPTION_VERSION) {
                        printf("truerandomctl %s\n", TRUERANDOM_VERSION);
                        exit(EXIT_OK);
                }
                if (c == 's')
                        ctx->socket = optarg;
                if (c == 'c')
                        ctx->config = optarg;
                for (const struct option *o = all; index < 0 && o->name; o++)
                        if (o->val == c)
                                index = (int) (o - all);
                if (index >= 0 && !ctl_option_global(c))
                        given[n++] = all[index].name;
        }
        given[n] = NULL;
        return EXIT_OK;
}

int main(int argc, char *argv[]) {
        _cleanup_free_ const char **given = calloc((size_t) argc + 1, sizeof(*given));
        CtlContext ctx = { 0 };
        char names[64], sources[128];
        const Verb *verb;
        unsigned n;
        int code;

        if (!given)
                return ctl_fail(EXIT_FAILED, "out of memory");
        /* `raw tpm` opens the TPM through the TPM2 Software Stack, whose own
         * stderr messages would interleave with ours: its errors reach the
         * user as this tool's, from the source's -errno. */
        if (setenv("TSS2_LOG", "all+none", 1) < 0)
                return ctl_fail(EXIT_FAILED, "setenv: %s", strerror(errno));
        verbs_init();
        code = parse_global(argc, argv, &ctx, given);
        if (code != EXIT_OK)
                return code;
        if (optind >= argc)
                return ctl_fail(EXIT_USAGE, "missing command (%s); see --help", verb_names(names, sizeof(names)));
        verb = verb_lookup(argv[optind]);
        if (!verb)
                return ctl_fail(EXIT_USAGE, "unknown command '%s' (%s)", argv[optind],
                                verb_names(names, sizeof(names)));
        for (const char **o = given; *o; o++)
                if (!verb_takes(verb, *o))
                        return misplaced(*o);
        n = (unsigned) (argc - optind - 1);
        if (n == 0 && verb->min_sources > 0)
                return ctl_fail(EXIT_USAGE, "%s needs a SOURCE (%s)", verb->name,
                                ctl_capture_sources(sources, sizeof(sources)));
        if (n < verb->min_sources)
                return ctl_fail(EXIT_USAGE, "%s takes %s", verb->name, verb->usage[0].synopsis);
        if (n > verb->max_sources)
                return ctl_fail(EXIT_USAGE, "unexpected argument '%s'", argv[optind + 1 + verb->max_sources]);
        /* The verb parses argv again, its own options only. */
        ctx.command = verb->command;
        optind = 0;
        return verb->run(argc, argv, &ctx);
}
