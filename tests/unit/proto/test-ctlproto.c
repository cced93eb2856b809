/* test-ctlproto.c - the control protocol's packets: round trips, and what
 * a hostile or confused peer may send (malformed, truncated, oversized,
 * another version). The status payload: test-ctlstatus.c, test-render.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proto/ctlproto.h"

/* ---- requests ------------------------------------------------------------ */

#define STATUS ctl_command_from_string("status")
#define RESEED ctl_command_from_string("reseed")
#define RAW ctl_command_from_string("raw")

static int parse_str(const char *s, CtlRequest *ret) {
        char reason[CTL_REASON_MAX] = "";
        int r = ctl_request_parse(s, strlen(s), ret, reason, sizeof(reason));
        if (r < 0)
                assert_true(reason[0] != '\0');
        return r;
}

static void test_request_round_trip(void **state) {
        CtlRequest in[] = {
                { .command = STATUS, .samples = CTL_RAW_SAMPLES_DEFAULT, .rows = 1 },
                { .command = RESEED, .samples = CTL_RAW_SAMPLES_DEFAULT, .rows = 1 },
                { .command = RAW, .source = "jitter", .samples = 1000000, .rows = 1 },
                { .command = RAW, .source = "hwrng", .samples = 1000, .rows = 1000 },
                { .command = RAW, .source = "a.b-c_9", .samples = CTL_RAW_SAMPLES_MAX,
                  .rows = CTL_RAW_ROWS_MAX },
        };
        char buf[CTL_REQUEST_MAX];

        for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
                CtlRequest out;
                ssize_t n = ctl_request_format(&in[i], buf, sizeof(buf));

                assert_true(n > 0);
                assert_int_equal(ctl_request_parse(buf, (size_t) n, &out, NULL, 0), 0);
                assert_ptr_equal(out.command, in[i].command);
                assert_string_equal(out.source, in[i].source);
                assert_int_equal(out.samples, in[i].samples);
                assert_int_equal(out.rows, in[i].rows);
        }
}

static void test_request_wire_form(void **state) {
        CtlRequest req = { .command = RAW, .source = "jitter", .samples = 1000, .rows = 1000 };
        char buf[CTL_REQUEST_MAX], small[20];

        /* What truerandomctl(1) documents for other clients. */
        assert_int_equal(ctl_request_format(&req, buf, sizeof(buf)), 61);
        assert_string_equal(buf, "truerandom-control/1 raw source=jitter samples=1000 rows=1000");
        assert_int_equal(ctl_request_format(&req, small, sizeof(small)), -ENOBUFS);
        req.source[0] = '\0';
        assert_int_equal(ctl_request_format(&req, buf, sizeof(buf)), -EINVAL);
        strcpy(req.source, "a b");
        assert_int_equal(ctl_request_format(&req, buf, sizeof(buf)), -EINVAL);
        strcpy(req.source, "jitter");
        req.samples = 0;
        assert_int_equal(ctl_request_format(&req, buf, sizeof(buf)), -EINVAL);
}

static void test_request_defaults(void **state) {
        CtlRequest r;

        assert_int_equal(parse_str("truerandom-control/1 raw source=jitter", &r), 0);
        assert_ptr_equal(r.command, RAW);
        assert_string_equal(r.source, "jitter");
        assert_int_equal(r.samples, CTL_RAW_SAMPLES_DEFAULT);
        assert_int_equal(r.rows, 1);
        /* A trailing newline is allowed (socat, printf). */
        assert_int_equal(parse_str("truerandom-control/1 status\n", &r), 0);
        assert_ptr_equal(r.command, STATUS);
        assert_int_equal(parse_str("truerandom-control/1 raw rows=3 samples=7 source=file", &r), 0);
        assert_int_equal(r.rows, 3);
        assert_int_equal(r.samples, 7);
}

static void test_request_malformed(void **state) {
        static const char *const bad[] = {
                "",
                "\n",
                "\n\n",
                "status",
                "truerandom-control/1",
                "truerandom-control/1 ",
                "truerandom-control/ status",
                "truerandom-control/01 status",
                "truerandom-control/1x status",
                "truerandom-control/-1 status",
                "truerandom-control/99999999999999999999999 status",
                "TRUERANDOM-CONTROL/1 status",
                "truerandom-control/1  status",
                " truerandom-control/1 status",
                "truerandom-control/1 status ",
                "truerandom-control/1 status\n\n",
                "truerandom-control/1\tstatus",
                "truerandom-control/1 status\r",
                "truerandom-control/1 STATUS",
                "truerandom-control/1 stat",
                "truerandom-control/1 statusx",
                "truerandom-control/1 status source=jitter",
                "truerandom-control/1 reseed now",
                "truerandom-control/1 raw",
                "truerandom-control/1 raw jitter",
                "truerandom-control/1 raw source=",
                "truerandom-control/1 raw source=jit ter",
                "truerandom-control/1 raw source=jitter source=rdseed",
                "truerandom-control/1 raw source=../../etc",
                "truerandom-control/1 raw source=a/b",
                "truerandom-control/1 raw source=abcdefghijklmnopqrstuvwxyz0123456",
                "truerandom-control/1 raw source=jitter samples=0",
                "truerandom-control/1 raw source=jitter samples=1000000001",
                "truerandom-control/1 raw source=jitter samples=-1",
                "truerandom-control/1 raw source=jitter samples=+5",
                "truerandom-control/1 raw source=jitter samples=010",
                "truerandom-control/1 raw source=jitter samples=1e6",
                "truerandom-control/1 raw source=jitter samples=",
                "truerandom-control/1 raw source=jitter samples=99999999999999999999999",
                "truerandom-control/1 raw source=jitter samples=5 samples=6",
                "truerandom-control/1 raw source=jitter rows=0",
                "truerandom-control/1 raw source=jitter rows=1000001",
                "truerandom-control/1 raw source=jitter rows=1 rows=1",
                "truerandom-control/1 raw source=jitter restart=yes",
                "truerandom-control/1 raw source=jitter =5",
                "truerandom-control/1 raw source=jitter samples",
                "GET / HTTP/1.1",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                CtlRequest r = { .command = RESEED, .samples = 42, .rows = 7 };
                int ret = parse_str(bad[i], &r);

                if (ret != -EBADMSG)
                        fail_msg("'%s' gave %d, not -EBADMSG", bad[i], ret);
                /* Nothing is written on failure. */
                assert_ptr_equal(r.command, RESEED);
                assert_int_equal(r.samples, 42);
                assert_int_equal(r.rows, 7);
        }
}

/* The reasons are the daemon's error texts (truerandomctl prints them):
 * the same words, from the command table's rows. */
static void test_request_reasons(void **state) {
        static const struct {
                const char *request, *reason;
        } cases[] = {
                { "truerandom-control/1 status source=jitter", "this command takes no arguments" },
                { "truerandom-control/1 raw source=jitter source=rdseed", "duplicate source=" },
                { "truerandom-control/1 raw source=a/b", "invalid source name" },
                { "truerandom-control/1 raw source=jitter samples=0", "samples must be in [1, 1000000000]" },
                { "truerandom-control/1 raw source=jitter rows=1000001", "rows must be in [1, 1000000]" },
                { "truerandom-control/1 raw source=jitter rows=1 rows=1", "duplicate rows=" },
                { "truerandom-control/1 raw source=jitter restart=yes", "unknown argument" },
                { "truerandom-control/1 raw source=jitter samples", "argument is not key=value" },
                { "truerandom-control/1 raw samples=5", "raw needs source=NAME" },
                { "truerandom-control/1 raw  source=jitter", "empty argument (two spaces?)" },
                { "truerandom-control/1 frobnicate", "unknown command" },
                { "truerandom-control/2 status", "unsupported protocol version (this daemon speaks 1)" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char reason[CTL_REASON_MAX] = "";
                CtlRequest r;

                assert_true(ctl_request_parse(cases[i].request, strlen(cases[i].request), &r, reason,
                                              sizeof(reason)) < 0);
                assert_string_equal(reason, cases[i].reason);
        }
}

/* Every command of the table goes over the wire and back, each of its
 * arguments at a bound; a request for no command is not formatted. */
static void test_command_table(void **state) {
        char buf[CTL_REQUEST_MAX];
        CtlRequest req, out;

        for (const CtlCommand *c = ctl_commands; c->name; c++) {
                assert_ptr_equal(ctl_command_from_string(c->name), c);
                ctl_request_init(&req, c);
                for (size_t i = 0; i < CTL_COMMAND_ARGS_MAX && c->args[i].arg; i++) {
                        const CtlArg *a = c->args[i].arg;
                        if (a->kind == CTL_ARG_NAME)
                                strcpy((char *) &req + a->field, "x");
                        else
                                *(uint64_t *) (void *) ((char *) &req + a->field) = a->max;
                }
                assert_true(ctl_request_format(&req, buf, sizeof(buf)) > 0);
                assert_int_equal(ctl_request_parse(buf, strlen(buf), &out, NULL, 0), 0);
                assert_ptr_equal(out.command, c);
                assert_string_equal(out.source, req.source);
                assert_int_equal(out.samples, req.samples);
                assert_int_equal(out.rows, req.rows);
        }
        assert_null(ctl_command_from_string("frobnicate"));
        ctl_request_init(&req, NULL);
        assert_int_equal(ctl_request_format(&req, buf, sizeof(buf)), -EINVAL);
}

static void test_request_binary(void **state) {
        static const char with_nul[] = "truerandom-control/1 status\0junk";
        static const char high[] = "truerandom-control/1 raw source=j\xc3\xa9";
        CtlRequest r;

        assert_int_equal(ctl_request_parse(with_nul, sizeof(with_nul) - 1, &r, NULL, 0), -EBADMSG);
        assert_int_equal(ctl_request_parse(high, sizeof(high) - 1, &r, NULL, 0), -EBADMSG);
        /* The size given bounds the parse, not a NUL: a request that is
         * valid only beyond its size is not read there. */
        assert_int_equal(ctl_request_parse("truerandom-control/1 statusXYZ", 27, &r, NULL, 0), 0);
        assert_int_equal(ctl_request_parse("truerandom-control/1 statusXYZ", 26, &r, NULL, 0), -EBADMSG);
}

static void test_request_version(void **state) {
        CtlRequest r;

        assert_int_equal(parse_str("truerandom-control/2 status", &r), -EPROTONOSUPPORT);
        assert_int_equal(parse_str("truerandom-control/0 status", &r), -EPROTONOSUPPORT);
        assert_int_equal(parse_str("truerandom-control/4294967295 status", &r), -EPROTONOSUPPORT);
        /* Another version may have other verbs: the version decides first. */
        assert_int_equal(parse_str("truerandom-control/2 frobnicate", &r), -EPROTONOSUPPORT);
}

static void test_request_oversized(void **state) {
        char *big = malloc(CTL_REQUEST_MAX + 2);
        CtlRequest r;

        assert_non_null(big);
        memset(big, 'a', CTL_REQUEST_MAX + 1);
        memcpy(big, "truerandom-control/1 status", 27);
        assert_int_equal(ctl_request_parse(big, CTL_REQUEST_MAX + 1, &r, NULL, 0), -EMSGSIZE);
        assert_int_equal(ctl_request_parse(big, CTL_REQUEST_MAX, &r, NULL, 0), -EBADMSG);
        /* Even an otherwise valid request is refused over the limit. */
        memset(big + 27, '\n', CTL_REQUEST_MAX + 1 - 27);
        assert_int_equal(ctl_request_parse(big, CTL_REQUEST_MAX + 1, &r, NULL, 0), -EMSGSIZE);
        free(big);
}

static void test_request_truncated(void **state) {
        static const char full[] = "truerandom-control/1 raw source=jitter samples=1000 rows=1000";

        /* Every prefix parses to a verdict without reading past its end
         * (the sanitizer build checks the reads): a prefix that ends inside
         * a value is a shorter valid request ("source=jit"), every other
         * one is malformed. */
        for (size_t n = 0; n <= sizeof(full) - 1; n++) {
                char *copy = malloc(n ? n : 1);
                CtlRequest r;
                int ret;

                assert_non_null(copy);
                memcpy(copy, full, n);
                ret = ctl_request_parse(copy, n, &r, NULL, 0);
                if ((n >= 33 && n <= 38) || (n >= 48 && n <= 51) || n >= 58)
                        assert_int_equal(ret, 0);
                else
                        assert_int_equal(ret, -EBADMSG);
                free(copy);
        }
}

/* ---- replies ------------------------------------------------------------- */

static void test_reply_round_trip(void **state) {
        uint8_t buf[256];
        static const uint8_t bin[] = { 0, ' ', 'o', 'k', 0xff, '\n', 0 };
        CtlReply r;
        ssize_t n;

        n = ctl_reply_format(CTL_REPLY_OK, NULL, 0, buf, sizeof(buf));
        assert_int_equal(n, 2);
        assert_memory_equal(buf, "ok", 2);
        assert_int_equal(ctl_reply_parse(buf, (size_t) n, &r), 0);
        assert_int_equal(r.kind, CTL_REPLY_OK);
        assert_int_equal(r.payload_size, 0);

        n = ctl_reply_format(CTL_REPLY_OK, "{\"version\":1}", 13, buf, sizeof(buf));
        assert_int_equal(ctl_reply_parse(buf, (size_t) n, &r), 0);
        assert_int_equal(r.kind, CTL_REPLY_OK);
        assert_int_equal(r.payload_size, 13);
        assert_memory_equal(r.payload, "{\"version\":1}", 13);

        n = ctl_reply_format(CTL_REPLY_DATA, bin, sizeof(bin), buf, sizeof(buf));
        assert_int_equal(n, 5 + sizeof(bin));
        assert_int_equal(ctl_reply_parse(buf, (size_t) n, &r), 0);
        assert_int_equal(r.kind, CTL_REPLY_DATA);
        assert_int_equal(r.payload_size, sizeof(bin));
        assert_memory_equal(r.payload, bin, sizeof(bin));

        n = ctl_reply_format_start(1000, 1000, buf, sizeof(buf));
        assert_int_equal(ctl_reply_parse(buf, (size_t) n, &r), 0);
        assert_int_equal(r.kind, CTL_REPLY_START);
        assert_int_equal(r.samples, 1000);
        assert_int_equal(r.rows, 1000);

        for (CtlError e = 0; e < _CTL_ERROR_MAX; e++) {
                n = ctl_reply_format_error(e, "why it failed", buf, sizeof(buf));
                assert_true(n > 0);
                assert_int_equal(ctl_reply_parse(buf, (size_t) n, &r), 0);
                assert_int_equal(r.kind, CTL_REPLY_ERROR);
                assert_int_equal(r.error, e);
                assert_int_equal(r.payload_size, 13);
                assert_memory_equal(r.payload, "why it failed", 13);
                /* The errno each code stands for maps back to it. */
                assert_int_equal(ctl_error_from_errno(ctl_error_to_errno(e)), e);
        }
        n = ctl_reply_format_error(CTL_ERROR_BUSY, NULL, buf, sizeof(buf));
        assert_int_equal(ctl_reply_parse(buf, (size_t) n, &r), 0);
        assert_int_equal(r.error, CTL_ERROR_BUSY);
        assert_int_equal(r.payload_size, 0);
}

static void test_reply_error_text(void **state) {
        char text[600], buf[1024];
        CtlReply r;
        ssize_t n;

        /* Control bytes never reach the client's terminal. */
        n = ctl_reply_format_error(CTL_ERROR_FAILED, "a\033[2Jb\nc", buf, sizeof(buf));
        assert_int_equal(ctl_reply_parse(buf, (size_t) n, &r), 0);
        assert_int_equal(r.payload_size, 8);
        assert_memory_equal(r.payload, "a?[2Jb?c", 8);
        /* Long texts are cut, not refused. */
        memset(text, 'x', sizeof(text) - 1);
        text[sizeof(text) - 1] = '\0';
        n = ctl_reply_format_error(CTL_ERROR_FAILED, text, buf, sizeof(buf));
        assert_int_equal(ctl_reply_parse(buf, (size_t) n, &r), 0);
        assert_int_equal(r.payload_size, CTL_ERROR_TEXT_MAX);
        assert_int_equal(ctl_reply_format_error(CTL_ERROR_FAILED, "text", buf, 8), -ENOBUFS);
        assert_int_equal(ctl_reply_format(CTL_REPLY_OK, "12345", 5, buf, 7), -ENOBUFS);
        assert_int_equal(ctl_reply_format(CTL_REPLY_OK, "12345", 5, buf, 8), 8);
        /* -EACCES and unknown errnos have a code too. */
        assert_int_equal(ctl_error_from_errno(-EACCES), CTL_ERROR_PERMISSION);
        assert_int_equal(ctl_error_from_errno(-EXDEV), CTL_ERROR_FAILED);
}

static void test_reply_malformed(void **state) {
        static const char *const bad[] = {
                "", " ", "okay", "OK", "ok\n", "error", "error ", "error  text", "start", "start ",
                "start samples=1", "start rows=1 samples=1", "start samples=0 rows=1", "start samples=1 rows=0",
                "start samples=1 rows=1 ", "start samples=1 rows=1 x=2", "start samples=01 rows=1",
                "start  samples=1 rows=1", "datax", "bogus reply",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                CtlReply r = { .kind = CTL_REPLY_DATA, .payload_size = 99 };
                if (ctl_reply_parse(bad[i], strlen(bad[i]), &r) != -EBADMSG)
                        fail_msg("'%s' was accepted", bad[i]);
                assert_int_equal(r.payload_size, 99);
        }
}

static void test_reply_forward_compatible(void **state) {
        static const char msg[] = "error out-of-unicorns the daemon is newer";
        CtlReply r;

        /* A newer daemon's error code still reads as a failure with its text. */
        assert_int_equal(ctl_reply_parse(msg, sizeof(msg) - 1, &r), 0);
        assert_int_equal(r.kind, CTL_REPLY_ERROR);
        assert_int_equal(r.error, CTL_ERROR_FAILED);
        assert_int_equal(r.payload_size, strlen("the daemon is newer"));
}

static void test_reply_oversized(void **state) {
        uint8_t *big = calloc(1, CTL_REPLY_MAX + 1);
        CtlReply r;

        assert_non_null(big);
        memcpy(big, "data ", 5);
        assert_int_equal(ctl_reply_parse(big, CTL_REPLY_MAX + 1, &r), -EMSGSIZE);
        assert_int_equal(ctl_reply_parse(big, CTL_REPLY_MAX, &r), 0);
        assert_int_equal(r.payload_size, CTL_REPLY_MAX - 5);
        assert_int_equal(ctl_reply_format(CTL_REPLY_DATA, big, CTL_REPLY_MAX - 4, big, CTL_REPLY_MAX + 1), -ENOBUFS);
        free(big);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_request_round_trip),
                cmocka_unit_test(test_request_wire_form),
                cmocka_unit_test(test_request_defaults),
                cmocka_unit_test(test_request_malformed),
                cmocka_unit_test(test_request_reasons),
                cmocka_unit_test(test_command_table),
                cmocka_unit_test(test_request_binary),
                cmocka_unit_test(test_request_version),
                cmocka_unit_test(test_request_oversized),
                cmocka_unit_test(test_request_truncated),
                cmocka_unit_test(test_reply_round_trip),
                cmocka_unit_test(test_reply_error_text),
                cmocka_unit_test(test_reply_malformed),
                cmocka_unit_test(test_reply_forward_compatible),
                cmocka_unit_test(test_reply_oversized),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
