/* test-kmsgflood.c - a flood of the kernel log as a user can make it
 * (issue 23): the daemon's kernel-log reader loses records again and again
 * (read() on /dev/kmsg fails with EPIPE), and each loss may have hidden a
 * VM fork. The daemon rekeys its CRNG on every loss but purges the store at
 * most once per 10 s, and logs a burst of losses once when it starts and
 * once when it ends, not once per loss. A VM fork the kernel announces is
 * still acted on at once.
 *
 * The real daemon in-process (fakedaemon.h) on a fake sysfs with a vmgenid
 * device bound to its driver; its kernel log a SOCK_SEQPACKET socketpair
 * (one record per read, as /dev/kmsg), whose read() the test wraps
 * (-Wl,--wrap=read) to fail with EPIPE a given number of times. The
 * verdict counts purges against the seconds the flood took as measured
 * here, so a slow machine gets the bound its own clock allows, never a
 * tighter one. The exact policy on a clock of its own is test-seeder's. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fakedaemon.h"

#define LOSSES 500
#define HANG_MS 600000ULL
#define FORK_RECORD "5,900,4239567,-;random: crng reseeded due to virtual machine fork\n"
#define BURST_START "kernel log records were lost before they were read"
#define BURST_END "burst of lost kernel log records ended"

/* read() on the daemon's kernel log fails with EPIPE this many times
 * more; set by the test thread, taken on the daemon's. */
static int kmsg_fd = -1, epipe_left;

ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n) {
        int left;

        if (fd == __atomic_load_n(&kmsg_fd, __ATOMIC_ACQUIRE)) {
                left = __atomic_load_n(&epipe_left, __ATOMIC_ACQUIRE);
                while (left > 0 && !__atomic_compare_exchange_n(&epipe_left, &left, left - 1, false,
                                                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                        ;
                if (left > 0) {
                        errno = EPIPE;
                        return -1;
                }
        }
        return __real_read(fd, buf, n);
}

static int kmsg[2] = { -1, -1 };
/* stderr while the daemon's log goes to a file; -1 when it is back. */
static int stderr_saved = -1;

static int open_kmsg(void *userdata) {
        __atomic_store_n(&kmsg_fd, kmsg[0], __ATOMIC_RELEASE);
        return kmsg[0];
}

static uint64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static double number(const FakeDaemon *d, const char *object, const char *key) {
        CtlStatus *s = NULL;
        double v = -1;

        assert_int_equal(fakedaemon_status(d, &s), 0);
        assert_true(ctl_status_get_number(ctl_status_get_object(ctl_status_root(s), object), key, &v));
        ctl_status_free(s);
        return v;
}

/* Waits (only a hang ends it) until status shows object.key >= want. */
static void wait_number(const FakeDaemon *d, const char *object, const char *key, double want) {
        uint64_t until = now_ms() + HANG_MS;

        while (number(d, object, key) < want) {
                assert_true(now_ms() < until);
                sleep_ms(20);
        }
}

/* Lines of the daemon's log (the file stderr went to) holding needle. */
static unsigned count_lines(const char *path, const char *needle) {
        char line[1024];
        unsigned n = 0;
        FILE *f = fopen(path, "re");

        assert_non_null(f);
        while (fgets(line, sizeof(line), f))
                if (strstr(line, needle))
                        n++;
        fclose(f);
        return n;
}

static char log_path[128];

static void restore_stderr(void) {
        if (stderr_saved < 0)
                return;
        fflush(stderr);
        (void)dup2(stderr_saved, STDERR_FILENO);
        close(stderr_saved);
        stderr_saved = -1;
}

/* After a failed test: stderr back, and what went to the file (the
 * failed assertion, the daemon's log) copied there. */
static int teardown(void **state) {
        char buf[4096];
        size_t n;
        FILE *f;

        if (stderr_saved < 0)
                return 0;
        restore_stderr();
        f = fopen(log_path, "re");
        while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
                fwrite(buf, 1, n, stderr);
        if (f)
                fclose(f);
        return 0;
}

static void mkdirs(const char *root, const char *rel) {
        char path[256], *p;

        (void)mkdir(root, 0755);
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                (void)mkdir(path, 0755);
                *p = '/';
        }
        assert_int_equal(mkdir(path, 0755), 0);
}

static void test_kmsg_flood(void **state) {
        DaemonHooks hooks = { 0 };
        char sys[96], link[192], *log = log_path;
        FakeDaemon *d = NULL;
        double purges, rekeys, seconds;
        unsigned starts, bound;
        uint64_t t0;
        Config c;
        int lf;

        assert_int_equal(fakedaemon_new("kmsgflood", "kmsgflood", &d), 0);
        /* A vmgenid device bound to its driver, as 6.12 shows it. */
        snprintf(sys, sizeof(sys), "%s/sys", d->dir);
        mkdirs(sys, "bus/platform/drivers/vmgenid");
        snprintf(link, sizeof(link), "%s/bus/platform/drivers/vmgenid/QEMUVGID:00", sys);
        assert_int_equal(symlink("../../../../devices/platform/QEMUVGID:00", link), 0);
        assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, kmsg), 0);

        snprintf(log_path, sizeof(log_path), "%s/daemon.log", d->dir);
        fflush(stderr);
        stderr_saved = dup(STDERR_FILENO);
        assert_true(stderr_saved >= 0);
        lf = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(lf >= 0);
        assert_int_equal(dup2(lf, STDERR_FILENO), STDERR_FILENO);
        close(lf);

        assert_int_equal(fakedaemon_config(d, &c), 0);
        hooks.sysfs_root = sys;
        hooks.open_kmsg = open_kmsg;
        assert_int_equal(fakedaemon_start(d, &c, NULL, &hooks), 0);
        /* The store holds blocks a purge would erase. */
        wait_number(d, "store", "fill", 1);

        /* The flood: one record to read, and LOSSES reads before it that
         * find records overwritten. */
        t0 = now_ms();
        __atomic_store_n(&epipe_left, LOSSES, __ATOMIC_RELEASE);
        assert_int_equal(write(kmsg[1], "6,1,1,-;flood\n", 14), 14);
        wait_number(d, "vm_generation", "lost_records", LOSSES);
        seconds = (double) (now_ms() - t0) / 1000.0;
        purges = number(d, "crng", "vm_generation_changes");
        rekeys = number(d, "crng", "rekeys");
        starts = count_lines(log, BURST_START);
        /* One purge at the start, then one per 10 s at most. */
        bound = (unsigned) (seconds / 10.0) + 2;
        print_message("%d lost-record events in %.1f s: %.0f purges (at most %u), %.0f rekeys, "
                      "%u burst warnings\n", LOSSES, seconds, purges, bound, rekeys, starts);
        assert_true(purges >= 1);
        assert_true(purges <= bound);
        assert_true(rekeys == LOSSES);
        /* A burst needs 10 s without a loss to end. */
        assert_true(starts >= 1 && starts <= bound);

        /* The kernel's own word for a fork purges at once, whatever the
         * flood's limit says. */
        purges = number(d, "crng", "vm_generation_changes");
        assert_int_equal(write(kmsg[1], FORK_RECORD, strlen(FORK_RECORD)),
                         (ssize_t) strlen(FORK_RECORD));
        wait_number(d, "crng", "vm_generation_changes", purges + 1);

        /* 10 s after the last loss the burst's end is logged, with what
         * it held. */
        {
                uint64_t until = now_ms() + HANG_MS;
                while (count_lines(log, BURST_END) == 0) {
                        assert_true(now_ms() < until);
                        sleep_ms(100);
                }
        }
        assert_true(count_lines(log, BURST_END) <= starts);

        restore_stderr();
        fakedaemon_free(d);
        config_done(&c);
        close(kmsg[1]);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_teardown(test_kmsg_flood, teardown),
        };

        fakedaemon_block_signals();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
