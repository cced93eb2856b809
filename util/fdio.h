/* fdio.h - the whole of a buffer to a file descriptor, through short
 * writes and EINTR. Flow: state file, captures -> [fdio] -> files. */
#pragma once

#include <stddef.h>

/* 0 or -errno. */
int fd_write_all(int fd, const void *buf, size_t n);
