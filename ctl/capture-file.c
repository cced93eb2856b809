/* capture-file.c - a capture file that appears only when complete (see
 * capture-file.h). Flow: verb-raw -> [capture-file] -> the file system. */
#include "capture-file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"

/* The capture's temporary file, removed by the signal handler: set only
 * while it exists. */
static char partial_path[PATH_MAX];
static volatile sig_atomic_t partial_exists;

static void on_fatal_signal(int sig) {
        /* unlink() and raise() are async-signal-safe. */
        if (partial_exists)
                (void) unlink(partial_path);
        signal(sig, SIG_DFL);
        raise(sig);
}

int capture_file_create(const char *path) {
        static const int signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
        struct sigaction sa = { .sa_handler = on_fatal_signal };
        mode_t mask;
        int fd;

        if ((size_t) snprintf(partial_path, sizeof(partial_path), "%s.partial-XXXXXX", path) >= sizeof(partial_path))
                return -ENAMETOOLONG;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(signals); i++)
                sigaction(signals[i], &sa, NULL);
        fd = mkostemp(partial_path, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        partial_exists = 1;
        mask = umask(0);
        umask(mask);
        (void) fchmod(fd, 0644 & ~mask);
        return fd;
}

static void discard(void) {
        if (partial_exists) {
                partial_exists = 0;
                (void) unlink(partial_path);
        }
}

int capture_file_end(int fd, const char *path, bool complete) {
        int r = complete ? 0 : -ECANCELED;

        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(partial_path, path) < 0)
                r = -errno;
        if (r == 0)
                partial_exists = 0;
        else
                discard();
        return r;
}
