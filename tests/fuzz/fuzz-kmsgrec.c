/* fuzz-kmsgrec.c - the /dev/kmsg record parser on arbitrary reads.
 *
 * The input is one read()'s worth, copied to a heap buffer of exactly its
 * size (the parser takes no NUL for granted, so a read past it is an ASan
 * report). Checks: a refused record leaves the output alone; an accepted
 * one has its message inside the buffer, right after the first ';', ending
 * at the first newline after it, with no newline inside, a level of 0..7,
 * and is the kernel's VM-fork record exactly when facility and text say so.
 * Flow: libFuzzer -> [harness] -> kmsgrec. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/watch/kmsgrec.h"
#include "fuzz.h"

#define FORK "random: crng reseeded due to virtual machine fork"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        KmsgRecord rec, untouched;
        char *buf = malloc(size ? size : 1);
        const char *semi;
        size_t start;
        int r;

        FUZZ_CHECK(buf);
        memcpy(buf, data, size);
        memset(&rec, 0x5a, sizeof(rec));
        untouched = rec;
        r = kmsg_parse_record(buf, size, &rec);
        if (r < 0) {
                FUZZ_CHECK(r == -EBADMSG);
                FUZZ_CHECK(memcmp(&rec, &untouched, sizeof(rec)) == 0);
                free(buf);
                return 0;
        }
        FUZZ_CHECK(r == 0);
        semi = memchr(buf, ';', size);
        FUZZ_CHECK(semi);
        start = (size_t) (semi - buf) + 1;
        FUZZ_CHECK(rec.message == buf + start);
        FUZZ_CHECK(start + rec.message_len < size);
        FUZZ_CHECK(buf[start + rec.message_len] == '\n');
        FUZZ_CHECK(!memchr(rec.message, '\n', rec.message_len));
        FUZZ_CHECK(rec.level <= 7);
        FUZZ_CHECK(kmsg_record_is_kernel(&rec, FORK) ==
                   (rec.facility == 0 && rec.message_len == strlen(FORK) && memcmp(rec.message, FORK, rec.message_len) == 0));
        free(buf);
        return 0;
}
