/* control.c - the control socket: accept, read one request per connection,
 * answer from the loop, or hand the connection to a raw-export thread.
 *
 * Invariants: the loop thread owns the listening socket, every waiting
 * connection and the export list; an export thread owns only its connection
 * fd and its own source instance, and talks back through two eventfds (stop:
 * readable once control_free() began; done: an export finished and can be
 * joined). Exported samples come from an instance that feeds nothing, so
 * they are no secret and are not erased. Every connection gets at most one
 * final reply and is then closed.
 * Flow: truerandomctl -> socket -> [control] -> callbacks into the daemon. */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctlproto.h"
#include "cuse/cusedev.h"
#include "cuse/privilege.h"
#include "pool/secret.h"

/* The collector's chunk (pool/collector.c): the export reads the source in
 * the same sizes, so the same samples come out of it. */
#define CONTROL_READ_CHUNK 4096U
#define CONTROL_BACKLOG 16
#define CONTROL_ACCEPT_PAUSE_USEC 100000ULL
#define CONTROL_BACKOFF_MIN_MS 10
#define CONTROL_BACKOFF_MAX_MS 1000
/* Device errors in a row that end an export (about 0.3 s of backoff). */
#define CONTROL_EXPORT_ERRORS_MAX 5U

typedef struct Conn Conn;
typedef struct Export Export;

struct Conn {
        Control *control;
        LIST_ENTRY(Conn) link;
        int fd;
        uid_t uid;                 /* the peer's: root or not */
        uid_t charge;              /* whose connections it counts among */
        sd_event_source *io, *deadline;
        uint8_t *out;              /* a final reply waiting for socket room */
        size_t out_size;
};

struct Export {
        Control *control;
        LIST_ENTRY(Export) link;
        pthread_t thread;
        int fd;
        const SourceOps *ops;
        SourceParams params;
        SelftestResult selftest;   /* the last open's, params.selftest points here */
        char *path, *sysfs_dir;    /* copies: a reload may free the config's */
        char name[CTL_SOURCE_NAME_MAX + 1];
        uint64_t samples;
        uint32_t rows;
        uint64_t sent;
        atomic_bool done;
        uint8_t buf[CTL_DATA_PREFIX_SIZE + CONTROL_READ_CHUNK];
};

struct Control {
        sd_event *event;
        ControlCallbacks cb;
        char *socket_path;
        dev_t dev;
        ino_t ino;
        int listen_fd;
        sd_event_source *listen_source, *accept_pause;
        LIST_HEAD(, Conn) conns;
        unsigned n_conns;
        LIST_HEAD(, Export) exports;
        unsigned n_exports;
        int stop_fd;
        int done_fd;
        sd_event_source *done_source;
};

static const char *errno_text(int r, char *buf, size_t size) {
        /* GNU strerror_r: thread-safe, returns the text. */
        return strerror_r(r < 0 ? -r : r, buf, size);
}

/* Why a source cannot be opened now that it could at start: the daemon
 * gave up root after set-up, and every export opens after that, so a
 * restart would not help. "" otherwise. */
static const char *open_hint(int r) {
        if ((r != -EACCES && r != -EPERM) || geteuid() == 0)
                return "";
        return " (truerandomd runs without root since set-up: give its user read access)";
}

/* A unix socket closed with unread packets resets its peer, and the reset
 * can overtake the reply still queued there: whatever a client sent beyond
 * its one request is discarded first (bounded, MSG_TRUNC reads nothing). */
static void close_drained(int fd) {
        char c;

        for (unsigned i = 0; i < 64; i++)
                if (recv(fd, &c, sizeof(c), MSG_DONTWAIT | MSG_TRUNC) < 0)
                        break;
        close(fd);
}

/* ---- connections on the loop ------------------------------------------------ */

static void conn_free(Conn *conn) {
        Control *c = conn->control;

        LIST_REMOVE(conn, link);
        c->n_conns--;
        conn->io = sd_event_source_disable_unref(conn->io);
        conn->deadline = sd_event_source_disable_unref(conn->deadline);
        if (conn->fd >= 0)
                close_drained(conn->fd);
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
        char text[CTL_ERROR_TEXT_MAX], msg[CTL_ERROR_TEXT_MAX + 64];
        va_list ap;
        ssize_t n;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        n = ctl_reply_format_error(e, text, msg, sizeof(msg));
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

static int export_start(Conn *conn, const CtlRequest *req, const SourceOps *ops, const SourceParams *params);

static void conn_dispatch(Conn *conn, const CtlRequest *req) {
        Control *c = conn->control;
        const SourceOps *ops = NULL;
        SourceParams params = { 0 };
        _cleanup_free_ char *json = NULL;
        char eb[128];
        int r;

        switch (req->command) {
        case CTL_COMMAND_STATUS:
                r = c->cb.status_json ? c->cb.status_json(c->cb.userdata, &json) : -EOPNOTSUPP;
                if (r < 0) {
                        conn_reply_error(conn, ctl_error_from_errno(r), "status: %s", errno_text(r, eb, sizeof(eb)));
                        return;
                }
                conn_reply_ok(conn, json);
                return;

        case CTL_COMMAND_RESEED:
                if (conn->uid != 0) {
                        conn_reply_error(conn, CTL_ERROR_PERMISSION, "reseed needs root");
                        return;
                }
                r = c->cb.reseed ? c->cb.reseed(c->cb.userdata) : -EOPNOTSUPP;
                if (r == -ENODATA)
                        conn_reply_error(conn, CTL_ERROR_NO_DATA, "the CRNG is not seeded yet");
                else if (r < 0)
                        conn_reply_error(conn, ctl_error_from_errno(r), "reseed: %s", errno_text(r, eb, sizeof(eb)));
                else
                        conn_reply_ok(conn, NULL);
                return;

        case CTL_COMMAND_RAW:
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
                                         errno_text(r, eb, sizeof(eb)));
                else if ((r = export_start(conn, req, ops, &params)) < 0)
                        conn_reply_error(conn, CTL_ERROR_FAILED, "starting the export: %s",
                                         errno_text(r, eb, sizeof(eb)));
                return;

        default:
                abort();
        }
}

static int on_conn_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Conn *conn = userdata;
        uint8_t buf[CTL_REQUEST_MAX];
        const char *reason = NULL;
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
        r = ctl_request_parse(buf, (size_t) n, &req, &reason);
        if (r < 0) {
                conn_reply_error(conn, ctl_error_from_errno(r), "%s", reason ? reason : "malformed request");
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
        close_drained(fd);
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

/* ---- raw exports, one thread each --------------------------------------------- */

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000U + (uint64_t) ts.tv_nsec / 1000000U;
}

/* Waits until the client can take a packet (writable) or timeout_ms passed.
 * 0: writable; -ETIMEDOUT; -ECANCELED: control_free() began; -EPIPE: the
 * client hung up. */
static int export_wait(Export *e, bool writable, int timeout_ms) {
        struct pollfd p[2] = {
                { .fd = e->fd, .events = writable ? POLLOUT : 0 },
                { .fd = e->control->stop_fd, .events = POLLIN },
        };
        int r = poll(p, 2, timeout_ms);

        if (r < 0)
                return errno == EINTR ? -ETIMEDOUT : -errno;
        if (p[1].revents)
                return -ECANCELED;
        if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))
                return -EPIPE;
        if (r == 0 || !(p[0].revents & POLLOUT))
                return -ETIMEDOUT;
        return 0;
}

static int export_send(Export *e, const void *msg, size_t n) {
        for (;;) {
                ssize_t k = send(e->fd, msg, n, MSG_DONTWAIT | MSG_NOSIGNAL);
                int r;

                if (k >= 0)
                        /* A packet goes whole or not at all. */
                        return (size_t) k == n ? 0 : -EIO;
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN)
                        return -errno;
                r = export_wait(e, true, CONTROL_EXPORT_STALL_MS);
                if (r < 0)
                        return r;
        }
}

/* One row: e->samples samples of an open source, as it yields them. Like
 * the collector, the export backs off when the source has nothing now and
 * rides out a few device errors in a row (they are not samples: the
 * stream is the same without them); more, or no progress for the stall
 * limit, end it. */
static int export_row(Export *e, void *state) {
        uint64_t left = e->samples, progress = now_ms();
        int backoff = CONTROL_BACKOFF_MIN_MS;
        unsigned errors = 0;

        while (left > 0) {
                size_t want = (size_t) MIN(left, (uint64_t) CONTROL_READ_CHUNK);
                ssize_t n = e->ops->read(state, e->buf + CTL_DATA_PREFIX_SIZE, want);
                int r;

                if (n < 0 && n != -EAGAIN && n != -ENODATA && ++errors >= CONTROL_EXPORT_ERRORS_MAX)
                        return (int) n;
                if (n == -EAGAIN || (n < 0 && n != -ENODATA)) {
                        if (now_ms() - progress >= CONTROL_EXPORT_STALL_MS)
                                return -ETIMEDOUT;
                        r = export_wait(e, false, backoff);
                        if (r != -ETIMEDOUT)
                                return r < 0 ? r : -EIO;
                        backoff = MIN(backoff * 2, CONTROL_BACKOFF_MAX_MS);
                        continue;
                }
                if (n < 0)
                        return (int) n;
                if (n == 0 || (size_t) n > want)
                        return -EIO;
                backoff = CONTROL_BACKOFF_MIN_MS;
                errors = 0;
                progress = now_ms();
                memcpy(e->buf, CTL_DATA_PREFIX, CTL_DATA_PREFIX_SIZE);
                r = export_send(e, e->buf, CTL_DATA_PREFIX_SIZE + (size_t) n);
                if (r < 0)
                        return r;
                left -= (uint64_t) n;
                e->sent += (uint64_t) n;
                /* Checked between reads: a fast source never waits in poll. */
                r = export_wait(e, false, 0);
                if (r != -ETIMEDOUT)
                        return r < 0 ? r : -EIO;
        }
        return 0;
}

static void export_final_error(Export *e, CtlError code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void export_final_error(Export *e, CtlError code, const char *fmt, ...) {
        char text[CTL_ERROR_TEXT_MAX], msg[CTL_ERROR_TEXT_MAX + 64];
        va_list ap;
        ssize_t n;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        n = ctl_reply_format_error(code, text, msg, sizeof(msg));
        if (n > 0)
                (void) export_send(e, msg, (size_t) n);
}

/* Why an open failed: a failed self-test says which check and its figure. */
static const char *open_error_text(Export *e, int r, char *buf, size_t size) {
        char what[CTL_ERROR_TEXT_MAX];

        if (r != -EDOM || !e->selftest.run || e->selftest.reason == SELFTEST_PASSED)
                return errno_text(r, buf, size);
        snprintf(buf, size, "sampler self-test failed: %s", selftest_describe(&e->selftest, what, sizeof(what)));
        return buf;
}

static void export_run(Export *e) {
        char msg[64], eb[CTL_ERROR_TEXT_MAX];
        void *state = NULL;
        ssize_t n;
        int r;

        r = e->ops->open(&e->params, &state);
        if (r < 0) {
                export_final_error(e, CTL_ERROR_UNAVAILABLE, "cannot open source %s: %s%s", e->name,
                                   open_error_text(e, r, eb, sizeof(eb)), open_hint(r));
                return;
        }
        n = ctl_reply_format_start(e->samples, e->rows, msg, sizeof(msg));
        r = n < 0 ? (int) n : export_send(e, msg, (size_t) n);
        for (uint32_t row = 0; r >= 0 && row < e->rows; row++) {
                /* A restart: the next row starts from a freshly opened
                 * source, as ea_restart's rows must. */
                if (row > 0) {
                        e->ops->close(state);
                        state = NULL;
                        r = e->ops->open(&e->params, &state);
                        if (r < 0) {
                                export_final_error(e, CTL_ERROR_UNAVAILABLE, "reopening source %s for row %u: %s%s",
                                                   e->name, row + 1, open_error_text(e, r, eb, sizeof(eb)),
                                                   open_hint(r));
                                return;
                        }
                }
                r = export_row(e, state);
        }
        if (state)
                e->ops->close(state);

        switch (r) {
        case 0:
                n = ctl_reply_format(CTL_REPLY_OK, NULL, 0, msg, sizeof(msg));
                if (n > 0)
                        (void) export_send(e, msg, (size_t) n);
                break;
        case -EPIPE:
        case -ECONNRESET:
                break; /* nobody left to tell */
        case -ECANCELED:
                export_final_error(e, CTL_ERROR_FAILED, "truerandomd is stopping");
                break;
        case -ENODATA:
                export_final_error(e, CTL_ERROR_NO_DATA, "source %s ended after %llu samples", e->name,
                                   (unsigned long long) e->sent);
                break;
        case -ETIMEDOUT:
                export_final_error(e, CTL_ERROR_TIMEOUT, "no progress for %d s", CONTROL_EXPORT_STALL_MS / 1000);
                break;
        default:
                export_final_error(e, CTL_ERROR_FAILED, "reading source %s: %s", e->name,
                                   errno_text(r, eb, sizeof(eb)));
                break;
        }
}

static void *export_thread(void *userdata) {
        Export *e = userdata;
        uint64_t one = 1;

        export_run(e);
        /* Closed here, not at the join: the client sees the end at once. */
        close_drained(e->fd);
        e->fd = -1;
        atomic_store(&e->done, true);
        (void) !write(e->control->done_fd, &one, sizeof(one));
        return NULL;
}

static void export_free(Export *e) {
        if (e->fd >= 0)
                close(e->fd);
        free(e->path);
        free(e->sysfs_dir);
        free(e);
}

static int export_start(Conn *conn, const CtlRequest *req, const SourceOps *ops, const SourceParams *params) {
        Control *c = conn->control;
        sigset_t all, old;
        Export *e;
        int r;

        if (!ops || !ops->open || !ops->read || !ops->close)
                return -EINVAL;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->control = c;
        e->fd = -1;
        e->ops = ops;
        e->params = *params;
        e->samples = req->samples;
        e->rows = req->rows;
        snprintf(e->name, sizeof(e->name), "%s", req->source);
        e->path = params->path ? strdup(params->path) : NULL;
        e->sysfs_dir = params->sysfs_dir ? strdup(params->sysfs_dir) : NULL;
        if ((params->path && !e->path) || (params->sysfs_dir && !e->sysfs_dir)) {
                export_free(e);
                return -ENOMEM;
        }
        e->params.path = e->path;
        e->params.sysfs_dir = e->sysfs_dir;
        e->params.selftest = &e->selftest;

        /* The loop lets go of the connection before the thread takes it. */
        conn->io = sd_event_source_disable_unref(conn->io);
        conn->deadline = sd_event_source_disable_unref(conn->deadline);
        e->fd = conn->fd;

        /* Signals belong to the loop thread (signalfd). */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = -pthread_create(&e->thread, NULL, export_thread, e);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r < 0) {
                e->fd = -1;
                export_free(e);
                /* The caller answers on the connection, which has no io
                 * source now: conn_reply() sends directly or gives up. */
                return r;
        }
        conn->fd = -1;
        conn_free(conn);
        LIST_INSERT_HEAD(&c->exports, e, link);
        c->n_exports++;
        return 0;
}

static void join_exports(Control *c, bool all) {
        for (Export *e = LIST_FIRST(&c->exports), *next; e; e = next) {
                next = LIST_NEXT(e, link);
                if (!all && !atomic_load(&e->done))
                        continue;
                pthread_join(e->thread, NULL);
                LIST_REMOVE(e, link);
                c->n_exports--;
                export_free(e);
        }
}

static int on_export_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Control *c = userdata;
        uint64_t n;

        (void) !read(fd, &n, sizeof(n));
        join_exports(c, false);
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
        join_exports(c, true);
        while (!LIST_EMPTY(&c->conns))
                conn_free(LIST_FIRST(&c->conns));
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
