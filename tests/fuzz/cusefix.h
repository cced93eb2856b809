/* cusefix.h - the CUSE hub with all four devices on fake kernels, driven on
 * the fuzzer's own thread, for fuzz-cuse and fuzz-write.
 *
 * A CuseFix is a Store, Crng and CuseHub, each device on its own FakeKernel
 * (tests/lib/fakekernel.h) and through CUSE_INIT. Making one costs
 * milliseconds, so one is kept between inputs, put back after each into one
 * of two states (CRNG seeded or not; no files, no waiting reads, an empty
 * store) or made afresh when that cannot be done: an input reproduces on
 * its own, but for the CRNG's output bytes. The harness sends requests as
 * the kernel would (valid fh and kh, sizes within max_read/max_write,
 * ioctls unrestricted with their retry rounds served from a "user
 * memory"), then cusefix_settle() lets the devices process everything and
 * checks every reply against what a caller may rely on (DESIGN §3):
 *   - exactly one reply per request, and none the kernel would reject
 *     (fk_violations() stays 0); at the end of an input (readers gone, or
 *     after cusehub_shutdown()) nothing is left waiting;
 *   - /dev/truerandom: writes fail EPERM; reads return 1..n bytes, each
 *     store block to one reader once, unaltered;
 *   - drop-ins: writes are accepted whole; /dev/random gives no bytes before
 *     the CRNG is seeded; urandom and null never make a reader wait; null
 *     reads are zeros;
 *   - ioctls: privileged ones answer EPERM exactly to unprivileged callers;
 *     the retry dance ends within three rounds; RNDGETENTCNT is in range;
 *   - the hub's statistics agree with the open files and waiting reads,
 *     and it asks for blocks exactly while a TRNG reader waits or the CRNG
 *     needs a seed, telling the loop (demand callback) whenever that
 *     changes by a request.
 * Any broken promise aborts (FUZZ_CHECK), so libFuzzer keeps the input.
 * Flow: harness -> [cusefix] -> fakekernel -> libfuse -> cuse handlers. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuse/cusedev.h"
#include "fakekernel.h"

#define CUSEFIX_FILES 8
#define CUSEFIX_REQUESTS 32
/* Big enough for struct rand_pool_info with the largest buffer accepted. */
#define CUSEFIX_USER_SIZE (8 + 65536)
#define CUSEFIX_MAX_PARKED 4
#define CUSEFIX_GROUP 1000

typedef struct CuseFix CuseFix;

/* The callers a request may come from, by a byte of the input. */
typedef enum CuseFixCaller {
        CUSEFIX_PRIV,      /* pid with CAP_SYS_ADMIN in the fake /proc */
        CUSEFIX_UNPRIV,    /* pid without it */
        CUSEFIX_ROOT_GONE, /* uid 0, its pid gone: unprivileged (fail closed) */
        CUSEFIX_OTHER_NS,  /* uid 1001 from another pid namespace (pid 0) */
        _CUSEFIX_CALLER_MAX,
} CuseFixCaller;

/* Makes the fake /proc once per process; call from LLVMFuzzerInitialize. */
void cusefix_setup(void);

/* The hub with its four devices through CUSE_INIT, no file open, an empty
 * store, and the CRNG seeded or not. */
CuseFix *cusefix_begin(bool seeded);
/* Ends an input. If the hub can be put back as it began (one with an
 * unseeded CRNG that got credit cannot), the readers
 * go away (their reads end EINTR), close their files, and it is kept for a
 * later cusefix_begin(); else it shuts down as on SIGTERM (waiting reads
 * end EIO), the files close and it is freed. Either way every request must
 * have had its one reply. */
void cusefix_end(CuseFix *fx);

/* Processes and answers until nothing moves, checking each reply. */
void cusefix_settle(CuseFix *fx);

/* Requests, as the kernel sends them. `file` picks one of the device's open
 * files (modulo the open ones); each returns false when there was nothing
 * to send it to. */
bool cusefix_open(CuseFix *fx, CuseDevKind kind, CuseFixCaller caller, int flags);
bool cusefix_read(CuseFix *fx, CuseDevKind kind, unsigned file, uint32_t size, bool toggle_nonblock);
bool cusefix_write(CuseFix *fx, CuseDevKind kind, unsigned file, const void *data, uint32_t len);
bool cusefix_release(CuseFix *fx, CuseDevKind kind, unsigned file);
bool cusefix_poll(CuseFix *fx, CuseDevKind kind, unsigned file, bool schedule, uint32_t events);
/* The first round carries in/in_len and out_size as given (the kernel's
 * first round of an unrestricted ioctl is empty); retries are then served
 * from the user memory (cusefix_user()). compat: a 32-bit caller. */
bool cusefix_ioctl(CuseFix *fx, CuseDevKind kind, unsigned file, uint32_t cmd, bool compat, const void *in,
                   uint32_t in_len, uint32_t out_size);
uint8_t *cusefix_user(CuseFix *fx);
/* INTERRUPT for one of the device's waiting requests. */
bool cusefix_interrupt(CuseFix *fx, CuseDevKind kind, unsigned pick);
/* INTERRUPT as a race leaves it: for the request answered last (late), or
 * for the request about to be sent next (early). */
bool cusefix_interrupt_stray(CuseFix *fx, CuseDevKind kind, bool early);
/* Any other opcode with any body (opcodes that carry a file handle are
 * left to the calls above: the kernel only sends handles it was given). */
bool cusefix_other(CuseFix *fx, CuseDevKind kind, uint32_t opcode, uint64_t nodeid, CuseFixCaller caller,
                   const void *body, size_t len);

/* What the daemon's loop does: blocks arrive in the store (then the pump),
 * the TRNG closes or opens, a reseed is asked for, the bound changes. */
void cusefix_put_blocks(CuseFix *fx, unsigned n);
void cusefix_set_trng_open(CuseFix *fx, bool open);
void cusefix_request_reseed(CuseFix *fx);
void cusefix_set_max_parked(CuseFix *fx, unsigned max_parked);

/* The device's negotiated max_write (the kernel splits writes to it). */
uint32_t cusefix_max_write(CuseFix *fx, CuseDevKind kind);
bool cusefix_seeded(const CuseFix *fx);
/* The value of the last RNDGETENTCNT answered on kind, or -1. */
int cusefix_last_entropy_count(const CuseFix *fx, CuseDevKind kind);
