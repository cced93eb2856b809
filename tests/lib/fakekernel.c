/* fakekernel.c - the kernel's side of CUSE over a socketpair (see fakekernel.h).
 *
 * Requests travel to the daemon as SOCK_SEQPACKET datagrams. Replies take a
 * shortcut back: the daemon's writev (fk_daemon_io) finds the FakeKernel by
 * the identity of its socket and delivers the message under one global lock,
 * checking it as fuse_dev_do_write() would. So a daemon write is finished,
 * and fails with the kernel's errno, before the daemon's next line runs; the
 * kernel handles the CUSE_INIT reply inside that write too, and a daemon's
 * init_done relies on it. Messages written to the socket directly are
 * picked up as well (the plain path), without the errno.
 *
 * Invariants: a request the daemon may answer is in `pending` from just
 * before it is sent until its one reply; uniques are even and grow by 2;
 * once `gone`, every pending request has ended with -ECONNABORTED and no
 * request is sent. Everything shared with the daemon's thread is under
 * fk_lock; the test thread never holds it while it waits or sends.
 * Flow: test -> [fakekernel] -> socketpair -> libfuse -> daemon handlers. */
#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/ioctl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/param.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fakekernel.h"

/* fs/fuse: requests carry at most this many pages (FUSE_DEFAULT_MAX_PAGES_PER_REQ;
 * CUSE never negotiates more), which bounds read/write chunks and ioctl data. */
#define FK_MAX_PAGES 32U
/* The kernel loops on FUSE_IOCTL_RETRY for as long as the daemon asks; a
 * test would hang, so the fake gives up (and counts it) after this many. */
#define FK_IOCTL_MAX_ROUNDS 16U
/* fs/fuse/dev.c rejects reply errors at or below -ERESTARTSYS. */
#define FK_ERRNO_LIMIT 512
/* fs/fuse/file.c: what poll returns for a daemon without poll support. */
#define FK_DEFAULT_POLLMASK (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM)

typedef struct Msg {
        struct Msg *next;
        FkMsgKind kind;
        uint64_t unique;
        uint32_t opcode;
        int32_t error;
        const uint8_t *payload;
        size_t len;
        size_t raw_len;
        uint8_t raw[];
} Msg;

/* A request waiting for its reply, and the reply sizes the kernel accepts
 * (its out args: all of them, or fewer bytes in the last when it is var). */
typedef struct Pending {
        uint64_t unique;
        uint32_t opcode;
        size_t min;
        size_t max;
        /* Sent while the caller had a caught signal pending: the INTERRUPT
         * goes out as the daemon reads the request (FR_INTERRUPTED). */
        bool interrupted;
} Pending;

typedef struct Wakeup {
        uint64_t kh;
        unsigned count;
} Wakeup;

struct FakeKernel {
        FakeKernel *next;       /* fk_list */
        int fd;                 /* the kernel's end */
        int wake_fd;            /* eventfd: something was queued */
        bool keyed;             /* peer_dev/peer_ino name the daemon's live end */
        dev_t peer_dev;
        ino_t peer_ino;
        size_t page_size;
        int timeout_ms;
        uint64_t last_unique;
        uint64_t last_kh;

        Pending *pending;
        size_t n_pending, max_pending;
        Msg *head, **tail;
        Msg *current;           /* handed to the test; freed on the next take */
        Wakeup *wakeups;
        size_t n_wakeups, max_wakeups;
        uint64_t *requeue;      /* INTERRUPTs the daemon answered EAGAIN */
        size_t n_requeue, max_requeue;

        bool gone;
        bool signal_pending;    /* the caller has a caught signal pending */
        bool no_interrupt;
        bool no_poll;
        bool initialized;
        int init_error;
        FkInit init;
        unsigned violations;
        char violation[256];
        char violation_seen[256]; /* the test thread's copy of violation */
};

static pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
static FakeKernel *fk_list;

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

static int grow(void **array, size_t *max, size_t need, size_t size) {
        size_t n;
        void *p;

        if (need <= *max)
                return 0;
        n = MAX(need, *max * 2 + 8);
        p = reallocarray(*array, n, size);
        if (!p)
                return -ENOMEM;
        *array = p;
        *max = n;
        return 0;
}

static const char *opcode_name(uint32_t opcode) {
        switch (opcode) {
        case CUSE_INIT: return "CUSE_INIT";
        case FUSE_OPEN: return "OPEN";
        case FUSE_READ: return "READ";
        case FUSE_WRITE: return "WRITE";
        case FUSE_RELEASE: return "RELEASE";
        case FUSE_IOCTL: return "IOCTL";
        case FUSE_POLL: return "POLL";
        case FUSE_INTERRUPT: return "INTERRUPT";
        default: return "request";
        }
}

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline (UINT64_MAX: none) as poll() wants them. */
static int remaining_ms(uint64_t deadline) {
        uint64_t now;

        if (deadline == UINT64_MAX)
                return -1;
        now = now_ms();
        return now >= deadline ? 0 : (int) MIN(deadline - now, (uint64_t) INT32_MAX);
}

static uint64_t deadline_of(int timeout_ms) {
        return timeout_ms < 0 ? UINT64_MAX : now_ms() + (uint64_t) timeout_ms;
}

/* open(2) keeps neither O_CLOEXEC nor the creation flags in f_flags, adds
 * O_LARGEFILE on 64-bit, and FUSE forwards the rest (O_TRUNC too is dropped:
 * CUSE has no atomic_o_trunc). */
static uint32_t file_flags(int flags) {
        flags &= ~(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC);
        return (uint32_t) flags | FK_O_LARGEFILE;
}

/* fuse_lock_owner_id() hashes the caller's files_struct: an opaque value
 * that is the same for every request of one process. */
static uint64_t lock_owner(const FkCaller *caller) {
        return ((uint64_t) caller->pid + 1) * UINT64_C(0x9e3779b97f4a7c15);
}

FkCaller fk_caller_self(void) {
        return (FkCaller) {
                .uid = (uint32_t) getuid(),
                .gid = (uint32_t) getgid(),
                .pid = (uint32_t) getpid(),
        };
}

static FkCaller caller_or_self(const FkCaller *caller) {
        return caller ? *caller : fk_caller_self();
}

/* ------------------------------------------------------------------ */
/* state shared with the daemon's thread (fk_lock held)                */

__attribute__((format(printf, 3, 4)))
static int violation_locked(FakeKernel *fk, int error, const char *fmt, ...) {
        va_list ap;

        fk->violations++;
        va_start(ap, fmt);
        vsnprintf(fk->violation, sizeof(fk->violation), fmt, ap);
        va_end(ap);
        return error;
}

static void wake(FakeKernel *fk) {
        /* Cannot fail short of overflowing a 64-bit counter nobody reads. */
        (void) eventfd_write(fk->wake_fd, 1);
}

static Msg *msg_new(size_t raw_len) {
        Msg *m = calloc(1, sizeof(Msg) + raw_len);

        if (m)
                m->raw_len = raw_len;
        return m;
}

static void enqueue_locked(FakeKernel *fk, Msg *m) {
        m->next = NULL;
        *fk->tail = m;
        fk->tail = &m->next;
        wake(fk);
}

static void unlink_locked(FakeKernel *fk, Msg **link) {
        Msg *m = *link;

        *link = m->next;
        if (fk->tail == &m->next)
                fk->tail = link;
}

static Pending *pending_find_locked(FakeKernel *fk, uint64_t unique) {
        for (size_t i = 0; i < fk->n_pending; i++)
                if (fk->pending[i].unique == unique)
                        return &fk->pending[i];
        return NULL;
}

static void pending_drop_locked(FakeKernel *fk, Pending *p) {
        *p = fk->pending[--fk->n_pending];
}

/* fuse_abort_conn() / the daemon closing /dev/cuse: whoever still waits
 * gets ECONNABORTED, the device name is free again. */
static void mark_gone_locked(FakeKernel *fk) {
        if (fk->gone)
                return;
        fk->gone = true;
        fk->keyed = false;
        for (size_t i = 0; i < fk->n_pending; i++) {
                Msg *m = msg_new(0);

                /* Out of memory here leaves that waiter to its timeout. */
                if (!m)
                        continue;
                m->kind = FK_MSG_REPLY;
                m->unique = fk->pending[i].unique;
                m->opcode = fk->pending[i].opcode;
                m->error = -ECONNABORTED;
                enqueue_locked(fk, m);
        }
        fk->n_pending = 0;
        fk->n_requeue = 0;
        wake(fk);
}

static void abort_locked(FakeKernel *fk) {
        mark_gone_locked(fk);
        shutdown(fk->fd, SHUT_RDWR);
}

/* A fake whose daemon closed its end without the test noticing yet still
 * looks alive; its name must not block a restarted daemon. */
static bool alive_locked(FakeKernel *fk) {
        struct pollfd p = { .fd = fk->fd, .events = POLLIN };

        if (!fk->gone && poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
                mark_gone_locked(fk);
        return !fk->gone;
}

/* cuse_parse_devinfo(): NUL-separated "KEY=VALUE" strings, blanks around
 * both stripped, unknown keys ignored, DEVNAME required and non-empty. */
static int parse_devinfo(const char *p, size_t len, char *name, size_t name_size) {
        const char *end = p + len;
        bool have_name = false;

        while (p < end) {
                const char *entry, *eq, *key_end, *val, *val_end;

                while (p < end && *p == '\0')
                        p++;
                if (p == end)
                        break;
                if (end[-1] != '\0')
                        return -EINVAL;
                entry = p;
                p += strlen(p);
                eq = memchr(entry, '=', (size_t) (p - entry));
                key_end = eq ? eq : p;
                val = eq ? eq + 1 : p;
                val_end = p;
                while (entry < key_end && (*entry == ' ' || *entry == '\t' || *entry == '\n'))
                        entry++;
                while (key_end > entry && (key_end[-1] == ' ' || key_end[-1] == '\t' ||
                                           key_end[-1] == '\n'))
                        key_end--;
                while (val < val_end && (*val == ' ' || *val == '\t' || *val == '\n'))
                        val++;
                while (val_end > val && (val_end[-1] == ' ' || val_end[-1] == '\t' ||
                                         val_end[-1] == '\n'))
                        val_end--;
                if (key_end == entry)
                        return -EINVAL;
                if ((size_t) (key_end - entry) == strlen("DEVNAME") &&
                    memcmp(entry, "DEVNAME", strlen("DEVNAME")) == 0) {
                        if ((size_t) (val_end - val) >= name_size)
                                return -EINVAL;
                        memcpy(name, val, (size_t) (val_end - val));
                        name[val_end - val] = '\0';
                        have_name = true;
                }
        }
        return have_name && name[0] ? 0 : -EINVAL;
}

/* cuse_process_init_reply(): runs inside the daemon's write, like the
 * kernel's request end callback, so init_done already sees the outcome. */
static void init_reply_locked(FakeKernel *fk, const Msg *m) {
        const struct cuse_init_out *out = (const void *) m->payload;
        FkInit init = { 0 };
        int r = m->error;

        if (r == 0 && (out->major != FUSE_KERNEL_VERSION || out->minor < 11))
                r = -EPROTO;
        if (r == 0) {
                init = (FkInit) {
                        .major = out->major,
                        .minor = out->minor,
                        .flags = out->flags,
                        .max_read = out->max_read,
                        .max_write = out->max_write,
                        .dev_major = out->dev_major,
                        .dev_minor = out->dev_minor,
                        .devinfo_len = m->len - sizeof(*out),
                };
                memcpy(init.devinfo, m->payload + sizeof(*out), init.devinfo_len);
                r = parse_devinfo(init.devinfo, init.devinfo_len, init.devname,
                                  sizeof(init.devname));
        }
        for (FakeKernel *o = fk_list; r == 0 && o; o = o->next)
                if (o != fk && o->initialized && alive_locked(o) &&
                    strcmp(o->init.devname, init.devname) == 0)
                        r = -EEXIST;
        if (r < 0) {
                fk->init_error = r;
                abort_locked(fk);
                return;
        }
        fk->init = init;
        fk->initialized = true;
}

static int deliver_notify_locked(FakeKernel *fk, Msg *m) {
        struct fuse_notify_poll_wakeup_out w;
        Wakeup *slot = NULL;
        int r;

        if (m->error != FUSE_NOTIFY_POLL)
                r = violation_locked(fk, -EINVAL, "notification %d means nothing to a CUSE device",
                                     m->error);
        else if (m->len != sizeof(w))
                r = violation_locked(fk, -EINVAL, "FUSE_NOTIFY_POLL of %zu bytes", m->len);
        else
                r = 0;
        if (r < 0) {
                free(m);
                return r;
        }
        memcpy(&w, m->payload, sizeof(w));
        for (size_t i = 0; i < fk->n_wakeups; i++)
                if (fk->wakeups[i].kh == w.kh)
                        slot = &fk->wakeups[i];
        if (!slot) {
                r = grow((void **) &fk->wakeups, &fk->max_wakeups, fk->n_wakeups + 1,
                         sizeof(Wakeup));
                if (r < 0) {
                        free(m);
                        return r;
                }
                slot = &fk->wakeups[fk->n_wakeups++];
                *slot = (Wakeup) { .kh = w.kh };
        }
        slot->count++;
        m->kind = FK_MSG_NOTIFY;
        enqueue_locked(fk, m);
        return 0;
}

static int deliver_interrupt_reply_locked(FakeKernel *fk, Msg *m) {
        uint64_t target = m->unique & ~(uint64_t) 1;

        if (m->len != 0) {
                int r = violation_locked(fk, -EINVAL, "reply to INTERRUPT %" PRIu64
                                         " carries %zu bytes", m->unique, m->len);

                free(m);
                return r;
        }
        /* The target already got its reply: the kernel ignores this. */
        if (!pending_find_locked(fk, target)) {
                free(m);
                return -ENOENT;
        }
        if (m->error == -ENOSYS)
                fk->no_interrupt = true;
        else if (m->error == -EAGAIN &&
                 grow((void **) &fk->requeue, &fk->max_requeue, fk->n_requeue + 1,
                      sizeof(uint64_t)) == 0)
                fk->requeue[fk->n_requeue++] = target;
        m->kind = FK_MSG_INTERRUPT_REPLY;
        m->opcode = FUSE_INTERRUPT;
        enqueue_locked(fk, m);
        return 0;
}

/* fuse_dev_do_write(): takes m; 0 or the errno the daemon's write gets. */
static int deliver_locked(FakeKernel *fk, Msg *m) {
        struct fuse_out_header oh;
        Pending *p, req;
        int r = 0;

        if (m->raw_len < sizeof(oh))
                r = violation_locked(fk, -EINVAL, "message of %zu bytes", m->raw_len);
        else {
                memcpy(&oh, m->raw, sizeof(oh));
                if (oh.len != m->raw_len)
                        r = violation_locked(fk, -EINVAL, "message of %zu bytes says it has %u",
                                             m->raw_len, oh.len);
        }
        if (r < 0) {
                free(m);
                return r;
        }
        m->unique = oh.unique;
        m->error = oh.error;
        m->payload = m->raw + sizeof(oh);
        m->len = m->raw_len - sizeof(oh);
        if (fk->gone) {
                /* Nothing waits on an aborted connection; not the daemon's fault. */
                free(m);
                return -ENOENT;
        }
        if (oh.unique == 0)
                return deliver_notify_locked(fk, m);
        if (oh.error <= -FK_ERRNO_LIMIT || oh.error > 0) {
                free(m);
                return violation_locked(fk, -EINVAL, "reply to %" PRIu64 " with error %d",
                                        oh.unique, oh.error);
        }
        if (oh.unique & 1)
                return deliver_interrupt_reply_locked(fk, m);

        p = pending_find_locked(fk, oh.unique);
        if (!p) {
                free(m);
                return violation_locked(fk, -ENOENT, "reply to %" PRIu64
                                        ", which waits for nothing (a second reply?)",
                                        oh.unique);
        }
        req = *p;
        pending_drop_locked(fk, p);
        m->kind = FK_MSG_REPLY;
        m->opcode = req.opcode;
        if (m->error != 0 && m->len != 0)
                r = violation_locked(fk, -EINVAL, "%s error reply %d carries %zu bytes",
                                     opcode_name(req.opcode), m->error, m->len);
        else if (m->error == 0 && (m->len < req.min || m->len > req.max))
                r = violation_locked(fk, -EINVAL, "%s reply of %zu bytes, %zu..%zu allowed",
                                     opcode_name(req.opcode), m->len, req.min, req.max);
        if (r < 0) {
                /* The request ends with -EIO; the daemon's write fails. */
                m->error = -EIO;
                m->len = 0;
        }
        enqueue_locked(fk, m);
        if (req.opcode == CUSE_INIT)
                init_reply_locked(fk, m);
        return r;
}

/* ------------------------------------------------------------------ */
/* the daemon's transport                                              */

static FakeKernel *find_by_fd_locked(int fd) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return NULL;
        for (FakeKernel *fk = fk_list; fk; fk = fk->next)
                if (fk->keyed && fk->peer_dev == st.st_dev && fk->peer_ino == st.st_ino)
                        return fk;
        return NULL;
}

/* fuse_dev_do_read(): a request whose caller had a signal pending when it
 * was sent (FR_INTERRUPTED) gets its INTERRUPT queued as the daemon takes
 * the request, so the daemon finds it next, before it reads anything else
 * it has not read yet. Called on the daemon's thread with the request it
 * just read. */
static void interrupt_on_read(int fd, const void *buf, size_t len) {
        struct fuse_in_header h, ih;
        struct fuse_interrupt_in in;
        struct iovec iov[2];
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
        FakeKernel *fk;
        Pending *p;

        if (len < sizeof(h))
                return;
        memcpy(&h, buf, sizeof(h));
        if (h.opcode == FUSE_INTERRUPT)
                return;
        pthread_mutex_lock(&fk_lock);
        fk = find_by_fd_locked(fd);
        p = fk && !fk->no_interrupt ? pending_find_locked(fk, h.unique) : NULL;
        if (p && p->interrupted) {
                p->interrupted = false;
                ih = (struct fuse_in_header) {
                        .len = sizeof(ih) + sizeof(in),
                        .opcode = FUSE_INTERRUPT,
                        .unique = h.unique | 1,
                };
                in = (struct fuse_interrupt_in) { .unique = h.unique };
                iov[0] = (struct iovec) { .iov_base = &ih, .iov_len = sizeof(ih) };
                iov[1] = (struct iovec) { .iov_base = &in, .iov_len = sizeof(in) };
                if (sendmsg(fk->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
                        violation_locked(fk, -errno, "INTERRUPT for %" PRIu64 " could not be queued",
                                         h.unique);
        }
        pthread_mutex_unlock(&fk_lock);
}

/* libfuse's custom io contract is read(2)/writev(2)'s: -1 and errno. */
static ssize_t daemon_read(int fd, void *buf, size_t len, void *userdata) {
        struct iovec iov = { .iov_base = buf, .iov_len = len };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t n;

        /* fuse_dev_do_read() refuses buffers that could not hold a request. */
        if (len < FUSE_MIN_READ_BUFFER) {
                errno = EINVAL;
                return -1;
        }
        n = recvmsg(fd, &mh, MSG_DONTWAIT);
        if (n < 0) {
                if (errno == ECONNRESET)
                        errno = ENODEV;
                return -1;
        }
        /* End of stream: the kernel side is gone, which is libfuse's unmount. */
        if (n == 0) {
                errno = ENODEV;
                return -1;
        }
        if (mh.msg_flags & MSG_TRUNC) {
                errno = EIO;
                return -1;
        }
        interrupt_on_read(fd, buf, (size_t) n);
        return n;
}

static ssize_t send_plain(int fd, struct iovec *iov, int count) {
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t) count };

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

                if (n >= 0)
                        return n;
                if (errno == EPIPE || errno == ECONNRESET) {
                        /* What writing to an aborted connection gives. */
                        errno = ENOENT;
                        return -1;
                }
                if (errno != EAGAIN && errno != EINTR)
                        return -1;
                if (poll(&p, 1, -1) < 0 && errno != EINTR)
                        return -1;
        }
}

static ssize_t daemon_writev(int fd, struct iovec *iov, int count, void *userdata) {
        FakeKernel *fk;
        size_t len = 0, off = 0;
        Msg *m;
        int r = 0;

        for (int i = 0; i < count; i++)
                len += iov[i].iov_len;
        m = msg_new(len);
        if (!m) {
                errno = ENOMEM;
                return -1;
        }
        for (int i = 0; i < count; i++) {
                if (iov[i].iov_len > 0)
                        memcpy(m->raw + off, iov[i].iov_base, iov[i].iov_len);
                off += iov[i].iov_len;
        }

        pthread_mutex_lock(&fk_lock);
        fk = find_by_fd_locked(fd);
        if (fk)
                r = deliver_locked(fk, m);
        pthread_mutex_unlock(&fk_lock);

        if (!fk) {
                free(m);
                return send_plain(fd, iov, count);
        }
        if (r < 0) {
                errno = -r;
                return -1;
        }
        return (ssize_t) len;
}

const struct fuse_custom_io fk_daemon_io = {
        .read = daemon_read,
        .writev = daemon_writev,
};

int fk_session_attach(struct fuse_session *se, int daemon_fd) {
        int r;

        /* The one place that knows libfuse 3.17 renamed the call and added
         * the size of the io struct. */
#if FUSE_USE_VERSION >= FUSE_MAKE_VERSION(3, 17)
        r = fuse_session_custom_io(se, &fk_daemon_io, sizeof(fk_daemon_io), daemon_fd);
#else
        r = fuse_session_custom_io(se, &fk_daemon_io, daemon_fd);
#endif
        return r > 0 ? -r : r;
}

/* ------------------------------------------------------------------ */
/* lifetime                                                            */

int fk_new(FakeKernel **ret, int *ret_daemon_fd) {
        FakeKernel *fk;
        struct stat st;
        int sv[2], r;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        fk = calloc(1, sizeof(*fk));
        if (!fk) {
                r = -ENOMEM;
                goto fail;
        }
        if (fstat(sv[0], &st) < 0) {
                r = -errno;
                goto fail;
        }
        fk->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (fk->wake_fd < 0) {
                r = -errno;
                goto fail;
        }
        fk->fd = sv[1];
        fk->keyed = true;
        fk->peer_dev = st.st_dev;
        fk->peer_ino = st.st_ino;
        fk->page_size = (size_t) sysconf(_SC_PAGESIZE);
        fk->timeout_ms = FK_TIMEOUT_DEFAULT_MS;
        fk->tail = &fk->head;

        pthread_mutex_lock(&fk_lock);
        /* A socket inode number is reused once the daemon closed the old
         * one: an older fake that has not noticed must not catch our writes. */
        for (FakeKernel *o = fk_list; o; o = o->next)
                if (o->keyed && o->peer_dev == st.st_dev && o->peer_ino == st.st_ino)
                        o->keyed = false;
        fk->next = fk_list;
        fk_list = fk;
        pthread_mutex_unlock(&fk_lock);

        *ret = fk;
        *ret_daemon_fd = sv[0];
        return 0;

fail:
        if (fk)
                free(fk);
        close(sv[0]);
        close(sv[1]);
        return r;
}

static void msg_free_all(Msg *m) {
        while (m) {
                Msg *next = m->next;

                free(m);
                m = next;
        }
}

FakeKernel *fk_free(FakeKernel *fk) {
        if (!fk)
                return NULL;
        pthread_mutex_lock(&fk_lock);
        for (FakeKernel **l = &fk_list; *l; l = &(*l)->next)
                if (*l == fk) {
                        *l = fk->next;
                        break;
                }
        abort_locked(fk);
        pthread_mutex_unlock(&fk_lock);

        close(fk->fd);
        close(fk->wake_fd);
        msg_free_all(fk->head);
        free(fk->current);
        free(fk->pending);
        free(fk->wakeups);
        free(fk->requeue);
        free(fk);
        return NULL;
}

void fk_disconnect(FakeKernel *fk) {
        pthread_mutex_lock(&fk_lock);
        abort_locked(fk);
        pthread_mutex_unlock(&fk_lock);
}

void fk_set_timeout(FakeKernel *fk, int timeout_ms) {
        fk->timeout_ms = timeout_ms;
}

/* ------------------------------------------------------------------ */
/* sending                                                             */

static int send_iov(FakeKernel *fk, struct iovec *iov, size_t n) {
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = n };
        uint64_t deadline = deadline_of(fk->timeout_ms);

        for (;;) {
                struct pollfd p = { .fd = fk->fd, .events = POLLOUT };
                int r;

                if (sendmsg(fk->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
                        return 0;
                if (errno == EPIPE || errno == ECONNRESET)
                        return -ENOTCONN;
                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
                /* The daemon has not read what is queued yet. */
                r = poll(&p, 1, remaining_ms(deadline));
                if (r == 0)
                        return -ETIMEDOUT;
                if (r < 0 && errno != EINTR)
                        return -errno;
        }
}

/* Sends one request; the reply must be min..max bytes (expect == false:
 * none comes). Returns the unique or -errno. */
static int64_t send_request(FakeKernel *fk, uint32_t opcode, const FkCaller *caller,
                            uint64_t nodeid, const void *a, size_t a_len, const void *b,
                            size_t b_len, bool expect, size_t min, size_t max) {
        struct fuse_in_header h;
        struct iovec iov[3];
        size_t n = 0, len = sizeof(h) + a_len + b_len;
        uint64_t unique = 0;
        int r = 0;

        if (len > UINT32_MAX)
                return -EMSGSIZE;
        pthread_mutex_lock(&fk_lock);
        if (fk->gone)
                r = -ENOTCONN;
        else if (expect)
                r = grow((void **) &fk->pending, &fk->max_pending, fk->n_pending + 1,
                         sizeof(Pending));
        if (r == 0) {
                fk->last_unique += 2;
                unique = fk->last_unique;
                if (expect)
                        fk->pending[fk->n_pending++] = (Pending) {
                                .unique = unique, .opcode = opcode, .min = min, .max = max,
                                .interrupted = fk->signal_pending && opcode != CUSE_INIT,
                        };
        }
        pthread_mutex_unlock(&fk_lock);
        if (r < 0)
                return r;

        h = (struct fuse_in_header) {
                .len = (uint32_t) len,
                .opcode = opcode,
                .unique = unique,
                .nodeid = nodeid,
                .uid = caller ? caller->uid : 0,
                .gid = caller ? caller->gid : 0,
                .pid = caller ? caller->pid : 0,
        };
        iov[n++] = (struct iovec) { .iov_base = &h, .iov_len = sizeof(h) };
        if (a_len > 0)
                iov[n++] = (struct iovec) { .iov_base = (void *) a, .iov_len = a_len };
        if (b_len > 0)
                iov[n++] = (struct iovec) { .iov_base = (void *) b, .iov_len = b_len };
        r = send_iov(fk, iov, n);
        if (r < 0) {
                Pending *p;

                pthread_mutex_lock(&fk_lock);
                p = pending_find_locked(fk, unique);
                if (p)
                        pending_drop_locked(fk, p);
                pthread_mutex_unlock(&fk_lock);
                return r;
        }
        return (int64_t) unique;
}

int64_t fk_send(FakeKernel *fk, uint32_t opcode, const FkCaller *caller, uint64_t nodeid,
                const void *arg, size_t len) {
        FkCaller c = caller_or_self(caller);
        /* libfuse never answers these; the kernel never waits for them. */
        bool expect = opcode != FUSE_FORGET && opcode != FUSE_BATCH_FORGET &&
                      opcode != FUSE_INTERRUPT;

        return send_request(fk, opcode, &c, nodeid, arg, len, NULL, 0, expect, 0, SIZE_MAX);
}

int fk_send_bytes(FakeKernel *fk, const void *msg, size_t len) {
        struct iovec iov = { .iov_base = (void *) msg, .iov_len = len };
        bool gone;

        pthread_mutex_lock(&fk_lock);
        gone = fk->gone;
        pthread_mutex_unlock(&fk_lock);
        return gone ? -ENOTCONN : send_iov(fk, &iov, 1);
}

int64_t fk_send_init(FakeKernel *fk) {
        /* The daemon opening /dev/cuse (root) is the one asking. */
        FkCaller c = { .pid = (uint32_t) getpid() };
        struct cuse_init_in in = {
                .major = FUSE_KERNEL_VERSION,
                .minor = FUSE_KERNEL_MINOR_VERSION,
                .flags = CUSE_UNRESTRICTED_IOCTL,
        };

        return send_request(fk, CUSE_INIT, &c, 0, &in, sizeof(in), NULL, 0, true,
                            sizeof(struct cuse_init_out),
                            sizeof(struct cuse_init_out) + CUSE_INIT_INFO_MAX);
}

int64_t fk_send_open(FakeKernel *fk, const FkCaller *caller, int flags) {
        FkCaller c = caller_or_self(caller);
        struct fuse_open_in in = { .flags = file_flags(flags) };

        return send_request(fk, FUSE_OPEN, &c, 0, &in, sizeof(in), NULL, 0, true,
                            sizeof(struct fuse_open_out), sizeof(struct fuse_open_out));
}

static int64_t send_read(FakeKernel *fk, const FkCaller *c, uint64_t fh, uint64_t offset,
                         uint32_t size, int flags) {
        struct fuse_read_in in = {
                .fh = fh,
                .offset = offset,
                .size = size,
                .read_flags = FUSE_READ_LOCKOWNER,
                .lock_owner = lock_owner(c),
                .flags = file_flags(flags),
        };

        return send_request(fk, FUSE_READ, c, 0, &in, sizeof(in), NULL, 0, true, 0, size);
}

int64_t fk_send_read(FakeKernel *fk, const FkCaller *caller, uint64_t fh, uint32_t size,
                     int flags) {
        FkCaller c = caller_or_self(caller);

        return send_read(fk, &c, fh, 0, size, flags);
}

static int64_t send_write(FakeKernel *fk, const FkCaller *c, uint64_t fh, uint64_t offset,
                          const void *data, uint32_t len, int flags) {
        struct fuse_write_in in = {
                .fh = fh,
                .offset = offset,
                .size = len,
                .write_flags = FUSE_WRITE_LOCKOWNER,
                .lock_owner = lock_owner(c),
                .flags = file_flags(flags),
        };

        return send_request(fk, FUSE_WRITE, c, 0, &in, sizeof(in), data, len, true,
                            sizeof(struct fuse_write_out), sizeof(struct fuse_write_out));
}

int64_t fk_send_write(FakeKernel *fk, const FkCaller *caller, uint64_t fh, const void *data,
                      uint32_t len, int flags) {
        FkCaller c = caller_or_self(caller);

        return send_write(fk, &c, fh, 0, data, len, flags);
}

int64_t fk_send_release(FakeKernel *fk, uint64_t fh, int flags) {
        struct fuse_release_in in = { .fh = fh, .flags = file_flags(flags) };

        /* fuse_release_common() sends with nocreds: all zero. */
        return send_request(fk, FUSE_RELEASE, NULL, 0, &in, sizeof(in), NULL, 0, true, 0, 0);
}

int64_t fk_send_interrupt(FakeKernel *fk, uint64_t target) {
        struct fuse_in_header h;
        struct fuse_interrupt_in in = { .unique = target };
        struct iovec iov[2];
        int r = 0;

        pthread_mutex_lock(&fk_lock);
        if (fk->gone)
                r = -ENOTCONN;
        else if (fk->no_interrupt)
                r = -ENOSYS;
        else if ((target & 1) || !pending_find_locked(fk, target))
                r = -ENOENT;
        pthread_mutex_unlock(&fk_lock);
        if (r < 0)
                return r;

        /* fuse_read_interrupt(): a zeroed header but for these. */
        h = (struct fuse_in_header) {
                .len = sizeof(h) + sizeof(in),
                .opcode = FUSE_INTERRUPT,
                .unique = target | 1,
        };
        iov[0] = (struct iovec) { .iov_base = &h, .iov_len = sizeof(h) };
        iov[1] = (struct iovec) { .iov_base = &in, .iov_len = sizeof(in) };
        r = send_iov(fk, iov, 2);
        return r < 0 ? r : (int64_t) (target | 1);
}

int64_t fk_send_poll(FakeKernel *fk, const FkCaller *caller, uint64_t fh, uint64_t kh,
                     uint32_t flags, uint32_t events) {
        FkCaller c = caller_or_self(caller);
        struct fuse_poll_in in = { .fh = fh, .kh = kh, .flags = flags, .events = events };

        return send_request(fk, FUSE_POLL, &c, 0, &in, sizeof(in), NULL, 0, true,
                            sizeof(struct fuse_poll_out), sizeof(struct fuse_poll_out));
}

int64_t fk_send_ioctl(FakeKernel *fk, const FkCaller *caller, uint64_t fh, uint32_t cmd,
                      uint64_t arg, uint32_t flags, const void *in, uint32_t in_len,
                      uint32_t out_size) {
        FkCaller c = caller_or_self(caller);
        struct fuse_ioctl_in io = {
                .fh = fh,
                .flags = flags,
                .cmd = cmd,
                .arg = arg,
                .in_size = in_len,
                .out_size = out_size,
        };

        /* The out buffer is at least a page: it also carries retry iovecs. */
        return send_request(fk, FUSE_IOCTL, &c, 0, &io, sizeof(io), in, in_len, true,
                            sizeof(struct fuse_ioctl_out),
                            sizeof(struct fuse_ioctl_out) + MAX((size_t) out_size, fk->page_size));
}

/* INTERRUPTs the daemon answered EAGAIN go out again while their target
 * still waits (fuse_dev_do_write() -> queue_interrupt()). */
static void flush_requeue(FakeKernel *fk) {
        for (;;) {
                uint64_t target = 0;
                bool found = false;

                pthread_mutex_lock(&fk_lock);
                if (fk->n_requeue > 0) {
                        target = fk->requeue[--fk->n_requeue];
                        found = true;
                }
                pthread_mutex_unlock(&fk_lock);
                if (!found)
                        return;
                /* -ENOENT: answered meanwhile, nothing to do. */
                (void) fk_send_interrupt(fk, target);
        }
}

/* ------------------------------------------------------------------ */
/* receiving                                                           */

/* The plain path: messages written to the socket itself. */
static void pump_socket(FakeKernel *fk) {
        for (;;) {
                ssize_t n = recv(fk->fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
                Msg *m;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return;
                if (n <= 0) {
                        /* End of stream: the daemon closed its end. */
                        pthread_mutex_lock(&fk_lock);
                        mark_gone_locked(fk);
                        pthread_mutex_unlock(&fk_lock);
                        return;
                }
                m = msg_new((size_t) n);
                if (!m)
                        return;
                if (recv(fk->fd, m->raw, (size_t) n, MSG_DONTWAIT) != n) {
                        free(m);
                        return;
                }
                pthread_mutex_lock(&fk_lock);
                (void) deliver_locked(fk, m);
                pthread_mutex_unlock(&fk_lock);
        }
}

/* Sleeps until something may have changed: 0, or -ETIMEDOUT / -errno. */
static int wait_event(FakeKernel *fk, uint64_t deadline) {
        struct pollfd p[2] = {
                { .fd = fk->wake_fd, .events = POLLIN },
                { .fd = fk->fd, .events = POLLIN },
        };
        eventfd_t v;
        int r;

        r = poll(p, 2, remaining_ms(deadline));
        if (r < 0)
                return errno == EINTR ? 0 : -errno;
        if (r == 0)
                return -ETIMEDOUT;
        if (p[0].revents & POLLIN)
                (void) eventfd_read(fk->wake_fd, &v);
        if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
                pump_socket(fk);
        return 0;
}

static void fill_msg(const Msg *m, FkMsg *ret) {
        *ret = (FkMsg) {
                .kind = m->kind,
                .unique = m->unique,
                .opcode = m->opcode,
                .error = m->error,
                .data = m->payload,
                .len = m->len,
        };
}

/* Takes the reply to unique off the queue, dropping notifications and
 * interrupt replies ahead of it. *ret_known: whether it can still come. */
static Msg *take_reply_locked(FakeKernel *fk, uint64_t unique, bool *ret_known) {
        Msg **l = &fk->head;

        while (*l) {
                Msg *m = *l;

                if (m->kind == FK_MSG_REPLY && m->unique == unique) {
                        unlink_locked(fk, l);
                        return m;
                }
                if (m->kind != FK_MSG_REPLY) {
                        unlink_locked(fk, l);
                        free(m);
                        continue;
                }
                l = &m->next;
        }
        *ret_known = pending_find_locked(fk, unique) != NULL;
        return NULL;
}

static int take(FakeKernel *fk, bool any, uint64_t unique, int timeout_ms, FkMsg *ret) {
        uint64_t deadline = deadline_of(timeout_ms);

        free(fk->current);
        fk->current = NULL;
        for (;;) {
                bool gone, known = true;
                Msg *m = NULL;
                int r;

                flush_requeue(fk);
                pthread_mutex_lock(&fk_lock);
                if (any && fk->head) {
                        m = fk->head;
                        unlink_locked(fk, &fk->head);
                } else if (!any)
                        m = take_reply_locked(fk, unique, &known);
                gone = fk->gone;
                pthread_mutex_unlock(&fk_lock);

                if (m) {
                        fk->current = m;
                        fill_msg(m, ret);
                        return 0;
                }
                if (!known)
                        return -ENOENT;
                if (gone)
                        return -ENOTCONN;
                r = wait_event(fk, deadline);
                if (r < 0)
                        return r;
        }
}

int fk_recv(FakeKernel *fk, int timeout_ms, FkMsg *ret) {
        return take(fk, true, 0, timeout_ms, ret);
}

int fk_expect_reply(FakeKernel *fk, uint64_t unique, int timeout_ms, FkMsg *ret) {
        return take(fk, false, unique, timeout_ms, ret);
}

bool fk_waiting(FakeKernel *fk, uint64_t unique) {
        bool waiting;

        pthread_mutex_lock(&fk_lock);
        waiting = pending_find_locked(fk, unique) != NULL;
        pthread_mutex_unlock(&fk_lock);
        return waiting;
}

static unsigned wakeups_locked(FakeKernel *fk, uint64_t kh) {
        for (size_t i = 0; i < fk->n_wakeups; i++)
                if (fk->wakeups[i].kh == kh)
                        return fk->wakeups[i].count;
        return 0;
}

unsigned fk_poll_wakeups(FakeKernel *fk, uint64_t kh) {
        unsigned n;

        pthread_mutex_lock(&fk_lock);
        n = wakeups_locked(fk, kh);
        pthread_mutex_unlock(&fk_lock);
        return n;
}

int fk_wait_poll_wakeups(FakeKernel *fk, uint64_t kh, unsigned count, int timeout_ms) {
        uint64_t deadline = deadline_of(timeout_ms);

        for (;;) {
                unsigned n;
                bool gone;
                int r;

                flush_requeue(fk);
                pthread_mutex_lock(&fk_lock);
                n = wakeups_locked(fk, kh);
                gone = fk->gone;
                pthread_mutex_unlock(&fk_lock);
                if (n >= count)
                        return 0;
                if (gone)
                        return -ENOTCONN;
                r = wait_event(fk, deadline);
                if (r < 0)
                        return r;
        }
}

unsigned fk_violations(FakeKernel *fk, const char **ret_last) {
        unsigned n;

        pthread_mutex_lock(&fk_lock);
        n = fk->violations;
        /* A copy: the daemon's thread may record the next one meanwhile. */
        memcpy(fk->violation_seen, fk->violation, sizeof(fk->violation_seen));
        pthread_mutex_unlock(&fk_lock);
        if (ret_last)
                *ret_last = fk->violation_seen;
        return n;
}

/* ------------------------------------------------------------------ */
/* what a process sees                                                 */

static int await(FakeKernel *fk, int64_t unique, FkMsg *ret) {
        if (unique < 0)
                return (int) unique;
        return fk_expect_reply(fk, (uint64_t) unique, fk->timeout_ms, ret);
}

int fk_init_result(FakeKernel *fk, FkInit *ret) {
        int r;

        pthread_mutex_lock(&fk_lock);
        r = fk->initialized ? 0 : fk->init_error < 0 ? fk->init_error : -EAGAIN;
        if (r == 0 && ret)
                *ret = fk->init;
        pthread_mutex_unlock(&fk_lock);
        return r;
}

int fk_init_await(FakeKernel *fk, int64_t unique, FkInit *ret) {
        FkMsg m;
        int r;

        r = await(fk, unique, &m);
        if (r < 0)
                return r;
        return fk_init_result(fk, ret);
}

int fk_init(FakeKernel *fk, FkInit *ret) {
        return fk_init_await(fk, fk_send_init(fk), ret);
}

/* The device exists only between an accepted INIT and the end of the
 * connection; *ret_max is the kernel's max_read or max_write. */
static int device_limits(FakeKernel *fk, bool write, size_t *ret_max) {
        int r = 0;

        pthread_mutex_lock(&fk_lock);
        if (!fk->initialized)
                r = -ENODEV;
        else
                *ret_max = MAX((size_t) (write ? fk->init.max_write : fk->init.max_read),
                               (size_t) 4096);
        pthread_mutex_unlock(&fk_lock);
        return r;
}

int fk_open(FakeKernel *fk, const FkCaller *caller, int flags, FkFile *ret) {
        FkCaller c = caller_or_self(caller);
        struct fuse_open_out out;
        size_t unused;
        FkMsg m;
        int r;

        r = device_limits(fk, false, &unused);
        if (r < 0)
                return r;
        r = await(fk, fk_send_open(fk, &c, flags), &m);
        if (r < 0)
                return r;
        if (m.error < 0)
                return m.error;
        memcpy(&out, m.data, sizeof(out));
        *ret = (FkFile) {
                .fh = out.fh,
                .kh = ++fk->last_kh,
                .flags = flags,
                .open_flags = out.open_flags,
                .caller = c,
        };
        return 0;
}

/* fuse_direct_io(): chunks, stopping at the first short one; an error after
 * some bytes returns the bytes. As cuse_read_iter() and cuse_write_iter()
 * pass a position of 0, each chunk's offset is the bytes this call moved
 * before it. Once `signal_after` bytes were moved a caught signal is
 * pending: the chunks after go out interrupted (it is delivered as the
 * call returns). */
static ssize_t direct_io(FakeKernel *fk, const FkFile *f, bool write, void *buf, size_t size,
                         size_t signal_after) {
        size_t chunk, done = 0;
        int r;

        r = device_limits(fk, write, &chunk);
        if (r < 0)
                return r;
        chunk = MIN(chunk, FK_MAX_PAGES * fk->page_size);
        while (done < size) {
                uint32_t n = (uint32_t) MIN(size - done, chunk);
                size_t got;
                int64_t unique;
                FkMsg m;

                if (done >= signal_after) {
                        pthread_mutex_lock(&fk_lock);
                        fk->signal_pending = true;
                        pthread_mutex_unlock(&fk_lock);
                }
                unique = write ? send_write(fk, &f->caller, f->fh, done, (uint8_t *) buf + done,
                                            n, f->flags)
                               : send_read(fk, &f->caller, f->fh, done, n, f->flags);
                r = await(fk, unique, &m);
                if (r == 0)
                        r = m.error;
                if (r < 0)
                        break;
                if (write) {
                        struct fuse_write_out out;

                        memcpy(&out, m.data, sizeof(out));
                        /* fuse_send_write(): more than was sent is -EIO. */
                        if (out.size > n) {
                                r = -EIO;
                                break;
                        }
                        got = out.size;
                } else {
                        memcpy((uint8_t *) buf + done, m.data, m.len);
                        got = m.len;
                }
                done += got;
                if (got != n)
                        break;
        }
        /* The handler runs on the way out of the call. */
        pthread_mutex_lock(&fk_lock);
        fk->signal_pending = false;
        pthread_mutex_unlock(&fk_lock);
        /* A hang is what the test needs to hear about, not the bytes before it. */
        if (r == -ETIMEDOUT)
                return r;
        return done > 0 ? (ssize_t) done : r;
}

ssize_t fk_read(FakeKernel *fk, const FkFile *f, void *buf, size_t size) {
        return direct_io(fk, f, false, buf, size, SIZE_MAX);
}

ssize_t fk_read_signalled(FakeKernel *fk, const FkFile *f, void *buf, size_t size, size_t after) {
        return direct_io(fk, f, false, buf, size, after);
}

ssize_t fk_write(FakeKernel *fk, const FkFile *f, const void *buf, size_t size) {
        return direct_io(fk, f, true, (void *) buf, size, SIZE_MAX);
}

/* The caller's memory for fk_ioctl(): `size` bytes at fake address `base`. */
typedef struct UserMem {
        uint8_t *p;
        size_t size;
        uint64_t base;
} UserMem;

static uint8_t *user_range(const UserMem *u, uint64_t addr, uint64_t len) {
        /* Nothing is touched, so nothing can fault. */
        if (len == 0)
                return u->p;
        if (addr < u->base || addr - u->base > u->size || len > u->size - (addr - u->base))
                return NULL;
        return u->p + (addr - u->base);
}

static size_t iov_total(const struct fuse_ioctl_iovec *iov, size_t n) {
        size_t sum = 0;

        for (size_t i = 0; i < n; i++)
                sum += iov[i].len;
        return sum;
}

/* fuse_verify_ioctl_iov(): the list fits in the request's pages. */
static int verify_iov(const struct fuse_ioctl_iovec *iov, size_t n, size_t max) {
        for (size_t i = 0; i < n; i++) {
                if (iov[i].len > max)
                        return -ENOMEM;
                max -= iov[i].len;
        }
        return 0;
}

/* fuse_copy_ioctl_iovec(): exactly `count` iovecs, each fitting the
 * caller's word size. */
static int parse_retry(const FkMsg *m, bool compat, struct fuse_ioctl_iovec *in, size_t *n_in,
                       struct fuse_ioctl_iovec *out, size_t *n_out, size_t max) {
        struct fuse_ioctl_out o;
        const uint8_t *p = (const uint8_t *) m->data + sizeof(o);
        size_t transferred = m->len - sizeof(o), count;
        int r;

        memcpy(&o, m->data, sizeof(o));
        if (o.in_iovs > FUSE_IOCTL_MAX_IOV || o.out_iovs > FUSE_IOCTL_MAX_IOV ||
            o.in_iovs + o.out_iovs > FUSE_IOCTL_MAX_IOV)
                return -ENOMEM;
        count = (size_t) o.in_iovs + o.out_iovs;
        if (count * sizeof(struct fuse_ioctl_iovec) != transferred)
                return -EIO;
        for (size_t i = 0; i < count; i++) {
                struct fuse_ioctl_iovec v;

                memcpy(&v, p + i * sizeof(v), sizeof(v));
                if (compat && (v.base > UINT32_MAX || v.len > UINT32_MAX))
                        return -EIO;
                if (i < o.in_iovs)
                        in[i] = v;
                else
                        out[i - o.in_iovs] = v;
        }
        *n_in = o.in_iovs;
        *n_out = o.out_iovs;
        r = verify_iov(in, *n_in, max);
        if (r == 0)
                r = verify_iov(out, *n_out, max);
        return r;
}

/* fuse_do_ioctl(), with the caller's memory in u. */
static int ioctl_dance(FakeKernel *fk, const FkFile *f, unsigned cmd, const UserMem *u,
                       uint32_t flags, struct fuse_ioctl_iovec *in, size_t n_in,
                       struct fuse_ioctl_iovec *out, size_t n_out) {
        size_t max = FK_MAX_PAGES * fk->page_size;
        uint32_t wire_flags = flags | (f->caller.compat ? FUSE_IOCTL_32BIT : 0);

        for (unsigned round = 0;; round++) {
                size_t in_size = iov_total(in, n_in), out_size = iov_total(out, n_out);
                size_t transferred, off = 0;
                struct fuse_ioctl_out o;
                uint8_t *data = NULL;
                int64_t unique;
                FkMsg m;
                int r;

                if (round == FK_IOCTL_MAX_ROUNDS) {
                        pthread_mutex_lock(&fk_lock);
                        r = violation_locked(fk, -EIO, "ioctl 0x%x still asks for a retry "
                                             "after %u rounds", cmd, round);
                        pthread_mutex_unlock(&fk_lock);
                        return r;
                }
                if (MAX(in_size, MAX(out_size, fk->page_size)) > max)
                        return -ENOMEM;
                if (in_size > 0) {
                        data = malloc(in_size);
                        if (!data)
                                return -ENOMEM;
                }
                for (size_t i = 0; i < n_in; i++) {
                        const uint8_t *src = user_range(u, in[i].base, in[i].len);

                        if (!src) {
                                free(data);
                                return -EFAULT;
                        }
                        if (in[i].len > 0)
                                memcpy(data + off, src, in[i].len);
                        off += in[i].len;
                }
                unique = fk_send_ioctl(fk, &f->caller, f->fh, cmd, u->base, wire_flags, data,
                                       (uint32_t) in_size, (uint32_t) out_size);
                free(data);
                r = await(fk, unique, &m);
                if (r < 0)
                        return r;
                /* fuse_send_ioctl(): ENOSYS from a daemon reads as ENOTTY. */
                if (m.error == -ENOSYS)
                        return -ENOTTY;
                if (m.error < 0)
                        return m.error;
                memcpy(&o, m.data, sizeof(o));
                if (o.result == -ENOSYS)
                        o.result = -ENOTTY;
                transferred = m.len - sizeof(o);

                if (o.flags & FUSE_IOCTL_RETRY) {
                        if (!(flags & FUSE_IOCTL_UNRESTRICTED))
                                return -EIO;
                        r = parse_retry(&m, f->caller.compat, in, &n_in, out, &n_out, max);
                        if (r < 0)
                                return r;
                        continue;
                }

                if (transferred > out_size)
                        return -EIO;
                off = 0;
                for (size_t i = 0; i < n_out && off < transferred; i++) {
                        size_t n = MIN((size_t) out[i].len, transferred - off);
                        uint8_t *dst = user_range(u, out[i].base, n);

                        if (!dst)
                                return -EFAULT;
                        memcpy(dst, (const uint8_t *) m.data + sizeof(o) + off, n);
                        off += n;
                }
                return o.result;
        }
}

int fk_ioctl(FakeKernel *fk, const FkFile *f, unsigned cmd, void *user, size_t user_size) {
        UserMem u = {
                .p = user,
                .size = user_size,
                .base = f->caller.compat ? FK_USER_BASE_COMPAT : FK_USER_BASE,
        };
        struct fuse_ioctl_iovec *in, *out;
        uint32_t flags = f->caller.compat ? FUSE_IOCTL_COMPAT : 0;
        size_t n_in = 0, n_out = 0, unused;
        int r;

        r = device_limits(fk, false, &unused);
        if (r < 0)
                return r;
        if (f->caller.compat && user_size > UINT32_MAX - FK_USER_BASE_COMPAT)
                return -EFAULT;
        in = calloc(FUSE_IOCTL_MAX_IOV, sizeof(*in));
        out = calloc(FUSE_IOCTL_MAX_IOV, sizeof(*out));
        if (!in || !out) {
                free(in);
                free(out);
                return -ENOMEM;
        }
        pthread_mutex_lock(&fk_lock);
        if (fk->init.flags & CUSE_UNRESTRICTED_IOCTL)
                flags |= FUSE_IOCTL_UNRESTRICTED;
        pthread_mutex_unlock(&fk_lock);

        /* Restricted: the data cmd encodes, in and out at arg. */
        if (!(flags & FUSE_IOCTL_UNRESTRICTED)) {
                struct fuse_ioctl_iovec v = { .base = u.base, .len = _IOC_SIZE(cmd) };

                if (_IOC_DIR(cmd) & _IOC_WRITE)
                        in[n_in++] = v;
                if (_IOC_DIR(cmd) & _IOC_READ)
                        out[n_out++] = v;
        }
        r = ioctl_dance(fk, f, cmd, &u, flags, in, n_in, out, n_out);
        free(in);
        free(out);
        return r;
}

int fk_poll(FakeKernel *fk, const FkFile *f, uint32_t events, bool wait) {
        /* do_pollfd(): the process always hears about errors and hangups. */
        uint32_t filter = events | POLLERR | POLLHUP;
        struct fuse_poll_out out;
        bool no_poll;
        FkMsg m;
        int r;

        pthread_mutex_lock(&fk_lock);
        no_poll = fk->no_poll;
        pthread_mutex_unlock(&fk_lock);
        if (no_poll)
                return FK_DEFAULT_POLLMASK & filter;

        r = await(fk, fk_send_poll(fk, &f->caller, f->fh, f->kh,
                                   wait ? FUSE_POLL_SCHEDULE_NOTIFY : 0, filter), &m);
        if (r == -ETIMEDOUT)
                return r;
        if (r == 0 && m.error == -ENOSYS) {
                pthread_mutex_lock(&fk_lock);
                fk->no_poll = true;
                pthread_mutex_unlock(&fk_lock);
                return FK_DEFAULT_POLLMASK & filter;
        }
        if (r < 0 || m.error < 0)
                return POLLERR;
        memcpy(&out, m.data, sizeof(out));
        return (int) (out.revents & filter);
}

int fk_release(FakeKernel *fk, const FkFile *f) {
        FkMsg m;
        int r;

        r = await(fk, fk_send_release(fk, f->fh, f->flags), &m);
        return r < 0 ? r : m.error;
}
