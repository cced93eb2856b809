/* rndioctl.c - decoding of the <linux/random.h> ioctls as CUSE delivers them.
 *
 * With CUSE_UNRESTRICTED_IOCTL the kernel first forwards an ioctl with no data
 * at all (in_size = out_size = 0); the decoder asks for the user memory it
 * needs (retry), and the kernel calls again with exactly that memory copied
 * in, or with room for the output. RNDADDENTROPY needs two rounds: the 8-byte
 * header of struct rand_pool_info, then header plus buf_size bytes. Every
 * call is decoded from what that call delivered alone (the user may change
 * its memory between rounds), and nothing is read past in_size.
 * Errors follow drivers/char/random.c (Linux 6.1): negative counts -EINVAL;
 * data the kernel could not fetch -EFAULT. Stricter than the kernel, as
 * DESIGN §3 asks: entropy_count > 8 * buf_size and buf_size beyond
 * RNDIOCTL_MAX_BUF are -EINVAL.
 * FUSE_IOCTL_COMPAT needs no handling: these ioctls carry only ints and
 * bytes, laid out the same for 32-bit callers, and the retry iovecs use the
 * caller's pointer as the kernel handed it over.
 * Flow: kernel ioctl -> [rndioctl] -> CUSE device handler. */
#include "rndioctl.h"

#include <errno.h>
#include <linux/random.h>
#include <string.h>

/* struct rand_pool_info without its flexible buf[]. */
#define RNDIOCTL_HEADER (2 * sizeof(int32_t))

RndOp rndioctl_op(unsigned cmd) {
        /* libfuse hands the command over as an int; the values with the
         * _IOC_READ bit set are negative there, so callers cast back to
         * unsigned and the whole 32-bit value is compared, size bits
         * included, as the kernel does. */
        switch (cmd) {
        case RNDGETENTCNT:
                return RND_OP_GETENTCNT;
        case RNDADDTOENTCNT:
                return RND_OP_ADDTOENTCNT;
        case RNDGETPOOL:
                return RND_OP_GETPOOL;
        case RNDADDENTROPY:
                return RND_OP_ADDENTROPY;
        case RNDZAPENTCNT:
                return RND_OP_ZAPENTCNT;
        case RNDCLEARPOOL:
                return RND_OP_CLEARPOOL;
        case RNDRESEEDCRNG:
                return RND_OP_RESEEDCRNG;
        default:
                return RND_OP_UNKNOWN;
        }
}

bool rndioctl_privileged(RndOp op) {
        switch (op) {
        case RND_OP_ADDTOENTCNT:
        case RND_OP_ADDENTROPY:
        case RND_OP_ZAPENTCNT:
        case RND_OP_CLEARPOOL:
        case RND_OP_RESEEDCRNG:
                return true;
        case RND_OP_GETENTCNT:
        case RND_OP_GETPOOL:
        case RND_OP_UNKNOWN:
                return false;
        }
        return false;
}

static void rndioctl_want_in(RndRequest *r, void *arg, size_t size) {
        r->retry = true;
        r->in_iov[0] = (struct iovec) { .iov_base = arg, .iov_len = size };
        r->in_count = 1;
}

static int32_t rndioctl_int_at(const void *in, size_t offset) {
        /* The FUSE buffer gives no alignment guarantee. */
        int32_t v;
        memcpy(&v, (const uint8_t *) in + offset, sizeof(v));
        return v;
}

/* A retry is answered with exactly the memory asked for, or the ioctl fails
 * in the kernel with -EFAULT before reaching us. So any non-zero amount short
 * of what the op needs is a truncated delivery: fail it like a faulting
 * get_user() rather than ask again. */
static int rndioctl_decode_addentropy(void *arg, const void *in, size_t in_size, RndRequest *r) {
        if (in_size == 0) {
                rndioctl_want_in(r, arg, RNDIOCTL_HEADER);
                return 0;
        }
        if (in_size < RNDIOCTL_HEADER)
                return -EFAULT;

        int32_t entropy_count = rndioctl_int_at(in, 0);
        int32_t buf_size = rndioctl_int_at(in, sizeof(int32_t));
        if (entropy_count < 0)
                return -EINVAL;
        if (buf_size < 0 || (uint32_t) buf_size > RNDIOCTL_MAX_BUF)
                return -EINVAL;
        if ((int64_t) entropy_count > 8 * (int64_t) buf_size)
                return -EINVAL;

        size_t total = RNDIOCTL_HEADER + (size_t) buf_size;
        if (in_size == RNDIOCTL_HEADER && buf_size > 0) {
                rndioctl_want_in(r, arg, total);
                return 0;
        }
        /* The header in this delivery may differ from the one that sized it;
         * only this delivery's own header counts, checked against its length. */
        if (in_size < total)
                return -EFAULT;

        r->count = entropy_count;
        r->size = (size_t) buf_size;
        r->data = (const uint8_t *) in + RNDIOCTL_HEADER;
        return 0;
}

int rndioctl_decode(unsigned cmd, void *arg, const void *in, size_t in_size, size_t out_size,
                    RndRequest *ret) {
        RndRequest r = { .op = rndioctl_op(cmd) };
        int32_t count;
        int k;

        if (in_size > 0 && !in)
                return -EFAULT;

        switch (r.op) {
        case RND_OP_UNKNOWN:
                return -ENOTTY;
        case RND_OP_GETPOOL:
                /* Removed in 2.6.9; the kernel answers -EINVAL to anyone. */
                return -EINVAL;
        case RND_OP_GETENTCNT:
                if (out_size == 0) {
                        r.retry = true;
                        r.out_iov[0] = (struct iovec) { .iov_base = arg, .iov_len = sizeof(int) };
                        r.out_count = 1;
                        break;
                }
                if (out_size < sizeof(int))
                        return -EFAULT;
                r.out_size = sizeof(int);
                break;
        case RND_OP_ADDTOENTCNT:
                if (in_size == 0) {
                        rndioctl_want_in(&r, arg, sizeof(int32_t));
                        break;
                }
                if (in_size < sizeof(int32_t))
                        return -EFAULT;
                /* Since 5.18 the kernel refuses to subtract entropy. */
                count = rndioctl_int_at(in, 0);
                if (count < 0)
                        return -EINVAL;
                r.count = count;
                break;
        case RND_OP_ADDENTROPY:
                k = rndioctl_decode_addentropy(arg, in, in_size, &r);
                if (k < 0)
                        return k;
                break;
        case RND_OP_ZAPENTCNT:
        case RND_OP_CLEARPOOL:
        case RND_OP_RESEEDCRNG:
                break;
        }

        *ret = r;
        return 0;
}
