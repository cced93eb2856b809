/* test-startup.c - the daemon's start-up when locked memory runs out.
 *
 * Every sodium_malloc() (the store, the CRNG, the reply scratch, each
 * source's conditioner) is made to fail in turn, with -Wl,--wrap: start-up
 * must end with -ENOMEM and a message naming locked memory, free what it
 * had (ASan and valgrind runs check), and never crash. Past the last
 * allocation it gets as far as /dev/cuse, which the hook says is missing:
 * the message names `modprobe cuse`. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "config/config.h"
#include "daemon/daemon.h"
#include "fakedaemon.h"

void *__real_sodium_malloc(size_t size);
void *__wrap_sodium_malloc(size_t size);

static int calls;
static int fail_at = -1;

void *__wrap_sodium_malloc(size_t size) {
        if (calls++ == fail_at)
                return NULL;
        return __real_sodium_malloc(size);
}

static int no_cuse(void *userdata, const char *name, CuseDevKind kind, int *ret_fd,
                   const struct fuse_custom_io **ret_io) {
        return -ENOENT;
}

/* Starts a daemon with sodium_malloc call number k failing; returns what
 * daemon_new said and what it logged. Its set-up is the protocol suite's
 * (fakedaemon.h), run on this thread, with only the file source, reading
 * /dev/zero. */
static int start(int k, char *log, size_t log_size) {
        char path[128];
        DaemonHooks hooks = { .open_device = no_cuse, .ready_fd = -1 };
        FakeDaemon *fd;
        Daemon *d = NULL;
        Config c;
        int r, saved, out;
        ssize_t n;

        assert_int_equal(fakedaemon_new("startup", "startup", &fd), 0);
        assert_int_equal(fakedaemon_config(fd, &c), 0);
        c.source[CONFIG_SOURCE_KERNEL].enable = false;
        free((char *) c.source[CONFIG_SOURCE_FILE].params.path);
        c.source[CONFIG_SOURCE_FILE].params.path = strdup("/dev/zero");

        /* What the daemon writes to stderr, into a file. */
        snprintf(path, sizeof(path), "%s/log", fd->dir);
        out = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(out >= 0);
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        dup2(out, STDERR_FILENO);
        calls = 0;
        fail_at = k;
        r = daemon_new(&c, NULL, &hooks, &d);
        fail_at = -1;
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
        n = pread(out, log, log_size - 1, 0);
        log[n > 0 ? n : 0] = '\0';
        close(out);
        fakedaemon_free(fd);
        config_done(&c);
        assert_null(d);
        return r;
}

static void test_locked_memory_exhausted(void **state) {
        char log[4096];
        int total, r;

        /* How many locked allocations a start-up makes before /dev/cuse. */
        r = start(-1, log, sizeof(log));
        total = calls;
        assert_int_equal(r, -ENOENT);
        assert_non_null(strstr(log, "modprobe cuse"));
        assert_true(total >= 3);

        for (int k = 0; k < total; k++) {
                r = start(k, log, sizeof(log));
                print_message("sodium_malloc #%d fails: %s", k, log);
                assert_int_equal(r, -ENOMEM);
                assert_non_null(strstr(log, "check LimitMEMLOCK"));
                assert_non_null(strstr(log, "Cannot allocate memory"));
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_locked_memory_exhausted),
        };
        fakedaemon_block_signals();
        if (sodium_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
