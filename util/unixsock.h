/* unixsock.h - a listening AF_UNIX socket's file, for the control socket
 * and the EGD socket: its directory, a stale socket replaced but never a
 * live daemon's, the mode set at bind(), and at the end removed only while
 * it is still ours. No state; called before any other thread exists (the
 * umask is process-wide).
 * Flow: the daemon's servers -> [unixsock] -> the file system. */
#pragma once

#include <sys/types.h>

/* listen()'s backlog; the servers accept as many per wake-up. */
#define UNIXSOCK_BACKLOG 16

/* Which file the socket was bound to, to know it again at the end. */
typedef struct UnixSockId {
        dev_t dev;
        ino_t ino;
} UnixSockId;

/* The directory unixsock_listen() makes for path if it is missing (one
 * level, mode 0755), in *ret_dir (free it); NULL when the socket is in /.
 * -ENOMEM. */
int unixsock_dir(const char *path, char **ret_dir);

/* Creates path's directory if missing (0755, one level), refuses
 * (-EADDRINUSE) when a live server answers there, replaces a stale socket,
 * and listens there with a socket of type (SOCK_STREAM, SOCK_SEQPACKET),
 * its file's mode exactly mode whatever the umask: *ret_fd (non-blocking)
 * and *ret_id. -EEXIST when what bind() made is not a socket by the time
 * it is checked (a name swapped for a link). */
int unixsock_listen(const char *path, int type, mode_t mode, int *ret_fd, UnixSockId *ret_id);

/* Removes path if it is still the socket of id: a newer daemon may have
 * replaced it. */
void unixsock_remove(const char *path, const UnixSockId *id);
