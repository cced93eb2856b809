/* test-truerandom-fifo.c - libtruerandom.so against a real FIFO, linked
 * as programs link it (the shared library through its version script):
 *   - no read-ahead: after a read of n, everything past n is still in the
 *     FIFO for the next reader;
 *   - ALL gathers n across the writer's separate writes; BLOCK returns
 *     what is there; NONBLOCK says EAGAIN on an empty FIFO, and a BLOCK
 *     read after it waits again (the writer's later bytes arrive);
 *   - the writer gone: ALL fails -ENODATA and wipes what it had;
 *   - RNDGETENTCNT on something that is not the device: -ENOTTY. */
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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "truerandom.h"

typedef struct Fixture {
        char dir[64];
        char path[96];
        int writer; /* O_RDWR: a writer, so the library's open never waits */
} Fixture;

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(*f));

        assert_non_null(f);
        snprintf(f->dir, sizeof(f->dir), "/tmp/test-truerandom-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->path, sizeof(f->path), "%s/fifo", f->dir);
        assert_int_equal(mkfifo(f->path, 0600), 0);
        f->writer = open(f->path, O_RDWR | O_CLOEXEC);
        assert_true(f->writer >= 0);
        *state = f;
        return 0;
}

static int teardown(void **state) {
        Fixture *f = *state;

        if (f->writer >= 0)
                close(f->writer);
        unlink(f->path);
        rmdir(f->dir);
        free(f);
        return 0;
}

static void put(int fd, uint8_t first, size_t n) {
        uint8_t buf[512];

        assert_true(n <= sizeof(buf));
        for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t) (first + i);
        assert_int_equal(write(fd, buf, n), (ssize_t) n);
}

/* What is left in the FIFO, drained without waiting. */
static size_t left(int fd) {
        uint8_t buf[4096];
        size_t n = 0;
        ssize_t k;
        int flags = fcntl(fd, F_GETFL);

        assert_int_equal(fcntl(fd, F_SETFL, flags | O_NONBLOCK), 0);
        while ((k = read(fd, buf, sizeof(buf))) > 0)
                n += (size_t) k;
        assert_int_equal(fcntl(fd, F_SETFL, flags), 0);
        return n;
}

static void test_no_read_ahead(void **state) {
        Fixture *f = *state;
        struct truerandom *t = NULL;
        uint8_t buf[32];

        put(f->writer, 0, 200);
        assert_int_equal(truerandom_open(f->path, &t), 0);
        assert_int_equal(truerandom_read(t, buf, sizeof(buf), TRUERANDOM_READ_ALL), 32);
        assert_int_equal(buf[0], 0);
        assert_int_equal(buf[31], 31);
        truerandom_close(t);
        assert_int_equal(left(f->writer), 200 - 32);
}

static void test_policies(void **state) {
        Fixture *f = *state;
        struct truerandom *t = NULL;
        uint8_t buf[100];

        assert_int_equal(truerandom_open(f->path, &t), 0);
        assert_int_equal(truerandom_read(t, buf, sizeof(buf), TRUERANDOM_READ_NONBLOCK), -EAGAIN);
        put(f->writer, 10, 40);
        /* BLOCK: what is there, not the 100 asked. */
        assert_int_equal(truerandom_read(t, buf, sizeof(buf), TRUERANDOM_READ_BLOCK), 40);
        assert_int_equal(buf[39], 49);
        put(f->writer, 0, 3);
        assert_int_equal(truerandom_read(t, buf, sizeof(buf), TRUERANDOM_READ_NONBLOCK), 3);
        truerandom_close(t);
}

typedef struct Feeder {
        int fd;
        unsigned chunks;
} Feeder;

/* Writes chunks of 10 bytes, one at a time, each after the reader
 * drained the last (the FIFO empty), so ALL must gather them. */
static void *feed(void *arg) {
        Feeder *fe = arg;

        for (unsigned i = 0; i < fe->chunks; i++) {
                int avail = 1;

                /* The bytes still queued (a FIFO's st_size is always 0). */
                while (avail > 0) {
                        assert_int_equal(ioctl(fe->fd, FIONREAD, &avail), 0);
                        if (avail > 0)
                                usleep(1000);
                }
                put(fe->fd, (uint8_t) (i * 10), 10);
        }
        return NULL;
}

static void test_all_gathers(void **state) {
        Fixture *f = *state;
        struct truerandom *t = NULL;
        Feeder fe = { .fd = f->writer, .chunks = 5 };
        uint8_t buf[50];
        pthread_t th;

        assert_int_equal(truerandom_open(f->path, &t), 0);
        /* After a NONBLOCK read, ALL must wait again, not spin on EAGAIN. */
        assert_int_equal(truerandom_read(t, buf, sizeof(buf), TRUERANDOM_READ_NONBLOCK), -EAGAIN);
        assert_int_equal(pthread_create(&th, NULL, feed, &fe), 0);
        assert_int_equal(truerandom_read(t, buf, sizeof(buf), TRUERANDOM_READ_ALL), 50);
        assert_int_equal(pthread_join(th, NULL), 0);
        for (size_t i = 0; i < sizeof(buf); i++)
                assert_int_equal(buf[i], i);
        truerandom_close(t);
        assert_int_equal(left(f->writer), 0);
}

static void test_writer_gone(void **state) {
        Fixture *f = *state;
        struct truerandom *t = NULL;
        uint8_t buf[64];

        assert_int_equal(truerandom_open(f->path, &t), 0);
        put(f->writer, 1, 20);
        close(f->writer);
        f->writer = -1;
        memset(buf, 0x55, sizeof(buf));
        assert_int_equal(truerandom_read(t, buf, sizeof(buf), TRUERANDOM_READ_ALL), -ENODATA);
        for (size_t i = 0; i < sizeof(buf); i++)
                assert_int_equal(buf[i], 0);
        assert_int_equal(truerandom_read(t, buf, sizeof(buf), TRUERANDOM_READ_BLOCK), -ENODATA);
        truerandom_close(t);
}

static void test_not_a_device(void **state) {
        Fixture *f = *state;
        struct truerandom *t = NULL;

        assert_int_equal(truerandom_open(f->path, &t), 0);
        assert_int_equal(truerandom_bits_ready(t), -ENOTTY);
        truerandom_close(t);
        assert_int_equal(truerandom_open("/nonexistent/truerandom", &t), -ENOENT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_no_read_ahead, setup, teardown),
                cmocka_unit_test_setup_teardown(test_policies, setup, teardown),
                cmocka_unit_test_setup_teardown(test_all_gathers, setup, teardown),
                cmocka_unit_test_setup_teardown(test_writer_gone, setup, teardown),
                cmocka_unit_test_setup_teardown(test_not_a_device, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
