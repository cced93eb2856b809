/* control.c - the control socket: accept, read one request per connection,
 * answer from the loop, or hand the connection to a raw-export thread
 * (ctlexport.c).
 *
 * Invariants: the loop thread owns the listening socket, every waiting
 * connection and the export list. Every connection gets at most one final
 * reply and is then closed.
 * Flow: truerandomctl -> socket -> [control] -> callbacks into the daemon. */
#include "control-internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cuse/cusedev.h"
#include "cuse/privilege.h"
#include "proto/ctlproto.h"
#include "util/cleanup.h"

#define CONTROL_BACKLOG 16
#define CONTROL_ACCEPT_PAUSE_USEC 100000ULL

const char *control_errno_text(int r, char *buf, size_t size) {
        /* GNU strerror_r: thread-safe, returns the text. */
        return strerror_r(r < 0 ? -r : r, buf, size);
}

/* A unix socket closed with unread packets resets its peer, and the reset
 * can overtake the reply still queued there: whatever a client sent beyond
 * its one request is discarded first (bounded, MSG_TRUNC reads nothing). */
void control_close_drained(int fd) {
        char c;

        for (unsigned i = 0; i < 64; i++)
                if (recv(fd, &c, sizeof(c), MSG_DONTWAIT | MSG_TRUNC) < 0)
                        break;
        close(fd);
}

ssize_t control_format_error(CtlError e, char msg[static CONTROL_ERROR_MSG_MAX], const char *fmt, va_list ap) {
        char text[CTL_ERROR_TEXT_MAX];

        vsnprintf(text, sizeof(text), fmt, ap);
        return ctl_reply_format_error(e, text, msg, CONTROL_ERROR_MSG_MAX);
}

/* ---- connections on the loop ------------------------------------------------ */

void control_conn_free(Conn *conn) {
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
        control_conn_free(conn);
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
                control_conn_free(conn);
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

static void conn_dispatch(Conn *conn, const CtlRequest *req) {
        Control *c = conn->control;
        const SourceOps *ops = NULL;
        SourceParams params = { 0 };
        _cleanup_free_ char *json = NULL;
        char eb[128];
        int r;

        switch (req->command - ctl_commands) {
        case 0: /* status */
                r = c->cb.status_json ? c->cb.status_json(c->cb.userdata, &json) : -EOPNOTSUPP;
                if (r < 0) {
                        conn_reply_error(conn, ctl_error_from_errno(r), "status: %s", control_errno_text(r, eb, sizeof(eb)));
                        return;
                }
                conn_reply_ok(conn, json);
                return;

        case 1: /* reseed */
                if (conn->uid != 0) {
                        conn_reply_error(conn, CTL_ERROR_PERMISSION, "reseed needs root");
                        return;
                }
                r = c->cb.reseed ? c->cb.reseed(c->cb.userdata) : -EOPNOTSUPP;
                if (r == -ENODATA)
                        conn_reply_error(conn, CTL_ERROR_NO_DATA, "the CRNG is not seeded yet");
                else if (r < 0)
                        conn_reply_error(conn, ctl_error_from_errno(r), "reseed: %s", control_errno_text(r, eb, sizeof(eb)));
                else
                        conn_reply_ok(conn, NULL);
                return;

        case 2: /* raw */
                /* Before the name is looked at: no probing for sources. */
                if (conn->uid != 0) {
                        conn_reply_error(conn, CTL_ERROR_PERMISSION, "raw needs root");
                        return;
                }
                if (c->n_exports >= CONTROL_MAX_EXPORTS) {
                        conn_reply_error(conn, CTL_ERROR_BUSY, "%u raw exports are running already", c->n_exports);
                        return;
                }
                r = c->cb.raw_source ? c->cb.raw_source(c->cb.userdata, req->source, &ops, &params) : -ENOENT;
                if (r == -ENOENT)
                        conn_reply_error(conn, CTL_ERROR_UNKNOWN_SOURCE, "no source named '%s'", req->source);
                else if (r == -ENODEV)
                        conn_reply_error(conn, CTL_ERROR_UNAVAILABLE, "source %s is not enabled", req->source);
                else if (r < 0)
                        conn_reply_error(conn, ctl_error_from_errno(r), "source %s: %s", req->source,
                                         control_errno_text(r, eb, sizeof(eb)));
                else if ((r = control_export_start(conn, req, ops, &params)) < 0)
                        conn_reply_error(conn, CTL_ERROR_FAILED, "starting the export: %s",
                                         control_errno_text(r, eb, sizeof(eb)));
                return;

        default:
                abort();
        }
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
                control_conn_free(conn);
                return 0;
        }

        /* MSG_TRUNC: the packet's real length, so an oversized request is
         * recognised (and dropped whole) rather than read in pieces. */
        n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) {
                if (errno != EAGAIN && errno != EINTR)
                        control_conn_free(conn);
                return 0;
        }
        if (n == 0 && (revents & (EPOLLHUP | EPOLLRDHUP))) {
                /* Gone without asking anything. */
                control_conn_free(conn);
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
                control_conn_free(conn);
                return 0;
        }
        conn_reply_error(conn, CTL_ERROR_TIMEOUT, "no request within %llu s",
                         (unsigned long long) (CONTROL_DEADLINE_USEC / 1000000ULL));
        return 0;
}

static int conn_new(Control *c, int fd, uid_t uid, uid_t charge) {
        Conn *conn;
        int r;

        conn = calloc(1, sizeof(*conn));
        if (!conn)
                return -ENOMEM;
        conn->control = c;
        conn->fd = fd;
        conn->uid = uid;
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
 * user namespace (or one that cannot be told) the one account they share. */
static uid_t peer_charge(const Control *c, const struct ucred *cred) {
        if (cred->uid == 0 || privilege_initial_userns(c->cb.proc_root, cred->pid, cred->uid) == 1)
                return cred->uid;
        return CUSE_UID_USERNS;
}

/* Why a new connection charged to uid is refused (control.h has the
 * bounds), or NULL. What a uid holds is counted on the list: it has 16
 * entries at most. */
static const char *conn_refused(const Control *c, uid_t uid, char *buf, size_t size) {
        unsigned mine;

        if (c->n_conns >= CONTROL_MAX_CONNECTIONS) {
                snprintf(buf, size, "all %u control connections are taken", CONTROL_MAX_CONNECTIONS);
                return buf;
        }
        if (uid == 0)
                return NULL;
        if (c->n_conns - conns_of(c, 0) >= CONTROL_MAX_CONNECTIONS - CONTROL_ROOT_RESERVED) {
                snprintf(buf, size, "the control connections left are kept for root");
                return buf;
        }
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

        for (unsigned i = 0; i < CONTROL_BACKLOG; i++) {
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
                charge = peer_charge(c, &cred);
                why = conn_refused(c, charge, buf, sizeof(buf));
                if (why)
                        refuse_busy(cfd, why);
                else if (conn_new(c, cfd, cred.uid, charge) < 0)
                        close(cfd);
        }
        return 0;
}

static int on_export_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Control *c = userdata;
        uint64_t n;

        (void) !read(fd, &n, sizeof(n));
        control_join_exports(c, false);
        return 0;
}

/* ---- life cycle ---------------------------------------------------------------- */

int control_socket_dir(const char *socket_path, char **ret_dir) {
        char *dir = strdup(socket_path), *slash;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash || slash == dir) {
                free(dir);
                dir = NULL;
        } else
                *slash = '\0';
        *ret_dir = dir;
        return 0;
}

static int make_parent_dir(const char *path) {
        _cleanup_free_ char *dir = NULL;
        int r = control_socket_dir(path, &dir);

        if (r < 0)
                return r;
        if (dir && mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* -EADDRINUSE when something answers on path; removes a dead socket. */
static int claim_path(const struct sockaddr_un *sa) {
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *) sa, sizeof(*sa)) == 0 || errno == EAGAIN)
                return -EADDRINUSE;
        if (errno == ECONNREFUSED && unlink(sa->sun_path) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int control_new(sd_event *event, const char *socket_path, const ControlCallbacks *cb, Control **ret) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct stat st;
        Control *c;
        int r;

        if (!event || !socket_path || !cb || !ret)
                return -EINVAL;
        if (strlen(socket_path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->listen_fd = c->stop_fd = c->done_fd = -1;
        LIST_INIT(&c->conns);
        LIST_INIT(&c->exports);
        c->cb = *cb;
        c->event = sd_event_ref(event);
        c->socket_path = strdup(socket_path);
        if (!c->socket_path) {
                r = -ENOMEM;
                goto fail;
        }
        r = make_parent_dir(socket_path);
        if (r < 0)
                goto fail;
        r = claim_path(&sa);
        if (r < 0)
                goto fail;

        /* Anyone may connect: requests decide privilege by SO_PEERCRED. The
         * mode comes from the umask at bind(), never from a chmod() by path:
         * the directory may belong to the unprivileged user the daemon
         * becomes, who could swap the name for a symbolic link in between.
         * One thread exists here, so the process-wide umask is ours. */
        c->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->listen_fd < 0) {
                r = -errno;
                goto fail;
        }
        mode_t old_umask = umask(0111);
        r = bind(c->listen_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ? -errno : 0;
        umask(old_umask);
        if (r < 0)
                goto fail;
        if (lstat(socket_path, &st) < 0) {
                r = -errno;
                goto fail;
        }
        if (!S_ISSOCK(st.st_mode)) {
                r = -EEXIST;
                goto fail;
        }
        c->dev = st.st_dev;
        c->ino = st.st_ino;
        if (listen(c->listen_fd, CONTROL_BACKLOG) < 0) {
                r = -errno;
                goto fail;
        }
        c->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        c->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (c->stop_fd < 0 || c->done_fd < 0) {
                r = -errno;
                goto fail;
        }
        r = sd_event_add_io(event, &c->listen_source, c->listen_fd, EPOLLIN, on_listen, c);
        if (r < 0)
                goto fail;
        r = sd_event_add_io(event, &c->done_source, c->done_fd, EPOLLIN, on_export_done, c);
        if (r < 0)
                goto fail;
        *ret = c;
        return 0;

fail:
        control_free(c);
        return r;
}

Control *control_free(Control *c) {
        struct stat st;
        uint64_t one = 1;

        if (!c)
                return NULL;
        if (c->stop_fd >= 0)
                (void) !write(c->stop_fd, &one, sizeof(one));
        control_join_exports(c, true);
        while (!LIST_EMPTY(&c->conns))
                control_conn_free(LIST_FIRST(&c->conns));
        c->listen_source = sd_event_source_disable_unref(c->listen_source);
        c->accept_pause = sd_event_source_disable_unref(c->accept_pause);
        c->done_source = sd_event_source_disable_unref(c->done_source);
        if (c->listen_fd >= 0) {
                close(c->listen_fd);
                /* Only our own socket: a newer daemon may have replaced it. */
                if (stat(c->socket_path, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino)
                        unlink(c->socket_path);
        }
        if (c->stop_fd >= 0)
                close(c->stop_fd);
        if (c->done_fd >= 0)
                close(c->done_fd);
        sd_event_unref(c->event);
        free(c->socket_path);
        free(c);
        return NULL;
}
