/* loop.c - what the loop does on its own events: the posted change (its
 * one pump per turn, demand, READY=1 and STATUS=), the wake-up eventfd,
 * the reseed, seed-due, status, start and watchdog timers, and SIGTERM;
 * and the loop itself, created with its sources (daemon_loop_new()) and
 * run (daemon_run()). Set-up and tear-down are daemon.c's.
 *
 * Invariant: the loop thread is the only one that touches the CRNG, the
 * seeder, the hub and its sessions; threads reach it only through the
 * eventfd (daemon_wake()). Nothing here is called by the daemon's other
 * parts: they post a change (change.c).
 * Flow: sources -> pool -> [loop: change, pump] -> CRNG, CUSE -> readers. */
#include "daemon-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "config/sourceconf.h"
#include "log.h"

/* ------------------------------------------------------------------ */
/* status, readiness                                                   */

/* STATUS= for systemd, at most once a second unless the state changed. */
static void update_status(Daemon *d) {
        usec_t now;
        StoreStats st;
        unsigned healthy = 0, credited = 0, parked = 0;
        char line[sizeof(d->status)];

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
        /* A refused reload shows in `systemctl status` until a good one:
         * the previous configuration is what runs. */
        snprintf(line, sizeof(line), "%s%s: %u/%u sources healthy, store %zu/%zu blocks, %u waiting, CRNG %s (gen %" PRIu64 ")",
                 d->stopping ? "stopping" : d->ready ? "serving" : "starting",
                 d->reloads > 0 && !d->last_reload_ok ? ", last reload REFUSED (the previous configuration runs)" : "",
                 healthy, credited, st.fill,
                 st.capacity, parked,
                 crng_is_seeded(d->crng) ? "seeded" : "unseeded", crng_generation(d->crng));
        if (strcmp(line, d->status) == 0) {
                (void)sd_event_source_set_enabled(d->status_timer, SD_EVENT_OFF);
                return;
        }
        /* The fill changes with every block: tell systemd at most once a
         * second (a state change at once), the rest from the timer. */
        now = now_usec(CLOCK_MONOTONIC);
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
        update_status(userdata);
        return 0;
}

/* READY=1 once every device is up and the CRNG seeded. */
static void check_ready(Daemon *d) {
        if (d->ready || d->stopping || !crng_is_seeded(d->crng))
                return;
        for (size_t i = 0; i < d->n_devices; i++)
                if (!d->devices[i].up)
                        return;
        d->ready = true;
        log_info("ready: %zu devices up, CRNG seeded", d->n_devices);
        update_status(d);
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

/* A reseed that the rate limit ([crng] min_reseed_interval) holds back
 * needs a wake-up when it falls due: with a full store and no reader,
 * nothing else would come, and the sources would not even run for it. */
static void arm_seed_due(Daemon *d) {
        usec_t at;

        if (!seeder_next_due(d->seeder, &at) || at <= now_usec(CLOCK_MONOTONIC)) {
                (void)sd_event_source_set_enabled(d->seed_due_timer, SD_EVENT_OFF);
                return;
        }
        (void)sd_event_source_set_time(d->seed_due_timer, at);
        (void)sd_event_source_set_enabled(d->seed_due_timer, SD_EVENT_ONESHOT);
}

void daemon_update_demand(void *userdata) {
        Daemon *d = userdata;
        store_set_demand(d->store, cusehub_wants_blocks(d->hub) || egd_wants_blocks(d->egd));
        /* Readers of one source's device wait: its blocks may make room. */
        store_set_wanted(d->store, cusehub_wanted_sources(d->hub));
        arm_seed_due(d);
}

static int on_seed_due(sd_event_source *s, uint64_t usec, void *userdata) {
        /* The change's pump takes a stored block now; else demand starts
         * the sources. */
        daemon_post_change(userdata);
        return 0;
}

/* The posted change (change.c), once per turn whoever posted it: a
 * wake-up, a start, a reload, a device event, a reseed trigger. The one
 * pump of the turn comes after the sources decided whether
 * /dev/truerandom serves. A wake-up runs it itself. */
static void run_change(Daemon *d) {
        /* Whatever was posted before is done by this run. */
        (void)sd_event_source_set_enabled(d->change_source, SD_EVENT_OFF);
        daemon_refresh_sources(d);
        /* The hub first: a due CRNG seed, then /dev/truerandom's readers;
         * EGD's after them. */
        cusehub_pump(d->hub);
        egd_pump(d->egd);
        daemon_events_reseeds(d);
        daemon_update_demand(d);
        check_ready(d);
        update_status(d);
}

static int on_change(sd_event_source *s, void *userdata) {
        run_change(userdata);
        return 0;
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
        /* The change at once: a wake-up is one already (a block, a state
         * change), and a posted one waiting is done with it. */
        run_change(d);
        return 0;
}

/* ------------------------------------------------------------------ */
/* timers and signals                                                  */

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
        snprintf(d->stop_reason, sizeof(d->stop_reason), "signal %d", (int) si->ssi_signo);
        sd_notify(false, "STOPPING=1");
        log_info("signal %d: stopping; answering waiting readers with EIO", si->ssi_signo);
        cusehub_shutdown(d->hub, EIO);
        egd_shutdown(d->egd);
        sd_event_exit(d->event, 0);
        return 0;
}

/* ------------------------------------------------------------------ */
/* the loop                                                            */

static int add_signals(Daemon *d) {
        sigset_t ss;
        int r;

        /* Blocked here, taken by signalfd (else sd_event_add_signal()
         * refuses: -EBUSY). */
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &ss, NULL);
        if ((r = sd_event_add_signal(d->event, &d->sig_term, SIGTERM, on_sigterm, d)) < 0 ||
            (r = sd_event_add_signal(d->event, &d->sig_int, SIGINT, on_sigterm, d)) < 0 ||
            (r = sd_event_add_signal(d->event, &d->sig_hup, SIGHUP, daemon_on_sighup, d)) < 0)
                return log_error_errno(r, "signals");
        return 0;
}

/* The change and what posts it from other threads. */
static int add_change(Daemon *d) {
        int r;

        d->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (d->wake_fd < 0)
                return log_error_errno(-errno, "eventfd");
        /* Ahead of events not yet taken: what a part posted is handled
         * before whatever comes next, as if it had run at once. */
        r = sd_event_add_defer(d->event, &d->change_source, on_change, d);
        if (r >= 0)
                r = sd_event_source_set_priority(d->change_source, SD_EVENT_PRIORITY_IMPORTANT);
        if (r >= 0)
                r = sd_event_source_set_enabled(d->change_source, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_io(d->event, &d->wake_source, d->wake_fd, EPOLLIN, on_wake, d);
        if (r >= 0)
                r = sd_event_add_time(d->event, &d->status_timer, CLOCK_MONOTONIC, 0, 0, on_status_timer, d);
        if (r < 0)
                return log_error_errno(r, "event sources");
        (void)sd_event_source_set_enabled(d->status_timer, SD_EVENT_OFF);
        return 0;
}

static int add_timers(Daemon *d) {
        usec_t watchdog_usec = 0;
        int r;

        r = sd_event_add_time(d->event, &d->seed_due_timer, CLOCK_MONOTONIC, 0, SEED_DUE_ACCURACY_USEC, on_seed_due, d);
        if (r < 0)
                return log_error_errno(r, "reseed timer");
        (void)sd_event_source_set_enabled(d->seed_due_timer, SD_EVENT_OFF);
        r = sd_event_add_time_relative(d->event, &d->reseed_timer, CLOCK_MONOTONIC,
                                       d->config.reseed_interval_usec, 0, on_reseed_timer, d);
        if (r < 0)
                return log_error_errno(r, "reseed timer");
        (void)sd_event_source_set_enabled(d->reseed_timer, SD_EVENT_ON);
        if (sd_watchdog_enabled(false, &watchdog_usec) > 0 && watchdog_usec > 0) {
                d->watchdog_usec = watchdog_usec / 2;
                r = sd_event_add_time_relative(d->event, &d->watchdog_timer, CLOCK_MONOTONIC, d->watchdog_usec,
                                               0, on_watchdog, d);
                if (r < 0)
                        return log_error_errno(r, "watchdog timer");
                (void)sd_event_source_set_enabled(d->watchdog_timer, SD_EVENT_ON);
        }
        return 0;
}

int daemon_loop_new(Daemon *d) {
        int r;

        r = sd_event_new(&d->event);
        if (r < 0)
                return log_error_errno(r, "creating the event loop");
        r = add_signals(d);
        if (r >= 0)
                r = add_change(d);
        if (r >= 0)
                r = add_timers(d);
        return r;
}

int daemon_loop_start(Daemon *d) {
        int r;

        if (d->config.start_delay_usec == 0)
                return daemon_start_collectors(d);
        r = sd_event_add_time_relative(d->event, &d->start_timer, CLOCK_MONOTONIC, d->config.start_delay_usec, 0,
                                       on_start_timer, d);
        if (r < 0)
                return log_error_errno(r, "start timer");
        log_info("sources start in %" PRIu64 " ms (start_delay_ms)", d->config.start_delay_usec / USEC_PER_MSEC);
        return 0;
}

int daemon_run(Daemon *d) {
        int r;

        update_status(d);
        r = sd_event_loop(d->event);
        if (d->exit_code < 0)
                r = d->exit_code;
        /* What ended the loop, for the ledger's "stop" record. */
        if (!d->stop_reason[0])
                snprintf(d->stop_reason, sizeof(d->stop_reason), "loop ended: %s", r < 0 ? strerror(-r) : "no error");
        return r < 0 ? r : 0;
}
