/* egdwire.h - the Entropy Gathering Daemon's protocol (EGD, egd.pl 0.9), as
 * QEMU's rng-egd backend, libvirt's <backend model='egd'> and OpenSSL's
 * RAND_egd() speak it on a stream socket. The daemon's EGD server
 * (daemon/egd/) parses with it; truerandomctl and the tests build requests
 * with it. Pure: no I/O, no allocation.
 *
 * Requests (one byte of command, then its arguments; lengths in bytes):
 *   0x00              bits ready        -> 4 bytes: the count, big endian
 *   0x01 LEN          read, no waiting  -> 1 byte N (<= LEN), then N bytes
 *   0x02 LEN          read, waiting     -> exactly LEN bytes
 *   0x03 BITS2 LEN D  write LEN bytes D, claiming BITS (big endian): no reply
 *   0x04              the server's pid  -> 1 byte N, then N ASCII digits
 * Anything else is not EGD: the server closes the connection.
 * Flow: socket bytes -> [egdwire] -> the EGD server -> the store. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum EgdCommand {
        EGD_CMD_BITS = 0x00,
        EGD_CMD_READ_NOWAIT = 0x01,
        EGD_CMD_READ = 0x02,
        EGD_CMD_WRITE = 0x03,
        EGD_CMD_PID = 0x04,
} EgdCommand;

/* The longest request: a write of 255 bytes after its four of header. */
#define EGD_REQUEST_MAX (4U + 255U)
/* The longest reply: a count and 255 bytes. */
#define EGD_REPLY_MAX (1U + 255U)

typedef struct EgdRequest {
        EgdCommand command;
        unsigned len;            /* bytes asked (reads) or given (write) */
        unsigned bits;           /* a write's claimed bits (ignored: never credited) */
        const uint8_t *data;     /* a write's bytes, inside the parsed buffer */
} EgdRequest;

/* One request from the first n bytes of buf: the bytes it took (> 0), 0
 * when buf holds only part of one yet, or -EBADMSG when buf[0] is no EGD
 * command. ret is written only on success. */
ssize_t egd_parse(const uint8_t *buf, size_t n, EgdRequest *ret);

/* The reply to bits ready: bits, big endian, into out. 4. */
size_t egd_reply_bits(uint32_t bits, uint8_t out[static 4]);
/* The reply to pid: its length byte and digits into out. Bytes written. */
size_t egd_reply_pid(pid_t pid, uint8_t out[static 12]);
