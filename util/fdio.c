/* fdio.c - see fdio.h. */
#include "fdio.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

int fd_write_all(int fd, const void *buf, size_t n) {
        const uint8_t *p = buf;

        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

int fd_read_all(int fd, size_t max, char **ret, size_t *ret_n) {
        size_t n = 0, size = 4096;
        char *buf = malloc(size), *grown;

        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t k;

                if (n + 1 == size) {
                        if (size > max) {
                                free(buf);
                                return -EFBIG;
                        }
                        grown = realloc(buf, size * 2);
                        if (!grown) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = grown;
                        size *= 2;
                }
                k = read(fd, buf + n, size - 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        k = -errno;
                        free(buf);
                        return (int) k;
                }
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        if (n > max) {
                free(buf);
                return -EFBIG;
        }
        buf[n] = '\0';
        *ret = buf;
        *ret_n = n;
        return 0;
}
