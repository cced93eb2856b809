/* privdrop.c - leaving root and every capability behind (privdrop.h).
 *
 * Order matters: the bounding set can only be emptied while CAP_SETPCAP is
 * there, i.e. before the uid changes; the groups before the gid before the
 * uid, each needing the capability the next one drops. The capability sets
 * are then cleared explicitly rather than trusting the kernel's uid-change
 * rule (securebits may have turned it off), and everything is read back.
 * Flow: daemon set-up -> [privdrop] -> collectors start, the loop serves. */
#include "privdrop.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Capability numbers PR_CAPBSET_* and PR_CAP_AMBIENT_* accept stop below
 * this (the kernel's last one plus 1, at most 64 with two 32-bit words). */
#define CAP_SLOTS 64

int privdrop_resolve_user(const char *user, uid_t *ret_uid, gid_t *ret_gid) {
        struct passwd pw, *found = NULL;
        char buf[4096], *end;
        unsigned long v;

        if (!user || !*user)
                return -EINVAL;
        errno = 0;
        v = strtoul(user, &end, 10);
        if (*end == '\0' && errno == 0 && v < (uid_t) -1)
                getpwuid_r((uid_t) v, &pw, buf, sizeof(buf), &found);
        else
                getpwnam_r(user, &pw, buf, sizeof(buf), &found);
        if (!found)
                return -ENOENT;
        if (found->pw_uid == 0 || found->pw_gid == 0)
                return -EPERM;
        *ret_uid = found->pw_uid;
        *ret_gid = found->pw_gid;
        return 0;
}

/* The "Threads:" line of our own status: credentials are per thread. */
static int thread_count(void) {
        char line[256];
        FILE *f = fopen("/proc/self/status", "re");
        int n = -1;

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "Threads: %d", &n) == 1)
                        break;
        fclose(f);
        return n;
}

static int capset_empty(void) {
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

        return syscall(SYS_capset, &hdr, data) < 0 ? -errno : 0;
}

static bool capsets_empty(void) {
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

        if (syscall(SYS_capget, &hdr, data) < 0)
                return false;
        for (size_t i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
                if (data[i].effective || data[i].permitted || data[i].inheritable)
                        return false;
        return true;
}

/* Empties the bounding set; *ret_kept when some capability stayed because
 * CAP_SETPCAP is not there to drop it. */
static int bounding_drop(bool *ret_kept) {
        bool kept = false;

        for (int cap = 0; cap < CAP_SLOTS; cap++) {
                int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

                if (in < 0 && errno == EINVAL)
                        break;          /* past the kernel's last capability */
                if (in < 0)
                        return -errno;
                if (in == 0)
                        continue;
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                        if (errno != EPERM)
                                return -errno;
                        kept = true;
                }
        }
        *ret_kept = kept;
        return 0;
}

static bool bounding_and_ambient_empty(bool check_bounding) {
        for (int cap = 0; cap < CAP_SLOTS; cap++) {
                int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);

                if (in < 0)
                        return errno == EINVAL;
                if (check_bounding && in)
                        return false;
                /* Ambient capabilities came with Linux 4.3. */
                in = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);
                if (in > 0 || (in < 0 && errno != EINVAL))
                        return false;
        }
        return true;
}

/* Best effort: without CAP_SYS_RESOURCE (a container) the hard limit stays,
 * and the soft one goes as far as it allows. */
static int raise_memlock(uint64_t memlock) {
        struct rlimit rl, want;

        if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
                return -errno;
        want = rl;
        if (want.rlim_cur != RLIM_INFINITY && want.rlim_cur < memlock)
                want.rlim_cur = memlock;
        if (want.rlim_max != RLIM_INFINITY && want.rlim_max < want.rlim_cur)
                want.rlim_max = want.rlim_cur;
        if (setrlimit(RLIMIT_MEMLOCK, &want) == 0)
                return 0;
        if (errno != EPERM)
                return -errno;
        want.rlim_max = rl.rlim_max;
        if (want.rlim_max != RLIM_INFINITY && want.rlim_cur > want.rlim_max)
                want.rlim_cur = want.rlim_max;
        return setrlimit(RLIMIT_MEMLOCK, &want) < 0 ? -errno : 0;
}

/* Reads everything back; the step that disagrees, or NULL. */
static const char *verify(const PrivDrop *p) {
        uid_t ru, eu, su;
        gid_t rg, eg, sg;

        if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
                return "reading the ids back";
        if (ru != p->uid || eu != p->uid || su != p->uid || p->uid == 0)
                return "checking the uids (real, effective, saved) are the same and not root's";
        if (rg != p->gid || eg != p->gid || sg != p->gid || p->gid == 0)
                return "checking the gids (real, effective, saved) are the same and not root's";
        if (p->switched && getgroups(0, NULL) != 0)
                return "checking no supplementary group is left";
        if (!capsets_empty())
                return "checking the effective, permitted and inheritable sets are empty";
        if (!bounding_and_ambient_empty(!p->bounding_kept))
                return "checking the bounding and ambient sets are empty";
        if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
                return "checking no_new_privs";
        /* The one check that matters most: there is no way back. */
        if (setresuid(0, 0, 0) == 0)
                abort();
        return NULL;
}

int privdrop_apply(uid_t uid, gid_t gid, uint64_t memlock, PrivDrop *ret, const char **ret_step) {
        PrivDrop p = { .switched = geteuid() == 0 };
        const char *step;
        int n, r;

#define STEP(what, expr)                        \
        do {                                    \
                step = (what);                  \
                if ((r = (expr)) < 0)           \
                        goto fail;              \
        } while (0)
#define ERRNO(call) ((call) < 0 ? -errno : 0)

        n = thread_count();
        STEP("counting threads (credentials are per thread)", n < 0 ? n : n == 1 ? 0 : -EBUSY);
        if (p.switched) {
                p.uid = uid;
                p.gid = gid;
                STEP("checking the user is not root", uid == 0 || gid == 0 ? -EINVAL : 0);
                STEP("raising RLIMIT_MEMLOCK for the user", raise_memlock(memlock));
                STEP("emptying the bounding set", bounding_drop(&p.bounding_kept));
                STEP("clearing the supplementary groups", ERRNO(setgroups(0, NULL)));
                STEP("setting the gids", ERRNO(setresgid(gid, gid, gid)));
                STEP("setting the uids", ERRNO(setresuid(uid, uid, uid)));
        } else {
                p.uid = geteuid();
                p.gid = getegid();
                STEP("pinning the gids to the effective one", ERRNO(setresgid(p.gid, p.gid, p.gid)));
                STEP("pinning the uids to the effective one", ERRNO(setresuid(p.uid, p.uid, p.uid)));
                STEP("emptying the bounding set", bounding_drop(&p.bounding_kept));
        }
        /* Ambient capabilities came with Linux 4.3: EINVAL before. */
        step = "clearing the ambient set";
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) {
                r = -errno;
                goto fail;
        }
        STEP("clearing the effective, permitted and inheritable sets", capset_empty());
        STEP("setting no_new_privs", ERRNO(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)));
        /* An id change made the process dumpable again; keys live here. */
        STEP("making the process undumpable", ERRNO(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)));
#undef STEP
#undef ERRNO

        step = verify(&p);
        if (step) {
                r = -EPERM;
                goto fail;
        }
        *ret = p;
        return 0;

fail:
        if (ret_step)
                *ret_step = step;
        return r;
}
