/* test-kernelfed.c - the control command truerandom-seed-kernel reports
 * each feed of the kernel's pool with (kernel-fed), against the real
 * daemon in-process (fakedaemon.h) and a fake /proc (fakeproc.h): root
 * and a caller holding CAP_SYS_ADMIN are heard, and status then shows the
 * feeds, the last one's bits and reason; a caller without the capability
 * is refused (permission) and changes nothing, as is an unknown reason.
 * The callers other than root are children of this test as uid NOBODY;
 * without root the test can only be root-less, and says so. */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fakedaemon.h"
#include "fakeproc.h"
#include "proto/ctlproto.h"

#define NOBODY 65534

static FakeDaemon *daemon_;
static FakeProc *proc;

/* One request packet, as written, on the control socket: the reply's kind
 * (CTL_REPLY_OK, CTL_REPLY_ERROR with *ret_error), or -1. */
static int ask(const char *msg, CtlError *ret_error) {
        static char buf[CTL_REPLY_MAX];
        CtlReply reply;

        if (fakedaemon_ask(daemon_, msg, strlen(msg), buf, &reply) < 0)
                return -1;
        if (ret_error)
                *ret_error = reply.error;
        return (int) reply.kind;
}

/* kernel-fed reason=REASON bits=BITS, as the seeder sends it. */
static int report(const char *reason, unsigned bits, CtlError *ret_error) {
        CtlRequest req = { .command = ctl_command_from_string("kernel-fed"), .bits = bits };
        char msg[128];
        ssize_t n;

        snprintf(req.reason, sizeof(req.reason), "%s", reason);
        n = ctl_request_format(&req, msg, sizeof(msg) - 1);
        if (n <= 0)
                return -1;
        msg[n] = '\0';
        return ask(msg, ret_error);
}

/* What status says of the feeds: their number (0: kernel_feed is null). */
static double feeds(char *ret_reason, size_t size, double *ret_bits) {
        CtlStatus *s = NULL;
        const CtlStatusObject *k;
        double v = 0;

        assert_int_equal(fakedaemon_status(daemon_, &s), 0);
        k = ctl_status_get_object(ctl_status_root(s), "kernel_feed");
        if (k) {
                assert_true(ctl_status_get_number(k, "feeds", &v));
                if (ret_bits)
                        assert_true(ctl_status_get_number(k, "last_bits", ret_bits));
                if (ret_reason)
                        snprintf(ret_reason, size, "%s", ctl_status_get_string(k, "last_reason"));
        }
        ctl_status_free(s);
        return v;
}

/* A child as uid NOBODY reports one feed; with cap, the fake /proc gives
 * it CAP_SYS_ADMIN first. Its exit status: 0 heard, 1 refused for
 * permission, 2 anything else. */
static int report_as_nobody(bool cap) {
        int go[2], status;
        pid_t pid;
        char b;

        assert_int_equal(pipe(go), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                CtlError e = 0;
                int kind;

                close(go[1]);
                if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0 || read(go[0], &b, 1) != 1)
                        _exit(3);
                kind = report("interval", 256, &e);
                _exit(kind == CTL_REPLY_OK ? 0 : kind == CTL_REPLY_ERROR && e == CTL_ERROR_PERMISSION ? 1 : 2);
        }
        close(go[0]);
        assert_int_equal(fakeproc_add(proc, pid, NOBODY, cap ? UINT64_C(1) << CAP_SYS_ADMIN : 0, FAKEPROC_NS_SAME), 0);
        assert_int_equal(write(go[1], "g", 1), 1);
        close(go[1]);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

static void test_kernel_fed(void **state) {
        DaemonHooks hooks = { 0 };
        Config c;
        char reason[40];
        double bits = 0;
        CtlError e;

        if (getuid() != 0) {
                print_message("needs root: the callers are children that become uid %d\n", NOBODY);
                skip();
        }
        assert_int_equal(fakedaemon_new("fed", "fed", &daemon_), 0);
        assert_int_equal(fakeproc_new(daemon_->dir, &proc), 0);
        /* The children reach the control socket through the scratch dir. */
        assert_int_equal(chmod(daemon_->dir, 0711), 0);
        assert_int_equal(fakedaemon_config(daemon_, &c), 0);
        c.cuse = false;
        c.egd_socket_path = malloc(128);
        assert_non_null(c.egd_socket_path);
        snprintf(c.egd_socket_path, 128, "%s/egd.sock", daemon_->dir);
        hooks.proc_root = fakeproc_root(proc);
        assert_int_equal(fakedaemon_start(daemon_, &c, NULL, &hooks), 0);

        assert_true(feeds(NULL, 0, NULL) == 0);
        assert_int_equal(report("boot", 256, NULL), CTL_REPLY_OK);
        assert_true(feeds(reason, sizeof(reason), &bits) == 1);
        assert_string_equal(reason, "boot");
        assert_true(bits == 256);

        /* Not a reason the seeder gives; bits out of bounds. */
        assert_int_equal(report("whenever", 256, &e), CTL_REPLY_ERROR);
        assert_int_equal(ask("truerandom-control/1 kernel-fed reason=interval bits=4097", &e), CTL_REPLY_ERROR);
        assert_int_equal(e, CTL_ERROR_MALFORMED);
        assert_true(feeds(NULL, 0, NULL) == 1);
        /* Without the capability: refused; with it: heard. */
        assert_int_equal(report_as_nobody(false), 1);
        assert_true(feeds(NULL, 0, NULL) == 1);
        assert_int_equal(report_as_nobody(true), 0);
        assert_true(feeds(reason, sizeof(reason), &bits) == 2);
        assert_string_equal(reason, "interval");

        fakedaemon_free(daemon_);
        daemon_ = NULL;
        fakeproc_free(proc);
        config_done(&c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kernel_fed),
        };

        fakedaemon_block_signals();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
