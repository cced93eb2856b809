/* test-fakekernel.c - the fake kernel against libfuse's real CUSE code and
 * against a hand-played daemon.
 *
 * A tiny CUSE device (open, a read that parks until interrupted, ioctls that
 * retry, poll with notification, release) runs on its own thread with the
 * loop a daemon uses: poll the nonblocking fd, fuse_session_receive_buf(),
 * fuse_session_process_buf(). The test thread drives it through the fake's
 * helpers and checks what a process would see. The second half plays the
 * daemon by hand to check what the fake refuses, as the kernel would. */
#define FUSE_USE_VERSION 314
#include <cuse_lowlevel.h>
#include <fuse_lowlevel.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/ioctl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakekernel.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* The test device's ioctls. */
#define TIOC_SUM      _IO('k', 1)              /* SumArg: header, then data; sum out */
#define TIOC_OUTSIDE  _IO('k', 2)              /* asks for memory past the caller's */
#define TIOC_HUGE     _IO('k', 3)              /* asks for 64 pages */
#define TIOC_MANY     _IO('k', 4)              /* asks for 257 iovecs */
#define TIOC_OVERFLOW _IO('k', 5)              /* answers 8 bytes into 4 */
#define TIOC_NOSYS    _IO('k', 6)
#define TIOC_INC      _IOWR('k', 7, uint32_t)  /* *arg += 1 */
#define TIOC_UNKNOWN  _IO('k', 99)

typedef struct SumArg {
        uint32_t n;
        uint32_t sum;
        uint8_t data[256];
} SumArg;

static const FkCaller alice = { .uid = 1000, .gid = 100, .pid = 4242 };

/* ------------------------------------------------------------------ */
/* the device under test                                               */

typedef struct TestDev {
        struct fuse_session *se;
        FakeKernel *fk;
        int stop_fd;
        pthread_t thread;
        bool running;
        int loop_result;

        pthread_mutex_t lock;          /* all below: shared with the loop */
        bool readable;
        fuse_req_t parked;
        struct fuse_pollhandle *ph;
        uint32_t poll_events;
        uint64_t next_fh;
        int open_flags;
        struct fuse_ctx open_ctx;
        int read_flags;
        unsigned reads;
        off_t read_offset;
        unsigned ioctl_rounds;
        unsigned ioctl_flags;
        uint64_t ioctl_arg;
        unsigned releases;
        uint64_t released_fh;
        uint8_t written[64];
        size_t n_written;
        bool init_done;
        bool rejected;
} TestDev;

static TestDev *dev_of(fuse_req_t req) {
        return fuse_req_userdata(req);
}

static void d_init_done(void *userdata) {
        TestDev *d = userdata;
        struct pollfd p = { .fd = fuse_session_fd(d->se), .events = POLLIN };
        bool rejected = poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR));

        pthread_mutex_lock(&d->lock);
        d->init_done = true;
        d->rejected = rejected;
        pthread_mutex_unlock(&d->lock);
}

static void d_open(fuse_req_t req, struct fuse_file_info *fi) {
        TestDev *d = dev_of(req);

        pthread_mutex_lock(&d->lock);
        fi->fh = d->next_fh++;
        d->open_flags = fi->flags;
        d->open_ctx = *fuse_req_ctx(req);
        pthread_mutex_unlock(&d->lock);
        fuse_reply_open(req, fi);
}

static void d_interrupt(fuse_req_t req, void *userdata) {
        TestDev *d = userdata;
        bool mine;

        /* Whoever takes the request off the park slot sends its one reply. */
        pthread_mutex_lock(&d->lock);
        mine = d->parked == req;
        if (mine)
                d->parked = NULL;
        pthread_mutex_unlock(&d->lock);
        if (mine)
                fuse_reply_err(req, EINTR);
}

static void d_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi) {
        TestDev *d = dev_of(req);
        uint8_t *buf;
        bool readable;

        pthread_mutex_lock(&d->lock);
        d->reads++;
        d->read_flags = fi->flags;
        d->read_offset = off;
        readable = d->readable;
        if (!readable && !(fi->flags & O_NONBLOCK))
                d->parked = req;
        pthread_mutex_unlock(&d->lock);

        if (!readable) {
                if (fi->flags & O_NONBLOCK)
                        fuse_reply_err(req, EAGAIN);
                else
                        fuse_req_interrupt_func(req, d_interrupt, d);
                return;
        }
        /* The byte at file offset x is x mod 256: chunk offsets show. */
        buf = malloc(size);
        assert_non_null(buf);
        for (size_t i = 0; i < size; i++)
                buf[i] = (uint8_t) ((uint64_t) off + i);
        fuse_reply_buf(req, (const char *) buf, size);
        free(buf);
}

static void d_write(fuse_req_t req, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi) {
        TestDev *d = dev_of(req);

        pthread_mutex_lock(&d->lock);
        d->n_written = MIN(size, sizeof(d->written));
        memcpy(d->written, buf, d->n_written);
        pthread_mutex_unlock(&d->lock);
        fuse_reply_write(req, size);
}

static struct iovec iov_at(uint64_t addr, size_t len) {
        return (struct iovec) { .iov_base = (void *) (uintptr_t) addr, .iov_len = len };
}

/* TIOC_SUM the way RNDADDENTROPY is fetched: the header first, then header
 * and data, then the answer into the header's sum field. */
static void ioctl_sum(fuse_req_t req, uint64_t a, const void *in, size_t in_size,
                      size_t out_size) {
        struct iovec in_iov, out_iov;
        SumArg s;

        if (in_size < offsetof(SumArg, data)) {
                in_iov = iov_at(a, offsetof(SumArg, data));
                fuse_reply_ioctl_retry(req, &in_iov, 1, NULL, 0);
                return;
        }
        memcpy(&s, in, offsetof(SumArg, data));
        if (s.n > sizeof(s.data)) {
                fuse_reply_err(req, EINVAL);
                return;
        }
        if (in_size < offsetof(SumArg, data) + s.n || out_size < sizeof(s.sum)) {
                in_iov = iov_at(a, offsetof(SumArg, data) + s.n);
                out_iov = iov_at(a + offsetof(SumArg, sum), sizeof(s.sum));
                fuse_reply_ioctl_retry(req, &in_iov, 1, &out_iov, 1);
                return;
        }
        memcpy(s.data, (const uint8_t *) in + offsetof(SumArg, data), s.n);
        s.sum = 0;
        for (uint32_t i = 0; i < s.n; i++)
                s.sum += s.data[i];
        fuse_reply_ioctl(req, (int) s.n, &s.sum, sizeof(s.sum));
}

static void d_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi,
                    unsigned flags, const void *in, size_t in_size, size_t out_size) {
        TestDev *d = dev_of(req);
        uint64_t a = (uintptr_t) arg;
        struct iovec iov[FUSE_IOCTL_MAX_IOV + 1];
        uint32_t v;

        pthread_mutex_lock(&d->lock);
        d->ioctl_rounds++;
        d->ioctl_flags = flags;
        d->ioctl_arg = a;
        pthread_mutex_unlock(&d->lock);

        switch ((unsigned) cmd) {
        case TIOC_SUM:
                ioctl_sum(req, a, in, in_size, out_size);
                return;
        case TIOC_OUTSIDE:
                iov[0] = iov_at(a + 4096, 8);
                fuse_reply_ioctl_retry(req, iov, 1, NULL, 0);
                return;
        case TIOC_HUGE:
                iov[0] = iov_at(a, 64 * 4096);
                fuse_reply_ioctl_retry(req, iov, 1, NULL, 0);
                return;
        case TIOC_MANY:
                for (size_t i = 0; i < ELEMENTSOF(iov); i++)
                        iov[i] = iov_at(a, 1);
                fuse_reply_ioctl_retry(req, iov, ELEMENTSOF(iov), NULL, 0);
                return;
        case TIOC_OVERFLOW:
                if (out_size == 0) {
                        iov[0] = iov_at(a, 4);
                        fuse_reply_ioctl_retry(req, NULL, 0, iov, 1);
                } else
                        fuse_reply_ioctl(req, 0, "12345678", 8);
                return;
        case TIOC_NOSYS:
                fuse_reply_err(req, ENOSYS);
                return;
        case TIOC_INC:
                if (in_size < sizeof(v) || out_size < sizeof(v)) {
                        iov[0] = iov_at(a, sizeof(v));
                        fuse_reply_ioctl_retry(req, iov, 1, iov, 1);
                        return;
                }
                memcpy(&v, in, sizeof(v));
                v++;
                fuse_reply_ioctl(req, 0, &v, sizeof(v));
                return;
        default:
                fuse_reply_err(req, ENOTTY);
                return;
        }
}

static void d_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph) {
        TestDev *d = dev_of(req);
        struct fuse_pollhandle *old;
        bool readable;

        /* Every poll brings a new handle: keep the newest. */
        pthread_mutex_lock(&d->lock);
        old = d->ph;
        d->ph = ph;
        d->poll_events = fi->poll_events;
        readable = d->readable;
        pthread_mutex_unlock(&d->lock);
        if (old)
                fuse_pollhandle_destroy(old);
        fuse_reply_poll(req, readable ? POLLIN : 0);
}

static void d_release(fuse_req_t req, struct fuse_file_info *fi) {
        TestDev *d = dev_of(req);

        pthread_mutex_lock(&d->lock);
        d->releases++;
        d->released_fh = fi->fh;
        pthread_mutex_unlock(&d->lock);
        fuse_reply_err(req, 0);
}

static const struct cuse_lowlevel_ops dev_ops = {
        .init_done = d_init_done,
        .open = d_open,
        .read = d_read,
        .write = d_write,
        .ioctl = d_ioctl,
        .poll = d_poll,
        .release = d_release,
};

/* The loop a daemon runs for a session, on its own thread. */
static void *dev_loop(void *userdata) {
        TestDev *d = userdata;
        struct fuse_buf buf = { .mem = NULL };
        int r = 0;

        while (!fuse_session_exited(d->se)) {
                struct pollfd p[2] = {
                        { .fd = fuse_session_fd(d->se), .events = POLLIN },
                        { .fd = d->stop_fd, .events = POLLIN },
                };

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                if (p[1].revents)
                        break;
                r = fuse_session_receive_buf(d->se, &buf);
                if (r == -EAGAIN || r == -EINTR) {
                        r = 0;
                        continue;
                }
                if (r <= 0)
                        break;
                fuse_session_process_buf(d->se, &buf);
                r = 0;
        }
        free(buf.mem);
        d->loop_result = r;
        return NULL;
}

static TestDev *dev_start(const char *name, unsigned cuse_flags) {
        static char prog[] = "test-fakekernel";
        char *argv[] = { prog, NULL };
        struct fuse_args args = FUSE_ARGS_INIT(1, argv);
        char devname[128];
        const char *dev_info_argv[] = { devname };
        struct cuse_info ci = {
                .dev_info_argc = 1,
                .dev_info_argv = dev_info_argv,
                .flags = cuse_flags,
        };
        TestDev *d = calloc(1, sizeof(*d));
        int fd;

        assert_non_null(d);
        pthread_mutex_init(&d->lock, NULL);
        d->next_fh = 42;
        snprintf(devname, sizeof(devname), "DEVNAME=%s", name);
        assert_int_equal(fk_new(&d->fk, &fd), 0);
        assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        d->se = cuse_lowlevel_new(&args, &ci, &dev_ops, d);
        fuse_opt_free_args(&args);
        assert_non_null(d->se);
        assert_int_equal(fk_session_attach(d->se, fd), 0);
        d->stop_fd = eventfd(0, EFD_CLOEXEC);
        assert_true(d->stop_fd >= 0);
        assert_int_equal(pthread_create(&d->thread, NULL, dev_loop, d), 0);
        d->running = true;
        return d;
}

static void dev_join(TestDev *d) {
        if (d->running)
                assert_int_equal(pthread_join(d->thread, NULL), 0);
        d->running = false;
}

/* Stops the loop as a daemon going down would, the kernel side still there. */
static void dev_halt(TestDev *d) {
        assert_int_equal(eventfd_write(d->stop_fd, 1), 0);
        dev_join(d);
}

static void dev_stop(TestDev *d) {
        /* The kernel going away ends the loop (ENODEV). */
        d->fk = fk_free(d->fk);
        dev_join(d);
        if (d->se)
                fuse_session_destroy(d->se);
        if (d->ph)
                fuse_pollhandle_destroy(d->ph);
        close(d->stop_fd);
        pthread_mutex_destroy(&d->lock);
        free(d);
}

static TestDev *dev_up(const char *name, unsigned cuse_flags) {
        TestDev *d = dev_start(name, cuse_flags);

        assert_int_equal(fk_init(d->fk, NULL), 0);
        return d;
}

static void set_readable(TestDev *d, bool readable) {
        pthread_mutex_lock(&d->lock);
        d->readable = readable;
        pthread_mutex_unlock(&d->lock);
}

static void assert_clean(FakeKernel *fk) {
        const char *last;

        if (fk_violations(fk, &last) != 0)
                fail_msg("kernel would have rejected: %s", last);
}

/* ------------------------------------------------------------------ */
/* against libfuse                                                     */

static void test_init_handshake(void **state) {
        TestDev *d = dev_start("fk-init", CUSE_UNRESTRICTED_IOCTL);
        static const char want[] = "DEVNAME=fk-init";
        FkInit init;
        FkFile f;

        /* No node before the kernel accepted the device. */
        assert_int_equal(fk_open(d->fk, &alice, O_RDONLY, &f), -ENODEV);
        assert_int_equal(fk_init_result(d->fk, NULL), -EAGAIN);
        assert_int_equal(fk_init(d->fk, &init), 0);
        assert_string_equal(init.devname, "fk-init");
        assert_int_equal(init.devinfo_len, sizeof(want));
        assert_memory_equal(init.devinfo, want, sizeof(want));
        assert_int_equal(init.major, FUSE_KERNEL_VERSION);
        assert_true(init.minor >= 11);
        assert_true(init.flags & CUSE_UNRESTRICTED_IOCTL);
        assert_int_equal(init.max_read, 131072);
        /* init_done runs after the reply; the next answer comes after it. */
        assert_int_equal(fk_open(d->fk, &alice, O_RDONLY, &f), 0);
        pthread_mutex_lock(&d->lock);
        assert_true(d->init_done);
        assert_false(d->rejected);
        pthread_mutex_unlock(&d->lock);
        assert_clean(d->fk);
        dev_stop(d);
}

static void test_open_read_write_release(void **state) {
        TestDev *d = dev_up("fk-rw", CUSE_UNRESTRICTED_IOCTL);
        static uint8_t buf[200000];
        FkFile f;

        assert_int_equal(fk_open(d->fk, &alice, O_RDWR | O_CLOEXEC, &f), 0);
        assert_int_equal(f.fh, 42);
        pthread_mutex_lock(&d->lock);
        /* f_flags as the kernel forwards them: O_CLOEXEC gone, O_LARGEFILE added. */
        assert_int_equal(d->open_flags, O_RDWR | FK_O_LARGEFILE);
        assert_int_equal(d->open_ctx.uid, alice.uid);
        assert_int_equal(d->open_ctx.gid, alice.gid);
        assert_int_equal(d->open_ctx.pid, alice.pid);
        pthread_mutex_unlock(&d->lock);

        set_readable(d, true);
        assert_int_equal(fk_read(d->fk, &f, buf, 16), 16);
        for (size_t i = 0; i < 16; i++)
                assert_int_equal(buf[i], i);

        /* 200000 bytes: one 128 KiB chunk, then the rest at offset 131072. */
        memset(buf, 0, sizeof(buf));
        pthread_mutex_lock(&d->lock);
        d->reads = 0;
        pthread_mutex_unlock(&d->lock);
        assert_int_equal(fk_read(d->fk, &f, buf, sizeof(buf)), sizeof(buf));
        for (size_t i = 0; i < sizeof(buf); i++)
                if (buf[i] != (uint8_t) i)
                        fail_msg("byte %zu is %u", i, buf[i]);
        pthread_mutex_lock(&d->lock);
        assert_int_equal(d->reads, 2);
        assert_int_equal(d->read_offset, 131072);
        pthread_mutex_unlock(&d->lock);

        assert_int_equal(fk_read(d->fk, &f, buf, 0), 0);
        assert_int_equal(fk_write(d->fk, &f, "hello", 5), 5);
        pthread_mutex_lock(&d->lock);
        assert_int_equal(d->n_written, 5);
        assert_memory_equal(d->written, "hello", 5);
        pthread_mutex_unlock(&d->lock);

        assert_int_equal(fk_release(d->fk, &f), 0);
        pthread_mutex_lock(&d->lock);
        assert_int_equal(d->releases, 1);
        assert_int_equal(d->released_fh, f.fh);
        pthread_mutex_unlock(&d->lock);
        assert_clean(d->fk);
        dev_stop(d);
}

static void test_nonblock_and_interrupt(void **state) {
        TestDev *d = dev_up("fk-intr", CUSE_UNRESTRICTED_IOCTL);
        uint8_t buf[32];
        int64_t u, iu;
        FkFile f;
        FkMsg m;

        assert_int_equal(fk_open(d->fk, &alice, O_RDONLY | O_NONBLOCK, &f), 0);
        assert_int_equal(fk_read(d->fk, &f, buf, sizeof(buf)), -EAGAIN);
        pthread_mutex_lock(&d->lock);
        assert_true(d->read_flags & O_NONBLOCK);
        pthread_mutex_unlock(&d->lock);

        /* A blocking read parks: still waiting once a later request was
         * answered by the single-threaded loop. */
        f.flags &= ~O_NONBLOCK;
        u = fk_send_read(d->fk, &f.caller, f.fh, sizeof(buf), f.flags);
        assert_true(u > 0 && u % 2 == 0);
        assert_int_equal(fk_poll(d->fk, &f, POLLIN, false), 0);
        assert_true(fk_waiting(d->fk, (uint64_t) u));

        iu = fk_send_interrupt(d->fk, (uint64_t) u);
        assert_int_equal(iu, u | 1);
        assert_int_equal(fk_expect_reply(d->fk, (uint64_t) u, FK_TIMEOUT_DEFAULT_MS, &m), 0);
        assert_int_equal(m.kind, FK_MSG_REPLY);
        assert_int_equal(m.unique, u);
        assert_int_equal(m.opcode, FUSE_READ);
        assert_int_equal(m.error, -EINTR);
        assert_int_equal(m.len, 0);
        assert_false(fk_waiting(d->fk, (uint64_t) u));
        /* Answered: a signal now sends nothing. */
        assert_int_equal(fk_send_interrupt(d->fk, (uint64_t) u), -ENOENT);
        assert_int_equal(fk_expect_reply(d->fk, (uint64_t) u, 0, &m), -ENOENT);
        assert_clean(d->fk);
        dev_stop(d);
}

/* A caught signal during a long read: each request sent after it carries
 * an INTERRUPT that reaches the daemon as it reads the request
 * (fuse_dev_do_read()). A device that answers at once still has the whole
 * read done, as with the kernel; one that parks answers EINTR, and the call
 * returns what it had. */
static void test_signal_during_read(void **state) {
        TestDev *d = dev_up("fk-sig", CUSE_UNRESTRICTED_IOCTL);
        static uint8_t buf[300000];
        FkFile f;

        assert_int_equal(fk_open(d->fk, &alice, O_RDONLY, &f), 0);
        set_readable(d, true);
        assert_int_equal(fk_read_signalled(d->fk, &f, buf, sizeof(buf), 131072), sizeof(buf));
        set_readable(d, false);
        assert_int_equal(fk_read_signalled(d->fk, &f, buf, 16, 0), -EINTR);
        assert_clean(d->fk);
        dev_stop(d);
}

static void test_ioctl_retry_dance(void **state) {
        TestDev *d = dev_up("fk-ioctl", CUSE_UNRESTRICTED_IOCTL);
        SumArg s = { .n = 100 };
        uint32_t want = 0, v = 41;
        const char *last;
        FkFile f, f32;

        for (uint32_t i = 0; i < s.n; i++) {
                s.data[i] = (uint8_t) (i * 7 + 3);
                want += s.data[i];
        }
        assert_int_equal(fk_open(d->fk, &alice, O_RDONLY, &f), 0);

        assert_int_equal(fk_ioctl(d->fk, &f, TIOC_SUM, &s, sizeof(s)), 100);
        assert_int_equal(s.sum, want);
        assert_int_equal(s.n, 100);
        pthread_mutex_lock(&d->lock);
        assert_int_equal(d->ioctl_rounds, 3);
        assert_true(d->ioctl_flags & FUSE_IOCTL_UNRESTRICTED);
        assert_false(d->ioctl_flags & FUSE_IOCTL_32BIT);
        assert_true(d->ioctl_arg == FK_USER_BASE);
        pthread_mutex_unlock(&d->lock);

        /* A 32-bit caller: 32-bit addresses, and it still works. */
        f32 = f;
        f32.caller.compat = true;
        s.sum = 0;
        assert_int_equal(fk_ioctl(d->fk, &f32, TIOC_SUM, &s, sizeof(s)), 100);
        assert_int_equal(s.sum, want);
        pthread_mutex_lock(&d->lock);
        assert_true(d->ioctl_arg == FK_USER_BASE_COMPAT);
        assert_true(d->ioctl_flags & FUSE_IOCTL_COMPAT);
        assert_true(d->ioctl_flags & FUSE_IOCTL_32BIT);
        pthread_mutex_unlock(&d->lock);

        assert_int_equal(fk_ioctl(d->fk, &f, TIOC_INC, &v, sizeof(v)), 0);
        assert_int_equal(v, 42);

        /* What the kernel refuses on the caller's behalf. */
        assert_int_equal(fk_ioctl(d->fk, &f, TIOC_OUTSIDE, &s, sizeof(s)), -EFAULT);
        assert_int_equal(fk_ioctl(d->fk, &f, TIOC_HUGE, &s, sizeof(s)), -ENOMEM);
        assert_int_equal(fk_ioctl(d->fk, &f, TIOC_OVERFLOW, &v, sizeof(v)), -EIO);
        assert_int_equal(v, 42);
        assert_int_equal(fk_ioctl(d->fk, &f, TIOC_NOSYS, &v, sizeof(v)), -ENOTTY);
        assert_int_equal(fk_ioctl(d->fk, &f, TIOC_UNKNOWN, &v, sizeof(v)), -ENOTTY);
        assert_clean(d->fk);

        /* 257 iovecs do not fit the page the kernel offers for them: the
         * daemon's write is refused and the caller gets EIO. */
        assert_int_equal(fk_ioctl(d->fk, &f, TIOC_MANY, &s, sizeof(s)), -EIO);
        assert_int_equal(fk_violations(d->fk, &last), 1);
        assert_non_null(strstr(last, "IOCTL reply"));
        dev_stop(d);
}

static void test_ioctl_restricted(void **state) {
        TestDev *d = dev_up("fk-restricted", 0);
        SumArg s = { .n = 1 };
        uint32_t v = 7;
        FkFile f;

        assert_int_equal(fk_open(d->fk, &alice, O_RDONLY, &f), 0);
        /* The data _IOWR encodes goes in and comes out, no retry. */
        assert_int_equal(fk_ioctl(d->fk, &f, TIOC_INC, &v, sizeof(v)), 0);
        assert_int_equal(v, 8);
        pthread_mutex_lock(&d->lock);
        assert_int_equal(d->ioctl_rounds, 1);
        assert_false(d->ioctl_flags & FUSE_IOCTL_UNRESTRICTED);
        pthread_mutex_unlock(&d->lock);
        /* A retry is not allowed here. */
        assert_int_equal(fk_ioctl(d->fk, &f, TIOC_SUM, &s, sizeof(s)), -EIO);
        assert_clean(d->fk);
        dev_stop(d);
}

static void test_poll_notify(void **state) {
        TestDev *d = dev_up("fk-poll", CUSE_UNRESTRICTED_IOCTL);
        struct fuse_notify_poll_wakeup_out w;
        FkFile f, g;
        FkMsg m;

        assert_int_equal(fk_open(d->fk, &alice, O_RDONLY, &f), 0);
        assert_int_equal(fk_open(d->fk, &alice, O_RDONLY, &g), 0);
        assert_true(f.kh != g.kh);

        assert_int_equal(fk_poll(d->fk, &f, POLLIN, true), 0);
        pthread_mutex_lock(&d->lock);
        assert_non_null(d->ph);
        assert_true(d->poll_events & POLLIN);
        assert_int_equal(fuse_lowlevel_notify_poll(d->ph), 0);
        pthread_mutex_unlock(&d->lock);

        assert_int_equal(fk_wait_poll_wakeups(d->fk, f.kh, 1, FK_TIMEOUT_DEFAULT_MS), 0);
        assert_int_equal(fk_poll_wakeups(d->fk, f.kh), 1);
        assert_int_equal(fk_poll_wakeups(d->fk, g.kh), 0);
        assert_int_equal(fk_recv(d->fk, 0, &m), 0);
        assert_int_equal(m.kind, FK_MSG_NOTIFY);
        assert_int_equal(m.unique, 0);
        assert_int_equal(m.error, FUSE_NOTIFY_POLL);
        assert_int_equal(m.len, sizeof(w));
        memcpy(&w, m.data, sizeof(w));
        assert_true(w.kh == f.kh);
        assert_int_equal(fk_recv(d->fk, 0, &m), -ETIMEDOUT);

        /* A poll that will not sleep asks for no notification. */
        set_readable(d, true);
        assert_int_equal(fk_poll(d->fk, &f, POLLIN, false), POLLIN);
        pthread_mutex_lock(&d->lock);
        assert_null(d->ph);
        pthread_mutex_unlock(&d->lock);
        assert_clean(d->fk);
        dev_stop(d);
}

static void test_kernel_gone_ends_session(void **state) {
        TestDev *d = dev_up("fk-unmount", CUSE_UNRESTRICTED_IOCTL);

        d->fk = fk_free(d->fk);
        dev_join(d);
        assert_int_equal(d->loop_result, 0);
        assert_true(fuse_session_exited(d->se));
        dev_stop(d);
}

static void test_daemon_exit_aborts_waiters(void **state) {
        TestDev *d = dev_up("fk-abort", CUSE_UNRESTRICTED_IOCTL);
        uint8_t buf[8];
        int64_t u;
        FkFile f;
        FkMsg m;

        assert_int_equal(fk_open(d->fk, &alice, O_RDONLY, &f), 0);
        dev_halt(d);
        u = fk_send_read(d->fk, &f.caller, f.fh, sizeof(buf), f.flags);
        assert_true(u > 0);
        fuse_session_destroy(d->se);
        d->se = NULL;

        assert_int_equal(fk_expect_reply(d->fk, (uint64_t) u, FK_TIMEOUT_DEFAULT_MS, &m), 0);
        assert_int_equal(m.error, -ECONNABORTED);
        assert_int_equal(fk_read(d->fk, &f, buf, sizeof(buf)), -ENOTCONN);
        assert_int_equal(fk_recv(d->fk, 0, &m), -ENOTCONN);
        assert_clean(d->fk);
        dev_stop(d);
}

static void test_duplicate_name(void **state) {
        TestDev *a = dev_up("fk-dup", CUSE_UNRESTRICTED_IOCTL);
        TestDev *b = dev_start("fk-dup", CUSE_UNRESTRICTED_IOCTL);
        struct pollfd p;
        TestDev *c;

        assert_int_equal(fk_init(b->fk, NULL), -EEXIST);
        /* Aborted: the loop ends (ENODEV); init_done, which ran before,
         * already saw the connection aborted. */
        p = (struct pollfd) { .fd = fuse_session_fd(b->se), .events = POLLIN };
        assert_int_equal(poll(&p, 1, 0), 1);
        assert_true(p.revents & POLLHUP);
        dev_join(b);
        assert_int_equal(b->loop_result, 0);
        assert_true(b->init_done);
        assert_true(b->rejected);
        dev_stop(b);

        /* Once the first daemon is gone, its name is free again. */
        dev_stop(a);
        c = dev_up("fk-dup", CUSE_UNRESTRICTED_IOCTL);
        dev_stop(c);
}

/* ------------------------------------------------------------------ */
/* a hand-played daemon                                                */

typedef struct Req {
        struct fuse_in_header h;
        union {
                struct fuse_read_in read;
                struct fuse_interrupt_in interrupt;
                struct cuse_init_in init;
                uint8_t bytes[256];
        } in;
} Req;

static void daemon_recv(int fd, Req *ret) {
        static uint8_t buf[FUSE_MIN_READ_BUFFER];
        ssize_t n = fk_daemon_io.read(fd, buf, sizeof(buf), NULL);

        assert_true(n >= (ssize_t) sizeof(ret->h));
        memset(ret, 0, sizeof(*ret));
        memcpy(ret, buf, MIN((size_t) n, sizeof(*ret)));
        assert_int_equal(ret->h.len, n);
}

/* 0 or the errno the daemon's write got. */
static int daemon_send(int fd, uint64_t unique, int32_t error, const void *p, size_t len) {
        struct fuse_out_header h = {
                .len = (uint32_t) (sizeof(h) + len),
                .error = error,
                .unique = unique,
        };
        struct iovec iov[2] = {
                { .iov_base = &h, .iov_len = sizeof(h) },
                { .iov_base = (void *) p, .iov_len = len },
        };
        ssize_t n = fk_daemon_io.writev(fd, iov, len > 0 ? 2 : 1, NULL);

        if (n < 0)
                return -errno;
        assert_int_equal(n, h.len);
        return 0;
}

static int daemon_send_init(int fd, uint64_t unique, uint32_t major, const char *info,
                            size_t info_len) {
        uint8_t buf[sizeof(struct cuse_init_out) + 64];
        struct cuse_init_out out = {
                .major = major,
                .minor = FUSE_KERNEL_MINOR_VERSION,
                .max_read = 65536,
                .max_write = 65536,
        };

        assert_true(info_len <= sizeof(buf) - sizeof(out));
        memcpy(buf, &out, sizeof(out));
        memcpy(buf + sizeof(out), info, info_len);
        return daemon_send(fd, unique, 0, buf, sizeof(out) + info_len);
}

static void test_daemon_io_contract(void **state) {
        FakeKernel *fk;
        uint8_t small[64];
        int fd;
        Req r;

        assert_int_equal(fk_new(&fk, &fd), 0);
        errno = 0;
        assert_int_equal(fk_daemon_io.read(fd, small, sizeof(small), NULL), -1);
        assert_int_equal(errno, EINVAL);
        errno = 0;
        {
                static uint8_t buf[FUSE_MIN_READ_BUFFER];

                assert_int_equal(fk_daemon_io.read(fd, buf, sizeof(buf), NULL), -1);
                assert_int_equal(errno, EAGAIN);
        }

        /* Requests arrive one per read, as the kernel fills them in. */
        assert_int_equal(fk_send_init(fk), 2);
        assert_int_equal(fk_send_read(fk, &alice, 7, 100, O_RDONLY | O_NONBLOCK), 4);
        daemon_recv(fd, &r);
        assert_int_equal(r.h.opcode, CUSE_INIT);
        assert_int_equal(r.h.unique, 2);
        assert_int_equal(r.in.init.major, FUSE_KERNEL_VERSION);
        assert_true(r.in.init.flags & CUSE_UNRESTRICTED_IOCTL);
        daemon_recv(fd, &r);
        assert_int_equal(r.h.opcode, FUSE_READ);
        assert_int_equal(r.h.unique, 4);
        assert_int_equal(r.h.len, sizeof(r.h) + sizeof(r.in.read));
        assert_int_equal(r.h.uid, alice.uid);
        assert_int_equal(r.h.gid, alice.gid);
        assert_int_equal(r.h.pid, alice.pid);
        assert_int_equal(r.in.read.fh, 7);
        assert_int_equal(r.in.read.size, 100);
        assert_int_equal(r.in.read.flags, O_RDONLY | O_NONBLOCK | FK_O_LARGEFILE);
        assert_true(r.in.read.read_flags & FUSE_READ_LOCKOWNER);

        /* Bytes as given, header and all. */
        assert_int_equal(fk_send_bytes(fk, "\x05\0\0\0", 4), 0);
        {
                static uint8_t buf[FUSE_MIN_READ_BUFFER];

                assert_int_equal(fk_daemon_io.read(fd, buf, sizeof(buf), NULL), 4);
        }

        /* The kernel going away reads as an unmount. */
        fk = fk_free(fk);
        {
                static uint8_t buf[FUSE_MIN_READ_BUFFER];

                errno = 0;
                assert_int_equal(fk_daemon_io.read(fd, buf, sizeof(buf), NULL), -1);
                assert_int_equal(errno, ENODEV);
        }
        close(fd);
}

static void test_kernel_refuses_bad_replies(void **state) {
        struct fuse_notify_poll_wakeup_out w = { .kh = 9 };
        static const char info[] = "DEVNAME=fk-manual";
        uint8_t big[64] = { 0 };
        const char *last;
        FakeKernel *fk;
        int64_t u;
        FkMsg m;
        int fd;
        Req r;

        assert_int_equal(fk_new(&fk, &fd), 0);
        assert_int_equal(fk_send_init(fk), 2);
        daemon_recv(fd, &r);
        assert_int_equal(daemon_send_init(fd, 2, FUSE_KERNEL_VERSION, info, sizeof(info)), 0);
        assert_int_equal(fk_expect_reply(fk, 2, 0, &m), 0);
        assert_int_equal(m.error, 0);

        /* A read reply longer than asked for: the write fails, the caller gets EIO. */
        u = fk_send_read(fk, &alice, 1, 16, O_RDONLY);
        daemon_recv(fd, &r);
        assert_int_equal(daemon_send(fd, (uint64_t) u, 0, big, 32), -EINVAL);
        assert_int_equal(fk_expect_reply(fk, (uint64_t) u, 0, &m), 0);
        assert_int_equal(m.error, -EIO);
        assert_int_equal(fk_violations(fk, &last), 1);
        assert_non_null(strstr(last, "READ reply of 32 bytes"));

        /* A second reply finds nobody waiting. */
        assert_int_equal(daemon_send(fd, (uint64_t) u, 0, big, 8), -ENOENT);
        assert_int_equal(fk_violations(fk, NULL), 2);

        /* Error replies carry no data; errors are negative errnos. */
        u = fk_send_read(fk, &alice, 1, 16, O_RDONLY);
        daemon_recv(fd, &r);
        assert_int_equal(daemon_send(fd, (uint64_t) u, -EAGAIN, big, 4), -EINVAL);
        assert_int_equal(fk_violations(fk, NULL), 3);
        u = fk_send_read(fk, &alice, 1, 16, O_RDONLY);
        daemon_recv(fd, &r);
        assert_int_equal(daemon_send(fd, (uint64_t) u, 5, NULL, 0), -EINVAL);
        assert_true(fk_waiting(fk, (uint64_t) u));
        assert_int_equal(daemon_send(fd, (uint64_t) u, -EAGAIN, NULL, 0), 0);
        assert_int_equal(fk_expect_reply(fk, (uint64_t) u, 0, &m), 0);
        assert_int_equal(m.error, -EAGAIN);
        assert_int_equal(fk_violations(fk, NULL), 4);

        /* Notifications: only a well-formed FUSE_NOTIFY_POLL means something. */
        assert_int_equal(daemon_send(fd, 0, FUSE_NOTIFY_POLL, &w, sizeof(w) - 1), -EINVAL);
        assert_int_equal(daemon_send(fd, 0, FUSE_NOTIFY_INVAL_INODE, big, 24), -EINVAL);
        assert_int_equal(fk_poll_wakeups(fk, 9), 0);
        assert_int_equal(daemon_send(fd, 0, FUSE_NOTIFY_POLL, &w, sizeof(w)), 0);
        assert_int_equal(fk_poll_wakeups(fk, 9), 1);
        assert_int_equal(fk_violations(fk, NULL), 6);
        fk_free(fk);
        close(fd);
}

static void test_interrupt_requeue_and_enosys(void **state) {
        FakeKernel *fk;
        int64_t u;
        FkMsg m;
        int fd;
        Req r;

        assert_int_equal(fk_new(&fk, &fd), 0);
        u = fk_send_read(fk, &alice, 1, 16, O_RDONLY);
        daemon_recv(fd, &r);
        assert_int_equal(fk_send_interrupt(fk, (uint64_t) u), u | 1);
        daemon_recv(fd, &r);
        assert_int_equal(r.h.opcode, FUSE_INTERRUPT);
        assert_int_equal(r.h.unique, u | 1);
        assert_int_equal(r.h.uid, 0);
        assert_int_equal(r.h.pid, 0);
        assert_int_equal(r.in.interrupt.unique, u);

        /* EAGAIN: the kernel queues the INTERRUPT again. */
        assert_int_equal(daemon_send(fd, (uint64_t) u | 1, -EAGAIN, NULL, 0), 0);
        assert_int_equal(fk_recv(fk, 0, &m), 0);
        assert_int_equal(m.kind, FK_MSG_INTERRUPT_REPLY);
        assert_int_equal(m.error, -EAGAIN);
        daemon_recv(fd, &r);
        assert_int_equal(r.h.opcode, FUSE_INTERRUPT);
        assert_int_equal(r.in.interrupt.unique, u);

        /* ENOSYS: no more INTERRUPTs on this connection. */
        assert_int_equal(daemon_send(fd, (uint64_t) u | 1, -ENOSYS, NULL, 0), 0);
        assert_int_equal(fk_send_interrupt(fk, (uint64_t) u), -ENOSYS);
        assert_int_equal(daemon_send(fd, (uint64_t) u, -EINTR, NULL, 0), 0);
        assert_int_equal(fk_expect_reply(fk, (uint64_t) u, 0, &m), 0);
        assert_int_equal(m.error, -EINTR);
        assert_clean(fk);
        fk_free(fk);
        close(fd);
}

static void test_init_rejected(void **state) {
        static const char no_name[] = "MAJOR=5";
        static const char unterminated[] = { 'D', 'E', 'V', 'N', 'A', 'M', 'E', '=', 'x' };
        static const char ok[] = "DEVNAME=fk-old";
        struct {
                uint32_t major;
                const char *info;
                size_t len;
                int error;
        } cases[] = {
                { FUSE_KERNEL_VERSION + 1, ok, sizeof(ok), -EPROTO },
                { FUSE_KERNEL_VERSION, no_name, sizeof(no_name), -EINVAL },
                { FUSE_KERNEL_VERSION, unterminated, sizeof(unterminated), -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint8_t buf[FUSE_MIN_READ_BUFFER];
                struct pollfd p;
                FakeKernel *fk;
                int64_t u;
                int fd;
                Req r;

                assert_int_equal(fk_new(&fk, &fd), 0);
                fk_set_timeout(fk, 0);
                u = fk_send_init(fk);
                daemon_recv(fd, &r);
                /* The write itself succeeds; the connection is aborted by the
                 * time it returns, which init_done can see. */
                assert_int_equal(daemon_send_init(fd, (uint64_t) u, cases[i].major, cases[i].info,
                                                  cases[i].len), 0);
                p = (struct pollfd) { .fd = fd, .events = POLLIN };
                assert_int_equal(poll(&p, 1, 0), 1);
                assert_true(p.revents & POLLHUP);
                assert_int_equal(fk_init_result(fk, NULL), cases[i].error);
                errno = 0;
                assert_int_equal(fk_daemon_io.read(fd, buf, sizeof(buf), NULL), -1);
                assert_int_equal(errno, ENODEV);
                fk = fk_free(fk);
                close(fd);
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_init_handshake),
                cmocka_unit_test(test_open_read_write_release),
                cmocka_unit_test(test_nonblock_and_interrupt),
                cmocka_unit_test(test_signal_during_read),
                cmocka_unit_test(test_ioctl_retry_dance),
                cmocka_unit_test(test_ioctl_restricted),
                cmocka_unit_test(test_poll_notify),
                cmocka_unit_test(test_kernel_gone_ends_session),
                cmocka_unit_test(test_daemon_exit_aborts_waiters),
                cmocka_unit_test(test_duplicate_name),
                cmocka_unit_test(test_daemon_io_contract),
                cmocka_unit_test(test_kernel_refuses_bad_replies),
                cmocka_unit_test(test_interrupt_requeue_and_enosys),
                cmocka_unit_test(test_init_rejected),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
