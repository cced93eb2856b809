/* privilege.c - whether a CUSE caller may use the privileged random ioctls:
 * CAP_SYS_ADMIN in its effective set, in the daemon's user namespace. See
 * privilege.h for what is read, why the id maps stand in for the ns link
 * when the daemon may not read it, and what that leaves open.
 * The same look at the caller tells the devices whether it is in that
 * user namespace at all (privilege_initial_userns()).
 * Everything here fails closed: a file that cannot be read or parsed, a
 * thread that is gone, a pidfd that cannot be had, mean "unprivileged" and
 * "not in the initial user namespace".
 * Flow: CUSE ioctl -> [privilege] -> rndioctl-decoded operation. */
#include "privilege.h"
#include "cusedev.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"

#define CAPEFF_FIELD "CapEff:"
#define TGID_FIELD "Tgid:"
#define UID_FIELD "Uid:"
#define NSPID_FIELD "NSpid:"
/* The initial user namespace's inode number, fixed since Linux 3.8
 * (include/linux/proc_ns.h; systemd relies on it too). */
#define PROC_USER_INIT_INO UINT64_C(0xEFFFFFFD)
/* The longest status line read whole (privilege.c's fields). */
#define STATUS_LINE_MAX 512
/* One extent is one line of at most 3 x 10 digits and separators. */
#define MAP_TEXT_MAX 128

typedef struct CallerStatus {
        pid_t tgid;
        uid_t fsuid;
        uint64_t capeff;
        unsigned nspid_levels;       /* pids in NSpid: (1: the daemon's pid namespace); 0: no such line */
        unsigned seen;               /* FIELD_* bits */
} CallerStatus;

enum { FIELD_TGID = 1, FIELD_UID = 2, FIELD_CAPEFF = 4, FIELD_NSPID = 8 };
#define FIELDS_NEEDED (FIELD_TGID | FIELD_UID | FIELD_CAPEFF)

static void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

/* ------------------------------------------------------------------ */
/* parsing what the kernel prints                                      */

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

static const char *skip_blanks(const char *p) {
        while (*p == '\t' || *p == ' ')
                p++;
        return p;
}

static bool at_line_end(const char *p) {
        return *p == '\n' || *p == '\0';
}

/* p points just past "CapEff:". The kernel prints a tab and exactly 16 hex
 * digits; 1..16 digits are accepted, anything that could overflow or carries
 * junk before the end of the line is not. */
static int parse_capeff_value(const char *p, uint64_t *ret) {
        uint64_t v = 0;
        unsigned digits = 0;

        p = skip_blanks(p);
        for (int d; (d = hex_digit(*p)) >= 0; p++) {
                if (++digits > 16)
                        return -EINVAL;
                v = v << 4 | (uint64_t) d;
        }
        if (digits == 0 || !at_line_end(p))
                return -EINVAL;
        *ret = v;
        return 0;
}

/* A decimal in [0, max], then blanks; *p moves past both. */
static int parse_decimal(const char **p, uint64_t max, uint64_t *ret) {
        const char *s = skip_blanks(*p);
        uint64_t v = 0;
        unsigned digits = 0;

        for (; *s >= '0' && *s <= '9'; s++, digits++) {
                if (v > (max - (uint64_t) (*s - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        if (digits == 0)
                return -EINVAL;
        *p = skip_blanks(s);
        *ret = v;
        return 0;
}

int privilege_parse_capeff(const char *status_text, uint64_t *ret_capeff) {
        const char *line = status_text;
        for (;;) {
                if (strncmp(line, CAPEFF_FIELD, strlen(CAPEFF_FIELD)) == 0)
                        return parse_capeff_value(line + strlen(CAPEFF_FIELD), ret_capeff);
                line = strchr(line, '\n');
                if (!line)
                        return -ENOENT;
                line++;
        }
}

/* One status line; the fields we need, each once. */
static int parse_status_line(const char *line, CallerStatus *st) {
        uint64_t v, ids[4];
        const char *p;
        int r;

        if (strncmp(line, TGID_FIELD, strlen(TGID_FIELD)) == 0) {
                p = line + strlen(TGID_FIELD);
                r = parse_decimal(&p, INT_MAX, &v);
                if (r < 0 || v == 0 || !at_line_end(p) || st->seen & FIELD_TGID)
                        return -EINVAL;
                st->tgid = (pid_t) v;
                st->seen |= FIELD_TGID;
        } else if (strncmp(line, UID_FIELD, strlen(UID_FIELD)) == 0) {
                /* Real, effective, saved, filesystem: FUSE sends the last. */
                p = line + strlen(UID_FIELD);
                for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                        if (parse_decimal(&p, UINT32_MAX, &ids[i]) < 0)
                                return -EINVAL;
                if (!at_line_end(p) || st->seen & FIELD_UID)
                        return -EINVAL;
                st->fsuid = (uid_t) ids[3];
                st->seen |= FIELD_UID;
        } else if (strncmp(line, CAPEFF_FIELD, strlen(CAPEFF_FIELD)) == 0) {
                if (parse_capeff_value(line + strlen(CAPEFF_FIELD), &st->capeff) < 0 || st->seen & FIELD_CAPEFF)
                        return -EINVAL;
                st->seen |= FIELD_CAPEFF;
        } else if (strncmp(line, NSPID_FIELD, strlen(NSPID_FIELD)) == 0) {
                /* The thread's pid in each pid namespace from /proc's down
                 * to its own (Linux 4.1 and later). */
                unsigned n = 0;

                for (p = skip_blanks(line + strlen(NSPID_FIELD)); !at_line_end(p); n++)
                        if (parse_decimal(&p, INT_MAX, &v) < 0)
                                return -EINVAL;
                if (n == 0 || st->seen & FIELD_NSPID)
                        return -EINVAL;
                st->nspid_levels = n;
                st->seen |= FIELD_NSPID;
        }
        return 0;
}

bool privilege_map_is_identity(const char *map_text) {
        const char *p = map_text;
        uint64_t first, lower, count;

        if (parse_decimal(&p, UINT32_MAX, &first) < 0 || parse_decimal(&p, UINT32_MAX, &lower) < 0 ||
            parse_decimal(&p, UINT32_MAX, &count) < 0)
                return false;
        if (*p == '\n')
                p++;
        return *p == '\0' && first == 0 && lower == 0 && count == UINT32_MAX;
}

/* ------------------------------------------------------------------ */
/* reading /proc                                                       */

static int proc_path(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int proc_path(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

/* Whether a status line is one of the fields parse_status_line() reads. */
static bool status_field(const char *line) {
        static const char *const fields[] = { TGID_FIELD, UID_FIELD, CAPEFF_FIELD, NSPID_FIELD };

        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                if (strncmp(line, fields[i], strlen(fields[i])) == 0)
                        return true;
        return false;
}

/* Line by line in a fixed buffer: the Groups: line can be hundreds of KiB
 * for a process with many supplementary groups, and is skipped, never kept.
 * A field read here that does not fit (NSpid: with 32 nested pid
 * namespaces takes ~360 bytes) is malformed. Every field needed must be
 * there. */
static int read_status(const char *path, CallerStatus *ret) {
        _cleanup_(fclosep) FILE *f = fopen(path, "re");
        char line[STATUS_LINE_MAX];
        CallerStatus st = { 0 };

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                size_t n = strlen(line);
                int c;

                if (n > 0 && line[n - 1] != '\n' && !feof(f)) {
                        if (status_field(line))
                                return -EINVAL;
                        while ((c = getc(f)) != EOF && c != '\n')
                                ;
                        continue;
                }
                if (parse_status_line(line, &st) < 0)
                        return -EINVAL;
        }
        if (ferror(f))
                return -EIO;
        if ((st.seen & FIELDS_NEEDED) != FIELDS_NEEDED)
                return -ENOENT;
        *ret = st;
        return 0;
}

/* 1 when the map file is the full identity, 0 when it is another map,
 * -errno when it cannot be read. */
static int map_file_is_identity(const char *path) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        char text[MAP_TEXT_MAX + 1];
        ssize_t n;

        if (fd < 0)
                return -errno;
        /* One read: the kernel's seq_file hands out whole lines, and one
         * extent fits; more than fits is more than one extent. */
        n = read(fd, text, sizeof(text));
        if (n < 0)
                return -errno;
        if (n == 0 || (size_t) n > MAP_TEXT_MAX)
                return 0;
        text[n] = '\0';
        return privilege_map_is_identity(text);
}

/* Whether the thread whose /proc directory is task_dir lives in the daemon's
 * user namespace: 1, 0, or -errno when it cannot be told. */
static int same_user_namespace(const char *proc_root, const char *task_dir) {
        char path[PATH_MAX];
        struct stat own, caller;
        int r;

        if (proc_path(path, sizeof(path), "%s/self/ns/user", proc_root) < 0)
                return -ENAMETOOLONG;
        if (stat(path, &own) < 0)
                return -errno;
        if (proc_path(path, sizeof(path), "%s/ns/user", task_dir) < 0)
                return -ENAMETOOLONG;
        if (stat(path, &caller) == 0)
                return caller.st_dev == own.st_dev && caller.st_ino == own.st_ino;
        if (errno != EACCES && errno != EPERM)
                return -errno;

        /* No ptrace access to the caller: the id maps, which only the
         * initial namespace shows as the full identity to a reader in the
         * initial namespace (privilege.h, residual risk). */
        if ((uint64_t) own.st_ino != PROC_USER_INIT_INO)
                return -EACCES;
        if (proc_path(path, sizeof(path), "%s/uid_map", task_dir) < 0)
                return -ENAMETOOLONG;
        r = map_file_is_identity(path);
        if (r <= 0)
                return r;
        if (proc_path(path, sizeof(path), "%s/gid_map", task_dir) < 0)
                return -ENAMETOOLONG;
        return map_file_is_identity(path);
}

/* The start time (clock ticks since boot) of a process that has not exited;
 * -ESRCH for one that is gone or a zombie. */
static int read_start(const char *proc_root, pid_t tgid, uint64_t *ret) {
        _cleanup_close_ int fd = -1;
        char path[PATH_MAX], text[1024], *p, *field, *save = NULL, state;
        uint64_t start;
        ssize_t n;

        if (kill(tgid, 0) < 0 && errno != EPERM)
                return -errno;
        if (proc_path(path, sizeof(path), "%s/%d/stat", proc_root, (int) tgid) < 0)
                return -ENAMETOOLONG;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        n = read(fd, text, sizeof(text) - 1);
        if (n <= 0)
                return -EIO;
        text[n] = '\0';
        /* The name may hold anything, ')' too: the fields follow the last.
         * The state is field 3, the start time field 22. */
        p = strrchr(text, ')');
        if (!p)
                return -EINVAL;
        field = strtok_r(p + 1, " ", &save);
        if (!field || strlen(field) != 1)
                return -EINVAL;
        state = field[0];
        for (int i = 4; field && i <= 22; i++)
                field = strtok_r(NULL, " ", &save);
        if (!field || parse_decimal((const char **) &field, UINT64_MAX, &start) < 0 || !at_line_end(field))
                return -EINVAL;
        if (state == 'Z' || state == 'X' || state == 'x')
                return -ESRCH;
        *ret = start;
        return 0;
}

/* Holds the caller's thread group while its files are read, so that a
 * process that took its pid meanwhile cannot pass for it: a pidfd, or
 * where the kernel has no pidfd_open() (before 5.3, or a syscall filter or
 * valgrind that does not know it) the process's start time, which the next
 * owner of the pid would not share. */
typedef struct Pin {
        int pidfd;
        uint64_t start;
} Pin;

static int pin_take(const char *proc_root, pid_t tgid, Pin *ret) {
        ret->pidfd = (int) syscall(SYS_pidfd_open, tgid, 0);
        if (ret->pidfd >= 0)
                return 0;
        if (errno != ENOSYS)
                return -errno;
        return read_start(proc_root, tgid, &ret->start);
}

static bool pin_holds(const char *proc_root, pid_t tgid, const Pin *pin) {
        struct pollfd p = { .fd = pin->pidfd, .events = POLLIN };
        uint64_t start;
        int r;

        if (pin->pidfd < 0)
                return read_start(proc_root, tgid, &start) == 0 && start == pin->start;
        /* Readable once the process has exited. */
        do
                r = poll(&p, 1, 0);
        while (r < 0 && errno == EINTR);
        return r == 0;
}

/* Whether the thread pid, whose request carries uid, lives in the daemon's
 * user namespace (1, 0, -errno as privilege_initial_userns()), and its
 * status (CapEff, NSpid). */
static int caller_userns(const char *proc_root, pid_t pid, uid_t uid, CallerStatus *ret_status) {
        char path[PATH_MAX], task_dir[PATH_MAX];
        struct stat st_task;
        CallerStatus st;
        Pin pin = { .pidfd = -1 };
        int r;

        if (pid <= 0)
                return -ESRCH;
        if (!proc_root)
                proc_root = "/proc";

        /* Cheapest first: a caller in another user namespace is told by its
         * ns link or its id maps, a few bytes each, before anything reads
         * its status, which 65,536 supplementary groups (setgroups() in a
         * user namespace of one's own) make ~460 KB that the kernel formats
         * afresh on every read: 7.2 ms against 0.03 (issue 23). */
        r = proc_path(path, sizeof(path), "%s/%d", proc_root, (int) pid);
        if (r < 0)
                return r;
        r = same_user_namespace(proc_root, path);
        if (r <= 0)
                return r;

        /* Its status, once: the thread group the request's thread is in,
         * its fsuid, CapEff and NSpid. The kernel holds the thread in its
         * request until the reply, so the thread id is not reused
         * meanwhile (privilege.h); the pin below is a second line. */
        r = proc_path(path, sizeof(path), "%s/%d/status", proc_root, (int) pid);
        if (r < 0)
                return r;
        r = read_status(path, &st);
        if (r < 0)
                return r;
        if (st.fsuid != uid)
                return -ESRCH;
        r = pin_take(proc_root, st.tgid, &pin);
        if (r < 0)
                return r;

        /* Through the thread group from here on: a tid that is not one of
         * its threads is not found, and the namespace is asked again of
         * the pinned process. */
        r = proc_path(task_dir, sizeof(task_dir), "%s/%d/task/%d", proc_root, (int) st.tgid, (int) pid);
        if (r >= 0 && stat(task_dir, &st_task) < 0)
                r = -ESRCH;
        if (r >= 0)
                r = same_user_namespace(proc_root, task_dir);
        if (r >= 0 && !pin_holds(proc_root, st.tgid, &pin))
                r = -ESRCH;
        if (pin.pidfd >= 0)
                close(pin.pidfd);
        if (r >= 0)
                *ret_status = st;
        return r;
}

uint32_t privilege_charge(const char *proc_root, pid_t pid, uid_t uid) {
        if (uid == 0 || privilege_initial_userns(proc_root, pid, uid) == 1)
                return uid;
        return CUSE_UID_USERNS;
}

int privilege_initial_userns(const char *proc_root, pid_t pid, uid_t uid) {
        CallerStatus st;

        return caller_userns(proc_root, pid, uid, &st);
}

bool privilege_check_mode(const char *proc_root, pid_t pid, uid_t uid, PrivilegeMode mode) {
        CallerStatus st;

        if (mode != PRIVILEGE_CAPABILITY && mode != PRIVILEGE_HOST_ROOT)
                return false;
        /* The request's uid is the status' fsuid (caller_userns() checks). */
        if (mode == PRIVILEGE_HOST_ROOT && uid != 0)
                return false;
        if (caller_userns(proc_root, pid, uid, &st) != 1 || !((st.capeff >> CAP_SYS_ADMIN) & 1))
                return false;
        return mode == PRIVILEGE_CAPABILITY || st.nspid_levels == 1;
}

bool privilege_check(const char *proc_root, pid_t pid, uid_t uid) {
        return privilege_check_mode(proc_root, pid, uid, PRIVILEGE_CAPABILITY);
}
