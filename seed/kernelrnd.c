/* kernelrnd.c - the kernel's /dev/random past a bind mount (see
 * kernelrnd.h). Every rand_pool_info copy is erased after the ioctl. */
#include "kernelrnd.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/cleanup.h"

/* Opens the path; 1 if it is the kernel's device, 0 if it is something
 * else (and closes it), -errno. */
static int open_checked(int *ret_fd) {
        _cleanup_close_ int fd = open(KERNEL_RANDOM_PATH, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        struct stat st;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(KERNEL_RANDOM_MAJOR, KERNEL_RANDOM_MINOR))
                return 0;
        *ret_fd = TAKE_FD(fd);
        return 1;
}

int kernel_random_open(int *ret_fd, unsigned *ret_unmounted) {
        unsigned n = 0;
        int r;

        r = open_checked(ret_fd);
        if (r != 0) {
                if (r > 0)
                        *ret_unmounted = 0;
                return r < 0 ? r : 0;
        }
        /* Something covers the kernel's node: a namespace of our own, in
         * which an unmount cannot propagate to anybody else's. */
        if (unshare(CLONE_NEWNS) < 0)
                return -errno;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        while (r == 0) {
                if (n == KERNEL_RANDOM_UNMOUNTS_MAX)
                        return -ENODEV;
                /* EINVAL: not a mount point, yet not 1:8 either. */
                if (umount2(KERNEL_RANDOM_PATH, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
                        return errno == EINVAL ? -ENODEV : -errno;
                n++;
                r = open_checked(ret_fd);
        }
        if (r < 0)
                return r;
        *ret_unmounted = n;
        return 0;
}

int kernel_random_add(int fd, const uint8_t *buf, size_t n, unsigned bits) {
        struct rand_pool_info *info;
        int r = 0;

        if (n == 0 || n > INT32_MAX / 8 || bits > 8 * n)
                return -EINVAL;
        info = malloc(sizeof(*info) + n);
        if (!info)
                return -ENOMEM;
        info->entropy_count = (int) bits;
        info->buf_size = (int) n;
        memcpy(info->buf, buf, n);
        if (ioctl(fd, RNDADDENTROPY, info) < 0)
                r = -errno;
        explicit_bzero(info, sizeof(*info) + n);
        free(info);
        return r;
}

int kernel_random_reseed(int fd) {
        return ioctl(fd, RNDRESEEDCRNG) < 0 ? -errno : 0;
}
