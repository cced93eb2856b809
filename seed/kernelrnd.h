/* kernelrnd.h - the kernel's random device, 1:8, and the two ioctls the
 * seeder gives it: RNDADDENTROPY (bytes with their credit) and
 * RNDRESEEDCRNG. Both need CAP_SYS_ADMIN.
 *
 * Where truerandomd's drop-in is bind-mounted over /dev/random (the
 * dev-random.mount unit), the path names the daemon's CUSE device, whose
 * RNDADDENTROPY credits the daemon's CRNG, not the kernel's. So the
 * descriptor is checked (st_rdev must be 1:8); when it is something else,
 * the process moves to a mount namespace of its own (unshare CLONE_NEWNS,
 * everything made private so nothing propagates back to the host), takes
 * the mounts off /dev/random there (umount2 MNT_DETACH), and opens the
 * kernel's node beneath them. Why this way: a process with CAP_SYS_ADMIN
 * but without CAP_MKNOD cannot make a node of its own, /dev/char/1:8 is a
 * symbolic link to the covered path, and the unmount stays invisible to
 * every other process. Flow: feeder -> [kernelrnd] -> kernel CRNG. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define KERNEL_RANDOM_PATH "/dev/random"
#define KERNEL_RANDOM_MAJOR 1
#define KERNEL_RANDOM_MINOR 8
/* Stacked mounts taken off before giving up. */
#define KERNEL_RANDOM_UNMOUNTS_MAX 8

/* Opens the kernel's random device, write-only. 0 and *ret_fd (and
 * *ret_unmounted: how many mounts were taken off in a namespace of our
 * own, 0 if none were needed), or -errno: -ENODEV when the path is not
 * 1:8 and cannot be made so, -EPERM without CAP_SYS_ADMIN. */
int kernel_random_open(int *ret_fd, unsigned *ret_unmounted);

/* Mixes buf into the kernel's input pool with credit bits
 * (RNDADDENTROPY). 0 or -errno. */
int kernel_random_add(int fd, const uint8_t *buf, size_t n, unsigned bits);

/* Reseeds the kernel's CRNG from its input pool now (RNDRESEEDCRNG). */
int kernel_random_reseed(int fd);
