/* truerandom.c - libtruerandom: unbuffered reads of /dev/truerandom by
 * policy (see truerandom.h and truerandom_read(3)).
 *
 * Invariants: every read(2) asks for at most what the caller still
 * wants (no read-ahead: each block is served once, and a block read in
 * part is erased); the descriptor's O_NONBLOCK matches the policy of the
 * read in progress; at most one reopen per call; errno never leaves a
 * function, -errno does. Flow: truerandomd -> /dev/truerandom ->
 * [libtruerandom] -> seeders, the OpenSSL provider, tools. */
#include "truerandom.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/random.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct truerandom {
        int fd;
        bool nonblock; /* what the descriptor's O_NONBLOCK is now */
        char *path;
};

/* The daemon behind the device is gone or going: ECONNABORTED (it died
 * while the read waited), ENOTCONN (it died before: FUSE's answer on a
 * dead connection), ENODEV (the device was removed), EIO (it is
 * stopping: it answers every read so). A restarted daemon serves a new
 * device node under the same path. */
static bool daemon_gone(int e) {
        return e == ECONNABORTED || e == ENOTCONN || e == ENODEV || e == EIO;
}

static int open_path(const char *path) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

        return fd < 0 ? -errno : fd;
}

int truerandom_open(const char *path, struct truerandom **ret) {
        struct truerandom *t;
        int fd;

        if (!ret)
                return -EINVAL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->path = strdup(path ? path : TRUERANDOM_DEFAULT_PATH);
        if (!t->path) {
                free(t);
                return -ENOMEM;
        }
        fd = open_path(t->path);
        if (fd < 0) {
                free(t->path);
                free(t);
                return fd;
        }
        t->fd = fd;
        *ret = t;
        return 0;
}

struct truerandom *truerandom_close(struct truerandom *t) {
        if (!t)
                return NULL;
        if (t->fd >= 0)
                close(t->fd);
        free(t->path);
        free(t);
        return NULL;
}

int truerandom_fd(const struct truerandom *t) {
        return t ? t->fd : -EINVAL;
}

/* Opens the path anew onto the same descriptor number (dup3), so that a
 * caller's poll set stays valid. A new open file is blocking. */
static int reopen(struct truerandom *t) {
        int fd = open_path(t->path), r = 0;

        if (fd < 0)
                return fd;
        if (dup3(fd, t->fd, O_CLOEXEC) < 0)
                r = -errno;
        else
                t->nonblock = false;
        close(fd);
        return r;
}

static int set_nonblock(struct truerandom *t, bool nonblock) {
        int flags;

        if (t->nonblock == nonblock)
                return 0;
        flags = fcntl(t->fd, F_GETFL);
        if (flags < 0)
                return -errno;
        flags = nonblock ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
        if (fcntl(t->fd, F_SETFL, flags) < 0)
                return -errno;
        t->nonblock = nonblock;
        return 0;
}

/* One read(2) of exactly n bytes asked, EINTR retried, and one reopen
 * when the daemon went away (*reopened says whether it was spent).
 * Returns 1..n, or -errno; end of file is -ENODATA. */
static ssize_t read_once(struct truerandom *t, void *buf, size_t n, bool nonblock, bool *reopened) {
        for (;;) {
                ssize_t k;
                int r = set_nonblock(t, nonblock);

                if (r < 0)
                        return r;
                k = read(t->fd, buf, n);
                if (k > 0)
                        return k;
                if (k == 0)
                        return -ENODATA;
                r = -errno;
                if (r == -EINTR)
                        continue;
                if (!daemon_gone(-r) || *reopened)
                        return r;
                *reopened = true;
                r = reopen(t);
                if (r < 0)
                        return r;
        }
}

ssize_t truerandom_read(struct truerandom *t, void *buf, size_t n, enum truerandom_policy policy) {
        bool reopened = false;
        uint8_t *p = buf;
        size_t done = 0;

        if (!t || (!buf && n > 0) || n > SSIZE_MAX)
                return -EINVAL;
        if (policy != TRUERANDOM_READ_BLOCK && policy != TRUERANDOM_READ_NONBLOCK &&
            policy != TRUERANDOM_READ_ALL)
                return -EINVAL;
        if (n == 0)
                return 0;
        if (policy != TRUERANDOM_READ_ALL)
                return read_once(t, buf, n, policy == TRUERANDOM_READ_NONBLOCK, &reopened);
        while (done < n) {
                ssize_t k = read_once(t, p + done, n - done, false, &reopened);

                if (k < 0) {
                        /* All or nothing: a seed is never handed out in part. */
                        explicit_bzero(buf, n);
                        return k;
                }
                done += (size_t) k;
        }
        return (ssize_t) n;
}

int truerandom_bits_ready(struct truerandom *t) {
        bool reopened = false;
        int bits;

        if (!t)
                return -EINVAL;
        for (;;) {
                int r;

                if (ioctl(t->fd, RNDGETENTCNT, &bits) == 0)
                        return bits < 0 ? 0 : bits;
                r = -errno;
                if (r == -EINTR)
                        continue;
                if (!daemon_gone(-r) || reopened)
                        return r;
                reopened = true;
                r = reopen(t);
                if (r < 0)
                        return r;
        }
}
