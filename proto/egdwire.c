/* egdwire.c - the EGD protocol's requests and small replies (egdwire.h).
 * Flow: socket bytes -> [egdwire] -> the EGD server. */
#include "egdwire.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

ssize_t egd_parse(const uint8_t *buf, size_t n, EgdRequest *ret) {
        EgdRequest rq = { 0 };
        size_t need;

        if (n == 0)
                return 0;
        switch (buf[0]) {
        case EGD_CMD_BITS:
        case EGD_CMD_PID:
                need = 1;
                break;
        case EGD_CMD_READ_NOWAIT:
        case EGD_CMD_READ:
                if (n < 2)
                        return 0;
                rq.len = buf[1];
                need = 2;
                break;
        case EGD_CMD_WRITE:
                if (n < 4)
                        return 0;
                rq.bits = (unsigned) buf[1] << 8 | buf[2];
                rq.len = buf[3];
                rq.data = buf + 4;
                need = 4 + (size_t) rq.len;
                break;
        default:
                return -EBADMSG;
        }
        if (n < need)
                return 0;
        rq.command = (EgdCommand) buf[0];
        *ret = rq;
        return (ssize_t) need;
}

size_t egd_reply_bits(uint32_t bits, uint8_t out[static 4]) {
        out[0] = (uint8_t) (bits >> 24);
        out[1] = (uint8_t) (bits >> 16);
        out[2] = (uint8_t) (bits >> 8);
        out[3] = (uint8_t) bits;
        return 4;
}

size_t egd_reply_pid(pid_t pid, uint8_t out[static 12]) {
        char digits[12];
        int n = snprintf(digits, sizeof(digits), "%ld", (long) pid);

        if (n < 0 || n > 11)
                n = 0;
        out[0] = (uint8_t) n;
        memcpy(out + 1, digits, (size_t) n);
        return 1 + (size_t) n;
}
