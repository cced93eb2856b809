/* test-truerandom.c - libtruerandom's policies and error paths, with
 * read(2), open(2) (open64) and ioctl(2) wrapped (-Wl,--wrap): each test scripts
 * what the "device" answers and checks what the library asked of it.
 *   - unbuffered: every read asks for exactly what the caller still wants;
 *   - BLOCK returns a short read as it is, NONBLOCK sets O_NONBLOCK for
 *     its read (and BLOCK clears it again) and surfaces EAGAIN, ALL loops
 *     to n and wipes the buffer when it fails;
 *   - EINTR is retried under every policy;
 *   - one reopen, of the same path onto the same descriptor number, for
 *     each of the errors a dead or stopping daemon gives, never two, and
 *     none for other errors;
 *   - RNDGETENTCNT, and -errno without errno games.
 * The descriptors are real (/dev/null), so close, dup3 and fcntl run for
 * real and the O_NONBLOCK a read saw is read back with F_GETFL. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#define ELEMS(a) (sizeof(a) / sizeof((a)[0]))

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <fcntl.h>
#include <linux/random.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "truerandom.h"

#define STEPS_MAX 16

/* What the next read() answers: k > 0 bytes (of value fill), 0 (end of
 * file), or -e (fails with e). */
typedef struct Step {
        ssize_t k;
        uint8_t fill;
} Step;

static struct {
        Step steps[STEPS_MAX];
        size_t n_steps, next;
        size_t asked[STEPS_MAX];      /* the n of each read() */
        bool nonblock[STEPS_MAX];     /* O_NONBLOCK during each read() */
        int fd[STEPS_MAX];            /* the descriptor of each read() */
        unsigned opens;
        int open_error;               /* > 0: open() fails with it */
        unsigned open_fail_after;     /* opens that succeed before open_error applies */
        char path[256];
        int open_flags;
        int ioctl_result;             /* >= 0: the count; < 0: fails with -it */
        int ioctl_errors[4];          /* fail with these first, in order */
        unsigned ioctls;
        unsigned long ioctl_request;
} fake;

/* The build has _FILE_OFFSET_BITS=64 (meson's default): open() is open64. */
int __real_open64(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);
ssize_t __wrap_read(int fd, void *buf, size_t n);
int __wrap_ioctl(int fd, unsigned long request, ...);

int __wrap_open64(const char *path, int flags, ...) {
        fake.opens++;
        snprintf(fake.path, sizeof(fake.path), "%s", path);
        fake.open_flags = flags;
        if (fake.open_error > 0 && fake.opens > fake.open_fail_after) {
                errno = fake.open_error;
                return -1;
        }
        return __real_open64("/dev/null", O_RDONLY | O_CLOEXEC);
}

ssize_t __wrap_read(int fd, void *buf, size_t n) {
        size_t i = fake.next++;
        Step s;

        assert_true(i < fake.n_steps);
        s = fake.steps[i];
        fake.asked[i] = n;
        fake.fd[i] = fd;
        fake.nonblock[i] = (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0;
        if (s.k < 0) {
                errno = (int) -s.k;
                return -1;
        }
        assert_true((size_t) s.k <= n);
        memset(buf, s.fill, (size_t) s.k);
        return s.k;
}

int __wrap_ioctl(int fd, unsigned long request, ...) {
        unsigned i = fake.ioctls++;
        va_list ap;
        int *arg;

        fake.ioctl_request = request;
        va_start(ap, request);
        arg = va_arg(ap, int *);
        va_end(ap);
        if (i < ELEMS(fake.ioctl_errors) && fake.ioctl_errors[i] > 0) {
                errno = fake.ioctl_errors[i];
                return -1;
        }
        if (fake.ioctl_result < 0) {
                errno = -fake.ioctl_result;
                return -1;
        }
        *arg = fake.ioctl_result;
        return 0;
}

static void script(const Step *steps, size_t n) {
        assert_true(n <= STEPS_MAX);
        memcpy(fake.steps, steps, n * sizeof(*steps));
        fake.n_steps = n;
}

static int setup(void **state) {
        struct truerandom *t = NULL;

        memset(&fake, 0, sizeof(fake));
        assert_int_equal(truerandom_open("/dev/test-truerandom", &t), 0);
        fake.opens = 0;
        *state = t;
        return 0;
}

static int teardown(void **state) {
        truerandom_close(*state);
        /* Every scripted answer was asked for: no step left unused. */
        assert_int_equal(fake.next, fake.n_steps);
        return 0;
}

static void test_open_default_path(void **state) {
        struct truerandom *t = NULL;

        memset(&fake, 0, sizeof(fake));
        assert_int_equal(truerandom_open(NULL, &t), 0);
        assert_string_equal(fake.path, TRUERANDOM_DEFAULT_PATH);
        assert_int_equal(fake.open_flags & O_ACCMODE, O_RDONLY);
        assert_true(fake.open_flags & O_CLOEXEC);
        assert_true(truerandom_fd(t) >= 0);
        assert_null(truerandom_close(t));
        assert_null(truerandom_close(NULL));
}

static void test_open_error(void **state) {
        struct truerandom *t = (struct truerandom *) 0x1;

        memset(&fake, 0, sizeof(fake));
        fake.open_error = EACCES;
        errno = 0;
        assert_int_equal(truerandom_open(NULL, &t), -EACCES);
        /* Written only on success. */
        assert_ptr_equal(t, (struct truerandom *) 0x1);
        assert_int_equal(truerandom_open(NULL, NULL), -EINVAL);
}

static void test_block_short_read(void **state) {
        uint8_t buf[64] = { 0 };
        Step s[] = { { 5, 0xaa } };

        script(s, ELEMS(s));
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_BLOCK), 5);
        /* Unbuffered: asked for exactly the caller's n, blocking. */
        assert_int_equal(fake.asked[0], sizeof(buf));
        assert_false(fake.nonblock[0]);
        assert_int_equal(buf[4], 0xaa);
        assert_int_equal(buf[5], 0);
}

static void test_block_eintr(void **state) {
        uint8_t buf[32];
        Step s[] = { { -EINTR, 0 }, { -EINTR, 0 }, { 32, 1 } };

        script(s, ELEMS(s));
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_BLOCK), 32);
        assert_int_equal(fake.asked[2], 32);
}

static void test_nonblock_eagain(void **state) {
        uint8_t buf[32];
        Step s[] = { { -EAGAIN, 0 }, { -EINTR, 0 }, { 32, 7 }, { 16, 8 } };

        script(s, ELEMS(s));
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_NONBLOCK), -EAGAIN);
        assert_true(fake.nonblock[0]);
        /* EINTR is still retried; a non-blocking read returns what it got. */
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_NONBLOCK), 32);
        assert_true(fake.nonblock[2]);
        /* A blocking read after them waits again. */
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_BLOCK), 16);
        assert_false(fake.nonblock[3]);
}

static void test_block_never_eagain_loop(void **state) {
        uint8_t buf[32];
        /* EAGAIN on a blocking read (a descriptor someone else set
         * non-blocking) is an error to report, not a spin. */
        Step s[] = { { -EAGAIN, 0 } };

        script(s, ELEMS(s));
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_BLOCK), -EAGAIN);
}

static void test_all_loops_unbuffered(void **state) {
        uint8_t buf[100];
        Step s[] = { { 32, 1 }, { -EINTR, 0 }, { 1, 2 }, { 40, 3 }, { 27, 4 } };

        script(s, ELEMS(s));
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_ALL), 100);
        /* Each read asked for the remainder, never more. */
        assert_int_equal(fake.asked[0], 100);
        assert_int_equal(fake.asked[1], 68);
        assert_int_equal(fake.asked[2], 68);
        assert_int_equal(fake.asked[3], 67);
        assert_int_equal(fake.asked[4], 27);
        assert_int_equal(buf[31], 1);
        assert_int_equal(buf[32], 2);
        assert_int_equal(buf[33], 3);
        assert_int_equal(buf[99], 4);
        for (size_t i = 0; i < ELEMS(s); i++)
                assert_false(fake.nonblock[i]);
}

static void test_all_failure_wipes(void **state) {
        uint8_t buf[64];
        Step s[] = { { 32, 0xff }, { 0, 0 } };

        script(s, ELEMS(s));
        memset(buf, 0x55, sizeof(buf));
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_ALL), -ENODATA);
        for (size_t i = 0; i < sizeof(buf); i++)
                assert_int_equal(buf[i], 0);
}

static void test_all_after_nonblock_blocks(void **state) {
        uint8_t buf[32];
        Step s[] = { { -EAGAIN, 0 }, { 32, 1 } };

        script(s, ELEMS(s));
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_NONBLOCK), -EAGAIN);
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_ALL), 32);
        assert_false(fake.nonblock[1]);
}

static void test_eof_block(void **state) {
        uint8_t buf[32];
        Step s[] = { { 0, 0 } };

        script(s, ELEMS(s));
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_BLOCK), -ENODATA);
}

/* Each error of a daemon gone or going: one reopen of the same path onto
 * the same descriptor, then the read is asked again and succeeds. */
static void test_reopen_once(void **state) {
        static const int gone[] = { ECONNABORTED, ENOTCONN, ENODEV, EIO };
        int fd = truerandom_fd(*state);

        for (size_t i = 0; i < ELEMS(gone); i++) {
                uint8_t buf[32];
                Step s[] = { { -gone[i], 0 }, { 32, 9 } };

                fake.next = fake.opens = 0;
                script(s, ELEMS(s));
                assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_ALL), 32);
                assert_int_equal(fake.opens, 1);
                assert_string_equal(fake.path, "/dev/test-truerandom");
                assert_int_equal(fake.fd[1], fd);
                assert_int_equal(truerandom_fd(*state), fd);
        }
}

static void test_reopen_not_twice(void **state) {
        uint8_t buf[64];
        Step s[] = { { 32, 1 }, { -ECONNABORTED, 0 }, { -ENOTCONN, 0 } };

        script(s, ELEMS(s));
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_ALL), -ENOTCONN);
        assert_int_equal(fake.opens, 1);
}

static void test_reopen_fails(void **state) {
        uint8_t buf[32];
        Step s[] = { { -ECONNABORTED, 0 }, { -ENOTCONN, 0 }, { 32, 1 } };

        script(s, ELEMS(s));
        fake.open_error = ENOENT;
        /* The device is not back: the reopen's error says so. */
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_BLOCK), -ENOENT);
        assert_int_equal(fake.opens, 1);
        /* The next call tries again, once, and finds the daemon back. */
        fake.open_error = 0;
        assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_BLOCK), 32);
        assert_int_equal(fake.opens, 2);
}

static void test_no_reopen_other_errors(void **state) {
        static const int other[] = { EACCES, EFAULT, EINVAL, EBADF };

        for (size_t i = 0; i < ELEMS(other); i++) {
                uint8_t buf[32];
                Step s[] = { { -other[i], 0 } };

                fake.next = 0;
                script(s, ELEMS(s));
                assert_int_equal(truerandom_read(*state, buf, sizeof(buf), TRUERANDOM_READ_ALL), -other[i]);
        }
        assert_int_equal(fake.opens, 0);
}

static void test_bad_arguments(void **state) {
        uint8_t buf[8];

        assert_int_equal(truerandom_read(NULL, buf, 8, TRUERANDOM_READ_BLOCK), -EINVAL);
        assert_int_equal(truerandom_read(*state, NULL, 8, TRUERANDOM_READ_BLOCK), -EINVAL);
        assert_int_equal(truerandom_read(*state, buf, 8, (enum truerandom_policy) 3), -EINVAL);
        assert_int_equal(truerandom_read(*state, buf, (size_t) SSIZE_MAX + 1, TRUERANDOM_READ_BLOCK), -EINVAL);
        /* Nothing asked, nothing read: no read(2) at all. */
        assert_int_equal(truerandom_read(*state, buf, 0, TRUERANDOM_READ_ALL), 0);
        assert_int_equal(truerandom_bits_ready(NULL), -EINVAL);
        assert_int_equal(truerandom_fd(NULL), -EINVAL);
}

static void test_bits_ready(void **state) {
        fake.ioctl_result = 512;
        assert_int_equal(truerandom_bits_ready(*state), 512);
        assert_int_equal(fake.ioctl_request, RNDGETENTCNT);
        fake.ioctl_result = -ENOTTY;
        assert_int_equal(truerandom_bits_ready(*state), -ENOTTY);
        assert_int_equal(fake.opens, 0);
}

static void test_bits_ready_eintr_and_reopen(void **state) {
        fake.ioctl_result = 256;
        fake.ioctl_errors[0] = EINTR;
        fake.ioctl_errors[1] = ECONNABORTED;
        assert_int_equal(truerandom_bits_ready(*state), 256);
        assert_int_equal(fake.ioctls, 3);
        assert_int_equal(fake.opens, 1);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_open_default_path),
                cmocka_unit_test(test_open_error),
                cmocka_unit_test_setup_teardown(test_block_short_read, setup, teardown),
                cmocka_unit_test_setup_teardown(test_block_eintr, setup, teardown),
                cmocka_unit_test_setup_teardown(test_nonblock_eagain, setup, teardown),
                cmocka_unit_test_setup_teardown(test_block_never_eagain_loop, setup, teardown),
                cmocka_unit_test_setup_teardown(test_all_loops_unbuffered, setup, teardown),
                cmocka_unit_test_setup_teardown(test_all_failure_wipes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_all_after_nonblock_blocks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_eof_block, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reopen_once, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reopen_not_twice, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reopen_fails, setup, teardown),
                cmocka_unit_test_setup_teardown(test_no_reopen_other_errors, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bits_ready, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bits_ready_eintr_and_reopen, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
