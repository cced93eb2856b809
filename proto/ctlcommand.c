/* ctlcommand.c - the control protocol's commands and their arguments (see
 * ctlcommand.h). The order of ctl_commands[] is the order of nothing on
 * the wire: a request names its command.
 * Flow: truerandomctl -> [ctlcommand] -> socket -> control -> daemon. */
#include "ctlcommand.h"

#include <string.h>

#include "ctlproto.h"

enum {
        ARG_SOURCE,
        ARG_SAMPLES,
        ARG_ROWS,
        ARG_BITS,
        ARG_REASON,
        ARG_KIND,
        ARG_FORCE,
};

const CtlArg ctl_args[] = {
        [ARG_SOURCE] = { "source", CTL_ARG_NAME, .field = offsetof(CtlRequest, source) },
        [ARG_SAMPLES] = { "samples", CTL_ARG_NUMBER, 1, CTL_RAW_SAMPLES_MAX, CTL_RAW_SAMPLES_DEFAULT,
                          offsetof(CtlRequest, samples) },
        [ARG_ROWS] = { "rows", CTL_ARG_NUMBER, 1, CTL_RAW_ROWS_MAX, 1, offsetof(CtlRequest, rows) },
        [ARG_BITS] = { "bits", CTL_ARG_NUMBER, 1, CTL_FED_BITS_MAX, 0, offsetof(CtlRequest, bits) },
        [ARG_REASON] = { "reason", CTL_ARG_NAME, .field = offsetof(CtlRequest, reason) },
        [ARG_KIND] = { "kind", CTL_ARG_NAME, .field = offsetof(CtlRequest, kind) },
        [ARG_FORCE] = { "force", CTL_ARG_NUMBER, 0, 1, 0, offsetof(CtlRequest, force) },
        { .key = NULL },
};

const CtlCommand ctl_commands[] = {
        { .name = "status", .help = "sources, store, devices, CRNG" },
        { .name = "reseed", .root = true, .help = "reseed the CRNG now" },
        /* What ExecReload= runs: fails when the daemon refuses the file. */
        { .name = "reload", .root = true, .help = "read the configuration again; fails, saying why, if refused" },
        /* A raw export of R rows opens the source afresh for each row. */
        { .name = "raw", .root = true,
          .args = { { .arg = &ctl_args[ARG_SOURCE], .required = true }, { .arg = &ctl_args[ARG_SAMPLES] },
                    { .arg = &ctl_args[ARG_ROWS] } },
          .help = "raw 8-bit samples for SP 800-90B tools" },
        /* truerandom-seed-kernel after each feed, for status. */
        { .name = "kernel-fed", .admin = true,
          .args = { { .arg = &ctl_args[ARG_REASON], .required = true },
                    { .arg = &ctl_args[ARG_BITS], .required = true } },
          .help = "say the kernel's pool was fed (truerandom-seed-kernel does)" },
        /* An auditor's induced failure; refused unless [daemon] allow_induce. */
        { .name = "induce", .root = true,
          .args = { { .arg = &ctl_args[ARG_SOURCE], .required = true },
                    { .arg = &ctl_args[ARG_KIND], .required = true }, { .arg = &ctl_args[ARG_FORCE] } },
          .help = "degrade SOURCE's next samples (stuck, bias, repeat,\nselftest) until the gate or a health test\ncatches it (allow_induce = yes)" },
        { .name = NULL },
};

const char *const ctl_feed_reasons[CTL_FEED_REASONS] = { "boot", "interval", "vm-generation-change", "resume" };

bool ctl_feed_reason_known(const char *s) {
        for (size_t i = 0; i < CTL_FEED_REASONS; i++)
                if (strcmp(s, ctl_feed_reasons[i]) == 0)
                        return true;
        return false;
}

const CtlCommand *ctl_command_lookup(const char *name, size_t n) {
        for (const CtlCommand *c = ctl_commands; c->name; c++)
                if (strlen(c->name) == n && memcmp(c->name, name, n) == 0)
                        return c;
        return NULL;
}

const CtlCommand *ctl_command_from_string(const char *name) {
        return name ? ctl_command_lookup(name, strlen(name)) : NULL;
}

bool ctl_command_valid(const CtlCommand *c) {
        for (const CtlCommand *i = ctl_commands; i->name; i++)
                if (i == c)
                        return true;
        return false;
}
