/* fdio.h - the whole of a buffer to a file descriptor, and the whole of
 * a file from one, through short writes and reads and EINTR.
 * Flow: state file, captures, evidence -> [fdio] -> files. */
#pragma once

#include <stddef.h>

/* 0 or -errno. */
int fd_write_all(int fd, const void *buf, size_t n);

/* Everything fd reads until its end, at most max bytes, into *ret
 * (malloc'd, with a NUL after the n bytes read, so text reads as a
 * string). 0, -EFBIG past max, -ENOMEM or -errno. */
int fd_read_all(int fd, size_t max, char **ret, size_t *ret_n);
