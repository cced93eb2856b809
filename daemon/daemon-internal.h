/* daemon-internal.h - the Daemon's parts, shared by the files of the daemon
 * library: daemon.c (set-up, tear-down), loop.c (the loop's handlers) and
 * the files named in the sections below, each declaring what the others
 * call. Direction: daemon.c and loop.c use the others; none of the others
 * calls them (each posts a change, change.c, at the bottom), and they use
 * each other without a circle. Nothing outside daemon/ includes it. */
#pragma once

#include <stdint.h>

#include <systemd/sd-event.h>

#include "crng/crng.h"
#include "cuse/uidhash.h"
#include "crng/seeder.h"
#include "daemon.h"
#include "daemon/control/control.h"
#include "daemon/egd/egd.h"
#include "daemon/watch/clockjump.h"
#include "daemon/watch/vmgenid.h"
#include "ledger/ledger.h"
#include "proto/ctlproto.h"
#include "pool/collector.h"
#include "pool/gate.h"
#include "pool/store.h"
#include "ratewin.h"
#include "util/time-util.h"

#define CRNG_BUFFER 8192U
#define STATUS_INTERVAL_USEC USEC_PER_SEC

typedef struct SourceSlot {
        Collector *collector;        /* NULL: not configured, or kernel */
        CollectorStats last;         /* what the loop last took in (and logged) */
        bool passed_startup;         /* reached HEALTHY at least once */
        RateWindow rate;             /* moved on by the loop, read by status */
} SourceSlot;

/* A device the configuration can ask for: one row of the table
 * daemon_config_devices() makes of it. */
typedef struct DeviceSpec {
        CuseDevKind kind;        /* its behaviour (cuse/cusekinds.c) */
        const char *name;        /* CUSE DEVNAME (borrowed, or own_name); NULL only when !enabled */
        mode_t mode;
        const char *mode_key;    /* the [device] key of its mode, for messages */
        bool grouped;            /* its node's group is [device] group, else root's */
        bool enabled;            /* served */
        bool per_source;         /* a source's own TRNG device: source's blocks alone */
        ConfigSource source;
        char own_name[CONFIG_DEVICE_NAME_MAX + 1]; /* a per-source device's name */
} DeviceSpec;

/* What truerandom-seed-kernel said it gave the kernel's pool (kernel-fed). */
typedef struct KernelFeed {
        uint64_t feeds;
        uint64_t last_bits;
        char last_reason[CTL_SOURCE_NAME_MAX + 1];
        usec_t last_usec;            /* CLOCK_MONOTONIC; 0: none yet */
} KernelFeed;

/* The seed-due timer's accuracy, and the end of a burst of lost records
 * that must come after it: sd-event's default slack (250 ms) would stretch
 * a short interval. */
#define SEED_DUE_ACCURACY_USEC USEC_PER_MSEC

/* A burst of lost kernel log records (watchers.c): losses less than
 * SEEDER_LOST_PURGE_USEC apart. */
typedef struct LostBurst {
        uint64_t losses;             /* 0: no burst */
        usec_t first_usec, last_usec;
        SeederStats before;          /* the seeder's counts before its first loss */
        sd_event_source *end_timer;  /* its last loss + SEEDER_LOST_PURGE_USEC */
} LostBurst;

/* One event's share of the ledger (events.c). */
typedef struct EventBucket {
        unsigned tokens;
        usec_t at;                   /* when tokens were last earned; 0: never */
        uint64_t suppressed;         /* records not written since the last one */
} EventBucket;

/* The ledger of the claim's events (events.c). */
typedef struct EventLog {
        Ledger *ledger;              /* NULL: not kept (error says why) */
        int error;                   /* the last open or write error; 0: none */
        uint64_t records;            /* written this run */
        uint64_t lost;               /* not written, for an error */
        EventBucket bucket[_LEDGER_EVENT_MAX];
        SeederStats seeder;          /* the reseeds already recorded */
} EventLog;

typedef struct DeviceSlot {
        Daemon *daemon;
        size_t row;              /* its row of daemon_config_devices() */
        CuseDev *dev;
        sd_event_source *io;
        bool up;
} DeviceSlot;

struct Daemon {
        Config config;
        char *config_path;
        DaemonHooks hooks;
        gid_t gid;
        UidRate proc_looks;      /* looks at /proc per uid and second (privileges.c) */

        sd_event *event;
        sd_event_source *sig_term, *sig_int, *sig_hup;
        sd_event_source *change_source;  /* the posted change (change.c) */
        sd_event_source *wake_source, *reseed_timer, *watchdog_timer, *start_timer, *status_timer;
        sd_event_source *seed_due_timer; /* a reseed the rate limit held falls due */
        sd_event_source *backlog_timer;  /* the hub's waiting replies, a batch per turn */
        int wake_fd;

        Store *store;
        Gate *gate;                  /* judges every credited source's windows */
        Crng *crng;
        Seeder *seeder;
        CuseHub *hub;
        Control *control;
        Egd *egd;                    /* NULL: no [egd] socket */
        KernelFeed kernel_feed;
        Vmgen *vmgen;                /* VM generation changes (clones, restores) */
        LostBurst lost;
        ClockJump *clockjump;        /* resumes from suspend */
        EventLog events;             /* the ledger (events.c) */
        SourceSlot sources[_CONFIG_SOURCE_MAX];
        DeviceSlot devices[CUSE_MAX_DEVICES];
        size_t n_devices;

        usec_t watchdog_usec;        /* ping interval, 0: no watchdog */
        usec_t started_usec;         /* CLOCK_MONOTONIC */
        uint64_t reloads;            /* SIGHUPs handled */
        usec_t last_reload_usec;     /* 0: never */
        bool last_reload_ok;
        char last_reload_error[256]; /* why the last one was refused */
        bool trng_serving;           /* /dev/truerandom hands out bytes (the loop's last turn) */
        bool sources_started;
        bool ready;
        bool stopping;
        char stop_reason[32];        /* the ledger's "stop" record: "signal 15", "loop ended: ..." */
        uid_t run_uid;               /* [daemon] user, when started as root */
        gid_t run_gid;
        int exit_code;
        char status[256];            /* the STATUS= line last sent */
        usec_t status_usec;          /* when it was sent */
};

/* change.c: how the parts ask the loop for a turn. The loop's change
 * handler then takes in finished assessments, the sources' stats (and so
 * whether /dev/truerandom serves), pumps the hub once, and sets demand,
 * readiness and STATUS=. */
/* Arms the change for the next turn; any number of posts, one run. */
void daemon_post_change(Daemon *d);
/* The same from any thread (collectors, assessors): the wake-up eventfd. */
void daemon_wake(void *userdata);
/* Every reseed trigger of the loop (timer, control socket, detectors):
 * seeder_trigger(), then a posted change, whose pump gives a stored block
 * to the CRNG ahead of readers. 0 or the seeder's -errno (-ENODATA before
 * the first seed). Does not log. */
int daemon_reseed(Daemon *d, SeedTrigger trigger);

/* loop.c: the loop's own handlers (the change among them) */
/* Creates the loop with its signals, the change, the wake-up eventfd and
 * its timers. 0 or -errno (logged). */
int daemon_loop_new(Daemon *d);
/* Starts the collectors now, or after [pool] start_delay_ms. 0 or -errno
 * (logged). */
int daemon_loop_start(Daemon *d);
/* CuseHubCallbacks.demand: readers waiting, a seed taken or asked for (the
 * hub's RNDRESEEDCRNG too) set the store's demand and the seed-due timer. */
void daemon_update_demand(void *userdata);

/* commands.c */
/* ControlCallbacks.command: the commands the daemon answers itself, one
 * row each (reseed, ...). */
int daemon_command(void *userdata, const CtlRequest *req, char **ret_payload, char *text, size_t text_size);
/* Whether name has a row here. */
bool daemon_command_served(const char *name);

/* status.c */
/* The status as one moment: the collectors' stats read now (without
 * acting on them) and whether /dev/truerandom serves judged on those. */
int daemon_status_json(Daemon *d, char **ret_json);

/* privileges.c */
/* [daemon] user as the uid and gid to run as; else -errno and why in
 * *ret_error ("FILE:LINE: ...", malloc'd). */
int daemon_resolve_run_user(const Config *c, const char *path, uid_t *ret_uid, gid_t *ret_gid, char **ret_error);
/* Gives up root and every capability (hooks.drop_privileges), first handing
 * the daemon's own directories to the user it becomes. 0 or -errno (logged). */
int daemon_drop_privileges(Daemon *d);
/* Spends one of uid's looks at /proc this second ([device]
 * proc_checks_per_uid) for the hub, control and EGD (their proc_budget
 * callbacks; userdata is the Daemon): false when it has none left. */
bool daemon_proc_budget(void *userdata, uint32_t uid);
/* The hint a refusal gets when truerandomd did not start as root ("" else). */
const char *daemon_not_root_hint(int r);
/* The hint an allocation failure gets (locked memory), "" for other errors. */
const char *daemon_memlock_hint(int r);

/* devices.c */
/* The owner to give the nodes: root, or unchanged when not root (a test). */
uid_t daemon_node_owner(void);
/* A group name or number to its gid; -ENOENT if there is none. */
int daemon_resolve_group(const char *group, gid_t *ret);
/* The hub's events (CuseHubCallbacks.event): logged, then a posted change
 * (readiness, STATUS=). */
void daemon_on_cuse_event(void *userdata, CuseDev *dev, CuseEvent event, int error);
/* CuseHubCallbacks.backlog: a loop turn for cusehub_serve_backlog(), and
 * one more after each while replies wait. */
void daemon_on_cuse_backlog(void *userdata);
/* CuseHubCallbacks.before_request: a resume and the kernel log's VM fork
 * record are looked at before every request. */
void daemon_before_cuse_request(void *userdata);
/* The one place that maps the configuration's devices to CUSE kinds: the
 * rows of every device a configuration can ask for, enabled or not, in
 * creation order, into ret; returns how many (the same number for every
 * configuration: a row's index is its identity across a reload). */
size_t daemon_config_devices(const Config *c, DeviceSpec ret[static CUSE_MAX_DEVICES]);
/* The sources whose own devices may serve now (bit per source id), for
 * cusehub_set_sources_open(): healthy ones. */
uint32_t daemon_sources_open(const Daemon *d, const CollectorStats stats[static _CONFIG_SOURCE_MAX]);
/* Opens the session of every enabled row (hooks.open_device, else
 * /dev/cuse) and watches it on the loop. 0 or -errno (logged). */
int daemon_add_devices(Daemon *d);
/* Whether c asks for other devices than the running configuration (names,
 * which are served): those change only on restart. */
bool daemon_devices_changed(const Daemon *d, const Config *c);
/* The first [device] key of c that would change a running node (group, a
 * mode), or NULL. */
const char *daemon_devices_node_change(const Daemon *d, const Config *c, gid_t gid);
/* Applies c's owner, group and mode to every running node (root only:
 * the nodes are root's); failures are logged. */
void daemon_devices_apply_nodes(Daemon *d, const Config *c, gid_t gid);
/* Answers every device's CUSE_INIT, before privileges go. 0 or -errno
 * (logged). */
int daemon_complete_cuse_init(Daemon *d);

/* sources.c */
/* The gate's worker threads for c: one per creditable source, at most one
 * per CPU, at least one. */
unsigned daemon_gate_threads(const Config *c);
/* Creates source i's collector if it is creditable (its windows judged by
 * d->gate under its credit or auto's cap) and starts it if the sources
 * run. selftest_induce: its self-test at open is fed a stuck window
 * (truerandomctl induce SOURCE selftest). 0 or -errno (logged). */
int daemon_source_start(Daemon *d, ConfigSource i, bool selftest_induce);
/* Records the self-tests the sources ran at their open (before the
 * ledger could: it opens after the privilege drop). */
void daemon_record_selftests(Daemon *d);
/* Creates the collector of every creditable source. 0 or -errno (logged). */
int daemon_create_collectors(Daemon *d);
/* Starts the collectors. 0 or -errno (logged). */
int daemon_start_collectors(Daemon *d);
/* Whether /dev/truerandom may serve, judged on stats[i] for each source
 * with a collector and the startups the loop saw pass. Acts on nothing. */
bool daemon_sources_serving(const Daemon *d, const CollectorStats stats[static _CONFIG_SOURCE_MAX]);
/* Reads every collector's stats, logs what changed, and opens or closes
 * /dev/truerandom (the hub serves it at its next pump). */
void daemon_refresh_sources(Daemon *d);
/* A collector's last_error in words (-EPERM: the device justifies no credit). */
const char *daemon_source_error(int error);

/* checkconf.c (and daemon_check_config() in daemon.h) */
/* 0 while a credited source can run (or may: one still to be assessed);
 * else -ENOMEDIUM, after logging one line naming each source and why. */
int daemon_check_credited(Daemon *d);
/* reload.c */
/* SIGHUP: reloads the configuration, or keeps the running one. */
int daemon_on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata);
/* Reads the configuration again and applies it whole, or refuses it whole
 * (-errno; why in d->last_reload_error, and in the log). */
int daemon_reload(Daemon *d);
/* The devices' bounds and who the privileged ioctls admit, from c, at
 * start and on reload. */
CuseHubLimits daemon_hub_limits(const Config *c);
/* The EGD server's bounds from c, at start and on reload: the devices'
 * ([device] max_parked in all, max_open_per_uid connections and
 * max_parked_per_uid waiting reads per uid). */
EgdLimits daemon_egd_limits(const Config *c);

/* events.c */
/* Opens the ledger in [assessment] state_directory and records the start
 * (logged; a failure leaves it closed, the daemon running). */
void daemon_events_open(Daemon *d);
/* Records the stop with its reason and closes the ledger. */
void daemon_events_close(Daemon *d, const char *reason);
/* One record of event e (record.h has each event's required fields), or
 * none past the event's burst (counted, said by its next record). */
void daemon_event(Daemon *d, LedgerEvent e, const LedgerField *fields, size_t n_fields);
#define DAEMON_EVENT(d, e, ...)                                                                           \
        daemon_event((d), (e), (const LedgerField[]){ __VA_ARGS__ },                                     \
                     sizeof((const LedgerField[]){ __VA_ARGS__ }) / sizeof(LedgerField))
/* The reseeds the seeder did since the last look, a record per trigger. */
void daemon_events_reseeds(Daemon *d);
/* A purge of the store between two looks at the seeder, if there was one. */
void daemon_events_purge(Daemon *d, const SeederStats *was, const SeederStats *now, const char *reason);
/* CLOCK_MONOTONIC, or the test's (hooks.now), for the daemon's budgets:
 * the ledger's bursts, the looks at /proc. */
usec_t daemon_now(const Daemon *d);
/* c's SHA-256 in hex, as the ledger records it. */
const char *daemon_config_sha256(const Config *c, char ret[static 2 * CONFIG_SHA256_BYTES + 1]);

/* watchers.c */
/* Starts the suspend detector and the VM generation watcher, and logs
 * whether clones and restores will be seen. 0 or -errno (logged). */
int daemon_start_watchers(Daemon *d);
