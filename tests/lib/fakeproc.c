/* fakeproc.c - the callers of fakeproc.h: processes made root of a user
 * namespace of their own, and the fake /proc tree (directories, status files
 * in the kernel's format, ns/user files whose (device, inode) pairs say which
 * callers share the daemon's user namespace). */
#include "fakeproc.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY 65534

struct FakeProc {
        char root[PATH_MAX];
};

/* A file of the tree, or (create false) an existing one such as a /proc
 * file, which takes no O_TRUNC. */
static int write_file_as(const char *path, const char *text, bool create) {
        int fd = open(path, O_WRONLY | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0), 0644);
        size_t n = strlen(text);
        int r = 0;

        if (fd < 0)
                return -errno;
        if (write(fd, text, n) != (ssize_t) n)
                r = -EIO;
        close(fd);
        return r;
}

static int write_file(const char *path, const char *text) {
        return write_file_as(path, text, true);
}

static int write_proc(const char *path, const char *text) {
        return write_file_as(path, text, false);
}

static int mkdir_p(const char *path) {
        char buf[PATH_MAX];

        if (strlen(path) >= sizeof(buf))
                return -ENAMETOOLONG;
        strcpy(buf, path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        return mkdir(buf, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* ------------------------------------------------------------------ */
/* real callers in user namespaces                                     */

static bool has_sys_admin(void) {
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

        return syscall(SYS_capget, &hdr, data) == 0 &&
               (data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN));
}

static bool send_byte(int fd, char c) {
        return write(fd, &c, 1) == 1;
}

static char recv_byte(int fd) {
        char c = 0;
        return read(fd, &c, 1) == 1 ? c : 0;
}

/* Reports 'u' (user namespaces are off), 'x' (anything else failed), 'm'
 * (waiting for its maps) and 'k' (root of its namespace, CAP_SYS_ADMIN in
 * CapEff), then pauses. */
static _Noreturn void userns_child(bool own_map, int report, int cmd) {
        if (own_map) {
                if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                    setresuid(NOBODY, NOBODY, NOBODY) < 0)
                        _exit(send_byte(report, 'x'));
                /* The uid change made it undumpable and its /proc files
                 * root's; after exec (`unshare -Ur`) they would be its own. */
                prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        }
        if (unshare(CLONE_NEWUSER) < 0)
                _exit(send_byte(report, errno == EPERM || errno == EINVAL || errno == ENOSPC || errno == EUSERS
                                                ? 'u' : 'x'));
        if (own_map) {
                if (write_proc("/proc/self/setgroups", "deny") < 0 ||
                    write_proc("/proc/self/uid_map", "0 65534 1") < 0 ||
                    write_proc("/proc/self/gid_map", "0 65534 1") < 0)
                        _exit(send_byte(report, 'x'));
        } else if (!send_byte(report, 'm') || recv_byte(cmd) != 'M') {
                /* Only a process with CAP_SETUID and CAP_SETGID outside may
                 * write a full map: the parent does. */
                _exit(1);
        }
        if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0 || !has_sys_admin())
                _exit(send_byte(report, 'x'));
        /* Gone with the test, also when an assertion ends it early (set
         * last: a change of credentials clears it). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || !send_byte(report, 'k'))
                _exit(1);
        for (;;)
                pause();
}

pid_t fakeproc_userns_caller(bool own_map) {
        int report[2], cmd[2];
        char path[64], c;
        pid_t pid;

        if (pipe2(report, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(cmd, O_CLOEXEC) < 0) {
                close(report[0]);
                close(report[1]);
                return -errno;
        }
        pid = fork();
        if (pid == 0) {
                close(report[0]);
                close(cmd[1]);
                userns_child(own_map, report[1], cmd[0]);
        }
        close(report[1]);
        close(cmd[0]);
        c = pid > 0 ? recv_byte(report[0]) : 0;
        if (c == 'm') {
                snprintf(path, sizeof(path), "/proc/%d/uid_map", (int) pid);
                if (write_proc(path, "0 0 4294967295") == 0) {
                        snprintf(path, sizeof(path), "/proc/%d/gid_map", (int) pid);
                        if (write_proc(path, "0 0 4294967295") == 0 && send_byte(cmd[1], 'M'))
                                c = recv_byte(report[0]);
                }
        }
        close(report[0]);
        close(cmd[1]);
        if (pid < 0)
                return -ENOMEM;
        if (c == 'k')
                return pid;
        fakeproc_caller_kill(pid);
        return c == 'u' ? -EOPNOTSUPP : -EIO;
}

void fakeproc_caller_kill(pid_t pid) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

/* ------------------------------------------------------------------ */
/* the fake tree                                                       */

int fakeproc_new(const char *dir, FakeProc **ret) {
        FakeProc *fp = calloc(1, sizeof(*fp));
        char path[PATH_MAX + 16];
        int r;

        if (!fp)
                return -ENOMEM;
        if ((size_t) snprintf(fp->root, sizeof(fp->root), "%s/fakeproc-XXXXXX", dir) >= sizeof(fp->root) ||
            !mkdtemp(fp->root)) {
                free(fp);
                return -EINVAL;
        }
        snprintf(path, sizeof(path), "%s/self/ns", fp->root);
        r = mkdir_p(path);
        if (r >= 0) {
                strcat(path, "/user");
                r = write_file(path, "");
        }
        if (r < 0) {
                fakeproc_free(fp);
                return r;
        }
        *ret = fp;
        return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path) < 0 ? -1 : 0;
}

FakeProc *fakeproc_free(FakeProc *fp) {
        if (!fp)
                return NULL;
        nftw(fp->root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        free(fp);
        return NULL;
}

const char *fakeproc_root(const FakeProc *fp) {
        return fp->root;
}

int fakeproc_write(FakeProc *fp, pid_t pid, const char *name, const char *text) {
        char path[PATH_MAX + 64];

        snprintf(path, sizeof(path), "%s/%d/task/%d/%s", fp->root, (int) pid, (int) pid, name);
        return write_file(path, text);
}

int fakeproc_add(FakeProc *fp, pid_t pid, uid_t uid, uint64_t capeff, FakeProcNs ns) {
        char path[PATH_MAX + 64], self[PATH_MAX + 32], status[512], stat[128];
        int r;

        snprintf(status, sizeof(status),
                 "Name:\tcaller\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t1\n"
                 "Uid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\nGroups:\t\nNStgid:\t%d\nNSpid:\t%d\n"
                 "CapInh:\t0000000000000000\n"
                 "CapPrm:\t%016" PRIx64 "\nCapEff:\t%016" PRIx64 "\nCapBnd:\t000001ffffffffff\n"
                 "CapAmb:\t0000000000000000\nNoNewPrivs:\t0\n",
                 (int) pid, (int) pid, uid, uid, uid, uid, uid, uid, uid, uid, (int) pid, (int) pid, capeff, capeff);
        snprintf(path, sizeof(path), "%s/%d/task/%d/ns", fp->root, (int) pid, (int) pid);
        r = mkdir_p(path);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "%s/%d/stat", fp->root, (int) pid);
        snprintf(stat, sizeof(stat), "%d (caller) S 1 %d %d 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0\n",
                 (int) pid, (int) pid, (int) pid);
        if ((r = write_file(path, stat)) < 0)
                return r;
        if ((r = fakeproc_write(fp, pid, "status", status)) < 0 ||
            (r = fakeproc_write(fp, pid, "uid_map", "         0          0 4294967295\n")) < 0 ||
            (r = fakeproc_write(fp, pid, "gid_map", "         0          0 4294967295\n")) < 0)
                return r;
        /* PID/ shows its thread's files, as the kernel's /proc/TID/ does:
         * what a test writes into the task is what both paths read. */
        for (size_t i = 0; i < 4; i++) {
                static const char *const names[] = { "status", "uid_map", "gid_map", "ns" };
                char target[64];

                snprintf(path, sizeof(path), "%s/%d/%s", fp->root, (int) pid, names[i]);
                snprintf(target, sizeof(target), "task/%d/%s", (int) pid, names[i]);
                if ((unlink(path) < 0 && errno != ENOENT) || symlink(target, path) < 0)
                        return -errno;
        }

        snprintf(path, sizeof(path), "%s/%d/task/%d/ns/user", fp->root, (int) pid, (int) pid);
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        snprintf(self, sizeof(self), "%s/self/ns/user", fp->root);
        if (ns == FAKEPROC_NS_SAME && link(self, path) < 0)
                return -errno;
        if (ns == FAKEPROC_NS_OTHER)
                return write_file(path, "");
        return 0;
}
