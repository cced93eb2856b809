/* source-kernel.c - the kernel's getrandom() as a source.
 *
 * Never credited (SOURCE_CREDIT_NEVER, max_credit 0): its output is already
 * conditioned by a CRNG whose entropy we cannot verify, so it only enters CRNG
 * seeds as defence in depth. GRND_NONBLOCK keeps read() from waiting for the
 * kernel's own seeding at early boot (the contract says reads return within
 * ~1 s); the caller backs off on -EAGAIN.
 * Flow: [source] -> CRNG seed mixing (never the TRNG store). */
#include "source.h"
#include "util/cleanup.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

/* getrandom() never returns short below this; larger reads may be cut by a
 * signal, which is harmless but pointless to ask for. */
#define KERNEL_READ_MAX 4096U

static int kernel_open(const SourceParams *p, void **ret_state) {
        /* No per-instance state; a non-NULL token keeps callers uniform. */
        static int token;

        *ret_state = &token;
        return 0;
}

static ssize_t kernel_read(void *state, uint8_t *buf, size_t n) {
        ssize_t r;

        if (n == 0)
                return -EINVAL;
        r = getrandom(buf, MIN(n, (size_t) KERNEL_READ_MAX), GRND_NONBLOCK);
        if (r < 0)
                return errno == EINTR ? -EAGAIN : -errno;
        if (r == 0)
                return -EAGAIN;
        return r;
}

static uint32_t kernel_max_credit(void *state) {
        return 0;
}

static void kernel_close(void *state) {
}

const SourceOps source_kernel = {
        .name = "kernel",
        .help = "getrandom(), mixed into CRNG seeds, never credited",
        .credit = SOURCE_CREDIT_NEVER,
        .defaults = { .enable = true },
        .open = kernel_open,
        .read = kernel_read,
        .max_credit = kernel_max_credit,
        .close = kernel_close,
};
