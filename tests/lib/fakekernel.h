/* fakekernel.h - the kernel's side of the CUSE protocol, for the protocol tests.
 *
 * A FakeKernel plays fs/fuse/cuse.c for one CUSE session: it sends requests
 * to the daemon over a SOCK_SEQPACKET socketpair (one datagram per message,
 * as the daemon would read them from /dev/cuse) and receives its replies
 * through fk_daemon_io, the custom io the daemon's session is given with
 * fuse_session_custom_io(). The daemon's real handlers run unchanged: no
 * root, no /dev/cuse, no VM, milliseconds per test.
 *
 * What the kernel does is mirrored where a daemon could notice it:
 *  - uniques are even and grow by 2 from 2; an INTERRUPT carries target|1;
 *  - a daemon write is handled before it returns, and fails with the errno
 *    the kernel gives: -EINVAL for a malformed reply (wrong length, a reply
 *    bigger than the request allows, an error reply with data), -ENOENT for
 *    a reply nobody waits for (a second reply); the caller then sees -EIO;
 *  - CUSE_INIT's reply is checked like cuse_process_init_reply(): protocol
 *    7.11 or later, a DEVNAME unique among live fakes; otherwise the
 *    connection is aborted before the daemon's init_done runs;
 *  - open/read/write/release/poll/ioctl carry the fields the kernel fills in
 *    (f_flags with O_LARGEFILE, lock owners, kh, FUSE_IOCTL_* flags); reads
 *    and writes are split into max_read/max_write/32-page chunks, each at
 *    the offset the call reached (CUSE starts every call at 0); the
 *    unrestricted ioctl retry dance copies user memory in and out with the
 *    kernel's limits and errors;
 *  - when either end goes away, requests still waiting end with
 *    -ECONNABORTED and new ones fail with -ENOTCONN.
 * Every message the kernel would reject is also counted (fk_violations()),
 * so a test can assert a session stayed clean.
 *
 * Threads: the daemon may run on any thread (its writes take a global lock);
 * everything else on a FakeKernel is called from one test thread.
 * Flow: test -> [fakekernel] -> socketpair -> libfuse -> daemon handlers. */
#pragma once

#include <linux/fuse.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fuse_custom_io;
struct fuse_session;

typedef struct FakeKernel FakeKernel;

/* How long helpers wait for one reply unless fk_set_timeout() says otherwise.
 * A backstop against a hung test, not a figure anything is measured against. */
#define FK_TIMEOUT_DEFAULT_MS 600000

/* The kernel's O_LARGEFILE, which open(2) adds to f_flags on 64-bit and FUSE
 * forwards (glibc's O_LARGEFILE is 0 there, so it is spelled out). */
#if defined(__x86_64__)
#define FK_O_LARGEFILE 0100000
#elif defined(__aarch64__)
#define FK_O_LARGEFILE 0400000
#else
#define FK_O_LARGEFILE 0
#endif

/* Where the calling process's memory appears to the daemon in fk_ioctl():
 * `arg` and every address the daemon asks for are fake user addresses, so a
 * daemon that dereferences one crashes in the test instead of reading its own
 * memory. The 64-bit one is non-canonical; the compat one fits 32 bits. */
#define FK_USER_BASE        UINT64_C(0xdead000000000000)
#define FK_USER_BASE_COMPAT UINT64_C(0xc0000000)

/* The process making a request: fills fuse_in_header's uid, gid and pid.
 * A NULL caller anywhere below means fk_caller_self(). */
typedef struct FkCaller {
        uint32_t uid;
        uint32_t gid;
        uint32_t pid;
        bool compat;    /* a 32-bit process: ioctls carry FUSE_IOCTL_COMPAT|FUSE_IOCTL_32BIT */
} FkCaller;

/* What the daemon answered to CUSE_INIT. */
typedef struct FkInit {
        uint32_t major;         /* protocol version */
        uint32_t minor;
        uint32_t flags;         /* CUSE_UNRESTRICTED_IOCTL */
        uint32_t max_read;      /* as sent; the kernel uses at least 4096 */
        uint32_t max_write;
        uint32_t dev_major;
        uint32_t dev_minor;
        char devname[256];      /* the DEVNAME value */
        char devinfo[CUSE_INIT_INFO_MAX + 1]; /* as sent: "KEY=VAL\0KEY=VAL\0" */
        size_t devinfo_len;
} FkInit;

/* An open file, as a file descriptor in the calling process. A plain value:
 * change `flags` like fcntl(F_SETFL) (O_NONBLOCK), `caller` like passing the
 * fd to another process. */
typedef struct FkFile {
        uint64_t fh;            /* the daemon's handle from the OPEN reply */
        uint64_t kh;            /* the kernel's poll handle id for this file */
        int flags;              /* as given to open(2) */
        uint32_t open_flags;    /* FOPEN_* from the OPEN reply */
        FkCaller caller;
} FkFile;

typedef enum FkMsgKind {
        FK_MSG_REPLY,           /* to a request: unique is the request's */
        FK_MSG_INTERRUPT_REPLY, /* to an INTERRUPT: unique is target|1 */
        FK_MSG_NOTIFY,          /* unique 0, error is the notify code */
} FkMsgKind;

/* One message from the daemon. `data` stays valid until the next call that
 * takes a message (fk_recv(), fk_expect_reply() and every helper below). */
typedef struct FkMsg {
        FkMsgKind kind;
        uint64_t unique;
        uint32_t opcode;        /* replies: the request's opcode */
        int32_t error;          /* replies: 0 or -errno as the caller sees it
                                 * (-EIO when the kernel rejected the reply,
                                 * -ECONNABORTED when the connection died);
                                 * notifications: the code (FUSE_NOTIFY_POLL) */
        const void *data;       /* what follows fuse_out_header */
        size_t len;
} FkMsg;

/* ------------------------------------------------------------------ */
/* setup                                                               */

/* Creates the socketpair. ret_daemon_fd is the daemon's end, O_NONBLOCK and
 * O_CLOEXEC (the daemon's loop expects -EAGAIN when nothing is there); the
 * daemon's session owns it (fuse_session_destroy() closes it). */
int fk_new(FakeKernel **ret, int *ret_daemon_fd);
/* Aborts the connection (the daemon reads ENODEV, as after an unmount or a
 * write to /sys/fs/fuse/connections/N/abort) and frees. Takes NULL, returns NULL. */
FakeKernel *fk_free(FakeKernel *fk);
/* Aborts the connection but keeps the FakeKernel for inspection: waiting
 * requests end with -ECONNABORTED, new ones fail with -ENOTCONN. */
void fk_disconnect(FakeKernel *fk);
/* Per-reply wait of the helpers; negative waits forever. */
void fk_set_timeout(FakeKernel *fk, int timeout_ms);

/* The daemon side's transport: pass to fuse_session_custom_io(). read()
 * returns exactly one request, -1/EAGAIN when none is there and -1/ENODEV
 * once the kernel side is gone; writev() hands the message to the fake. */
extern const struct fuse_custom_io fk_daemon_io;
/* fuse_session_custom_io(se, &fk_daemon_io, daemon_fd) for whichever libfuse
 * is installed (3.17 renamed it). The session owns daemon_fd afterwards. */
int fk_session_attach(struct fuse_session *se, int daemon_fd);

/* uid, gid and pid of this process. */
FkCaller fk_caller_self(void);

/* ------------------------------------------------------------------ */
/* requests: each returns its unique (> 0) or -errno (-ENOTCONN once the
 * connection is gone). Nothing waits for the reply.                   */

/* Any opcode with a well-formed header and nodeid; the reply may have any
 * size. For malformed arguments. */
int64_t fk_send(FakeKernel *fk, uint32_t opcode, const FkCaller *caller, uint64_t nodeid,
                const void *arg, size_t len);
/* Raw bytes, header included, as given (truncated or lying headers):
 * 0 or -errno. Nothing is expected back: a reply to them counts as a
 * violation unless its unique belongs to another request still waiting. */
int fk_send_bytes(FakeKernel *fk, const void *msg, size_t len);
/* CUSE_INIT as cuse_send_init() sends it (7.x, CUSE_UNRESTRICTED_IOCTL offered). */
int64_t fk_send_init(FakeKernel *fk);
/* flags as given to open(2); sent as the kernel's f_flags. */
int64_t fk_send_open(FakeKernel *fk, const FkCaller *caller, int flags);
/* One FUSE_READ at offset 0; flags as the file was opened (O_NONBLOCK). */
int64_t fk_send_read(FakeKernel *fk, const FkCaller *caller, uint64_t fh, uint32_t size, int flags);
int64_t fk_send_write(FakeKernel *fk, const FkCaller *caller, uint64_t fh, const void *data,
                      uint32_t len, int flags);
/* As at the last close(): no caller credentials, like the kernel. */
int64_t fk_send_release(FakeKernel *fk, uint64_t fh, int flags);
/* INTERRUPT for a waiting request: unique target|1. -ENOENT when the target
 * has no reply pending (a real kernel sends nothing then); -ENOSYS after the
 * daemon answered an INTERRUPT with ENOSYS (the kernel stops sending them). */
int64_t fk_send_interrupt(FakeKernel *fk, uint64_t target);
/* flags: FUSE_POLL_SCHEDULE_NOTIFY; events: POLLIN... */
int64_t fk_send_poll(FakeKernel *fk, const FkCaller *caller, uint64_t fh, uint64_t kh,
                     uint32_t flags, uint32_t events);
/* One FUSE_IOCTL as given (flags: FUSE_IOCTL_UNRESTRICTED/COMPAT/32BIT...). */
int64_t fk_send_ioctl(FakeKernel *fk, const FkCaller *caller, uint64_t fh, uint32_t cmd,
                      uint64_t arg, uint32_t flags, const void *in, uint32_t in_len,
                      uint32_t out_size);

/* ------------------------------------------------------------------ */
/* messages from the daemon                                            */

/* The next message in arrival order, whatever it is. -ETIMEDOUT when none
 * came in time (timeout_ms < 0: wait forever, 0: don't wait), -ENOTCONN when
 * none is left and the connection is gone. */
int fk_recv(FakeKernel *fk, int timeout_ms, FkMsg *ret);
/* The reply to `unique`. Other replies stay queued; notifications and
 * interrupt replies queued before it are dropped (they are already counted).
 * -ENOENT when no such request waits or was answered. */
int fk_expect_reply(FakeKernel *fk, uint64_t unique, int timeout_ms, FkMsg *ret);
/* Whether `unique` is still without a reply. With a single-threaded daemon,
 * "still waiting after a later request was answered" is proof of parking
 * without any timing. */
bool fk_waiting(FakeKernel *fk, uint64_t unique);

/* FUSE_NOTIFY_POLL wakeups received for kh so far. */
unsigned fk_poll_wakeups(FakeKernel *fk, uint64_t kh);
/* Waits until fk_poll_wakeups(kh) >= count: 0, -ETIMEDOUT or -ENOTCONN. */
int fk_wait_poll_wakeups(FakeKernel *fk, uint64_t kh, unsigned count, int timeout_ms);
/* Messages the kernel would have rejected, and a description of the last. */
unsigned fk_violations(FakeKernel *fk, const char **ret_last);

/* ------------------------------------------------------------------ */
/* what a process sees: these wait for the reply (fk_set_timeout)      */

/* The CUSE_INIT handshake. 0 when the kernel would have created the device;
 * the daemon's error; -EPROTO (protocol older than 7.11), -EINVAL (devinfo
 * without DEVNAME), -EEXIST (DEVNAME taken by a live fake), -EIO (malformed
 * reply): the connection is then aborted, as the kernel does. */
int fk_init(FakeKernel *fk, FkInit *ret);
/* The second half of fk_init(), for an INIT sent with fk_send_init() when the
 * session opened, as the kernel does: the daemon may answer it before it
 * gives anything else a turn. */
int fk_init_await(FakeKernel *fk, int64_t unique, FkInit *ret);
/* The kernel's verdict on the CUSE_INIT reply received so far, as fk_init()
 * returns it; -EAGAIN while none came. For a daemon driven on the test's own
 * thread, where fk_init() cannot wait. */
int fk_init_result(FakeKernel *fk, FkInit *ret);
/* open(2) of the device node. -ENODEV before a successful fk_init(). */
int fk_open(FakeKernel *fk, const FkCaller *caller, int flags, FkFile *ret);
/* read(2): bytes or -errno. Split into chunks of at most max_read and 32
 * pages; stops at the first short chunk; an error after some bytes returns
 * the bytes (all as fuse_direct_io()). -ETIMEDOUT when a chunk got no reply. */
ssize_t fk_read(FakeKernel *fk, const FkFile *f, void *buf, size_t size);
/* read(2) during which a caught signal arrives once `after` bytes came:
 * every chunk sent from then on is interrupted, its INTERRUPT queued as
 * the daemon reads it (fs/fuse/dev.c); an EINTR reply ends the call with
 * the bytes so far, as fuse_direct_io() does. */
ssize_t fk_read_signalled(FakeKernel *fk, const FkFile *f, void *buf, size_t size, size_t after);
/* write(2), the same way with max_write. */
ssize_t fk_write(FakeKernel *fk, const FkFile *f, const void *buf, size_t size);
/* ioctl(2) with `user` as the caller's memory and arg pointing at its start
 * (the daemon sees FK_USER_BASE or FK_USER_BASE_COMPAT). Runs the whole
 * dance: restricted (data sized by _IOC_SIZE(cmd)) unless the INIT reply
 * asked for CUSE_UNRESTRICTED_IOCTL; on FUSE_IOCTL_RETRY, fetches the asked
 * ranges of user memory and sends again; copies output back into `user`.
 * Returns the ioctl's result or -errno: -EFAULT (a range outside `user`),
 * -ENOMEM (more than 256 iovecs or 32 pages), -EIO (retry in restricted mode,
 * bad iovec array, more output than offered, more than 16 rounds), -ENOTTY
 * for ENOSYS, as fuse_do_ioctl(). */
int fk_ioctl(FakeKernel *fk, const FkFile *f, unsigned cmd, void *user, size_t user_size);
/* One poll(2) pass: the revents the process sees (POLLERR when the request
 * failed, all of POLLIN|POLLOUT once the daemon answered ENOSYS), or
 * -ETIMEDOUT. wait: a poller will sleep (FUSE_POLL_SCHEDULE_NOTIFY). */
int fk_poll(FakeKernel *fk, const FkFile *f, uint32_t events, bool wait);
/* The last close(2): sends RELEASE and waits for its reply (a process never
 * sees it; returned here for the test). */
int fk_release(FakeKernel *fk, const FkFile *f);
