/* test-protocol.c - the real daemon (loop, hub, devices, sources) driven by
 * a test that plays the kernel over socketpairs (fakekernel.h).
 *
 * Each test starts a Daemon on its own thread with a configuration made for
 * it: a deterministic `file` source (fast, paced, or held back with
 * start_delay_ms), device nodes as plain files in a temp dir (so init_done's
 * chmod is visible), and a fake /proc (fakeproc.h) over live processes whose
 * status files decide privilege; or the real /proc, for callers that are
 * real processes (root, and root of a user namespace of its own).
 * SIGTERM and SIGHUP go to the process, blocked in every thread, so the
 * daemon's signalfd takes them exactly as in production. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/random.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "daemon/config.h"
#include "daemon/ctlproto.h"
#include "daemon/ctlstatus.h"
#include "daemon/daemon.h"
#include "fakekernel.h"
#include "fakeproc.h"

#define SAMPLES (1U << 16)

/* Shown in the fake /proc; their pids are set in main(): this process and
 * an idle child (privilege_check() refuses pids that are not alive). */
static FkCaller priv = { .uid = 1000, .gid = 1000 };
static FkCaller unpriv = { .uid = 1000, .gid = 1000 };
/* A root process that is gone: its files would say privileged. */
static FkCaller root_gone = { .uid = 0, .gid = 0 };

/* struct rand_pool_info with room for its buffer (the kernel's has a
 * flexible array). */
typedef struct AddEntropy {
        int entropy_count;
        int buf_size;
        uint8_t buf[64];
} AddEntropy;

typedef struct Harness {
        char dir[64];
        char devdir[96];
        FakeProc *proc;
        bool real_proc;         /* privilege from the real /proc */
        char samples[96];
        char conf[96];
        FakeKernel *fk[_CUSEDEV_KIND_MAX];
        int daemon_fd[_CUSEDEV_KIND_MAX];
        Config config;
        bool use_conf_file;
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool started;
        int new_result;
        int run_result;
        bool running;
        FkFile trng, random, urandom;
} Harness;

/* ------------------------------------------------------------------ */
/* set-up                                                              */

static void write_file(const char *path, const void *data, size_t n) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, n, f), n);
        assert_int_equal(fclose(f), 0);
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int open_device(void *userdata, CuseDevKind kind, int *ret_fd, const struct fuse_custom_io **ret_io) {
        Harness *h = userdata;

        if (h->daemon_fd[kind] < 0)
                return -ENODEV;
        *ret_fd = h->daemon_fd[kind];
        *ret_io = &fk_daemon_io;
        h->daemon_fd[kind] = -1;
        return 0;
}

static void *daemon_thread(void *userdata) {
        Harness *h = userdata;
        DaemonHooks hooks = {
                .open_device = open_device,
                .userdata = h,
                .dev_dir = h->devdir,
                .proc_root = h->real_proc ? NULL : fakeproc_root(h->proc),
                .ready_fd = -1,
        };
        Daemon *d = NULL;
        int r;

        r = daemon_new(&h->config, h->use_conf_file ? h->conf : NULL, &hooks, &d);
        pthread_mutex_lock(&h->lock);
        h->started = true;
        h->new_result = r;
        pthread_cond_signal(&h->cond);
        pthread_mutex_unlock(&h->lock);
        if (r < 0)
                return NULL;
        h->run_result = daemon_run(d);
        daemon_free(d);
        return NULL;
}

/* A deterministic sample file: a fixed seed, uniformly distributed bytes
 * (passes the health tests at any credit). */
static void make_samples(Harness *h) {
        static const uint8_t seed[randombytes_SEEDBYTES] = { 't', 'r', 'u', 'e' };
        uint8_t *buf = malloc(SAMPLES);

        assert_non_null(buf);
        randombytes_buf_deterministic(buf, SAMPLES, seed);
        write_file(h->samples, buf, SAMPLES);
        free(buf);
}

static void make_proc(Harness *h) {
        assert_int_equal(fakeproc_new(h->dir, &h->proc), 0);
        assert_int_equal(fakeproc_add(h->proc, (pid_t) priv.pid, priv.uid, UINT64_C(1) << CAP_SYS_ADMIN, FAKEPROC_NS_SAME), 0);
        assert_int_equal(fakeproc_add(h->proc, (pid_t) unpriv.pid, unpriv.uid, 0, FAKEPROC_NS_SAME), 0);
        assert_int_equal(fakeproc_add(h->proc, (pid_t) root_gone.pid, 0, UINT64_C(1) << CAP_SYS_ADMIN, FAKEPROC_NS_SAME), 0);
}

/* The running test's harness, freed by the teardown even when an assertion
 * ended the test early (a leaked fake would hold its DEVNAME). */
static Harness *current;

/* What every test starts from: only the file source, credited 8 bits per
 * sample, as fast as it goes; the caller adjusts before harness_start(). */
static Harness *harness_new(void) {
        Harness *h = calloc(1, sizeof(*h));
        char path[160];
        char gid[16];

        assert_non_null(h);
        snprintf(h->dir, sizeof(h->dir), "/tmp/truerandom-protocol-XXXXXX");
        assert_non_null(mkdtemp(h->dir));
        snprintf(h->devdir, sizeof(h->devdir), "%s/dev", h->dir);
        snprintf(h->samples, sizeof(h->samples), "%s/samples", h->dir);
        snprintf(h->conf, sizeof(h->conf), "%s/truerandomd.conf", h->dir);
        assert_int_equal(mkdir(h->devdir, 0755), 0);
        make_proc(h);
        make_samples(h);

        assert_int_equal(config_init_defaults(&h->config), 0);
        snprintf(gid, sizeof(gid), "%u", (unsigned)getgid());
        free(h->config.group);
        h->config.group = strdup(gid);
        free(h->config.socket_path);
        snprintf(path, sizeof(path), "%s/control", h->dir);
        h->config.socket_path = strdup(path);
        for (int i = 0; i < _CONFIG_SOURCE_MAX; i++)
                h->config.source[i].enable = false;
        h->config.source[CONFIG_SOURCE_KERNEL].enable = true;
        h->config.source[CONFIG_SOURCE_FILE] = (SourceConfig){
                .enable = true,
                .credit_mbits = 8000,
                .path = strdup(h->samples),
                .loop = true,
        };
        h->config.store_blocks = 64;
        h->config.low_water = 16;
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++)
                h->daemon_fd[k] = -1;
        pthread_mutex_init(&h->lock, NULL);
        pthread_cond_init(&h->cond, NULL);
        current = h;
        return h;
}

static void touch_node(Harness *h, const char *name) {
        char path[200];
        snprintf(path, sizeof(path), "%s/%s", h->devdir, name);
        write_file(path, "", 0);
        assert_int_equal(chmod(path, 0600), 0);
}

static int harness_start(Harness *h) {
        int64_t init_unique[_CUSEDEV_KIND_MAX] = { 0 };
        FkInit init;
        const char *names[_CUSEDEV_KIND_MAX] = {
                [CUSEDEV_TRNG] = h->config.trng_name,
                [CUSEDEV_RANDOM] = h->config.random_name,
                [CUSEDEV_URANDOM] = h->config.urandom_name,
                [CUSEDEV_NULL] = h->config.null_name,
        };

        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                if (!names[k] || (!h->config.dropin && (k == CUSEDEV_RANDOM || k == CUSEDEV_URANDOM)))
                        continue;
                touch_node(h, names[k]);
                assert_int_equal(fk_new(&h->fk[k], &h->daemon_fd[k]), 0);
                /* As the kernel, at open of /dev/cuse: set-up answers it. */
                init_unique[k] = fk_send_init(h->fk[k]);
                assert_true(init_unique[k] > 0);
        }
        assert_int_equal(pthread_create(&h->thread, NULL, daemon_thread, h), 0);
        pthread_mutex_lock(&h->lock);
        while (!h->started)
                pthread_cond_wait(&h->cond, &h->lock);
        pthread_mutex_unlock(&h->lock);
        if (h->new_result < 0) {
                pthread_join(h->thread, NULL);
                return h->new_result;
        }
        h->running = true;
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                if (!h->fk[k])
                        continue;
                assert_int_equal(fk_init_await(h->fk[k], init_unique[k], &init), 0);
                assert_string_equal(init.devname, names[k]);
                assert_true(init.flags & CUSE_UNRESTRICTED_IOCTL);
        }
        assert_int_equal(fk_open(h->fk[CUSEDEV_TRNG], NULL, O_RDONLY, &h->trng), 0);
        if (h->fk[CUSEDEV_RANDOM]) {
                assert_int_equal(fk_open(h->fk[CUSEDEV_RANDOM], NULL, O_RDWR, &h->random), 0);
                assert_int_equal(fk_open(h->fk[CUSEDEV_URANDOM], NULL, O_RDWR, &h->urandom), 0);
        }
        return 0;
}

/* SIGTERM as systemd sends it; returns what daemon_run() returned. */
static int harness_stop(Harness *h) {
        if (!h->running)
                return 0;
        assert_int_equal(kill(getpid(), SIGTERM), 0);
        pthread_join(h->thread, NULL);
        h->running = false;
        return h->run_result;
}

static void harness_free(Harness *h) {
        unsigned violations = 0;
        char cmd[128];

        harness_stop(h);
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++) {
                const char *last = NULL;
                if (!h->fk[k])
                        continue;
                /* The daemon never sent the kernel anything it would reject. */
                if (fk_violations(h->fk[k], &last) != 0) {
                        print_error("device kind %d: the kernel would reject: %s\n", k, last);
                        violations++;
                }
                fk_free(h->fk[k]);
                if (h->daemon_fd[k] >= 0)
                        close(h->daemon_fd[k]);
        }
        config_done(&h->config);
        fakeproc_free(h->proc);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", h->dir);
        assert_int_equal(system(cmd), 0);
        pthread_cond_destroy(&h->cond);
        pthread_mutex_destroy(&h->lock);
        free(h);
        current = NULL;
        assert_int_equal(violations, 0);
}

static int teardown(void **state) {
        if (current)
                harness_free(current);
        return 0;
}

static void wait_seeded(Harness *h) {
        uint64_t until = now_ms() + 10000;
        while (!(fk_poll(h->fk[CUSEDEV_RANDOM], &h->random, POLLIN, false) & POLLIN)) {
                assert_true(now_ms() < until);
                sleep_ms(5);
        }
}

static mode_t node_mode(Harness *h, const char *name) {
        char path[200];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", h->devdir, name);
        assert_int_equal(stat(path, &st), 0);
        return st.st_mode & 07777;
}

static int entcnt(Harness *h, CuseDevKind k, const FkFile *f, const FkCaller *who) {
        FkFile g = *f;
        int v = -1;
        int r;

        if (who)
                g.caller = *who;
        r = fk_ioctl(h->fk[k], &g, RNDGETENTCNT, &v, sizeof(v));
        return r < 0 ? r : v;
}

/* ------------------------------------------------------------------ */
/* the tests                                                           */

static void test_init_nodes_and_reads(void **state) {
        Harness *h = harness_new();
        uint8_t a[4096], b[4096];
        ssize_t n;

        assert_int_equal(harness_start(h), 0);
        /* init_done set the nodes up as configured. */
        assert_int_equal(node_mode(h, "truerandom"), 0440);
        assert_int_equal(node_mode(h, "truerandom-random"), 0666);
        assert_int_equal(node_mode(h, "truerandom-urandom"), 0666);
        wait_seeded(h);

        /* Blocks are there: a read gets what it asked, and never the same
         * bytes twice. */
        n = fk_read(h->fk[CUSEDEV_TRNG], &h->trng, a, 100);
        assert_int_equal(n, 100);
        n = fk_read(h->fk[CUSEDEV_TRNG], &h->trng, b, 100);
        assert_int_equal(n, 100);
        assert_memory_not_equal(a, b, 100);
        assert_int_equal(fk_read(h->fk[CUSEDEV_TRNG], &h->trng, a, 0), 0);
        /* More than the store holds: a short read, never more than asked. */
        n = fk_read(h->fk[CUSEDEV_TRNG], &h->trng, a, sizeof(a));
        assert_true(n >= 1 && n <= (ssize_t)sizeof(a));
        /* Writing to /dev/truerandom is refused. */
        assert_int_equal(fk_write(h->fk[CUSEDEV_TRNG], &h->trng, "x", 1), -EPERM);
        assert_int_equal(fk_release(h->fk[CUSEDEV_TRNG], &h->trng), 0);
        harness_free(h);
}

static void test_nonblock_empty_and_parked(void **state) {
        Harness *h = harness_new();
        FkFile nb;
        uint8_t buf[64];
        FkMsg m;
        int64_t u;

        h->config.start_delay_ms = 600;
        assert_int_equal(harness_start(h), 0);
        nb = h->trng;
        nb.flags |= O_NONBLOCK;
        assert_int_equal(fk_read(h->fk[CUSEDEV_TRNG], &nb, buf, sizeof(buf)), -EAGAIN);
        assert_int_equal(fk_poll(h->fk[CUSEDEV_TRNG], &h->trng, POLLIN, true), 0);

        /* A blocking read parks: a later request is answered first. */
        u = fk_send_read(h->fk[CUSEDEV_TRNG], NULL, h->trng.fh, 64, 0);
        assert_true(u > 0);
        assert_int_equal(entcnt(h, CUSEDEV_TRNG, &h->trng, NULL), 0);
        assert_true(fk_waiting(h->fk[CUSEDEV_TRNG], (uint64_t)u));

        /* The source starts: the parked read and the poller are served. */
        assert_int_equal(fk_expect_reply(h->fk[CUSEDEV_TRNG], (uint64_t)u, 10000, &m), 0);
        assert_int_equal(m.error, 0);
        assert_true(m.len >= 1 && m.len <= 64);
        assert_int_equal(fk_wait_poll_wakeups(h->fk[CUSEDEV_TRNG], h->trng.kh, 1, 10000), 0);
        harness_free(h);
}

static void test_interrupt_loses_nothing(void **state) {
        Harness *h = harness_new();
        FkMsg m;
        int64_t u;

        h->config.start_delay_ms = 600000;
        assert_int_equal(harness_start(h), 0);
        u = fk_send_read(h->fk[CUSEDEV_TRNG], NULL, h->trng.fh, 32, 0);
        assert_int_equal(entcnt(h, CUSEDEV_TRNG, &h->trng, NULL), 0);
        assert_true(fk_waiting(h->fk[CUSEDEV_TRNG], (uint64_t)u));
        assert_true(fk_send_interrupt(h->fk[CUSEDEV_TRNG], (uint64_t)u) > 0);
        assert_int_equal(fk_expect_reply(h->fk[CUSEDEV_TRNG], (uint64_t)u, 5000, &m), 0);
        assert_int_equal(m.error, -EINTR);
        assert_int_equal(m.len, 0);
        /* Interrupted at once after parking, and an interrupt for a read
         * the daemon answered already: each still exactly one reply. */
        for (int i = 0; i < 20; i++) {
                u = fk_send_read(h->fk[CUSEDEV_TRNG], NULL, h->trng.fh, 32, 0);
                assert_true(fk_send_interrupt(h->fk[CUSEDEV_TRNG], (uint64_t)u) > 0);
                assert_int_equal(fk_expect_reply(h->fk[CUSEDEV_TRNG], (uint64_t)u, 5000, &m), 0);
                assert_int_equal(m.error, -EINTR);
        }
        harness_free(h);
}

static void test_thousand_parked_all_answered(void **state) {
        Harness *h = harness_new();
        int64_t u[1000];
        FkMsg m;

        h->config.start_delay_ms = 600000;
        h->config.store_blocks = 2048;
        h->config.low_water = 1024;
        assert_int_equal(harness_start(h), 0);
        for (int i = 0; i < 1000; i++) {
                FkCaller c = { .uid = 1000 + (uint32_t)(i % 7), .gid = 1000, .pid = 5000 + (uint32_t)i };
                u[i] = fk_send_read(h->fk[CUSEDEV_TRNG], &c, h->trng.fh, 64, 0);
                assert_true(u[i] > 0);
        }
        assert_int_equal(entcnt(h, CUSEDEV_TRNG, &h->trng, NULL), 0);
        for (int i = 0; i < 1000; i++)
                assert_true(fk_waiting(h->fk[CUSEDEV_TRNG], (uint64_t)u[i]));
        harness_stop(h);
        /* Stop answered every one of them with an error. */
        for (int i = 0; i < 1000; i++) {
                assert_int_equal(fk_expect_reply(h->fk[CUSEDEV_TRNG], (uint64_t)u[i], 5000, &m), 0);
                assert_true(m.error < 0);
        }
        harness_free(h);

        /* The same with the source running: every reader gets bytes. */
        h = harness_new();
        h->config.start_delay_ms = 300;
        h->config.store_blocks = 2048;
        h->config.low_water = 1024;
        assert_int_equal(harness_start(h), 0);
        for (int i = 0; i < 1000; i++) {
                FkCaller c = { .uid = 1000 + (uint32_t)(i % 7), .gid = 1000, .pid = 5000 + (uint32_t)i };
                u[i] = fk_send_read(h->fk[CUSEDEV_TRNG], &c, h->trng.fh, 64, 0);
        }
        for (int i = 0; i < 1000; i++) {
                assert_int_equal(fk_expect_reply(h->fk[CUSEDEV_TRNG], (uint64_t)u[i], 30000, &m), 0);
                assert_int_equal(m.error, 0);
                assert_true(m.len >= 1 && m.len <= 64);
        }
        harness_free(h);
}

/* Readers that ask again as soon as they are answered; counts bytes per uid
 * until `total` bytes were served. */
typedef struct Reader {
        FkCaller caller;
        int64_t unique;
        uint32_t size;
} Reader;

static void run_readers(Harness *h, Reader *r, size_t n, uint64_t total, uint64_t *bytes_by_uid,
                        uint32_t uid_base) {
        FakeKernel *fk = h->fk[CUSEDEV_TRNG];
        FkMsg m;

        for (size_t i = 0; i < n; i++)
                r[i].unique = fk_send_read(fk, &r[i].caller, h->trng.fh, r[i].size, 0);
        for (uint64_t got = 0; got < total;) {
                assert_int_equal(fk_recv(fk, 30000, &m), 0);
                if (m.kind != FK_MSG_REPLY)
                        continue;
                for (size_t i = 0; i < n; i++) {
                        if ((int64_t)m.unique != r[i].unique)
                                continue;
                        assert_int_equal(m.error, 0);
                        bytes_by_uid[r[i].caller.uid - uid_base] += m.len;
                        r[i].unique = fk_send_read(fk, &r[i].caller, h->trng.fh, r[i].size, 0);
                        got += m.len;
                }
        }
}

/* Two uids with `a` and `b` readers asking continuously: each uid's share
 * of the bytes, whatever its number of readers. */
static double fair_share(unsigned a, unsigned b) {
        Harness *h = harness_new();
        Reader r[32];
        uint64_t bytes[2] = { 0, 0 };
        double share;

        /* 40 samples make a block: 40000 samples/s is ~1000 blocks/s, far
         * fewer than 16 readers of 4 KiB ask, so the daemon's queue decides
         * who gets them, and slow enough that the test re-asks for every
         * answered reader before the next blocks come, even on a busy
         * machine (else a uid's queue runs dry and the other takes all). */
        h->config.source[CONFIG_SOURCE_FILE].rate = 40000;
        assert_int_equal(harness_start(h), 0);
        wait_seeded(h);
        for (unsigned i = 0; i < a + b; i++)
                r[i] = (Reader){ .caller = { .uid = 2000 + (i < a ? 0U : 1U), .gid = 100, .pid = 7000 + i },
                                 .size = 4096 };
        run_readers(h, r, a + b, 4000 * 32, bytes, 2000);
        share = (double)bytes[0] / (double)(bytes[0] + bytes[1]);
        print_message("uid 2000 (%u readers): %llu bytes, uid 2001 (%u readers): %llu bytes, share %.3f\n", a,
                      (unsigned long long)bytes[0], b, (unsigned long long)bytes[1], share);
        harness_free(h);
        return share;
}

static void test_fair_share_two_uids(void **state) {
        double share = fair_share(8, 8);
        assert_true(share >= 0.45 && share <= 0.55);
        /* Per uid, not per reader: 12 readers do not buy three times 4's. */
        share = fair_share(12, 4);
        assert_true(share >= 0.45 && share <= 0.55);
}

static void test_small_reader_not_stuck_behind_huge(void **state) {
        Harness *h = harness_new();
        FakeKernel *fk;
        FkCaller big = { .uid = 3000, .gid = 100, .pid = 8000 };
        FkCaller small = { .uid = 3001, .gid = 100, .pid = 8001 };
        unsigned big_replies = 0;
        int64_t ub[8], us = 0, sync = 0;
        bool synced = false;
                FkMsg m;
        int rounds = 0;

        h->config.source[CONFIG_SOURCE_FILE].rate = 20000;
        assert_int_equal(harness_start(h), 0);
        fk = h->fk[CUSEDEV_TRNG];
        wait_seeded(h);
        /* One uid reads "1 GiB" with 8 threads, each asking as much as one
         * request carries, again and again. */
        for (int i = 0; i < 8; i++)
                ub[i] = fk_send_read(fk, &big, h->trng.fh, 131072, 0);
        while (!us || fk_waiting(fk, (uint64_t)us)) {
                assert_int_equal(fk_recv(fk, 30000, &m), 0);
                if (m.kind != FK_MSG_REPLY)
                        continue;
                /* The daemon answers in order: once it answered the request
                 * sent right after the small read, that read is queued, and
                 * every later reply was dealt with it waiting. */
                if (sync && (int64_t)m.unique == sync)
                        synced = true;
                for (int i = 0; i < 8; i++) {
                        if ((int64_t)m.unique != ub[i])
                                continue;
                        assert_int_equal(m.error, 0);
                        if (synced)
                                big_replies++;
                        ub[i] = fk_send_read(fk, &big, h->trng.fh, 131072, 0);
                        if (++rounds == 40) {
                                us = fk_send_read(fk, &small, h->trng.fh, 32, 0);
                                sync = fk_send_ioctl(fk, NULL, h->trng.fh, RNDGETENTCNT, FK_USER_BASE,
                                                     FUSE_IOCTL_UNRESTRICTED, NULL, 0, 0);
                        }
                }
                if (us && (int64_t)m.unique == us) {
                        assert_int_equal(m.error, 0);
                        assert_int_equal(m.len, 32);
                        break;
                }
        }
        print_message("the busy uid's reads answered before the 32-byte read: %u\n", big_replies);
        /* Round robin across uids: the busy uid's turn comes at most once
         * before the small reader's, however many reads it has waiting (a
         * plain FIFO would answer all 8 first). */
        assert_true(big_replies <= 2);
        harness_free(h);
}

static void test_dropin_before_and_after_seeding(void **state) {
        Harness *h = harness_new();
        FkFile nb;
        uint8_t *buf = malloc(1 << 20);
        AddEntropy add = { .entropy_count = 256, .buf_size = 32 };
        FkMsg m;
        int64_t u;

        assert_non_null(buf);
        h->config.start_delay_ms = 600000;
        assert_int_equal(harness_start(h), 0);
        /* Unseeded: random blocks (or EAGAIN), urandom answers at once. */
        nb = h->random;
        nb.flags |= O_NONBLOCK;
        assert_int_equal(fk_read(h->fk[CUSEDEV_RANDOM], &nb, buf, 16), -EAGAIN);
        assert_int_equal(fk_poll(h->fk[CUSEDEV_RANDOM], &h->random, POLLIN | POLLOUT, true), POLLOUT);
        u = fk_send_read(h->fk[CUSEDEV_RANDOM], NULL, h->random.fh, 4096, 0);
        assert_int_equal(fk_read(h->fk[CUSEDEV_URANDOM], &h->urandom, buf, 4096), 4096);
        assert_true(fk_waiting(h->fk[CUSEDEV_RANDOM], (uint64_t)u));
        assert_int_equal(entcnt(h, CUSEDEV_RANDOM, &h->random, &unpriv), 0);

        /* 256 bits credited by a privileged RNDADDENTROPY seed the CRNG: the
         * parked reader gets its whole read, the poller is woken. */
        randombytes_buf(add.buf, 32);
        nb = h->random;
        nb.caller = priv;
        assert_int_equal(fk_ioctl(h->fk[CUSEDEV_RANDOM], &nb, RNDADDENTROPY, &add, sizeof(add)), 0);
        assert_int_equal(fk_expect_reply(h->fk[CUSEDEV_RANDOM], (uint64_t)u, 5000, &m), 0);
        assert_int_equal(m.error, 0);
        assert_int_equal(m.len, 4096);
        assert_int_equal(fk_wait_poll_wakeups(h->fk[CUSEDEV_RANDOM], h->random.kh, 1, 5000), 0);
        assert_int_equal(fk_poll(h->fk[CUSEDEV_RANDOM], &h->random, POLLIN, false), POLLIN);
        assert_int_equal(entcnt(h, CUSEDEV_RANDOM, &h->random, &unpriv), 256);
        /* Full reads up to the largest request, and beyond in several. */
        assert_int_equal(fk_read(h->fk[CUSEDEV_RANDOM], &h->random, buf, 131072), 131072);
        assert_int_equal(fk_read(h->fk[CUSEDEV_URANDOM], &h->urandom, buf, 1 << 20), 1 << 20);
        assert_int_equal(fk_read(h->fk[CUSEDEV_RANDOM], &nb, buf, 1 << 20), 1 << 20);
        /* Writes are taken from anyone, never credited. */
        assert_int_equal(fk_write(h->fk[CUSEDEV_URANDOM], &h->urandom, buf, 512), 512);
        assert_int_equal(entcnt(h, CUSEDEV_URANDOM, &h->urandom, &unpriv), 256);
        free(buf);
        harness_free(h);
}

static void test_ioctls(void **state) {
        Harness *h = harness_new();
        FakeKernel *fk;
        FkFile p, u, r, c;
        int v = 16;
        AddEntropy add = { .entropy_count = 8, .buf_size = 16 };

        h->config.start_delay_ms = 600000;
        assert_int_equal(harness_start(h), 0);
        fk = h->fk[CUSEDEV_RANDOM];
        p = u = r = c = h->random;
        p.caller = priv;
        u.caller = unpriv;
        r.caller = root_gone;
        c.caller = priv;
        c.caller.compat = true;

        /* Anyone reads the count; the rest need CAP_SYS_ADMIN, from a
         * caller that is still there. */
        assert_int_equal(entcnt(h, CUSEDEV_RANDOM, &h->random, &unpriv), 0);
        assert_int_equal(fk_ioctl(fk, &u, RNDADDTOENTCNT, &v, sizeof(v)), -EPERM);
        assert_int_equal(fk_ioctl(fk, &u, RNDADDENTROPY, &add, sizeof(add)), -EPERM);
        assert_int_equal(fk_ioctl(fk, &u, RNDZAPENTCNT, NULL, 0), -EPERM);
        assert_int_equal(fk_ioctl(fk, &u, RNDCLEARPOOL, NULL, 0), -EPERM);
        assert_int_equal(fk_ioctl(fk, &u, RNDRESEEDCRNG, NULL, 0), -EPERM);
        assert_int_equal(fk_ioctl(fk, &p, RNDRESEEDCRNG, NULL, 0), -ENODATA);
        assert_int_equal(fk_ioctl(fk, &p, RNDADDTOENTCNT, &v, sizeof(v)), 0);
        assert_int_equal(entcnt(h, CUSEDEV_RANDOM, &h->random, NULL), 16);
        assert_int_equal(fk_ioctl(fk, &r, RNDADDENTROPY, &add, sizeof(add)), -EPERM);
        assert_int_equal(fk_ioctl(fk, &c, RNDADDENTROPY, &add, sizeof(add)), 0);
        assert_int_equal(entcnt(h, CUSEDEV_RANDOM, &h->random, NULL), 24);
        assert_int_equal(fk_ioctl(fk, &p, RNDZAPENTCNT, NULL, 0), 0);
        assert_int_equal(fk_ioctl(fk, &p, RNDCLEARPOOL, NULL, 0), 0);

        /* Malformed RNDADDENTROPY: never a crash, the kernel's errno. */
        add.entropy_count = -1;
        assert_int_equal(fk_ioctl(fk, &p, RNDADDENTROPY, &add, sizeof(add)), -EINVAL);
        add.entropy_count = 8 * 16 + 1;
        assert_int_equal(fk_ioctl(fk, &p, RNDADDENTROPY, &add, sizeof(add)), -EINVAL);
        add.entropy_count = 8;
        add.buf_size = 1 << 30;
        assert_int_equal(fk_ioctl(fk, &p, RNDADDENTROPY, &add, sizeof(add)), -EINVAL);
        add.buf_size = 200; /* beyond the caller's memory */
        assert_int_equal(fk_ioctl(fk, &p, RNDADDENTROPY, &add, sizeof(add)), -EFAULT);
        /* A count beyond INT_MAX's reach added by RNDADDTOENTCNT: refused. */
        v = -5;
        assert_int_equal(fk_ioctl(fk, &p, RNDADDTOENTCNT, &v, sizeof(v)), -EINVAL);

        /* Unknown and retired ioctls: EINVAL on the drop-ins (as the
         * kernel), ENOTTY on /dev/truerandom, which has only the count. */
        assert_int_equal(fk_ioctl(fk, &p, RNDGETPOOL, &v, sizeof(v)), -EINVAL);
        assert_int_equal(fk_ioctl(fk, &p, 0x5401 /* TCGETS */, &v, sizeof(v)), -EINVAL);
        assert_int_equal(fk_ioctl(h->fk[CUSEDEV_TRNG], &h->trng, RNDADDENTROPY, &add, sizeof(add)), -ENOTTY);
        assert_int_equal(fk_ioctl(h->fk[CUSEDEV_TRNG], &h->trng, 0x5401, &v, sizeof(v)), -ENOTTY);
        assert_int_equal(entcnt(h, CUSEDEV_TRNG, &h->trng, &unpriv), 0);

        /* Seeded by credit, a reseed is possible; truerandom's count is
         * whole blocks of output. */
        v = 256;
        assert_int_equal(fk_ioctl(fk, &p, RNDADDTOENTCNT, &v, sizeof(v)), 0);
        assert_int_equal(fk_ioctl(fk, &p, RNDRESEEDCRNG, NULL, 0), 0);
        harness_free(h);

        h = harness_new();
        assert_int_equal(harness_start(h), 0);
        wait_seeded(h);
        v = entcnt(h, CUSEDEV_TRNG, &h->trng, &unpriv);
        assert_true(v > 0 && v % 256 == 0);
        harness_free(h);
}

/* With the real /proc: root of a user namespace of its own (every
 * capability in its CapEff, as after `unshare -Ur`) gets EPERM from every
 * privileged ioctl; real root, this process, still gets through. */
static void test_userns_caller_refused(void **state) {
        static const unsigned long privileged[] = { RNDADDTOENTCNT, RNDADDENTROPY, RNDZAPENTCNT, RNDCLEARPOOL,
                                                    RNDRESEEDCRNG };
        AddEntropy add = { .entropy_count = 8, .buf_size = 16 };
        pid_t child = fakeproc_userns_caller(true);
        Harness *h;
        FkFile ns, root;
        int v = 16;

        if (child == -EOPNOTSUPP || geteuid() != 0) {
                print_message("needs root and user namespaces\n");
                if (child > 0)
                        fakeproc_caller_kill(child);
                skip();
        }
        assert_true(child > 0);
        h = harness_new();
        h->real_proc = true;
        h->config.start_delay_ms = 600000;
        assert_int_equal(harness_start(h), 0);
        ns = root = h->random;
        ns.caller = (FkCaller) { .uid = 65534, .gid = 65534, .pid = (uint32_t) child };
        root.caller = (FkCaller) { .uid = 0, .gid = 0, .pid = (uint32_t) getpid() };

        for (size_t i = 0; i < sizeof(privileged) / sizeof(privileged[0]); i++) {
                void *arg = privileged[i] == RNDADDENTROPY ? (void *) &add : privileged[i] == RNDADDTOENTCNT ? &v : NULL;
                size_t size = arg == &add ? sizeof(add) : arg ? sizeof(v) : 0;

                assert_int_equal(fk_ioctl(h->fk[CUSEDEV_RANDOM], &ns, (unsigned) privileged[i], arg, size), -EPERM);
        }
        assert_int_equal(entcnt(h, CUSEDEV_RANDOM, &h->random, NULL), 0);
        assert_int_equal(fk_ioctl(h->fk[CUSEDEV_RANDOM], &root, RNDADDTOENTCNT, &v, sizeof(v)), 0);
        assert_int_equal(fk_ioctl(h->fk[CUSEDEV_RANDOM], &root, RNDADDENTROPY, &add, sizeof(add)), 0);
        assert_int_equal(fk_ioctl(h->fk[CUSEDEV_RANDOM], &root, RNDZAPENTCNT, NULL, 0), 0);
        assert_int_equal(fk_ioctl(h->fk[CUSEDEV_RANDOM], &root, RNDCLEARPOOL, NULL, 0), 0);
        /* Not seeded: the reseed is refused for that reason, not EPERM. */
        assert_int_equal(fk_ioctl(h->fk[CUSEDEV_RANDOM], &root, RNDRESEEDCRNG, NULL, 0), -ENODATA);
        assert_int_equal(entcnt(h, CUSEDEV_RANDOM, &h->random, NULL), 24);
        harness_free(h);
        fakeproc_caller_kill(child);
}

static void test_malformed_ioctl_frames(void **state) {
        Harness *h = harness_new();
        FakeKernel *fk;
        struct {
                int entropy_count;
                int buf_size;
                uint8_t buf[4];
        } trunc = { .entropy_count = 8, .buf_size = 16 };
        FkMsg m;
        int64_t u;

        h->config.start_delay_ms = 600000;
        assert_int_equal(harness_start(h), 0);
        fk = h->fk[CUSEDEV_RANDOM];
        /* The kernel hands over less than the header promised. */
        u = fk_send_ioctl(fk, &priv, h->random.fh, RNDADDENTROPY, FK_USER_BASE, FUSE_IOCTL_UNRESTRICTED, &trunc,
                          sizeof(trunc), 0);
        assert_int_equal(fk_expect_reply(fk, (uint64_t)u, 5000, &m), 0);
        assert_int_equal(m.error, -EFAULT);
        /* A header cut short. */
        u = fk_send_ioctl(fk, &priv, h->random.fh, RNDADDENTROPY, FK_USER_BASE, FUSE_IOCTL_UNRESTRICTED, &trunc, 5,
                          0);
        assert_int_equal(fk_expect_reply(fk, (uint64_t)u, 5000, &m), 0);
        assert_true(m.error == -EFAULT || m.error == -EINVAL);
        /* A FUSE_IOCTL without its argument struct. */
        u = fk_send(fk, FUSE_IOCTL, &priv, 1, &trunc, 3);
        assert_true(u > 0);
        /* The daemon still serves. */
        assert_int_equal(entcnt(h, CUSEDEV_RANDOM, &h->random, NULL), 0);
        harness_free(h);
}

static void test_bounded_parking(void **state) {
        Harness *h = harness_new();
        uint8_t buf[32];
        int64_t u[10];
        FkMsg m;

        h->config.start_delay_ms = 600000;
        h->config.max_parked = 10;
        assert_int_equal(harness_start(h), 0);
        for (int i = 0; i < 10; i++)
                u[i] = fk_send_read(h->fk[CUSEDEV_TRNG], NULL, h->trng.fh, 32, 0);
        /* The eleventh waiting read is told to come back. */
        assert_int_equal(fk_read(h->fk[CUSEDEV_TRNG], &h->trng, buf, sizeof(buf)), -EAGAIN);
        for (int i = 0; i < 10; i++)
                assert_true(fk_waiting(h->fk[CUSEDEV_TRNG], (uint64_t)u[i]));
        assert_int_equal(harness_stop(h), 0);
        for (int i = 0; i < 10; i++) {
                assert_int_equal(fk_expect_reply(h->fk[CUSEDEV_TRNG], (uint64_t)u[i], 5000, &m), 0);
                assert_int_equal(m.error, -EIO);
        }
        harness_free(h);
}

static void test_stop_answers_parked_readers(void **state) {
        Harness *h = harness_new();
        int64_t t[100], r[10];
        FkMsg m;
        uint8_t buf[8];

        h->config.start_delay_ms = 600000;
        assert_int_equal(harness_start(h), 0);
        for (int i = 0; i < 100; i++)
                t[i] = fk_send_read(h->fk[CUSEDEV_TRNG], NULL, h->trng.fh, 32, 0);
        for (int i = 0; i < 10; i++)
                r[i] = fk_send_read(h->fk[CUSEDEV_RANDOM], NULL, h->random.fh, 32, 0);
        assert_int_equal(entcnt(h, CUSEDEV_TRNG, &h->trng, NULL), 0);
        assert_int_equal(harness_stop(h), 0);
        for (int i = 0; i < 100; i++) {
                assert_int_equal(fk_expect_reply(h->fk[CUSEDEV_TRNG], (uint64_t)t[i], 5000, &m), 0);
                assert_int_equal(m.error, -EIO);
        }
        for (int i = 0; i < 10; i++) {
                assert_int_equal(fk_expect_reply(h->fk[CUSEDEV_RANDOM], (uint64_t)r[i], 5000, &m), 0);
                assert_int_equal(m.error, -EIO);
        }
        /* The sessions are closed: the kernel side sees the end. */
        assert_true(fk_read(h->fk[CUSEDEV_TRNG], &h->trng, buf, sizeof(buf)) < 0);
        harness_free(h);
}

static void write_conf(Harness *h, const char *text) {
        char full[1024];
        snprintf(full, sizeof(full),
                 "[device]\ngroup = %u\n[control]\nsocket = %s/control\n[source.jitter]\nenable = no\n"
                 "[source.rdseed]\nenable = no\n[source.hwrng]\nenable = no\n"
                 "[source.file]\nenable = yes\ncredit = 8\nloop = yes\npath = %s\n%s",
                 (unsigned)getgid(), h->dir, h->samples, text);
        write_file(h->conf, full, strlen(full));
}

/* SIGHUP, then waits up to ms for the node to take `expect` (a refused
 * reload never does: the wait is the daemon's chance to get it wrong). */
static void reload_and_wait(Harness *h, mode_t expect, unsigned ms) {
        uint64_t until = now_ms() + ms;

        assert_int_equal(kill(getpid(), SIGHUP), 0);
        while (node_mode(h, "truerandom") != expect && now_ms() < until)
                sleep_ms(10);
}

static CtlStatus *control_status(Harness *h);

/* The reload as `truerandomctl status` reports it, once the daemon has
 * handled `count` of them. */
static CtlStatus *wait_reload_status(Harness *h, double count) {
        uint64_t until = now_ms() + 5000;
        CtlStatus *j;
        double n = 0;

        for (;;) {
                j = control_status(h);
                if ((ctl_status_get_number(ctl_status_get_object(ctl_status_root(j), "reload"), "count", &n) &&
                     n >= count) || now_ms() > until)
                        break;
                ctl_status_free(j);
                sleep_ms(20);
        }
        assert_true(n == count);
        return j;
}

static void test_reload_good_and_bad(void **state) {
        const CtlStatusObject *rl;
        CtlStatus *j;
        Harness *h = harness_new();
        char *error = NULL;
        uint8_t buf[64];

        write_conf(h, "[device]\ntrng_mode = 0440\n");
        config_done(&h->config);
        assert_int_equal(config_load(h->conf, false, &h->config, &error), 0);
        h->use_conf_file = true;
        assert_int_equal(harness_start(h), 0);
        assert_int_equal(node_mode(h, "truerandom"), 0440);

        /* A good file applies. */
        write_conf(h, "[device]\ntrng_mode = 0400\n");
        reload_and_wait(h, 0400, 5000);
        assert_int_equal(node_mode(h, "truerandom"), 0400);
        j = wait_reload_status(h, 1);
        rl = ctl_status_get_object(ctl_status_root(j), "reload");
        assert_string_equal(ctl_status_get_string(rl, "result"), "ok");
        assert_null(ctl_status_get_string(rl, "error"));
        ctl_status_free(j);

        /* A bad one changes nothing, even the keys before its mistake. */
        write_conf(h, "[device]\ntrng_mode = 0444\nmax_parked = many\n");
        reload_and_wait(h, 0444, 1000);
        assert_int_equal(node_mode(h, "truerandom"), 0400);
        /* ... and says so where monitoring looks, not only in the journal. */
        j = wait_reload_status(h, 2);
        rl = ctl_status_get_object(ctl_status_root(j), "reload");
        assert_string_equal(ctl_status_get_string(rl, "result"), "refused");
        assert_non_null(ctl_status_get_string(rl, "error"));
        assert_non_null(strstr(ctl_status_get_string(rl, "error"), "max_parked"));
        ctl_status_free(j);
        wait_seeded(h);
        assert_int_equal(fk_read(h->fk[CUSEDEV_TRNG], &h->trng, buf, sizeof(buf)), 64);
        harness_free(h);
}

static void test_failing_source_stalls_truerandom(void **state) {
        Harness *h = harness_new();
        uint8_t stuck[8192];
        FkFile nb;
        uint8_t buf[32];

        memset(stuck, 0x5a, sizeof(stuck));
        write_file(h->samples, stuck, sizeof(stuck));
        assert_int_equal(harness_start(h), 0);
        nb = h->trng;
        nb.flags |= O_NONBLOCK;
        /* A stuck source never passes its startup test: nothing is ever
         * served, and the drop-in random stays unseeded. */
        for (int i = 0; i < 20; i++) {
                assert_int_equal(fk_read(h->fk[CUSEDEV_TRNG], &nb, buf, sizeof(buf)), -EAGAIN);
                sleep_ms(25);
        }
        assert_int_equal(entcnt(h, CUSEDEV_TRNG, &h->trng, NULL), 0);
        assert_int_equal(entcnt(h, CUSEDEV_RANDOM, &h->random, NULL), 0);
        harness_free(h);
}

static void test_null_device(void **state) {
        Harness *h = harness_new();
        FkFile f;
        static uint8_t buf[131072], zero[131072];

        h->config.null_name = strdup("truerandom-null");
        assert_int_equal(harness_start(h), 0);
        assert_int_equal(fk_open(h->fk[CUSEDEV_NULL], NULL, O_RDONLY, &f), 0);
        memset(buf, 1, sizeof(buf));
        assert_int_equal(fk_read(h->fk[CUSEDEV_NULL], &f, buf, sizeof(buf)), (ssize_t)sizeof(buf));
        assert_memory_equal(buf, zero, sizeof(buf));
        harness_free(h);
}

/* `truerandomctl status --json`, from the test: the daemon's own account. */
static CtlStatus *control_status(Harness *h) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        static char buf[CTL_REPLY_MAX];
        CtlRequest req = { .command = CTL_COMMAND_STATUS };
        CtlReply reply;
        CtlStatus *j = NULL;
        ssize_t n;
        int fd;

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control", h->dir);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        n = ctl_request_format(&req, buf, sizeof(buf));
        assert_true(n > 0);
        assert_int_equal(send(fd, buf, (size_t)n, 0), n);
        n = recv(fd, buf, sizeof(buf), 0);
        assert_true(n > 0);
        close(fd);
        assert_int_equal(ctl_reply_parse(buf, (size_t)n, &reply), 0);
        assert_int_equal(reply.kind, CTL_REPLY_OK);
        assert_int_equal(ctl_status_parse((const char *)reply.payload, reply.payload_size, &j), 0);
        return j;
}

static double json_number(const CtlStatus *j, const char *object, const char *key) {
        const CtlStatusObject *o = object ? ctl_status_get_object(ctl_status_root(j), object) : ctl_status_root(j);
        double v;

        assert_true(ctl_status_get_number(o, key, &v));
        return v;
}

static void test_status_accounts_every_byte(void **state) {
        Harness *h = harness_new();
        uint8_t buf[4096];
        uint64_t got = 0;
        double served, taken;
        const CtlStatusObject *file = NULL;
        CtlStatus *j;
        FkMsg m;
        int64_t u;

        h->config.source[CONFIG_SOURCE_FILE].rate = 20000;
        assert_int_equal(harness_start(h), 0);
        wait_seeded(h);
        for (int i = 0; i < 50; i++) {
                ssize_t n = fk_read(h->fk[CUSEDEV_TRNG], &h->trng, buf, 1 + (size_t)(i * 97) % sizeof(buf));
                assert_true(n > 0);
                got += (uint64_t)n;
                /* Now and then a reader gives up: what it was not given is
                 * not counted as served, nor lost to the next reader. */
                u = fk_send_read(h->fk[CUSEDEV_TRNG], NULL, h->trng.fh, 4096, 0);
                fk_send_interrupt(h->fk[CUSEDEV_TRNG], (uint64_t)u);
                assert_int_equal(fk_expect_reply(h->fk[CUSEDEV_TRNG], (uint64_t)u, 5000, &m), 0);
                if (m.error == 0)
                        got += m.len;
                else
                        assert_int_equal(m.error, -EINTR);
        }
        /* An INTERRUPT that raced with its read's reply waits in libfuse
         * until the next request answers it EAGAIN; send one, as any busy
         * device gets, so none is left when the session ends. */
        assert_true(entcnt(h, CUSEDEV_TRNG, &h->trng, NULL) >= 0);
        j = control_status(h);
        served = json_number(j, "store", "bytes_served");
        taken = json_number(j, "store", "credited_bits_taken");
        print_message("served %.0f bytes, read %llu; credited bits taken %.0f\n", served, (unsigned long long)got,
                      taken);
        assert_true(served == (double)got);
        /* The invariant, as the daemon reports it: 8 x bytes <= 0.8 x bits. */
        assert_true(served * 8.0 <= taken * 0.8);
        assert_true(ctl_status_get_count(ctl_status_root(j), "sources") > 0);
        for (size_t i = 0; i < ctl_status_get_count(ctl_status_root(j), "sources"); i++) {
                const CtlStatusObject *s = ctl_status_get_element(ctl_status_root(j), "sources", i);
                if (strcmp(ctl_status_get_string(s, "name"), "file") == 0)
                        file = s;
        }
        assert_non_null(file);
        assert_string_equal(ctl_status_get_string(file, "state"), "healthy");
        assert_true(json_number(j, "reload", "count") == 0);
        assert_string_equal(ctl_status_get_string(ctl_status_get_object(ctl_status_root(j), "reload"), "result"),
                            "none");
        assert_true(json_number(j, NULL, "version") >= 2);
        assert_true(json_number(j, NULL, "min_healthy") >= 1);
        assert_non_null(ctl_status_get_string(ctl_status_root(j), "daemon_version"));
        assert_true(ctl_status_is_true(ctl_status_root(j), "trng_serving"));
        assert_int_equal(ctl_status_health(j), CTL_HEALTH_SERVING);
        assert_true(ctl_status_is_true(ctl_status_get_object(ctl_status_root(j), "crng"), "seeded"));
        ctl_status_free(j);
        harness_free(h);
}

/* The callers of the fake /proc: this process, an idle child (killed with
 * this process), and a child that has exited and been reaped. */
static bool start_callers(void) {
        pid_t idle, gone;

        priv.pid = (uint32_t) getpid();
        idle = fork();
        if (idle == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                for (;;)
                        pause();
        }
        gone = fork();
        if (gone == 0)
                _exit(0);
        if (idle < 0 || gone < 0 || waitpid(gone, NULL, 0) != gone)
                return false;
        unpriv.pid = (uint32_t) idle;
        root_gone.pid = (uint32_t) gone;
        return true;
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_init_nodes_and_reads, teardown),
                cmocka_unit_test_teardown(test_nonblock_empty_and_parked, teardown),
                cmocka_unit_test_teardown(test_interrupt_loses_nothing, teardown),
                cmocka_unit_test_teardown(test_thousand_parked_all_answered, teardown),
                cmocka_unit_test_teardown(test_fair_share_two_uids, teardown),
                cmocka_unit_test_teardown(test_small_reader_not_stuck_behind_huge, teardown),
                cmocka_unit_test_teardown(test_dropin_before_and_after_seeding, teardown),
                cmocka_unit_test_teardown(test_ioctls, teardown),
                cmocka_unit_test_teardown(test_userns_caller_refused, teardown),
                cmocka_unit_test_teardown(test_malformed_ioctl_frames, teardown),
                cmocka_unit_test_teardown(test_bounded_parking, teardown),
                cmocka_unit_test_teardown(test_stop_answers_parked_readers, teardown),
                cmocka_unit_test_teardown(test_reload_good_and_bad, teardown),
                cmocka_unit_test_teardown(test_failing_source_stalls_truerandom, teardown),
                cmocka_unit_test_teardown(test_null_device, teardown),
                cmocka_unit_test_teardown(test_status_accounts_every_byte, teardown),
        };
        sigset_t ss;
        int r;

        /* Blocked in every thread: only the daemon's signalfd takes them. */
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigaddset(&ss, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &ss, NULL);
        if (sodium_init() < 0)
                return 1;
        if (!start_callers())
                return 1;
        r = cmocka_run_group_tests(tests, NULL, NULL);
        fakeproc_caller_kill((pid_t) unpriv.pid);
        return r;
}
