/* source-file.c - replays raw samples from a file or FIFO.
 *
 * For tests (stuck, biased or good data through the real health tests and
 * conditioner) and for re-checking a capture made with `truerandomctl raw`.
 * One byte is one sample. At the end the source starts over when asked to
 * loop (a FIFO cannot, and ends), else read() returns -ENODATA. Opening never
 * waits (a FIFO without a writer would hang whoever opens it: the daemon's
 * loop); a FIFO's read waits at most 1 s for data and returns -EAGAIN
 * until its first writer came, -ENODATA once its writers are gone.
 *
 * Pacing: with a rate, a read returns at most one second's worth of samples
 * and sleeps n / rate seconds first, so the output never exceeds the rate and
 * each call returns within ~1 s. The sleep is relative (clock_nanosleep on
 * CLOCK_MONOTONIC), restarted with the remaining time when a signal cuts it.
 * Flow: [source] -> health -> conditioner -> store. */
#include "source.h"
#include "util/cleanup.h"
#include "util/time-util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <time.h>

/* The longest a FIFO's read waits for data. */
#define FILE_FIFO_WAIT_USEC USEC_PER_SEC

typedef struct FileSource {
        int fd;
        bool loop;
        bool fifo;
        bool had_data;   /* fifo: a writer delivered something */
        uint64_t rate;
} FileSource;

static int file_open(const SourceParams *p, void **ret_state) {
        struct stat st;
        FileSource *f;
        int fd, r;

        if (!p || !p->path)
                return -EINVAL;
        fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        f = calloc(1, sizeof(*f));
        if (!f) {
                close(fd);
                return -ENOMEM;
        }
        f->fd = fd;
        f->fifo = S_ISFIFO(st.st_mode);
        f->loop = p->loop;
        f->rate = p->rate;
        *ret_state = f;
        return 0;
}

static void file_pace(const FileSource *f, size_t n) {
        /* Rounded up, so that the output never exceeds the rate. */
        struct timespec ts = usec_to_timespec(((usec_t) n * USEC_PER_SEC + f->rate - 1) / f->rate);

        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
                ;
}

static ssize_t file_read_once(FileSource *f, uint8_t *buf, size_t n) {
        struct pollfd pfd = { .fd = f->fd, .events = POLLIN };
        ssize_t r;

        /* Linux reports no POLLHUP on a FIFO before its first writer. */
        if (f->fifo && poll(&pfd, 1, (int) (FILE_FIFO_WAIT_USEC / USEC_PER_MSEC)) == 0)
                return -EAGAIN;
        do
                r = read(f->fd, buf, n);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                return -errno;
        if (f->fifo && r == 0 && !f->had_data)
                return -EAGAIN;
        if (r > 0)
                f->had_data = true;
        return r;
}

static ssize_t file_read(void *state, uint8_t *buf, size_t n) {
        FileSource *f = state;
        ssize_t r;

        if (n == 0)
                return -EINVAL;
        if (f->rate > 0)
                n = MIN(n, (size_t) MIN(f->rate, (uint64_t) SSIZE_MAX));

        r = file_read_once(f, buf, n);
        if (r == 0 && f->loop) {
                if (lseek(f->fd, 0, SEEK_SET) < 0)
                        return -ENODATA;
                r = file_read_once(f, buf, n);
        }
        if (r == 0)
                return -ENODATA;
        if (r < 0)
                return r;

        if (f->rate > 0)
                file_pace(f, (size_t) r);
        return r;
}

static uint32_t file_max_credit(void *state) {
        return UINT32_MAX;
}

static void file_close(void *state) {
        FileSource *f = state;

        if (!f)
                return;
        if (f->fd >= 0)
                close(f->fd);
        free(f);
}

const SourceOps source_file = {
        .name = "file",
        .help = "raw samples replayed from a file or FIFO (tests, captures)",
        .credit = SOURCE_CREDIT_MEASURED,
        /* Replayed data has no credit of its own: tests and audits set one,
         * and enabled without one it could only mislead. */
        .credit_required = true,
        .defaults = { .enable = false, .credit_cap_mbits = 8000 },
        .keys = {
                { "path", SOURCE_KEY_PATH_NONE, offsetof(SourceParams, path), 0, 0 },
                { "loop", SOURCE_KEY_BOOL, offsetof(SourceParams, loop), 0, 0 },
                { "rate", SOURCE_KEY_U64, offsetof(SourceParams, rate), 0, 1000000000 },
        },
        .open = file_open,
        .read = file_read,
        .max_credit = file_max_credit,
        .close = file_close,
};
