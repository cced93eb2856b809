/* privilege.c - whether a CUSE caller may use the privileged random ioctls.
 *
 * The kernel's random driver asks capable(CAP_SYS_ADMIN) of the calling task;
 * the nearest user-space view of that is the CapEff line of
 * /proc/<pid>/status. The FUSE request carries the calling thread's id, and
 * /proc/<tid>/status shows that thread's own credentials, which is what
 * capable() looks at too. Where the status cannot be read or parsed, uid 0 of
 * the request decides: a caller outside our pid namespace (pid 0) or one that
 * is already gone is then treated as the kernel would treat plain root.
 * Flow: CUSE ioctl -> [privilege] -> rndioctl-decoded operation. */
#include "privilege.h"

#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>

#include "pool/secret.h"

#define CAPEFF_FIELD "CapEff:"

static void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* p points just past "CapEff:". The kernel prints a tab and exactly 16 hex
 * digits; 1..16 digits are accepted, anything that could overflow or carries
 * junk before the end of the line is not. */
static int parse_capeff_value(const char *p, uint64_t *ret) {
        while (*p == '\t' || *p == ' ')
                p++;
        uint64_t v = 0;
        unsigned digits = 0;
        for (int d; (d = hex_digit(*p)) >= 0; p++) {
                if (++digits > 16)
                        return -EINVAL;
                v = v << 4 | (uint64_t) d;
        }
        if (digits == 0 || (*p != '\n' && *p != '\0'))
                return -EINVAL;
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

/* Line by line, because the Groups: line before CapEff: can be hundreds of
 * KiB for a process with many supplementary groups. */
static int read_capeff(const char *proc_root, pid_t pid, uint64_t *ret) {
        char path[PATH_MAX];
        int n = snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int) pid);
        if (n < 0 || (size_t) n >= sizeof(path))
                return -ENAMETOOLONG;

        _cleanup_(fclosep) FILE *f = fopen(path, "re");
        if (!f)
                return -errno;

        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        while (getline(&line, &size, f) >= 0)
                if (strncmp(line, CAPEFF_FIELD, strlen(CAPEFF_FIELD)) == 0)
                        return privilege_parse_capeff(line, ret);
        return ferror(f) ? -EIO : -ENOENT;
}

bool privilege_check(const char *proc_root, pid_t pid, uid_t uid) {
        uint64_t capeff;
        if (pid > 0 && read_capeff(proc_root ? proc_root : "/proc", pid, &capeff) == 0)
                return (capeff >> CAP_SYS_ADMIN) & 1;
        return uid == 0;
}
