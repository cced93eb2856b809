/* test-privilege.c - who counts as privileged for the random ioctls: the
 * parsing of status and id maps, a fake proc root (tests/lib/fakeproc.h)
 * over live processes, and the real /proc checked against capget(2):
 * threads, a caller that dropped CAP_SYS_ADMIN, callers that are gone; and
 * whether a caller is in the daemon's user namespace at all.
 * User namespaces are test-privilege-userns.c's. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cuse/privilege.h"
#include "fakeproc.h"

#define SYS_ADMIN_BIT (UINT64_C(1) << CAP_SYS_ADMIN)

/* pidfd_open() as a kernel before 5.3 (or valgrind) has it: ENOSYS. */
static bool pidfd_enosys;
static unsigned pidfd_refused;

long __real_syscall(long number, ...);
long __wrap_syscall(long number, ...);

/* Reads exactly the arguments each call passes (a variadic wrapper may not
 * read more: clang's AddressSanitizer stops it with stack-buffer-underflow).
 * This binary makes three: pidfd_open(pid, flags) in privilege.c, and
 * capget(hdr, data) and capset(hdr, data) in the test itself. */
long __wrap_syscall(long number, ...) {
        va_list ap;
        long r;

        va_start(ap, number);
        if (number == SYS_pidfd_open) {
                pid_t pid = va_arg(ap, pid_t);
                unsigned flags = va_arg(ap, unsigned);

                if (pidfd_enosys) {
                        pidfd_refused++;
                        errno = ENOSYS;
                        r = -1;
                } else
                        r = __real_syscall(number, pid, flags);
        } else {
                void *hdr, *data;

                assert_true(number == SYS_capget || number == SYS_capset);
                hdr = va_arg(ap, void *);
                data = va_arg(ap, void *);
                r = __real_syscall(number, hdr, data);
        }
        va_end(ap);
        return r;
}

/* A status text as Linux 6.1 prints it, with the CapEff value substituted. */
static char *status_text(const char *capeff_line) {
        static const char head[] =
                "Name:\tgpg-agent\n"
                "Umask:\t0077\n"
                "State:\tS (sleeping)\n"
                "Tgid:\t1234\n"
                "Ngid:\t0\n"
                "Pid:\t1234\n"
                "PPid:\t1\n"
                "TracerPid:\t0\n"
                "Uid:\t1000\t1000\t1000\t1000\n"
                "Gid:\t1000\t1000\t1000\t1000\n"
                "FDSize:\t64\n"
                "Groups:\t24 25 27 29 30 44 46 108 113 1000 \n"
                "NStgid:\t1234\n"
                "NSpid:\t1234\n"
                "VmPeak:\t   90264 kB\n"
                "Threads:\t1\n"
                "SigQ:\t0/31574\n"
                "CapInh:\t0000000000000000\n"
                "CapPrm:\t0000000000000000\n";
        static const char tail[] =
                "CapBnd:\t000001ffffffffff\n"
                "CapAmb:\t0000000000000000\n"
                "NoNewPrivs:\t0\n"
                "Seccomp:\t0\n"
                "Cpus_allowed_list:\t0-1\n";
        char *s = NULL;
        assert_true(asprintf(&s, "%s%s%s", head, capeff_line, tail) > 0);
        return s;
}

static void assert_capeff(const char *line, int expected_r, uint64_t expected) {
        char *text = status_text(line);
        uint64_t v = 0xdeadbeef;
        assert_int_equal(privilege_parse_capeff(text, &v), expected_r);
        assert_true(expected_r == 0 ? v == expected : v == 0xdeadbeef);
        free(text);
}

static void test_parse_capeff(void **state) {
        assert_capeff("CapEff:\t000001ffffffffff\n", 0, UINT64_C(0x000001ffffffffff));
        assert_capeff("CapEff:\t0000000000000000\n", 0, 0);
        assert_capeff("CapEff:\t0000000000200000\n", 0, SYS_ADMIN_BIT);
        assert_capeff("CapEff:\tffffffffffffffff\n", 0, UINT64_MAX);
        assert_capeff("CapEff:\t00000000A80425FB\n", 0, UINT64_C(0xa80425fb));
        assert_capeff("", -ENOENT, 0);
        /* Only a field that starts a line counts. */
        assert_capeff("XCapEff:\t000001ffffffffff\n", -ENOENT, 0);
        assert_capeff("CapEff:\n", -EINVAL, 0);
        assert_capeff("CapEff:\t\n", -EINVAL, 0);
        assert_capeff("CapEff:\t00000000002g0000\n", -EINVAL, 0);
        assert_capeff("CapEff:\t0x0000000000200000\n", -EINVAL, 0);
        assert_capeff("CapEff:\t-000000000200000\n", -EINVAL, 0);
        assert_capeff("CapEff:\t10000000000200000\n", -EINVAL, 0);
        assert_capeff("CapEff:\t0000000000200000 junk\n", -EINVAL, 0);

        /* The field on the last line, without a newline. */
        uint64_t v;
        assert_int_equal(privilege_parse_capeff("Name:\tx\nCapEff:\t0000000000200000", &v), 0);
        assert_true(v == SYS_ADMIN_BIT);
}

static void test_parse_map(void **state) {
        /* As the kernel prints the initial namespace's maps. */
        assert_true(privilege_map_is_identity("         0          0 4294967295\n"));
        assert_true(privilege_map_is_identity("0 0 4294967295"));
        /* A namespace's own map, `unshare -Ur` as uid 65534 made it. */
        assert_false(privilege_map_is_identity("         0      65534          1\n"));
        assert_false(privilege_map_is_identity("         0          0 4294967294\n"));
        assert_false(privilege_map_is_identity("         1          1 4294967294\n"));
        /* Two extents are never the initial namespace's. */
        assert_false(privilege_map_is_identity("         0          0 4294967295\n         0          0 1\n"));
        assert_false(privilege_map_is_identity("0 0 4294967295 junk\n"));
        assert_false(privilege_map_is_identity("0 0 42949672950\n"));
        assert_false(privilege_map_is_identity("0 0\n"));
        assert_false(privilege_map_is_identity(""));
}

/* Live processes to show in a fake tree (privilege_check() holds a pidfd on
 * each and refuses one that is gone). */
typedef struct Fake {
        FakeProc *fp;
        pid_t pids[4];
} Fake;

static int fake_setup(void **state) {
        Fake *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        assert_int_equal(fakeproc_new("/tmp", &f->fp), 0);
        for (size_t i = 0; i < 4; i++) {
                f->pids[i] = fork();
                assert_true(f->pids[i] >= 0);
                if (f->pids[i] == 0) {
                        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                        for (;;)
                                pause();
                }
        }
        *state = f;
        return 0;
}

static int fake_teardown(void **state) {
        Fake *f = *state;

        for (size_t i = 0; i < 4; i++) {
                kill(f->pids[i], SIGKILL);
                waitpid(f->pids[i], NULL, 0);
        }
        fakeproc_free(f->fp);
        free(f);
        return 0;
}

static void test_fake_proc(void **state) {
        Fake *f = *state;
        const char *root = fakeproc_root(f->fp);
        pid_t a = f->pids[0], b = f->pids[1], c = f->pids[2], d = f->pids[3];

        /* The capability decides, in the daemon's namespace, for the uid
         * the request carries. */
        assert_int_equal(fakeproc_add(f->fp, a, 1000, SYS_ADMIN_BIT, FAKEPROC_NS_SAME), 0);
        assert_true(privilege_check(root, a, 1000));
        assert_false(privilege_check(root, a, 0));
        assert_int_equal(fakeproc_add(f->fp, a, 0, UINT64_C(0x000001ffffdfffff), FAKEPROC_NS_SAME), 0);
        assert_false(privilege_check(root, a, 0));      /* every capability but CAP_SYS_ADMIN */
        assert_int_equal(fakeproc_add(f->fp, a, 0, 0, FAKEPROC_NS_SAME), 0);
        assert_false(privilege_check(root, a, 0));

        /* CapEff in another user namespace counts for nothing; nor without
         * a namespace to compare. */
        assert_int_equal(fakeproc_add(f->fp, b, 0, UINT64_C(0x000001ffffffffff), FAKEPROC_NS_OTHER), 0);
        assert_false(privilege_check(root, b, 0));
        assert_int_equal(fakeproc_add(f->fp, b, 0, UINT64_C(0x000001ffffffffff), FAKEPROC_NS_NONE), 0);
        assert_false(privilege_check(root, b, 0));

        /* Status files that are not what the kernel prints: unprivileged. */
        assert_int_equal(fakeproc_add(f->fp, c, 0, SYS_ADMIN_BIT, FAKEPROC_NS_SAME), 0);
        assert_true(privilege_check(root, c, 0));
        assert_int_equal(fakeproc_write(f->fp, c, "status", "Name:\tx\nTgid:\t1\nUid:\t0\t0\t0\t0\n"), 0);
        assert_false(privilege_check(root, c, 0));      /* no CapEff */
        assert_int_equal(fakeproc_write(f->fp, c, "status", "Tgid:\t1\nUid:\t0\t0\t0\nCapEff:\t0000000000200000\n"), 0);
        assert_false(privilege_check(root, c, 0));      /* three uids */
        assert_int_equal(fakeproc_write(f->fp, c, "status",
                                        "Tgid:\t1\nUid:\t0\t0\t0\t0\nCapEff:\tzzzz\n"), 0);
        assert_false(privilege_check(root, c, 0));
        assert_int_equal(fakeproc_write(f->fp, c, "status",
                                        "Tgid:\t1\nUid:\t0\t0\t0\t0\nCapEff:\t0000000000200000\n"
                                        "CapEff:\t0000000000200000\n"), 0);
        assert_false(privilege_check(root, c, 0));      /* a field twice */

        /* The thread's own directory says which thread group it is in: one
         * that names another group is not found there. */
        assert_int_equal(fakeproc_add(f->fp, d, 0, SYS_ADMIN_BIT, FAKEPROC_NS_SAME), 0);
        assert_true(privilege_check(root, d, 0));
        {
                char text[256];

                snprintf(text, sizeof(text), "Tgid:\t%d\nUid:\t0\t0\t0\t0\nCapEff:\t0000000000200000\n", (int) a);
                assert_int_equal(fakeproc_write(f->fp, d, "status", text), 0);
                assert_false(privilege_check(root, d, 0));
        }

        /* Missing pids, pid 0 (a caller in another pid namespace), a
         * missing tree: unprivileged, uid 0 or not. */
        assert_false(privilege_check(root, 999999, 0));
        assert_false(privilege_check(root, 0, 0));
        assert_false(privilege_check(root, -1, 0));
        assert_false(privilege_check("/nonexistent-proc-root", a, 0));
}

/* [device] privileged_ioctls: capability is the kernel's rule; host-root
 * also wants uid 0 and the daemon's pid namespace (one pid in NSpid:),
 * which root of a container with a pid namespace of its own is not, though
 * its full identity maps pass for the initial user namespace (issue 23,
 * hostile finding 4: capability admits it); none admits nobody. */
static void test_fake_proc_modes(void **state) {
        Fake *f = *state;
        const char *root = fakeproc_root(f->fp);
        pid_t host = f->pids[0], svc = f->pids[1], ctr = f->pids[2], old = f->pids[3];
        char text[256];

        assert_int_equal(fakeproc_add(f->fp, host, 0, SYS_ADMIN_BIT, FAKEPROC_NS_SAME), 0);
        assert_true(privilege_check_mode(root, host, 0, PRIVILEGE_CAPABILITY));
        assert_true(privilege_check_mode(root, host, 0, PRIVILEGE_HOST_ROOT));
        assert_false(privilege_check_mode(root, host, 0, PRIVILEGE_NONE));
        assert_false(privilege_check_mode(root, host, 0, _PRIVILEGE_MODE_MAX));

        /* A service given CAP_SYS_ADMIN without being root. */
        assert_int_equal(fakeproc_add(f->fp, svc, 1000, SYS_ADMIN_BIT, FAKEPROC_NS_SAME), 0);
        assert_true(privilege_check_mode(root, svc, 1000, PRIVILEGE_CAPABILITY));
        assert_false(privilege_check_mode(root, svc, 1000, PRIVILEGE_HOST_ROOT));

        /* Container root: pid 1 of its own pid namespace, every capability
         * in a user namespace whose maps read as the initial one's. */
        assert_int_equal(fakeproc_add(f->fp, ctr, 0, UINT64_C(0x000001ffffffffff), FAKEPROC_NS_SAME), 0);
        snprintf(text, sizeof(text), "Tgid:\t%d\nUid:\t0\t0\t0\t0\nNStgid:\t%d\t1\nNSpid:\t%d\t1\n"
                 "CapEff:\t000001ffffffffff\n", (int) ctr, (int) ctr, (int) ctr);
        assert_int_equal(fakeproc_write(f->fp, ctr, "status", text), 0);
        assert_true(privilege_check_mode(root, ctr, 0, PRIVILEGE_CAPABILITY));
        assert_false(privilege_check_mode(root, ctr, 0, PRIVILEGE_HOST_ROOT));

        /* No NSpid: line (before Linux 4.1): host-root cannot tell, so no. */
        assert_int_equal(fakeproc_add(f->fp, old, 0, SYS_ADMIN_BIT, FAKEPROC_NS_SAME), 0);
        snprintf(text, sizeof(text), "Tgid:\t%d\nUid:\t0\t0\t0\t0\nCapEff:\t0000000000200000\n", (int) old);
        assert_int_equal(fakeproc_write(f->fp, old, "status", text), 0);
        assert_true(privilege_check_mode(root, old, 0, PRIVILEGE_CAPABILITY));
        assert_false(privilege_check_mode(root, old, 0, PRIVILEGE_HOST_ROOT));
        /* A malformed or repeated NSpid: line is a status the kernel never
         * prints: unprivileged either way. */
        snprintf(text, sizeof(text), "Tgid:\t%d\nUid:\t0\t0\t0\t0\nNSpid:\t\nCapEff:\t0000000000200000\n", (int) old);
        assert_int_equal(fakeproc_write(f->fp, old, "status", text), 0);
        assert_false(privilege_check_mode(root, old, 0, PRIVILEGE_CAPABILITY));
        snprintf(text, sizeof(text), "Tgid:\t%d\nUid:\t0\t0\t0\t0\nNSpid:\t%d\nNSpid:\t%d\n"
                 "CapEff:\t0000000000200000\n", (int) old, (int) old, (int) old);
        assert_int_equal(fakeproc_write(f->fp, old, "status", text), 0);
        assert_false(privilege_check_mode(root, old, 0, PRIVILEGE_HOST_ROOT));
        snprintf(text, sizeof(text), "Tgid:\t%d\nUid:\t0\t0\t0\t0\nNSpid:\t%d x\nCapEff:\t0000000000200000\n",
                 (int) old, (int) old);
        assert_int_equal(fakeproc_write(f->fp, old, "status", text), 0);
        assert_false(privilege_check_mode(root, old, 0, PRIVILEGE_HOST_ROOT));
}

/* The devices' question (which account a caller is charged to): whether
 * it lives in the daemon's user namespace at all, whatever its
 * capabilities; anything that cannot be told is an error the devices take
 * as "another namespace". */
static void test_fake_proc_initial_userns(void **state) {
        Fake *f = *state;
        const char *root = fakeproc_root(f->fp);
        pid_t a = f->pids[0], b = f->pids[1], c = f->pids[2];

        assert_int_equal(fakeproc_add(f->fp, a, 1000, 0, FAKEPROC_NS_SAME), 0);
        assert_int_equal(privilege_initial_userns(root, a, 1000), 1);
        assert_false(privilege_check(root, a, 1000));
        /* A subordinate uid in a namespace of its own (newuidmap). */
        assert_int_equal(fakeproc_add(f->fp, b, 100005, 0, FAKEPROC_NS_OTHER), 0);
        assert_int_equal(fakeproc_write(f->fp, b, "uid_map", "         0     100000      65536\n"), 0);
        assert_int_equal(privilege_initial_userns(root, b, 100005), 0);
        /* Every capability does not make it the initial namespace. */
        assert_int_equal(fakeproc_add(f->fp, b, 0, UINT64_C(0x000001ffffffffff), FAKEPROC_NS_OTHER), 0);
        assert_int_equal(privilege_initial_userns(root, b, 0), 0);
        /* Told before its status is read (issue 23: 65,536 supplementary
         * groups make that read 240 times as costly): a status that cannot
         * be read at all leaves the answer 0, where reading it first said
         * -EISDIR. */
        {
                char path[4096];

                snprintf(path, sizeof(path), "%s/%d/task/%d/status", root, (int) b, (int) b);
                assert_int_equal(unlink(path), 0);
                assert_int_equal(mkdir(path, 0755), 0);
                assert_int_equal(privilege_initial_userns(root, b, 0), 0);
                assert_false(privilege_check(root, b, 0));
                assert_int_equal(rmdir(path), 0);
        }

        /* Cannot be told: no ns link, the request's uid is not the
         * caller's fsuid, pid 0 or missing, a missing tree. */
        assert_int_equal(fakeproc_add(f->fp, c, 1000, 0, FAKEPROC_NS_NONE), 0);
        assert_true(privilege_initial_userns(root, c, 1000) < 0);
        assert_true(privilege_initial_userns(root, a, 1001) < 0);
        assert_true(privilege_initial_userns(root, 0, 1000) < 0);
        assert_true(privilege_initial_userns(root, 999999, 1000) < 0);
        assert_true(privilege_initial_userns("/nonexistent-proc-root", a, 1000) < 0);

        /* Gone: its pid is free for someone else. */
        assert_int_equal(kill(a, SIGKILL), 0);
        assert_int_equal(waitpid(a, NULL, 0), a);
        assert_true(privilege_initial_userns(root, a, 1000) < 0);
}

/* A caller that is gone: its pid is free for someone else, so nothing read
 * about it may count, even though the files are still there. */
static void test_fake_proc_gone(void **state) {
        Fake *f = *state;
        const char *root = fakeproc_root(f->fp);
        pid_t a = f->pids[0];

        assert_int_equal(fakeproc_add(f->fp, a, 0, SYS_ADMIN_BIT, FAKEPROC_NS_SAME), 0);
        assert_true(privilege_check(root, a, 0));
        assert_int_equal(kill(a, SIGKILL), 0);
        assert_int_equal(waitpid(a, NULL, 0), a);
        assert_false(privilege_check(root, a, 0));
}

/* Read independently of /proc, through capget(2). */
static bool capget_sys_admin(pid_t pid) {
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = pid };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };
        assert_int_equal(syscall(SYS_capget, &hdr, data), 0);
        return data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN);
}

static void test_real_proc_self(void **state) {
        bool expected = capget_sys_admin(0);

        assert_int_equal(privilege_check(NULL, getpid(), geteuid()), expected);
        /* The request's uid must be the caller's fsuid: a pid that names
         * someone else is no evidence. */
        assert_false(privilege_check(NULL, getpid(), geteuid() + 1));
}

/* Drops CAP_SYS_ADMIN from the calling thread's effective set. */
static bool drop_sys_admin_effective(void) {
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

        if (syscall(SYS_capget, &hdr, data) < 0)
                return false;
        data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
        return syscall(SYS_capset, &hdr, data) == 0;
}

/* A root process that dropped CAP_SYS_ADMIN from its effective set is
 * refused, as the kernel refuses it. Needs CAP_SYS_ADMIN to start with. */
static void test_real_proc_root_without_cap(void **state) {
        if (!capget_sys_admin(0))
                skip();

        int to_parent[2], to_child[2];
        assert_int_equal(pipe2(to_parent, O_CLOEXEC), 0);
        assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
                /* Only the parent may hold the write end, so the child sees
                 * EOF and exits even when the parent fails an assertion. */
                close(to_child[1]);
                close(to_parent[0]);
                char c = drop_sys_admin_effective() ? 'd' : 'x';
                if (write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) < 0)
                        _exit(2);
                _exit(0);
        }
        close(to_child[0]);
        close(to_parent[1]);
        char c = 0;
        assert_int_equal(read(to_parent[0], &c, 1), 1);
        assert_int_equal(c, 'd');
        assert_false(capget_sys_admin(child));
        assert_false(privilege_check(NULL, child, 0));
        assert_true(privilege_check(NULL, getpid(), 0));

        assert_int_equal(write(to_child[1], "q", 1), 1);
        int status;
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(to_parent[0]);
        close(to_child[1]);

        /* Gone: no uid makes it privileged. */
        assert_false(privilege_check(NULL, child, 0));
}

/* A caller that exited while the daemon looked (a zombie: its /proc files
 * still say CAP_SYS_ADMIN, its pid is about to be free) is refused. */
static void test_real_proc_zombie(void **state) {
        char path[64], buf[256];
        pid_t child;
        int fd;

        if (!capget_sys_admin(0))
                skip();
        child = fork();
        assert_true(child >= 0);
        if (child == 0)
                _exit(0);
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) child);
        for (int i = 0; i < 1000; i++) {
                ssize_t n;

                fd = open(path, O_RDONLY | O_CLOEXEC);
                assert_true(fd >= 0);
                n = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                assert_true(n > 0);
                buf[n] = '\0';
                if (strstr(buf, ") Z "))
                        break;
                usleep(1000);
        }
        assert_non_null(strstr(buf, ") Z "));
        assert_false(privilege_check(NULL, child, 0));
        assert_int_equal(waitpid(child, NULL, 0), child);
}

typedef struct ThreadProbe {
        bool drop;
        pid_t tid;
        int ready[2], done[2];
} ThreadProbe;

static void *thread_probe(void *userdata) {
        ThreadProbe *t = userdata;
        char c = 'x';

        t->tid = gettid();
        if (!t->drop || drop_sys_admin_effective())
                c = 'r';
        if (write(t->ready[1], &c, 1) != 1 || read(t->done[0], &c, 1) < 0)
                return NULL;
        return NULL;
}

/* The FUSE request names the calling thread, not its process: a thread
 * other than the leader is judged by its own capabilities (found through
 * its thread group; pidfd_open() of a thread fails before Linux 6.9). */
static void test_real_proc_threads(void **state) {
        ThreadProbe t[2] = { { .drop = false }, { .drop = true } };
        pthread_t th[2];

        if (!capget_sys_admin(0))
                skip();
        for (int i = 0; i < 2; i++) {
                char c = 0;

                assert_int_equal(pipe2(t[i].ready, O_CLOEXEC), 0);
                assert_int_equal(pipe2(t[i].done, O_CLOEXEC), 0);
                assert_int_equal(pthread_create(&th[i], NULL, thread_probe, &t[i]), 0);
                assert_int_equal(read(t[i].ready[0], &c, 1), 1);
                assert_int_equal(c, 'r');
        }
        assert_true(t[0].tid != getpid() && t[1].tid != getpid());
        assert_true(privilege_check(NULL, t[0].tid, 0));
        assert_false(privilege_check(NULL, t[1].tid, 0));
        assert_true(privilege_check(NULL, getpid(), 0));
        for (int i = 0; i < 2; i++) {
                assert_int_equal(write(t[i].done[1], "q", 1), 1);
                assert_int_equal(pthread_join(th[i], NULL), 0);
                for (int k = 0; k < 2; k++) {
                        close(t[i].ready[k]);
                        close(t[i].done[k]);
                }
        }
}

/* The same without pidfd_open(): the start time in /proc/TGID/stat holds
 * the caller instead; zombies and gone callers are still refused. */
static int without_pidfd(void **state) {
        pidfd_enosys = true;
        pidfd_refused = 0;
        return 0;
}

/* The test did go the way without pidfd (unless it skipped, not root). */
static int with_pidfd(void **state) {
        pidfd_enosys = false;
        return pidfd_refused > 0 || geteuid() != 0 ? 0 : -1;
}

static int fake_setup_without_pidfd(void **state) {
        without_pidfd(state);
        return fake_setup(state);
}

static int fake_teardown_with_pidfd(void **state) {
        with_pidfd(state);
        return fake_teardown(state);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_capeff),
                cmocka_unit_test(test_parse_map),
                cmocka_unit_test_setup_teardown(test_fake_proc, fake_setup, fake_teardown),
                cmocka_unit_test_setup_teardown(test_fake_proc_gone, fake_setup, fake_teardown),
                cmocka_unit_test_setup_teardown(test_fake_proc_initial_userns, fake_setup, fake_teardown),
                cmocka_unit_test_setup_teardown(test_fake_proc_modes, fake_setup, fake_teardown),
                cmocka_unit_test(test_real_proc_self),
                cmocka_unit_test(test_real_proc_root_without_cap),
                cmocka_unit_test(test_real_proc_zombie),
                cmocka_unit_test(test_real_proc_threads),
                cmocka_unit_test_setup_teardown(test_fake_proc_gone, fake_setup_without_pidfd, fake_teardown_with_pidfd),
                cmocka_unit_test_setup_teardown(test_real_proc_self, without_pidfd, with_pidfd),
                cmocka_unit_test_setup_teardown(test_real_proc_root_without_cap, without_pidfd, with_pidfd),
                cmocka_unit_test_setup_teardown(test_real_proc_zombie, without_pidfd, with_pidfd),
                cmocka_unit_test_setup_teardown(test_real_proc_threads, without_pidfd, with_pidfd),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
