/* unixsock.c - a listening AF_UNIX socket's file (see unixsock.h).
 * Flow: the daemon's servers -> [unixsock] -> the file system. */
#include "unixsock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/cleanup.h"

int unixsock_dir(const char *path, char **ret_dir) {
        char *dir = strdup(path), *slash;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash || slash == dir) {
                free(dir);
                dir = NULL;
        } else
                *slash = '\0';
        *ret_dir = dir;
        return 0;
}

static int make_parent_dir(const char *path) {
        _cleanup_free_ char *dir = NULL;
        int r = unixsock_dir(path, &dir);

        if (r < 0)
                return r;
        if (dir && mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* -EADDRINUSE when something answers on path; removes a dead socket. */
static int claim_path(const struct sockaddr_un *sa, int type) {
        _cleanup_close_ int fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *) sa, sizeof(*sa)) == 0 || errno == EAGAIN ||
            errno == EPROTOTYPE)
                return -EADDRINUSE;
        if (errno == ECONNREFUSED && unlink(sa->sun_path) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

/* The mode comes from the umask at bind(), never from a chmod() by path:
 * the directory may belong to the unprivileged user the daemon becomes,
 * who could swap the name for a symbolic link in between. */
static int bind_listen(int fd, const struct sockaddr_un *sa, mode_t mode, UnixSockId *ret_id) {
        struct stat st;
        mode_t old_umask;
        int r;

        old_umask = umask(~mode & 0777);
        r = bind(fd, (const struct sockaddr *) sa, sizeof(*sa)) < 0 ? -errno : 0;
        umask(old_umask);
        if (r < 0)
                return r;
        if (lstat(sa->sun_path, &st) < 0)
                return -errno;
        if (!S_ISSOCK(st.st_mode))
                return -EEXIST;
        if (listen(fd, UNIXSOCK_BACKLOG) < 0)
                return -errno;
        *ret_id = (UnixSockId){ .dev = st.st_dev, .ino = st.st_ino };
        return 0;
}

int unixsock_listen(const char *path, int type, mode_t mode, int *ret_fd, UnixSockId *ret_id) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        int r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        r = make_parent_dir(path);
        if (r < 0)
                return r;
        r = claim_path(&sa, type);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        r = bind_listen(fd, &sa, mode, ret_id);
        if (r < 0)
                return r;
        *ret_fd = fd;
        fd = -1;
        return 0;
}

void unixsock_remove(const char *path, const UnixSockId *id) {
        struct stat st;

        if (stat(path, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino)
                unlink(path);
}
