/* daemon-internal.h - the Daemon's parts, shared by daemon.c (wiring and
 * loop) and status.c (the status report). Nothing else includes it. */
#pragma once

#include <stdint.h>

#include <systemd/sd-event.h>

#include "control.h"
#include "crng/crng.h"
#include "daemon.h"
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
        int wake_fd;

        Store *store;
        Crng *crng;
        CuseHub *hub;
        Control *control;
        SourceSlot sources[_CONFIG_SOURCE_MAX];
        DeviceSlot devices[_CUSEDEV_KIND_MAX];
        size_t n_devices;

        uint64_t watchdog_usec;      /* ping interval, 0: no watchdog */
        uint64_t started_usec;       /* CLOCK_MONOTONIC */
        uint64_t reseeds;
        uint64_t last_reseed_usec;   /* 0: never */
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

/* status.c */
int daemon_status_json(Daemon *d, char **ret_json);
uint64_t daemon_now_usec(void);
/* A collector's last_error in words (-EPERM: the device justifies no credit). */
const char *daemon_source_error(int error);
