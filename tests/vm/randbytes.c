/* randbytes.c - RAND_bytes() as any program calls it, for the vm suite's
 * check 24: with OPENSSL_CONF naming the provider's file, the first call
 * seeds OpenSSL's DRBG from /dev/truerandom. Prints N random bytes in hex
 * and exits 0, or prints OpenSSL's errors and exits 1.
 *   randbytes N */
#include <stdio.h>
#include <stdlib.h>

#include <openssl/err.h>
#include <openssl/rand.h>

int main(int argc, char **argv) {
        unsigned char buf[1024];
        int n = argc == 2 ? atoi(argv[1]) : 32;

        if (n <= 0 || n > (int) sizeof(buf)) {
                fprintf(stderr, "usage: randbytes N (1..%zu)\n", sizeof(buf));
                return 2;
        }
        if (RAND_bytes(buf, n) != 1) {
                ERR_print_errors_fp(stderr);
                return 1;
        }
        for (int i = 0; i < n; i++)
                printf("%02x", buf[i]);
        putchar('\n');
        return 0;
}
