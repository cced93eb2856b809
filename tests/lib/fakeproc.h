/* fakeproc.h - callers for the tests of privilege_check() (cuse/privilege.h).
 *
 * Real ones: a process that is root of a user namespace of its own, as
 * `unshare -Ur` makes it, for the unit and protocol suites.
 *
 * Made-up ones: a throw-away /proc tree for tests that play callers who are
 * not real processes with real credentials (the protocol suite, the CUSE
 * fuzzers).
 *
 * A caller is a live process (privilege_check() holds a pidfd on it and
 * refuses one that is gone), shown with made-up status fields:
 *   ROOT/PID/status, ROOT/PID/task/PID/status   Tgid, Uid (all four = uid), CapEff
 *   ROOT/PID/stat                               running, a fixed start time (for
 *                                               kernels and valgrind without
 *                                               pidfd_open())
 *   ROOT/PID/task/PID/ns/user                   a hard link to ROOT/self/ns/user
 *                                               (same user namespace), another
 *                                               file, or none
 *   ROOT/PID/task/PID/uid_map, gid_map          the initial namespace's maps
 * The tree is removed whole by fakeproc_free(). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* A child in a new user namespace with every capability in it, alive (in
 * pause()) until killed, and killed with the calling process. own_map: made
 * by uid 65534, which maps itself to 0 (`unshare -Ur`); otherwise made by
 * root, whose process outside writes the full identity map
 * "0 0 4294967295" (needs CAP_SETUID and CAP_SETGID). Returns its pid,
 * -EOPNOTSUPP where user namespaces cannot be made, or another -errno. */
pid_t fakeproc_userns_caller(bool own_map);
/* SIGKILL and reap. */
void fakeproc_caller_kill(pid_t pid);

typedef enum FakeProcNs {
        FAKEPROC_NS_SAME,   /* the daemon's user namespace */
        FAKEPROC_NS_OTHER,  /* another one */
        FAKEPROC_NS_NONE,   /* no ns/user link at all */
} FakeProcNs;

typedef struct FakeProc FakeProc;

/* A tree under dir (made with mkdtemp from "DIR/fakeproc-XXXXXX"). 0 or -errno. */
int fakeproc_new(const char *dir, FakeProc **ret);
/* Removes the tree; takes NULL, returns NULL. */
FakeProc *fakeproc_free(FakeProc *fp);
const char *fakeproc_root(const FakeProc *fp);

/* Shows live process pid as a caller with uid and the CapEff capeff. A pid
 * shown twice is shown as the second time says. 0 or -errno. */
int fakeproc_add(FakeProc *fp, pid_t pid, uid_t uid, uint64_t capeff, FakeProcNs ns);
/* Writes text (verbatim) over PID/task/PID/NAME ("status", "uid_map", ...). */
int fakeproc_write(FakeProc *fp, pid_t pid, const char *name, const char *text);
