/* source-hwrng.c - the kernel's hardware RNG character device, /dev/hwrng.
 *
 * Credit comes from sysfs: rng_quality is the entropy the driver claims per
 * 1024 bits, so a byte is worth quality * 8000 / 1024 millibits (rounded
 * down). A virtio-rng (rng_current "virtio_rng.N") forwards whatever the host
 * gives it, typically the host's DRBG, so it is worth 0 whatever it claims;
 * an unreadable, malformed or zero quality is worth 0 too (fail closed).
 * A TPM's RNG ("tpm-rng-N") is worth 0 here as well: it hands out the TPM's
 * DRBG output, and its rng_quality is the hw_random core's default, not a
 * claim of its driver; the same bytes are the tpm source's to credit, by
 * that source's policy, and must not be credited twice (hwrng.h).
 *
 * The device is opened O_NONBLOCK: a blocking read waits until all n bytes
 * came, which at virtio speeds (~10 KB/s) or on a stalled device breaks the
 * ~1 s contract and would keep the collector thread from stopping. poll() is
 * bounded at 1 s for drivers that implement it (hw_random's core does not and
 * reports always-readable). Every error goes straight up: EAGAIN, EIO, ENODEV
 * and short reads are never retried here, the collector backs off.
 * Flow: [source] -> health -> conditioner -> store. */
#include "source.h"
#include "hwrng.h"
#include "util/time-util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HWRNG_PATH "/dev/hwrng"
#define HWRNG_POLL_USEC USEC_PER_SEC
#define HWRNG_QUALITY_MAX 1024U

typedef struct Hwrng {
        int fd;
        uint32_t max_credit;
} Hwrng;

static uint32_t hwrng_credit_from_sysfs(const char *dir) {
        char buf[64];
        char *end;
        unsigned long q;

        if (hwrng_read_attr(dir, "rng_current", buf, sizeof(buf)) == 0 &&
            (strncmp(buf, "virtio", 6) == 0 || hwrng_name_tpm_index(buf) >= 0))
                return 0;
        if (hwrng_read_attr(dir, "rng_quality", buf, sizeof(buf)) < 0)
                return 0;
        errno = 0;
        q = strtoul(buf, &end, 10);
        if (errno != 0 || end == buf || *end != '\0' || buf[0] == '-' || q > HWRNG_QUALITY_MAX)
                return 0;
        return (uint32_t) (q * 8000U / HWRNG_QUALITY_MAX);
}

static int hwrng_open(const SourceParams *p, void **ret_state) {
        const char *path = p && p->path ? p->path : HWRNG_PATH;
        const char *sysfs = p && p->sysfs_dir ? p->sysfs_dir : HWRNG_SYSFS_DIR;
        char current[64];
        Hwrng *h;
        int fd;

        /* "none": the device node exists but no driver is behind it. */
        if (hwrng_read_attr(sysfs, "rng_current", current, sizeof(current)) == 0 && strcmp(current, "none") == 0)
                return -ENODEV;

        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT || errno == ENXIO ? -ENODEV : -errno;
        h = calloc(1, sizeof(*h));
        if (!h) {
                close(fd);
                return -ENOMEM;
        }
        h->fd = fd;
        h->max_credit = hwrng_credit_from_sysfs(sysfs);
        *ret_state = h;
        return 0;
}

static ssize_t hwrng_read(void *state, uint8_t *buf, size_t n) {
        Hwrng *h = state;
        struct pollfd pfd = { .fd = h->fd, .events = POLLIN };
        ssize_t r;

        if (n == 0)
                return -EINVAL;
        r = poll(&pfd, 1, (int) (HWRNG_POLL_USEC / USEC_PER_MSEC));
        if (r < 0)
                return errno == EINTR ? -EAGAIN : -errno;
        if (r == 0)
                return -EAGAIN;
        if (pfd.revents & (POLLERR | POLLNVAL))
                return -EIO;
        r = read(h->fd, buf, n);
        if (r < 0)
                return errno == EINTR ? -EAGAIN : -errno;
        /* A character device has no end; nothing at all is a device fault. */
        if (r == 0)
                return -EIO;
        return r;
}

static uint32_t hwrng_max_credit(void *state) {
        Hwrng *h = state;

        return h->max_credit;
}

static void hwrng_close(void *state) {
        Hwrng *h = state;

        if (!h)
                return;
        if (h->fd >= 0)
                close(h->fd);
        free(h);
}

const SourceOps source_hwrng = {
        .name = "hwrng",
        .help = "the kernel's hardware RNG, /dev/hwrng",
        .credit = SOURCE_CREDIT_FIXED,
        /* The credit is a cap on the driver's own claim (max_credit). */
        .defaults = { .enable = true, .credit_mbits = 4000, .params = { .path = HWRNG_PATH } },
        .keys = {
                { "path", SOURCE_KEY_PATH, offsetof(SourceParams, path), 0, 0 },
        },
        .open = hwrng_open,
        .read = hwrng_read,
        .max_credit = hwrng_max_credit,
        .close = hwrng_close,
};
