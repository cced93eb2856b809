/* test-control.c - the control socket served by a real sd-event loop in
 * this process, on a temporary path, with stub callbacks and fake sources.
 *
 * The peer's uid comes from SO_PEERCRED, which always tells the truth; the
 * test links with -Wl,--wrap=getsockopt to make the daemon see the uid each
 * test asks for (root or not), and with -Wl,--wrap=bind to play a user who
 * swaps the new socket for a symbolic link. Export threads never call
 * cmocka: what they see is recorded and checked here. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include <systemd/sd-event.h>

#include "daemon/control/commands.h"
#include "daemon/control/control.h"
#include "fakeproc.h"
#include "proto/ctlproto.h"

#define STUB_STATUS "{\"version\":1,\"stub\":true}"
#define FILE_SIZE 10000U

/* ---- the peer's uid ---------------------------------------------------------- */

/* The peer as the daemon sees it: this process, shown in a made-up /proc
 * with peer_uid, in the daemon's user namespace or (peer_ns) another. */
static uid_t peer_uid;
static FakeProcNs peer_ns = FAKEPROC_NS_SAME;
static FakeProc *fake_proc;

int __real_getsockopt(int fd, int level, int name, void *value, socklen_t *len);
int __wrap_getsockopt(int fd, int level, int name, void *value, socklen_t *len);
int __wrap_getsockopt(int fd, int level, int name, void *value, socklen_t *len) {
        int r = __real_getsockopt(fd, level, name, value, len);

        if (r == 0 && level == SOL_SOCKET && name == SO_PEERCRED) {
                struct ucred *cred = value;

                cred->uid = peer_uid;
                if (fake_proc && fakeproc_add(fake_proc, cred->pid, peer_uid, 0, peer_ns) < 0)
                        cred->pid = 0;
        }
        return r;
}

/* ---- a swap right after bind() ------------------------------------------------ */

/* When set, the socket bind() made is replaced at once by a symbolic link
 * to this file: what the owner of the socket's directory could do. */
static const char *swap_target;

int __real_bind(int fd, const struct sockaddr *sa, socklen_t len);
int __wrap_bind(int fd, const struct sockaddr *sa, socklen_t len);
int __wrap_bind(int fd, const struct sockaddr *sa, socklen_t len) {
        int r = __real_bind(fd, sa, len);
        const char *path = ((const struct sockaddr_un *) sa)->sun_path;

        if (r == 0 && swap_target && sa->sa_family == AF_UNIX) {
                assert_int_equal(unlink(path), 0);
                assert_int_equal(symlink(swap_target, path), 0);
        }
        return r;
}

/* ---- fake sources -------------------------------------------------------------- */

static atomic_int fake_opens, fake_closes, fake_reads;
static const char *_Atomic fake_seen_path;

typedef struct Fake {
        unsigned instance;
        uint64_t pos;
} Fake;

/* Sample pos of the instance-th opening: a row that did not start from a
 * fresh open, or that lost or repeated samples, shows. */
static uint8_t fake_sample(unsigned instance, uint64_t pos) {
        return (uint8_t) (instance * 7U + pos * 13U + (pos >> 8));
}

static int fake_open(const SourceParams *p, void **ret) {
        Fake *f = calloc(1, sizeof(*f));

        if (!f)
                return -ENOMEM;
        atomic_store(&fake_seen_path, p ? p->path : NULL);
        f->instance = (unsigned) atomic_fetch_add(&fake_opens, 1);
        *ret = f;
        return 0;
}

/* Short reads of 333: the export must not assume full chunks. */
static ssize_t fake_read(void *state, uint8_t *buf, size_t n) {
        Fake *f = state;

        atomic_fetch_add(&fake_reads, 1);
        n = n < 333 ? n : 333;
        for (size_t i = 0; i < n; i++)
                buf[i] = fake_sample(f->instance, f->pos++);
        return (ssize_t) n;
}

/* Nothing now every other call, as rdseed under contention. */
static ssize_t flaky_read(void *state, uint8_t *buf, size_t n) {
        if (atomic_fetch_add(&fake_reads, 1) % 2 == 0)
                return -EAGAIN;
        return fake_read(state, buf, n);
}

static ssize_t broken_read(void *state, uint8_t *buf, size_t n) {
        Fake *f = state;

        if (f->pos >= 100)
                return -EIO;
        return fake_read(state, buf, 100 - f->pos < n ? 100 - f->pos : n);
}

static int nodev_open(const SourceParams *p, void **ret) {
        return -ENODEV;
}

/* Opens once, then fails its self-test (a missed clock step), as a jitter
 * source on a machine whose clock changed under it would. */
static int selftest_open(const SourceParams *p, void **ret) {
        if (atomic_load(&fake_opens) == 0)
                return fake_open(p, ret);
        if (p && p->selftest)
                *p->selftest = (SelftestResult){ .run = true, .reason = SELFTEST_CONSTANT_LOW_BIT, .samples = 4096,
                                                 .low_bit = 4092 };
        return -EDOM;
}

static uint32_t fake_max_credit(void *state) {
        return UINT32_MAX;
}

static void fake_close(void *state) {
        atomic_fetch_add(&fake_closes, 1);
        free(state);
}

static const SourceOps fake_ops = { .name = "fake", .defaults = { .credit_mbits = 1000 }, .open = fake_open,
                                    .read = fake_read, .max_credit = fake_max_credit, .close = fake_close };
static const SourceOps flaky_ops = { .name = "flaky", .defaults = { .credit_mbits = 1000 }, .open = fake_open,
                                     .read = flaky_read, .max_credit = fake_max_credit, .close = fake_close };
static const SourceOps broken_ops = { .name = "broken", .defaults = { .credit_mbits = 1000 }, .open = fake_open,
                                      .read = broken_read, .max_credit = fake_max_credit, .close = fake_close };
static const SourceOps nodev_ops = { .name = "nodev", .defaults = { .credit_mbits = 1000 }, .open = nodev_open,
                                     .read = fake_read, .max_credit = fake_max_credit, .close = fake_close };
static const SourceOps selftest_ops = { .name = "selftest", .defaults = { .credit_mbits = 1000 }, .open = selftest_open,
                                        .read = fake_read, .max_credit = fake_max_credit, .close = fake_close };

/* ---- the daemon's side ------------------------------------------------------------ */

typedef struct Env {
        sd_event *event;
        Control *control;
        char dir[64];
        char path[128];
        char file[128];
        char *borrowed;           /* the path raw_source lends out */
        uint8_t data[FILE_SIZE];
        int reseeds;
        int reseed_result;
        int raw_calls;
        unsigned looks_left;      /* what stub_budget grants */
        unsigned budget_asks;
} Env;

/* The daemon's budget of looks at /proc (ControlCallbacks.proc_budget). */
static bool stub_budget(void *userdata, uint32_t uid) {
        Env *e = userdata;

        assert_int_not_equal(uid, 0); /* root's charge needs no look */
        e->budget_asks++;
        if (e->looks_left == 0)
                return false;
        e->looks_left--;
        return true;
}

static int stub_status(void *userdata, char **ret) {
        *ret = strdup(STUB_STATUS);
        return *ret ? 0 : -ENOMEM;
}

/* The daemon's commands (ControlCallbacks.command): reseed, counted. */
static int stub_command(void *userdata, const CtlRequest *req, char **ret_payload, char *text, size_t text_size) {
        Env *e = userdata;

        if (strcmp(req->command->name, "reseed") != 0)
                return -EOPNOTSUPP;
        if (e->reseed_result < 0)
                return e->reseed_result;
        e->reseeds++;
        return 0;
}

static int stub_raw_source(void *userdata, const char *name, const SourceOps **ret_ops, SourceParams *ret_params) {
        Env *e = userdata;
        static const struct {
                const char *name;
                const SourceOps *ops;
        } table[] = {
                { "fake", &fake_ops },
                { "flaky", &flaky_ops },
                { "broken", &broken_ops },
                { "nodev", &nodev_ops },
                { "selftest", &selftest_ops },
                { "file", &source_file },
        };

        e->raw_calls++;
        if (strcmp(name, "off") == 0)
                return -ENODEV;
        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                if (strcmp(name, table[i].name) == 0) {
                        *ret_ops = table[i].ops;
                        *ret_params = (SourceParams){ .path = e->borrowed };
                        return 0;
                }
        return -ENOENT;
}

static void write_file(const char *path, const uint8_t *data, size_t n) {
        FILE *f = fopen(path, "we");

        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, n, f), n);
        assert_int_equal(fclose(f), 0);
}

static int setup(void **state) {
        Env *e = calloc(1, sizeof(*e));
        ControlCallbacks cb = { stub_status, stub_command, stub_raw_source, NULL, NULL, NULL };
        uint64_t x = 0x243f6a8885a308d3ULL;

        assert_non_null(e);
        strcpy(e->dir, "/tmp/test-control-XXXXXX");
        assert_non_null(mkdtemp(e->dir));
        /* A directory below that does not exist yet: control creates it. */
        snprintf(e->path, sizeof(e->path), "%s/run/control", e->dir);
        snprintf(e->file, sizeof(e->file), "%s/samples.bin", e->dir);
        for (size_t i = 0; i < FILE_SIZE; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                e->data[i] = (uint8_t) x;
        }
        write_file(e->file, e->data, FILE_SIZE);
        e->borrowed = strdup(e->file);
        assert_non_null(e->borrowed);

        atomic_store(&fake_opens, 0);
        atomic_store(&fake_closes, 0);
        atomic_store(&fake_reads, 0);
        peer_uid = 0;
        peer_ns = FAKEPROC_NS_SAME;
        assert_int_equal(fakeproc_new(e->dir, &fake_proc), 0);
        cb.proc_root = fakeproc_root(fake_proc);
        cb.proc_budget = stub_budget;
        e->looks_left = UINT_MAX;
        assert_int_equal(sd_event_new(&e->event), 0);
        cb.userdata = e;
        assert_int_equal(control_new(e->event, e->path, &cb, &e->control), 0);
        *state = e;
        return 0;
}

static int teardown(void **state) {
        Env *e = *state;
        char run[160];

        e->control = control_free(e->control);
        fake_proc = fakeproc_free(fake_proc);
        /* control_free() joined every export: each open was closed. */
        assert_int_equal(atomic_load(&fake_opens), atomic_load(&fake_closes));
        sd_event_unref(e->event);
        unlink(e->file);
        snprintf(run, sizeof(run), "%s/run", e->dir);
        rmdir(run);
        rmdir(e->dir);
        free(e->borrowed);
        free(e);
        return 0;
}

/* ---- the client's side --------------------------------------------------------------- */

static int client_connect(Env *e) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        strcpy(sa.sun_path, e->path);
        assert_int_equal(connect(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        return fd;
}

static void client_send(int fd, const void *msg, size_t n) {
        assert_int_equal(send(fd, msg, n, MSG_NOSIGNAL), (ssize_t) n);
}

/* Runs the loop until a packet (or the end) arrives: its length, 0 at the end. */
static size_t client_recv(Env *e, int fd, uint8_t *buf) {
        for (int i = 0; i < 30000; i++) {
                ssize_t n = recv(fd, buf, CTL_REPLY_MAX, MSG_DONTWAIT);
                if (n >= 0)
                        return (size_t) n;
                assert_true(errno == EAGAIN);
                assert_true(sd_event_run(e->event, 10000) >= 0);
        }
        fail_msg("no reply");
        return 0;
}

static void pump(Env *e, int rounds) {
        for (int i = 0; i < rounds; i++)
                assert_true(sd_event_run(e->event, 1000) >= 0);
}

/* One request, its first reply parsed into *ret (pointing into buf). */
static int ask(Env *e, uid_t uid, const char *request, uint8_t *buf, CtlReply *ret) {
        int fd;

        peer_uid = uid;
        fd = client_connect(e);
        client_send(fd, request, strlen(request));
        assert_int_equal(ctl_reply_parse(buf, client_recv(e, fd, buf), ret), 0);
        return fd;
}

static void assert_error(const CtlReply *r, CtlError code) {
        assert_int_equal(r->kind, CTL_REPLY_ERROR);
        if (r->error != code)
                fail_msg("error %s (%.*s), expected %s", ctl_error_to_string(r->error), (int) r->payload_size,
                         (const char *) r->payload, ctl_error_to_string(code));
        assert_true(r->payload_size > 0);
}

/* After a final reply the daemon closes the connection. */
static void assert_closed(Env *e, int fd, uint8_t *buf) {
        assert_int_equal(client_recv(e, fd, buf), 0);
        close(fd);
}

/* Reads a raw export after its start: data into out, returns the count;
 * *ret gets the final reply. */
static size_t collect(Env *e, int fd, uint8_t *buf, uint8_t *out, size_t max, CtlReply *ret) {
        size_t got = 0;

        for (;;) {
                size_t n = client_recv(e, fd, buf);
                assert_true(n > 0);
                assert_int_equal(ctl_reply_parse(buf, n, ret), 0);
                if (ret->kind != CTL_REPLY_DATA)
                        return got;
                assert_true(got + ret->payload_size <= max);
                memcpy(out + got, ret->payload, ret->payload_size);
                got += ret->payload_size;
        }
}

/* ---- tests ---------------------------------------------------------------------------- */

static void test_status_anyone(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX];
        CtlReply r;
        uid_t uids[] = { 0, 1000, 65534 };

        for (size_t i = 0; i < sizeof(uids) / sizeof(uids[0]); i++) {
                int fd = ask(e, uids[i], "truerandom-control/1 status", buf, &r);
                assert_int_equal(r.kind, CTL_REPLY_OK);
                assert_int_equal(r.payload_size, strlen(STUB_STATUS));
                assert_memory_equal(r.payload, STUB_STATUS, strlen(STUB_STATUS));
                assert_closed(e, fd, buf);
        }
}

static void test_socket(void **state) {
        Env *e = *state;
        ControlCallbacks cb = { stub_status, stub_command, stub_raw_source, e, fakeproc_root(fake_proc), NULL };
        Control *second = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct stat st;
        int fd;

        /* Mode 0666 whatever the umask: privilege is per request. */
        assert_int_equal(stat(e->path, &st), 0);
        assert_true(S_ISSOCK(st.st_mode));
        assert_int_equal(st.st_mode & 07777, 0666);
        /* A second daemon does not steal a live socket. */
        assert_int_equal(control_new(e->event, e->path, &cb, &second), -EADDRINUSE);
        assert_int_equal(stat(e->path, &st), 0);

        /* The socket goes with control_free(); a stale one is replaced. */
        e->control = control_free(e->control);
        assert_int_equal(stat(e->path, &st), -1);
        fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
        strcpy(sa.sun_path, e->path);
        assert_int_equal(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        close(fd);
        assert_int_equal(control_new(e->event, e->path, &cb, &e->control), 0);
        test_status_anyone(state);
}

/* The mode is set at bind(), not by a chmod() of the path afterwards: a
 * link swapped in between (the run directory may belong to the daemon's own
 * unprivileged user) leaves its target alone, and the daemon refuses to
 * serve on a path that is not its socket. */
static void test_socket_swapped_for_link(void **state) {
        Env *e = *state;
        ControlCallbacks cb = { stub_status, stub_command, stub_raw_source, e, fakeproc_root(fake_proc), NULL };
        char victim[160];
        struct stat st;

        snprintf(victim, sizeof(victim), "%s/victim", e->dir);
        write_file(victim, (const uint8_t *) "secret", 6);
        assert_int_equal(chmod(victim, 0600), 0);
        e->control = control_free(e->control);

        swap_target = victim;
        assert_int_equal(control_new(e->event, e->path, &cb, &e->control), -EEXIST);
        swap_target = NULL;
        assert_null(e->control);
        assert_int_equal(stat(victim, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0600);

        assert_int_equal(unlink(e->path), 0);
        assert_int_equal(unlink(victim), 0);
        assert_int_equal(control_new(e->event, e->path, &cb, &e->control), 0);
}

static void test_reseed_needs_root(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX];
        CtlReply r;
        int fd;

        fd = ask(e, 1000, "truerandom-control/1 reseed", buf, &r);
        assert_error(&r, CTL_ERROR_PERMISSION);
        assert_closed(e, fd, buf);
        assert_int_equal(e->reseeds, 0);

        fd = ask(e, 0, "truerandom-control/1 reseed", buf, &r);
        assert_int_equal(r.kind, CTL_REPLY_OK);
        assert_closed(e, fd, buf);
        assert_int_equal(e->reseeds, 1);

        e->reseed_result = -ENODATA;
        fd = ask(e, 0, "truerandom-control/1 reseed", buf, &r);
        assert_error(&r, CTL_ERROR_NO_DATA);
        assert_closed(e, fd, buf);
}

static void test_raw_needs_root(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX];
        CtlReply r;
        int fd;

        fd = ask(e, 1000, "truerandom-control/1 raw source=fake samples=10", buf, &r);
        assert_error(&r, CTL_ERROR_PERMISSION);
        assert_closed(e, fd, buf);
        /* Refused before the name was even looked up. */
        fd = ask(e, 1000, "truerandom-control/1 raw source=nosuch", buf, &r);
        assert_error(&r, CTL_ERROR_PERMISSION);
        assert_closed(e, fd, buf);
        assert_int_equal(e->raw_calls, 0);
        assert_int_equal(atomic_load(&fake_opens), 0);
}

static void test_raw_file_exact(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX], out[FILE_SIZE];
        CtlReply r;
        int fd;

        fd = ask(e, 0, "truerandom-control/1 raw source=file samples=4321", buf, &r);
        assert_int_equal(r.kind, CTL_REPLY_START);
        assert_int_equal(r.samples, 4321);
        assert_int_equal(r.rows, 1);
        assert_int_equal(collect(e, fd, buf, out, sizeof(out), &r), 4321);
        assert_int_equal(r.kind, CTL_REPLY_OK);
        assert_memory_equal(out, e->data, 4321);
        assert_closed(e, fd, buf);
}

static void test_raw_restart_rows(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX];
        uint8_t *out = malloc(CTL_RESTART_ROWS * CTL_RESTART_SAMPLES);
        CtlReply r;
        int fd;

        assert_non_null(out);
        fd = ask(e, 0, "truerandom-control/1 raw source=fake samples=1000 rows=1000", buf, &r);
        assert_int_equal(r.kind, CTL_REPLY_START);
        assert_int_equal(r.rows, 1000);
        assert_int_equal(collect(e, fd, buf, out, CTL_RESTART_ROWS * CTL_RESTART_SAMPLES, &r),
                         CTL_RESTART_ROWS * CTL_RESTART_SAMPLES);
        assert_int_equal(r.kind, CTL_REPLY_OK);
        assert_closed(e, fd, buf);
        /* Row i is the first 1000 samples of the i-th opening, row-major,
         * as ea_restart reads it. */
        assert_int_equal(atomic_load(&fake_opens), 1000);
        for (unsigned row = 0; row < CTL_RESTART_ROWS; row++)
                for (unsigned j = 0; j < CTL_RESTART_SAMPLES; j++)
                        if (out[row * CTL_RESTART_SAMPLES + j] != fake_sample(row, j))
                                fail_msg("row %u sample %u", row, j);
        /* The export works on its own copy of the parameters: a reload may
         * free the configuration's strings while it runs. */
        assert_ptr_not_equal(atomic_load(&fake_seen_path), e->borrowed);
        free(out);
}

static void test_raw_file_restart(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX], out[30];
        CtlReply r;
        int fd;

        fd = ask(e, 0, "truerandom-control/1 raw source=file samples=10 rows=3", buf, &r);
        assert_int_equal(r.kind, CTL_REPLY_START);
        assert_int_equal(collect(e, fd, buf, out, sizeof(out), &r), 30);
        assert_int_equal(r.kind, CTL_REPLY_OK);
        for (int row = 0; row < 3; row++)
                assert_memory_equal(out + row * 10, e->data, 10);
        assert_closed(e, fd, buf);
}

static void test_raw_sources_refused(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX];
        CtlReply r;
        int fd;

        fd = ask(e, 0, "truerandom-control/1 raw source=nosuch", buf, &r);
        assert_error(&r, CTL_ERROR_UNKNOWN_SOURCE);
        assert_non_null(memmem(r.payload, r.payload_size, "nosuch", 6));
        assert_closed(e, fd, buf);
        fd = ask(e, 0, "truerandom-control/1 raw source=off", buf, &r);
        assert_error(&r, CTL_ERROR_UNAVAILABLE);
        assert_closed(e, fd, buf);
        /* A source that cannot be opened here: refused before "start". */
        fd = ask(e, 0, "truerandom-control/1 raw source=nodev", buf, &r);
        assert_error(&r, CTL_ERROR_UNAVAILABLE);
        assert_closed(e, fd, buf);
}

/* A restart capture whose source fails its self-test at a reopen ends
 * there, and says which check failed with its figure. */
static void test_raw_selftest_fails(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX], out[30];
        const char *why = "row 2: sampler self-test failed: low bit of the reduced delta 4092 of 4096";
        CtlReply r;
        int fd;

        fd = ask(e, 0, "truerandom-control/1 raw source=selftest samples=10 rows=3", buf, &r);
        assert_int_equal(r.kind, CTL_REPLY_START);
        assert_int_equal(collect(e, fd, buf, out, sizeof(out), &r), 10);
        assert_error(&r, CTL_ERROR_UNAVAILABLE);
        if (!memmem(r.payload, r.payload_size, why, strlen(why)))
                fail_msg("%.*s", (int) r.payload_size, (const char *) r.payload);
        assert_closed(e, fd, buf);
}

static void test_raw_source_ends(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX], out[FILE_SIZE];
        CtlReply r;
        int fd;

        write_file(e->file, e->data, 100);
        fd = ask(e, 0, "truerandom-control/1 raw source=file samples=1000", buf, &r);
        assert_int_equal(r.kind, CTL_REPLY_START);
        assert_int_equal(collect(e, fd, buf, out, sizeof(out), &r), 100);
        assert_error(&r, CTL_ERROR_NO_DATA);
        assert_memory_equal(out, e->data, 100);
        assert_closed(e, fd, buf);

        fd = ask(e, 0, "truerandom-control/1 raw source=broken samples=1000", buf, &r);
        assert_int_equal(r.kind, CTL_REPLY_START);
        assert_int_equal(collect(e, fd, buf, out, sizeof(out), &r), 100);
        assert_error(&r, CTL_ERROR_FAILED);
        assert_closed(e, fd, buf);
}

static void test_raw_flaky(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX], out[2000];
        CtlReply r;
        int fd;

        fd = ask(e, 0, "truerandom-control/1 raw source=flaky samples=2000", buf, &r);
        assert_int_equal(r.kind, CTL_REPLY_START);
        assert_int_equal(collect(e, fd, buf, out, sizeof(out), &r), 2000);
        assert_int_equal(r.kind, CTL_REPLY_OK);
        for (unsigned j = 0; j < 2000; j++)
                assert_int_equal(out[j], fake_sample(0, j));
        assert_closed(e, fd, buf);
}

static void test_malformed_then_served(void **state) {
        static const struct {
                const char *msg;
                size_t size;
                CtlError code;
        } bad[] = {
                { "hello", 5, CTL_ERROR_MALFORMED },
                { "truerandom-control/2 status", 27, CTL_ERROR_VERSION },
                { "truerandom-control/1 status\0\xff", 29, CTL_ERROR_MALFORMED },
                { "truerandom-control/1 raw source=fake samples=0", 46, CTL_ERROR_MALFORMED },
                { "\n", 1, CTL_ERROR_MALFORMED },
                { "", 0, CTL_ERROR_MALFORMED },
        };
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX], *big = malloc(CTL_REPLY_MAX);
        CtlReply r;
        int fd;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                peer_uid = 0;
                fd = client_connect(e);
                client_send(fd, bad[i].msg, bad[i].size);
                assert_int_equal(ctl_reply_parse(buf, client_recv(e, fd, buf), &r), 0);
                assert_error(&r, bad[i].code);
                assert_closed(e, fd, buf);
        }
        /* Oversized: refused whole, even with a valid request in front. */
        assert_non_null(big);
        memset(big, 'x', CTL_REPLY_MAX);
        memcpy(big, "truerandom-control/1 status ", 28);
        fd = client_connect(e);
        client_send(fd, big, CTL_REQUEST_MAX + 1);
        assert_int_equal(ctl_reply_parse(buf, client_recv(e, fd, buf), &r), 0);
        assert_error(&r, CTL_ERROR_TOO_LARGE);
        assert_closed(e, fd, buf);
        fd = client_connect(e);
        client_send(fd, big, CTL_REPLY_MAX);
        assert_int_equal(ctl_reply_parse(buf, client_recv(e, fd, buf), &r), 0);
        assert_error(&r, CTL_ERROR_TOO_LARGE);
        assert_closed(e, fd, buf);
        free(big);

        /* None of it disturbed the daemon: the next client is served. */
        test_status_anyone(state);
        assert_int_equal(e->reseeds, 0);
        assert_int_equal(atomic_load(&fake_opens), 0);
}

static void test_one_request_per_connection(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX];
        CtlReply r;
        int fd;

        peer_uid = 0;
        fd = client_connect(e);
        client_send(fd, "truerandom-control/1 status", 27);
        client_send(fd, "truerandom-control/1 reseed", 27);
        assert_int_equal(ctl_reply_parse(buf, client_recv(e, fd, buf), &r), 0);
        assert_int_equal(r.kind, CTL_REPLY_OK);
        assert_closed(e, fd, buf);
        pump(e, 10);
        assert_int_equal(e->reseeds, 0);
}

static void test_idle_client_does_not_block(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX];
        CtlReply r;
        int idle = client_connect(e);

        pump(e, 5);
        test_status_anyone(state);
        /* The idle one is told off at its deadline and closed. */
        assert_int_equal(ctl_reply_parse(buf, client_recv(e, idle, buf), &r), 0);
        assert_error(&r, CTL_ERROR_TIMEOUT);
        assert_closed(e, idle, buf);
}

static void test_gone_before_asking(void **state) {
        Env *e = *state;

        for (int i = 0; i < 50; i++) {
                close(client_connect(e));
                pump(e, 1);
        }
        pump(e, 20);
        test_status_anyone(state);
}

static void test_connection_cap(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX];
        int idle[CONTROL_MAX_CONNECTIONS], extra;
        CtlReply r;

        for (unsigned i = 0; i < CONTROL_MAX_CONNECTIONS; i++) {
                idle[i] = client_connect(e);
                pump(e, 2);
        }
        extra = client_connect(e);
        assert_int_equal(ctl_reply_parse(buf, client_recv(e, extra, buf), &r), 0);
        assert_error(&r, CTL_ERROR_BUSY);
        assert_closed(e, extra, buf);

        /* A freed slot serves again. */
        close(idle[0]);
        pump(e, 5);
        test_status_anyone(state);
        for (unsigned i = 1; i < CONTROL_MAX_CONNECTIONS; i++)
                close(idle[i]);
}

/* Connections held by one uid, accepted as the loop runs with peer_uid. */
static void hold(Env *e, uid_t uid, int *fds, unsigned n) {
        peer_uid = uid;
        for (unsigned i = 0; i < n; i++) {
                fds[i] = client_connect(e);
                pump(e, 2);
        }
}

static void release_all(int *fds, unsigned n) {
        for (unsigned i = 0; i < n; i++)
                close(fds[i]);
}

/* How many of the held connections were answered busy; each of those must
 * say why (why appears in its text). */
static unsigned count_busy(const int *fds, unsigned n, const char *why) {
        uint8_t buf[CTL_REPLY_MAX];
        unsigned busy = 0;
        CtlReply r;

        for (unsigned i = 0; i < n; i++) {
                ssize_t k = recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT);

                if (k <= 0 || ctl_reply_parse(buf, (size_t)k, &r) < 0 || r.kind != CTL_REPLY_ERROR ||
                    r.error != CTL_ERROR_BUSY)
                        continue;
                busy++;
                if (!memmem(r.payload, r.payload_size, why, strlen(why)))
                        fail_msg("busy for another reason: %.*s", (int)r.payload_size, (const char *)r.payload);
        }
        return busy;
}

/* uid asks for status and is answered. */
static void status_served(Env *e, uid_t uid) {
        uint8_t buf[CTL_REPLY_MAX];
        CtlReply r;
        int fd = ask(e, uid, "truerandom-control/1 status", buf, &r);

        assert_int_equal(r.kind, CTL_REPLY_OK);
        assert_closed(e, fd, buf);
}

/* Issue 12: a uid outside any group held the control socket with idle
 * connections (each lives 5 s), and root's status failed 10 times out of
 * 10. Now one uid holds at most CONTROL_MAX_PER_UID, and the last
 * CONTROL_ROOT_RESERVED slots are root's. Failed before: root was told
 * "busy" every time, and so was every other uid. */
static void test_uid_cannot_lock_out_others(void **state) {
        Env *e = *state;
        int held[2 * CONTROL_MAX_CONNECTIONS];

        /* uid 1001 tries for twice the socket's room; what it is not
         * given is answered busy. */
        hold(e, 1001, held, 2 * CONTROL_MAX_CONNECTIONS);
        for (int i = 0; i < 10; i++)
                status_served(e, 0);
        status_served(e, 1002);
        assert_int_equal(count_busy(held, 2 * CONTROL_MAX_CONNECTIONS, "uid 1001 holds"),
                         2 * CONTROL_MAX_CONNECTIONS - CONTROL_MAX_PER_UID);
        release_all(held, 2 * CONTROL_MAX_CONNECTIONS);
}

/* Subordinate uids (an /etc/subuid range, rootless containers) are many
 * host uids to one user: every peer in a user namespace counts among one
 * account, so they hold CONTROL_MAX_PER_UID connections together, and a
 * host uid and root are still served. Failed before: each namespaced uid
 * held its own CONTROL_MAX_PER_UID and together they filled every slot
 * left to users. */
static void test_user_namespaces_share_one_quota(void **state) {
        Env *e = *state;
        int held[CONTROL_MAX_CONNECTIONS];

        peer_ns = FAKEPROC_NS_OTHER;
        for (unsigned u = 0; u < CONTROL_MAX_CONNECTIONS; u++)
                hold(e, 100000 + u, held + u, 1);
        assert_int_equal(count_busy(held, CONTROL_MAX_CONNECTIONS, "user namespaces hold"),
                         CONTROL_MAX_CONNECTIONS - CONTROL_MAX_PER_UID);
        peer_ns = FAKEPROC_NS_SAME;
        status_served(e, 1002);
        status_served(e, 0);
        release_all(held, CONTROL_MAX_CONNECTIONS);
}

/* Issue 23, hostile finding 1: a peer whose uid has no look at /proc left
 * is charged, with no look, to the account user namespaces share, so that
 * a connect/close loop cannot make the loop read /proc without end; root
 * needs no look. Failed before: every peer was looked at, and each uid
 * held its own quota. */
static void test_proc_budget(void **state) {
        Env *e = *state;
        enum { N = CONTROL_MAX_CONNECTIONS - CONTROL_ROOT_RESERVED };
        int held[N];

        e->looks_left = 0;
        for (unsigned u = 0; u < N; u++)
                hold(e, 1001 + u, held + u, 1);
        assert_int_equal(count_busy(held, N, "user namespaces hold"), N - CONTROL_MAX_PER_UID);
        assert_int_equal(e->budget_asks, N);
        status_served(e, 0);
        assert_int_equal(e->budget_asks, N);
        release_all(held, N);
}

static void test_connections_kept_for_root(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX];
        unsigned users = (CONTROL_MAX_CONNECTIONS - CONTROL_ROOT_RESERVED) / CONTROL_MAX_PER_UID;
        int held[CONTROL_MAX_CONNECTIONS], fd;
        CtlReply r;

        /* Other uids fill all but root's slots ... */
        for (unsigned u = 0; u < users; u++)
                hold(e, 2000 + u, held + u * CONTROL_MAX_PER_UID, CONTROL_MAX_PER_UID);
        /* ... a next uid is busy, and says why ... */
        fd = ask(e, 3000, "truerandom-control/1 status", buf, &r);
        assert_error(&r, CTL_ERROR_BUSY);
        assert_non_null(memmem(r.payload, r.payload_size, "root", 4));
        close(fd);
        /* ... root is served, and may fill the rest; beyond, busy too. */
        hold(e, 0, held + users * CONTROL_MAX_PER_UID, CONTROL_ROOT_RESERVED - 1);
        fd = ask(e, 0, "truerandom-control/1 status", buf, &r);
        assert_int_equal(r.kind, CTL_REPLY_OK);
        assert_closed(e, fd, buf);
        hold(e, 0, held + CONTROL_MAX_CONNECTIONS - 1, 1);
        fd = ask(e, 0, "truerandom-control/1 status", buf, &r);
        assert_error(&r, CTL_ERROR_BUSY);
        close(fd);
        release_all(held, CONTROL_MAX_CONNECTIONS);
}

static void test_exports_do_not_block(void **state) {
        Env *e = *state;
        uint8_t buf[CTL_REPLY_MAX];
        int fds[CONTROL_MAX_EXPORTS], fd;
        CtlReply r;

        /* Exports whose clients read nothing: their threads wait on the
         * socket, the loop goes on serving. */
        for (unsigned i = 0; i < CONTROL_MAX_EXPORTS; i++) {
                fds[i] = ask(e, 0, "truerandom-control/1 raw source=fake samples=1000000000", buf, &r);
                assert_int_equal(r.kind, CTL_REPLY_START);
        }
        test_status_anyone(state);
        fd = ask(e, 0, "truerandom-control/1 raw source=fake", buf, &r);
        assert_error(&r, CTL_ERROR_BUSY);
        assert_closed(e, fd, buf);

        /* A client that goes away ends its export and frees the slot. */
        close(fds[0]);
        for (int i = 0; i < 30000 && atomic_load(&fake_closes) < 1; i++)
                pump(e, 1);
        assert_int_equal(atomic_load(&fake_closes), 1);
        fd = ask(e, 0, "truerandom-control/1 raw source=file samples=10", buf, &r);
        for (int i = 0; i < 100 && r.kind == CTL_REPLY_ERROR && r.error == CTL_ERROR_BUSY; i++) {
                /* The finished thread is joined on the loop's next turn. */
                close(fd);
                pump(e, 5);
                fd = ask(e, 0, "truerandom-control/1 raw source=file samples=10", buf, &r);
        }
        assert_int_equal(r.kind, CTL_REPLY_START);
        close(fd);
        /* control_free() stops the export still blocked on its silent
         * client, and joins it. */
        e->control = control_free(e->control);
        assert_int_equal(atomic_load(&fake_closes), atomic_load(&fake_opens));
        close(fds[1]);
}

/* Every command of the protocol's table has a handler: the socket's own
 * row, or the one that asks the daemon; and every row here is a command
 * there. (That the daemon's table covers the rest is test-commands'.) */
static void test_every_command_served(void **state) {
        for (const CtlCommand *c = ctl_commands; c->name; c++)
                if (!control_handler_lookup(c))
                        fail_msg("command %s has no handler", c->name);
        for (const ControlHandler *h = control_handlers; h->command; h++)
                assert_non_null(ctl_command_from_string(h->command));
        assert_null(control_handler_lookup(NULL));
}

int main(void) {
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_command_served),
                T(test_status_anyone),
                T(test_socket),
                T(test_socket_swapped_for_link),
                T(test_reseed_needs_root),
                T(test_raw_needs_root),
                T(test_raw_file_exact),
                T(test_raw_restart_rows),
                T(test_raw_file_restart),
                T(test_raw_sources_refused),
                T(test_raw_source_ends),
                T(test_raw_selftest_fails),
                T(test_raw_flaky),
                T(test_malformed_then_served),
                T(test_one_request_per_connection),
                T(test_idle_client_does_not_block),
                T(test_gone_before_asking),
                T(test_connection_cap),
                T(test_uid_cannot_lock_out_others),
                T(test_user_namespaces_share_one_quota),
                T(test_proc_budget),
                T(test_connections_kept_for_root),
                T(test_exports_do_not_block),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
