/* socket.h - the control socket's file: its directory, a stale socket
 * replaced but never a live daemon's, the mode set at bind(), and at the
 * end removed only while it is still ours. No state; the loop thread
 * calls it before any other thread exists (the umask is process-wide).
 * Flow: control -> [socket] -> the file system. */
#pragma once

#include <sys/types.h>

/* listen()'s backlog; the loop accepts as many per wake-up. */
#define CONTROL_SOCKET_BACKLOG 16

/* Which file the socket was bound to, to know it again at the end. */
typedef struct ControlSocketId {
        dev_t dev;
        ino_t ino;
} ControlSocketId;

/* Creates path's directory if missing (0755, one level), refuses
 * (-EADDRINUSE) when a live daemon answers there, replaces a stale
 * socket, and listens there, mode 0666 whatever the umask: *ret_fd
 * (non-blocking) and *ret_id. -EEXIST when what bind() made is not a
 * socket by the time it is checked (a name swapped for a link). */
int control_socket_listen(const char *path, int *ret_fd, ControlSocketId *ret_id);

/* Removes path if it is still the socket of id: a newer daemon may have
 * replaced it. */
void control_socket_remove(const char *path, const ControlSocketId *id);
