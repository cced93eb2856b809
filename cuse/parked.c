/* parked.c - reads waiting for data: their bounds per uid and in all, the
 * fair queue they wait in, their interrupts, and failing them all at once.
 * Part of what every CUSE device shares (cusedev.c has the rest); it knows
 * no kind of device.
 *
 * Invariant: a parked read is on one list until whoever unlinks it replies.
 * Flow: a device's read -> [parked reads] -> the device's pump or an
 * interrupt -> one reply. */
#include "cusedev-internal.h"

#include <errno.h>
#include <stdlib.h>

Parked *parked_new(CuseDev *dev, fuse_req_t req, size_t size) {
        Parked *p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        p->req = req;
        p->dev = dev;
        p->size = size;
        return p;
}

static void parked_interrupted(fuse_req_t req, void *data) {
        Parked *p = data;

        if (p->registering) {
                /* Called from inside fuse_req_interrupt_func(): libfuse still
                 * holds the request; replying now would free it under it.
                 * parked_arm() answers once registration returns. */
                p->interrupted_early = true;
                return;
        }
        /* Single-threaded: the request is still unanswered, so it is still
         * parked. Unlink, then the one reply. */
        parked_unlink(p);
        p->dev->interrupted++;
        fuse_reply_err(req, EINTR);
        p->dev->hub->cb.demand(p->dev->hub->cb.userdata);
        free(p);
}

bool parked_arm(Parked *p) {
        p->registering = true;
        fuse_req_interrupt_func(p->req, parked_interrupted, p);
        p->registering = false;
        if (!p->interrupted_early)
                return true;
        parked_unlink(p);
        p->dev->interrupted++;
        fuse_reply_err(p->req, EINTR);
        free(p);
        return false;
}

void parked_unlink(Parked *p) {
        if (p->deferred) {
                TAILQ_REMOVE(&p->dev->deferred, p, deferred_link);
                p->dev->n_deferred--;
                return;
        }
        fairq_remove(p->dev->fq, &p->fair);
        p->dev->n_parked--;
}

void parked_reply_err(Parked *p, int err) {
        fuse_reply_err(p->req, err);
        free(p);
}

/* The bounds on waiting reads (DESIGN §6), for a read charged to uid (its
 * file's account, CUSE_UID_USERNS for all user namespaces): 0 or -EAGAIN.
 * Every account, root's too, waits at most max_parked_per_uid reads; the
 * others together stop that many short of max_parked, which stay for root.
 * With the default quota (max_parked / 9, config.c) eight uids at their
 * quota and root's reserve fit, so every uid can park as long as at most
 * seven others hold their full quota, and root always can, up to its own:
 * a file root opened and handed to unprivileged code (whose reads are then
 * root's) fills no more (issue 23). */
static int park_allowed(const CuseDev *dev, uint32_t uid) {
        const CuseHubLimits *l = &dev->hub->params.limits;
        size_t root = fairq_count_uid(dev->fq, 0);

        if (dev->n_parked >= l->max_parked || fairq_count_uid(dev->fq, uid) >= l->max_parked_per_uid)
                return -EAGAIN;
        if (uid != 0 && dev->n_parked - root >= l->max_parked - l->max_parked_per_uid)
                return -EAGAIN;
        return 0;
}

bool cusedev_park(CuseDev *dev, fuse_req_t req, struct fuse_file_info *fi, size_t size) {
        const CuseFile *f = (const CuseFile *)(uintptr_t)fi->fh;
        /* A read on a file the daemon did not open is nobody's: the shared
         * account, as for a caller that cannot be told. */
        uint32_t uid = f ? f->charge : CUSE_UID_USERNS;
        Parked *p;

        if (park_allowed(dev, uid) < 0) {
                /* Bounded memory, and no uid crowding out the others: a
                 * reader over a bound is told to come back. */
                dev->eagain++;
                fuse_reply_err(req, EAGAIN);
                return false;
        }
        p = parked_new(dev, req, size);
        if (!p) {
                fuse_reply_err(req, ENOMEM);
                return false;
        }
        p->uid = uid;
        if (fairq_push(dev->fq, &p->fair, p->uid) < 0) {
                parked_reply_err(p, ENOMEM);
                return false;
        }
        dev->n_parked++;
        return parked_arm(p);
}

void cusedev_fail_parked(CuseDev *dev, int err) {
        FairEntry *e;
        Parked *p;

        while ((e = fairq_pop(dev->fq))) {
                p = FAIRQ_ENTRY_OF(e, Parked, fair);
                dev->n_parked--;
                parked_reply_err(p, err);
        }
        while ((p = TAILQ_FIRST(&dev->deferred))) {
                parked_unlink(p);
                parked_reply_err(p, err);
        }
}
