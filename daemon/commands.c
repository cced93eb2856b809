/* commands.c - what the daemon answers to the control commands the socket
 * does not serve itself (daemon/control/commands.h keeps status and raw):
 * one row per command of proto/ctlcommand.c, with its function. A
 * function runs on the loop thread with the request already checked
 * against its row (arguments in their bounds, root-only commands from
 * root only); it answers 0 with an optional payload, or -errno with the
 * words the error reply carries.
 * Adding a command: its row in proto/ctlcommand.c (name, arguments, who
 * may, the help truerandomctl shows), and its row and function here;
 * truerandomctl serves it without a line of its own.
 * Flow: control socket -> [commands] -> the loop's parts. */
#include "daemon-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

typedef struct DaemonCommand {
        const char *name;
        int (*run)(Daemon *d, const CtlRequest *req, char **ret_payload, char *text, size_t text_size);
} DaemonCommand;

static int command_reseed(Daemon *d, const CtlRequest *req, char **ret_payload, char *text, size_t text_size) {
        int r = daemon_reseed(d, SEED_TRIGGER_CONTROL);

        if (r == -ENODATA) {
                snprintf(text, text_size, "the CRNG is not seeded yet");
                return r;
        }
        if (r < 0)
                return r;
        log_info("CRNG reseed requested over the control socket");
        return 0;
}

/* The daemon's own verdict on the file, for ExecReload=: a refusal is an
 * error reply with its FILE:LINE reason, so systemctl reload fails. */
static int command_reload(Daemon *d, const CtlRequest *req, char **ret_payload, char *text, size_t text_size) {
        int r = daemon_reload(d);

        if (r < 0) {
                snprintf(text, text_size, "refused, the running configuration stays: %s",
                         d->last_reload_error[0] ? d->last_reload_error : strerror(-r));
                return r;
        }
        if (asprintf(ret_payload, "configuration reloaded from %s",
                     d->config_path ? d->config_path : "the built-in defaults") < 0)
                return -ENOMEM;
        return 0;
}

/* truerandom-seed-kernel after a feed (the control socket let only root
 * or CAP_SYS_ADMIN through): kept for status and logged. */
static int command_kernel_fed(Daemon *d, const CtlRequest *req, char **ret_payload, char *text, size_t text_size) {
        char bits[24];

        if (!ctl_feed_reason_known(req->reason)) {
                snprintf(text, text_size, "no feed reason '%s' (boot, interval, vm-generation-change, resume)",
                         req->reason);
                return -EINVAL;
        }
        d->kernel_feed.feeds++;
        d->kernel_feed.last_bits = req->bits;
        d->kernel_feed.last_usec = now_usec(CLOCK_MONOTONIC);
        snprintf(d->kernel_feed.last_reason, sizeof(d->kernel_feed.last_reason), "%s", req->reason);
        snprintf(bits, sizeof(bits), "%" PRIu64, req->bits);
        DAEMON_EVENT(d, LEDGER_EVENT_KERNEL_FEED, { "bits", bits }, { "reason", req->reason });
        log_info("the kernel's pool was fed %" PRIu64 " bits of /dev/truerandom's blocks (%s), as "
                 "truerandom-seed-kernel reports", req->bits, req->reason);
        return 0;
}

static const DaemonCommand commands[] = {
        { "reseed", command_reseed },
        { "reload", command_reload },
        { "kernel-fed", command_kernel_fed },
};

bool daemon_command_served(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(commands[i].name, name) == 0)
                        return true;
        return false;
}

int daemon_command(void *userdata, const CtlRequest *req, char **ret_payload, char *text, size_t text_size) {
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(commands[i].name, req->command->name) == 0)
                        return commands[i].run(userdata, req, ret_payload, text, text_size);
        snprintf(text, text_size, "%s is not served here", req->command->name);
        return -EOPNOTSUPP;
}
