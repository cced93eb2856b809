/* test-seedstatus.c - what the seeder learns from truerandomd's status:
 *   - from the JSON: serving (degraded still serves), the VM generation
 *     and resume counters, why it does not serve (starting, stopping,
 *     closed), and -EBADMSG for what is not a status;
 *   - over a real SEQPACKET socket with a fake daemon thread: the request
 *     is the protocol's "status", an "ok" reply is read, an "error busy"
 *     reply is -EBUSY, a missing socket -ENOENT, a silent daemon
 *     -ETIMEDOUT (after the short timeout the test gives). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/ctlproto.h"
#include "seed/seedstatus.h"

#define SERVING_JSON                                                                               \
        "{\"version\":3,\"ready\":true,\"stopping\":false,\"trng_serving\":true,\"min_healthy\":1," \
        "\"sources\":[{\"name\":\"jitter\",\"credited\":true,\"state\":\"healthy\"}],"             \
        "\"crng\":{\"seeded\":true,\"vm_generation_changes\":2},\"resume\":{\"jumps\":5}}"

static void test_from_json(void **state) {
        SeedStatus st;

        assert_int_equal(seed_status_from_json(SERVING_JSON, strlen(SERVING_JSON), &st), 0);
        assert_true(st.serving);
        assert_int_equal(st.vm_generation_changes, 2);
        assert_int_equal(st.resumes, 5);
        assert_string_equal(st.why, "");
}

static void test_not_serving(void **state) {
        static const struct {
                const char *json, *why;
        } cases[] = {
                { "{\"version\":3,\"ready\":false}", "truerandomd is starting" },
                { "{\"version\":3,\"ready\":true,\"stopping\":true}", "truerandomd is stopping" },
                { "{\"version\":3,\"ready\":true,\"trng_serving\":false}",
                  "/dev/truerandom is closed (too few healthy sources)" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                SeedStatus st;

                assert_int_equal(seed_status_from_json(cases[i].json, strlen(cases[i].json), &st), 0);
                assert_false(st.serving);
                assert_string_equal(st.why, cases[i].why);
                /* Absent counters read as 0. */
                assert_int_equal(st.vm_generation_changes, 0);
        }
}

static void test_degraded_serves(void **state) {
        const char *json = "{\"version\":3,\"ready\":true,\"trng_serving\":true,\"min_healthy\":2,"
                           "\"sources\":[{\"credited\":true,\"state\":\"failed\"}]}";
        SeedStatus st;

        assert_int_equal(seed_status_from_json(json, strlen(json), &st), 0);
        assert_true(st.serving);
}

static void test_bad_json(void **state) {
        SeedStatus st;

        assert_int_equal(seed_status_from_json("[]", 2, &st), -EBADMSG);
        assert_int_equal(seed_status_from_json("{\"ready\":true}", 14, &st), -EBADMSG);
}

/* ---- a fake daemon ------------------------------------------------------ */

typedef struct Daemon {
        char dir[64], path[96];
        int listen_fd;
        const char *reply; /* NULL: accept and say nothing */
        char request[256];
        pthread_t thread;
} Daemon;

static void *serve(void *arg) {
        Daemon *d = arg;
        uint8_t out[4096];
        int fd = accept(d->listen_fd, NULL, NULL);
        ssize_t n;

        assert_true(fd >= 0);
        n = recv(fd, d->request, sizeof(d->request) - 1, 0);
        assert_true(n > 0);
        if (d->reply) {
                n = strncmp(d->reply, "error ", 6) == 0
                            ? ctl_reply_format_error(CTL_ERROR_BUSY, "too many connections", out, sizeof(out))
                            : ctl_reply_format(CTL_REPLY_OK, d->reply, strlen(d->reply), out, sizeof(out));
                assert_true(n > 0);
                assert_int_equal(send(fd, out, (size_t) n, 0), n);
        } else {
                /* Silent until the client gives up. */
                (void) recv(fd, out, sizeof(out), 0);
        }
        close(fd);
        return NULL;
}

static Daemon *daemon_start(const char *reply) {
        Daemon *d = calloc(1, sizeof(*d));
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        assert_non_null(d);
        snprintf(d->dir, sizeof(d->dir), "/tmp/test-seedstatus-XXXXXX");
        assert_non_null(mkdtemp(d->dir));
        snprintf(d->path, sizeof(d->path), "%s/control", d->dir);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", d->path);
        d->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        assert_true(d->listen_fd >= 0);
        assert_int_equal(bind(d->listen_fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        assert_int_equal(listen(d->listen_fd, 4), 0);
        d->reply = reply;
        assert_int_equal(pthread_create(&d->thread, NULL, serve, d), 0);
        return d;
}

static void daemon_stop(Daemon *d) {
        assert_int_equal(pthread_join(d->thread, NULL), 0);
        close(d->listen_fd);
        unlink(d->path);
        rmdir(d->dir);
        free(d);
}

static void test_fetch(void **state) {
        Daemon *d = daemon_start(SERVING_JSON);
        SeedStatus st;

        assert_int_equal(seed_status_fetch(d->path, 10 * USEC_PER_SEC, &st), 0);
        assert_true(st.serving);
        assert_int_equal(st.resumes, 5);
        assert_memory_equal(d->request, "truerandom-control/1 status", 27);
        daemon_stop(d);
}

static void test_fetch_busy(void **state) {
        Daemon *d = daemon_start("error busy");
        SeedStatus st;

        assert_int_equal(seed_status_fetch(d->path, 10 * USEC_PER_SEC, &st), -EBUSY);
        daemon_stop(d);
}

static void test_fetch_silent(void **state) {
        Daemon *d = daemon_start(NULL);
        SeedStatus st;

        assert_int_equal(seed_status_fetch(d->path, 50 * USEC_PER_MSEC, &st), -ETIMEDOUT);
        daemon_stop(d);
}

static void test_fetch_no_daemon(void **state) {
        SeedStatus st;

        assert_int_equal(seed_status_fetch("/nonexistent/truerandomd/control", USEC_PER_SEC, &st), -ENOENT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_from_json),
                cmocka_unit_test(test_not_serving),
                cmocka_unit_test(test_degraded_serves),
                cmocka_unit_test(test_bad_json),
                cmocka_unit_test(test_fetch),
                cmocka_unit_test(test_fetch_busy),
                cmocka_unit_test(test_fetch_silent),
                cmocka_unit_test(test_fetch_no_daemon),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
