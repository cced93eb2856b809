/* test-log.c - the daemon's log: libfuse's own messages go through it
 * (prefixed, filtered by level, no stray newline) instead of raw stderr. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <fuse3/fuse_log.h>

#include "daemon/log.h"

/* Runs fn with stderr into a pipe; returns what it wrote. */
static char *capture_stderr(void (*fn)(void)) {
        static char buf[4096];
        int fds[2], saved;
        ssize_t n;

        assert_int_equal(pipe2(fds, O_NONBLOCK), 0);
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        assert_true(saved >= 0);
        assert_true(dup2(fds[1], STDERR_FILENO) >= 0);
        fn();
        fflush(stderr);
        assert_true(dup2(saved, STDERR_FILENO) >= 0);
        close(saved);
        close(fds[1]);
        n = read(fds[0], buf, sizeof(buf) - 1);
        close(fds[0]);
        buf[n > 0 ? n : 0] = '\0';
        return buf;
}

static void fuse_messages(void) {
        unsetenv("JOURNAL_STREAM");
        log_open(false);
        fuse_log(FUSE_LOG_ERR, "fuse: bad mount point `%s': %s\n", "/x", "No such file or directory");
        fuse_log(FUSE_LOG_DEBUG, "unique: 1, opcode: INIT\n");
}

static void test_fuse_log_goes_through_ours(void **state) {
        char *out = capture_stderr(fuse_messages);

        assert_string_equal(out, "truerandomd: libfuse: fuse: bad mount point `/x': No such file or directory\n");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fuse_log_goes_through_ours),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
