/* privileges.c - the daemon's use of privdrop.h: [daemon] user resolved at
 * start (as root) and by --check-config, the directories of its own handed
 * to that user, and the drop itself once set-up is over.
 *
 * Invariant: the drop happens while the process has one thread (credentials
 * are per thread) and before a byte is served; it either succeeds whole or
 * the daemon does not serve.
 * Flow: daemon_new() set-up -> [privileges] -> collectors start, the loop
 * serves. */
#include "daemon-internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config-build.h"
#include "log.h"
#include "privdrop.h"

/* RLIMIT_MEMLOCK for the user truerandomd becomes, as LimitMEMLOCK= in the
 * unit: root locked its memory without limit, the user will not. */
#define RUN_MEMLOCK (UINT64_C(64) << 20)
/* truerandomd's own directory under /run (RuntimeDirectory= in the unit). */
#define RUN_DIR RUNSTATEDIR "/truerandomd"

/* Secrets live in locked memory: an allocation failure there is most often
 * RLIMIT_MEMLOCK, so say where to look. */
const char *daemon_memlock_hint(int r) {
        return r == -ENOMEM ? " (locked memory: check LimitMEMLOCK)" : "";
}

/* A uid's looks at /proc for privilege checks and accounts: the kernel
 * formats its entries afresh for every read, so that a caller looping on
 * them would make the one loop that every reader waits on do that work. */
bool daemon_proc_budget(void *userdata, uint32_t uid) {
        Daemon *d = userdata;
        usec_t now = daemon_now(d);

        return uidrate_take(&d->proc_looks, uid, now, USEC_PER_SEC, d->config.proc_checks_per_uid);
}

/* What to do about a refusal when not started as root: the daemon needs
 * root (or systemd's unit) to set itself up. */
const char *daemon_not_root_hint(int r) {
        if ((r != -EACCES && r != -EPERM) || geteuid() == 0)
                return "";
        return " (truerandomd is not running as root: start it as root, and it switches to [daemon] user once "
               "set up, or as truerandomd.service)";
}

/* [daemon] user as uid and gid to run as, or why not ("FILE:LINE: ...",
 * malloc'd, in *ret_error). For --check-config and a start as root. */
int daemon_resolve_run_user(const Config *c, const char *path, uid_t *ret_uid, gid_t *ret_gid, char **ret_error) {
        char at[PATH_MAX + 16];
        int r, n;

        r = privdrop_resolve_user(c->user, ret_uid, ret_gid);
        if (r >= 0)
                return 0;
        config_at_str(c->user_at, path, at, sizeof(at));
        if (r == -EPERM)
                n = asprintf(ret_error, "%s: user '%s' is root or in root's group: truerandomd does not keep "
                                        "root after set-up; name a system user of its own", at, c->user);
        else
                n = asprintf(ret_error, "%s: user '%s'%s does not exist (install the package, or create it with "
                                        "systemd-sysusers or useradd --system)", at, c->user,
                             c->user_at.line ? "" : " (the default of [daemon] user)");
        return n < 0 ? -ENOMEM : r;
}

/* A directory of the daemon's own that it made as root goes to the user it
 * will run as, so that it can still remove what it creates there (the
 * control socket at exit). Only truerandomd's own directory under /run:
 * never a directory a custom socket path shares with others. Under systemd
 * RuntimeDirectory= and StateDirectory= make them the user's already. */
static void own_directory(const char *dir, const Daemon *d) {
        struct stat st;

        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || (st.st_uid == d->run_uid && st.st_gid == d->run_gid))
                return;
        if (chown(dir, d->run_uid, d->run_gid) < 0)
                log_warning_errno(-errno, "%s: giving it to the user truerandomd runs as", dir);
}

/* Set-up is over: from here on no root, no capability, in any thread (there
 * is only this one yet). See privdrop.h. */
int daemon_drop_privileges(Daemon *d) {
        const char *step = NULL;
        PrivDrop p;
        uid_t uid;
        gid_t gid;
        int r;

        if (!d->hooks.drop_privileges)
                return 0;
        if (geteuid() == 0 && strncmp(d->config.socket_path, RUN_DIR "/", strlen(RUN_DIR "/")) == 0 &&
            !strchr(d->config.socket_path + strlen(RUN_DIR "/"), '/'))
                own_directory(RUN_DIR, d);
        /* The ledger (events.c) is written there after the drop; its
         * built-in directory is truerandomd's own (StateDirectory= under
         * systemd), a configured one may be shared and stays as it is. */
        if (geteuid() == 0 && strcmp(d->config.state_directory, STATEDIR) == 0) {
                /* Without systemd's StateDirectory=: the ledger's home. */
                if (mkdir(STATEDIR, 0700) < 0 && errno != EEXIST)
                        log_warning_errno(-errno, "%s: creating the ledger's directory", STATEDIR);
                own_directory(STATEDIR, d);
        }
        r = privdrop_apply(d->run_uid, d->run_gid, RUN_MEMLOCK, &p, &step);
        if (r < 0)
                return log_error_errno(r, "giving up root and capabilities failed while %s; not serving", step);
        if (p.switched || (privdrop_resolve_user(d->config.user, &uid, &gid) == 0 && uid == p.uid))
                log_info("set up: running as user %s (uid %u, gid %u), no capability, no_new_privs", d->config.user,
                         (unsigned) p.uid, (unsigned) p.gid);
        else
                log_notice("set up: running as uid %u, gid %u, as started, no capability, no_new_privs "
                           "([daemon] user %s applies to a start as root)", (unsigned) p.uid, (unsigned) p.gid,
                           d->config.user);
        if (p.bounding_kept)
                log_notice("the capability bounding set could not be emptied without root; with no_new_privs "
                           "nothing in it can be gained (truerandomd.service empties it)");
        return 0;
}
