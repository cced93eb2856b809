/* test-rndioctl.c - the random ioctls decoded through the CUSE retry dance.
 *
 * play_kernel() acts as the kernel's FUSE ioctl code with an unrestricted
 * ioctl: the first call carries no data, each retry is answered with a fresh
 * heap buffer of exactly the requested size copied from "user memory", so an
 * over-read shows up under ASan/valgrind. */
#include <errno.h>
#include <linux/random.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <cmocka.h>

#include "cuse/rndioctl.h"

typedef struct Call {
        size_t in_size, out_size;
} Call;

typedef struct Played {
        RndRequest req;
        Call calls[4];
        unsigned rounds;
        uint8_t *delivered;       /* the last in buffer; req.data points here */
        size_t delivered_size;
} Played;

static uint8_t *deliver(const void *src, size_t size) {
        uint8_t *p = malloc(size ? size : 1);
        assert_non_null(p);
        memcpy(p, src, size);
        return p;
}

/* Returns what the ioctl returns to the caller; p->req is the decoded request
 * on 0. user/user_size: the caller's memory at arg. */
static int play_kernel(unsigned cmd, void *user, size_t user_size, Played *p) {
        *p = (Played) { 0 };
        size_t in_size = 0, out_size = 0;
        for (;;) {
                assert_true(p->rounds < sizeof(p->calls) / sizeof(p->calls[0]));
                p->calls[p->rounds++] = (Call) { in_size, out_size };
                RndRequest req;
                int r = rndioctl_decode(cmd, user, p->delivered, in_size, out_size, &req);
                if (r < 0)
                        return r;
                if (!req.retry) {
                        p->req = req;
                        return 0;
                }
                assert_true(req.in_count + req.out_count >= 1);
                assert_true(req.in_count <= 1 && req.out_count <= 1);
                in_size = out_size = 0;
                free(p->delivered);
                p->delivered = NULL;
                if (req.in_count == 1) {
                        assert_ptr_equal(req.in_iov[0].iov_base, user);
                        in_size = req.in_iov[0].iov_len;
                        /* Memory past the caller's object faults in the kernel. */
                        if (in_size > user_size)
                                return -EFAULT;
                        p->delivered = deliver(user, in_size);
                        p->delivered_size = in_size;
                }
                if (req.out_count == 1) {
                        assert_ptr_equal(req.out_iov[0].iov_base, user);
                        out_size = req.out_iov[0].iov_len;
                }
        }
}

static void played_done(Played *p) {
        free(p->delivered);
        p->delivered = NULL;
}

/* What the kernel would deliver on one direct call, exactly sized. */
static int decode_delivered(unsigned cmd, const void *src, size_t size, RndRequest *ret) {
        uint8_t *in = deliver(src, size);
        int r = rndioctl_decode(cmd, (void *) src, size ? in : NULL, size, 0, ret);
        free(in);
        return r;
}

typedef struct PoolInfo {
        int32_t entropy_count;
        int32_t buf_size;
        uint8_t buf[64];
} PoolInfo;

static void test_op_table(void **state) {
        /* libfuse passes cmd as an int: the _IOR values are negative there. */
        int libfuse_cmd = (int) RNDGETENTCNT;
        assert_true(libfuse_cmd < 0);
        assert_int_equal(rndioctl_op((unsigned) libfuse_cmd), RND_OP_GETENTCNT);
        assert_int_equal(rndioctl_op(RNDADDTOENTCNT), RND_OP_ADDTOENTCNT);
        assert_int_equal(rndioctl_op(RNDGETPOOL), RND_OP_GETPOOL);
        assert_int_equal(rndioctl_op(RNDADDENTROPY), RND_OP_ADDENTROPY);
        assert_int_equal(rndioctl_op(RNDZAPENTCNT), RND_OP_ZAPENTCNT);
        assert_int_equal(rndioctl_op(RNDCLEARPOOL), RND_OP_CLEARPOOL);
        assert_int_equal(rndioctl_op(RNDRESEEDCRNG), RND_OP_RESEEDCRNG);
        /* Same type and number with another size is another ioctl. */
        assert_int_equal(rndioctl_op(_IOR('R', 0x00, long long)), RND_OP_UNKNOWN);
        assert_int_equal(rndioctl_op(_IO('R', 0x00)), RND_OP_UNKNOWN);
        assert_int_equal(rndioctl_op(TCGETS), RND_OP_UNKNOWN);
        assert_int_equal(rndioctl_op(0), RND_OP_UNKNOWN);
}

static void test_privilege_table(void **state) {
        assert_false(rndioctl_privileged(RND_OP_GETENTCNT));
        assert_true(rndioctl_privileged(RND_OP_ADDTOENTCNT));
        assert_true(rndioctl_privileged(RND_OP_ADDENTROPY));
        assert_true(rndioctl_privileged(RND_OP_ZAPENTCNT));
        assert_true(rndioctl_privileged(RND_OP_CLEARPOOL));
        assert_true(rndioctl_privileged(RND_OP_RESEEDCRNG));
        assert_false(rndioctl_privileged(RND_OP_GETPOOL));
        assert_false(rndioctl_privileged(RND_OP_UNKNOWN));
}

static void test_getentcnt(void **state) {
        int user = -1;
        Played p;
        assert_int_equal(play_kernel(RNDGETENTCNT, &user, sizeof(user), &p), 0);
        assert_int_equal(p.rounds, 2);
        assert_int_equal(p.calls[1].in_size, 0);
        assert_int_equal(p.calls[1].out_size, sizeof(int));
        assert_int_equal(p.req.op, RND_OP_GETENTCNT);
        assert_false(p.req.retry);
        assert_int_equal(p.req.out_size, sizeof(int));
        played_done(&p);

        RndRequest r;
        assert_int_equal(rndioctl_decode(RNDGETENTCNT, &user, NULL, 0, 64, &r), 0);
        assert_false(r.retry);
        assert_int_equal(r.out_size, sizeof(int));
        assert_int_equal(rndioctl_decode(RNDGETENTCNT, &user, NULL, 0, 2, &r), -EFAULT);
}

static void test_addtoentcnt(void **state) {
        int32_t user = 256;
        Played p;
        assert_int_equal(play_kernel(RNDADDTOENTCNT, &user, sizeof(user), &p), 0);
        assert_int_equal(p.rounds, 2);
        assert_int_equal(p.calls[1].in_size, sizeof(int32_t));
        assert_int_equal(p.calls[1].out_size, 0);
        assert_int_equal(p.req.op, RND_OP_ADDTOENTCNT);
        assert_int_equal(p.req.count, 256);
        played_done(&p);

        user = 0;
        assert_int_equal(play_kernel(RNDADDTOENTCNT, &user, sizeof(user), &p), 0);
        assert_int_equal(p.req.count, 0);
        played_done(&p);

        user = INT32_MAX;
        assert_int_equal(play_kernel(RNDADDTOENTCNT, &user, sizeof(user), &p), 0);
        assert_int_equal(p.req.count, INT32_MAX);
        played_done(&p);
}

static void test_addtoentcnt_malformed(void **state) {
        const int32_t negatives[] = { -1, -256, INT32_MIN };
        Played p;
        for (size_t i = 0; i < sizeof(negatives) / sizeof(negatives[0]); i++) {
                int32_t user = negatives[i];
                assert_int_equal(play_kernel(RNDADDTOENTCNT, &user, sizeof(user), &p), -EINVAL);
                assert_int_equal(p.rounds, 2);
                played_done(&p);
        }
        int32_t user = 8;
        RndRequest r;
        for (size_t n = 1; n < sizeof(int32_t); n++)
                assert_int_equal(decode_delivered(RNDADDTOENTCNT, &user, n, &r), -EFAULT);
}

static void test_addentropy(void **state) {
        PoolInfo user = { .entropy_count = 256, .buf_size = 32 };
        for (unsigned i = 0; i < 32; i++)
                user.buf[i] = (uint8_t) (0xa0 + i);
        Played p;
        assert_int_equal(play_kernel(RNDADDENTROPY, &user, 8 + 32, &p), 0);
        assert_int_equal(p.rounds, 3);
        assert_int_equal(p.calls[1].in_size, 8);
        assert_int_equal(p.calls[2].in_size, 8 + 32);
        assert_int_equal(p.calls[2].out_size, 0);
        assert_int_equal(p.req.op, RND_OP_ADDENTROPY);
        assert_int_equal(p.req.count, 256);
        assert_int_equal(p.req.size, 32);
        assert_ptr_equal(p.req.data, p.delivered + 8);
        assert_memory_equal(p.req.data, user.buf, 32);
        played_done(&p);

        /* Exactly 8 bits per byte is the most that may be credited. */
        user = (PoolInfo) { .entropy_count = 8 * 64, .buf_size = 64 };
        assert_int_equal(play_kernel(RNDADDENTROPY, &user, sizeof(user), &p), 0);
        assert_int_equal(p.req.count, 512);
        assert_int_equal(p.req.size, 64);
        played_done(&p);

        /* Mixing without credit. */
        user = (PoolInfo) { .entropy_count = 0, .buf_size = 5 };
        assert_int_equal(play_kernel(RNDADDENTROPY, &user, 8 + 5, &p), 0);
        assert_int_equal(p.req.count, 0);
        assert_int_equal(p.req.size, 5);
        played_done(&p);
}

static void test_addentropy_empty(void **state) {
        PoolInfo user = { .entropy_count = 0, .buf_size = 0 };
        Played p;
        assert_int_equal(play_kernel(RNDADDENTROPY, &user, 8, &p), 0);
        assert_int_equal(p.rounds, 2);
        assert_int_equal(p.req.size, 0);
        assert_int_equal(p.req.count, 0);
        played_done(&p);

        user.entropy_count = 1;
        assert_int_equal(play_kernel(RNDADDENTROPY, &user, 8, &p), -EINVAL);
        played_done(&p);
}

static void test_addentropy_max_buf(void **state) {
        size_t size = 8 + RNDIOCTL_MAX_BUF;
        uint8_t *user = calloc(1, size + 1);
        assert_non_null(user);
        int32_t hdr[2] = { 8 * (int32_t) RNDIOCTL_MAX_BUF, (int32_t) RNDIOCTL_MAX_BUF };
        memcpy(user, hdr, sizeof(hdr));
        user[size - 1] = 0x5a;
        Played p;
        assert_int_equal(play_kernel(RNDADDENTROPY, user, size, &p), 0);
        assert_int_equal(p.rounds, 3);
        assert_int_equal(p.req.size, RNDIOCTL_MAX_BUF);
        assert_int_equal(p.req.data[RNDIOCTL_MAX_BUF - 1], 0x5a);
        played_done(&p);

        hdr[1] = (int32_t) RNDIOCTL_MAX_BUF + 1;
        hdr[0] = 0;
        memcpy(user, hdr, sizeof(hdr));
        assert_int_equal(play_kernel(RNDADDENTROPY, user, size + 1, &p), -EINVAL);
        assert_int_equal(p.rounds, 2);
        played_done(&p);
        free(user);
}

static void test_addentropy_malformed_header(void **state) {
        const struct {
                int32_t entropy_count, buf_size;
        } bad[] = {
                { -1, 16 },
                { INT32_MIN, 16 },
                { 8 * 16 + 1, 16 },
                { INT32_MAX, (int32_t) RNDIOCTL_MAX_BUF },
                { 0, -1 },
                { 0, INT32_MIN },
                { 0, INT32_MAX },
                { 0, (int32_t) RNDIOCTL_MAX_BUF + 1 },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                PoolInfo user = { .entropy_count = bad[i].entropy_count, .buf_size = bad[i].buf_size };
                Played p;
                /* Refused on the header alone, before any buffer is fetched. */
                assert_int_equal(play_kernel(RNDADDENTROPY, &user, sizeof(user), &p), -EINVAL);
                assert_int_equal(p.rounds, 2);
                played_done(&p);
        }
}

static void test_addentropy_truncated(void **state) {
        PoolInfo user = { .entropy_count = 8, .buf_size = 32 };
        RndRequest r, untouched;
        memset(&r, 0x6b, sizeof(r));
        memcpy(&untouched, &r, sizeof(r));

        /* Less than the header. */
        for (size_t n = 1; n < 8; n++)
                assert_int_equal(decode_delivered(RNDADDENTROPY, &user, n, &r), -EFAULT);
        /* Header plus less than buf_size. */
        for (size_t n = 9; n < 8 + 32; n++)
                assert_int_equal(decode_delivered(RNDADDENTROPY, &user, n, &r), -EFAULT);
        assert_memory_equal(&r, &untouched, sizeof(r));

        /* buf_size beyond the caller's memory: the kernel's copy faults. */
        Played p;
        assert_int_equal(play_kernel(RNDADDENTROPY, &user, 8 + 31, &p), -EFAULT);
        played_done(&p);
}

/* The caller rewrites its struct between the header round and the data round;
 * only the last delivery's own header counts. */
static void test_addentropy_header_changes(void **state) {
        PoolInfo user = { .entropy_count = 8, .buf_size = 16 };
        RndRequest r;

        PoolInfo grown = { .entropy_count = 8, .buf_size = 48 };
        assert_int_equal(decode_delivered(RNDADDENTROPY, &grown, 8 + 16, &r), -EFAULT);

        PoolInfo shrunk = { .entropy_count = 8, .buf_size = 4 };
        memset(shrunk.buf, 0x11, sizeof(shrunk.buf));
        uint8_t *in = deliver(&shrunk, 8 + 16);
        assert_int_equal(rndioctl_decode(RNDADDENTROPY, &user, in, 8 + 16, 0, &r), 0);
        assert_false(r.retry);
        assert_int_equal(r.size, 4);
        assert_ptr_equal(r.data, in + 8);
        free(in);

        PoolInfo raised = { .entropy_count = 8 * 16 + 8, .buf_size = 16 };
        assert_int_equal(decode_delivered(RNDADDENTROPY, &raised, 8 + 16, &r), -EINVAL);

        /* Grown from nothing after the header round: fetch again. */
        PoolInfo from_empty = { .entropy_count = 0, .buf_size = 24 };
        assert_int_equal(decode_delivered(RNDADDENTROPY, &from_empty, 8, &r), 0);
        assert_true(r.retry);
        assert_int_equal(r.in_count, 1);
        assert_int_equal(r.in_iov[0].iov_len, 8 + 24);
}

/* Arbitrary deliveries: either refused, or a request whose data lies inside
 * what was delivered and whose credit never exceeds 8 bits per byte. */
static void test_addentropy_random_deliveries(void **state) {
        uint32_t seed = 0x1234567;
        uint8_t src[8 + 96];
        for (unsigned iter = 0; iter < 20000; iter++) {
                for (size_t i = 0; i < sizeof(src); i++) {
                        seed = seed * 1664525U + 1013904223U;
                        src[i] = (uint8_t) (seed >> 24);
                }
                /* Keep some headers plausible so the accept path is hit. */
                if (iter % 2) {
                        int32_t hdr[2] = { (int32_t) (seed % 300), (int32_t) ((seed >> 9) % 100) };
                        memcpy(src, hdr, sizeof(hdr));
                }
                size_t n = (seed >> 16) % (sizeof(src) + 1);
                uint8_t *in = deliver(src, n);
                RndRequest r;
                int k = rndioctl_decode(RNDADDENTROPY, src, n ? in : NULL, n, 0, &r);
                assert_true(k == 0 || k == -EINVAL || k == -EFAULT);
                if (k == 0 && !r.retry) {
                        assert_true(r.data >= in + 8);
                        assert_true(r.data + r.size <= in + n);
                        assert_true(r.count >= 0);
                        assert_true((int64_t) r.count <= 8 * (int64_t) r.size);
                }
                if (k == 0 && r.retry)
                        assert_true(r.in_iov[0].iov_len > n);
                free(in);
        }
}

static void test_no_data_ops(void **state) {
        const unsigned cmds[] = { RNDZAPENTCNT, RNDCLEARPOOL, RNDRESEEDCRNG };
        const RndOp ops[] = { RND_OP_ZAPENTCNT, RND_OP_CLEARPOOL, RND_OP_RESEEDCRNG };
        for (size_t i = 0; i < 3; i++) {
                Played p;
                assert_int_equal(play_kernel(cmds[i], NULL, 0, &p), 0);
                assert_int_equal(p.rounds, 1);
                assert_int_equal(p.req.op, ops[i]);
                assert_int_equal(p.req.in_count, 0);
                assert_int_equal(p.req.out_count, 0);
                played_done(&p);
        }
}

static void test_refused_ops(void **state) {
        int32_t user[2] = { 0, 0 };
        RndRequest r, untouched;
        memset(&r, 0x3c, sizeof(r));
        memcpy(&untouched, &r, sizeof(r));

        assert_int_equal(rndioctl_decode(RNDGETPOOL, user, NULL, 0, 0, &r), -EINVAL);
        assert_int_equal(rndioctl_decode(RNDGETPOOL, user, user, sizeof(user), 8, &r), -EINVAL);
        assert_int_equal(rndioctl_decode(0x1234, user, NULL, 0, 0, &r), -ENOTTY);
        assert_int_equal(rndioctl_decode(TCGETS, user, NULL, 0, 0, &r), -ENOTTY);
        assert_int_equal(rndioctl_decode(_IOW('R', 0x03, int), user, user, 8, 0, &r), -ENOTTY);
        assert_memory_equal(&r, &untouched, sizeof(r));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_op_table),
                cmocka_unit_test(test_privilege_table),
                cmocka_unit_test(test_getentcnt),
                cmocka_unit_test(test_addtoentcnt),
                cmocka_unit_test(test_addtoentcnt_malformed),
                cmocka_unit_test(test_addentropy),
                cmocka_unit_test(test_addentropy_empty),
                cmocka_unit_test(test_addentropy_max_buf),
                cmocka_unit_test(test_addentropy_malformed_header),
                cmocka_unit_test(test_addentropy_truncated),
                cmocka_unit_test(test_addentropy_header_changes),
                cmocka_unit_test(test_addentropy_random_deliveries),
                cmocka_unit_test(test_no_data_ops),
                cmocka_unit_test(test_refused_ops),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
