/* read-truerandom.c - N bytes (default 32) of /dev/truerandom, in hex,
 * through libtruerandom: all or nothing, nothing read ahead.
 *
 *   cc read-truerandom.c $(pkg-config --cflags --libs truerandom)
 *   ./a.out [BYTES [DEVICE]]
 *
 * Exit status 0, or 1 with the reason on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <truerandom.h>

int main(int argc, char **argv) {
        size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 32;
        const char *device = argc > 2 ? argv[2] : NULL; /* NULL: /dev/truerandom */
        struct truerandom *t = NULL;
        unsigned char *buf;
        ssize_t k;
        int r;

        if (n == 0 || n > 1 << 20 || !(buf = malloc(n))) {
                fprintf(stderr, "read-truerandom: bad size\n");
                return 1;
        }
        r = truerandom_open(device, &t);
        if (r < 0) {
                /* -EACCES: not in group truerandom; -ENOENT: no daemon. */
                fprintf(stderr, "read-truerandom: open: %s\n", strerror(-r));
                free(buf);
                return 1;
        }
        /* Waits as long as it takes; EINTR and one daemon restart are
         * handled inside. */
        k = truerandom_read(t, buf, n, TRUERANDOM_READ_ALL);
        truerandom_close(t);
        if (k < 0) {
                fprintf(stderr, "read-truerandom: read: %s\n", strerror((int) -k));
                free(buf);
                return 1;
        }
        for (size_t i = 0; i < n; i++)
                printf("%02x", buf[i]);
        putchar('\n');
        free(buf);
        return 0;
}
