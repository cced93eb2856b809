/* test-privilege.c - who counts as privileged for the random ioctls: CapEff
 * parsing, a fake proc root, the uid fallback, and the real /proc checked
 * against capget(2). */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cuse/privilege.h"

#define SYS_ADMIN_BIT (UINT64_C(1) << CAP_SYS_ADMIN)

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

/* A throw-away proc root with <pid>/status files. */
typedef struct FakeProc {
        char root[64];
        pid_t pids[16];
        size_t n_pids;
} FakeProc;

static int fake_proc_setup(void **state) {
        FakeProc *fp = calloc(1, sizeof(*fp));
        assert_non_null(fp);
        strcpy(fp->root, "/tmp/test-privilege-XXXXXX");
        assert_non_null(mkdtemp(fp->root));
        *state = fp;
        return 0;
}

static void fake_proc_add(FakeProc *fp, pid_t pid, const char *capeff_line) {
        char path[128];
        assert_true(fp->n_pids < sizeof(fp->pids) / sizeof(fp->pids[0]));
        fp->pids[fp->n_pids++] = pid;
        snprintf(path, sizeof(path), "%s/%d", fp->root, (int) pid);
        assert_int_equal(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/%d/status", fp->root, (int) pid);
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        char *text = status_text(capeff_line);
        fputs(text, f);
        free(text);
        assert_int_equal(fclose(f), 0);
}

static int fake_proc_teardown(void **state) {
        FakeProc *fp = *state;
        char path[128];
        for (size_t i = 0; i < fp->n_pids; i++) {
                snprintf(path, sizeof(path), "%s/%d/status", fp->root, (int) fp->pids[i]);
                assert_int_equal(unlink(path), 0);
                snprintf(path, sizeof(path), "%s/%d", fp->root, (int) fp->pids[i]);
                assert_int_equal(rmdir(path), 0);
        }
        assert_int_equal(rmdir(fp->root), 0);
        free(fp);
        return 0;
}

static void test_fake_proc(void **state) {
        FakeProc *fp = *state;
        fake_proc_add(fp, 100, "CapEff:\t000001ffffffffff\n");
        fake_proc_add(fp, 101, "CapEff:\t0000000000000000\n");
        fake_proc_add(fp, 102, "CapEff:\t0000000000200000\n");
        fake_proc_add(fp, 103, "CapEff:\t000001ffffdfffff\n");
        fake_proc_add(fp, 104, "");
        fake_proc_add(fp, 105, "CapEff:\tzzzz\n");

        /* The capability decides, not the uid. */
        assert_true(privilege_check(fp->root, 100, 1000));
        assert_false(privilege_check(fp->root, 101, 0));
        assert_true(privilege_check(fp->root, 102, 1000));
        /* Every capability except CAP_SYS_ADMIN. */
        assert_false(privilege_check(fp->root, 103, 0));

        /* Unreadable or unparsable status: uid 0 decides. */
        assert_true(privilege_check(fp->root, 104, 0));
        assert_false(privilege_check(fp->root, 104, 1000));
        assert_true(privilege_check(fp->root, 105, 0));
        assert_false(privilege_check(fp->root, 105, 1000));
        assert_true(privilege_check(fp->root, 999, 0));
        assert_false(privilege_check(fp->root, 999, 1000));

        /* pid 0: the caller lives in another pid namespace. */
        assert_true(privilege_check(fp->root, 0, 0));
        assert_false(privilege_check(fp->root, 0, 1000));
}

static void test_missing_proc_root(void **state) {
        assert_true(privilege_check("/nonexistent-proc-root", 1, 0));
        assert_false(privilege_check("/nonexistent-proc-root", 1, 1000));
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
        /* The uid argument is the opposite of the answer, so a fallback to it
         * could not pass. */
        assert_int_equal(privilege_check(NULL, getpid(), expected ? 1000 : 0), expected);
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
                struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
                struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
                char c = 'x';
                if (syscall(SYS_capget, &hdr, data) == 0) {
                        data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
                        if (syscall(SYS_capset, &hdr, data) == 0)
                                c = 'd';
                }
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
        assert_true(privilege_check(NULL, getpid(), 1000));

        assert_int_equal(write(to_child[1], "q", 1), 1);
        int status;
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(to_parent[0]);
        close(to_child[1]);

        /* Gone: the uid decides. */
        assert_true(privilege_check(NULL, child, 0));
        assert_false(privilege_check(NULL, child, 1000));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse_capeff),
                cmocka_unit_test_setup_teardown(test_fake_proc, fake_proc_setup, fake_proc_teardown),
                cmocka_unit_test(test_missing_proc_root),
                cmocka_unit_test(test_real_proc_self),
                cmocka_unit_test(test_real_proc_root_without_cap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
