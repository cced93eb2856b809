/* verb-ledger.c - truerandomctl ledger [--json] [--verify] [--directory DIR]
 * [--anchor SEQ:HASH]: the daemon's ledger (ledger/ledger.h) read from its
 * state directory, no daemon needed.
 *
 * Shown: a line per record, oldest first: sequence number, UTC time, event
 * and details; --json writes each record's line as it is in the file (JSON
 * Lines, byte for byte, so each line's "hash" can be checked with
 * sha256sum as record.h shows). Lines that are not records are said on
 * stderr with their file and line.
 * --verify checks the chain instead (ledger/verify.h): every finding by
 * kind and position, the head to compare with the journal's "ledger stop"
 * line, and --anchor checks that head here. Exit 0 when the chain holds (a
 * record torn by a crash is reported and allowed), EXIT_VERIFY when it
 * does not.
 * The directory is [assessment] state_directory of the configuration
 * (--config), or --directory for a copy taken elsewhere.
 * Flow: StateDirectory -> ledger -> [verb-ledger] -> stdout. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <sodium.h>

#include "client.h"
#include "config-build.h"
#include "config/config.h"
#include "ledger/verify.h"
#include "util/cleanup.h"
#include "verb.h"

enum {
        ARG_JSON = CTL_OPTION_VERB,
        ARG_VERIFY,
        ARG_DIRECTORY,
        ARG_ANCHOR,
};

const struct option verb_ledger_options[] = {
        { "json", no_argument, NULL, ARG_JSON },
        { "verify", no_argument, NULL, ARG_VERIFY },
        { "directory", required_argument, NULL, ARG_DIRECTORY },
        { "anchor", required_argument, NULL, ARG_ANCHOR },
        CTL_GLOBAL_OPTIONS,
};

typedef struct LedgerArgs {
        bool json, verify;
        const char *directory;  /* NULL: the configuration's */
        bool anchored;
        LedgerAnchor anchor;
} LedgerArgs;

/* "SEQ:HASH", the head as the journal's line gives it. */
static int parse_anchor(const char *s, LedgerAnchor *ret) {
        const char *colon = strchr(s, ':');
        char seq[24];
        size_t n;

        if (!colon || (n = (size_t) (colon - s)) == 0 || n >= sizeof(seq))
                return -EINVAL;
        memcpy(seq, s, n);
        seq[n] = '\0';
        if (ctl_parse_number(seq, 1, UINT64_MAX, &ret->seq) < 0)
                return -EINVAL;
        if (strlen(colon + 1) != 2 * LEDGER_HASH_BYTES ||
            sodium_hex2bin(ret->hash, LEDGER_HASH_BYTES, colon + 1, 2 * LEDGER_HASH_BYTES, NULL, &n, NULL) != 0 ||
            n != LEDGER_HASH_BYTES)
                return -EINVAL;
        return 0;
}

static int parse_options(int argc, char *argv[], LedgerArgs *a) {
        int opt;

        while ((opt = ctl_getopt(argc, argv, verb_ledger_options, NULL)) >= 0)
                switch (opt) {
                case ARG_JSON:
                        a->json = true;
                        break;
                case ARG_VERIFY:
                        a->verify = true;
                        break;
                case ARG_DIRECTORY:
                        a->directory = optarg;
                        break;
                case ARG_ANCHOR:
                        if (parse_anchor(optarg, &a->anchor) < 0)
                                return ctl_fail(EXIT_USAGE, "--anchor takes SEQ:HASH, the head record's number and "
                                                            "its 64 hex digits (the journal's \"ledger\" line)");
                        a->anchored = true;
                        break;
                default:
                        if (!ctl_option_global(opt))
                                return EXIT_USAGE;
                }
        if (a->anchored && !a->verify)
                return ctl_fail(EXIT_USAGE, "--anchor is checked by --verify; add it");
        return EXIT_OK;
}

/* The ledger's directory, opened: --directory, else the configuration's. */
static int open_directory(const LedgerArgs *a, const CtlContext *ctx, char *path, size_t size, int *ret_fd) {
        const char *config_path = ctx->config ? ctx->config : CONFIG_DEFAULT_PATH;
        char *error = NULL;
        Config config;
        int r, fd;

        if (a->directory)
                snprintf(path, size, "%s", a->directory);
        else {
                /* The daemon's own reading: a named file must exist, the
                 * default may be absent (built-in defaults). */
                r = config_load(config_path, !ctx->config, &config, &error);
                if (r < 0) {
                        int code = ctl_fail(EXIT_FAILED, "%s", error ? error : strerror(-r));
                        free(error);
                        return code;
                }
                snprintf(path, size, "%s", config.state_directory);
                config_done(&config);
        }
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return ctl_fail(errno == EACCES ? EXIT_PERMISSION : EXIT_FAILED, "%s: %s%s", path, strerror(errno),
                                errno == EACCES ? " (the ledger is readable by root and truerandomd's user)" : "");
        *ret_fd = fd;
        return EXIT_OK;
}

/* ---- showing the records -------------------------------------------------------- */

typedef struct Show {
        bool json;
        size_t records, others;
} Show;

static void print_time(usec_t realtime) {
        time_t t = (time_t) (realtime / USEC_PER_SEC);
        struct tm tm;
        char buf[32];

        if (gmtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm) > 0)
                fputs(buf, stdout);
        else
                printf("%" PRIu64 "us", (uint64_t) realtime);
}

static int show_line(void *userdata, const char *file, unsigned line_no, const char *line, size_t len,
                     const LedgerRecord *rec, bool torn) {
        Show *s = userdata;

        if (!rec) {
                s->others++;
                fprintf(stderr, "%s:%u: %s\n", file, line_no,
                        torn ? "a record cut short (a crash while it was written): not shown"
                             : "not a ledger record: not shown (ledger --verify judges it)");
                return 0;
        }
        s->records++;
        if (s->json) {
                fwrite(line, 1, len, stdout);
                putchar('\n');
                return 0;
        }
        printf("%6" PRIu64 "  ", rec->seq);
        print_time(rec->realtime);
        printf("  %-15s", rec->event);
        for (size_t i = 0; i < rec->n_fields; i++)
                printf(" %s=%s", rec->fields[i].key, rec->fields[i].value);
        putchar('\n');
        return 0;
}

static int show(int dir_fd, const char *path, bool json) {
        Show s = { .json = json };
        int r = ledger_foreach(dir_fd, show_line, &s);

        if (r == -ENOENT)
                return ctl_fail(EXIT_FAILED, "%s: no ledger (truerandomd writes ledger-*.jsonl there once it runs)",
                                path);
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "reading the ledger in %s: %s", path, strerror(-r));
        if (fflush(stdout) != 0)
                return ctl_fail(EXIT_FAILED, "writing: %s", strerror(errno));
        return EXIT_OK;
}

/* ---- checking the chain --------------------------------------------------------- */

static void print_finding(const LedgerFinding *f) {
        printf("%-9s %s line %u, ", ledger_finding_kind_to_string(f->kind), f->file, f->line);
        if (f->kind == LEDGER_FINDING_MALFORMED || f->kind == LEDGER_FINDING_TORN)
                printf("no record\n");
        else if (f->seq_last != f->seq)
                printf("records %" PRIu64 " to %" PRIu64 "\n", f->seq, f->seq_last);
        else
                printf("record %" PRIu64 "\n", f->seq);
}

static void print_report(const LedgerReport *r, const char *path, const LedgerArgs *a) {
        char hex[2 * LEDGER_HASH_BYTES + 1];
        bool intact = ledger_report_intact(r);

        sodium_bin2hex(hex, sizeof(hex), r->last_hash, LEDGER_HASH_BYTES);
        printf("ledger in %s: %zu file%s, %zu record%s", path, r->files, r->files == 1 ? "" : "s", r->records,
               r->records == 1 ? "" : "s");
        if (r->records > 0)
                printf(", records %" PRIu64 " to %" PRIu64, r->first_seq, r->last_seq);
        putchar('\n');
        if (r->records > 0)
                printf("head: record %" PRIu64 " hash %s\n", r->last_seq, hex);
        for (size_t i = 0; i < r->n_findings; i++)
                print_finding(&r->findings[i]);
        if (!intact)
                printf("the chain does not hold: %zu finding%s above\n", r->n_findings, r->n_findings == 1 ? "" : "s");
        else if (a->anchored)
                printf("the chain holds from record %" PRIu64 ", up to the anchor at record %" PRIu64 " and past it\n",
                       r->first_seq, a->anchor.seq);
        else
                printf("the chain holds from record %" PRIu64 "; compare its head with the journal's last \"ledger\" "
                       "line, or pass that as --anchor SEQ:HASH\n",
                       r->first_seq);
}

static int verify(int dir_fd, const char *path, const LedgerArgs *a) {
        _cleanup_(ledger_report_freep) LedgerReport *report = NULL;
        int r = ledger_verify(dir_fd, a->anchored ? &a->anchor : NULL, &report);

        if (r == -ENOENT)
                return ctl_fail(EXIT_FAILED, "%s: no ledger (truerandomd writes ledger-*.jsonl there once it runs)",
                                path);
        if (r < 0)
                return ctl_fail(EXIT_FAILED, "checking the ledger in %s: %s", path, strerror(-r));
        if (a->json) {
                struct json_object *o = NULL;

                if (ledger_report_to_json(report, &o) < 0)
                        return ctl_fail(EXIT_FAILED, "out of memory");
                puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
                json_object_put(o);
        } else
                print_report(report, path, a);
        if (fflush(stdout) != 0)
                return ctl_fail(EXIT_FAILED, "writing: %s", strerror(errno));
        return ledger_report_intact(report) ? EXIT_OK : EXIT_VERIFY;
}

int verb_ledger(int argc, char *argv[], const CtlContext *ctx) {
        LedgerArgs a = { 0 };
        _cleanup_close_ int dir_fd = -1;
        char path[4096];
        int code;

        code = parse_options(argc, argv, &a);
        if (code != EXIT_OK)
                return code;
        code = open_directory(&a, ctx, path, sizeof(path), &dir_fd);
        if (code != EXIT_OK)
                return code;
        return a.verify ? verify(dir_fd, path, &a) : show(dir_fd, path, a.json);
}
