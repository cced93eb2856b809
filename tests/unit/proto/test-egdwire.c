/* test-egdwire.c - the EGD protocol's requests: each command with its
 * arguments, a request cut anywhere asking for more, what is not EGD
 * refused, requests back to back taken one at a time; the replies to bits
 * ready and pid in the byte order and form clients read. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "proto/egdwire.h"

static void test_each_command(void **state) {
        const uint8_t bits[] = { 0x00 }, nowait[] = { 0x01, 200 }, wait[] = { 0x02, 255 }, pid[] = { 0x04 };
        const uint8_t write[] = { 0x03, 0x01, 0x02, 3, 'x', 'y', 'z' };
        EgdRequest rq;

        assert_int_equal(egd_parse(bits, sizeof(bits), &rq), 1);
        assert_int_equal(rq.command, EGD_CMD_BITS);
        assert_int_equal(egd_parse(nowait, sizeof(nowait), &rq), 2);
        assert_int_equal(rq.command, EGD_CMD_READ_NOWAIT);
        assert_int_equal(rq.len, 200);
        assert_int_equal(egd_parse(wait, sizeof(wait), &rq), 2);
        assert_int_equal(rq.command, EGD_CMD_READ);
        assert_int_equal(rq.len, 255);
        assert_int_equal(egd_parse(write, sizeof(write), &rq), 7);
        assert_int_equal(rq.command, EGD_CMD_WRITE);
        assert_int_equal(rq.bits, 0x0102);
        assert_int_equal(rq.len, 3);
        assert_ptr_equal(rq.data, write + 4);
        assert_int_equal(egd_parse(pid, sizeof(pid), &rq), 1);
        assert_int_equal(rq.command, EGD_CMD_PID);
}

/* Every prefix of a request is "more, please", and leaves ret alone. */
static void test_cut_requests_wait_for_more(void **state) {
        const uint8_t write[] = { 0x03, 0x00, 0x08, 4, 1, 2, 3, 4 }, wait[] = { 0x02, 32 };
        EgdRequest rq, untouched;

        memset(&rq, 0x5a, sizeof(rq));
        untouched = rq;
        assert_int_equal(egd_parse(write, 0, &rq), 0);
        for (size_t n = 1; n < sizeof(write); n++)
                assert_int_equal(egd_parse(write, n, &rq), 0);
        assert_int_equal(egd_parse(wait, 1, &rq), 0);
        assert_memory_equal(&rq, &untouched, sizeof(rq));
        assert_int_equal(egd_parse(write, sizeof(write), &rq), (ssize_t) sizeof(write));
}

static void test_not_egd_refused(void **state) {
        EgdRequest rq;

        for (unsigned c = 0x05; c <= 0xff; c++) {
                uint8_t b[4] = { (uint8_t) c, 1, 1, 1 };
                assert_int_equal(egd_parse(b, sizeof(b), &rq), -EBADMSG);
        }
}

/* A buffer of several requests: the first one only, its length taken. */
static void test_back_to_back(void **state) {
        const uint8_t b[] = { 0x02, 16, 0x00, 0x01, 8 };
        EgdRequest rq;
        size_t off = 0;
        ssize_t n;
        const EgdCommand want[] = { EGD_CMD_READ, EGD_CMD_BITS, EGD_CMD_READ_NOWAIT };

        for (size_t i = 0; i < 3; i++) {
                n = egd_parse(b + off, sizeof(b) - off, &rq);
                assert_true(n > 0);
                assert_int_equal(rq.command, want[i]);
                off += (size_t) n;
        }
        assert_int_equal(off, sizeof(b));
}

static void test_replies(void **state) {
        uint8_t out[12];

        assert_int_equal(egd_reply_bits(0x01020304, out), 4);
        assert_memory_equal(out, "\x01\x02\x03\x04", 4);
        assert_int_equal(egd_reply_pid(4242, out), 5);
        assert_memory_equal(out, "\x04" "4242", 5);
        assert_int_equal(egd_reply_pid(1, out), 2);
        assert_memory_equal(out, "\x01" "1", 2);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_each_command),
                cmocka_unit_test(test_cut_requests_wait_for_more),
                cmocka_unit_test(test_not_egd_refused),
                cmocka_unit_test(test_back_to_back),
                cmocka_unit_test(test_replies),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
