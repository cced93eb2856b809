/* egd.c - the EGD socket and its connections (egd.h).
 *
 * A connection handles one request at a time: while a read waits or a
 * reply is not yet sent it reads nothing more (at most one request is
 * buffered behind), so a peer cannot queue work, and watches only for
 * hang-up. Reply bytes live in the connection's record until sent, then
 * are erased; the scratch a block is taken into is erased on every path.
 * Flow: store -> [egd: fair queue -> reply] -> hypervisor -> guest. */
#include "egd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cuse/cusedev.h"
#include "cuse/fairq.h"
#include "cuse/privilege.h"
#include "pool/secret.h"
#include "proto/egdwire.h"
#include "util/cleanup.h"
#include "util/unixsock.h"

#define BLOCK STORE_BLOCK_SIZE
/* Of max_connections, the share only root may take: the last ninth, as the
 * devices keep for root (config's PARKED_SHARES). */
#define ROOT_SHARE 9U

typedef struct EgdConn EgdConn;

struct EgdConn {
        Egd *egd;
        int fd;
        sd_event_source *io;
        uid_t charge;                  /* whom its bounds count against */
        bool root;                     /* SO_PEERCRED uid 0: may write */
        uint8_t in[EGD_REQUEST_MAX];
        size_t in_len;
        uint8_t out[EGD_REPLY_MAX];    /* a reply not yet sent; erased once sent */
        size_t out_len, out_off;
        unsigned want;                 /* a waiting read's bytes still owed */
        FairEntry fair;                /* queued while want > 0 and out is empty */
        LIST_ENTRY(EgdConn) link;
};

struct Egd {
        sd_event *event;
        sd_event_source *listen_source;
        int listen_fd;
        UnixSockId id;
        char *path;
        char *proc_root;
        EgdLimits limits;
        Store *store;
        Crng *crng;
        Seeder *seeder;
        EgdCallbacks cb;
        FairQueue *fq;
        LIST_HEAD(, EgdConn) conns;
        bool open;
        bool shutting_down;
        EgdStats st;
};

/* ---- a connection ------------------------------------------------------------ */

static void conn_free(EgdConn *c) {
        Egd *e = c->egd;

        fairq_remove(e->fq, &c->fair);
        c->io = sd_event_source_disable_unref(c->io);
        close(c->fd);
        LIST_REMOVE(c, link);
        e->st.connections--;
        sodium_memzero(c->out, sizeof(c->out));
        sodium_memzero(c->in, sizeof(c->in));
        free(c);
}

/* Something to send: only that. A read waiting: only hang-ups. Else the
 * next request. */
static void conn_watch(EgdConn *c) {
        uint32_t events = EPOLLRDHUP;

        if (c->out_len > c->out_off)
                events |= EPOLLOUT;
        else if (c->want == 0)
                events |= EPOLLIN;
        (void) sd_event_source_set_io_events(c->io, events);
}

/* Sends what is left of the reply. 0 (all sent, or the rest waits for
 * EPOLLOUT), or -errno: the peer is gone. */
static int conn_flush(EgdConn *c) {
        while (c->out_off < c->out_len) {
                ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);

                if (n < 0)
                        return errno == EAGAIN || errno == EINTR ? 0 : -errno;
                c->out_off += (size_t) n;
        }
        sodium_memzero(c->out, c->out_len);
        c->out_len = c->out_off = 0;
        return 0;
}

/* Up to n bytes (at most a reply's 255) of whole blocks into out: the
 * bytes taken. Blocks can vanish between store_fill() and store_take() (a
 * failing source purges its own), so fewer may come. */
static size_t take_bytes(Egd *e, uint8_t *out, size_t n) {
        SECRET_BUFFER(block, BLOCK);
        size_t got = 0;

        while (got < n) {
                size_t serve = MIN((size_t) BLOCK, n - got);

                if (store_take(e->store, block, serve) < 0)
                        break;
                memcpy(out + got, block, serve);
                got += serve;
        }
        return got;
}

/* Whether a read may take from the store now: it serves, nobody waits
 * ahead, and a due CRNG seed does not come first. */
static bool may_take_now(const Egd *e) {
        return e->open && fairq_size(e->fq) == 0 && !seeder_wants_block(e->seeder) && store_fill(e->store) > 0;
}

static void reply_read_nowait(Egd *e, EgdConn *c, unsigned len) {
        size_t n = 0;

        if (may_take_now(e))
                n = take_bytes(e, c->out + 1, MIN((size_t) len, store_fill(e->store) * BLOCK));
        else if (len > 0)
                e->cb.changed(e->cb.userdata);
        c->out[0] = (uint8_t) n;
        c->out_len = 1 + n;
        e->st.bytes_served += n;
}

/* A read that waits: its turn comes in egd_pump(). -EDQUOT over the
 * uid's bound of waiting reads. */
static int start_waiting(Egd *e, EgdConn *c, unsigned len) {
        if (len == 0)
                return 0;
        if (!c->root && fairq_count_uid(e->fq, c->charge) >= e->limits.max_waiting_per_uid)
                return -EDQUOT;
        if (fairq_push(e->fq, &c->fair, c->charge) < 0)
                return -ENOMEM;
        c->want = len;
        e->cb.changed(e->cb.userdata);
        return 0;
}

/* One request. -errno: the peer is to be disconnected. */
static int conn_handle(EgdConn *c, const EgdRequest *rq) {
        Egd *e = c->egd;
        uint32_t bits;

        e->st.requests++;
        switch (rq->command) {
        case EGD_CMD_BITS:
                bits = e->open ? (uint32_t) MIN(store_fill(e->store) * BLOCK * 8, (size_t) UINT32_MAX) : 0;
                c->out_len = egd_reply_bits(bits, c->out);
                return 0;
        case EGD_CMD_PID:
                c->out_len = egd_reply_pid(getpid(), c->out);
                return 0;
        case EGD_CMD_READ_NOWAIT:
                reply_read_nowait(e, c, rq->len);
                return 0;
        case EGD_CMD_READ:
                return start_waiting(e, c, rq->len);
        case EGD_CMD_WRITE:
                /* Root's bytes only, and never credited: they may help the
                 * CRNG, they cannot make it worse, they never become
                 * /dev/truerandom's. */
                if (!c->root)
                        return -EPERM;
                crng_mix(e->crng, rq->data, rq->len);
                e->st.bytes_written += rq->len;
                return 0;
        }
        return -EBADMSG;
}

/* Handles buffered requests until one has to wait or be sent. -errno:
 * disconnect. */
static int conn_process(EgdConn *c) {
        while (c->out_len == 0 && c->want == 0) {
                EgdRequest rq;
                ssize_t n = egd_parse(c->in, c->in_len, &rq);
                int r;

                if (n == 0)
                        break;
                if (n < 0)
                        return (int) n;
                r = conn_handle(c, &rq);
                /* A write's bytes are the CRNG's now: erased here. */
                sodium_memzero(c->in, (size_t) n);
                memmove(c->in, c->in + n, c->in_len - (size_t) n);
                c->in_len -= (size_t) n;
                if (r < 0)
                        return r;
                r = conn_flush(c);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void conn_drop(EgdConn *c, bool counted) {
        Egd *e = c->egd;
        bool waited = c->want > 0;

        if (counted)
                e->st.dropped++;
        conn_free(c);
        if (waited)
                e->cb.changed(e->cb.userdata);
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        EgdConn *c = userdata;
        int r = 0;

        if (revents & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)) {
                conn_drop(c, false);
                return 0;
        }
        if (revents & EPOLLOUT) {
                r = conn_flush(c);
                /* Sent: a read still owed more waits for its next turn. */
                if (r >= 0 && c->out_len == 0 && c->want > 0 && !fairq_is_queued(&c->fair) &&
                    fairq_push(c->egd->fq, &c->fair, c->charge) < 0)
                        r = -ENOMEM;
                if (r >= 0 && c->out_len == 0 && c->want > 0)
                        c->egd->cb.changed(c->egd->cb.userdata);
        }
        if (r >= 0 && (revents & EPOLLIN) && c->in_len < sizeof(c->in)) {
                ssize_t n = read(fd, c->in + c->in_len, sizeof(c->in) - c->in_len);

                if (n == 0)
                        r = -ECONNRESET;
                else if (n < 0 && errno != EAGAIN && errno != EINTR)
                        r = -errno;
                else if (n > 0)
                        c->in_len += (size_t) n;
        }
        if (r >= 0)
                r = conn_process(c);
        if (r < 0) {
                conn_drop(c, r != -ECONNRESET && r != -EPIPE);
                return 0;
        }
        conn_watch(c);
        return 0;
}

/* ---- the socket --------------------------------------------------------------- */

static unsigned conns_of(const Egd *e, uid_t charge) {
        unsigned n = 0;
        EgdConn *c;

        LIST_FOREACH(c, &e->conns, link)
                n += c->charge == charge;
        return n;
}

static bool conn_refused(const Egd *e, uid_t charge) {
        if (e->st.connections >= e->limits.max_connections)
                return true;
        if (charge == 0)
                return false;
        return e->st.connections >= e->limits.max_connections - e->limits.max_connections / ROOT_SHARE ||
               conns_of(e, charge) >= e->limits.max_per_uid;
}

static int conn_new(Egd *e, int fd, const struct ucred *cred) {
        EgdConn *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        c->egd = e;
        c->fd = fd;
        c->root = cred->uid == 0;
        if (!c->root && e->cb.proc_budget && !e->cb.proc_budget(e->cb.userdata, cred->uid))
                c->charge = CUSE_UID_USERNS;
        else
                c->charge = privilege_charge(e->proc_root, cred->pid, cred->uid);
        if (conn_refused(e, c->charge)) {
                e->st.refused++;
                free(c);
                return -EBUSY;
        }
        r = sd_event_add_io(e->event, &c->io, fd, EPOLLIN | EPOLLRDHUP, on_conn_io, c);
        if (r < 0) {
                free(c);
                return r;
        }
        LIST_INSERT_HEAD(&e->conns, c, link);
        e->st.connections++;
        e->st.accepted++;
        return 0;
}

static int on_listen(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Egd *e = userdata;

        for (unsigned i = 0; i < UNIXSOCK_BACKLOG; i++) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                struct ucred cred;
                socklen_t len = sizeof(cred);

                if (cfd < 0) {
                        if (errno == ECONNABORTED || errno == EINTR)
                                continue;
                        return 0;
                }
                if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || conn_new(e, cfd, &cred) < 0)
                        close(cfd);
        }
        return 0;
}

/* ---- serving ------------------------------------------------------------------ */

void egd_pump(Egd *e) {
        if (!e || !e->open || e->shutting_down)
                return;
        while (fairq_size(e->fq) > 0 && store_fill(e->store) > 0) {
                EgdConn *c = FAIRQ_ENTRY_OF(fairq_next(e->fq), EgdConn, fair);
                size_t n = take_bytes(e, c->out, MIN((size_t) c->want, (size_t) BLOCK));
                int r;

                if (n == 0)
                        break;
                c->out_len = n;
                c->want -= (unsigned) n;
                e->st.bytes_served += n;
                if (c->want == 0)
                        fairq_remove(e->fq, &c->fair);
                r = conn_flush(c);
                /* A peer slow to read leaves the turns until it has. */
                if (r >= 0 && c->out_len > 0)
                        fairq_remove(e->fq, &c->fair);
                if (r >= 0)
                        r = conn_process(c);
                if (r < 0)
                        conn_drop(c, r != -ECONNRESET && r != -EPIPE);
                else
                        conn_watch(c);
        }
}

bool egd_wants_blocks(const Egd *e) {
        return e && !e->shutting_down && fairq_size(e->fq) > 0;
}

void egd_set_open(Egd *e, bool open) {
        if (e)
                e->open = open;
}

void egd_shutdown(Egd *e) {
        if (!e)
                return;
        e->shutting_down = true;
        (void) sd_event_source_set_enabled(e->listen_source, SD_EVENT_OFF);
        while (!LIST_EMPTY(&e->conns))
                conn_free(LIST_FIRST(&e->conns));
}

static bool limits_valid(const EgdLimits *l) {
        return l->max_connections > 0 && l->max_per_uid > 0 && l->max_waiting_per_uid > 0;
}

int egd_set_limits(Egd *e, const EgdLimits *limits) {
        if (!limits_valid(limits))
                return -EINVAL;
        e->limits = *limits;
        return 0;
}

void egd_get_stats(const Egd *e, EgdStats *ret) {
        *ret = e->st;
        ret->waiting = (unsigned) fairq_size(e->fq);
        ret->waiting_uids = (unsigned) fairq_uids(e->fq);
}

const char *egd_path(const Egd *e) {
        return e->path;
}

/* ---- life cycle ---------------------------------------------------------------- */

DEFINE_FREEP(Egd, egd_free);

/* The file's group, while the daemon is still root: lchown() never
 * follows a link, and nobody but root writes the directory yet. */
static int set_group(const char *path, gid_t gid) {
        if (gid == (gid_t) -1 || geteuid() != 0)
                return 0;
        return lchown(path, (uid_t) -1, gid) < 0 ? -errno : 0;
}

int egd_new(sd_event *event, const EgdParams *params, Store *store, Crng *crng, Seeder *seeder,
            const EgdCallbacks *cb, Egd **ret) {
        _cleanup_(egd_freep) Egd *e = NULL;
        int r;

        if (!event || !params || !params->path || !limits_valid(&params->limits) || !cb || !cb->changed)
                return -EINVAL;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->listen_fd = -1;
        LIST_INIT(&e->conns);
        e->event = sd_event_ref(event);
        e->limits = params->limits;
        e->store = store;
        e->crng = crng;
        e->seeder = seeder;
        e->cb = *cb;
        e->path = strdup(params->path);
        if (!e->path || (params->proc_root && !(e->proc_root = strdup(params->proc_root))))
                return -ENOMEM;
        r = fairq_new(&e->fq);
        if (r < 0)
                return r;
        r = unixsock_listen(e->path, SOCK_STREAM, 0660, &e->listen_fd, &e->id);
        if (r < 0)
                return r;
        r = set_group(e->path, params->gid);
        if (r < 0)
                return r;
        r = sd_event_add_io(event, &e->listen_source, e->listen_fd, EPOLLIN, on_listen, e);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(e);
        return 0;
}

Egd *egd_free(Egd *e) {
        if (!e)
                return NULL;
        while (!LIST_EMPTY(&e->conns))
                conn_free(LIST_FIRST(&e->conns));
        e->listen_source = sd_event_source_disable_unref(e->listen_source);
        if (e->listen_fd >= 0) {
                close(e->listen_fd);
                unixsock_remove(e->path, &e->id);
        }
        e->fq = fairq_free(e->fq);
        sd_event_unref(e->event);
        free(e->path);
        free(e->proc_root);
        free(e);
        return NULL;
}
