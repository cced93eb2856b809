/* daemon-internal.h - the Daemon's parts, shared by the files of the daemon
 * library: daemon.c (wiring, loop, life cycle) and the files named in the
 * sections below, each declaring what the others call. Nothing else
 * includes it. */
#pragma once

#include <stdint.h>

#include <systemd/sd-event.h>

#include "assess/assessor.h"
#include "assess/credit.h"
#include "crng/crng.h"
#include "crng/seeder.h"
#include "daemon.h"
#include "daemon/control/control.h"
#include "daemon/watch/clockjump.h"
#include "daemon/watch/vmgenid.h"
#include "pool/collector.h"
#include "pool/store.h"
#include "ratewin.h"

#define CRNG_BUFFER 8192U
#define STATUS_INTERVAL_USEC 1000000ULL

typedef struct SourceSlot {
        Collector *collector;        /* NULL: not configured, or kernel */
        CollectorStats last;         /* what was last logged */
        bool passed_startup;         /* reached HEALTHY at least once */
        RateWindow rate;             /* moved on by the loop, read by status */
        /* The credit in force and the estimate behind it (autocredit.c). */
        CreditDecision credit;
        bool has_assessment;         /* assessment is this machine's */
        bool assessment_fresh;       /* made by this run, not read back */
        Assessment assessment;
        Assessor *assessor;          /* running */
        bool assess_queued;          /* waits for the running one */
        bool progress_logged;        /* its expected time was logged */
        int assess_error;            /* why the last one failed, 0 if none */
        char assess_why[192];        /* why it is assessed */
} SourceSlot;

typedef struct DeviceSlot {
        Daemon *daemon;
        CuseDev *dev;
        sd_event_source *io;
        bool up;
} DeviceSlot;

struct Daemon {
        Config config;
        char *config_path;
        DaemonHooks hooks;
        gid_t gid;

        sd_event *event;
        sd_event_source *sig_term, *sig_int, *sig_hup;
        sd_event_source *wake_source, *reseed_timer, *watchdog_timer, *start_timer, *status_timer;
        sd_event_source *seed_due_timer; /* a reseed the rate limit held falls due */
        sd_event_source *backlog_timer;  /* the hub's waiting replies, a batch per turn */
        int wake_fd;
        int state_dirfd;             /* [assessment] state_directory, -1 if none */
        Identity machine;            /* what an assessment must hold for, as last read */
        sd_event_source *identity_timer; /* reads it again (recheck.c) */
        uint64_t last_extend_usec;   /* last EXTEND_TIMEOUT_USEC= */
        /* Assessments of sources a reload changed, told to stop; joined
         * once done, so the loop never waits for one. */
        Assessor *retired[_CONFIG_SOURCE_MAX];

        Store *store;
        Crng *crng;
        Seeder *seeder;
        CuseHub *hub;
        Control *control;
        Vmgen *vmgen;                /* VM generation changes (clones, restores) */
        ClockJump *clockjump;        /* resumes from suspend */
        SourceSlot sources[_CONFIG_SOURCE_MAX];
        DeviceSlot devices[_CUSEDEV_KIND_MAX];
        size_t n_devices;

        uint64_t watchdog_usec;      /* ping interval, 0: no watchdog */
        uint64_t started_usec;       /* CLOCK_MONOTONIC */
        uint64_t reloads;            /* SIGHUPs handled */
        uint64_t last_reload_usec;   /* 0: never */
        bool last_reload_ok;
        char last_reload_error[256]; /* why the last one was refused */
        bool trng_serving;           /* /dev/truerandom hands out bytes */
        bool sources_started;
        bool ready;
        bool stopping;
        uid_t run_uid;               /* [daemon] user, when started as root */
        gid_t run_gid;
        int exit_code;
        char status[256];            /* the STATUS= line last sent */
        uint64_t status_usec;        /* when it was sent */
};

/* daemon.c */
/* Every reseed trigger of the loop (timer, control socket, detectors):
 * seeder_trigger(), then the pump, so a stored block goes to the CRNG at
 * once, ahead of readers; demand and STATUS= follow. 0 or the seeder's
 * -errno (-ENODATA before the first seed). Does not log. */
int daemon_reseed(Daemon *d, SeedTrigger trigger);
/* Wakes the loop from any thread (collectors, assessors). */
void daemon_wake(void *userdata);
/* STATUS= for systemd, at most once a second unless the state changed. */
void daemon_update_status(Daemon *d);
/* READY=1 once every device is up and the CRNG seeded. */
void daemon_check_ready(Daemon *d);
/* The hint a refusal gets when truerandomd did not start as root ("" else). */
const char *daemon_not_root_hint(int r);
/* The hint an allocation failure gets (locked memory), "" for other errors. */
const char *daemon_memlock_hint(int r);
/* After anything changed (a wake-up, a start, a reload): assessments taken,
 * sources refreshed, the hub pumped, demand, readiness and STATUS=. */
void daemon_after_change(Daemon *d);

/* status.c */
int daemon_status_json(Daemon *d, char **ret_json);
uint64_t daemon_now_usec(void);
/* A collector's last_error in words (-EPERM: the device justifies no credit). */
const char *daemon_source_error(int error);

/* autocredit.c */
void autocredit_open(Daemon *d);
void autocredit_close(Daemon *d);
/* Decides source i's credit (slot->credit) from the configuration and the
 * stored assessment, and queues an assessment where credit = auto has
 * none for this machine. Logs the decision. */
void autocredit_resolve(Daemon *d, ConfigSource i);
/* Stops a running assessment of the slot (without waiting for it) and
 * forgets its estimate. */
void autocredit_reset(Daemon *d, SourceSlot *slot);
/* Queued or running. */
bool autocredit_pending(const SourceSlot *slot);
/* On every wake-up: takes finished assessments (credits their sources),
 * starts the next queued one once the sources run, tells systemd. */
void autocredit_poll(Daemon *d);
/* The STATUS= words for a running assessment; false when none runs. */
bool autocredit_status(Daemon *d, char *buf, size_t size);
/* Adds credit_origin, credit_cap_bits, credit_above_estimate, estimate and
 * assessment to a source's status object. */
struct json_object;
int autocredit_source_json(Daemon *d, ConfigSource i, struct json_object *o);

/* recheck.c */
/* Reads the machine's identity again and stops crediting every source
 * whose assessment no longer holds for it (or for [assessment] samples):
 * pending until assessed again. event names the occasion in the log and
 * status ("reload", "resume", ...). */
void autocredit_recheck(Daemon *d, const char *event);
/* Arms the timer that calls autocredit_recheck() every minute
 * (hooks.identity_check_usec in tests). 0 or -errno (logged). */
int autocredit_start_recheck(Daemon *d);

/* privileges.c */
/* [daemon] user as the uid and gid to run as; else -errno and why in
 * *ret_error ("FILE:LINE: ...", malloc'd). */
int daemon_resolve_run_user(const Config *c, const char *path, uid_t *ret_uid, gid_t *ret_gid, char **ret_error);
/* Gives up root and every capability (hooks.drop_privileges), first handing
 * the daemon's own directories to the user it becomes. 0 or -errno (logged). */
int daemon_drop_privileges(Daemon *d);

/* devices.c */
/* The owner to give the nodes: root, or unchanged when not root (a test). */
uid_t daemon_node_owner(void);
/* A group name or number to its gid; -ENOENT if there is none. */
int daemon_resolve_group(const char *group, gid_t *ret);
/* The hub's events (CuseHubCallbacks.event): logged, then readiness. */
void daemon_on_cuse_event(void *userdata, CuseDev *dev, CuseEvent event, int error);
/* CuseHubCallbacks.backlog: a loop turn for cusehub_serve_backlog(), and
 * one more after each while replies wait. */
void daemon_on_cuse_backlog(void *userdata);
/* CuseHubCallbacks.before_request: a resume and the kernel log's VM fork
 * record are looked at before every request. */
void daemon_before_cuse_request(void *userdata);
/* Opens device kind's session (hooks.open_device, else /dev/cuse) and
 * watches it on the loop. 0 or -errno (logged). */
int daemon_add_device(Daemon *d, CuseDevKind kind, const char *name, mode_t mode, gid_t gid);
/* Answers every device's CUSE_INIT, before privileges go. 0 or -errno
 * (logged). */
int daemon_complete_cuse_init(Daemon *d);

/* sources.c */
/* Creates source i's collector at the credit decided for it (none when
 * that is 0) and starts it if the sources run. 0 or -errno (logged). */
int daemon_source_start(Daemon *d, ConfigSource i);
/* Decides the credit of every creditable source and creates its collector.
 * 0 or -errno (logged). */
int daemon_create_collectors(Daemon *d);
/* Starts the collectors (and so the first assessment). 0 or -errno
 * (logged). */
int daemon_start_collectors(Daemon *d);
/* Reads every collector's stats, logs what changed, and opens or closes
 * /dev/truerandom. */
void daemon_refresh_sources(Daemon *d);

/* checkconf.c (and daemon_check_config() in daemon.h) */
/* 0 while a credited source can run (or may: one still to be assessed);
 * else -ENOMEDIUM, after logging one line naming each source and why. */
int daemon_check_credited(Daemon *d);

/* reload.c */
/* SIGHUP: reloads the configuration, or keeps the running one. */
int daemon_on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata);

/* watchers.c */
/* Starts the suspend detector and the VM generation watcher, and logs
 * whether clones and restores will be seen. 0 or -errno (logged). */
int daemon_start_watchers(Daemon *d);
