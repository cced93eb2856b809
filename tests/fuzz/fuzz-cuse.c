/* fuzz-cuse.c - the CUSE request path: a random stream of well-framed FUSE
 * messages to the real device handlers, mixed with what the daemon's loop
 * does between them.
 *
 * Input: a byte choosing whether the CRNG starts seeded, then steps of one
 * byte each (device in the low 2 bits, action above) followed by the
 * action's arguments. Actions: open, read, write, release, ioctl (the
 * kernel's dance, or a first round with arbitrary data), poll, interrupt
 * (of a waiting read, or stray: late or early), any other opcode, and the
 * loop's side: blocks into the store, TRNG closed/open, reseed request,
 * parking bound. Every step is followed by a settle that checks each reply
 * (cusefix.h lists the promises); at the end everything still waiting must
 * get its one reply (EINTR as its reader goes away, or EIO at SIGTERM when
 * the hub cannot be reused). SIGTERM is not a step: a hub that saw it is
 * made anew for the next input, which would cost most of the run time.
 * Flow: libFuzzer -> [harness] -> cusefix -> fakekernel -> cuse handlers. */
#include <fcntl.h>
#include <linux/random.h>
#include <stdint.h>

#include "cusefix.h"
#include "fuzz.h"

#define STEPS_MAX 256
#define IOCTL_USER_BYTES 64U

enum {
        ACT_OPEN,
        ACT_READ,
        ACT_WRITE,
        ACT_RELEASE,
        ACT_IOCTL,
        ACT_IOCTL_RAW,
        ACT_POLL,
        ACT_INTERRUPT,
        ACT_INTERRUPT_STRAY,
        ACT_OTHER,
        ACT_BLOCKS,
        ACT_TRNG_OPEN,
        ACT_RESEED,
        ACT_MAX_PARKED,
        _ACT_MAX,
};

static const unsigned commands[] = {
        RNDGETENTCNT, RNDADDTOENTCNT, RNDGETPOOL, RNDADDENTROPY, RNDZAPENTCNT, RNDCLEARPOOL, RNDRESEEDCRNG,
};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        cusefix_setup();
        return 0;
}

static uint32_t pick_command(FuzzInput *in) {
        uint8_t b = fuzz_u8(in);

        return b < 0xf0 ? commands[b % (sizeof(commands) / sizeof(commands[0]))] : fuzz_u32(in);
}

/* The caller's memory: its first bytes from the input (the rand_pool_info
 * header and some data), zeros after. */
static void fill_user(CuseFix *fx, FuzzInput *in) {
        uint8_t *user = cusefix_user(fx);

        memset(user, 0, CUSEFIX_USER_SIZE);
        fuzz_fill(in, user, 8 + fuzz_u8(in) % IOCTL_USER_BYTES);
}

static void step(CuseFix *fx, FuzzInput *in) {
        uint8_t b = fuzz_u8(in), ctl;
        CuseDevKind kind = (CuseDevKind) (b & 3);
        const uint8_t *data;
        size_t n;

        switch ((b >> 2) % _ACT_MAX) {
        case ACT_OPEN:
                ctl = fuzz_u8(in);
                cusefix_open(fx, kind, (CuseFixCaller) ((ctl >> 3) % _CUSEFIX_CALLER_MAX),
                             ((ctl & 3) == 3 ? O_RDONLY : (ctl & 3)) | (ctl & 4 ? O_NONBLOCK : 0));
                break;
        case ACT_READ: {
                uint16_t size;

                ctl = fuzz_u8(in);
                size = fuzz_u16(in);
                /* Mostly small reads; large ones up to the 32-page limit. */
                cusefix_read(fx, kind, ctl & 7, size & 0x8000 ? ((uint32_t) (size & 0x7fff) + 1) * 4 : size & 0x3ff,
                             ctl & 8);
                break;
        }
        case ACT_WRITE:
                ctl = fuzz_u8(in);
                data = fuzz_bytes(in, fuzz_u16(in) % 2048, &n);
                cusefix_write(fx, kind, ctl & 7, data, (uint32_t) n);
                break;
        case ACT_RELEASE:
                cusefix_release(fx, kind, fuzz_u8(in));
                break;
        case ACT_IOCTL: {
                uint32_t cmd;

                ctl = fuzz_u8(in);
                cmd = pick_command(in);
                fill_user(fx, in);
                cusefix_ioctl(fx, kind, ctl & 7, cmd, ctl & 8, NULL, 0, 0);
                break;
        }
        case ACT_IOCTL_RAW: {
                uint32_t cmd, out_size;

                ctl = fuzz_u8(in);
                cmd = pick_command(in);
                fill_user(fx, in);
                out_size = fuzz_u8(in);
                data = fuzz_bytes(in, fuzz_u8(in), &n);
                cusefix_ioctl(fx, kind, ctl & 7, cmd, ctl & 8, data, (uint32_t) n, out_size);
                break;
        }
        case ACT_POLL:
                ctl = fuzz_u8(in);
                cusefix_poll(fx, kind, ctl & 7, ctl & 8, fuzz_u16(in));
                break;
        case ACT_INTERRUPT:
                cusefix_interrupt(fx, kind, fuzz_u8(in));
                break;
        case ACT_INTERRUPT_STRAY:
                cusefix_interrupt_stray(fx, kind, fuzz_u8(in) & 1);
                break;
        case ACT_OTHER: {
                uint8_t op = fuzz_u8(in), caller = fuzz_u8(in);
                uint64_t nodeid = fuzz_u8(in);

                data = fuzz_bytes(in, fuzz_u8(in), &n);
                cusefix_other(fx, kind, op, nodeid,
                              (CuseFixCaller) (caller % _CUSEFIX_CALLER_MAX), data, n);
                break;
        }
        case ACT_BLOCKS:
                cusefix_put_blocks(fx, 1 + fuzz_u8(in) % 8);
                break;
        case ACT_TRNG_OPEN:
                cusefix_set_trng_open(fx, fuzz_u8(in) & 1);
                break;
        case ACT_RESEED:
                cusefix_request_reseed(fx);
                break;
        case ACT_MAX_PARKED:
                cusefix_set_max_parked(fx, 1 + fuzz_u8(in) % 8);
                break;
        }
        cusefix_settle(fx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        FuzzInput in = { data, size };
        /* The CRNG starts unseeded 1 time in 8: an unseeded start that
         * seeds costs a fresh fixture (milliseconds) for the next one. */
        CuseFix *fx = cusefix_begin((fuzz_u8(&in) & 7) != 0);

        for (unsigned i = 0; i < STEPS_MAX && !fuzz_empty(&in); i++)
                step(fx, &in);
        cusefix_end(fx);
        return 0;
}
