/* reload.c - SIGHUP, or the control command "reload" (ExecReload= runs
 * it, so that systemctl reload fails when the file is refused): the
 * configuration read again and applied, or refused whole with why (in the
 * log, in status and in the command's reply), never half applied. Device
 * names, dropin, store size, the control socket, the state directory and
 * the user change only on restart; sources whose settings changed (every
 * source, when [pool] gate_window did) restart from their first window
 * and startup test.
 *
 * Invariant: a bad file or a change the daemon cannot make without root
 * (it gave root up after set-up) changes nothing; RELOADING=1 is always
 * followed by READY=1.
 * Flow: SIGHUP -> config -> [reload] -> sources, cuse hub. */
#include "daemon-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "config/sourceconf.h"
#include "log.h"
#include "util/cleanup.h"

/* A source's credit as the file says it: "1.500", "auto (cap 4.000)" or
 * "none" (not enabled). */
static const char *credit_words(const SourceConfig *sc, char *buf, size_t size) {
        if (!sc->enable)
                snprintf(buf, size, "none");
        else if (sc->credit_auto)
                snprintf(buf, size, "auto (cap %u.%03u)", sc->credit_cap_mbits / 1000, sc->credit_cap_mbits % 1000);
        else
                snprintf(buf, size, "%u.%03u", sc->credit_mbits / 1000, sc->credit_mbits % 1000);
        return buf;
}

/* The ledger's record of a credit the reload changes. */
static void record_credit_change(Daemon *d, ConfigSource i, const SourceConfig *was, const SourceConfig *now) {
        char before[48], after[48];

        credit_words(was, before, sizeof(before));
        credit_words(now, after, sizeof(after));
        if (strcmp(before, after) != 0)
                DAEMON_EVENT(d, LEDGER_EVENT_CREDIT_CHANGE, { "source", config_source_name(i) }, { "credit", after },
                             { "was", before }, { "reason", "reload" });
}

/* What a reload cannot do once set-up gave up root: change the nodes'
 * group or mode (they are root's), or open a source path the user may not
 * read. Refused whole, with why, rather than half applied; 0 when root. */
static int check_reload_without_root(Daemon *d, const Config *c, gid_t gid) {
        const char *what;

        if (geteuid() == 0)
                return 0;
        what = daemon_devices_node_change(d, c, gid);
        if (what) {
                log_error("reload: [device] %s changes the device nodes, which are root's; truerandomd runs as uid %u "
                          "since set-up (%s). Restart it to apply, or change the udev rule under systemd",
                          what, (unsigned) geteuid(), strerror(EPERM));
                snprintf(d->last_reload_error, sizeof(d->last_reload_error),
                         "[device] %s changes the nodes: needs a restart (not root since set-up)", what);
                return -EPERM;
        }
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                const SourceConfig *a = &d->config.source[i], *b = &c->source[i];
                const char *name = config_source_name(i), *path = b->params.path;

                /* Only a path a reload would open anew. */
                if (!path || !sourceconf_creditable(b, i) || !sourceconf_changed(i, a, b))
                        continue;
                if (access(path, R_OK) == 0 || (errno != EACCES && errno != EPERM))
                        continue;
                log_error("reload: source %s: %s is not readable by uid %u, which truerandomd runs as since set-up "
                          "(%s). Give that user read access, or restart truerandomd to open it as root",
                          name, path, (unsigned) geteuid(), strerror(errno));
                snprintf(d->last_reload_error, sizeof(d->last_reload_error),
                         "source %s: %s: not readable by uid %u", name, path, (unsigned) geteuid());
                return -EPERM;
        }
        return 0;
}

CuseHubLimits daemon_hub_limits(const Config *c) {
        static const PrivilegeMode modes[_CONFIG_PRIVILEGED_MAX] = {
                [CONFIG_PRIVILEGED_CAPABILITY] = PRIVILEGE_CAPABILITY,
                [CONFIG_PRIVILEGED_HOST_ROOT] = PRIVILEGE_HOST_ROOT,
                [CONFIG_PRIVILEGED_NONE] = PRIVILEGE_NONE,
        };

        return (CuseHubLimits){ .max_parked = c->max_parked,
                                .max_parked_per_uid = config_max_parked_per_uid(c),
                                .max_open_per_uid = c->max_open_per_uid,
                                .max_dropin_open_per_uid = c->max_dropin_open_per_uid,
                                .privileged_ioctls = modes[c->privileged_ioctls] };
}

EgdLimits daemon_egd_limits(const Config *c) {
        return (EgdLimits){ .max_connections = c->max_parked,
                            .max_per_uid = c->max_open_per_uid,
                            .max_waiting_per_uid = config_max_parked_per_uid(c) };
}

static int apply_config(Daemon *d, Config *c) {
        bool changed[_CONFIG_SOURCE_MAX] = { false };
        CuseHubLimits hub_limits;
        char *keep;
        gid_t gid;
        int r;

        r = daemon_resolve_group(c->group, &gid);
        if (r < 0) {
                log_error("group '%s' does not exist (create it with systemd-sysusers or groupadd, or set [device] group)",
                          c->group);
                snprintf(d->last_reload_error, sizeof(d->last_reload_error), "group '%s' does not exist", c->group);
                return r;
        }
        r = check_reload_without_root(d, c, gid);
        if (r < 0)
                return r;
        if (daemon_devices_changed(d, c) || c->store_blocks != d->config.store_blocks ||
            c->low_water != d->config.low_water || strcmp(c->socket_path, d->config.socket_path) ||
            strcmp(c->state_directory, d->config.state_directory) || strcmp(c->user, d->config.user) ||
            !d->egd != !c->egd_socket_path || (d->egd && strcmp(c->egd_socket_path, egd_path(d->egd))))
                log_notice("device names, dropin, [device] cuse, the per-source devices (per_source_devices, which "
                           "sources are credited), dropin_unrestricted_ioctl, store size, the control socket, the EGD "
                           "socket, the state directory and the user change only on restart");
        /* The state directory in use stays the one opened at start. */
        keep = c->state_directory;
        c->state_directory = d->config.state_directory;
        d->config.state_directory = keep;
        hub_limits = daemon_hub_limits(c);
        (void)cusehub_set_limits(d->hub, &hub_limits);
        if (d->egd) {
                EgdLimits limits = daemon_egd_limits(c);
                (void)egd_set_limits(d->egd, &limits);
        }
        /* Root re-applies them (a node someone chmod'ed is put right); the
         * user the daemon runs as cannot touch root's nodes, and has
         * refused a change above. */
        if (geteuid() == 0)
                daemon_devices_apply_nodes(d, c, gid);
        d->gid = gid;
        /* Sources whose settings changed restart from their startup test. */
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                const SourceConfig *a = &d->config.source[i], *b = &c->source[i];
                SourceSlot *slot = &d->sources[i];

                if (!sourceconf_changed(i, a, b) && c->gate_window == d->config.gate_window)
                        continue;
                record_credit_change(d, i, a, b);
                slot->collector = collector_free(slot->collector);
                *slot = (SourceSlot){ 0 };
                changed[i] = true;
        }
        (void)sd_event_source_set_time_relative(d->reseed_timer, c->reseed_interval_usec);
        /* A held reseed's due time follows the new limit (the posted
         * change re-arms its timer). */
        seeder_set_min_interval(d->seeder, c->min_reseed_interval_usec);
        config_done(&d->config);
        d->config = *c;
        *c = (Config){ 0 };
        /* With the new configuration in place. */
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                if (!changed[i] || !sourceconf_creditable(&d->config.source[i], i))
                        continue;
                if (daemon_source_start(d, i, false) == 0 && d->sources[i].collector)
                        log_info("source %s restarted with its new settings", config_source_name(i));
        }
        return 0;
}

int daemon_reload(Daemon *d) {
        _cleanup_free_ char *error = NULL;
        char sha[2 * CONFIG_SHA256_BYTES + 1];
        Config c = { 0 };
        int r;

        sd_notify(false, "RELOADING=1");
        d->reloads++;
        d->last_reload_usec = now_usec(CLOCK_MONOTONIC);
        d->last_reload_ok = false;
        r = d->config_path ? config_load(d->config_path, d->hooks.config_optional, &c, &error)
                           : config_init_defaults(&c);
        if (r < 0) {
                log_error("%s; keeping the running configuration", error ? error : strerror(-r));
                snprintf(d->last_reload_error, sizeof(d->last_reload_error), "%s", error ? error : strerror(-r));
        } else if ((r = apply_config(d, &c)) < 0) {
                /* apply_config() said why, in the log and in last_reload_error. */
                log_error("reload refused; keeping the running configuration");
        } else {
                log_info("configuration reloaded from %s", d->config_path ? d->config_path : "defaults");
                d->last_reload_ok = true;
                d->last_reload_error[0] = '\0';
        }
        config_done(&c);
        /* The configuration in force after it: the new one, or the one
         * that stays. */
        DAEMON_EVENT(d, LEDGER_EVENT_RELOAD, { "config_sha256", daemon_config_sha256(&d->config, sha) },
                     { "result", d->last_reload_ok ? "applied" : "refused" },
                     { "error", d->last_reload_ok ? "none" : d->last_reload_error });
        daemon_post_change(d);
        sd_notify(false, "READY=1");
        return r < 0 ? r : 0;
}

int daemon_on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) daemon_reload(userdata);
        return 0;
}
