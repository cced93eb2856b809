/* cusefix.c - the CUSE hub on fake kernels for the fuzzers (see cusefix.h).
 *
 * Invariants: every request sent and not yet answered is in its device's
 * request table, and every reply the fake queues belongs to one of them
 * (the fake itself counts replies nobody waits for); an open file is in the
 * device's file table from its OPEN reply until its RELEASE is sent, so
 * only handles the daemon gave out go back to it. Store blocks carry their
 * id in their first 8 bytes and a pattern after it, which lets a TRNG reply
 * be traced back to the blocks it came from.
 * Flow: harness -> [cusefix] -> fakekernel -> libfuse -> cuse handlers. */
#include "cusefix.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crng/crng.h"
#include "cuse/rndioctl.h"
#include "fakeproc.h"
#include "fuzz.h"
#include "pool/store.h"

#define STORE_BLOCKS 16
#define BLOCKS_MAX 4096
/* What the kernel uses when the daemon offers less (fs/fuse/cuse.c). */
#define PAGE 4096U
#define MAX_PAGES 32U
/* Bodies of other opcodes: at least any request struct, as the kernel
 * always sends whole ones, and names NUL-terminated. */
#define OTHER_BODY_MIN 128U
#define OTHER_BODY_MAX 512U

typedef struct File {
        bool live;
        uint64_t fh;
        uint64_t kh;
        int flags;
        CuseFixCaller caller;
} File;

typedef struct Request {
        bool live;
        uint64_t unique;
        uint32_t opcode;
        uint32_t size;          /* READ: asked for; WRITE: sent */
        int slot;               /* OPEN: the file slot it will fill */
        int flags;              /* OPEN: as given to open(2); READ: f_flags sent */
        CuseFixCaller caller;
        bool interrupted;
        /* IOCTL */
        uint32_t cmd;
        uint64_t fh;
        bool compat;
        unsigned round;
        uint32_t out_size;
} Request;

typedef struct Device {
        CuseDevKind kind;
        char name[32];
        FakeKernel *fk;
        CuseDev *dev;
        FkInit init;
        File files[CUSEFIX_FILES];
        Request requests[CUSEFIX_REQUESTS];
        uint64_t next_kh;
        uint64_t last_unique;   /* the newest unique the fake gave out */
        uint64_t last_answered;
        bool no_poll;           /* answered POLL with ENOSYS: the kernel stops */
        unsigned strays;        /* late INTERRUPTs libfuse still holds */
        int entropy_count;
        unsigned up_events;
} Device;

struct CuseFix {
        Store *store;
        Crng *crng;
        Seeder *seeder;
        CuseHub *hub;
        Device devs[_CUSEDEV_KIND_MAX];
        unsigned seeded_events;
        bool shut_down;
        /* Demand: the hub's callbacks against cusehub_wants_blocks(). */
        unsigned demand_calls, demand_seen;
        bool wanted;
        bool loop_acted;        /* the loop itself changed something */
        uint64_t next_block;
        uint8_t served[BLOCKS_MAX / 8];
        uint8_t user[CUSEFIX_USER_SIZE];
};

/* The fake /proc, and the live processes it shows (privilege_check()
 * refuses a pid that is not alive): this process, with CAP_SYS_ADMIN; an
 * idle child without; and a reaped child's pid, shown as root. */
static FakeProc *proc;
static pid_t priv_pid, unpriv_pid, gone_pid;

static const char *const dev_names[_CUSEDEV_KIND_MAX] = {
        [CUSEDEV_TRNG] = "fuzz-truerandom",
        [CUSEDEV_RANDOM] = "fuzz-random",
        [CUSEDEV_URANDOM] = "fuzz-urandom",
        [CUSEDEV_NULL] = "fuzz-null",
};

/* ------------------------------------------------------------------ */
/* callers                                                             */

static void remove_proc(void) {
        fakeproc_caller_kill(unpriv_pid);
        proc = fakeproc_free(proc);
}

void cusefix_setup(void) {
        const char *tmp = getenv("TMPDIR");

        if (proc)
                return;
        priv_pid = getpid();
        unpriv_pid = fork();
        FUZZ_CHECK(unpriv_pid >= 0);
        if (unpriv_pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                for (;;)
                        pause();
        }
        gone_pid = fork();
        FUZZ_CHECK(gone_pid >= 0);
        if (gone_pid == 0)
                _exit(0);
        FUZZ_CHECK(waitpid(gone_pid, NULL, 0) == gone_pid);

        /* A crash skips atexit(): under run-fuzzer.sh TMPDIR is its work
         * dir, removed with everything else. */
        FUZZ_CHECK(fakeproc_new(tmp && *tmp ? tmp : "/tmp", &proc) == 0);
        FUZZ_CHECK(fakeproc_add(proc, priv_pid, 1000, UINT64_C(1) << CAP_SYS_ADMIN, FAKEPROC_NS_SAME) == 0);
        FUZZ_CHECK(fakeproc_add(proc, unpriv_pid, 1000, 0, FAKEPROC_NS_SAME) == 0);
        FUZZ_CHECK(fakeproc_add(proc, gone_pid, 0, UINT64_C(1) << CAP_SYS_ADMIN, FAKEPROC_NS_SAME) == 0);
        atexit(remove_proc);
}

static FkCaller caller_of(CuseFixCaller c, bool compat) {
        switch (c) {
        case CUSEFIX_PRIV:
                return (FkCaller) { .uid = 1000, .gid = 1000, .pid = (uint32_t) priv_pid, .compat = compat };
        case CUSEFIX_UNPRIV:
                return (FkCaller) { .uid = 1000, .gid = 1000, .pid = (uint32_t) unpriv_pid, .compat = compat };
        case CUSEFIX_ROOT_GONE:
                return (FkCaller) { .uid = 0, .gid = 0, .pid = (uint32_t) gone_pid, .compat = compat };
        case CUSEFIX_OTHER_NS:
        default:
                return (FkCaller) { .uid = 1001, .gid = 1001, .pid = 0, .compat = compat };
        }
}

static bool privileged(CuseFixCaller c) {
        return c == CUSEFIX_PRIV;
}

/* ------------------------------------------------------------------ */
/* bookkeeping                                                         */

static Request *request_add(Device *d, int64_t unique, uint32_t opcode) {
        FUZZ_CHECK(unique > 0);
        if ((uint64_t) unique > d->last_unique)
                d->last_unique = (uint64_t) unique;
        for (size_t i = 0; i < CUSEFIX_REQUESTS; i++)
                if (!d->requests[i].live) {
                        d->requests[i] = (Request) { .live = true, .unique = (uint64_t) unique, .opcode = opcode,
                                                     .slot = -1 };
                        return &d->requests[i];
                }
        /* Callers check request_room() first. */
        abort();
}

static bool request_room(const Device *d) {
        for (size_t i = 0; i < CUSEFIX_REQUESTS; i++)
                if (!d->requests[i].live)
                        return true;
        return false;
}

static Request *request_find(Device *d, uint64_t unique) {
        for (size_t i = 0; i < CUSEFIX_REQUESTS; i++)
                if (d->requests[i].live && d->requests[i].unique == unique)
                        return &d->requests[i];
        return NULL;
}

/* The n-th open file, counting round the open ones. */
static File *file_pick(Device *d, unsigned n) {
        unsigned open = 0;

        for (size_t i = 0; i < CUSEFIX_FILES; i++)
                open += d->files[i].live;
        if (open == 0)
                return NULL;
        n %= open;
        for (size_t i = 0; i < CUSEFIX_FILES; i++)
                if (d->files[i].live && n-- == 0)
                        return &d->files[i];
        abort();
}

static void make_block(uint64_t id, uint8_t block[static STORE_BLOCK_SIZE]) {
        memcpy(block, &id, sizeof(id));
        for (size_t i = sizeof(id); i < STORE_BLOCK_SIZE; i++)
                block[i] = (uint8_t) (0xb5 ^ id ^ i);
}

/* ------------------------------------------------------------------ */
/* replies                                                             */

static void check_trng_bytes(CuseFix *fx, const uint8_t *p, size_t n) {
        /* take_blocks() serves whole blocks but the last: a reply is a run
         * of 32-byte blocks, each an unaltered store block never served. */
        for (size_t off = 0; off + sizeof(uint64_t) <= n; off += STORE_BLOCK_SIZE) {
                uint8_t want[STORE_BLOCK_SIZE];
                size_t len = n - off < STORE_BLOCK_SIZE ? n - off : STORE_BLOCK_SIZE;
                uint64_t id;

                memcpy(&id, p + off, sizeof(id));
                FUZZ_CHECK(id < fx->next_block);
                FUZZ_CHECK(!(fx->served[id / 8] & (1U << (id % 8))));
                fx->served[id / 8] |= (uint8_t) (1U << (id % 8));
                make_block(id, want);
                FUZZ_CHECK(memcmp(p + off, want, len) == 0);
        }
}

static void on_read(CuseFix *fx, Device *d, Request *q, const FkMsg *m) {
        if (m->error < 0) {
                FUZZ_CHECK(m->error == -EAGAIN || m->error == -EINTR || m->error == -EIO ||
                           m->error == -ENOMEM);
                FUZZ_CHECK(m->error != -EINTR || q->interrupted);
                FUZZ_CHECK(m->error != -EIO || fx->shut_down);
                if (d->kind == CUSEDEV_URANDOM || d->kind == CUSEDEV_NULL)
                        FUZZ_CHECK(m->error == -EIO);
                /* Once seeded, /dev/random answers at once. */
                if (d->kind == CUSEDEV_RANDOM && m->error == -EAGAIN)
                        FUZZ_CHECK(fx->seeded_events == 0);
                return;
        }
        FUZZ_CHECK(m->len <= q->size);
        switch (d->kind) {
        case CUSEDEV_TRNG:
                FUZZ_CHECK(q->size == 0 || m->len >= 1);
                check_trng_bytes(fx, m->data, m->len);
                break;
        case CUSEDEV_RANDOM:
                FUZZ_CHECK(q->size == 0 || fx->seeded_events > 0);
                FUZZ_CHECK(m->len == q->size);
                break;
        case CUSEDEV_URANDOM:
                FUZZ_CHECK(m->len == q->size);
                break;
        case CUSEDEV_NULL:
                FUZZ_CHECK(m->len == q->size);
                for (size_t i = 0; i < m->len; i++)
                        FUZZ_CHECK(((const uint8_t *) m->data)[i] == 0);
                break;
        default:
                abort();
        }
}

/* fuse_do_ioctl() after a reply: the next round, or the end. */
static void on_ioctl(CuseFix *fx, Device *d, Request *q, const FkMsg *m) {
        struct fuse_ioctl_out out;
        const uint8_t *p;
        size_t transferred, in_size = 0, out_size = 0, count;
        uint8_t *in = NULL;
        RndOp op = rndioctl_op(q->cmd);
        Request *next;
        int64_t unique;
        FkCaller c;

        if (m->error < 0) {
                FUZZ_CHECK(m->error == -EPERM || m->error == -EINVAL || m->error == -ENOTTY ||
                           m->error == -EFAULT || m->error == -ENODATA);
                if (d->kind == CUSEDEV_RANDOM || d->kind == CUSEDEV_URANDOM) {
                        /* The capability check comes first, as in the kernel. */
                        bool refused = rndioctl_privileged(op) && !privileged(q->caller);
                        FUZZ_CHECK((m->error == -EPERM) == refused);
                        if (op == RND_OP_UNKNOWN || op == RND_OP_GETPOOL)
                                FUZZ_CHECK(m->error == -EINVAL);
                        if (m->error == -ENODATA)
                                FUZZ_CHECK(op == RND_OP_RESEEDCRNG && fx->seeded_events == 0);
                } else {
                        /* truerandom and null know RNDGETENTCNT at most. */
                        FUZZ_CHECK(m->error != -EPERM && m->error != -ENODATA);
                        if (op != RND_OP_GETENTCNT || d->kind == CUSEDEV_NULL)
                                FUZZ_CHECK(m->error == -ENOTTY);
                }
                return;
        }
        FUZZ_CHECK(m->len >= sizeof(out));
        memcpy(&out, m->data, sizeof(out));
        p = (const uint8_t *) m->data + sizeof(out);
        transferred = m->len - sizeof(out);

        if (!(out.flags & FUSE_IOCTL_RETRY)) {
                FUZZ_CHECK(out.result == 0);
                FUZZ_CHECK(transferred <= q->out_size);
                if (op == RND_OP_GETENTCNT) {
                        int v;

                        FUZZ_CHECK(transferred == sizeof(v));
                        memcpy(&v, p, sizeof(v));
                        FUZZ_CHECK(v >= 0);
                        if (d->kind == CUSEDEV_TRNG)
                                FUZZ_CHECK(v % (STORE_BLOCK_SIZE * 8) == 0);
                        else
                                FUZZ_CHECK(v <= (int) CRNG_SEED_BITS && (v == (int) CRNG_SEED_BITS) ==
                                                                                (fx->seeded_events > 0));
                        d->entropy_count = v;
                } else
                        FUZZ_CHECK(transferred == 0);
                return;
        }

        /* Every daemon here decodes in at most three rounds. */
        FUZZ_CHECK(q->round < 3);
        FUZZ_CHECK(out.in_iovs <= FUSE_IOCTL_MAX_IOV && out.out_iovs <= FUSE_IOCTL_MAX_IOV);
        count = (size_t) out.in_iovs + out.out_iovs;
        FUZZ_CHECK(count * sizeof(struct fuse_ioctl_iovec) == transferred);
        for (size_t i = 0; i < count; i++) {
                struct fuse_ioctl_iovec v;
                uint64_t base = q->compat ? FK_USER_BASE_COMPAT : FK_USER_BASE;

                memcpy(&v, p + i * sizeof(v), sizeof(v));
                /* Outside the caller's memory the kernel fails the ioctl
                 * with EFAULT and asks the daemon nothing more. */
                if (v.base < base || v.base - base > CUSEFIX_USER_SIZE || v.len > CUSEFIX_USER_SIZE - (v.base - base)) {
                        free(in);
                        return;
                }
                if (i >= out.in_iovs) {
                        out_size += v.len;
                        continue;
                }
                in = realloc(in, in_size + v.len + 1);
                FUZZ_CHECK(in);
                memcpy(in + in_size, fx->user + (v.base - base), v.len);
                in_size += v.len;
        }
        if (in_size > MAX_PAGES * PAGE || out_size > MAX_PAGES * PAGE) {
                free(in);
                return;
        }

        c = caller_of(q->caller, q->compat);
        unique = fk_send_ioctl(d->fk, &c, q->fh, q->cmd, q->compat ? FK_USER_BASE_COMPAT : FK_USER_BASE,
                               FUSE_IOCTL_UNRESTRICTED | (q->compat ? FUSE_IOCTL_COMPAT | FUSE_IOCTL_32BIT : 0), in,
                               (uint32_t) in_size, (uint32_t) out_size);
        free(in);
        /* q's slot was freed by the caller: there is room. */
        next = request_add(d, unique, FUSE_IOCTL);
        next->caller = q->caller;
        next->cmd = q->cmd;
        next->fh = q->fh;
        next->compat = q->compat;
        next->round = q->round + 1;
        next->out_size = (uint32_t) out_size;
}

static void on_reply(CuseFix *fx, Device *d, const FkMsg *m) {
        Request *found = request_find(d, m->unique), q;

        FUZZ_CHECK(found);
        FUZZ_CHECK(found->opcode == m->opcode);
        q = *found;
        found->live = false;
        d->last_answered = q.unique;

        switch (q.opcode) {
        case FUSE_OPEN: {
                struct fuse_open_out out;

                if (m->error < 0) {
                        /* /dev/truerandom's own group gate, and every
                         * device's bound on files per uid (root's are not
                         * bounded). */
                        bool outsider = d->kind == CUSEDEV_TRNG && q.caller == CUSEFIX_OTHER_NS;
                        FUZZ_CHECK((fx->shut_down && m->error == -EIO) || (outsider && m->error == -EACCES) ||
                                   (m->error == -EMFILE && caller_of(q.caller, false).uid != 0));
                        return;
                }
                FUZZ_CHECK(d->kind != CUSEDEV_TRNG || q.caller != CUSEFIX_OTHER_NS);
                FUZZ_CHECK(m->len == sizeof(out));
                memcpy(&out, m->data, sizeof(out));
                FUZZ_CHECK(out.fh != 0);
                FUZZ_CHECK(q.slot >= 0 && !d->files[q.slot].live);
                d->files[q.slot] = (File) {
                        .live = true, .fh = out.fh, .kh = ++d->next_kh, .flags = q.flags, .caller = q.caller,
                };
                return;
        }
        case FUSE_READ:
                on_read(fx, d, &q, m);
                return;
        case FUSE_WRITE: {
                struct fuse_write_out out;

                if (d->kind == CUSEDEV_TRNG) {
                        /* Unverified input never becomes "true random" output. */
                        FUZZ_CHECK(m->error == -EPERM);
                        return;
                }
                FUZZ_CHECK(m->error == 0 && m->len == sizeof(out));
                memcpy(&out, m->data, sizeof(out));
                FUZZ_CHECK(out.size == q.size);
                return;
        }
        case FUSE_RELEASE:
                FUZZ_CHECK(m->error == 0 && m->len == 0);
                return;
        case FUSE_POLL: {
                struct fuse_poll_out out;

                if (d->kind == CUSEDEV_URANDOM || d->kind == CUSEDEV_NULL) {
                        /* No poll method, as the kernel's urandom. */
                        FUZZ_CHECK(m->error == -ENOSYS);
                        d->no_poll = true;
                        return;
                }
                FUZZ_CHECK(m->error == 0 && m->len == sizeof(out));
                memcpy(&out, m->data, sizeof(out));
                if (d->kind == CUSEDEV_RANDOM && !fx->shut_down)
                        FUZZ_CHECK(out.revents == (fx->seeded_events > 0 ? (POLLIN | POLLRDNORM)
                                                                         : (POLLOUT | POLLWRNORM)));
                else
                        FUZZ_CHECK(out.revents == 0 || out.revents == (POLLIN | POLLRDNORM));
                return;
        }
        case FUSE_IOCTL:
                on_ioctl(fx, d, &q, m);
                return;
        default:
                /* Everything else CUSE does not implement. */
                FUZZ_CHECK(m->error <= 0);
                return;
        }
}

/* What the hub's statistics must agree with after every settle. */
static bool reseed_pending(const CuseFix *fx) {
        SeederStats st;

        seeder_get_stats(fx->seeder, &st);
        return st.pending;
}

static void check_state(CuseFix *fx) {
        unsigned trng_waiting = 0;
        bool wanted;

        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                Device *d = &fx->devs[k];
                CuseDevStats st;
                unsigned files = 0, waiting_reads = 0;
                const char *last = NULL;

                if (fk_violations(d->fk, &last) != 0) {
                        fprintf(stderr, "%s: the kernel would reject: %s\n", d->name, last ? last : "?");
                        abort();
                }
                for (size_t i = 0; i < CUSEFIX_FILES; i++)
                        files += d->files[i].live;
                for (size_t i = 0; i < CUSEFIX_REQUESTS; i++) {
                        const Request *q = &d->requests[i];

                        if (!q->live)
                                continue;
                        /* Only reads wait; the rest is answered at once. */
                        FUZZ_CHECK(q->opcode == FUSE_READ);
                        waiting_reads++;
                }
                if (d->kind == CUSEDEV_TRNG)
                        trng_waiting = waiting_reads;
                cusedev_get_stats(d->dev, &st);
                FUZZ_CHECK(st.kind == d->kind && st.up && d->up_events == 1);
                FUZZ_CHECK(st.parked == waiting_reads);
                FUZZ_CHECK(st.parked <= 8);
                if (d->kind == CUSEDEV_URANDOM || d->kind == CUSEDEV_NULL)
                        FUZZ_CHECK(waiting_reads == 0);
                if (d->kind == CUSEDEV_RANDOM && fx->seeded_events > 0)
                        FUZZ_CHECK(waiting_reads == 0);
                /* RELEASE is sent before its reply; a file counts from its
                 * OPEN reply: the two counts agree whenever all is answered. */
                FUZZ_CHECK(st.open_files == files);
        }
        FUZZ_CHECK(fx->seeded_events <= 1);
        FUZZ_CHECK(crng_is_seeded(fx->crng) == (fx->seeded_events == 1));

        /* The sources must run while a TRNG reader waits or the CRNG needs
         * a seed; a change the loop did not cause itself must be reported
         * through the demand callback, or the loop never starts (or stops)
         * the sources and readers wait forever. */
        wanted = cusehub_wants_blocks(fx->hub);
        FUZZ_CHECK(wanted == (!fx->shut_down && (reseed_pending(fx) || !crng_is_seeded(fx->crng) ||
                                                 trng_waiting > 0)));
        if (wanted != fx->wanted && !fx->loop_acted)
                FUZZ_CHECK(fx->demand_calls != fx->demand_seen);
        fx->wanted = wanted;
        fx->demand_seen = fx->demand_calls;
        fx->loop_acted = false;
}

void cusefix_settle(CuseFix *fx) {
        for (unsigned pass = 0;; pass++) {
                bool progress = false;

                FUZZ_CHECK(pass < 10000);
                for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                        int r;

                        while ((r = cusedev_process(fx->devs[k].dev)) == 0)
                                progress = true;
                        FUZZ_CHECK(r == -EAGAIN);
                }
                for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                        Device *d = &fx->devs[k];
                        FkMsg m;
                        int r;

                        while ((r = fk_recv(d->fk, 0, &m)) == 0) {
                                progress = true;
                                if (m.kind == FK_MSG_REPLY)
                                        on_reply(fx, d, &m);
                        }
                        FUZZ_CHECK(r == -ETIMEDOUT);
                }
                if (!progress)
                        break;
        }
        check_state(fx);
}

/* ------------------------------------------------------------------ */
/* the hub's callbacks                                                 */

static void on_demand(void *userdata) {
        CuseFix *fx = userdata;

        fx->demand_calls++;
}

static void on_event(void *userdata, CuseDev *dev, CuseEvent event, int error) {
        CuseFix *fx = userdata;

        switch (event) {
        case CUSE_EVENT_UP:
                for (int k = 0; k < _CUSEDEV_KIND_MAX; k++)
                        if (fx->devs[k].dev == dev)
                                fx->devs[k].up_events++;
                break;
        case CUSE_EVENT_SEEDED:
                fx->seeded_events++;
                break;
        case CUSE_EVENT_REJECTED:
        case CUSE_EVENT_NODE_ERROR:
                /* Unique names, no node directory: neither can happen. */
                abort();
        }
}

/* ------------------------------------------------------------------ */
/* lifetime                                                            */

/* A few waiting reads per device, one of them per uid but root's (root
 * keeps one more): small enough that the fuzzer reaches every bound. */
static CuseHubLimits cusefix_limits(unsigned max_parked) {
        return (CuseHubLimits){ .max_parked = max_parked, .max_parked_per_uid = 1, .max_open_per_uid = 4,
                                .max_dropin_open_per_uid = 4 };
}

static CuseFix *fixture_new(void) {
        static unsigned generation;
        static const uint8_t initial[CRNG_KEY_SIZE] = { 'f', 'u', 'z', 'z' };
        CuseHubParams params = { .limits = cusefix_limits(CUSEFIX_MAX_PARKED), .proc_root = fakeproc_root(proc) };
        CuseFix *fx = calloc(1, sizeof(*fx));
        CuseHubCallbacks cb = { .event = on_event, .demand = on_demand };

        FUZZ_CHECK(fx && proc);
        cb.userdata = fx;
        FUZZ_CHECK(store_new(STORE_BLOCKS, STORE_BLOCKS / 4, &fx->store) == 0);
        FUZZ_CHECK(crng_new(initial, CRNG_BUFFER_MIN, &fx->crng) == 0);
        FUZZ_CHECK(seeder_new(&(SeederParams){ 0 }, fx->store, fx->crng, &fx->seeder) == 0);
        FUZZ_CHECK(cusehub_new(&params, fx->store, fx->crng, fx->seeder, &cb, &fx->hub) == 0);
        /* DEVNAMEs are unique among live connections, and two fixtures
         * can live at once. */
        generation++;
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                Device *d = &fx->devs[k];
                /* /dev/truerandom's group: the gid of the PRIV and UNPRIV
                 * callers; OTHER_NS is no member. */
                CuseDevParams dp = { .name = d->name, .uid = (uid_t) -1,
                                     .gid = k == CUSEDEV_TRNG ? CUSEFIX_GROUP : (gid_t) -1, .mode = 0666 };
                int64_t unique;
                int fd;

                snprintf(d->name, sizeof(d->name), "%s-%u", dev_names[k], generation);

                d->kind = (CuseDevKind) k;
                d->entropy_count = -1;
                FUZZ_CHECK(fk_new(&d->fk, &fd) == 0);
                FUZZ_CHECK(cusedev_new(fx->hub, d->kind, &dp, fd, &fk_daemon_io, &d->dev) == 0);
                unique = fk_send_init(d->fk);
                FUZZ_CHECK(unique > 0);
                d->last_unique = (uint64_t) unique;
                /* The kernel handles the reply inside the daemon's write, so
                 * the device is up once the request is processed. */
                FUZZ_CHECK(cusedev_process(d->dev) == 0);
                FUZZ_CHECK(fk_init_result(d->fk, &d->init) == 0);
        }
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                FkMsg m;
                while (fk_recv(fx->devs[k].fk, 0, &m) == 0)
                        FUZZ_CHECK(m.kind == FK_MSG_REPLY && m.opcode == CUSE_INIT && m.error == 0);
        }
        fx->loop_acted = true;
        cusefix_settle(fx);
        return fx;
}

static void check_all_answered(CuseFix *fx) {
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++)
                for (size_t i = 0; i < CUSEFIX_REQUESTS; i++)
                        FUZZ_CHECK(!fx->devs[k].requests[i].live);
}

/* A stray INTERRUPT waits in libfuse until a request takes it away
 * (answering it EAGAIN); one still there when the session ends is leaked
 * by libfuse 3.14. */
static void take_strays(CuseFix *fx) {
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++)
                for (Device *d = &fx->devs[k]; d->strays > 0; d->strays--) {
                        cusefix_settle(fx);
                        FUZZ_CHECK(cusefix_other(fx, d->kind, FUSE_GETATTR, 1, CUSEFIX_PRIV, NULL, 0));
                }
        cusefix_settle(fx);
}

/* SIGTERM: every waiting read gets its one reply; then the last closes. */
static void fixture_free(CuseFix *fx) {
        cusehub_shutdown(fx->hub, EIO);
        fx->shut_down = true;
        fx->loop_acted = true;
        cusefix_settle(fx);
        check_all_answered(fx);
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++)
                while (cusefix_release(fx, (CuseDevKind) k, 0))
                        ;
        take_strays(fx);
        check_all_answered(fx);

        fx->hub = cusehub_free(fx->hub);
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++)
                fk_free(fx->devs[k].fk);
        seeder_free(fx->seeder);
        crng_free(fx->crng);
        store_free(fx->store);
        free(fx);
}

/* Back to the state fixture_new() leaves (seeded or not), with the
 * processes gone. False when that cannot be had: credit an unseeded CRNG
 * keeps. */
static bool fixture_reset(CuseFix *fx) {
        uint8_t block[STORE_BLOCK_SIZE];

        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                Device *d = &fx->devs[k];

                /* The readers go away: their reads end EINTR. */
                for (size_t i = 0; i < CUSEFIX_REQUESTS; i++) {
                        Request *q = &d->requests[i];

                        if (!q->live || q->interrupted)
                                continue;
                        FUZZ_CHECK(fk_send_interrupt(d->fk, q->unique) > 0);
                        q->interrupted = true;
                }
                cusefix_settle(fx);
                while (cusefix_release(fx, d->kind, 0))
                        ;
                cusefix_settle(fx);
        }
        take_strays(fx);
        check_all_answered(fx);

        if (!crng_is_seeded(fx->crng) && crng_pending_credit(fx->crng) > 0)
                return false;
        if (reseed_pending(fx)) {
                cusefix_put_blocks(fx, 1);
                cusefix_settle(fx);
                FUZZ_CHECK(!reseed_pending(fx));
        }
        while (store_take(fx->store, block, 0) == 0)
                ;
        fx->loop_acted = true;
        cusehub_set_trng_open(fx->hub, true);
        cusefix_set_max_parked(fx, CUSEFIX_MAX_PARKED);
        fx->next_block = 0;
        memset(fx->served, 0, sizeof(fx->served));
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                Device *d = &fx->devs[k];

                d->next_kh = 0;
                d->last_answered = 0;
                d->no_poll = false;
                d->entropy_count = -1;
        }
        cusefix_settle(fx);
        return true;
}

/* One fixture of each kind kept between inputs: creating one costs four
 * libfuse sessions with their 1 MiB buffers. */
static CuseFix *pool[2];

CuseFix *cusefix_begin(bool seeded) {
        CuseFix *fx = pool[seeded];

        if (fx) {
                pool[seeded] = NULL;
                return fx;
        }
        fx = fixture_new();
        if (seeded) {
                cusefix_put_blocks(fx, 1);
                cusefix_settle(fx);
                FUZZ_CHECK(fx->seeded_events == 1);
                FUZZ_CHECK(fixture_reset(fx));
        }
        return fx;
}

void cusefix_end(CuseFix *fx) {
        bool seeded;

        /* Credit kept by an unseeded CRNG cannot be taken back: this
         * fixture is done for, so it ends as the daemon does on SIGTERM,
         * with whatever still waits. */
        if (!crng_is_seeded(fx->crng) && crng_pending_credit(fx->crng) > 0) {
                fixture_free(fx);
                return;
        }
        FUZZ_CHECK(fixture_reset(fx));
        seeded = crng_is_seeded(fx->crng);
        if (pool[seeded])
                fixture_free(fx);
        else
                pool[seeded] = fx;
}

/* ------------------------------------------------------------------ */
/* requests                                                            */

bool cusefix_open(CuseFix *fx, CuseDevKind kind, CuseFixCaller caller, int flags) {
        Device *d = &fx->devs[kind];
        FkCaller c = caller_of(caller, false);
        Request *q;
        int slot = -1;

        for (int i = 0; i < CUSEFIX_FILES; i++)
                if (!d->files[i].live) {
                        bool taken = false;
                        for (size_t j = 0; j < CUSEFIX_REQUESTS; j++)
                                taken |= d->requests[j].live && d->requests[j].opcode == FUSE_OPEN &&
                                         d->requests[j].slot == i;
                        if (!taken) {
                                slot = i;
                                break;
                        }
                }
        if (slot < 0 || !request_room(d))
                return false;
        q = request_add(d, fk_send_open(d->fk, &c, flags), FUSE_OPEN);
        q->slot = slot;
        q->flags = flags;
        q->caller = caller;
        return true;
}

bool cusefix_read(CuseFix *fx, CuseDevKind kind, unsigned file, uint32_t size, bool toggle_nonblock) {
        Device *d = &fx->devs[kind];
        File *f = file_pick(d, file);
        uint32_t max = d->init.max_read > PAGE ? d->init.max_read : PAGE;
        FkCaller c;
        Request *q;

        if (!f || !request_room(d))
                return false;
        /* The kernel splits reads into max_read and 32-page chunks. */
        max = max < MAX_PAGES * PAGE ? max : MAX_PAGES * PAGE;
        if (size > max)
                size = max;
        if (toggle_nonblock)
                f->flags ^= O_NONBLOCK;
        c = caller_of(f->caller, false);
        q = request_add(d, fk_send_read(d->fk, &c, f->fh, size, f->flags), FUSE_READ);
        q->size = size;
        q->flags = f->flags;
        q->caller = f->caller;
        return true;
}

bool cusefix_write(CuseFix *fx, CuseDevKind kind, unsigned file, const void *data, uint32_t len) {
        Device *d = &fx->devs[kind];
        File *f = file_pick(d, file);
        FkCaller c;
        Request *q;

        if (!f || !request_room(d))
                return false;
        if (len > cusefix_max_write(fx, kind))
                len = cusefix_max_write(fx, kind);
        c = caller_of(f->caller, false);
        q = request_add(d, fk_send_write(d->fk, &c, f->fh, data, len, f->flags), FUSE_WRITE);
        q->size = len;
        q->caller = f->caller;
        return true;
}

bool cusefix_release(CuseFix *fx, CuseDevKind kind, unsigned file) {
        Device *d = &fx->devs[kind];
        File *f = file_pick(d, file);

        if (!f || !request_room(d))
                return false;
        request_add(d, fk_send_release(d->fk, f->fh, f->flags), FUSE_RELEASE);
        /* The last close: the handle is dead from here on. */
        f->live = false;
        return true;
}

bool cusefix_poll(CuseFix *fx, CuseDevKind kind, unsigned file, bool schedule, uint32_t events) {
        Device *d = &fx->devs[kind];
        File *f = file_pick(d, file);
        FkCaller c;

        if (!f || d->no_poll || !request_room(d))
                return false;
        c = caller_of(f->caller, false);
        request_add(d, fk_send_poll(d->fk, &c, f->fh, f->kh, schedule ? FUSE_POLL_SCHEDULE_NOTIFY : 0, events),
                    FUSE_POLL)
                ->caller = f->caller;
        return true;
}

bool cusefix_ioctl(CuseFix *fx, CuseDevKind kind, unsigned file, uint32_t cmd, bool compat, const void *in,
                   uint32_t in_len, uint32_t out_size) {
        Device *d = &fx->devs[kind];
        File *f = file_pick(d, file);
        uint32_t flags = FUSE_IOCTL_UNRESTRICTED | (compat ? FUSE_IOCTL_COMPAT | FUSE_IOCTL_32BIT : 0);
        FkCaller c;
        Request *q;

        if (!f || !request_room(d))
                return false;
        if (in_len > MAX_PAGES * PAGE)
                in_len = MAX_PAGES * PAGE;
        if (out_size > MAX_PAGES * PAGE)
                out_size = MAX_PAGES * PAGE;
        c = caller_of(f->caller, compat);
        q = request_add(d,
                        fk_send_ioctl(d->fk, &c, f->fh, cmd, compat ? FK_USER_BASE_COMPAT : FK_USER_BASE, flags, in,
                                      in_len, out_size),
                        FUSE_IOCTL);
        q->caller = f->caller;
        q->cmd = cmd;
        q->fh = f->fh;
        q->compat = compat;
        q->out_size = out_size;
        return true;
}

uint8_t *cusefix_user(CuseFix *fx) {
        return fx->user;
}

bool cusefix_interrupt(CuseFix *fx, CuseDevKind kind, unsigned pick) {
        Device *d = &fx->devs[kind];
        unsigned waiting = 0;

        for (size_t i = 0; i < CUSEFIX_REQUESTS; i++)
                waiting += d->requests[i].live;
        if (waiting == 0)
                return false;
        pick %= waiting;
        for (size_t i = 0; i < CUSEFIX_REQUESTS; i++) {
                Request *q = &d->requests[i];
                int64_t r;

                if (!q->live || pick-- != 0)
                        continue;
                r = fk_send_interrupt(d->fk, q->unique);
                /* -ENOSYS: the daemon said it does not do interrupts. */
                FUZZ_CHECK(r > 0 || r == -ENOSYS);
                q->interrupted = r > 0;
                return r > 0;
        }
        abort();
}

bool cusefix_interrupt_stray(CuseFix *fx, CuseDevKind kind, bool early) {
        Device *d = &fx->devs[kind];
        struct {
                struct fuse_in_header h;
                struct fuse_interrupt_in in;
        } msg;
        uint64_t target = early ? d->last_unique + 2 : d->last_answered;
        Request *q;

        if (target == 0 || (!early && request_find(d, target)))
                return false;
        /* Early: it is meant for a read sent right after it. */
        if (early && (!file_pick(d, 0) || !request_room(d)))
                return false;
        memset(&msg, 0, sizeof(msg));
        msg.h.len = sizeof(msg);
        msg.h.opcode = FUSE_INTERRUPT;
        msg.h.unique = target | 1;
        msg.in.unique = target;
        FUZZ_CHECK(fk_send_bytes(d->fk, &msg, sizeof(msg)) == 0);
        if (!early) {
                d->strays++;
                return true;
        }
        FUZZ_CHECK(cusefix_read(fx, kind, 0, 64, false));
        q = request_find(d, target);
        FUZZ_CHECK(q);
        q->interrupted = true;
        return true;
}

bool cusefix_other(CuseFix *fx, CuseDevKind kind, uint32_t opcode, uint64_t nodeid, CuseFixCaller caller,
                   const void *body, size_t len) {
        Device *d = &fx->devs[kind];
        FkCaller c = caller_of(caller, false);
        uint8_t padded[OTHER_BODY_MAX + 2] = { 0 };
        int64_t unique;

        switch (opcode) {
        case FUSE_OPEN:
        case FUSE_READ:
        case FUSE_WRITE:
        case FUSE_RELEASE:
        case FUSE_IOCTL:
        case FUSE_POLL:
        case FUSE_INTERRUPT:
        /* The kernel sends it only to answer a retrieve, which CUSE
         * devices never ask for. */
        case FUSE_NOTIFY_REPLY:
        /* Once per connection, and the fake takes any reply to it as the
         * answer that decides whether the device exists. */
        case CUSE_INIT:
                return false;
        default:
                break;
        }
        if (!request_room(d))
                return false;
        if (len > OTHER_BODY_MAX)
                len = OTHER_BODY_MAX;
        if (len > 0)
                memcpy(padded, body, len);
        /* Whole structs, and a name or two that end. */
        len = (len > OTHER_BODY_MIN ? len : OTHER_BODY_MIN) + 2;
        unique = fk_send(d->fk, opcode, &c, nodeid, padded, len);
        if (opcode == FUSE_FORGET || opcode == FUSE_BATCH_FORGET) {
                /* Never answered. */
                FUZZ_CHECK(unique > 0);
                d->last_unique = (uint64_t) unique;
                return true;
        }
        request_add(d, unique, opcode);
        return true;
}

/* ------------------------------------------------------------------ */
/* the loop's side                                                     */

void cusefix_put_blocks(CuseFix *fx, unsigned n) {
        for (unsigned i = 0; i < n && fx->next_block < BLOCKS_MAX; i++) {
                uint8_t block[STORE_BLOCK_SIZE];

                make_block(fx->next_block, block);
                if (store_put(fx->store, block, 320000 + i, 0, store_epoch(fx->store)) < 0)
                        break;
                fx->next_block++;
        }
        cusehub_pump(fx->hub);
        fx->loop_acted = true;
}

void cusefix_set_trng_open(CuseFix *fx, bool open) {
        /* As the daemon's turn: decided, then its one pump. */
        cusehub_set_trng_open(fx->hub, open);
        cusehub_pump(fx->hub);
        fx->loop_acted = true;
}

void cusefix_request_reseed(CuseFix *fx) {
        bool had_block = store_fill(fx->store) > 0, seeded = crng_is_seeded(fx->crng);

        /* As truerandomctl reseed: refused before the first seed; served
         * now if the store has a block, else pending. */
        FUZZ_CHECK(seeder_trigger(fx->seeder, SEED_TRIGGER_CONTROL) == (seeded ? 0 : -ENODATA));
        cusehub_pump(fx->hub);
        fx->loop_acted = true;
        FUZZ_CHECK(reseed_pending(fx) == (seeded && !had_block));
}


void cusefix_set_max_parked(CuseFix *fx, unsigned max_parked) {
        CuseHubLimits l = cusefix_limits(max_parked);

        /* The hub keeps its bounds when given ones it cannot meet. */
        FUZZ_CHECK((cusehub_set_limits(fx->hub, &l) == 0) == (max_parked >= 2));
        fx->loop_acted = true;
}

uint32_t cusefix_max_write(CuseFix *fx, CuseDevKind kind) {
        uint32_t max = fx->devs[kind].init.max_write;

        max = max > PAGE ? max : PAGE;
        return max < MAX_PAGES * PAGE ? max : MAX_PAGES * PAGE;
}

bool cusefix_seeded(const CuseFix *fx) {
        return fx->seeded_events > 0;
}

int cusefix_last_entropy_count(const CuseFix *fx, CuseDevKind kind) {
        return fx->devs[kind].entropy_count;
}
