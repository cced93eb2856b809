/* fuzz-egdwire.c - the EGD request parser on arbitrary bytes, as a peer
 * sends them: a stream cut anywhere, taken request by request as the EGD
 * server does. Checks: every answer is -EBADMSG (nothing written), 0 (more
 * needed) or a length within what was given; a write's data lies inside
 * the buffer and its length is what its header says.
 * Flow: libFuzzer -> [harness] -> egdwire. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "proto/egdwire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *buf = malloc(size ? size : 1);
        size_t off = 0;

        FUZZ_CHECK(buf);
        memcpy(buf, data, size);
        while (off < size) {
                EgdRequest rq, untouched;
                ssize_t n;

                memset(&rq, 0x5a, sizeof(rq));
                untouched = rq;
                n = egd_parse(buf + off, size - off, &rq);
                if (n <= 0) {
                        FUZZ_CHECK(n == 0 || n == -EBADMSG);
                        FUZZ_CHECK(memcmp(&rq, &untouched, sizeof(rq)) == 0);
                        break;
                }
                FUZZ_CHECK((size_t) n <= size - off && (size_t) n <= EGD_REQUEST_MAX);
                FUZZ_CHECK(rq.command == buf[off]);
                if (rq.command == EGD_CMD_WRITE) {
                        FUZZ_CHECK(rq.data == buf + off + 4);
                        FUZZ_CHECK((size_t) n == 4 + rq.len);
                }
                if (rq.command == EGD_CMD_READ || rq.command == EGD_CMD_READ_NOWAIT)
                        FUZZ_CHECK(n == 2 && rq.len == buf[off + 1]);
                off += (size_t) n;
        }
        free(buf);
        return 0;
}
