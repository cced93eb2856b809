/* fdio.c - see fdio.h. */
#include "fdio.h"

#include <errno.h>
#include <stdint.h>
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
