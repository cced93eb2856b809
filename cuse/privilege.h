/* privilege.h - who may use the privileged random ioctls (DESIGN §3).
 *
 * Privileged = the calling thread has CAP_SYS_ADMIN in its effective set in
 * the daemon's own user namespace (the initial one, where truerandomd runs),
 * which is what the kernel's capable() asks. CapEff alone is not enough: it
 * is relative to the caller's user namespace, and anyone can make one
 * (`unshare -Ur`) and hold every capability inside it.
 *
 * What the daemon reads, all under proc_root (NULL: /proc), cheapest first:
 *   TID/ns/user (or TID/uid_map and gid_map, below): a caller in another
 *                            user namespace is refused on these alone, before
 *                            its status, which 65,536 supplementary groups
 *                            make ~460 KB that the kernel formats on every
 *                            read (240 times the usual cost)
 *   TID/status, once         Tgid, the fsuid (Uid: line), which must be the
 *                            request's uid, CapEff and NSpid; read line by
 *                            line in a fixed buffer, the Groups: line skipped
 *   TGID/task/TID            the thread is one of that group's
 *   TGID/task/TID/ns/user    compared (device, inode) with self/ns/user
 *   TGID/task/TID/uid_map,   only when the ns link may not be read (below)
 *   TGID/task/TID/gid_map
 * and a pidfd of TGID, opened before and polled after the reads: a thread
 * group that exited meanwhile (its pid free for reuse) is refused. Where
 * pidfd_open() is missing (ENOSYS: kernels before 5.3, valgrind), TGID/stat
 * stands in: its start time must not change and it must not be a zombie.
 *
 * The ns link needs ptrace read access to the caller, which a daemon with no
 * capability has only for processes of its own uid. For everyone else
 * (root's processes included) the daemon falls back on the id maps, which
 * anyone may read: a caller counts as being in the initial user namespace
 * when its uid_map and gid_map are both the single full identity extent
 * "0 0 4294967295" and the daemon's own namespace is the initial one (its
 * ns inode is the kernel's fixed PROC_USER_INIT_INO). Residual risk, as
 * measured on Linux 6.1 and 6.18: a child namespace whose maps are the full
 * identity reads the same. Only a process holding CAP_SETUID and CAP_SETGID
 * in the initial namespace can write such maps, so the fallback admits a
 * holder of those two capabilities who lacks CAP_SYS_ADMIN, container root
 * among them; truerandom(4) says so, and PRIVILEGE_HOST_ROOT below refuses
 * it by its pid namespace. Everything that cannot be read or parsed is unprivileged (fail
 * closed), and so is pid 0 (a caller in another pid namespace).
 *
 * The kernel holds the calling thread in its request until the reply, even
 * against SIGKILL (fs/fuse/dev.c, request_wait_answer), so during the
 * synchronous check the thread id cannot be reused; the pidfd and the fsuid
 * comparison are a second line for what a reused pid would look like.
 * Flow: CUSE ioctl -> [privilege] -> rndioctl-decoded operation;
 *       CUSE open -> [privilege_initial_userns] -> per-uid limits. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Parses the CapEff: hex field of a /proc/PID/status text. -ENOENT if absent,
 * -EINVAL if malformed. */
int privilege_parse_capeff(const char *status_text, uint64_t *ret_capeff);

/* Whether a /proc/PID/uid_map or gid_map text is exactly one extent mapping
 * every id to itself ("0 0 4294967295"), as the initial namespace's is. */
bool privilege_map_is_identity(const char *map_text);

/* Who passes the privileged ioctls' check ([device] privileged_ioctls). */
typedef enum PrivilegeMode {
        /* CAP_SYS_ADMIN in the daemon's user namespace, read as above: the
         * kernel's rule, with the residual risk above. */
        PRIVILEGE_CAPABILITY,
        /* That, and fsuid 0, and a thread of the daemon's pid namespace
         * (one pid in the NSpid: line of its status): not the root of a
         * container with a pid namespace of its own, whatever maps it made;
         * not a service given CAP_SYS_ADMIN without being root. */
        PRIVILEGE_HOST_ROOT,
        /* Nobody. */
        PRIVILEGE_NONE,
        _PRIVILEGE_MODE_MAX,
} PrivilegeMode;

/* pid: the thread id of the FUSE request; uid: its uid. The kernel's rule
 * (PRIVILEGE_CAPABILITY). */
bool privilege_check(const char *proc_root, pid_t pid, uid_t uid);
/* The same under mode; PRIVILEGE_NONE reads nothing. */
bool privilege_check_mode(const char *proc_root, pid_t pid, uid_t uid, PrivilegeMode mode);

/* Whether that caller lives in the daemon's user namespace (the initial
 * one), read as privilege_check() reads it, capabilities aside: 1 yes, 0
 * in another; -errno when it cannot be told (pid 0: -ESRCH; a caller gone
 * or whose fsuid is not uid: -ESRCH; /proc unreadable). Callers that must
 * fail closed take anything but 1 as "in another". The devices charge the
 * per-uid limits of such callers to one shared account (cusedev.h). */
int privilege_initial_userns(const char *proc_root, pid_t pid, uid_t uid);

/* The account a caller's per-uid bounds count against, for the devices,
 * the control socket and the EGD socket alike: its uid when that is 0 or
 * it lives in the daemon's user namespace, else CUSE_UID_USERNS (cusedev.h;
 * also when that cannot be told: fail closed). One look at /proc for uids
 * but root. */
uint32_t privilege_charge(const char *proc_root, pid_t pid, uid_t uid);
