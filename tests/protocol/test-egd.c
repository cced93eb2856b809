/* test-egd.c - the EGD socket of the real daemon (daemon/egd/), in-process
 * (fakedaemon.h), with no CUSE device at all ([device] cuse = no): what
 * QEMU's rng-egd and a tool see. Blocking reads get exactly what they ask,
 * every 32-byte block once across connections; bits ready and pid answer;
 * a daemon that does not serve /dev/truerandom gives nothing (a waiting
 * read waits, a no-wait read gets 0 bytes); a hang-up ends a waiting read
 * at once; what is not EGD, and a write not root's, are disconnected; the
 * per-uid bound refuses the connection over it. The counters in status
 * account for each of these.
 *
 * Waits are hang bounds only (HANG_MS), never what a test judges: a busy
 * machine or valgrind makes them longer, never a verdict different. */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "fakedaemon.h"
#include "proto/egdwire.h"

#define HANG_MS (600 * 1000)
#define BLOCK 32
#define NOBODY 65534

typedef struct Egd {
        FakeDaemon *daemon;
        Config config;
        char path[128];
} Egd;

static Egd *current;

/* The fake daemon's configuration with no CUSE device and the EGD socket
 * in its directory; the caller adjusts, then egd_start(). */
static Egd *egd_new(void) {
        Egd *t = calloc(1, sizeof(*t));

        assert_non_null(t);
        assert_int_equal(fakedaemon_new("egd", "egd", &t->daemon), 0);
        assert_int_equal(fakedaemon_config(t->daemon, &t->config), 0);
        snprintf(t->path, sizeof(t->path), "%s/egd.sock", t->daemon->dir);
        t->config.cuse = false;
        t->config.egd_socket_path = strdup(t->path);
        assert_non_null(t->config.egd_socket_path);
        t->config.store_blocks = 64;
        t->config.low_water = 16;
        current = t;
        return t;
}

static void egd_start(Egd *t) {
        assert_int_equal(fakedaemon_start(t->daemon, &t->config, NULL, NULL), 0);
}

static void egd_free(Egd *t) {
        if (!t)
                return;
        fakedaemon_free(t->daemon);
        config_done(&t->config);
        free(t);
        current = NULL;
}

static int teardown(void **state) {
        egd_free(current);
        return 0;
}

static int egd_connect(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

/* Reads n bytes, or fewer when the peer closes (0 then) or nothing comes
 * within timeout_ms: the bytes read. */
static size_t read_n(int fd, uint8_t *buf, size_t n, int timeout_ms) {
        size_t got = 0;

        while (got < n) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t k;

                if (poll(&p, 1, timeout_ms) <= 0)
                        break;
                k = read(fd, buf + got, n - got);
                if (k <= 0)
                        break;
                got += (size_t) k;
        }
        return got;
}

/* The peer closed the connection (EOF) within the hang bound. */
static bool closed_by_peer(int fd) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        uint8_t b;

        return poll(&p, 1, HANG_MS) == 1 && read(fd, &b, 1) <= 0;
}

static double egd_figure(const Egd *t, const char *key) {
        CtlStatus *s = NULL;
        const CtlStatusObject *o;
        double v = -1;

        assert_int_equal(fakedaemon_status(t->daemon, &s), 0);
        o = ctl_status_get_object(ctl_status_root(s), "egd");
        assert_non_null(o);
        assert_true(ctl_status_get_number(o, key, &v));
        ctl_status_free(s);
        return v;
}

/* Polls status until the EGD figure is want (a hang bound, not a verdict). */
static void await_figure(const Egd *t, const char *key, double want) {
        for (int i = 0; i < HANG_MS / 10 && egd_figure(t, key) != want; i++)
                usleep(10000);
        assert_true(egd_figure(t, key) == want);
}

static uint32_t ask_bits(int fd) {
        uint8_t cmd = EGD_CMD_BITS, b[4];

        assert_int_equal(write(fd, &cmd, 1), 1);
        assert_int_equal(read_n(fd, b, 4, HANG_MS), 4);
        return (uint32_t) b[0] << 24 | (uint32_t) b[1] << 16 | (uint32_t) b[2] << 8 | b[3];
}

/* ---- serving -------------------------------------------------------------------- */

static int cmp_block(const void *a, const void *b) {
        return memcmp(a, b, BLOCK);
}

/* Thirty blocking reads of 255 bytes over three connections: each gets
 * exactly 255 bytes, the whole blocks among them (seven per reply, each
 * reply starts a block) never repeat, and status counts every byte. The
 * sample file loops every 409 blocks or so: 210 stay below that. */
static void test_egd_serves_each_block_once(void **state) {
        enum { CONNS = 3, READS = 30, LEN = 255, WHOLE = LEN / BLOCK };
        Egd *t = egd_new();
        uint8_t blocks[READS * WHOLE][BLOCK], reply[LEN], pid_reply[12];
        uint8_t cmd[2] = { EGD_CMD_READ, LEN };
        char want_pid[16];
        int fds[CONNS];
        uint32_t bits;

        egd_start(t);
        for (int i = 0; i < CONNS; i++) {
                fds[i] = egd_connect(t->path);
                assert_true(fds[i] >= 0);
        }
        for (int k = 0; k < READS; k++) {
                int fd = fds[k % CONNS];

                assert_int_equal(write(fd, cmd, 2), 2);
                assert_int_equal(read_n(fd, reply, LEN, HANG_MS), LEN);
                for (int b = 0; b < WHOLE; b++)
                        memcpy(blocks[k * WHOLE + b], reply + b * BLOCK, BLOCK);
        }
        qsort(blocks, READS * WHOLE, BLOCK, cmp_block);
        for (int i = 1; i < READS * WHOLE; i++)
                assert_int_not_equal(memcmp(blocks[i - 1], blocks[i], BLOCK), 0);

        /* Bits ready: whole blocks of 256 bits. Pid: ours, in-process. */
        bits = ask_bits(fds[0]);
        assert_int_equal(bits % (BLOCK * 8), 0);
        cmd[0] = EGD_CMD_PID;
        assert_int_equal(write(fds[1], cmd, 1), 1);
        snprintf(want_pid, sizeof(want_pid), "%ld", (long) getpid());
        assert_int_equal(read_n(fds[1], pid_reply, 1, HANG_MS), 1);
        assert_int_equal(pid_reply[0], strlen(want_pid));
        assert_int_equal(read_n(fds[1], pid_reply + 1, pid_reply[0], HANG_MS), pid_reply[0]);
        assert_memory_equal(pid_reply + 1, want_pid, pid_reply[0]);

        assert_true(egd_figure(t, "bytes_served") == READS * LEN);
        assert_true(egd_figure(t, "connections") == CONNS);
        assert_true(egd_figure(t, "requests") == READS + 2);
        for (int i = 0; i < CONNS; i++)
                close(fds[i]);
        egd_free(t);
}

static double status_store_fill(const Egd *t) {
        CtlStatus *s = NULL;
        double v = -1;

        assert_int_equal(fakedaemon_status(t->daemon, &s), 0);
        assert_true(ctl_status_get_number(ctl_status_get_object(ctl_status_root(s), "store"), "fill", &v));
        ctl_status_free(s);
        return v;
}

/* Two healthy sources asked for, one configured: the store fills, but
 * /dev/truerandom does not serve, so EGD gives nothing of it: bits ready
 * 0, a no-wait read 0 bytes, a waiting read waits. A hang-up ends it at
 * once. */
static void test_egd_fails_closed_and_drops_hangups(void **state) {
        Egd *t = egd_new();
        uint8_t cmd[2] = { EGD_CMD_READ_NOWAIT, 64 }, b[64];
        int fd;

        t->config.min_healthy = 2;
        egd_start(t);
        for (int i = 0; i < HANG_MS / 10 && status_store_fill(t) < 1; i++)
                usleep(10000);
        assert_true(status_store_fill(t) >= 1);
        fd = egd_connect(t->path);
        assert_true(fd >= 0);
        assert_int_equal(ask_bits(fd), 0);
        assert_int_equal(write(fd, cmd, 2), 2);
        assert_int_equal(read_n(fd, b, 1, HANG_MS), 1);
        assert_int_equal(b[0], 0);

        cmd[0] = EGD_CMD_READ;
        assert_int_equal(write(fd, cmd, 2), 2);
        await_figure(t, "waiting", 1);
        /* Not a byte while it waits, however long one looks. */
        assert_int_equal(read_n(fd, b, 1, 200), 0);
        close(fd);
        await_figure(t, "waiting", 0);
        await_figure(t, "connections", 0);
        assert_true(egd_figure(t, "bytes_served") == 0);
        egd_free(t);
}

/* ---- what a peer may not do ------------------------------------------------------ */

/* Runs fn as uid NOBODY (keeping our group, which the socket's is) in a
 * child when we are root, else here: its result, 0 for success. */
static int as_other_user(int (*fn)(const char *path), const char *path) {
        pid_t pid;
        int status;

        if (getuid() != 0)
                return fn(path);
        /* mkdtemp() made the scratch directory 0700: let the user through
         * to the socket, whose own mode and group decide. */
        assert_int_equal(chmod(current->daemon->dir, 0711), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setgid(getgid()) < 0 || setuid(NOBODY) < 0)
                        _exit(100);
                _exit(fn(path));
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 101;
}

/* A write from anyone but root: disconnected, nothing taken in. */
static int write_refused(const char *path) {
        uint8_t w[] = { EGD_CMD_WRITE, 0, 32, 4, 'a', 'b', 'c', 'd' };
        int fd = egd_connect(path);

        if (fd < 0)
                return 1;
        if (write(fd, w, sizeof(w)) != (ssize_t) sizeof(w))
                return 2;
        return closed_by_peer(fd) ? 0 : 3;
}

/* Connections over max_open_per_uid (2 here) are closed at once. */
static int third_refused(const char *path) {
        int a = egd_connect(path), b = egd_connect(path), c = egd_connect(path);

        if (a < 0 || b < 0 || c < 0)
                return 1;
        return closed_by_peer(c) ? 0 : 2;
}

static void test_egd_refuses_what_it_must(void **state) {
        uint8_t junk = 0x07, w[] = { EGD_CMD_WRITE, 0, 32, 4, 'a', 'b', 'c', 'd' };
        Egd *t = egd_new();
        int fd;

        t->config.max_open_per_uid = 2;
        egd_start(t);
        /* Not EGD. */
        fd = egd_connect(t->path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, &junk, 1), 1);
        assert_true(closed_by_peer(fd));
        close(fd);
        await_figure(t, "dropped", 1);

        assert_int_equal(as_other_user(write_refused, t->path), 0);
        assert_true(egd_figure(t, "bytes_written") == 0);
        await_figure(t, "dropped", 2);
        assert_int_equal(as_other_user(third_refused, t->path), 0);
        assert_true(egd_figure(t, "refused") >= 1);

        /* Root's write is mixed into the CRNG, and the connection goes on. */
        if (getuid() == 0) {
                fd = egd_connect(t->path);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, w, sizeof(w)), sizeof(w));
                (void) ask_bits(fd);
                assert_true(egd_figure(t, "bytes_written") == 4);
                close(fd);
        }
        egd_free(t);
}

/* Four connections; the fourth must be refused. */
static int fourth_refused(const char *path) {
        int fd[4];

        for (int i = 0; i < 4; i++)
                if ((fd[i] = egd_connect(path)) < 0)
                        return 1;
        return closed_by_peer(fd[3]) ? 0 : 2;
}

/* A clock that stands still: one second of looks at /proc for the test. */
static uint64_t frozen_now(void *userdata) {
        return 7 * 1000000ULL;
}

/* Issue 23, hostile finding 1: a peer whose uid has no look at /proc left
 * this second is charged, with no look, to the account user namespaces
 * share. One look a second and two connections an account: the first of
 * four is the uid's, the next two the shared account's, and only the
 * fourth is refused. Failed before (every peer looked at, all four the
 * uid's): the third was refused too. */
static void test_egd_proc_budget(void **state) {
        Egd *t = egd_new();

        t->config.max_open_per_uid = 2;
        t->config.proc_checks_per_uid = 1;
        assert_int_equal(fakedaemon_start(t->daemon, &t->config, NULL,
                                          &(DaemonHooks){ .now = frozen_now, .ready_fd = -1 }),
                         0);
        assert_int_equal(as_other_user(fourth_refused, t->path), 0);
        await_figure(t, "refused", 1);
        assert_true(egd_figure(t, "refused") == 1);
        egd_free(t);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_egd_serves_each_block_once, teardown),
                cmocka_unit_test_teardown(test_egd_fails_closed_and_drops_hangups, teardown),
                cmocka_unit_test_teardown(test_egd_refuses_what_it_must, teardown),
                cmocka_unit_test_teardown(test_egd_proc_budget, teardown),
        };

        fakedaemon_block_signals();
        signal(SIGPIPE, SIG_IGN);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
