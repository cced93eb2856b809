/* test-privilege-userns.c - CAP_SYS_ADMIN counts only in the initial user
 * namespace: real processes in user namespaces of their own, judged by a
 * daemon running as root (which may read every ns link) and by one running
 * as an unprivileged uid with no capability (which may not, and falls back
 * on the id maps).
 *
 * The callers: `unshare -Ur` done by hand as uid 65534 (root of its own
 * namespace, every capability in CapEff: the finding), a namespace
 * root made with the full identity map (the residual risk privilege.h
 * documents, pinned here), and real root. Needs root to make the callers;
 * exits 77 (meson's skip) where user namespaces cannot be made. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
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

#define NOBODY 65534
#define DAEMON_UID 65533
#define PROC_USER_INIT_INO 0xEFFFFFFDUL

static bool capget_sys_admin(void) {
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

        return syscall(SYS_capget, &hdr, data) == 0 &&
               (data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN));
}

static pid_t caller_must(bool own_map) {
        pid_t pid = fakeproc_userns_caller(own_map);

        assert_true(pid > 0);
        return pid;
}

/* ------------------------------------------------------------------ */

/* The finding: uid 65534 in a user namespace of its own has every
 * capability in CapEff, and passed. The daemon is root here and reads the
 * ns links; so the full-map namespace is refused too. */
static void test_root_daemon(void **state) {
        pid_t own = caller_must(true), full = caller_must(false);

        assert_false(privilege_check(NULL, own, 0));
        assert_false(privilege_check(NULL, own, NOBODY));
        assert_false(privilege_check(NULL, full, 0));
        /* Real root still is privileged. */
        assert_true(privilege_check(NULL, getpid(), 0));
        /* Where the devices charge them: the namespaces' shared account. */
        assert_int_equal(privilege_initial_userns(NULL, own, NOBODY), 0);
        assert_int_equal(privilege_initial_userns(NULL, full, 0), 0);
        assert_int_equal(privilege_initial_userns(NULL, getpid(), 0), 1);
        fakeproc_caller_kill(own);
        fakeproc_caller_kill(full);
}

/* The daemon after set-up: a uid of its own, no capability. It may not read
 * root's ns link (the premise of the fallback), yet real root is privileged
 * and the namespace root is not. The full identity map passes: the
 * residual risk, pinned so that a way to tell it apart shows up here. */
static void test_unprivileged_daemon(void **state) {
        char path[64], link[64], results[8];
        pid_t own, full;
        struct stat st;
        int fds[2];
        pid_t daemon, root = getpid();
        int status;

        assert_int_equal(stat("/proc/self/ns/user", &st), 0);
        if ((unsigned long) st.st_ino != PROC_USER_INIT_INO) {
                print_message("not in the initial user namespace: the fallback cannot be checked here\n");
                skip();
        }
        own = caller_must(true);
        full = caller_must(false);
        assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
        daemon = fork();
        assert_true(daemon >= 0);
        if (daemon == 0) {
                close(fds[0]);
                if (setgroups(0, NULL) < 0 || setresgid(DAEMON_UID, DAEMON_UID, DAEMON_UID) < 0 ||
                    setresuid(DAEMON_UID, DAEMON_UID, DAEMON_UID) < 0 || capget_sys_admin())
                        _exit(3);
                snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) root);
                results[0] = readlink(path, link, sizeof(link)) < 0 && errno == EACCES;
                results[1] = privilege_check(NULL, root, 0);
                results[2] = privilege_check(NULL, own, NOBODY);
                results[3] = privilege_check(NULL, full, 0);
                results[4] = privilege_check(NULL, 0, 0);
                results[5] = (char)privilege_initial_userns(NULL, root, 0);
                results[6] = (char)privilege_initial_userns(NULL, own, NOBODY);
                results[7] = privilege_initial_userns(NULL, 0, 0) < 0;
                _exit(write(fds[1], results, sizeof(results)) == sizeof(results) ? 0 : 4);
        }
        close(fds[1]);
        assert_int_equal(read(fds[0], results, sizeof(results)), sizeof(results));
        close(fds[0]);
        assert_int_equal(waitpid(daemon, &status, 0), daemon);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        assert_true(results[0]);        /* root's ns link: EACCES */
        assert_true(results[1]);        /* real root: privileged */
        assert_false(results[2]);       /* unshare -Ur as uid 65534 */
        assert_true(results[3]);        /* full identity map: the residual risk */
        assert_false(results[4]);       /* pid 0 */
        assert_int_equal(results[5], 1); /* real root: the initial namespace, by the maps */
        assert_int_equal(results[6], 0); /* unshare -Ur: another, by its map */
        assert_true(results[7]);        /* pid 0: cannot be told */
        fakeproc_caller_kill(own);
        fakeproc_caller_kill(full);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_root_daemon),
                cmocka_unit_test(test_unprivileged_daemon),
        };
        pid_t probe;

        if (geteuid() != 0 || !capget_sys_admin()) {
                fprintf(stderr, "test-privilege-userns: needs root with CAP_SYS_ADMIN to make its callers\n");
                return 77;
        }
        probe = fakeproc_userns_caller(true);
        if (probe == -EOPNOTSUPP) {
                fprintf(stderr, "test-privilege-userns: user namespaces cannot be made here\n");
                return 77;
        }
        if (probe < 0) {
                fprintf(stderr, "test-privilege-userns: could not make a caller in a user namespace: %s\n",
                        strerror(-probe));
                return 1;
        }
        fakeproc_caller_kill(probe);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
