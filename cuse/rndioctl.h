/* rndioctl.h - decoding of the <linux/random.h> ioctls as CUSE delivers them.
 *
 * The drop-in devices register with CUSE_UNRESTRICTED_IOCTL, so the kernel
 * passes raw ioctls with no data first; the decoder says which user memory to
 * fetch (fuse_reply_ioctl_retry) until it has everything, then hands back the
 * decoded request. Hostile sizes never make it read past what the kernel
 * delivered. Pure functions, no state, no privilege decisions.
 * Flow: kernel ioctl -> [rndioctl] -> CUSE device handler. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Largest rand_pool_info.buf_size accepted (the FUSE ioctl data limit is
 * 32 pages; this keeps a margin). Larger: -EINVAL. */
#define RNDIOCTL_MAX_BUF 65536U

typedef enum RndOp {
        RND_OP_GETENTCNT,
        RND_OP_ADDTOENTCNT,
        RND_OP_GETPOOL,
        RND_OP_ADDENTROPY,
        RND_OP_ZAPENTCNT,
        RND_OP_CLEARPOOL,
        RND_OP_RESEEDCRNG,
        RND_OP_UNKNOWN,
} RndOp;

typedef struct RndRequest {
        RndOp op;
        /* Set when more user memory is needed: reply fuse_reply_ioctl_retry()
         * with these and call again with what the kernel then delivers. */
        bool retry;
        struct iovec in_iov[1];
        size_t in_count;
        struct iovec out_iov[1];
        size_t out_count;
        /* Decoded (retry == false): */
        int32_t count;         /* ADDTOENTCNT: bits; ADDENTROPY: entropy_count */
        const uint8_t *data;   /* ADDENTROPY: points into the caller's in buffer */
        size_t size;           /* ADDENTROPY: buf_size */
        size_t out_size;       /* GETENTCNT: bytes of output the caller may write (sizeof(int)) */
} RndRequest;

/* Which operation cmd is; RND_OP_UNKNOWN for anything else. */
RndOp rndioctl_op(unsigned cmd);
/* Whether the kernel demands CAP_SYS_ADMIN for op. */
bool rndioctl_privileged(RndOp op);

/* Decodes. arg is the caller's pointer (for retry iovecs); in/in_size what the
 * kernel delivered; out_size the output room it offered.
 * Returns 0 (see ret->retry), -ENOTTY (unknown cmd), -EINVAL (GETPOOL; negative
 * counts; entropy_count > 8 * buf_size; buf_size > RNDIOCTL_MAX_BUF), -EFAULT
 * (data shorter than its header says after the retry). ret is written on 0. */
int rndioctl_decode(unsigned cmd, void *arg, const void *in, size_t in_size, size_t out_size,
                    RndRequest *ret);
