/* test-kernelrnd.c - reaching the kernel's 1:8 and what is given to it,
 * with open(2) (open64), unshare, mount, umount2 and ioctl wrapped:
 *   - /dev/random already 1:8: opened as it is, no namespace;
 *   - covered by one or two mounts (truerandomd's drop-in): a namespace
 *     of our own, made private before anything is unmounted (an unmount
 *     there never reaches the host), then each mount taken off until the
 *     path is 1:8; covered by something that is not a mount, or too many
 *     mounts: -ENODEV; no CAP_SYS_ADMIN: -EPERM;
 *   - RNDADDENTROPY carries the bytes and the credit asked (never more
 *     than 8 bits a byte); RNDRESEEDCRNG; the kernel's errors come back.
 * "Covered" is played by opening /dev/null (1:3) for the path, the
 * kernel's device by the real /dev/random (1:8). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include "seed/kernelrnd.h"

static struct {
        unsigned covered;     /* mounts over the path */
        bool not_a_mount;     /* covered, but umount2 says EINVAL */
        int unshare_error;
        unsigned unshares, mounts, umounts, opens;
        int unshare_flags;
        unsigned long mount_flags;
        char mount_target[64], umount_target[64];
        int umount_flags, open_flags;
        bool private_before_umount;
        int ioctl_error;
        unsigned long ioctl_request;
        int entropy_count, buf_size;
        uint8_t buf[64];
} fake;

int __real_open64(const char *path, int flags, ...);
int __wrap_open64(const char *path, int flags, ...);
int __wrap_unshare(int flags);
int __wrap_mount(const char *src, const char *target, const char *type, unsigned long flags, const void *data);
int __wrap_umount2(const char *target, int flags);
int __wrap_ioctl(int fd, unsigned long request, ...);

int __wrap_open64(const char *path, int flags, ...) {
        fake.opens++;
        fake.open_flags = flags;
        assert_string_equal(path, "/dev/random");
        return __real_open64(fake.covered > fake.umounts ? "/dev/null" : "/dev/random", flags);
}

int __wrap_unshare(int flags) {
        fake.unshares++;
        fake.unshare_flags = flags;
        if (fake.unshare_error) {
                errno = fake.unshare_error;
                return -1;
        }
        return 0;
}

int __wrap_mount(const char *src, const char *target, const char *type, unsigned long flags, const void *data) {
        fake.mounts++;
        fake.mount_flags = flags;
        snprintf(fake.mount_target, sizeof(fake.mount_target), "%s", target);
        return 0;
}

int __wrap_umount2(const char *target, int flags) {
        if (fake.umounts == 0)
                fake.private_before_umount = fake.mounts > 0 && (fake.mount_flags & MS_PRIVATE);
        snprintf(fake.umount_target, sizeof(fake.umount_target), "%s", target);
        fake.umount_flags = flags;
        if (fake.not_a_mount) {
                errno = EINVAL;
                return -1;
        }
        fake.umounts++;
        return 0;
}

int __wrap_ioctl(int fd, unsigned long request, ...) {
        va_list ap;

        fake.ioctl_request = request;
        if (request == RNDADDENTROPY) {
                const struct rand_pool_info *info;

                va_start(ap, request);
                info = va_arg(ap, const struct rand_pool_info *);
                va_end(ap);
                fake.entropy_count = info->entropy_count;
                fake.buf_size = info->buf_size;
                memcpy(fake.buf, info->buf, (size_t) info->buf_size);
        }
        if (fake.ioctl_error) {
                errno = fake.ioctl_error;
                return -1;
        }
        return 0;
}

static int reset(void **state) {
        memset(&fake, 0, sizeof(fake));
        return 0;
}

static void test_not_covered(void **state) {
        unsigned unmounted = 99;
        int fd = -1;

        assert_int_equal(kernel_random_open(&fd, &unmounted), 0);
        assert_true(fd >= 0);
        assert_int_equal(unmounted, 0);
        assert_int_equal(fake.open_flags & O_ACCMODE, O_WRONLY);
        assert_int_equal(fake.unshares, 0);
        assert_int_equal(fake.mounts, 0);
        close(fd);
}

static void test_covered(void **state) {
        for (unsigned layers = 1; layers <= 2; layers++) {
                unsigned unmounted = 0;
                int fd = -1;

                reset(state);
                fake.covered = layers;
                assert_int_equal(kernel_random_open(&fd, &unmounted), 0);
                assert_true(fd >= 0);
                assert_int_equal(unmounted, layers);
                assert_int_equal(fake.unshares, 1);
                assert_int_equal(fake.unshare_flags, CLONE_NEWNS);
                assert_string_equal(fake.mount_target, "/");
                assert_int_equal(fake.mount_flags, MS_REC | MS_PRIVATE);
                assert_true(fake.private_before_umount);
                assert_string_equal(fake.umount_target, "/dev/random");
                assert_true(fake.umount_flags & MNT_DETACH);
                assert_int_equal(fake.opens, layers + 1);
                close(fd);
        }
}

static void test_cannot_uncover(void **state) {
        unsigned unmounted = 99;
        int fd = -1;

        fake.covered = 1;
        fake.not_a_mount = true;
        assert_int_equal(kernel_random_open(&fd, &unmounted), -ENODEV);
        reset(state);
        fake.covered = KERNEL_RANDOM_UNMOUNTS_MAX + 1;
        assert_int_equal(kernel_random_open(&fd, &unmounted), -ENODEV);
        assert_int_equal(fake.umounts, KERNEL_RANDOM_UNMOUNTS_MAX);
        reset(state);
        fake.covered = 1;
        fake.unshare_error = EPERM;
        assert_int_equal(kernel_random_open(&fd, &unmounted), -EPERM);
        assert_int_equal(fake.umounts, 0);
        assert_int_equal(fd, -1);
        assert_int_equal(unmounted, 99);
}

static void test_add(void **state) {
        uint8_t block[32];

        for (size_t i = 0; i < sizeof(block); i++)
                block[i] = (uint8_t) (0xa0 + i);
        assert_int_equal(kernel_random_add(5, block, sizeof(block), 256), 0);
        assert_int_equal(fake.ioctl_request, RNDADDENTROPY);
        assert_int_equal(fake.entropy_count, 256);
        assert_int_equal(fake.buf_size, 32);
        assert_memory_equal(fake.buf, block, sizeof(block));
        /* Never more credit than 8 bits a byte; nothing asked of the kernel. */
        fake.ioctl_request = 0;
        assert_int_equal(kernel_random_add(5, block, sizeof(block), 257), -EINVAL);
        assert_int_equal(kernel_random_add(5, block, 0, 0), -EINVAL);
        assert_int_equal(fake.ioctl_request, 0);
        fake.ioctl_error = EPERM;
        assert_int_equal(kernel_random_add(5, block, sizeof(block), 256), -EPERM);
}

static void test_reseed(void **state) {
        assert_int_equal(kernel_random_reseed(5), 0);
        assert_int_equal(fake.ioctl_request, RNDRESEEDCRNG);
        fake.ioctl_error = ENODATA;
        assert_int_equal(kernel_random_reseed(5), -ENODATA);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_not_covered, reset),
                cmocka_unit_test_setup(test_covered, reset),
                cmocka_unit_test_setup(test_cannot_uncover, reset),
                cmocka_unit_test_setup(test_add, reset),
                cmocka_unit_test_setup(test_reseed, reset),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
