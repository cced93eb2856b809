/* crngdev.c - the drop-in /dev/random and /dev/urandom (and the benchmarks'
 * null device), with the kernel's semantics since 5.18 (DESIGN §3):
 *
 *   random   blocks until the CRNG is seeded (O_NONBLOCK: EAGAIN), then
 *            returns all n bytes; poll: POLLIN once seeded, POLLOUT before
 *   urandom  never blocks (unseeded output is best effort, like
 *            GRND_INSECURE); no poll, so the kernel's default mask applies
 *   writes   mixed into the next reseed, never credited, from anyone
 *   ioctls   <linux/random.h>; privileged ones need CAP_SYS_ADMIN; credit
 *            given by ioctl counts toward CRNG seeding only
 *
 * Each is a row of cusekinds.c's table (crngdev_random_ops, ..._urandom_,
 * ..._null_ops): the requests they answer alike are shared here, and what
 * differs is a handler of its own (random's open, read and poll; null's
 * write and ioctl). When the CRNG is seeded and from what is the Seeder's
 * policy (crng/seeder.h); RNDRESEEDCRNG and ioctl credit are handed to it.
 * Output passes through the hub's scratch buffer and is erased there.
 * Flow: store -> seeder -> crng -> [drop-in] -> reader. */
#include "cusedev-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "pool/secret.h"
#include "rndioctl.h"

static void serve(CuseDev *dev, fuse_req_t req, size_t size) {
        static const uint8_t zeros[CUSE_MAX_REPLY];
        uint8_t *buf = dev->hub->scratch;

        size = MIN(size, (size_t)CUSE_MAX_REPLY);
        if (dev->kind == CUSEDEV_NULL) {
                (void)fuse_reply_buf(req, (const char *)zeros, size);
                dev->bytes_served += size;
                return;
        }
        crng_generate(dev->hub->crng, buf, size);
        (void)fuse_reply_buf(req, (const char *)buf, size);
        sodium_memzero(buf, size);
        dev->bytes_served += size;
}

static void deferred_push(CuseDev *dev, Parked *p) {
        p->deferred = true;
        TAILQ_INSERT_TAIL(&dev->deferred, p, deferred_link);
        dev->n_deferred++;
}

/* The next request of a long read(2) (offset > 0): answered by
 * crng_serve_deferred() once the session has nothing else queued, or EINTR
 * by its interrupt (cusedev_process() says why). */
static void defer(CuseDev *dev, fuse_req_t req, size_t size) {
        Parked *p = parked_new(dev, req, size);

        if (!p) {
                fuse_reply_err(req, ENOMEM);
                return;
        }
        deferred_push(dev, p);
        (void)parked_arm(p);
}

/* The oldest deferred reads, a batch: the loop turns before the next. */
static void crng_serve_deferred(CuseDev *dev) {
        size_t budget = CUSEHUB_BACKLOG_BYTES;
        Parked *p;

        while (budget > 0 && (p = TAILQ_FIRST(&dev->deferred))) {
                parked_unlink(p);
                serve(dev, p->req, p->size);
                budget -= MIN(budget, MIN(p->size, (size_t)CUSE_MAX_REPLY));
                free(p);
        }
}

/* The CRNG just got its first credited seed: pollers of the drop-in random
 * are woken, and its parked reads go to the deferred list, answered a
 * batch per loop turn. All at once, up to max_parked reads of 128 KiB
 * (2 GiB with the defaults), would hold the loop for seconds natively and
 * past the watchdog in a slow guest. They stay interruptible there. */
static void random_seeded(CuseDev *dev) {
        FairEntry *e;

        /* In the queue's order, round robin across uids: one uid's many
         * reads do not hold another's single one back for long. */
        while ((e = fairq_next(dev->fq))) {
                fairq_remove(dev->fq, e);
                dev->n_parked--;
                deferred_push(dev, FAIRQ_ENTRY_OF(e, Parked, fair));
        }
        cusedev_notify_pollers(dev);
        if (dev->n_deferred > 0)
                dev->hub->cb.backlog(dev->hub->cb.userdata);
}

/* Whether a read is answered here and now (shutdown, size 0); else the
 * read's own handler goes on. */
static bool read_answered(CuseDev *dev, fuse_req_t req, size_t size) {
        dev->reads++;
        if (dev->hub->shutting_down) {
                fuse_reply_err(req, dev->hub->shutdown_err);
                return true;
        }
        if (size == 0) {
                fuse_reply_buf(req, NULL, 0);
                return true;
        }
        return false;
}

/* CUSE starts every read(2) at offset 0: more is a long read's next
 * request. */
static void serve_or_defer(CuseDev *dev, fuse_req_t req, size_t size, off_t off) {
        if (off > 0)
                defer(dev, req, size);
        else
                serve(dev, req, size);
}

static void crng_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi) {
        CuseDev *dev = fuse_req_userdata(req);

        if (!read_answered(dev, req, size))
                serve_or_defer(dev, req, size, off);
}

static void random_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi) {
        CuseDev *dev = fuse_req_userdata(req);
        CuseHub *hub = dev->hub;

        if (read_answered(dev, req, size))
                return;
        if (crng_is_seeded(hub->crng)) {
                serve_or_defer(dev, req, size, off);
                return;
        }
        if (fi->flags & O_NONBLOCK) {
                dev->eagain++;
                fuse_reply_err(req, EAGAIN);
                return;
        }
        if (cusedev_park(dev, req, fi, size))
                hub->cb.demand(hub->cb.userdata);
}

/* Random parks reads only before the first seed (which stays): only then
 * does its opener's account need the look at /proc. */
static void random_open(fuse_req_t req, struct fuse_file_info *fi) {
        CuseDev *dev = fuse_req_userdata(req);

        if (crng_is_seeded(dev->hub->crng))
                cusedev_op_open(req, fi);
        else
                cusedev_open_file(req, fi, cusedev_charge(dev, req));
}

static void crng_write(fuse_req_t req, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
        CuseDev *dev = fuse_req_userdata(req);

        crng_mix(dev->hub->crng, buf, size);
        fuse_reply_write(req, size);
}

static void null_write(fuse_req_t req, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
        fuse_reply_write(req, size);
}

/* As the kernel's urandom: no poll method, default mask. */
static void no_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph) {
        if (ph)
                fuse_pollhandle_destroy(ph);
        fuse_reply_err(req, ENOSYS);
}

static void random_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph) {
        CuseDev *dev = fuse_req_userdata(req);

        if (crng_is_seeded(dev->hub->crng) || dev->hub->shutting_down) {
                if (ph)
                        fuse_pollhandle_destroy(ph);
                fuse_reply_poll(req, POLLIN | POLLRDNORM);
                return;
        }
        cusedev_keep_pollhandle(dev, fi, ph);
        fuse_reply_poll(req, POLLOUT | POLLWRNORM);
}

static int entropy_count(CuseHub *hub) {
        /* The kernel reports its pool size once ready, and the bits gathered
         * toward readiness before; the drop-in does the same for the CRNG. */
        if (crng_is_seeded(hub->crng))
                return CRNG_SEED_BITS;
        return (int)MIN(crng_pending_credit(hub->crng), CRNG_SEED_BITS - 1);
}

static void crng_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi, unsigned flags,
                       const void *in_buf, size_t in_bufsz, size_t out_bufsz) {
        CuseDev *dev = fuse_req_userdata(req);
        CuseHub *hub = dev->hub;
        RndOp op = rndioctl_op((unsigned)cmd);
        RndRequest rq;
        int count, r;

        /* The kernel's random_ioctl() answers anything it does not know,
         * RNDGETPOOL included, with EINVAL. */
        if (op == RND_OP_UNKNOWN || op == RND_OP_GETPOOL) {
                fuse_reply_err(req, EINVAL);
                return;
        }
        /* As the kernel: the capability check comes before any user memory
         * is read. */
        if (rndioctl_privileged(op) && (r = cusedev_caller_privileged(dev, req)) <= 0) {
                fuse_reply_err(req, r < 0 ? -r : EPERM);
                return;
        }
        if (!cusedev_ioctl_decode(req, cmd, arg, flags, in_buf, in_bufsz, out_bufsz, &rq))
                return;
        switch (op) {
        case RND_OP_GETENTCNT:
                count = entropy_count(hub);
                fuse_reply_ioctl(req, 0, &count, sizeof(count));
                return;
        case RND_OP_ADDTOENTCNT:
                /* 256 bits of credit seed an unseeded CRNG; after that it
                 * only enriches the next reseed. */
                crng_add_credit(hub->crng, (unsigned)rq.count);
                cusehub_seeded(hub, seeder_seed_from_credit(hub->seeder));
                break;
        case RND_OP_ADDENTROPY:
                crng_mix(hub->crng, rq.data, rq.size);
                crng_add_credit(hub->crng, (unsigned)rq.count);
                cusehub_seeded(hub, seeder_seed_from_credit(hub->seeder));
                break;
        case RND_OP_ZAPENTCNT:
        case RND_OP_CLEARPOOL:
                /* No-ops, as in the kernel since 5.18. */
                break;
        case RND_OP_RESEEDCRNG:
                r = seeder_trigger(hub->seeder, SEED_TRIGGER_IOCTL);
                if (r < 0) {
                        fuse_reply_err(req, -r);
                        return;
                }
                /* Now if the store has a block; else as soon as one is made,
                 * ahead of every /dev/truerandom reader. */
                cusehub_seed_if_due(hub);
                hub->cb.demand(hub->cb.userdata);
                break;
        default:
                fuse_reply_err(req, EINVAL);
                return;
        }
        fuse_reply_ioctl(req, 0, NULL, 0);
}

/* The null device answers no ioctl: it is no random device. */
static void null_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi, unsigned flags,
                       const void *in_buf, size_t in_bufsz, size_t out_bufsz) {
        fuse_reply_err(req, ENOTTY);
}

static const struct cuse_lowlevel_ops random_requests = {
        .init_done = cusedev_op_init_done,
        .open = random_open,
        .release = cusedev_op_release,
        .read = random_read,
        .write = crng_write,
        .poll = random_poll,
        .ioctl = crng_ioctl,
};

static const struct cuse_lowlevel_ops urandom_requests = {
        .init_done = cusedev_op_init_done,
        .open = cusedev_op_open,
        .release = cusedev_op_release,
        .read = crng_read,
        .write = crng_write,
        .poll = no_poll,
        .ioctl = crng_ioctl,
};

static const struct cuse_lowlevel_ops null_requests = {
        .init_done = cusedev_op_init_done,
        .open = cusedev_op_open,
        .release = cusedev_op_release,
        .read = crng_read,
        .write = null_write,
        .poll = no_poll,
        .ioctl = null_ioctl,
};

/* The drop-ins take no store blocks themselves: the seeder does, for them. */
const CuseDevOps crngdev_random_ops = {
        .name = "random",
        .buffer_ioctls = true,
        .requests = &random_requests,
        .seeded = random_seeded,
        .serve_deferred = crng_serve_deferred,
};

const CuseDevOps crngdev_urandom_ops = {
        .name = "urandom",
        .buffer_ioctls = true,
        .requests = &urandom_requests,
        .serve_deferred = crng_serve_deferred,
};

const CuseDevOps crngdev_null_ops = {
        .name = "null",
        .requests = &null_requests,
        .serve_deferred = crng_serve_deferred,
};
