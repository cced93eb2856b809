/* fuzz-rndioctl.c - rndioctl_decode() as the kernel and a hostile caller
 * drive it.
 *
 * Input: a command (mostly one of the seven <linux/random.h> ioctls), a mode,
 * then per round the sizes and bytes delivered. In "kernel" mode the harness
 * answers each retry with exactly the memory asked for, as fs/fuse/ioctl.c
 * does, and the caller's memory may change between rounds (another thread
 * rewriting its rand_pool_info); in "hostile" mode every round's in_size and
 * out_size come from the input. Each delivery is a fresh heap buffer of
 * exactly in_size bytes, so a read past it is an ASan report.
 * Checks: errors leave *ret alone and are the documented ones; a decoded
 * request lies inside what was delivered and agrees with its header; a
 * retry always asks for something new and the kernel's dance ends within
 * three rounds.
 * Flow: libFuzzer -> [harness] -> rndioctl. */
#include <errno.h>
#include <linux/random.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuse/rndioctl.h"
#include "fuzz.h"

/* struct rand_pool_info without its buffer. */
#define HEADER (2 * sizeof(int32_t))
/* Stands for the caller's pointer; never dereferenced. */
#define USER_ARG ((void *) (uintptr_t) 0xdead000000001000ULL)
#define ROUNDS_MAX 8

static const unsigned commands[] = {
        RNDGETENTCNT, RNDADDTOENTCNT, RNDGETPOOL, RNDADDENTROPY, RNDZAPENTCNT, RNDCLEARPOOL, RNDRESEEDCRNG,
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static int32_t int_at(const uint8_t *p) {
        int32_t v;

        memcpy(&v, p, sizeof(v));
        return v;
}

static void check_decoded(unsigned cmd, const RndRequest *r, const uint8_t *in, size_t in_size,
                          size_t out_size) {
        volatile uint8_t sink = 0;

        FUZZ_CHECK(r->op == rndioctl_op(cmd));
        switch (r->op) {
        case RND_OP_GETENTCNT:
                FUZZ_CHECK(r->out_size == sizeof(int));
                FUZZ_CHECK(r->out_size <= out_size);
                break;
        case RND_OP_ADDTOENTCNT:
                FUZZ_CHECK(in_size >= sizeof(int32_t));
                FUZZ_CHECK(r->count >= 0 && r->count == int_at(in));
                break;
        case RND_OP_ADDENTROPY:
                FUZZ_CHECK(in_size >= HEADER);
                FUZZ_CHECK(r->count >= 0 && r->count == int_at(in));
                FUZZ_CHECK((int64_t) r->size == (int64_t) int_at(in + sizeof(int32_t)));
                FUZZ_CHECK(r->size <= RNDIOCTL_MAX_BUF);
                FUZZ_CHECK((uint64_t) r->count <= 8 * (uint64_t) r->size);
                FUZZ_CHECK(r->data == in + HEADER);
                FUZZ_CHECK(r->size <= in_size - HEADER);
                /* The handler mixes every byte: touch them all, so data
                 * pointing anywhere but the delivery is an ASan report. */
                for (size_t i = 0; i < r->size; i++)
                        sink ^= r->data[i];
                break;
        case RND_OP_ZAPENTCNT:
        case RND_OP_CLEARPOOL:
        case RND_OP_RESEEDCRNG:
                break;
        case RND_OP_GETPOOL:
        case RND_OP_UNKNOWN:
                FUZZ_CHECK(!"refused ops never decode");
        }
        (void) sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        FuzzInput in = { data, size };
        uint8_t pick = fuzz_u8(&in), mode = fuzz_u8(&in);
        unsigned cmd = pick < 0xf0 ? commands[pick % N_COMMANDS] : fuzz_u32(&in);
        bool kernel = !(mode & 1);
        size_t in_size = 0, out_size = 0;
        /* The caller's memory in kernel mode: its start can be rewritten
         * between rounds, its tail is whatever the input left (zeros). */
        static uint8_t user[HEADER + RNDIOCTL_MAX_BUF];
        unsigned round;

        memset(user, 0, sizeof(user));
        fuzz_fill(&in, user, HEADER);
        if (!kernel) {
                in_size = fuzz_u16(&in) % (HEADER + RNDIOCTL_MAX_BUF + 1);
                out_size = fuzz_u8(&in);
        }

        for (round = 1; round <= ROUNDS_MAX; round++) {
                uint8_t *buf = in_size > 0 ? malloc(in_size) : NULL;
                RndRequest r, untouched;
                bool null_in = !kernel && (mode & 4) && in_size > 0;
                int k;

                FUZZ_CHECK(in_size == 0 || buf);
                if (kernel) {
                        /* A racing writer may change the header before this copy. */
                        if (round > 1 && (mode & 2))
                                fuzz_fill(&in, user, HEADER);
                        if (in_size > 0)
                                memcpy(buf, user, in_size);
                } else if (in_size > 0)
                        fuzz_fill(&in, buf, in_size);

                memset(&r, 0xa5, sizeof(r));
                untouched = r;
                /* A NULL buffer with a size is no kernel's doing, but the
                 * contract answers it: -EFAULT. */
                k = rndioctl_decode(cmd, USER_ARG, null_in ? NULL : buf, in_size, out_size, &r);
                FUZZ_CHECK(!null_in || k < 0);
                if (k < 0) {
                        FUZZ_CHECK(memcmp(&r, &untouched, sizeof(r)) == 0);
                        FUZZ_CHECK(k == -ENOTTY || k == -EINVAL || k == -EFAULT);
                        if (!null_in)
                                FUZZ_CHECK((k == -ENOTTY) == (rndioctl_op(cmd) == RND_OP_UNKNOWN));
                        if (!null_in && rndioctl_op(cmd) == RND_OP_GETPOOL)
                                FUZZ_CHECK(k == -EINVAL);
                        free(buf);
                        break;
                }
                FUZZ_CHECK(k == 0);
                if (!r.retry) {
                        check_decoded(cmd, &r, buf, in_size, out_size);
                        free(buf);
                        break;
                }
                free(buf);

                FUZZ_CHECK(r.op == rndioctl_op(cmd));
                FUZZ_CHECK(r.in_count <= 1 && r.out_count <= 1 && r.in_count + r.out_count >= 1);
                if (r.in_count == 1) {
                        FUZZ_CHECK(r.in_iov[0].iov_base == USER_ARG);
                        FUZZ_CHECK(r.in_iov[0].iov_len <= HEADER + RNDIOCTL_MAX_BUF);
                }
                if (r.out_count == 1) {
                        FUZZ_CHECK(r.out_iov[0].iov_base == USER_ARG);
                        FUZZ_CHECK(r.out_iov[0].iov_len == sizeof(int));
                }
                if (kernel) {
                        size_t next_in = r.in_count ? r.in_iov[0].iov_len : 0;
                        size_t next_out = r.out_count ? r.out_iov[0].iov_len : 0;

                        /* The same question again would loop the kernel forever. */
                        FUZZ_CHECK(next_in != in_size || next_out != out_size);
                        in_size = next_in;
                        out_size = next_out;
                } else {
                        in_size = fuzz_u16(&in) % (HEADER + RNDIOCTL_MAX_BUF + 1);
                        out_size = fuzz_u8(&in);
                }
        }
        if (kernel)
                FUZZ_CHECK(round <= 3);
        return 0;
}
