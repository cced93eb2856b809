/* kmsgrec.h - one record of the kernel's log as /dev/kmsg hands it out
 * (Documentation/ABI/testing/dev-kmsg): each read() returns one record,
 *
 *     PRI,SEQ,TIMESTAMP,FLAGS[,MORE...];MESSAGE\n
 *     [ KEY=VALUE\n]...
 *
 * PRI is syslog's (facility << 3 | level), TIMESTAMP the kernel's clock in
 * microseconds since boot. The kernel escapes unprintable bytes of MESSAGE
 * as \xNN, so the message holds no newline. Facility 0 is the kernel's own:
 * a write to /dev/kmsg cannot claim it (the kernel turns it into LOG_USER),
 * so a facility-0 record came from the kernel itself.
 *
 * Pure parsing, no I/O: the vmgenid watcher (vmgenid.h) feeds it what it
 * reads, the fuzzer feeds it anything.
 * Flow: /dev/kmsg -> [kmsgrec] -> vmgenid watcher -> daemon. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct KmsgRecord {
        unsigned facility;
        unsigned level;
        uint64_t seq;
        uint64_t usec;          /* the kernel's timestamp */
        const char *message;    /* inside the parsed buffer; not NUL-terminated */
        size_t message_len;
} KmsgRecord;

/* Parses buf[0..n). 0 and *ret (pointing into buf), or -EBADMSG when the
 * prefix is not "number,number,number,flags...;" or the message does not
 * end with a newline. */
int kmsg_parse_record(const char *buf, size_t n, KmsgRecord *ret);

/* Whether r is the kernel's own (facility 0) and its message is exactly
 * message. */
bool kmsg_record_is_kernel(const KmsgRecord *r, const char *message);
