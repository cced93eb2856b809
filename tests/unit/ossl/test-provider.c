/* test-provider.c - the OpenSSL provider through OpenSSL's own API, with
 * openssl.cnf files that point it at FIFOs this test feeds:
 *   - RAND_bytes() in the default library context (OPENSSL_CONF) seeds
 *     its primary DRBG from the device: 64 bytes leave the FIFO, no more
 *     (the DRBG asks 384 bits, entropy input and nonce in one request as
 *     SP 800-90A 9.1 allows, 48 bytes, which the provider rounds up to two
 *     whole blocks: the device would erase the rest of the second anyway);
 *     a reseed with prediction resistance draws one more block;
 *   - the seed source read directly gives the device's bytes, in order;
 *   - fail closed: a missing device, or a writer that left before the
 *     seed was whole, makes RAND_bytes() fail, again and again, with an
 *     error that names the device and the reason; never a silent seed
 *     from the operating system.
 * The module is the one built (TRUERANDOM_PROVIDER, its path). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

static char dir[64];

/* Writes DIR/NAME.cnf pointing the provider at device; returns its path. */
static const char *write_config(const char *name, const char *device) {
        static char path[6][128];
        static unsigned next;
        char *p = path[next++ % 6];
        FILE *f;

        snprintf(p, sizeof(path[0]), "%s/%s.cnf", dir, name);
        f = fopen(p, "w");
        assert_non_null(f);
        fprintf(f,
                "openssl_conf = openssl_init\n"
                "[openssl_init]\nproviders = provider_sect\nrandom = random_sect\n"
                "[provider_sect]\ndefault = default_sect\ntruerandom = truerandom_sect\n"
                "[default_sect]\nactivate = 1\n"
                "[truerandom_sect]\nmodule = %s\ndevice = %s\nactivate = 1\n"
                "[random_sect]\nseed = TRUERANDOM\nseed_properties = provider=truerandom\n",
                TRUERANDOM_PROVIDER, device);
        assert_int_equal(fclose(f), 0);
        return p;
}

static const char *make_fifo(const char *name) {
        static char path[4][128];
        static unsigned next;
        char *p = path[next++ % 4];

        snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
        assert_int_equal(mkfifo(p, 0600), 0);
        return p;
}

/* What is left in the FIFO, drained without waiting. */
static size_t drain(int fd) {
        uint8_t buf[4096];
        size_t n = 0;
        ssize_t k;

        assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
        while ((k = read(fd, buf, sizeof(buf))) > 0)
                n += (size_t) k;
        return n;
}

/* The error queue as text, emptied. */
static char *errors(void) {
        static char text[4096];
        BIO *b = BIO_new(BIO_s_mem());
        int n;

        assert_non_null(b);
        ERR_print_errors(b);
        n = BIO_read(b, text, sizeof(text) - 1);
        text[n > 0 ? n : 0] = '\0';
        BIO_free(b);
        return text;
}

static OSSL_LIB_CTX *context(const char *config) {
        OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();

        assert_non_null(ctx);
        assert_int_equal(OSSL_LIB_CTX_load_config(ctx, config), 1);
        return ctx;
}

static const char *default_fifo; /* the device of OPENSSL_CONF */
static int default_writer = -1;

static void test_rand_bytes_seeds_from_device(void **state) {
        uint8_t buf[64], block[4096];

        for (size_t i = 0; i < sizeof(block); i++)
                block[i] = (uint8_t) i;
        assert_int_equal(write(default_writer, block, sizeof(block)), (ssize_t) sizeof(block));
        assert_int_equal(RAND_bytes(buf, sizeof(buf)), 1);
        assert_int_equal(drain(default_writer), sizeof(block) - 64);
        assert_int_equal(fcntl(default_writer, F_SETFL, 0), 0);

        /* A reseed with prediction resistance takes one fresh block. */
        assert_int_equal(write(default_writer, block, sizeof(block)), (ssize_t) sizeof(block));
        assert_int_equal(EVP_RAND_reseed(RAND_get0_primary(NULL), 1, NULL, 0, NULL, 0), 1);
        assert_int_equal(drain(default_writer), sizeof(block) - 32);
        assert_int_equal(fcntl(default_writer, F_SETFL, 0), 0);
        assert_int_equal(RAND_bytes(buf, sizeof(buf)), 1);
}

static void test_generate_gives_device_bytes(void **state) {
        const char *fifo = make_fifo("direct");
        OSSL_LIB_CTX *ctx = context(write_config("direct", fifo));
        int w = open(fifo, O_RDWR | O_CLOEXEC);
        EVP_RAND *rand;
        EVP_RAND_CTX *seed;
        uint8_t in[100], out[100];

        assert_true(w >= 0);
        for (size_t i = 0; i < sizeof(in); i++)
                in[i] = (uint8_t) (0x80 ^ i);
        assert_int_equal(write(w, in, sizeof(in)), (ssize_t) sizeof(in));
        rand = EVP_RAND_fetch(ctx, "TRUERANDOM", "provider=truerandom");
        assert_non_null(rand);
        seed = EVP_RAND_CTX_new(rand, NULL);
        assert_non_null(seed);
        assert_int_equal(EVP_RAND_instantiate(seed, 0, 0, NULL, 0, NULL), 1);
        assert_int_equal(EVP_RAND_get_state(seed), EVP_RAND_STATE_READY);
        assert_int_equal(EVP_RAND_get_strength(seed), 1024);
        assert_int_equal(EVP_RAND_generate(seed, out, sizeof(out), 0, 0, NULL, 0), 1);
        assert_memory_equal(in, out, sizeof(in));
        assert_int_equal(drain(w), 0);
        EVP_RAND_CTX_free(seed);
        EVP_RAND_free(rand);
        OSSL_LIB_CTX_free(ctx);
        close(w);
}

static void test_device_missing(void **state) {
        OSSL_LIB_CTX *ctx = context(write_config("missing", "/nonexistent/truerandom"));
        uint8_t buf[32];
        const char *e;

        ERR_clear_error();
        for (int i = 0; i < 2; i++) {
                assert_int_not_equal(RAND_bytes_ex(ctx, buf, sizeof(buf), 0), 1);
                e = errors();
                assert_non_null(strstr(e, "truerandom: cannot open /nonexistent/truerandom: No such file or directory "
                                          "(is truerandomd running?)"));
        }
        OSSL_LIB_CTX_free(ctx);
}

static void *write_and_leave(void *arg) {
        int fd = open(arg, O_WRONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, "0123456789", 10), 10);
        close(fd);
        return NULL;
}

static void test_writer_gone(void **state) {
        const char *fifo = make_fifo("gone");
        OSSL_LIB_CTX *ctx = context(write_config("gone", fifo));
        uint8_t buf[32];
        const char *e;
        pthread_t th;

        ERR_clear_error();
        assert_int_equal(pthread_create(&th, NULL, write_and_leave, (void *) fifo), 0);
        assert_int_not_equal(RAND_bytes_ex(ctx, buf, sizeof(buf), 0), 1);
        assert_int_equal(pthread_join(th, NULL), 0);
        e = errors();
        assert_non_null(strstr(e, "truerandom: cannot read 64 bytes from "));
        assert_non_null(strstr(e, "/gone: No data available"));
        OSSL_LIB_CTX_free(ctx);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rand_bytes_seeds_from_device),
                cmocka_unit_test(test_generate_gives_device_bytes),
                cmocka_unit_test(test_device_missing),
                cmocka_unit_test(test_writer_gone),
        };
        int r;

        snprintf(dir, sizeof(dir), "/tmp/test-provider-XXXXXX");
        if (!mkdtemp(dir))
                return 1;
        /* Before any call into OpenSSL: the default context reads it once. */
        default_fifo = make_fifo("default");
        default_writer = open(default_fifo, O_RDWR | O_CLOEXEC);
        if (default_writer < 0 || setenv("OPENSSL_CONF", write_config("default", default_fifo), 1) < 0)
                return 1;
        r = cmocka_run_group_tests(tests, NULL, NULL);
        close(default_writer);
        return r;
}
