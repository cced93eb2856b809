/* vmgenid.c - the VM generation watcher (see vmgenid.h): a sysfs probe at
 * start, then the kernel log and (optionally) uevents on the loop. */
#include "vmgenid.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-device.h>

#include "kmsgrec.h"

/* /dev/kmsg refuses a read() into less than a whole record, and a record is
 * at most this long (CONSOLE_EXT_LOG_MAX). */
#define KMSG_RECORD_MAX 8192
/* Records taken per wake-up; the loop comes back for the rest. */
#define KMSG_BATCH 64

struct Vmgen {
        VmgenFn fn;
        void *userdata;
        int kmsg_fd;
        sd_event_source *kmsg_source;
        sd_device_monitor *monitor;
        VmgenChannel last_via;
        VmgenStats stats;
};

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

/* ------------------------------------------------------------------ */
/* sysfs                                                               */

/* The first line of a small sysfs file, or "" (NUL-terminated). */
static void read_line(const char *path, char *buf, size_t size) {
        ssize_t n = -1;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd >= 0) {
                n = read(fd, buf, size - 1);
                close(fd);
        }
        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
}

/* name into ret[size]; false (ret untouched) if it does not fit. */
static bool copy_name(char *ret, size_t size, const char *name) {
        size_t n = strlen(name);

        if (n >= size)
                return false;
        memcpy(ret, name, n + 1);
        return true;
}

static bool is_symlink(DIR *d, const struct dirent *e) {
        struct stat st;

        if (e->d_type != DT_UNKNOWN)
                return e->d_type == DT_LNK;
        return fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

/* A device the driver directory dir links to (any symlink but "module"). */
static bool bound_device(const char *dir, char *ret, size_t size) {
        DIR *d = opendir(dir);
        struct dirent *e;
        bool found = false;

        if (!d)
                return false;
        while (!found && (e = readdir(d)))
                if (is_symlink(d, e) && strcmp(e->d_name, "module") != 0)
                        found = copy_name(ret, size, e->d_name);
        closedir(d);
        return found;
}

/* Whether a device's modalias names a VM generation counter. ACPI aliases
 * list the hardware id and the compatible ids, upper case:
 * "acpi:QEMUVGID:VM_GEN_COUNTER:"; device-tree ones the compatible string. */
static bool is_vmgenid_alias(const char *alias) {
        return strstr(alias, ":VMGENCTR:") || strstr(alias, ":VM_GEN_COUNTER:") ||
               strstr(alias, "Cmicrosoft,vmgenid");
}

static bool present_device(const char *devices, char *ret, size_t size) {
        char path[PATH_MAX], alias[512];
        DIR *d = opendir(devices);
        struct dirent *e;
        bool found = false;

        if (!d)
                return false;
        while (!found && (e = readdir(d))) {
                if (e->d_name[0] == '.' ||
                    snprintf(path, sizeof(path), "%s/%s/modalias", devices, e->d_name) >= (int)sizeof(path))
                        continue;
                read_line(path, alias, sizeof(alias));
                if (is_vmgenid_alias(alias))
                        found = copy_name(ret, size, e->d_name);
        }
        closedir(d);
        return found;
}

/* Driver bound (5.18-6.9: an ACPI driver; 6.10 on: a platform driver), or
 * at least a device. */
static VmgenDetection probe(const char *sysfs, char *ret_device, size_t size) {
        static const char *const drivers[] = { "bus/acpi/drivers/vmgenid", "bus/platform/drivers/vmgenid" };
        static const char *const devices[] = { "bus/acpi/devices", "bus/platform/devices" };
        char path[PATH_MAX];

        for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
                if (snprintf(path, sizeof(path), "%s/%s", sysfs, drivers[i]) < (int)sizeof(path) &&
                    bound_device(path, ret_device, size))
                        return VMGEN_NO_CHANNEL;
        }
        for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
                if (snprintf(path, sizeof(path), "%s/%s", sysfs, devices[i]) < (int)sizeof(path) &&
                    present_device(path, ret_device, size))
                        return VMGEN_NO_DRIVER;
        }
        return VMGEN_NO_DEVICE;
}

/* ------------------------------------------------------------------ */
/* reports                                                             */

static void report(Vmgen *g, VmgenEvent event, VmgenChannel via) {
        uint64_t now = now_usec();

        if (event == VMGEN_EVENT_CHANGED && g->stats.last_usec && via != g->last_via &&
            now - g->stats.last_usec < VMGEN_MERGE_USEC) {
                g->stats.merged++;
                return;
        }
        if (event == VMGEN_EVENT_CHANGED)
                g->stats.changes++;
        else
                g->stats.maybe++;
        g->stats.last_usec = now;
        g->last_via = via;
        g->fn(g->userdata, event, via);
}

/* ------------------------------------------------------------------ */
/* the kernel log                                                      */

static void stop_kmsg(Vmgen *g, int error) {
        g->kmsg_source = sd_event_source_disable_unref(g->kmsg_source);
        if (g->kmsg_fd >= 0)
                close(g->kmsg_fd);
        g->kmsg_fd = -1;
        g->stats.channel[VMGEN_CHANNEL_KERNEL_LOG] = false;
        g->stats.kmsg_error = error;
}

/* Up to max records from the kernel log. */
static void read_kmsg(Vmgen *g, int max) {
        char buf[KMSG_RECORD_MAX];
        KmsgRecord rec;

        for (int i = 0; i < max && g->kmsg_fd >= 0; i++) {
                ssize_t n = read(g->kmsg_fd, buf, sizeof(buf));

                if (n < 0 && errno == EPIPE) {
                        /* Overwritten before we read them; reading goes on
                         * from the oldest record left. */
                        report(g, VMGEN_EVENT_MAYBE, VMGEN_CHANNEL_KERNEL_LOG);
                        continue;
                }
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                if (n <= 0) {
                        /* The channel is gone for good: the verdict and the
                         * daemon learn it now, not at the next clone. */
                        stop_kmsg(g, n < 0 ? -errno : -ENODATA);
                        if (!g->stats.channel[VMGEN_CHANNEL_UEVENT])
                                g->stats.detection = VMGEN_NO_CHANNEL;
                        g->fn(g->userdata, VMGEN_EVENT_LOST, VMGEN_CHANNEL_KERNEL_LOG);
                        return;
                }
                if (kmsg_parse_record(buf, (size_t)n, &rec) == 0 && kmsg_record_is_kernel(&rec, VMGEN_KMSG_MESSAGE))
                        report(g, VMGEN_EVENT_CHANGED, VMGEN_CHANNEL_KERNEL_LOG);
        }
}

static int on_kmsg(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        read_kmsg(userdata, KMSG_BATCH);
        return 0;
}

void vmgen_poll(Vmgen *g) {
        read_kmsg(g, 1);
}

/* The kernel log systemd opened for the daemon: StandardInput=file:/dev/kmsg
 * is opened by the service manager, as root and before the sandbox and
 * User= apply, and under dmesg_restrict it is the only way a daemon
 * without CAP_SYSLOG reads the log (an open file is not checked again).
 * Taken only when fd 0 is that character device (1:11); fd 0 then reads
 * /dev/null, so nothing else reads the log by mistake. -ENOENT: it is not. */
static int adopt_stdin_kmsg(void) {
        struct stat st;
        int fd, null;

        if (fstat(STDIN_FILENO, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 11))
                return -ENOENT;
        fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return -errno;
        null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null >= 0) {
                (void)dup2(null, STDIN_FILENO);
                close(null);
        }
        return fd;
}

/* The kernel log, non-blocking and from its end: only what happens from
 * now on. */
static int open_kmsg(bool *ret_inherited) {
        int fd = adopt_stdin_kmsg(), flags, r;
        bool inherited = fd >= 0;

        if (fd == -ENOENT && (fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
                return -errno;
        if (fd < 0)
                return fd;
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 || lseek(fd, 0, SEEK_END) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        *ret_inherited = inherited;
        return fd;
}

static int start_kmsg(Vmgen *g, sd_event *event, const VmgenParams *p) {
        int fd = p->open_kmsg ? p->open_kmsg(p->open_userdata) : open_kmsg(&g->stats.kmsg_inherited);
        int r;

        if (fd < 0)
                return fd;
        g->kmsg_fd = fd;
        r = sd_event_add_io(event, &g->kmsg_source, fd, EPOLLIN, on_kmsg, g);
        if (r < 0)
                return r;
        /* Before the devices: a request that wakes the loop together with
         * the record is served after the change was reported. */
        (void)sd_event_source_set_priority(g->kmsg_source, SD_EVENT_PRIORITY_IMPORTANT);
        (void)sd_event_source_set_description(g->kmsg_source, "vmgenid-kmsg");
        g->stats.channel[VMGEN_CHANNEL_KERNEL_LOG] = true;
        return 0;
}

/* ------------------------------------------------------------------ */
/* uevents                                                             */

static int on_uevent(sd_device_monitor *m, sd_device *dev, void *userdata) {
        sd_device_action_t action;
        const char *v;

        if (sd_device_get_action(dev, &action) >= 0 && action == SD_DEVICE_CHANGE &&
            sd_device_get_property_value(dev, "NEW_VMGENID", &v) >= 0 && strcmp(v, "1") == 0)
                report(userdata, VMGEN_EVENT_CHANGED, VMGEN_CHANNEL_UEVENT);
        return 0;
}

static int start_uevents(Vmgen *g, sd_event *event) {
        int r;

        /* sd-device hears udev's broadcasts, not the kernel's: without udev
         * a monitor would only pretend to watch. */
        if (access("/run/udev/control", F_OK) < 0)
                return -errno;
        r = sd_device_monitor_new(&g->monitor);
        if (r < 0)
                return r;
        /* 6.8 sent it on the ACPI device; a platform driver would send it
         * on the platform one. */
        if ((r = sd_device_monitor_attach_event(g->monitor, event)) < 0 ||
            (r = sd_device_monitor_filter_add_match_subsystem_devtype(g->monitor, "acpi", NULL)) < 0 ||
            (r = sd_device_monitor_filter_add_match_subsystem_devtype(g->monitor, "platform", NULL)) < 0 ||
            (r = sd_device_monitor_start(g->monitor, on_uevent, g)) < 0)
                return r;
        (void)sd_event_source_set_priority(sd_device_monitor_get_event_source(g->monitor),
                                           SD_EVENT_PRIORITY_IMPORTANT);
        g->stats.channel[VMGEN_CHANNEL_UEVENT] = true;
        return 0;
}

/* ------------------------------------------------------------------ */
/* life cycle                                                          */

int vmgen_new(sd_event *event, const VmgenParams *params, VmgenFn fn, void *userdata, Vmgen **ret) {
        VmgenParams p = params ? *params : (VmgenParams){ 0 };
        Vmgen *g;
        int r;

        if (!event || !fn || !ret)
                return -EINVAL;
        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        g->fn = fn;
        g->userdata = userdata;
        g->kmsg_fd = -1;
        g->stats.detection = probe(p.sysfs ? p.sysfs : "/sys", g->stats.device, sizeof(g->stats.device));
        if (g->stats.detection == VMGEN_NO_CHANNEL) {
                r = start_kmsg(g, event, &p);
                if (r == -ENOMEM)
                        goto fail;
                if (r < 0)
                        stop_kmsg(g, r);
                else
                        g->stats.detection = VMGEN_AVAILABLE;
                r = p.uevents ? start_uevents(g, event) : 0;
                if (r == -ENOMEM)
                        goto fail;
                if (r < 0) {
                        g->monitor = sd_device_monitor_unref(g->monitor);
                        g->stats.uevent_error = r;
                }
        } else if (!p.open_kmsg) {
                /* Nothing to watch: a kernel log systemd passed in is not
                 * kept open for nothing. */
                int fd = adopt_stdin_kmsg();
                if (fd >= 0)
                        close(fd);
        }
        *ret = g;
        return 0;

fail:
        vmgen_free(g);
        return r;
}

Vmgen *vmgen_free(Vmgen *g) {
        if (!g)
                return NULL;
        stop_kmsg(g, 0);
        g->monitor = sd_device_monitor_unref(g->monitor);
        free(g);
        return NULL;
}

void vmgen_get_stats(const Vmgen *g, VmgenStats *ret) {
        *ret = g->stats;
}

const char *vmgen_describe(const VmgenStats *st, char *buf, size_t size) {
        switch (st->detection) {
        case VMGEN_NO_DEVICE:
                return "no vmgenid device";
        case VMGEN_NO_DRIVER:
                return "unavailable on this kernel (no vmgenid driver)";
        case VMGEN_NO_CHANNEL:
                snprintf(buf, size, "unavailable: kernel log unreadable (%s)", strerror(-st->kmsg_error));
                return buf;
        case VMGEN_AVAILABLE:
                if (!st->channel[VMGEN_CHANNEL_KERNEL_LOG])
                        return "available (uevents)";
                return st->channel[VMGEN_CHANNEL_UEVENT] ? "available (kernel log, uevents)" : "available (kernel log)";
        default:
                return "unknown";
        }
}

const char *vmgen_detection_to_string(VmgenDetection d) {
        switch (d) {
        case VMGEN_NO_DEVICE:
                return "no-device";
        case VMGEN_AVAILABLE:
                return "available";
        default:
                return "unavailable";
        }
}

const char *vmgen_channel_to_string(VmgenChannel c) {
        return c == VMGEN_CHANNEL_UEVENT ? "uevent" : "kernel-log";
}
