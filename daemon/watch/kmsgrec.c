/* kmsgrec.c - one /dev/kmsg record (see kmsgrec.h). Every index is checked
 * against n: the buffer need not be NUL-terminated. */
#include "kmsgrec.h"

#include <errno.h>
#include <string.h>

/* A decimal number of at most 19 digits (no sign, no spaces) ending at a
 * ',' or ';' inside buf[*pos..n); *pos ends on that separator. */
static int parse_number(const char *buf, size_t n, size_t *pos, uint64_t *ret) {
        size_t i = *pos;
        uint64_t v = 0;

        if (i >= n || buf[i] < '0' || buf[i] > '9')
                return -EBADMSG;
        for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) {
                if (i - *pos >= 19)
                        return -EBADMSG;
                v = v * 10 + (uint64_t)(buf[i] - '0');
        }
        if (i >= n || (buf[i] != ',' && buf[i] != ';'))
                return -EBADMSG;
        *pos = i;
        *ret = v;
        return 0;
}

int kmsg_parse_record(const char *buf, size_t n, KmsgRecord *ret) {
        uint64_t pri, seq, usec;
        size_t pos = 0, end;
        const char *semi, *nl;

        if (!buf)
                return -EBADMSG;
        if (parse_number(buf, n, &pos, &pri) < 0 || buf[pos++] != ',' || pri > UINT32_MAX)
                return -EBADMSG;
        if (parse_number(buf, n, &pos, &seq) < 0 || buf[pos++] != ',')
                return -EBADMSG;
        if (parse_number(buf, n, &pos, &usec) < 0 || buf[pos++] != ',')
                return -EBADMSG;
        /* FLAGS and whatever later kernels add (",caller=T1") end at ';'. */
        semi = memchr(buf + pos, ';', n - pos);
        if (!semi)
                return -EBADMSG;
        pos = (size_t)(semi - buf) + 1;
        nl = memchr(buf + pos, '\n', n - pos);
        if (!nl)
                return -EBADMSG;
        end = (size_t)(nl - buf);
        *ret = (KmsgRecord){
                .facility = (unsigned)(pri >> 3),
                .level = (unsigned)(pri & 7),
                .seq = seq,
                .usec = usec,
                .message = buf + pos,
                .message_len = end - pos,
        };
        return 0;
}

bool kmsg_record_is_kernel(const KmsgRecord *r, const char *message) {
        size_t len = strlen(message);

        return r->facility == 0 && r->message_len == len && memcmp(r->message, message, len) == 0;
}
