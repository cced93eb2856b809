/* truerandom.h - read /dev/truerandom without wasting it.
 *
 * libtruerandom is the client side of truerandomd's full-entropy device
 * (truerandom(4)): every 32-byte block there is served once, so a reader
 * that reads ahead (stdio, buffered streams) burns blocks nobody gets.
 * This library never reads ahead: a read asks the device for what the
 * caller asked, no more. It retries EINTR, surfaces EAGAIN only when the
 * caller asked not to wait, and reopens the device once when the daemon
 * behind it was restarted. It logs nothing and never touches errno's
 * meaning: every function returns a value or -errno.
 *
 * Thread safety: one handle is one file; use one handle per thread, or
 * serialise calls on a shared one. Manual: truerandom_read(3). */
#ifndef TRUERANDOM_H
#define TRUERANDOM_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRUERANDOM_DEFAULT_PATH "/dev/truerandom"
/* The device serves 32-byte blocks; a read of part of one erases the rest
 * of it, so ask in multiples of this. */
#define TRUERANDOM_BLOCK_SIZE 32

/* How truerandom_read() waits. */
enum truerandom_policy {
        /* Wait until at least one byte is there, return 1..n bytes
         * (the device's own semantics: short reads are normal). */
        TRUERANDOM_READ_BLOCK = 0,
        /* Never wait: 1..n bytes, or -EAGAIN when nothing is ready. */
        TRUERANDOM_READ_NONBLOCK = 1,
        /* Wait until all n bytes are read (seeds, keys): n, or an error
         * after which the buffer holds zeros. */
        TRUERANDOM_READ_ALL = 2,
};

struct truerandom;

/* Opens path (NULL: TRUERANDOM_DEFAULT_PATH) for reading. 0 and *ret, or
 * -errno from open(2): -ENOENT (no daemon serving the device), -EACCES
 * (not root and not in the device's group), ... */
int truerandom_open(const char *path, struct truerandom **ret);

/* Closes the handle; takes NULL; returns NULL. */
struct truerandom *truerandom_close(struct truerandom *t);

/* Reads up to n bytes (n <= SSIZE_MAX) into buf by policy. Returns the
 * number of bytes read (0 only for n == 0), or -errno: -EAGAIN
 * (TRUERANDOM_READ_NONBLOCK, nothing ready), -ENODATA (the file ended:
 * not a device, e.g. a FIFO whose writer left), -EINVAL (bad arguments),
 * or what read(2) or the reopen's open(2) said. */
ssize_t truerandom_read(struct truerandom *t, void *buf, size_t n, enum truerandom_policy policy);

/* Bits of full-entropy output ready for readers now (RNDGETENTCNT),
 * >= 0, or -errno (-ENOTTY: not a truerandom device). */
int truerandom_bits_ready(struct truerandom *t);

/* The descriptor, for poll(2) (POLLIN: a block is ready). It stays the
 * same number across reopens. Do not read it or change its flags. */
int truerandom_fd(const struct truerandom *t);

#ifdef __cplusplus
}
#endif

#endif
