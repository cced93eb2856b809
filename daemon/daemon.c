/* daemon.c - the daemon's life cycle: set-up in steps (daemon_new), each
 * undone by daemon_free on any failure, and tear-down; and the control
 * socket's callbacks. See daemon.h for what the daemon decides; the
 * modules it wires decide the rest. Its other parts have files of their
 * own, sharing the Daemon through daemon-internal.h: what the loop does on
 * its events (loop.c), how the parts ask it for a turn (change.c), the
 * sources (sources.c), the devices (devices.c), the reload (reload.c), the
 * checks at start and --check-config (checkconf.c), giving up root
 * (privileges.c), clones and resumes (watchers.c) and the status report
 * (status.c). None of them
 * calls up into this file or loop.c: each posts a change.
 *
 * Threads:
 *  - the loop (this thread): every key (CRNG, seeder), every CUSE session
 *    and reply, the control socket, timers and signals;
 *  - the collectors (pool/collector.h), one per credited source: read
 *    samples, hand each window to the gate and, once judged, health-test
 *    and condition them into the Store, write the wake-up eventfd after
 *    each verdict, block or state change;
 *  - the gate's workers (pool/gate.h), one per credited source (at most
 *    one per CPU): the SP 800-90B estimators on each window, reading the
 *    window and nothing else;
 *  - the control socket's export threads (daemon/control/ctlexport.c), one
 *    per `truerandomctl raw`, at most CONTROL_MAX_EXPORTS: stream raw
 *    samples from an instance of their own to their connection.
 * They share with the loop only the Store (its own mutex), the eventfds,
 * and each its own stats or progress (under its own lock). Keys and
 * replies stay on the loop thread. */
#include "daemon-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "config/sourceconf.h"
#include "crng/crng.h"
#include "log.h"
#include "pool/collector.h"
#include "pool/secret.h"
#include "pool/store.h"
#include "util/cleanup.h"

/* ------------------------------------------------------------------ */
/* control socket                                                      */

/* Reads, never acts: status.c shows one moment from the collectors' own
 * stats, so a stop they counted shows with its source failed and
 * /dev/truerandom not serving, before the loop's turn has taken it in. */
static int control_status(void *userdata, char **ret_json) {
        return daemon_status_json(userdata, ret_json);
}

/* An export needs the source enabled, not credited: an operator measures
 * before crediting. The kernel source is getrandom(): nothing raw to see. */
static int control_raw_source(void *userdata, const char *name, const SourceOps **ret_ops,
                              SourceParams *ret_params) {
        Daemon *d = userdata;

        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                const SourceConfig *sc = &d->config.source[i];
                if (strcmp(name, config_source_name(i)) != 0)
                        continue;
                if (sourceconf_ops(i)->credit == SOURCE_CREDIT_NEVER || !sc->enable)
                        return -ENODEV;
                *ret_ops = sourceconf_ops(i);
                *ret_params = sourceconf_params(sc);
                return 0;
        }
        return -ENOENT;
}

/* ------------------------------------------------------------------ */
/* set-up, a step at a time                                            */

DEFINE_FREEP(Daemon, daemon_free);

/* The Daemon, holding *config from here on (zeroed): daemon_free() frees
 * it on any later failure. */
static int daemon_alloc(Config *config, const char *config_path, const DaemonHooks *hooks, Daemon **ret) {
        _cleanup_(daemon_freep) Daemon *d = calloc(1, sizeof(*d));

        if (!d)
                return log_error_errno(-ENOMEM, "start-up");
        d->wake_fd = -1;
        d->started_usec = now_usec(CLOCK_MONOTONIC);
        d->hooks = hooks ? *hooks : (DaemonHooks){ .ready_fd = -1 };
        d->config = *config;
        *config = (Config){ 0 };
        if ((config_path && !(d->config_path = strdup(config_path))) || uidrate_init(&d->proc_looks) < 0)
                return log_error_errno(-ENOMEM, "start-up");
        *ret = TAKE_PTR(d);
        return 0;
}

/* Who the nodes belong to and whom the daemon becomes. */
static int setup_users(Daemon *d) {
        int r;

        r = daemon_resolve_group(d->config.group, &d->gid);
        if (r < 0) {
                log_error("group '%s' does not exist (create it with systemd-sysusers or groupadd, or set [device] group)",
                          d->config.group);
                return r;
        }
        if (d->hooks.drop_privileges && geteuid() == 0) {
                _cleanup_free_ char *why = NULL;

                r = daemon_resolve_run_user(&d->config, d->config_path, &d->run_uid, &d->run_gid, &why);
                if (r < 0) {
                        log_error("%s", why ? why : strerror(-r));
                        return r;
                }
        }
        return 0;
}

/* The unseeded CRNG starts from the kernel's: best effort output for the
 * drop-in urandom until the pool seeds it. The key is born here, on the
 * stack, and erased on every way out of this function. */
static int setup_crng(Daemon *d) {
        SECRET_BUFFER(initial, CRNG_KEY_SIZE);
        int r;

        if (getrandom(initial, sizeof(initial), GRND_INSECURE) != sizeof(initial) &&
            getrandom(initial, sizeof(initial), 0) != sizeof(initial))
                return log_error_errno(-errno, "getrandom");
        r = crng_new(initial, CRNG_BUFFER, &d->crng);
        if (r < 0)
                return log_error_errno(r, "allocating the CRNG%s", daemon_memlock_hint(r));
        return 0;
}

/* Store, CRNG, seeder and the hub the devices share. */
static int setup_pool(Daemon *d) {
        int r;

        r = store_new(d->config.store_blocks, d->config.low_water, &d->store);
        if (r < 0)
                return log_error_errno(r, "allocating the block store%s", daemon_memlock_hint(r));
        /* Its threads start with the collectors' (daemon_start_collectors()). */
        r = gate_new(daemon_gate_threads(&d->config), &d->gate);
        if (r < 0)
                return log_error_errno(r, "start-up");
        r = setup_crng(d);
        if (r < 0)
                return r;
        r = seeder_new(&(SeederParams){ .kernel_mix = d->config.source[CONFIG_SOURCE_KERNEL].enable,
                                        .min_interval_usec = d->config.min_reseed_interval_usec },
                       d->store, d->crng, &d->seeder);
        if (r < 0)
                return log_error_errno(r, "start-up");
        r = cusehub_new(&(CuseHubParams){ .limits = daemon_hub_limits(&d->config),
                                          .proc_root = d->hooks.proc_root },
                        d->store, d->crng, d->seeder,
                        &(CuseHubCallbacks){ .event = daemon_on_cuse_event,
                                             .demand = daemon_update_demand,
                                             .backlog = daemon_on_cuse_backlog,
                                             .before_request = daemon_before_cuse_request,
                                             .proc_budget = daemon_proc_budget,
                                             .userdata = d },
                        &d->hub);
        if (r < 0)
                return log_error_errno(r, "creating the devices%s", daemon_memlock_hint(r));
        return 0;
}

static void on_egd_changed(void *userdata) {
        daemon_post_change(userdata);
}

/* EGD clients are served by the loop like readers; the socket's file is
 * made while still root, so its group can be [device] group. */
static int setup_egd(Daemon *d) {
        int r;

        if (!d->config.egd_socket_path)
                return 0;
        r = egd_new(d->event,
                    &(EgdParams){ .path = d->config.egd_socket_path,
                                  .gid = d->gid,
                                  .limits = daemon_egd_limits(&d->config),
                                  .proc_root = d->hooks.proc_root },
                    d->store, d->crng, d->seeder,
                    &(EgdCallbacks){ .changed = on_egd_changed, .proc_budget = daemon_proc_budget, .userdata = d },
                    &d->egd);
        if (r == -EADDRINUSE)
                log_error("%s: another EGD server answers there", d->config.egd_socket_path);
        else if (r < 0)
                log_error("EGD socket %s: %s%s", d->config.egd_socket_path, strerror(-r), daemon_not_root_hint(r));
        else
                log_info("EGD socket %s: serving /dev/truerandom's blocks (mode 0660, group %s)",
                         d->config.egd_socket_path, d->config.group);
        return r;
}

static int setup_control(Daemon *d) {
        int r;

        r = control_new(d->event, d->config.socket_path,
                        &(ControlCallbacks){ .status_json = control_status,
                                             .command = daemon_command,
                                             .raw_source = control_raw_source,
                                             .userdata = d,
                                             .proc_root = d->hooks.proc_root,
                                             .proc_budget = daemon_proc_budget },
                        &d->control);
        if (r == -EADDRINUSE)
                log_error("%s: another truerandomd answers there", d->config.socket_path);
        else if (r < 0)
                log_error("control socket %s: %s%s", d->config.socket_path, strerror(-r), daemon_not_root_hint(r));
        return r;
}

/* The collectors (created, not started), the check that one can credit,
 * and the watchers: all before privileges go (under dmesg_restrict the
 * kernel log takes CAP_SYSLOG to open, unless systemd passed it in). */
static int setup_sources(Daemon *d) {
        int r;

        r = daemon_create_collectors(d);
        if (r >= 0)
                r = daemon_check_credited(d);
        if (r >= 0)
                r = daemon_start_watchers(d);
        return r;
}

/* The devices, up before privileges go; then nothing is root's. */
static int setup_devices(Daemon *d) {
        int r;

        r = daemon_add_devices(d);
        if (r >= 0)
                r = daemon_complete_cuse_init(d);
        /* Before any other thread exists and before a byte is served. */
        if (r >= 0)
                r = daemon_drop_privileges(d);
        return r;
}

int daemon_new(Config *config, const char *config_path, const DaemonHooks *hooks, Daemon **ret) {
        _cleanup_(daemon_freep) Daemon *d = NULL;
        int r;

        r = daemon_alloc(config, config_path, hooks, &d);
        if (r >= 0)
                r = setup_users(d);
        if (r >= 0)
                r = setup_pool(d);
        if (r >= 0)
                r = daemon_loop_new(d);
        if (r >= 0)
                r = setup_control(d);
        if (r >= 0)
                r = setup_egd(d);
        if (r >= 0)
                r = setup_sources(d);
        if (r >= 0)
                r = setup_devices(d);
        /* Privileges are gone: the ledger's files are [daemon] user's. */
        if (r >= 0) {
                daemon_events_open(d);
                daemon_record_selftests(d);
        }
        if (r >= 0)
                r = daemon_loop_start(d);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(d);
        return 0;
}

Daemon *daemon_free(Daemon *d) {
        if (!d)
                return NULL;
        daemon_events_close(d, d->stop_reason[0] ? d->stop_reason : "start-up failed");
        /* Parked readers first get their one reply, then the sources stop,
         * then the sessions close and the nodes disappear. */
        if (d->hub)
                cusehub_shutdown(d->hub, EIO);
        if (d->store)
                store_shutdown(d->store);
        for (size_t i = 0; i < _CONFIG_SOURCE_MAX; i++)
                d->sources[i].collector = collector_free(d->sources[i].collector);
        /* After the collectors: they hand it their windows. */
        d->gate = gate_free(d->gate);
        for (size_t i = 0; i < d->n_devices; i++)
                d->devices[i].io = sd_event_source_disable_unref(d->devices[i].io);
        d->control = control_free(d->control);
        d->egd = egd_free(d->egd);
        d->vmgen = vmgen_free(d->vmgen);
        d->lost.end_timer = sd_event_source_disable_unref(d->lost.end_timer);
        d->clockjump = clockjump_free(d->clockjump);
        d->hub = cusehub_free(d->hub);
        d->seeder = seeder_free(d->seeder);
        d->crng = crng_free(d->crng);
        d->store = store_free(d->store);
        d->change_source = sd_event_source_disable_unref(d->change_source);
        d->wake_source = sd_event_source_disable_unref(d->wake_source);
        d->reseed_timer = sd_event_source_disable_unref(d->reseed_timer);
        d->seed_due_timer = sd_event_source_disable_unref(d->seed_due_timer);
        d->backlog_timer = sd_event_source_disable_unref(d->backlog_timer);
        d->status_timer = sd_event_source_disable_unref(d->status_timer);
        d->watchdog_timer = sd_event_source_disable_unref(d->watchdog_timer);
        d->start_timer = sd_event_source_disable_unref(d->start_timer);
        d->sig_term = sd_event_source_disable_unref(d->sig_term);
        d->sig_int = sd_event_source_disable_unref(d->sig_int);
        d->sig_hup = sd_event_source_disable_unref(d->sig_hup);
        d->event = sd_event_unref(d->event);
        if (d->wake_fd >= 0)
                close(d->wake_fd);
        if (d->hooks.ready_fd >= 0)
                close(d->hooks.ready_fd);
        uidrate_done(&d->proc_looks);
        config_done(&d->config);
        free(d->config_path);
        free(d);
        return NULL;
}
