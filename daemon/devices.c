/* devices.c - the daemon's CUSE devices: the table of the devices the
 * configuration asks for (daemon_config_devices(), the one place that maps
 * [device] settings to CUSE kinds), each one's /dev/cuse session opened
 * (or a test's transport) and watched by the loop, CUSE_INIT answered
 * during set-up, the nodes' owner, group and mode (at start and reload),
 * and the hub's events (up, refused, node errors, CRNG seeded) turned into
 * log lines and a posted change (readiness is the loop's). Everything else
 * in the daemon goes through the rows: a device added to the table needs
 * nothing here but its row.
 *
 * Invariant: before privileges are dropped nothing but CUSE_INIT is read
 * from a session, so not a byte is served as root; afterwards each wake-up
 * of a session serves one request (a few dozen while long reads wait),
 * each after the resume and VM fork checks, and replies the hub answers in
 * batches go out one batch per loop turn. A session the kernel ends or
 * refuses stops the loop.
 * Flow: sources -> pool -> CRNG -> cuse hub -> [devices] -> readers. */
#include "daemon-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "config/sourceconf.h"
#include "log.h"

/* How long set-up waits for the kernel's CUSE_INIT (queued when /dev/cuse
 * is opened, so at once in practice). */
#define CUSE_INIT_TIMEOUT_USEC (10 * USEC_PER_SEC)

/* What each of config/'s device rows is served as. */
static const CuseDevKind device_kind[_CONFIG_DEVICE_MAX] = {
        [CONFIG_DEVICE_TRNG] = CUSEDEV_TRNG,
        [CONFIG_DEVICE_RANDOM] = CUSEDEV_RANDOM,
        [CONFIG_DEVICE_URANDOM] = CUSEDEV_URANDOM,
        [CONFIG_DEVICE_NULL] = CUSEDEV_NULL,
};

_Static_assert(_CONFIG_DEVICE_MAX + _CONFIG_SOURCE_MAX <= CUSE_MAX_DEVICES,
               "a hub serves every configured device and a device per source");
_Static_assert(_CONFIG_SOURCE_MAX <= STORE_SOURCES_MAX, "the store tells every source's blocks apart");

/* The rows, then with [device] per_source_devices a TRNG device of each
 * credited source, named and moded as /dev/truerandom
 * (config_source_device_name(); config/ checked that each fits). */
size_t daemon_config_devices(const Config *c, DeviceSpec ret[static CUSE_MAX_DEVICES]) {
        size_t n = 0;

        for (ConfigDevice i = 0; i < _CONFIG_DEVICE_MAX; i++)
                ret[n++] = (DeviceSpec){
                        .kind = device_kind[i],
                        .name = c->device[i].name,
                        .mode = c->device[i].mode,
                        .mode_key = config_devices[i].mode_key,
                        .grouped = config_devices[i].group,
                        .enabled = c->cuse && config_device_served(&c->device[i]),
                };
        for (ConfigSource s = 0; s < _CONFIG_SOURCE_MAX; s++) {
                DeviceSpec *spec = &ret[n];

                *spec = ret[CONFIG_DEVICE_TRNG];
                spec->per_source = true;
                spec->source = s;
                spec->enabled = spec->enabled && c->per_source_devices && sourceconf_creditable(&c->source[s], s) &&
                                config_source_device_name(c, s, spec->own_name) == 0;
                spec->name = spec->enabled ? spec->own_name : NULL;
                n++;
        }
        return n;
}

uint32_t daemon_sources_open(const Daemon *d, const CollectorStats stats[static _CONFIG_SOURCE_MAX]) {
        uint32_t open = 0;

        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++)
                if (d->sources[i].collector && stats[i].state == SOURCE_HEALTHY)
                        open |= UINT32_C(1) << i;
        return open;
}

/* Nodes belong to root; not running as root (a test), keep the owner and set
 * group and mode only. */
uid_t daemon_node_owner(void) {
        return geteuid() == 0 ? 0 : (uid_t)-1;
}

int daemon_resolve_group(const char *group, gid_t *ret) {
        char *end;
        unsigned long v;
        struct group *gr;

        errno = 0;
        v = strtoul(group, &end, 10);
        if (*group && !*end && errno == 0 && v < (gid_t)-1) {
                *ret = (gid_t)v;
                return 0;
        }
        gr = getgrnam(group);
        if (!gr)
                return -ENOENT;
        *ret = gr->gr_gid;
        return 0;
}

void daemon_on_cuse_event(void *userdata, CuseDev *dev, CuseEvent event, int error) {
        Daemon *d = userdata;
        LogFields f = { .device = dev ? cusedev_name(dev) : NULL };

        switch (event) {
        case CUSE_EVENT_UP:
                for (size_t i = 0; i < d->n_devices; i++)
                        if (d->devices[i].dev == dev)
                                d->devices[i].up = true;
                log_fields(LOG_INFO, &f, "/dev/%s is up", cusedev_name(dev));
                break;
        case CUSE_EVENT_REJECTED:
                log_fields(LOG_ERR, &f, "the kernel refused /dev/%s (is another instance running?)",
                           cusedev_name(dev));
                d->exit_code = -EEXIST;
                sd_event_exit(d->event, -EEXIST);
                return;
        case CUSE_EVENT_NODE_ERROR:
                /* Not root from the start (systemd's User=): the node is
                 * root's, and udev's rule gives it group and mode. */
                if (error == -EPERM && geteuid() != 0)
                        log_fields(LOG_INFO, &f, "/dev/%s: owner, group and mode left to udev (not root)",
                                   cusedev_name(dev));
                else
                        log_fields(LOG_WARNING, &f, "setting owner and mode of /dev/%s: %s", cusedev_name(dev),
                                   strerror(-error));
                return;
        case CUSE_EVENT_SEEDED:
                log_info("CRNG seeded: the drop-in /dev/random no longer blocks");
                break;
        }
        /* Readiness and STATUS= are the loop's, at its next turn. */
        daemon_post_change(d);
}

static int on_cuse_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        DeviceSlot *slot = userdata;
        Daemon *d = slot->daemon;
        int r;

        /* One request per wake-up, or a drain of a few dozen while long
         * reads wait (cusedev_process()), each after
         * daemon_before_cuse_request(): epoll is level-triggered, so the
         * loop comes back, and the devices, timers and sources take turns. */
        r = cusedev_process(slot->dev);
        if (r == 0 || r == -EAGAIN)
                return 0;
        sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (d->stopping)
                return 0;
        if (r == -ENODEV)
                log_fields(LOG_ERR, &(LogFields){ .device = cusedev_name(slot->dev) },
                           "/dev/%s: the kernel ended the session", cusedev_name(slot->dev));
        else
                log_error_errno(r, "/dev/%s", cusedev_name(slot->dev));
        d->exit_code = r;
        sd_event_exit(d->event, r);
        return 0;
}

void daemon_before_cuse_request(void *userdata) {
        Daemon *d = userdata;

        /* A request that is the first thing to wake the loop after a resume
         * or a VM fork, or that comes in a drain with the loop's own
         * sources held back, is served after the change was handled: three
         * vDSO clock reads and one non-blocking read of the kernel log. */
        if (d->clockjump)
                clockjump_check(d->clockjump);
        if (d->vmgen)
                vmgen_poll(d->vmgen);
}

static int on_backlog(sd_event_source *s, uint64_t usec, void *userdata) {
        Daemon *d = userdata;

        if (cusehub_serve_backlog(d->hub))
                daemon_on_cuse_backlog(d);
        return 0;
}

/* One batch per turn from a timer that is due at once: re-armed in its
 * handler, it becomes pending again only in the next iteration's wait,
 * together with whatever else is ready then, so every other source gets
 * its turn between two batches. (An sd-event defer source would not: it
 * stays pending with its first iteration number and so always wins among
 * sources of its priority.) */
void daemon_on_cuse_backlog(void *userdata) {
        Daemon *d = userdata;
        int r;

        if (!d->event)
                return;
        if (!d->backlog_timer) {
                r = sd_event_add_time(d->event, &d->backlog_timer, CLOCK_MONOTONIC, 0, 1, on_backlog, d);
                if (r < 0) {
                        /* Served anyway: with the next request of that
                         * session, or at stop. */
                        log_error_errno(r, "backlog timer");
                        return;
                }
                (void)sd_event_source_set_description(d->backlog_timer, "cuse-backlog");
        } else {
                (void)sd_event_source_set_time(d->backlog_timer, 0);
        }
        (void)sd_event_source_set_enabled(d->backlog_timer, SD_EVENT_ONESHOT);
}

static int open_cuse(void *userdata, const char *name, CuseDevKind kind, int *ret_fd,
                     const struct fuse_custom_io **ret_io) {
        /* Non-blocking: a request the kernel drops between epoll and read
         * (its reader was killed) must not wedge the loop. */
        int fd = open("/dev/cuse", O_RDWR | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        *ret_io = NULL;
        return 0;
}

static int add_device(Daemon *d, size_t row, const DeviceSpec *spec) {
        CuseDevParams p = {
                .name = spec->name,
                .dev_dir = d->hooks.dev_dir ? d->hooks.dev_dir : "/dev",
                .uid = daemon_node_owner(),
                .gid = spec->grouped ? d->gid : 0,
                .mode = spec->mode,
                .per_source = spec->per_source,
                .source = spec->source,
                .restricted_ioctl = !d->config.dropin_unrestricted_ioctl,
        };
        const char *name = spec->name;
        const struct fuse_custom_io *io = NULL;
        DeviceSlot *slot = &d->devices[d->n_devices];
        int fd = -1, r;

        r = d->hooks.open_device ? d->hooks.open_device(d->hooks.userdata, name, spec->kind, &fd, &io)
                                 : open_cuse(NULL, name, spec->kind, &fd, &io);
        if (r < 0) {
                if (r == -ENOENT || r == -ENODEV)
                        log_error("cannot open /dev/cuse: %s. The kernel needs its cuse module: modprobe cuse",
                                  strerror(-r));
                else
                        log_error("cannot open /dev/cuse: %s%s", strerror(-r), daemon_not_root_hint(r));
                return r;
        }
        r = cusedev_new(d->hub, spec->kind, &p, fd, io, &slot->dev);
        if (r < 0)
                return log_error_errno(r, "creating /dev/%s", name);
        slot->daemon = d;
        slot->row = row;
        r = sd_event_add_io(d->event, &slot->io, cusedev_fd(slot->dev), EPOLLIN, on_cuse_io, slot);
        if (r < 0)
                return log_error_errno(r, "watching /dev/%s", name);
        (void)sd_event_source_set_description(slot->io, name);
        d->n_devices++;
        return 0;
}

int daemon_add_devices(Daemon *d) {
        DeviceSpec rows[CUSE_MAX_DEVICES];
        size_t n = daemon_config_devices(&d->config, rows);

        for (size_t i = 0; i < n; i++) {
                int r;

                if (!rows[i].enabled)
                        continue;
                r = add_device(d, i, &rows[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

bool daemon_devices_changed(const Daemon *d, const Config *c) {
        DeviceSpec was[CUSE_MAX_DEVICES], now[CUSE_MAX_DEVICES];
        size_t n = daemon_config_devices(&d->config, was);

        (void)daemon_config_devices(c, now);
        if (d->config.dropin_unrestricted_ioctl != c->dropin_unrestricted_ioctl)
                return true; /* how the devices registered */
        for (size_t i = 0; i < n; i++)
                if (was[i].enabled != now[i].enabled ||
                    (now[i].enabled && strcmp(was[i].name, now[i].name) != 0))
                        return true;
        return false;
}

const char *daemon_devices_node_change(const Daemon *d, const Config *c, gid_t gid) {
        DeviceSpec was[CUSE_MAX_DEVICES], now[CUSE_MAX_DEVICES];

        if (gid != d->gid)
                return "group";
        (void)daemon_config_devices(&d->config, was);
        (void)daemon_config_devices(c, now);
        for (size_t i = 0; i < d->n_devices; i++) {
                size_t row = d->devices[i].row;

                if (was[row].mode != now[row].mode)
                        return now[row].mode_key;
        }
        return NULL;
}

void daemon_devices_apply_nodes(Daemon *d, const Config *c, gid_t gid) {
        DeviceSpec rows[CUSE_MAX_DEVICES];

        (void)daemon_config_devices(c, rows);
        for (size_t i = 0; i < d->n_devices; i++) {
                const DeviceSpec *spec = &rows[d->devices[i].row];
                CuseDev *dev = d->devices[i].dev;
                int r;

                r = cusedev_set_node(dev, daemon_node_owner(), spec->grouped ? gid : 0, spec->mode);
                if (r < 0)
                        log_warning_errno(r, "/dev/%s: applying owner and mode", cusedev_name(dev));
        }
}

/* CUSE_INIT, answered before the privileges go: the kernel queued it when
 * /dev/cuse was opened, and init_done sets the node's owner and mode, which
 * needs root where udev does not do it. Nothing else is read from a session
 * here, so not a byte is served before the drop. */
int daemon_complete_cuse_init(Daemon *d) {
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + CUSE_INIT_TIMEOUT_USEC;

        for (;;) {
                struct pollfd pfd[CUSE_MAX_DEVICES];
                DeviceSlot *waiting[CUSE_MAX_DEVICES];
                size_t n = 0;
                usec_t now;
                int r;

                if (d->exit_code < 0)
                        return d->exit_code;    /* refused: daemon_on_cuse_event() said so */
                for (size_t i = 0; i < d->n_devices; i++)
                        if (!d->devices[i].up) {
                                waiting[n] = &d->devices[i];
                                pfd[n++] = (struct pollfd){ .fd = cusedev_fd(d->devices[i].dev), .events = POLLIN };
                        }
                if (n == 0)
                        return 0;
                now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline) {
                        log_error("/dev/%s: no CUSE_INIT from the kernel within %u s", cusedev_name(waiting[0]->dev),
                                  (unsigned) (CUSE_INIT_TIMEOUT_USEC / USEC_PER_SEC));
                        return -ETIMEDOUT;
                }
                if (poll(pfd, n, (int) ((deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC)) < 0 && errno != EINTR)
                        return log_error_errno(-errno, "waiting for CUSE_INIT");
                for (size_t i = 0; i < n; i++) {
                        if (!pfd[i].revents)
                                continue;
                        r = cusedev_process(waiting[i]->dev);
                        if (r < 0 && r != -EAGAIN && d->exit_code == 0)
                                return log_error_errno(r, "/dev/%s: CUSE_INIT", cusedev_name(waiting[i]->dev));
                }
        }
}
