/* privilege.h - who may use the privileged random ioctls (DESIGN §3).
 *
 * Privileged = the calling process has CAP_SYS_ADMIN in its effective set, as
 * the kernel's random driver requires, read from the CapEff line of
 * /proc/PID/status. Where that cannot be read (the pid is 0 because the caller
 * lives in another pid namespace, the process is gone, /proc is not mounted),
 * uid 0 decides. The pid is the one the kernel put in the FUSE request; a pid
 * reused between the request and the read of /proc is a race the kernel's own
 * capable() check does not have (documented in truerandom(4)). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Parses the CapEff: hex field of a /proc/PID/status text. -ENOENT if absent,
 * -EINVAL if malformed. */
int privilege_parse_capeff(const char *status_text, uint64_t *ret_capeff);

/* proc_root NULL = "/proc". */
bool privilege_check(const char *proc_root, pid_t pid, uid_t uid);
