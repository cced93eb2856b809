/* daemon.c - the loop that wires sources, store, CRNG and CUSE devices:
 * set-up and tear-down (daemon_new, daemon_run, daemon_free), STATUS= and
 * READY=1, demand and wake-ups, the reseed and watchdog timers, SIGTERM and
 * the control socket's callbacks. See daemon.h for what it decides; the
 * modules it wires decide the rest. The daemon's other parts have files of
 * their own, sharing the Daemon through daemon-internal.h: the sources
 * (sources.c), the devices (devices.c), the reload (reload.c), the checks
 * at start and --check-config (checkconf.c), giving up root
 * (privileges.c), clones and resumes (watchers.c), credit = auto
 * (autocredit.c) and the status report (status.c).
 *
 * Threads: the collectors (one per credited source) and this loop. They
 * share only the Store (its own mutex) and an eventfd the collectors write
 * after each block or state change. Keys and replies stay on this thread. */
#include "daemon-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "config/sourceconf.h"
#include "crng/crng.h"
#include "log.h"
#include "pool/collector.h"
#include "pool/secret.h"
#include "pool/store.h"

/* ------------------------------------------------------------------ */
/* helpers                                                             */

void daemon_wake(void *userdata) {
        Daemon *d = userdata;
        uint64_t one = 1;

        /* An eventfd write never blocks short of 2^64 pending wakes. */
        (void)!write(d->wake_fd, &one, sizeof(one));
}

/* Secrets live in locked memory: an allocation failure there is most often
 * RLIMIT_MEMLOCK, so say where to look. */
const char *daemon_memlock_hint(int r) {
        return r == -ENOMEM ? " (locked memory: check LimitMEMLOCK)" : "";
}

/* What to do about a refusal when not started as root: the daemon needs
 * root (or systemd's unit) to set itself up. */
const char *daemon_not_root_hint(int r) {
        if ((r != -EACCES && r != -EPERM) || geteuid() == 0)
                return "";
        return " (truerandomd is not running as root: start it as root, and it switches to [daemon] user once "
               "set up, or as truerandomd.service)";
}

/* ------------------------------------------------------------------ */
/* status, readiness                                                   */

void daemon_update_status(Daemon *d) {
        uint64_t now;
        StoreStats st;
        unsigned healthy = 0, credited = 0, parked = 0;
        char line[sizeof(d->status)], assessing[128];
        bool assess = autocredit_status(d, assessing, sizeof(assessing));

        for (size_t i = 0; i < _CONFIG_SOURCE_MAX; i++) {
                if (!d->sources[i].collector)
                        continue;
                credited++;
                if (d->sources[i].last.state == SOURCE_HEALTHY)
                        healthy++;
        }
        for (size_t i = 0; i < d->n_devices; i++) {
                CuseDevStats ds;
                cusedev_get_stats(d->devices[i].dev, &ds);
                parked += ds.parked;
        }
        store_get_stats(d->store, &st);
        snprintf(line, sizeof(line), "%s: %s%s%u/%u sources healthy, store %zu/%zu blocks, %u waiting, CRNG %s (gen %" PRIu64 ")",
                 d->stopping ? "stopping" : d->ready ? "serving" : "starting", assess ? assessing : "",
                 assess ? "; " : "", healthy, credited, st.fill, st.capacity, parked,
                 crng_is_seeded(d->crng) ? "seeded" : "unseeded", crng_generation(d->crng));
        if (strcmp(line, d->status) == 0) {
                (void)sd_event_source_set_enabled(d->status_timer, SD_EVENT_OFF);
                return;
        }
        /* The fill changes with every block: tell systemd at most once a
         * second (a state change at once), the rest from the timer. */
        now = daemon_now_usec();
        if (strncmp(line, d->status, strcspn(line, ":") + 1) == 0 && now < d->status_usec + STATUS_INTERVAL_USEC) {
                (void)sd_event_source_set_time(d->status_timer, d->status_usec + STATUS_INTERVAL_USEC);
                (void)sd_event_source_set_enabled(d->status_timer, SD_EVENT_ONESHOT);
                return;
        }
        memcpy(d->status, line, sizeof(line));
        d->status_usec = now;
        (void)sd_event_source_set_enabled(d->status_timer, SD_EVENT_OFF);
        sd_notifyf(false, "STATUS=%s", d->status);
}

static int on_status_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        daemon_update_status(userdata);
        return 0;
}

void daemon_check_ready(Daemon *d) {
        if (d->ready || d->stopping || !crng_is_seeded(d->crng))
                return;
        for (size_t i = 0; i < d->n_devices; i++)
                if (!d->devices[i].up)
                        return;
        d->ready = true;
        log_info("ready: %zu devices up, CRNG seeded", d->n_devices);
        daemon_update_status(d);
        sd_notify(false, "READY=1");
        if (d->hooks.ready_fd >= 0) {
                (void)!write(d->hooks.ready_fd, "READY\n", 6);
                close(d->hooks.ready_fd);
                d->hooks.ready_fd = -1;
                /* In the background from here: the terminal may go away. */
                log_detach_stderr();
                int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (null >= 0) {
                        dup2(null, STDERR_FILENO);
                        close(null);
                }
        }
}

/* ------------------------------------------------------------------ */
/* demand, wake-ups                                                    */

/* sd-event's default slack (250 ms) would stretch a short interval. */
#define SEED_DUE_ACCURACY_USEC 1000ULL

/* A reseed that the rate limit ([crng] min_reseed_interval) holds back
 * needs a wake-up when it falls due: with a full store and no reader,
 * nothing else would come, and the sources would not even run for it. */
static void arm_seed_due(Daemon *d) {
        uint64_t at;

        if (!seeder_next_due(d->seeder, &at) || at <= daemon_now_usec()) {
                (void)sd_event_source_set_enabled(d->seed_due_timer, SD_EVENT_OFF);
                return;
        }
        (void)sd_event_source_set_time(d->seed_due_timer, at);
        (void)sd_event_source_set_enabled(d->seed_due_timer, SD_EVENT_ONESHOT);
}

/* Every change of demand passes here: readers waiting, a seed taken or
 * asked for (the hub's RNDRESEEDCRNG too). */
static void update_demand(void *userdata) {
        Daemon *d = userdata;
        store_set_demand(d->store, cusehub_wants_blocks(d->hub));
        arm_seed_due(d);
}

static int on_seed_due(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        /* The pump takes a stored block now; else demand starts the sources. */
        cusehub_pump(d->hub);
        update_demand(d);
        daemon_update_status(d);
        return 0;
}

void daemon_after_change(Daemon *d) {
        autocredit_poll(d);
        daemon_refresh_sources(d);
        cusehub_pump(d->hub);
        update_demand(d);
        daemon_check_ready(d);
        daemon_update_status(d);
}

static int on_start_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        int r = daemon_start_collectors(d);
        if (r < 0)
                sd_event_exit(d->event, r);
        return 0;
}

static int on_wake(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Daemon *d = userdata;
        uint64_t n;

        (void)!read(fd, &n, sizeof(n));
        daemon_after_change(d);
        return 0;
}

/* ------------------------------------------------------------------ */
/* timers and signals                                                  */

int daemon_reseed(Daemon *d, SeedTrigger trigger) {
        int r = seeder_trigger(d->seeder, trigger);

        if (r < 0)
                return r;
        /* The block goes to the CRNG now if there is one, before readers. */
        cusehub_pump(d->hub);
        update_demand(d);
        daemon_update_status(d);
        return 0;
}

static int on_reseed_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;
        bool healthy = false;

        for (size_t i = 0; i < _CONFIG_SOURCE_MAX; i++)
                if (d->sources[i].collector && d->sources[i].last.state == SOURCE_HEALTHY)
                        healthy = true;
        /* Reseed while sources are healthy: a reseed from nothing new would
         * only pretend. The first seed needs no timer (the seeder refuses
         * before it). */
        if (healthy)
                (void)daemon_reseed(d, SEED_TRIGGER_PERIODIC);
        return sd_event_source_set_time_relative(s, d->config.reseed_interval_usec);
}

static int on_watchdog(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        /* Sent from the loop itself: a stuck loop stops the pings. */
        sd_notify(false, "WATCHDOG=1");
        return sd_event_source_set_time_relative(s, d->watchdog_usec);
}

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Daemon *d = userdata;

        if (d->stopping)
                return 0;
        d->stopping = true;
        sd_notify(false, "STOPPING=1");
        log_info("signal %d: stopping; answering waiting readers with EIO", si->ssi_signo);
        cusehub_shutdown(d->hub, EIO);
        sd_event_exit(d->event, 0);
        return 0;
}

/* ------------------------------------------------------------------ */
/* control socket                                                      */

/* What the sources reported since the loop last looked is taken in first
 * (as their wake-up would), so that status shows one moment: a stop counted
 * is a source failed, its blocks purged and /dev/truerandom closed. */
static int control_status(void *userdata, char **ret_json) {
        Daemon *d = userdata;

        if (!d->stopping)
                daemon_after_change(d);
        return daemon_status_json(d, ret_json);
}

static int control_reseed(void *userdata) {
        Daemon *d = userdata;
        int r;

        r = daemon_reseed(d, SEED_TRIGGER_CONTROL);
        if (r < 0)
                return r;
        log_info("CRNG reseed requested over the control socket");
        return 0;
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
/* life cycle                                                          */

int daemon_new(Config *config, const char *config_path, const DaemonHooks *hooks, Daemon **ret) {
        uint8_t initial[CRNG_KEY_SIZE];
        uint64_t watchdog_usec = 0;
        sigset_t ss;
        Daemon *d;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return log_error_errno(-ENOMEM, "start-up");
        d->wake_fd = -1;
        d->state_dirfd = -1;
        d->started_usec = daemon_now_usec();
        d->hooks = hooks ? *hooks : (DaemonHooks){ .ready_fd = -1 };
        d->config = *config;
        *config = (Config){ 0 };
        if (config_path && !(d->config_path = strdup(config_path))) {
                r = log_error_errno(-ENOMEM, "start-up");
                goto fail;
        }
        r = daemon_resolve_group(d->config.group, &d->gid);
        if (r < 0) {
                log_error("group '%s' does not exist (create it with systemd-sysusers or groupadd, or set [device] group)",
                          d->config.group);
                goto fail;
        }
        if (d->hooks.drop_privileges && geteuid() == 0) {
                _cleanup_free_ char *why = NULL;

                r = daemon_resolve_run_user(&d->config, d->config_path, &d->run_uid, &d->run_gid, &why);
                if (r < 0) {
                        log_error("%s", why ? why : strerror(-r));
                        goto fail;
                }
        }

        r = store_new(d->config.store_blocks, d->config.low_water, &d->store);
        if (r < 0) {
                log_error_errno(r, "allocating the block store%s", daemon_memlock_hint(r));
                goto fail;
        }
        /* The unseeded CRNG starts from the kernel's: best effort output for
         * the drop-in urandom until the pool seeds it. */
        if (getrandom(initial, sizeof(initial), GRND_INSECURE) != sizeof(initial) &&
            getrandom(initial, sizeof(initial), 0) != sizeof(initial)) {
                r = log_error_errno(-errno, "getrandom");
                goto fail;
        }
        r = crng_new(initial, CRNG_BUFFER, &d->crng);
        sodium_memzero(initial, sizeof(initial));
        if (r < 0) {
                log_error_errno(r, "allocating the CRNG%s", daemon_memlock_hint(r));
                goto fail;
        }
        r = seeder_new(&(SeederParams){ .kernel_mix = d->config.source[CONFIG_SOURCE_KERNEL].enable,
                                        .min_interval_usec = d->config.min_reseed_interval_usec },
                       d->store, d->crng, &d->seeder);
        if (r < 0) {
                log_error_errno(r, "start-up");
                goto fail;
        }
        r = cusehub_new(&(CuseHubParams){ .limits = { .max_parked = d->config.max_parked,
                                                      .max_parked_per_uid = config_max_parked_per_uid(&d->config),
                                                      .max_open_per_uid = d->config.max_open_per_uid },
                                          .proc_root = d->hooks.proc_root },
                        d->store, d->crng, d->seeder,
                        &(CuseHubCallbacks){ .event = daemon_on_cuse_event,
                                             .demand = update_demand,
                                             .backlog = daemon_on_cuse_backlog,
                                             .before_request = daemon_before_cuse_request,
                                             .userdata = d },
                        &d->hub);
        if (r < 0) {
                log_error_errno(r, "creating the devices%s", daemon_memlock_hint(r));
                goto fail;
        }

        r = sd_event_new(&d->event);
        if (r < 0) {
                log_error_errno(r, "creating the event loop");
                goto fail;
        }
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &ss, NULL);
        if ((r = sd_event_add_signal(d->event, &d->sig_term, SIGTERM, on_sigterm, d)) < 0 ||
            (r = sd_event_add_signal(d->event, &d->sig_int, SIGINT, on_sigterm, d)) < 0 ||
            (r = sd_event_add_signal(d->event, &d->sig_hup, SIGHUP, daemon_on_sighup, d)) < 0) {
                log_error_errno(r, "signals");
                goto fail;
        }
        d->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (d->wake_fd < 0) {
                r = log_error_errno(-errno, "eventfd");
                goto fail;
        }
        r = sd_event_add_io(d->event, &d->wake_source, d->wake_fd, EPOLLIN, on_wake, d);
        if (r >= 0)
                r = sd_event_add_time(d->event, &d->status_timer, CLOCK_MONOTONIC, 0, 0, on_status_timer, d);
        if (r < 0) {
                log_error_errno(r, "event sources");
                goto fail;
        }
        (void)sd_event_source_set_enabled(d->status_timer, SD_EVENT_OFF);
        r = sd_event_add_time(d->event, &d->seed_due_timer, CLOCK_MONOTONIC, 0, SEED_DUE_ACCURACY_USEC, on_seed_due, d);
        if (r < 0) {
                log_error_errno(r, "reseed timer");
                goto fail;
        }
        (void)sd_event_source_set_enabled(d->seed_due_timer, SD_EVENT_OFF);
        r = sd_event_add_time_relative(d->event, &d->reseed_timer, CLOCK_MONOTONIC,
                                       d->config.reseed_interval_usec, 0, on_reseed_timer, d);
        if (r < 0) {
                log_error_errno(r, "reseed timer");
                goto fail;
        }
        (void)sd_event_source_set_enabled(d->reseed_timer, SD_EVENT_ON);
        if (sd_watchdog_enabled(false, &watchdog_usec) > 0 && watchdog_usec > 0) {
                d->watchdog_usec = watchdog_usec / 2;
                r = sd_event_add_time_relative(d->event, &d->watchdog_timer, CLOCK_MONOTONIC, d->watchdog_usec,
                                               0, on_watchdog, d);
                if (r < 0) {
                        log_error_errno(r, "watchdog timer");
                        goto fail;
                }
                (void)sd_event_source_set_enabled(d->watchdog_timer, SD_EVENT_ON);
        }

        r = control_new(d->event, d->config.socket_path,
                        &(ControlCallbacks){ .status_json = control_status,
                                             .reseed = control_reseed,
                                             .raw_source = control_raw_source,
                                             .userdata = d,
                                             .proc_root = d->hooks.proc_root },
                        &d->control);
        if (r < 0) {
                if (r == -EADDRINUSE)
                        log_error("%s: another truerandomd answers there", d->config.socket_path);
                else
                        log_error("control socket %s: %s%s", d->config.socket_path, strerror(-r),
                                  daemon_not_root_hint(r));
                goto fail;
        }

        autocredit_open(d);
        r = daemon_create_collectors(d);
        if (r >= 0)
                r = daemon_check_credited(d);
        /* Before privileges go: under dmesg_restrict the kernel log takes
         * CAP_SYSLOG to open, unless systemd passed it in (vmgenid.h). */
        if (r >= 0)
                r = daemon_start_watchers(d);
        if (r < 0)
                goto fail;

        r = daemon_add_device(d, CUSEDEV_TRNG, d->config.device[CONFIG_DEVICE_TRNG].name,
                              d->config.device[CONFIG_DEVICE_TRNG].mode, d->gid);
        if (r >= 0 && config_device_served(&d->config.device[CONFIG_DEVICE_RANDOM]))
                r = daemon_add_device(d, CUSEDEV_RANDOM, d->config.device[CONFIG_DEVICE_RANDOM].name,
                                      d->config.device[CONFIG_DEVICE_RANDOM].mode, 0);
        if (r >= 0 && config_device_served(&d->config.device[CONFIG_DEVICE_URANDOM]))
                r = daemon_add_device(d, CUSEDEV_URANDOM, d->config.device[CONFIG_DEVICE_URANDOM].name,
                                      d->config.device[CONFIG_DEVICE_URANDOM].mode, 0);
        if (r >= 0 && config_device_served(&d->config.device[CONFIG_DEVICE_NULL]))
                r = daemon_add_device(d, CUSEDEV_NULL, d->config.device[CONFIG_DEVICE_NULL].name,
                                      d->config.device[CONFIG_DEVICE_NULL].mode, 0);
        if (r >= 0)
                r = daemon_complete_cuse_init(d);
        /* Before any other thread exists and before a byte is served. */
        if (r >= 0)
                r = daemon_drop_privileges(d);
        if (r < 0)
                goto fail;

        if (d->config.start_delay_usec > 0) {
                r = sd_event_add_time_relative(d->event, &d->start_timer, CLOCK_MONOTONIC,
                                               d->config.start_delay_usec, 0, on_start_timer, d);
                if (r < 0) {
                        log_error_errno(r, "start timer");
                        goto fail;
                }
                log_info("sources start in %" PRIu64 " ms (start_delay_ms)",
                         d->config.start_delay_usec / USEC_PER_MSEC);
        } else {
                r = daemon_start_collectors(d);
                if (r < 0)
                        goto fail;
        }
        *ret = d;
        return 0;

fail:
        daemon_free(d);
        return r;
}

int daemon_run(Daemon *d) {
        int r;

        daemon_update_status(d);
        r = sd_event_loop(d->event);
        if (d->exit_code < 0)
                return d->exit_code;
        return r < 0 ? r : 0;
}

Daemon *daemon_free(Daemon *d) {
        if (!d)
                return NULL;
        /* Parked readers first get their one reply, then the sources stop,
         * then the sessions close and the nodes disappear. */
        if (d->hub)
                cusehub_shutdown(d->hub, EIO);
        if (d->store)
                store_shutdown(d->store);
        for (size_t i = 0; i < _CONFIG_SOURCE_MAX; i++)
                d->sources[i].collector = collector_free(d->sources[i].collector);
        autocredit_close(d);
        for (size_t i = 0; i < d->n_devices; i++)
                d->devices[i].io = sd_event_source_disable_unref(d->devices[i].io);
        d->control = control_free(d->control);
        d->vmgen = vmgen_free(d->vmgen);
        d->clockjump = clockjump_free(d->clockjump);
        d->hub = cusehub_free(d->hub);
        d->seeder = seeder_free(d->seeder);
        d->crng = crng_free(d->crng);
        d->store = store_free(d->store);
        d->wake_source = sd_event_source_disable_unref(d->wake_source);
        d->reseed_timer = sd_event_source_disable_unref(d->reseed_timer);
        d->seed_due_timer = sd_event_source_disable_unref(d->seed_due_timer);
        d->backlog_timer = sd_event_source_disable_unref(d->backlog_timer);
        d->status_timer = sd_event_source_disable_unref(d->status_timer);
        d->watchdog_timer = sd_event_source_disable_unref(d->watchdog_timer);
        d->start_timer = sd_event_source_disable_unref(d->start_timer);
        d->identity_timer = sd_event_source_disable_unref(d->identity_timer);
        d->sig_term = sd_event_source_disable_unref(d->sig_term);
        d->sig_int = sd_event_source_disable_unref(d->sig_int);
        d->sig_hup = sd_event_source_disable_unref(d->sig_hup);
        d->event = sd_event_unref(d->event);
        if (d->wake_fd >= 0)
                close(d->wake_fd);
        if (d->hooks.ready_fd >= 0)
                close(d->hooks.ready_fd);
        config_done(&d->config);
        free(d->config_path);
        free(d);
        return NULL;
}
