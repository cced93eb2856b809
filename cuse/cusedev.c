/* cusedev.c - what every CUSE device shares: its session, open files, poll
 * handles, the requests every device answers alike (parked reads and their
 * interrupts are in parked.c). A device's kind is in its CuseDevOps (cusekinds.c picks it);
 * cusehub.c holds the hub that drives them. This file knows no kind: it
 * calls a device through its ops and the loop through the hub's callbacks.
 *
 * Invariants: every request gets exactly one reply; a parked read is on one
 * list until whoever unlinks it replies; poll handles are kept one per open
 * file (the newest) and destroyed when notified or released.
 * Flow: store -> crng -> hub -> [devices, parked reads] -> kernel. */
#include "cusedev-internal.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "privilege.h"
#include "util/cleanup.h"

/* ------------------------------------------------------------------ */
/* devices                                                             */

CuseDev *cusedev_free(CuseDev *dev) {
        CuseFile *f;

        if (!dev)
                return NULL;
        /* Destroying the session closes its fd: the kernel removes the node
         * and fails whatever it still had in flight. */
        if (dev->se)
                fuse_session_destroy(dev->se);
        else if (dev->fd >= 0)
                close(dev->fd);
        while ((f = TAILQ_FIRST(&dev->files))) {
                TAILQ_REMOVE(&dev->files, f, link);
                if (f->ph)
                        fuse_pollhandle_destroy(f->ph);
                free(f);
        }
        dev->fq = fairq_free(dev->fq);
        uidcount_done(&dev->open_by_uid);
        free(dev->buf.mem);
        free(dev->name);
        free(dev->dev_dir);
        free(dev);
        return NULL;
}

static bool name_valid(const char *name) {
        if (!name || !*name || strlen(name) > 64)
                return false;
        for (const char *c = name; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                      *c == '-' || *c == '_' || *c == '.'))
                        return false;
        return true;
}

DEFINE_FREEP(CuseDev, cusedev_free);

/* The device's CUSE session on dev->fd, which it adopts (dev->fd is then
 * the session's); on error the fd is closed and dev->fd is -1. */
static int open_session(CuseDev *dev, const struct fuse_custom_io *io) {
        char devname[80];
        const char *dev_info_argv[] = { devname };
        struct cuse_info ci = {
                .dev_info_argc = 1,
                .dev_info_argv = dev_info_argv,
                /* Only for RNDADDENTROPY's buffer (fetched with retries):
                 * without it the kernel copies what each command's number
                 * encodes and no more of its callers' memory. */
                .flags = dev->unrestricted_ioctl ? CUSE_UNRESTRICTED_IOCTL : 0,
        };
        char *argv[] = { (char *)"truerandomd", NULL };
        struct fuse_args args = FUSE_ARGS_INIT(1, argv);
        char path[32];
        int fd = dev->fd, r = 0;

        snprintf(devname, sizeof(devname), "DEVNAME=%s", dev->name);
        dev->se = cuse_lowlevel_new(&args, &ci, dev->ops->requests, dev);
        /* fuse_session_new() parsed (and copied) the arguments into args. */
        fuse_opt_free_args(&args);
        if (!dev->se)
                r = -ENOMEM;
        else if (io) {
                r = fuse_session_custom_io(dev->se, io, fd);
                r = r > 0 ? -EIO : r;
        } else {
                /* "/dev/fd/N" makes libfuse adopt the /dev/cuse fd we opened
                 * (non-blocking, see reference pitfalls) instead of opening
                 * its own blocking one. */
                snprintf(path, sizeof(path), "/dev/fd/%d", fd);
                if (fuse_session_mount(dev->se, path) != 0)
                        r = -EIO;
        }
        if (r == 0) {
                /* From here the session owns fd. */
                dev->fd = fuse_session_fd(dev->se);
                return 0;
        }
        /* The session closes fd only if it adopted it. */
        if (!dev->se || fuse_session_fd(dev->se) != fd)
                close(fd);
        if (dev->se)
                fuse_session_destroy(dev->se);
        dev->se = NULL;
        dev->fd = -1;
        return r;
}

int cusedev_open(CuseHub *hub, CuseDevKind kind, const CuseDevOps *ops, const CuseDevParams *params, int fd,
                 const struct fuse_custom_io *io, CuseDev **ret) {
        _cleanup_(cusedev_freep) CuseDev *dev = NULL;
        int r;

        if (!params || !name_valid(params->name) || !ret) {
                if (fd >= 0)
                        close(fd);
                return -EINVAL;
        }
        dev = calloc(1, sizeof(*dev));
        if (!dev) {
                close(fd);
                return -ENOMEM;
        }
        dev->hub = hub;
        dev->kind = kind;
        dev->ops = ops;
        dev->fd = fd;
        dev->uid = params->uid;
        dev->gid = params->gid;
        dev->mode = params->mode;
        dev->per_source = params->per_source;
        dev->source = params->source;
        dev->unrestricted_ioctl = ops->buffer_ioctls && !params->restricted_ioctl;
        TAILQ_INIT(&dev->files);
        TAILQ_INIT(&dev->deferred);
        dev->name = strdup(params->name);
        dev->dev_dir = params->dev_dir ? strdup(params->dev_dir) : NULL;
        if (!dev->name || (params->dev_dir && !dev->dev_dir) || uidcount_init(&dev->open_by_uid) < 0 ||
            fairq_new(&dev->fq) < 0)
                return -ENOMEM;     /* cusedev_free() closes fd */
        r = open_session(dev, io);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(dev);
        return 0;
}

int cusedev_fd(const CuseDev *dev) {
        return dev->fd;
}

CuseDevKind cusedev_kind(const CuseDev *dev) {
        return dev->kind;
}

const char *cusedev_name(const CuseDev *dev) {
        return dev->name;
}

static int process_one(CuseDev *dev) {
        int r;

        if (fuse_session_exited(dev->se))
                return -ENODEV;
        r = fuse_session_receive_buf(dev->se, &dev->buf);
        if (r == -EAGAIN || r == -EINTR)
                return -EAGAIN;
        if (r == 0 || fuse_session_exited(dev->se))
                return -ENODEV;
        if (r < 0)
                return r;
        dev->hub->cb.before_request(dev->hub->cb.userdata);
        fuse_session_process_buf(dev->se, &dev->buf);
        return fuse_session_exited(dev->se) ? -ENODEV : 0;
}

/* A long read(2) of a drop-in reaches us as one request per 128 KiB, the
 * later ones at offsets > 0, and the kernel's loop (fuse_direct_io()) goes
 * on until a reply is short or an error: a caught signal does not stop it.
 * But the kernel marks each request sent while a signal is pending, and
 * queues its INTERRUPT as we read the request, ahead of everything else
 * (fuse_dev_do_read()). So a device defers those later requests, and here
 * they are answered only once the session has nothing queued: an INTERRUPT
 * for one has reached its callback by then, which answers EINTR, and the
 * read returns what it has, as the kernel's /dev/urandom does. Bounded:
 * after CUSEDEV_DRAIN_MAX more messages the deferred ones are answered
 * anyway, a batch now and the rest on the loop's next turns
 * (cusehub_serve_backlog()). */
int cusedev_process(CuseDev *dev) {
        int r = process_one(dev), drained = 0;

        for (unsigned i = 0; i < CUSEDEV_DRAIN_MAX && drained == 0 && dev->n_deferred > 0; i++)
                drained = process_one(dev);
        if (dev->n_deferred > 0)
                dev->ops->serve_deferred(dev);
        if (dev->n_deferred > 0)
                dev->hub->cb.backlog(dev->hub->cb.userdata);
        if (r < 0)
                return r;
        return drained == -EAGAIN ? 0 : drained;
}

int cusedev_set_node(CuseDev *dev, uid_t uid, gid_t gid, mode_t mode) {
        char path[PATH_MAX];

        dev->uid = uid;
        dev->gid = gid;
        dev->mode = mode;
        if (!dev->dev_dir || !dev->up)
                return 0;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dev->dev_dir, dev->name) >= sizeof(path))
                return -ENAMETOOLONG;
        /* Group first, then mode: the node never carries the new mode with
         * the old group. */
        if ((uid != (uid_t)-1 || gid != (gid_t)-1) && chown(path, uid, gid) < 0)
                return -errno;
        if (chmod(path, mode) < 0)
                return -errno;
        return 0;
}

void cusedev_get_stats(const CuseDev *dev, CuseDevStats *ret) {
        *ret = (CuseDevStats){
                .kind = dev->kind,
                .up = dev->up,
                .per_source = dev->per_source,
                .source = dev->source,
                .unrestricted_ioctl = dev->unrestricted_ioctl,
                .open_files = dev->n_files,
                .parked = dev->n_parked,
                .parked_uids = (unsigned)fairq_uids(dev->fq),
                .reads = dev->reads,
                .bytes_served = dev->bytes_served,
                .eagain = dev->eagain,
                .interrupted = dev->interrupted,
        };
}

/* ------------------------------------------------------------------ */
/* requests every device handles alike                                 */

void cusedev_op_init_done(void *userdata) {
        CuseDev *dev = userdata;
        struct pollfd pfd = { .fd = dev->fd, .events = POLLIN };
        int r;

        /* libfuse calls init_done even when the kernel rejected the device
         * (a duplicate name): the connection is already aborted then, and
         * the node we would chmod is somebody else's. */
        if (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLERR | POLLHUP))) {
                dev->hub->cb.event(dev->hub->cb.userdata, dev, CUSE_EVENT_REJECTED, -EEXIST);
                return;
        }
        dev->up = true;
        r = cusedev_set_node(dev, dev->uid, dev->gid, dev->mode);
        if (r < 0)
                dev->hub->cb.event(dev->hub->cb.userdata, dev, CUSE_EVENT_NODE_ERROR, r);
        dev->hub->cb.event(dev->hub->cb.userdata, dev, CUSE_EVENT_UP, 0);
}

static void file_free(CuseFile *f) {
        TAILQ_REMOVE(&f->dev->files, f, link);
        f->dev->n_files--;
        uidcount_dec(&f->dev->open_by_uid, f->charge);
        if (f->ph)
                fuse_pollhandle_destroy(f->ph);
        free(f);
}

uint32_t cusedev_charge(CuseDev *dev, fuse_req_t req) {
        const struct fuse_ctx *ctx = fuse_req_ctx(req);

        /* The uid the request carries is the host's view of the caller's
         * fsuid; inside a user namespace one person can hold thousands of
         * them (cusedev.h). Decided once per open, not per read. */
        if (ctx->uid != 0 && !dev->hub->cb.proc_budget(dev->hub->cb.userdata, ctx->uid))
                return CUSE_UID_USERNS;
        return privilege_charge(dev->hub->proc_root, (pid_t)ctx->pid, ctx->uid);
}

void cusedev_open_file(fuse_req_t req, struct fuse_file_info *fi, uint32_t charge) {
        CuseDev *dev = fuse_req_userdata(req);
        const CuseHubLimits *l = &dev->hub->params.limits;
        CuseFile *f;

        if (dev->hub->shutting_down) {
                fuse_reply_err(req, dev->hub->shutdown_err);
                return;
        }
        /* Each open file costs the daemon memory: bounded per account,
         * root aside (CuseDevOps.few_files says which bound). */
        if (charge != 0 && uidcount_get(&dev->open_by_uid, charge) >=
                                   (dev->ops->few_files ? l->max_open_per_uid : l->max_dropin_open_per_uid)) {
                fuse_reply_err(req, EMFILE);
                return;
        }
        f = calloc(1, sizeof(*f));
        if (!f || uidcount_inc(&dev->open_by_uid, charge) < 0) {
                free(f);
                fuse_reply_err(req, ENOMEM);
                return;
        }
        f->dev = dev;
        f->charge = charge;
        TAILQ_INSERT_TAIL(&dev->files, f, link);
        dev->n_files++;
        fi->fh = (uint64_t)(uintptr_t)f;
        fi->direct_io = 1;
        fi->nonseekable = 1;
        /* The opener is gone: the kernel will send no RELEASE. */
        if (fuse_reply_open(req, fi) < 0)
                file_free(f);
}

void cusedev_op_open(fuse_req_t req, struct fuse_file_info *fi) {
        /* Reads that never park need no account: no look at /proc. */
        cusedev_open_file(req, fi, fuse_req_ctx(req)->uid);
}

void cusedev_op_release(fuse_req_t req, struct fuse_file_info *fi) {
        CuseFile *f = (CuseFile *)(uintptr_t)fi->fh;

        if (f)
                file_free(f);
        fuse_reply_err(req, 0);
}

void cusedev_keep_pollhandle(CuseDev *dev, struct fuse_file_info *fi, struct fuse_pollhandle *ph) {
        CuseFile *f = (CuseFile *)(uintptr_t)fi->fh;

        if (!ph)
                return;
        if (!f) {
                fuse_pollhandle_destroy(ph);
                return;
        }
        /* Each poll() brings a new handle: keep only the newest. */
        if (f->ph)
                fuse_pollhandle_destroy(f->ph);
        f->ph = ph;
}

void cusedev_notify_pollers(CuseDev *dev) {
        CuseFile *f;

        TAILQ_FOREACH(f, &dev->files, link) {
                if (!f->ph)
                        continue;
                /* A failed notification means the poller is gone; either way
                 * the handle is spent. */
                (void)fuse_lowlevel_notify_poll(f->ph);
                fuse_pollhandle_destroy(f->ph);
                f->ph = NULL;
        }
}

bool cusedev_ioctl_decode(fuse_req_t req, int cmd, void *arg, unsigned flags, const void *in_buf, size_t in_bufsz,
                          size_t out_bufsz, RndRequest *ret) {
        int r = rndioctl_decode((unsigned)cmd, arg, in_buf, in_bufsz, out_bufsz, ret);

        if (r < 0) {
                fuse_reply_err(req, -r);
                return false;
        }
        /* Restricted, a retry would be the kernel's EIO, which says less. */
        if (ret->retry && !(flags & FUSE_IOCTL_UNRESTRICTED)) {
                fuse_reply_err(req, EOPNOTSUPP);
                return false;
        }
        if (ret->retry) {
                fuse_reply_ioctl_retry(req, ret->in_iov, ret->in_count, ret->out_iov, ret->out_count);
                return false;
        }
        return true;
}

int cusedev_caller_privileged(CuseDev *dev, fuse_req_t req) {
        const struct fuse_ctx *ctx = fuse_req_ctx(req);
        PrivilegeMode mode = dev->hub->params.limits.privileged_ioctls;

        if (mode == PRIVILEGE_NONE)
                return 0;
        /* Root's looks too: root in a container without a user namespace
         * of its own is uid 0 here. */
        if (!dev->hub->cb.proc_budget(dev->hub->cb.userdata, ctx->uid))
                return -EAGAIN;
        return privilege_check_mode(dev->hub->proc_root, ctx->pid, ctx->uid, mode);
}
