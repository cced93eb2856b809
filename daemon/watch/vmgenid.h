/* vmgenid.h - notices that this virtual machine was cloned, or restored
 * from a snapshot: its VM Generation ID changed (Microsoft's vmgenid; QEMU's
 * `-device vmgenid`, Hyper-V, Firecracker, ...).
 *
 * The kernel's vmgenid driver (5.18 and later) sees the change, reseeds the
 * kernel's CRNG and logs "random: crng reseeded due to virtual machine fork"
 * (drivers/char/random.c, add_vmfork_randomness(), since 5.18; it logs only
 * once its CRNG is ready, which it is long before this daemon runs). What it
 * tells user space, by kernel:
 *   - every kernel from 5.18 on: that log record (Debian 12's 6.1, 6.12);
 *   - 6.8.0 to 6.8.7 and 6.9-rc1 to -rc4 only: also a change uevent with
 *     NEW_VMGENID=1 on the ACPI device (commit ad6bcdad2b67, reverted by
 *     3aadf100f93d in 6.9-rc5 and 6.8.8; no later kernel sends it).
 * So the kernel log is the channel this module relies on; uevents are
 * watched as well where asked for (they need udev and the host's network
 * namespace: sd-device listens to udev's broadcasts, not the kernel's).
 *
 * Whether detection works is decided from what exists, not from version
 * numbers: a vmgenid device in sysfs (an ACPI device whose ids include
 * VMGENCTR or VM_GEN_COUNTER, or a "microsoft,vmgenid" device-tree node),
 * its driver bound to it (bus/acpi or bus/platform drivers/vmgenid), and
 * the kernel log open. With dmesg_restrict (Debian's default) opening
 * /dev/kmsg takes CAP_SYSLOG, which the daemon never keeps: under systemd
 * the unit has the service manager open it as standard input
 * (StandardInput=file:/dev/kmsg, opened as root before User= applies) and
 * the watcher takes it from fd 0; started by hand as root, the daemon
 * starts the watcher before it gives up root.
 *
 * A record lost to a log overrun may have been a change: that is reported
 * too (VMGEN_EVENT_MAYBE), at every loss; the daemon rekeys on each but
 * purges the store at most once per 10 s for them (a user can flood the
 * log: the seeder's LOST_RECORDS).
 * The same change seen on both channels within VMGEN_MERGE_USEC is reported
 * once. Loop thread only; it never logs.
 * Flow: kernel (vmgenid driver) -> /dev/kmsg, uevents -> [vmgenid] -> daemon. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-event.h>

/* The record the kernel logs on every change it acts on. */
#define VMGEN_KMSG_MESSAGE "random: crng reseeded due to virtual machine fork"
#define VMGEN_MERGE_USEC (5ULL * 1000000ULL)

typedef enum VmgenDetection {
        VMGEN_NO_DEVICE,    /* nothing to watch: no clone is announced here */
        VMGEN_NO_DRIVER,    /* a device, but the kernel has no driver bound to it */
        VMGEN_NO_CHANNEL,   /* device and driver, but the kernel log cannot be read */
        VMGEN_AVAILABLE,    /* the kernel log is watched */
        _VMGEN_DETECTION_MAX,
} VmgenDetection;

typedef enum VmgenChannel {
        VMGEN_CHANNEL_KERNEL_LOG,
        VMGEN_CHANNEL_UEVENT,
        _VMGEN_CHANNEL_MAX,
} VmgenChannel;

typedef enum VmgenEvent {
        VMGEN_EVENT_CHANGED,  /* the kernel reported a new generation */
        VMGEN_EVENT_MAYBE,    /* kernel log records were lost; one may have been a change */
        VMGEN_EVENT_LOST,     /* the kernel log stopped (read error, end of file): from
                               * now on detection is as vmgen_get_stats() says */
} VmgenEvent;

typedef void (*VmgenFn)(void *userdata, VmgenEvent event, VmgenChannel via);

typedef struct VmgenParams {
        const char *sysfs;    /* NULL: /sys */
        /* Opens the kernel log: an fd that returns one record per read()
         * (non-blocking), or -errno. NULL: fd 0 if it is /dev/kmsg (as
         * systemd passes it; fd 0 then reads /dev/null), else /dev/kmsg;
         * from its end either way. */
        int (*open_kmsg)(void *userdata);
        void *open_userdata;
        bool uevents;         /* also watch uevents through sd-device */
} VmgenParams;

typedef struct VmgenStats {
        VmgenDetection detection;
        char device[64];          /* sysfs name of the device; "" when none */
        bool channel[_VMGEN_CHANNEL_MAX];  /* watched */
        int kmsg_error;           /* why the kernel log is not watched: -errno, or 0 */
        bool kmsg_inherited;      /* taken from fd 0, where systemd opened it */
        int uevent_error;         /* why uevents are not watched: -errno (-ENOENT: no
                                   * udev), or 0 */
        uint64_t changes;         /* VMGEN_EVENT_CHANGED reported */
        uint64_t maybe;           /* VMGEN_EVENT_MAYBE reported */
        uint64_t merged;          /* a change seen on the second channel, not reported again */
        uint64_t last_usec;       /* CLOCK_MONOTONIC of the last report; 0: none */
} VmgenStats;

typedef struct Vmgen Vmgen;

/* Probes sysfs and opens the channels a present, driven device needs. Only
 * -ENOMEM and -EINVAL are errors: everything else is a detection verdict
 * (vmgen_get_stats()). */
int vmgen_new(sd_event *event, const VmgenParams *params, VmgenFn fn, void *userdata, Vmgen **ret);
/* Takes NULL; returns NULL. */
Vmgen *vmgen_free(Vmgen *g);

/* One non-blocking read of the kernel log, if it is watched: a record
 * waiting there is handled now, as the loop's own source would. For the
 * daemon's check before every request (cheap: one read(), EAGAIN when
 * nothing is there). */
void vmgen_poll(Vmgen *g);

void vmgen_get_stats(const Vmgen *g, VmgenStats *ret);

/* The verdict in words, for the journal and `truerandomctl status`:
 * "available (kernel log)", "unavailable on this kernel: ...", ... */
const char *vmgen_describe(const VmgenStats *st, char *buf, size_t size);
/* "available", "unavailable", "no-device": the status JSON's word. */
const char *vmgen_detection_to_string(VmgenDetection d);
const char *vmgen_channel_to_string(VmgenChannel c);
