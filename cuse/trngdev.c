/* trngdev.c - /dev/truerandom: full-entropy blocks, each to one reader once.
 *
 * Opening it takes uid 0 or the device's group, checked here whatever the
 * node's mode, and a uid other than root holds a bounded number of files;
 * every caller in a user namespace of its own counts as one uid together
 * (CUSE_UID_USERNS), for its files and its reads.
 * A read returns 1..n bytes as soon as at least one block is there (short
 * reads, as the old /dev/random), at most one request's worth per read(2).
 * Bytes come from 32-byte store blocks; the unserved tail of a block is
 * erased, never handed to anybody else. When nothing is there the read
 * parks in the fair queue, within the per-uid bounds (cusedev_park()); the
 * hub's pump (through trngdev_ops) later deals the store's blocks one at a
 * time, round robin across uids, and answers every read that got any. An
 * interrupted read loses nothing: it got no bytes yet. Closed (not enough
 * healthy sources): it stalls, fails closed.
 * A device of one source (CuseDevParams.per_source, /dev/truerandom-SOURCE)
 * is the same but for what it takes: that source's blocks alone
 * (store_take_from()), and only while that source is healthy as well
 * (cusehub_set_sources_open()). A block is taken once, by whichever device
 * asks first.
 * Flow: store -> [fair queue -> reply] -> reader. */
#include "cusedev-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "pool/secret.h"
#include "rndioctl.h"

#define BLOCK STORE_BLOCK_SIZE
#define SCRATCH_BLOCKS (CUSE_MAX_REPLY / BLOCK)

/* Whether the device may hand out blocks now. */
static bool dev_open(const CuseDev *dev) {
        const CuseHub *hub = dev->hub;

        return hub->trng_open && (!dev->per_source || (hub->sources_open & (UINT32_C(1) << dev->source)));
}

/* The blocks the device could take now. */
static size_t dev_fill(const CuseDev *dev) {
        Store *store = dev->hub->store;

        return dev->per_source ? store_fill_from(store, dev->source) : store_fill(store);
}

static int dev_take(CuseDev *dev, uint8_t block[static BLOCK], size_t serve) {
        Store *store = dev->hub->store;

        return dev->per_source ? store_take_from(store, dev->source, block, serve) : store_take(store, block, serve);
}

/* Takes up to n_blocks blocks into out and returns how many bytes of them
 * go to a reader of size bytes. Blocks can vanish between store_fill() and
 * store_take() (a failing source purges its own), so fewer may come. */
static size_t take_blocks(CuseDev *dev, uint8_t *out, size_t n_blocks, size_t size) {
        size_t got = 0;

        for (size_t b = 0; b < n_blocks && got < size; b++) {
                size_t serve = MIN((size_t)BLOCK, size - got);
                if (dev_take(dev, out + b * BLOCK, serve) < 0)
                        break;
                got += serve;
        }
        return got;
}

static void reply_bytes(CuseDev *dev, fuse_req_t req, const uint8_t *buf, size_t n) {
        /* A failed reply means the reader died meanwhile: its bytes are
         * erased with the scratch all the same, never reused. */
        (void)fuse_reply_buf(req, (const char *)buf, n);
        dev->bytes_served += n;
}

/* Deals the store's blocks to the waiting reads. */
static void serve_parked(CuseDev *dev) {
        CuseHub *hub = dev->hub;
        bool served = false;

        while (fairq_size(dev->fq) > 0) {
                size_t avail = MIN(dev_fill(dev), (size_t)SCRATCH_BLOCKS);
                STAILQ_HEAD(, Parked) touched = STAILQ_HEAD_INITIALIZER(touched);
                Parked *p;
                size_t off = 0;

                if (avail == 0)
                        break;
                /* Deal the blocks: one per turn, round robin across uids. A
                 * read that has all it asked for leaves the queue. */
                for (size_t i = 0; i < avail; i++) {
                        FairEntry *e = fairq_next(dev->fq);
                        if (!e)
                                break;
                        p = FAIRQ_ENTRY_OF(e, Parked, fair);
                        /* Replies go out in the order readers got their
                         * first block. */
                        if (p->plan_blocks++ == 0)
                                STAILQ_INSERT_TAIL(&touched, p, touched);
                        if (p->plan_blocks * BLOCK >= p->size)
                                fairq_remove(dev->fq, e);
                }
                /* Every read that got a block is answered now, in full or
                 * short; the rest stay queued for the next blocks. */
                while ((p = STAILQ_FIRST(&touched))) {
                        size_t n;

                        STAILQ_REMOVE_HEAD(&touched, touched);
                        fairq_remove(dev->fq, &p->fair);
                        n = take_blocks(dev, hub->scratch + off, p->plan_blocks, p->size);
                        p->plan_blocks = 0;
                        if (n == 0) {
                                /* The store lost its blocks to a purge: wait again. */
                                if (fairq_push(dev->fq, &p->fair, p->uid) < 0) {
                                        dev->n_parked--;
                                        parked_reply_err(p, ENOMEM);
                                }
                                continue;
                        }
                        reply_bytes(dev, p->req, hub->scratch + off, n);
                        off += (n + BLOCK - 1) / BLOCK * BLOCK;
                        dev->n_parked--;
                        free(p);
                        served = true;
                }
                sodium_memzero(hub->scratch, off);
                if (off == 0)
                        break;
        }
        if (served)
                hub->cb.demand(hub->cb.userdata);
}

static void trng_pump(CuseDev *dev) {
        if (!dev_open(dev))
                return;
        serve_parked(dev);
        if (dev_fill(dev) > 0)
                cusedev_notify_pollers(dev);
}

static bool trng_wants_blocks(const CuseDev *dev) {
        return dev->n_parked > 0;
}

static void trng_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi) {
        CuseDev *dev = fuse_req_userdata(req);
        CuseHub *hub = dev->hub;

        dev->reads++;
        if (hub->shutting_down) {
                fuse_reply_err(req, hub->shutdown_err);
                return;
        }
        /* CUSE starts every read(2) at offset 0: more is the kernel coming
         * back after a full first request. One request's worth per call
         * (truerandom(4)): the empty reply ends the call with what it has. */
        if (size == 0 || off > 0) {
                fuse_reply_buf(req, NULL, 0);
                return;
        }
        size = MIN(size, (size_t)CUSE_MAX_REPLY);
        /* A due CRNG seed takes its block before any reader does. */
        cusehub_seed_if_due(hub);
        if (dev_open(dev) && fairq_size(dev->fq) == 0 && dev_fill(dev) > 0) {
                size_t want = (size + BLOCK - 1) / BLOCK;
                size_t n = take_blocks(dev, hub->scratch, MIN(want, dev_fill(dev)), size);
                if (n > 0) {
                        reply_bytes(dev, req, hub->scratch, n);
                        sodium_memzero(hub->scratch, (n + BLOCK - 1) / BLOCK * BLOCK);
                        hub->cb.demand(hub->cb.userdata);
                        return;
                }
        }
        if (fi->flags & O_NONBLOCK) {
                dev->eagain++;
                fuse_reply_err(req, EAGAIN);
                return;
        }
        if (!cusedev_park(dev, req, fi, size))
                return;
        hub->cb.demand(hub->cb.userdata);
        /* Blocks may be waiting behind readers that were queued before. */
        if (dev_open(dev) && dev_fill(dev) > 0)
                serve_parked(dev);
}

/* Whether the caller may open /dev/truerandom: 0, -EACCES, -ENOMEM. The
 * kernel checks the node's mode first, but a wrong mode (0444 by mistake,
 * a missing udev rule) must not open the pool, so the daemon asks too
 * (DESIGN §3): uid 0, or the device's group as the caller's gid or one of
 * its supplementary groups. The request carries the fsuid and fsgid;
 * supplementary groups only libfuse's fuse_req_getgroups() tells, from
 * /proc/PID/task/PID/status (in 3.14 with no proc_root to redirect it, so
 * the protocol tests wrap it). Whatever cannot be read fails closed: pid 0
 * (a caller in a pid namespace we do not see), a caller gone, a /proc that
 * hides other users' processes (hidepid=1 or 2 and a daemon that is not
 * root). The groups are read a moment after the open, so a pid reused in
 * between is a race the kernel's own check does not have. */
static int caller_in_group(CuseDev *dev, fuse_req_t req) {
        const struct fuse_ctx *ctx = fuse_req_ctx(req);
        _cleanup_free_ gid_t *groups = NULL;
        int n = 16, r;

        if (ctx->uid == 0)
                return 0;
        if (dev->gid == (gid_t)-1)
                return -EACCES;
        if (ctx->gid == dev->gid)
                return 0;
        if (ctx->pid <= 0)
                return -EACCES;
        for (;;) {
                gid_t *more = reallocarray(groups, (size_t)n, sizeof(*groups));

                if (!more)
                        return -ENOMEM;
                groups = more;
                r = fuse_req_getgroups(req, n, groups);
                if (r < 0)
                        return r == -ENOMEM ? -ENOMEM : -EACCES;
                if (r <= n)
                        break;
                /* More groups than room: ask again with room for all. */
                n = r;
        }
        for (int i = 0; i < r; i++)
                if (groups[i] == dev->gid)
                        return 0;
        return -EACCES;
}

static void trng_open(fuse_req_t req, struct fuse_file_info *fi) {
        CuseDev *dev = fuse_req_userdata(req);
        uint32_t charge;
        int r = caller_in_group(dev, req);

        if (r < 0) {
                fuse_reply_err(req, -r);
                return;
        }
        /* The file's account, for its reads too: every user namespace
         * shares one (cusedev.h). */
        charge = cusedev_charge(dev, req);
        cusedev_open_file(req, fi, charge);
}

static void trng_write(fuse_req_t req, const char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
        /* Unverified input must never become "true random" output. */
        fuse_reply_err(req, EPERM);
}

static void trng_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph) {
        CuseDev *dev = fuse_req_userdata(req);
        CuseHub *hub = dev->hub;
        bool ready = dev_open(dev) && dev_fill(dev) > 0 && fairq_size(dev->fq) == 0;

        cusedev_keep_pollhandle(dev, fi, ph);
        if (hub->shutting_down)
                ready = true; /* the read will report the error at once */
        fuse_reply_poll(req, ready ? (POLLIN | POLLRDNORM) : 0);
}

static void trng_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi, unsigned flags,
                       const void *in_buf, size_t in_bufsz, size_t out_bufsz) {
        CuseDev *dev = fuse_req_userdata(req);
        RndRequest rq;
        int bits;

        /* A new device, not a drop-in: only the entropy count applies. */
        if (rndioctl_op((unsigned)cmd) != RND_OP_GETENTCNT) {
                fuse_reply_err(req, ENOTTY);
                return;
        }
        if (!cusedev_ioctl_decode(req, cmd, arg, flags, in_buf, in_bufsz, out_bufsz, &rq))
                return;
        /* Bits of full-entropy output ready for this device's readers now. */
        bits = dev_open(dev) ? (int)MIN(dev_fill(dev) * BLOCK * 8, (size_t)INT_MAX) : 0;
        fuse_reply_ioctl(req, 0, &bits, sizeof(bits));
}

static const struct cuse_lowlevel_ops trng_requests = {
        .init_done = cusedev_op_init_done,
        .open = trng_open,
        .release = cusedev_op_release,
        .read = trng_read,
        .write = trng_write,
        .poll = trng_poll,
        .ioctl = trng_ioctl,
};

const CuseDevOps trngdev_ops = {
        .name = "truerandom",
        .requests = &trng_requests,
        .few_files = true,
        .pump = trng_pump,
        .wants_blocks = trng_wants_blocks,
};
