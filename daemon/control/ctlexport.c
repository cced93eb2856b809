/* ctlexport.c - raw exports: `truerandomctl raw` streams a source's
 * samples from a thread of its own, one per export, at most
 * CONTROL_MAX_EXPORTS at once.
 *
 * Invariants: an export thread owns only its connection fd and its own
 * source instance, and talks back through two eventfds (stop: readable once
 * control_free() began; done: it finished and can be joined). Its samples
 * come from an instance that feeds nothing, so they are no secret and are
 * not erased. It sends at most one final reply, then closes.
 * Flow: truerandomctl -> socket -> control -> [export] -> a source. */
#include "control-internal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"

/* Why a source cannot be opened now that it could at start: the daemon
 * gave up root after set-up, and every export opens after that, so a
 * restart would not help. "" otherwise. */
static const char *open_hint(int r) {
        if ((r != -EACCES && r != -EPERM) || geteuid() == 0)
                return "";
        return " (truerandomd runs without root since set-up: give its user read access)";
}

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
        char msg[CONTROL_ERROR_MSG_MAX];
        va_list ap;
        ssize_t n;

        va_start(ap, fmt);
        n = control_format_error(code, msg, fmt, ap);
        va_end(ap);
        if (n > 0)
                (void) export_send(e, msg, (size_t) n);
}

/* Why an open failed: a failed self-test says which check and its figure. */
static const char *open_error_text(Export *e, int r, char *buf, size_t size) {
        char what[CTL_ERROR_TEXT_MAX];

        if (r != -EDOM || !e->selftest.run || e->selftest.reason == SELFTEST_PASSED)
                return control_errno_text(r, buf, size);
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
                                   control_errno_text(r, eb, sizeof(eb)));
                break;
        }
}

static void *export_thread(void *userdata) {
        Export *e = userdata;
        uint64_t one = 1;

        export_run(e);
        /* Closed here, not at the join: the client sees the end at once. */
        control_close_drained(e->fd);
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

int control_export_start(Conn *conn, const CtlRequest *req, const SourceOps *ops, const SourceParams *params) {
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
        e->rows = (uint32_t) req->rows;
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
        control_conn_free(conn);
        LIST_INSERT_HEAD(&c->exports, e, link);
        c->n_exports++;
        return 0;
}

void control_join_exports(Control *c, bool all) {
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
