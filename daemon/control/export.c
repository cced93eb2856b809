/* export.c - raw exports, one thread each (see export.h).
 * Flow: control -> [export] -> capture -> a source; samples -> socket. */
#include "export.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "control.h"
#include "pool/capture.h"
#include "proto/ctlproto.h"
#include "reply.h"
#include "util/cleanup.h"

struct Export {
        Exports *exports;
        LIST_ENTRY(Export) link;
        pthread_t thread;
        int fd;
        const SourceOps *ops;      /* the source's own */
        SourceOps counted;         /* the same, its open() through export_open() */
        SourceParams params;
        SelftestResult selftest;   /* the last open's, params.selftest points here */
        char *path, *sysfs_dir;    /* copies: a reload may free the config's */
        char name[CTL_SOURCE_NAME_MAX + 1];
        uint64_t samples;
        uint32_t rows;
        uint64_t sent;
        unsigned opens;            /* of the source, one per row so far */
        int open_error;            /* why the last open failed, 0 if it did not */
        atomic_bool done;
};

/* Why a source cannot be opened now that it could at start: the daemon
 * gave up root after set-up, and every export opens after that, so a
 * restart would not help. "" otherwise. */
static const char *open_hint(int r) {
        if ((r != -EACCES && r != -EPERM) || geteuid() == 0)
                return "";
        return " (truerandomd runs without root since set-up: give its user read access)";
}

/* Waits until the client can take a packet (writable) or timeout passed.
 * 0: writable; -ETIMEDOUT; -ECANCELED: the daemon is stopping; -EPIPE:
 * the client hung up. */
static int export_wait(Export *e, bool writable, usec_t timeout) {
        struct pollfd p[2] = {
                { .fd = e->fd, .events = writable ? POLLOUT : 0 },
                { .fd = e->exports->stop_fd, .events = POLLIN },
        };
        int r = poll(p, 2, (int) (timeout / USEC_PER_MSEC));

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

/* One packet, of the iovecs' bytes, waiting for room as long as a client
 * may stall. */
static int export_sendmsg(Export *e, struct iovec *iov, size_t n_iov) {
        struct msghdr m = { .msg_iov = iov, .msg_iovlen = n_iov };
        size_t size = 0;

        for (size_t i = 0; i < n_iov; i++)
                size += iov[i].iov_len;
        for (;;) {
                ssize_t k = sendmsg(e->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
                int r;

                if (k >= 0)
                        /* A packet goes whole or not at all. */
                        return (size_t) k == size ? 0 : -EIO;
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN)
                        return -errno;
                r = export_wait(e, true, CONTROL_EXPORT_STALL_USEC);
                if (r < 0)
                        return r;
        }
}

static int export_send(Export *e, const void *msg, size_t n) {
        return export_sendmsg(e, &(struct iovec){ .iov_base = (void *) msg, .iov_len = n }, 1);
}

/* A "data" packet straight from the capture's buffer. */
static int export_send_data(Export *e, const uint8_t *samples, size_t n) {
        struct iovec iov[2] = {
                { .iov_base = (void *) CTL_DATA_PREFIX, .iov_len = CTL_DATA_PREFIX_SIZE },
                { .iov_base = (void *) samples, .iov_len = n },
        };

        return export_sendmsg(e, iov, 2);
}

static void export_final_error(Export *e, CtlError code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void export_final_error(Export *e, CtlError code, const char *fmt, ...) {
        char msg[CONTROL_ERROR_MSG_MAX];
        va_list ap;
        ssize_t n;

        va_start(ap, fmt);
        n = control_format_error(code, msg, fmt, ap);
        va_end(ap);
        if (n > 0)
                (void) export_send(e, msg, (size_t) n);
}

/* ---- the capture ------------------------------------------------------------ */

/* The export this thread runs: capture_run() calls the source on the
 * thread that called it. */
static _Thread_local Export *thread_export;

/* capture_run() opens the source before each row through this. The first
 * open that succeeds is when "start" goes out (an export whose source
 * cannot be opened answers with the error alone), and an open that fails
 * is told from a read that does: it has its own answer, naming the row. */
static int export_open(const SourceParams *params, void **ret_state) {
        Export *e = thread_export;
        char msg[64];
        ssize_t n;
        int r;

        e->opens++;
        r = e->ops->open(params, ret_state);
        if (r < 0) {
                e->open_error = r;
                return r;
        }
        if (e->opens > 1)
                return 0;
        n = ctl_reply_format_start(e->samples, e->rows, msg, sizeof(msg));
        r = n < 0 ? (int) n : export_send(e, msg, (size_t) n);
        if (r < 0)
                e->ops->close(*ret_state);
        return r;
}

/* The capture's sink: each chunk as a "data" packet. After every chunk
 * and every backoff, a stop or a client gone ends the capture at once; a
 * fast source never waits in poll here. */
static int export_sink(void *userdata, const uint8_t *samples, size_t n, uint64_t done, uint64_t total) {
        Export *e = userdata;
        int r;

        if (n > 0) {
                r = export_send_data(e, samples, n);
                if (r < 0)
                        return r;
                e->sent = done;
        }
        r = export_wait(e, false, 0);
        if (r != -ETIMEDOUT)
                return r < 0 ? r : -EIO;
        return 0;
}

/* Why an open failed: a failed self-test says which check and its figure. */
static const char *open_error_text(Export *e, char *buf, size_t size) {
        char what[CTL_ERROR_TEXT_MAX];

        if (e->open_error != -EDOM || !e->selftest.run || e->selftest.reason == SELFTEST_PASSED)
                return control_errno_text(e->open_error, buf, size);
        snprintf(buf, size, "sampler self-test failed: %s", selftest_describe(&e->selftest, what, sizeof(what)));
        return buf;
}

/* The final reply to how the capture ended. */
static void export_finish(Export *e, int r) {
        char eb[CTL_ERROR_TEXT_MAX], ok[8];
        ssize_t n;

        if (e->open_error != 0 && e->opens == 1) {
                export_final_error(e, CTL_ERROR_UNAVAILABLE, "cannot open source %s: %s%s", e->name,
                                   open_error_text(e, eb, sizeof(eb)), open_hint(e->open_error));
                return;
        }
        if (e->open_error != 0) {
                /* A restart: each row starts from a freshly opened source. */
                export_final_error(e, CTL_ERROR_UNAVAILABLE, "reopening source %s for row %u: %s%s", e->name,
                                   e->opens, open_error_text(e, eb, sizeof(eb)), open_hint(e->open_error));
                return;
        }
        switch (r) {
        case 0:
                n = ctl_reply_format(CTL_REPLY_OK, NULL, 0, ok, sizeof(ok));
                if (n > 0)
                        (void) export_send(e, ok, (size_t) n);
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
                /* The source's stall (capture.h) and the client's are both a minute. */
                export_final_error(e, CTL_ERROR_TIMEOUT, "no progress for %u s",
                                   (unsigned) (CONTROL_EXPORT_STALL_USEC / USEC_PER_SEC));
                break;
        default:
                export_final_error(e, CTL_ERROR_FAILED, "reading source %s: %s", e->name,
                                   control_errno_text(r, eb, sizeof(eb)));
                break;
        }
}

static void *export_thread(void *userdata) {
        Export *e = userdata;
        uint64_t one = 1;
        int r;

        thread_export = e;
        e->counted = *e->ops;
        e->counted.open = export_open;
        r = capture_run(&e->counted, &e->params, e->samples, e->rows, export_sink, e);
        export_finish(e, r);
        /* Closed here, not at the join: the client sees the end at once. */
        control_close_drained(e->fd);
        e->fd = -1;
        atomic_store(&e->done, true);
        (void) !write(e->exports->done_fd, &one, sizeof(one));
        return NULL;
}

/* ---- the set of exports, on the loop -------------------------------------------- */

static Export *export_free(Export *e) {
        if (!e)
                return NULL;
        free(e->path);
        free(e->sysfs_dir);
        free(e);
        return NULL;
}
DEFINE_FREEP(Export, export_free);

static int export_new(Exports *x, const ExportSpec *spec, Export **ret) {
        _cleanup_(export_freep) Export *e = NULL;
        const SourceParams *p = &spec->params;

        if (!spec->ops || !spec->ops->open || !spec->ops->read || !spec->ops->close)
                return -EINVAL;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        *e = (Export){ .exports = x, .fd = -1, .ops = spec->ops, .params = *p, .samples = spec->samples,
                       .rows = spec->rows };
        snprintf(e->name, sizeof(e->name), "%s", spec->source);
        e->path = p->path ? strdup(p->path) : NULL;
        e->sysfs_dir = p->sysfs_dir ? strdup(p->sysfs_dir) : NULL;
        if ((p->path && !e->path) || (p->sysfs_dir && !e->sysfs_dir))
                return -ENOMEM;
        e->params.path = e->path;
        e->params.sysfs_dir = e->sysfs_dir;
        e->params.selftest = &e->selftest;
        *ret = e;
        e = NULL;
        return 0;
}

int exports_start(Exports *x, int fd, const ExportSpec *spec) {
        _cleanup_(export_freep) Export *e = NULL;
        sigset_t all, old;
        int r;

        r = export_new(x, spec, &e);
        if (r < 0)
                return r;
        e->fd = fd;
        /* Signals belong to the loop thread (signalfd). */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = -pthread_create(&e->thread, NULL, export_thread, e);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r < 0)
                return r;
        LIST_INSERT_HEAD(&x->list, e, link);
        x->n++;
        e = NULL;
        return 0;
}

static void exports_join_some(Exports *x, bool all) {
        for (Export *e = LIST_FIRST(&x->list), *next; e; e = next) {
                next = LIST_NEXT(e, link);
                if (!all && !atomic_load(&e->done))
                        continue;
                pthread_join(e->thread, NULL);
                LIST_REMOVE(e, link);
                x->n--;
                export_free(e);
        }
}

void exports_join(Exports *x) {
        uint64_t n;

        (void) !read(x->done_fd, &n, sizeof(n));
        exports_join_some(x, false);
}

int exports_init(Exports *x) {
        *x = (Exports){ .stop_fd = -1, .done_fd = -1 };
        LIST_INIT(&x->list);
        x->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        x->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (x->stop_fd < 0 || x->done_fd < 0)
                return -errno;
        return 0;
}

void exports_deinit(Exports *x) {
        uint64_t one = 1;

        if (x->stop_fd >= 0)
                (void) !write(x->stop_fd, &one, sizeof(one));
        exports_join_some(x, true);
        if (x->stop_fd >= 0)
                close(x->stop_fd);
        if (x->done_fd >= 0)
                close(x->done_fd);
        x->stop_fd = x->done_fd = -1;
}
