/* test-privdrop.c - after privdrop_apply() no thread of the process has root
 * ids, a capability in any set, or a way back: checked in forked children,
 * from /proc/self/task/N/status of every thread (one started after the drop
 * included), as the vm and systemd suites check the running daemon.
 * Needs root (it starts as root, as the daemon does by hand); skips
 * without. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/privdrop.h"

#define USER_ID 65533
#define MEMLOCK (UINT64_C(64) << 20)

static char failure[512];

__attribute__((format(printf, 1, 2)))
static bool failed(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(failure, sizeof(failure), fmt, ap);
        va_end(ap);
        return false;
}

/* One status file: the ids, every capability set 0, no_new_privs. */
static bool check_status(const char *path, unsigned id, bool bounding_empty) {
        char line[512], want_ids[128];
        unsigned seen = 0;
        FILE *f = fopen(path, "re");

        if (!f)
                return failed("%s: %s", path, strerror(errno));
        snprintf(want_ids, sizeof(want_ids), "\t%u\t%u\t%u\t%u\n", id, id, id, id);
        while (fgets(line, sizeof(line), f)) {
                const char *v = strchr(line, ':');
                bool zero;

                if (!v)
                        continue;
                v++;
                zero = strcmp(v, "\t0000000000000000\n") == 0;
                if (strncmp(line, "Uid:", 4) == 0 || strncmp(line, "Gid:", 4) == 0) {
                        if (strcmp(v, want_ids) != 0)
                                return fclose(f), failed("%s: %s", path, line);
                        seen++;
                } else if (strncmp(line, "CapInh:", 7) == 0 || strncmp(line, "CapPrm:", 7) == 0 ||
                           strncmp(line, "CapEff:", 7) == 0 || strncmp(line, "CapAmb:", 7) == 0 ||
                           (bounding_empty && strncmp(line, "CapBnd:", 7) == 0)) {
                        if (!zero)
                                return fclose(f), failed("%s: %s", path, line);
                        seen++;
                } else if (strncmp(line, "NoNewPrivs:", 11) == 0) {
                        if (strcmp(v, "\t1\n") != 0)
                                return fclose(f), failed("%s: %s", path, line);
                        seen++;
                }
        }
        fclose(f);
        if (seen != (bounding_empty ? 8U : 7U))
                return failed("%s: %u of the fields", path, seen);
        return true;
}

/* Every thread of this process. */
static bool check_all_tasks(unsigned id, bool bounding_empty) {
        DIR *d = opendir("/proc/self/task");
        struct dirent *e;
        unsigned n = 0;
        bool ok = true;

        if (!d)
                return failed("/proc/self/task: %s", strerror(errno));
        while (ok && (e = readdir(d))) {
                char path[300];

                if (e->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
                ok = check_status(path, id, bounding_empty);
                n++;
        }
        closedir(d);
        return ok && (n >= 2 || failed("only %u thread(s) seen", n));
}

static void *idle_thread(void *userdata) {
        int *fds = userdata;
        char c;

        return read(fds[0], &c, 1) < 0 ? NULL : userdata;
}

/* After the drop: a thread started now has the same credentials, none of it
 * can be undone, and the process cannot be dumped or traced. */
static bool check_dropped(unsigned id, bool bounding_empty) {
        int fds[2];
        pthread_t t;
        bool ok;

        if (pipe(fds) < 0 || pthread_create(&t, NULL, idle_thread, fds) != 0)
                return failed("cannot start a thread");
        ok = check_all_tasks(id, bounding_empty);
        (void) !write(fds[1], "q", 1);
        pthread_join(t, NULL);
        if (!ok)
                return false;
        if (setresuid(0, 0, 0) == 0 || setresgid(0, 0, 0) == 0 || setgroups(0, NULL) == 0)
                return failed("an id change back to root succeeded");
        if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
                return failed("dumpable");
        return true;
}

/* Runs fn in a forked child; its failure text, or "" when it passed. */
static const char *in_child(bool (*fn)(void)) {
        static char text[sizeof(failure)];
        int fds[2], status;
        ssize_t n;
        pid_t pid;

        assert_int_equal(pipe(fds), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                close(fds[0]);
                failure[0] = '\0';
                if (!fn() && !failure[0])
                        failed("failed");
                _exit(write(fds[1], failure, strlen(failure)) < 0);
        }
        close(fds[1]);
        n = read(fds[0], text, sizeof(text) - 1);
        close(fds[0]);
        text[n > 0 ? n : 0] = '\0';
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        return text;
}

static int need_root(void **state) {
        if (geteuid() != 0)
                skip();
        return 0;
}

/* ------------------------------------------------------------------ */

static void test_resolve_user(void **state) {
        struct passwd *nobody = getpwnam("nobody");
        uid_t uid = 1;
        gid_t gid = 1;

        assert_int_equal(privdrop_resolve_user("root", &uid, &gid), -EPERM);
        assert_int_equal(privdrop_resolve_user("0", &uid, &gid), -EPERM);
        assert_int_equal(privdrop_resolve_user("no-such-user-truerandom", &uid, &gid), -ENOENT);
        assert_int_equal(privdrop_resolve_user("", &uid, &gid), -EINVAL);
        assert_int_equal(uid, 1);
        assert_int_equal(gid, 1);
        if (!nobody)
                return;
        assert_int_equal(privdrop_resolve_user("nobody", &uid, &gid), 0);
        assert_int_equal(uid, nobody->pw_uid);
        assert_int_equal(gid, nobody->pw_gid);
        uid = gid = 1;
        assert_int_equal(privdrop_resolve_user("65534", &uid, &gid), nobody->pw_uid == 65534 ? 0 : -ENOENT);
}

static bool drop_from_root(void) {
        struct rlimit rl;
        const char *step = NULL;
        PrivDrop p;
        int r;

        r = privdrop_apply(USER_ID, USER_ID, MEMLOCK, &p, &step);
        if (r < 0)
                return failed("privdrop_apply: %s: %s", step, strerror(-r));
        if (!p.switched || p.bounding_kept || p.uid != USER_ID || p.gid != USER_ID)
                return failed("switched %d bounding_kept %d uid %u gid %u", p.switched, p.bounding_kept, p.uid, p.gid);
        /* Raised as far as the hard limit goes (a container may not have
         * CAP_SYS_RESOURCE to raise that). */
        if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0 ||
            (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < MEMLOCK && rl.rlim_cur != rl.rlim_max))
                return failed("RLIMIT_MEMLOCK not raised");
        if (getgroups(0, NULL) != 0)
                return failed("supplementary groups left");
        return check_dropped(USER_ID, true);
}

/* Started as root, by hand or from a test: a uid of its own, nothing left. */
static void test_drop_from_root(void **state) {
        assert_string_equal(in_child(drop_from_root), "");
}

/* systemd's User= with CapabilityBoundingSet= empty: nothing to switch,
 * nothing to keep; no_new_privs and the checks all the same. */
static bool drop_as_user(bool empty_bounding) {
        const char *step = NULL;
        PrivDrop p;
        int r;

        if (empty_bounding)
                for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
                        prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
        if (setgroups(0, NULL) < 0 || setresgid(USER_ID, USER_ID, USER_ID) < 0 ||
            setresuid(USER_ID, USER_ID, USER_ID) < 0)
                return failed("cannot become uid %u", USER_ID);
        r = privdrop_apply(1, 1, MEMLOCK, &p, &step);
        if (r < 0)
                return failed("privdrop_apply: %s: %s", step, strerror(-r));
        if (p.switched || p.uid != USER_ID || p.gid != USER_ID)
                return failed("switched %d uid %u gid %u", p.switched, p.uid, p.gid);
        /* Without CAP_SETPCAP a full bounding set stays, and is said to. */
        if (p.bounding_kept != !empty_bounding)
                return failed("bounding_kept %d", p.bounding_kept);
        return check_dropped(USER_ID, empty_bounding);
}

static bool drop_as_user_empty_bounding(void) {
        return drop_as_user(true);
}

static bool drop_as_user_full_bounding(void) {
        return drop_as_user(false);
}

static void test_drop_as_user(void **state) {
        assert_string_equal(in_child(drop_as_user_empty_bounding), "");
        assert_string_equal(in_child(drop_as_user_full_bounding), "");
}

/* With a second thread, a drop would leave that thread as it was: refused,
 * and nothing changed. */
static bool refuse_with_threads(void) {
        const char *step = NULL;
        int fds[2];
        pthread_t t;
        PrivDrop p;
        int r;

        if (pipe(fds) < 0 || pthread_create(&t, NULL, idle_thread, fds) != 0)
                return failed("cannot start a thread");
        r = privdrop_apply(USER_ID, USER_ID, MEMLOCK, &p, &step);
        (void) !write(fds[1], "q", 1);
        pthread_join(t, NULL);
        if (r != -EBUSY || !step || !strstr(step, "threads"))
                return failed("privdrop_apply with two threads: %d (%s)", r, step ? step : "-");
        if (geteuid() != 0)
                return failed("the uid changed anyway");
        /* root as the target: refused too. */
        r = privdrop_apply(0, 0, MEMLOCK, &p, &step);
        if (r != -EINVAL || geteuid() != 0)
                return failed("privdrop_apply to root: %d", r);
        return true;
}

static void test_refuses(void **state) {
        assert_string_equal(in_child(refuse_with_threads), "");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_resolve_user),
                cmocka_unit_test_setup(test_drop_from_root, need_root),
                cmocka_unit_test_setup(test_drop_as_user, need_root),
                cmocka_unit_test_setup(test_refuses, need_root),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
