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

#include "config/sourceconf.h"
#include "log.h"
#include "pool/collector.h"

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

/* Whether a credited source other than i is healthy now. */
static bool another_healthy(Daemon *d, ConfigSource i) {
        for (ConfigSource k = 0; k < _CONFIG_SOURCE_MAX; k++) {
                CollectorStats st;

                if (k == i || !d->sources[k].collector)
                        continue;
                collector_get_stats(d->sources[k].collector, &st);
                if (st.state == SOURCE_HEALTHY)
                        return true;
        }
        return false;
}

/* selftest: the source is opened again with its self-test fed a stuck
 * window, which fails it (the source is unavailable, its blocks purged),
 * then once more as configured: one bounded episode, on this thread. */
static int induce_selftest(Daemon *d, ConfigSource i, char *text, size_t text_size) {
        SourceSlot *slot = &d->sources[i];
        const char *name = config_source_name(i);
        size_t purged;
        char blocks[24];
        int r;

        slot->collector = collector_free(slot->collector);
        *slot = (SourceSlot){ 0 };
        purged = store_purge(d->store, i);
        snprintf(blocks, sizeof(blocks), "%zu", purged);
        DAEMON_EVENT(d, LEDGER_EVENT_PURGE, { "blocks", blocks }, { "reason", "induce selftest" }, { "source", name });
        r = daemon_source_start(d, i, true);
        if (r < 0 || !slot->collector)
                goto recover;
        if (slot->last.selftest.reason == SELFTEST_PASSED) {
                snprintf(text, text_size, "source %s: its self-test passed a stuck window", name);
                r = -EIO;
        }
        slot->collector = collector_free(slot->collector);
        *slot = (SourceSlot){ 0 };
recover:
        if (daemon_source_start(d, i, false) == 0 && slot->collector)
                log_notice("source %s reopened after its induced self-test failure", name);
        daemon_post_change(d);
        return r;
}

/* truerandomctl induce: an auditor's proof that the checks catch a failing
 * source in the running daemon (pool/induce.h), refused unless [daemon]
 * allow_induce, and for the last healthy credited source unless forced. */
static int command_induce(Daemon *d, const CtlRequest *req, char **ret_payload, char *text, size_t text_size) {
        ConfigSource i;
        InduceKind kind;
        CollectorStats st;
        int r;

        if (!d->config.allow_induce) {
                snprintf(text, text_size, "refused: [daemon] allow_induce = no in the configuration in force");
                return -EPERM;
        }
        if (sourceconf_lookup(req->source, &i) < 0 || !d->sources[i].collector) {
                snprintf(text, text_size, "no credited source '%s' runs here", req->source);
                return -ENOENT;
        }
        if (induce_kind_from_string(req->kind, &kind) < 0) {
                snprintf(text, text_size, "no failure kind '%s' (stuck, bias, repeat, selftest)", req->kind);
                return -EINVAL;
        }
        collector_get_stats(d->sources[i].collector, &st);
        if (kind == INDUCE_SELFTEST && !st.selftest.run) {
                snprintf(text, text_size, "source %s has no self-test (jitter, rdseed and tpm have one)",
                         req->source);
                return -ENODEV;
        }
        if (!req->force && !another_healthy(d, i)) {
                snprintf(text, text_size, "refused: no other credited source is healthy, and /dev/truerandom would "
                         "stall until %s recovers; --force 1 to induce it anyway", req->source);
                return -EBUSY;
        }
        DAEMON_EVENT(d, LEDGER_EVENT_INDUCE, { "source", req->source }, { "kind", req->kind }, { "phase", "asked" },
                     { "forced", req->force ? "yes" : "no" });
        log_notice("source %s: an induced %s failure was asked over the control socket", req->source, req->kind);
        if (kind == INDUCE_SELFTEST)
                r = induce_selftest(d, i, text, text_size);
        else {
                r = collector_induce(d->sources[i].collector, kind);
                if (r == -EBUSY)
                        snprintf(text, text_size, "source %s: an induced failure is already under way", req->source);
        }
        if (r < 0)
                return r;
        if (asprintf(ret_payload, "source %s: induced %s failure %s", req->source, req->kind,
                     kind == INDUCE_SELFTEST ? "done: its self-test failed, then it reopened"
                                             : "begins at its next window; truerandomctl status and ledger follow it") < 0)
                return -ENOMEM;
        return 0;
}

static const DaemonCommand commands[] = {
        { "reseed", command_reseed },
        { "reload", command_reload },
        { "kernel-fed", command_kernel_fed },
        { "induce", command_induce },
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
