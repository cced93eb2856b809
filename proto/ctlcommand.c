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
};

const CtlArg ctl_args[] = {
        [ARG_SOURCE] = { "source", CTL_ARG_NAME, .field = offsetof(CtlRequest, source) },
        [ARG_SAMPLES] = { "samples", CTL_ARG_NUMBER, 1, CTL_RAW_SAMPLES_MAX, CTL_RAW_SAMPLES_DEFAULT,
                          offsetof(CtlRequest, samples) },
        [ARG_ROWS] = { "rows", CTL_ARG_NUMBER, 1, CTL_RAW_ROWS_MAX, 1, offsetof(CtlRequest, rows) },
        { .key = NULL },
};

const CtlCommand ctl_commands[] = {
        { .name = "status", .help = "sources, store, devices, CRNG" },
        { .name = "reseed", .root = true, .help = "reseed the CRNG now" },
        /* A raw export of R rows opens the source afresh for each row. */
        { .name = "raw", .root = true,
          .args = { { .arg = &ctl_args[ARG_SOURCE], .required = true }, { .arg = &ctl_args[ARG_SAMPLES] },
                    { .arg = &ctl_args[ARG_ROWS] } },
          .help = "raw 8-bit samples for SP 800-90B tools" },
        { .name = NULL },
};

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
