/* test-kmsgrec.c - /dev/kmsg records as the kernel writes them are read
 * right (the VM generation record, later kernels' extra prefix fields, key
 * lines), a record a user wrote through /dev/kmsg never passes for the
 * kernel's, and anything malformed is refused without reading past it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/watch/kmsgrec.h"

#define FORK "random: crng reseeded due to virtual machine fork"

static int parse(const char *text, KmsgRecord *rec) {
        /* An exact-size heap copy: ASan sees any read past its end. */
        size_t n = strlen(text);
        char *buf = malloc(n ? n : 1);
        int r;

        assert_non_null(buf);
        memcpy(buf, text, n);
        r = kmsg_parse_record(buf, n, rec);
        if (r == 0) {
                /* Point into the caller's string: buf is freed. */
                rec->message = text + (rec->message - buf);
        }
        free(buf);
        return r;
}

static void test_kernel_record(void **state) {
        KmsgRecord rec;

        /* As 6.1 and 6.12 logged it in the restore test. */
        assert_int_equal(parse("5,1234,4239567,-;" FORK "\n", &rec), 0);
        assert_int_equal(rec.facility, 0);
        assert_int_equal(rec.level, 5);
        assert_int_equal(rec.seq, 1234);
        assert_int_equal(rec.usec, 4239567);
        assert_true(kmsg_record_is_kernel(&rec, FORK));
        assert_false(kmsg_record_is_kernel(&rec, "random: crng reseeded on system resumption"));
}

static void test_prefix_fields_and_key_lines(void **state) {
        KmsgRecord rec;

        /* Kernels with printk caller ids add fields after the flags; device
         * messages carry key lines after the message. */
        assert_int_equal(parse("5,7,100,-,caller=T1;" FORK "\n SUBSYSTEM=acpi\n DEVICE=+acpi:QEMUVGID:00\n", &rec), 0);
        assert_true(kmsg_record_is_kernel(&rec, FORK));
        assert_int_equal(rec.message_len, strlen(FORK));
        /* A continuation flag ('c') is still one record. */
        assert_int_equal(parse("6,8,101,c;part\n", &rec), 0);
        assert_int_equal(rec.message_len, 4);
        assert_memory_equal(rec.message, "part", 4);
}

static void test_user_record_is_not_the_kernel(void **state) {
        KmsgRecord rec;

        /* echo '<5>...' > /dev/kmsg: the kernel stores it as LOG_USER (8). */
        assert_int_equal(parse("13,9,200,-;" FORK "\n", &rec), 0);
        assert_int_equal(rec.facility, 1);
        assert_false(kmsg_record_is_kernel(&rec, FORK));
        /* Only the exact message: no prefix or suffix matches. */
        assert_int_equal(parse("5,10,201,-;" FORK "!\n", &rec), 0);
        assert_false(kmsg_record_is_kernel(&rec, FORK));
        assert_int_equal(parse("5,11,202,-;x" FORK "\n", &rec), 0);
        assert_false(kmsg_record_is_kernel(&rec, FORK));
        assert_int_equal(parse("5,12,203,-;random: crng\n", &rec), 0);
        assert_false(kmsg_record_is_kernel(&rec, FORK));
}

static void test_malformed(void **state) {
        static const char *const bad[] = {
                "",
                (";" FORK "\n"),
                ("5;" FORK "\n"),
                ("5,1;" FORK "\n"),
                ("5,1,2;" FORK "\n"),                 /* no flags field */
                ("5,1,2,-" FORK "\n"),                /* no ';' */
                ("5,1,2,-;" FORK),                    /* no newline */
                "-5,1,2,-;x\n",
                "5,,2,-;x\n",
                "5, 1,2,-;x\n",
                "5,1,2x,-;x\n",
                "99999999999999999999,1,2,-;x\n",   /* 20 digits */
                "4294967296,1,2,-;x\n",             /* PRI beyond 32 bits */
                "5,1,99999999999999999999,-;x\n",
        };
        KmsgRecord rec;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                assert_int_equal(parse(bad[i], &rec), -EBADMSG);
        assert_int_equal(kmsg_parse_record(NULL, 0, &rec), -EBADMSG);
}

static void test_empty_message(void **state) {
        KmsgRecord rec;

        assert_int_equal(parse("4294967295,9999999999999999999,0,-;\n", &rec), 0);
        assert_int_equal(rec.message_len, 0);
        assert_true(rec.seq == 9999999999999999999ULL);
        assert_int_equal(rec.level, 7);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kernel_record),
                cmocka_unit_test(test_prefix_fields_and_key_lines),
                cmocka_unit_test(test_user_record_is_not_the_kernel),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_empty_message),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
