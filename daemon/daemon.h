/* daemon.h - truerandomd's wiring: one sd-event loop owns the CUSE sessions,
 * the collectors' wake-up eventfd, timers, signals and the control socket;
 * source threads only produce blocks and wake it.
 *
 * The loop is the one place that knows every module: it turns source events
 * into log lines, decides whether /dev/truerandom may serve (every credited
 * source passed its startup test, enough are healthy), sets the store's
 * demand from the hub's waiting readers, reseeds the CRNG on its timer, talks
 * to systemd (READY, STATUS, WATCHDOG, STOPPING, RELOADING) and reloads the
 * configuration on SIGHUP (a bad file changes nothing). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "cuse/cusedev.h"
#include "util/time-util.h"

struct fuse_custom_io;

typedef struct Daemon Daemon;

typedef struct DaemonHooks {
        /* Opens one CUSE device's transport (the device called name, of
         * kind): an fd, plus a custom io for tests (the protocol suite's
         * socketpair). NULL: open /dev/cuse. */
        int (*open_device)(void *userdata, const char *name, CuseDevKind kind, int *ret_fd,
                           const struct fuse_custom_io **ret_io);
        void *userdata;
        const char *dev_dir;      /* where nodes appear; NULL: /dev */
        const char *proc_root;    /* privilege checks; NULL: /proc */
        /* The clocksource of the machine identity, and where the vmgenid
         * device is looked for; NULL: /sys. */
        const char *sysfs_root;
        /* Opens the kernel log for the VM generation watcher (an fd giving
         * one record per read, or -errno). NULL: /dev/kmsg. */
        int (*open_kmsg)(void *userdata);
        /* The monotonic clock of the budgets (looks at /proc, the
         * ledger's bursts), in microseconds. NULL: CLOCK_MONOTONIC. */
        uint64_t (*now)(void *userdata);
        bool drop_privileges;     /* after setup keep no capability */
        /* config_path may be absent (no --config was given): a reload then
         * takes the defaults, as the start did, rather than failing. */
        bool config_optional;
        int ready_fd;             /* -1, or gets "READY\n" once ready, then closed */
} DaemonHooks;

/* Takes over *config (zeroed on success). config_path is re-read on SIGHUP
 * (NULL: reload keeps the defaults). Blocks SIGTERM, SIGINT and SIGHUP in the
 * calling thread: the loop gets them through signalfd. */
int daemon_new(Config *config, const char *config_path, const DaemonHooks *hooks, Daemon **ret);

/* Runs until SIGTERM/SIGINT (0) or a fatal error (-errno). */
int daemon_run(Daemon *d);

/* What the daemon would refuse at start, checked without starting it: the
 * group, and whether any credited source can run here (each is opened and
 * closed). 0, or -errno with *ret_error set ("FILE:LINE: reason" where a
 * line applies; malloc'd). For --check-config. */
int daemon_check_config(const Config *c, const char *path, char **ret_error);

/* Stops the sources, closes the sessions (the nodes disappear). Takes NULL. */
Daemon *daemon_free(Daemon *d);
