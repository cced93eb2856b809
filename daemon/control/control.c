/* control.c - the control socket: accept, read one request per
 * connection, refuse what the peer may not ask, and answer from the loop
 * what the command's handler decides (commands.c), or hand the connection
 * to a raw-export thread (export.c).
 *
 * Invariants: the loop thread owns the listening socket, every waiting
 * connection and the set of exports. Every connection gets at most one
 * final reply and is then closed.
 * Flow: truerandomctl -> socket -> [control] -> commands -> callbacks into
 * the daemon. */
#include "control.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include "commands.h"
#include "cuse/cusedev.h"
#include "cuse/privilege.h"
#include "export.h"
#include "proto/ctlproto.h"
#include "reply.h"
#include "util/unixsock.h"
#include "util/cleanup.h"

#define CONTROL_ACCEPT_PAUSE_USEC (100U * USEC_PER_MSEC)

typedef struct Conn Conn;

struct Conn {
        Control *control;
        LIST_ENTRY(Conn) link;
        int fd;
        uid_t uid;                 /* the peer's: root or not */
        pid_t pid;                 /* the peer's, for a command that asks for CAP_SYS_ADMIN */
        uid_t charge;              /* whose connections it counts among */
        sd_event_source *io, *deadline;
        uint8_t *out;              /* a final reply waiting for socket room */
        size_t out_size;
};

struct Control {
        sd_event *event;
        ControlCallbacks cb;
        char *socket_path;
        UnixSockId socket_id;    /* what listen_fd was bound to */
        int listen_fd;
        sd_event_source *listen_source, *accept_pause;
        LIST_HEAD(, Conn) conns;
        unsigned n_conns;
        Exports exports;
        sd_event_source *done_source;
};

/* ---- connections on the loop ------------------------------------------------ */

static void conn_free(Conn *conn) {
        Control *c = conn->control;

        LIST_REMOVE(conn, link);
        c->n_conns--;
        conn->io = sd_event_source_disable_unref(conn->io);
        conn->deadline = sd_event_source_disable_unref(conn->deadline);
        if (conn->fd >= 0)
                control_close_drained(conn->fd);
        free(conn->out);
        free(conn);
}

/* The final reply: sent now, or kept until the socket has room (the
 * deadline still applies). The connection is gone when this returns, or
 * waiting for EPOLLOUT; callers return right after. */
static void conn_reply(Conn *conn, const void *msg, size_t n) {
        ssize_t k = send(conn->fd, msg, n, MSG_DONTWAIT | MSG_NOSIGNAL);

        if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
                conn->out = malloc(n);
                if (conn->out && sd_event_source_set_io_events(conn->io, EPOLLOUT) >= 0) {
                        memcpy(conn->out, msg, n);
                        conn->out_size = n;
                        return;
                }
        }
        conn_free(conn);
}

static void conn_reply_error(Conn *conn, CtlError e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void conn_reply_error(Conn *conn, CtlError e, const char *fmt, ...) {
        char msg[CONTROL_ERROR_MSG_MAX];
        va_list ap;
        ssize_t n;

        va_start(ap, fmt);
        n = control_format_error(e, msg, fmt, ap);
        va_end(ap);
        if (n < 0) {
                conn_free(conn);
                return;
        }
        conn_reply(conn, msg, (size_t) n);
}

static void conn_reply_ok(Conn *conn, const char *payload) {
        size_t n = payload ? strlen(payload) : 0;
        _cleanup_free_ uint8_t *msg = NULL;
        ssize_t k;

        if (n + 3 > CTL_REPLY_MAX) {
                conn_reply_error(conn, CTL_ERROR_FAILED, "reply too large (%zu bytes)", n);
                return;
        }
        msg = malloc(n + 3);
        if (!msg || (k = ctl_reply_format(CTL_REPLY_OK, payload, n, msg, n + 3)) < 0) {
                conn_reply_error(conn, CTL_ERROR_FAILED, "out of memory");
                return;
        }
        conn_reply(conn, msg, (size_t) k);
}

/* The loop lets go of the connection before the thread takes it. */
static void conn_export(Conn *conn, const ExportSpec *spec) {
        char eb[128];
        int r;

        conn->io = sd_event_source_disable_unref(conn->io);
        conn->deadline = sd_event_source_disable_unref(conn->deadline);
        r = exports_start(&conn->control->exports, conn->fd, spec);
        if (r < 0) {
                /* No io source now: conn_reply() sends at once or gives up. */
                conn_reply_error(conn, CTL_ERROR_FAILED, "starting the export: %s",
                                 control_errno_text(r, eb, sizeof(eb)));
                return;
        }
        conn->fd = -1;
        conn_free(conn);
}

static void conn_dispatch(Conn *conn, const CtlRequest *req) {
        Control *c = conn->control;
        const ControlHandler *h = control_handler_lookup(req->command);
        ControlAnswer a = { 0 };

        /* Before the handler looks at anything: no probing for sources. */
        if (req->command->root && conn->uid != 0) {
                conn_reply_error(conn, CTL_ERROR_PERMISSION, "%s needs root", req->command->name);
                return;
        }
        /* The capability as the kernel's capable() sees it, read now: what
         * could feed the kernel's pool itself (cuse/privilege.h). */
        if (req->command->admin && conn->uid != 0 && !privilege_check(c->cb.proc_root, conn->pid, conn->uid)) {
                conn_reply_error(conn, CTL_ERROR_PERMISSION, "%s needs root or CAP_SYS_ADMIN", req->command->name);
                return;
        }
        if (!h) {
                conn_reply_error(conn, CTL_ERROR_FAILED, "%s is not served here", req->command->name);
                return;
        }
        h->handle(&c->cb, &c->exports, req, &a);
        switch (a.kind) {
        case CONTROL_ANSWER_OK:
                conn_reply_ok(conn, a.payload);
                break;
        case CONTROL_ANSWER_ERROR:
                conn_reply_error(conn, a.error, "%s", a.text);
                break;
        case CONTROL_ANSWER_EXPORT:
                conn_export(conn, &a.export);
                break;
        default:
                abort();
        }
        control_answer_done(&a);
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Conn *conn = userdata;
        uint8_t buf[CTL_REQUEST_MAX];
        char reason[CTL_REASON_MAX] = "malformed request";
        CtlRequest req;
        ssize_t n;
        int r;

        if (conn->out) {
                n = send(fd, conn->out, conn->out_size, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0 && (errno == EAGAIN || errno == EINTR) && !(revents & (EPOLLERR | EPOLLHUP)))
                        return 0;
                conn_free(conn);
                return 0;
        }

        /* MSG_TRUNC: the packet's real length, so an oversized request is
         * recognised (and dropped whole) rather than read in pieces. */
        n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) {
                if (errno != EAGAIN && errno != EINTR)
                        conn_free(conn);
                return 0;
        }
        if (n == 0 && (revents & (EPOLLHUP | EPOLLRDHUP))) {
                /* Gone without asking anything. */
                conn_free(conn);
                return 0;
        }
        /* One request per connection: nothing more is read. */
        (void) sd_event_source_set_io_events(conn->io, 0);
        if ((size_t) n > sizeof(buf)) {
                conn_reply_error(conn, CTL_ERROR_TOO_LARGE, "request too large (%zd bytes, at most %u)", n,
                                 CTL_REQUEST_MAX);
                return 0;
        }
        r = ctl_request_parse(buf, (size_t) n, &req, reason, sizeof(reason));
        if (r < 0) {
                conn_reply_error(conn, ctl_error_from_errno(r), "%s", reason);
                return 0;
        }
        conn_dispatch(conn, &req);
        return 0;
}

static int on_conn_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        Conn *conn = userdata;

        if (conn->out) {
                /* It asked, but does not read the answer. */
                conn_free(conn);
                return 0;
        }
        conn_reply_error(conn, CTL_ERROR_TIMEOUT, "no request within %llu s",
                         (unsigned long long) (CONTROL_DEADLINE_USEC / USEC_PER_SEC));
        return 0;
}

static int conn_new(Control *c, int fd, const struct ucred *cred, uid_t charge) {
        Conn *conn;
        int r;

        conn = calloc(1, sizeof(*conn));
        if (!conn)
                return -ENOMEM;
        conn->control = c;
        conn->fd = fd;
        conn->uid = cred->uid;
        conn->pid = cred->pid;
        conn->charge = charge;
        r = sd_event_add_io(c->event, &conn->io, fd, EPOLLIN | EPOLLRDHUP, on_conn_io, conn);
        if (r >= 0)
                r = sd_event_add_time_relative(c->event, &conn->deadline, CLOCK_MONOTONIC, CONTROL_DEADLINE_USEC, 0,
                                               on_conn_deadline, conn);
        if (r < 0) {
                sd_event_source_disable_unref(conn->io);
                free(conn);
                return r;
        }
        LIST_INSERT_HEAD(&c->conns, conn, link);
        c->n_conns++;
        return 0;
}

static int on_accept_pause(sd_event_source *s, uint64_t usec, void *userdata) {
        Control *c = userdata;

        (void) sd_event_source_set_enabled(c->listen_source, SD_EVENT_ON);
        return 0;
}

/* Out of fds or memory: the listening socket stays readable, so stop
 * watching it for a moment instead of spinning. */
static void pause_accepting(Control *c) {
        if (sd_event_source_set_enabled(c->listen_source, SD_EVENT_OFF) < 0)
                return;
        if (!c->accept_pause) {
                if (sd_event_add_time_relative(c->event, &c->accept_pause, CLOCK_MONOTONIC,
                                               CONTROL_ACCEPT_PAUSE_USEC, 0, on_accept_pause, c) < 0)
                        (void) sd_event_source_set_enabled(c->listen_source, SD_EVENT_ON);
                return;
        }
        if (sd_event_source_set_time_relative(c->accept_pause, CONTROL_ACCEPT_PAUSE_USEC) < 0 ||
            sd_event_source_set_enabled(c->accept_pause, SD_EVENT_ONESHOT) < 0)
                (void) sd_event_source_set_enabled(c->listen_source, SD_EVENT_ON);
}

static unsigned conns_of(const Control *c, uid_t charge) {
        unsigned n = 0;
        Conn *conn;

        LIST_FOREACH(conn, &c->conns, link)
                n += conn->charge == charge;
        return n;
}

/* Whose connections a peer's counts among: its uid, or for a peer in a
 * user namespace (or one that cannot be told, or whose uid spent its looks
 * at /proc) the one account they share. */
static uid_t peer_charge(const Control *c, const struct ucred *cred) {
        if (cred->uid != 0 && c->cb.proc_budget && !c->cb.proc_budget(c->cb.userdata, cred->uid))
                return CUSE_UID_USERNS;
        return privilege_charge(c->cb.proc_root, cred->pid, cred->uid);
}

/* The bounds that need no look at the peer's /proc (which a peer with
 * 65,536 groups makes costly, issue 23): all connections taken, or the
 * rest kept for root. uid: the peer's, 0 for root alone, as its charge. */
static const char *conn_refused_any(const Control *c, uid_t uid, char *buf, size_t size) {
        if (c->n_conns >= CONTROL_MAX_CONNECTIONS) {
                snprintf(buf, size, "all %u control connections are taken", CONTROL_MAX_CONNECTIONS);
                return buf;
        }
        if (uid != 0 && c->n_conns - conns_of(c, 0) >= CONTROL_MAX_CONNECTIONS - CONTROL_ROOT_RESERVED) {
                snprintf(buf, size, "the control connections left are kept for root");
                return buf;
        }
        return NULL;
}

/* Why a new connection charged to uid is refused by the per-uid bound
 * (control.h), or NULL. What a uid holds is counted on the list: it has 16
 * entries at most. */
static const char *conn_refused(const Control *c, uid_t uid, char *buf, size_t size) {
        unsigned mine;

        if (uid == 0)
                return NULL;
        mine = conns_of(c, uid);
        if (mine >= CONTROL_MAX_PER_UID && uid == CUSE_UID_USERNS)
                snprintf(buf, size, "user namespaces hold %u control connections, the most they may together", mine);
        else if (mine >= CONTROL_MAX_PER_UID)
                snprintf(buf, size, "uid %u holds %u control connections, the most one uid may", (unsigned) uid,
                         mine);
        if (mine >= CONTROL_MAX_PER_UID)
                return buf;
        return NULL;
}

/* The one reply a refused connection gets, sent at once; the client may
 * have sent its request or not yet (truerandomctl reads this either way). */
static void refuse_busy(int fd, const char *why) {
        char msg[CTL_ERROR_TEXT_MAX + 64];
        ssize_t n = ctl_reply_format_error(CTL_ERROR_BUSY, why, msg, sizeof(msg));

        if (n > 0)
                (void) !send(fd, msg, (size_t) n, MSG_DONTWAIT | MSG_NOSIGNAL);
        control_close_drained(fd);
}

static int on_listen(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Control *c = userdata;

        for (unsigned i = 0; i < UNIXSOCK_BACKLOG; i++) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                struct ucred cred;
                socklen_t len = sizeof(cred);
                const char *why;
                char buf[128];
                uid_t charge;

                if (cfd < 0) {
                        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                                pause_accepting(c);
                        if (errno == ECONNABORTED || errno == EINTR)
                                continue;
                        return 0;
                }
                if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
                        close(cfd);
                        continue;
                }
                /* The bounds first, the peer's /proc only for the per-uid
                 * one (root's charge is 0 without a look). */
                why = conn_refused_any(c, cred.uid, buf, sizeof(buf));
                charge = why ? cred.uid : peer_charge(c, &cred);
                if (!why)
                        why = conn_refused(c, charge, buf, sizeof(buf));
                if (why)
                        refuse_busy(cfd, why);
                else if (conn_new(c, cfd, &cred, charge) < 0)
                        close(cfd);
        }
        return 0;
}

static int on_export_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Control *c = userdata;

        exports_join(&c->exports);
        return 0;
}

/* ---- life cycle ---------------------------------------------------------------- */

DEFINE_FREEP(Control, control_free);

int control_new(sd_event *event, const char *socket_path, const ControlCallbacks *cb, Control **ret) {
        _cleanup_(control_freep) Control *c = NULL;
        int r;

        if (!event || !socket_path || !cb || !ret)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->listen_fd = -1;
        LIST_INIT(&c->conns);
        c->cb = *cb;
        c->event = sd_event_ref(event);
        r = exports_init(&c->exports);
        if (r < 0)
                return r;
        c->socket_path = strdup(socket_path);
        if (!c->socket_path)
                return -ENOMEM;
        r = unixsock_listen(socket_path, SOCK_SEQPACKET, 0666, &c->listen_fd, &c->socket_id);
        if (r < 0)
                return r;
        r = sd_event_add_io(event, &c->listen_source, c->listen_fd, EPOLLIN, on_listen, c);
        if (r < 0)
                return r;
        r = sd_event_add_io(event, &c->done_source, c->exports.done_fd, EPOLLIN, on_export_done, c);
        if (r < 0)
                return r;
        *ret = c;
        c = NULL;
        return 0;
}

Control *control_free(Control *c) {
        if (!c)
                return NULL;
        c->done_source = sd_event_source_disable_unref(c->done_source);
        exports_deinit(&c->exports);
        while (!LIST_EMPTY(&c->conns))
                conn_free(LIST_FIRST(&c->conns));
        c->listen_source = sd_event_source_disable_unref(c->listen_source);
        c->accept_pause = sd_event_source_disable_unref(c->accept_pause);
        if (c->listen_fd >= 0) {
                close(c->listen_fd);
                unixsock_remove(c->socket_path, &c->socket_id);
        }
        sd_event_unref(c->event);
        free(c->socket_path);
        free(c);
        return NULL;
}
