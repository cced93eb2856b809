/* fuzz-write.c - the write path: whatever any process writes to the devices.
 *
 * Every device is opened read-write once per kind of caller; then each step
 * of the input is a write: one byte (device in bits 0-1, caller in bits
 * 2-3, bit 4: grow the write to max_write with zeros, bit 5: read urandom
 * after it), a 16-bit length and the data.
 * Checks, besides every reply's (cusefix.h): /dev/truerandom refuses every
 * write with EPERM; the drop-ins and null take each write whole; and writes
 * are mixed but never credited: after them the CRNG is still unseeded,
 * RNDGETENTCNT on /dev/random reads 0, and a non-blocking read of it gets
 * EAGAIN (a read with bytes before seeding is itself a failed check).
 * Flow: libFuzzer -> [harness] -> cusefix -> fakekernel -> cuse handlers. */
#include <fcntl.h>
#include <linux/random.h>
#include <stdint.h>

#include "cusefix.h"
#include "fuzz.h"

#define STEPS_MAX 256

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        cusefix_setup();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static uint8_t buf[32 * 4096];
        FuzzInput in = { data, size };
        CuseFix *fx = cusefix_begin(false);

        /* File i of each device belongs to caller i. */
        for (int k = 0; k < _CUSEDEV_KIND_MAX; k++)
                for (int c = 0; c < _CUSEFIX_CALLER_MAX; c++)
                        FUZZ_CHECK(cusefix_open(fx, (CuseDevKind) k, (CuseFixCaller) c, O_RDWR));
        cusefix_settle(fx);

        for (unsigned i = 0; i < STEPS_MAX && !fuzz_empty(&in); i++) {
                uint8_t b = fuzz_u8(&in);
                CuseDevKind kind = (CuseDevKind) (b & 3);
                uint32_t max = cusefix_max_write(fx, kind);
                const uint8_t *p;
                size_t n;

                p = fuzz_bytes(&in, fuzz_u16(&in) % (max + 1), &n);
                if (n > 0)
                        memcpy(buf, p, n);
                if (b & 0x10) {
                        memset(buf + n, 0, max - n);
                        n = max;
                }
                FUZZ_CHECK(cusefix_write(fx, kind, (b >> 2) & 3, buf, (uint32_t) n));
                if (b & 0x20)
                        FUZZ_CHECK(cusefix_read(fx, CUSEDEV_URANDOM, 0, 64, false));
                cusefix_settle(fx);
        }

        FUZZ_CHECK(!cusefix_seeded(fx));
        FUZZ_CHECK(cusefix_ioctl(fx, CUSEDEV_RANDOM, (unsigned) CUSEFIX_UNPRIV, RNDGETENTCNT, false, NULL, 0, 0));
        FUZZ_CHECK(cusefix_read(fx, CUSEDEV_RANDOM, (unsigned) CUSEFIX_UNPRIV, 16, true));
        cusefix_settle(fx);
        FUZZ_CHECK(cusefix_last_entropy_count(fx, CUSEDEV_RANDOM) == 0);
        cusefix_end(fx);
        return 0;
}
