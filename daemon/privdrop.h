/* privdrop.h - truerandomd gives up root and every capability once it is set
 * up (DESIGN §8): /dev/cuse sessions open and their nodes set, sources open,
 * the control socket bound. Nothing it does afterwards needs privilege.
 *
 * Started as root (by hand, or from a test), it switches to a system user of
 * its own: supplementary groups cleared, then real, effective and saved gid
 * and uid. Started as that user already (systemd's User=), it pins its real,
 * effective and saved ids to the effective ones. Either way it then empties
 * every capability set it can (ambient, inheritable, bounding where
 * CAP_SETPCAP allows, effective, permitted), sets no_new_privs (so nothing
 * can be regained through exec), makes itself undumpable again (an id change
 * resets that), and checks the result, failing rather than running half
 * dropped. Must run while the process has one thread: credentials are per
 * thread, and threads started later inherit them.
 * Flow: daemon set-up -> [privdrop] -> collectors start, the loop serves. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct PrivDrop {
        bool switched;            /* was root; now uid, gid */
        bool bounding_kept;       /* no CAP_SETPCAP to empty the bounding set:
                                   * harmless under no_new_privs, and said */
        uid_t uid;                /* what it runs as now */
        gid_t gid;
} PrivDrop;

/* A user name or number to a uid that is not root and its primary group,
 * which must not be root's either. -ENOENT: no such user; -EPERM: uid or
 * gid 0. */
int privdrop_resolve_user(const char *user, uid_t *ret_uid, gid_t *ret_gid);

/* As above; uid and gid are used only when running as root. memlock: as
 * root, RLIMIT_MEMLOCK is raised towards this (root locked memory without
 * limit, the user will not), as far as the hard limit allows where it cannot
 * be raised. 0, or -errno with *ret_step naming the step that failed
 * (static text). */
int privdrop_apply(uid_t uid, gid_t gid, uint64_t memlock, PrivDrop *ret, const char **ret_step);
