/* source-tpm.c - the TPM 2.0 RNG: TPM2_GetRandom through the kernel's
 * resource manager, /dev/tpmrm0.
 *
 * Library: the TPM2 Software Stack's System API (libtss2-sys) over a TCTI
 * chosen at run time by libtss2-tctildr ("device:/dev/tpmrm0" by default;
 * "swtpm:path=..." for tests). Not ESYS: GetRandom needs no session, and
 * ESYS would link libcrypto in for its session HMACs; its synchronous call
 * blocks without a time limit by default and resubmits a busy answer itself
 * with no pause. The SAPI's ExecuteAsync/ExecuteFinish(timeout) lets this
 * source bound every wait and hand "busy" up to the collector, which backs
 * off. Not the raw command: the stack validates each answer (tag, sizes),
 * handles the kernel's partial reads and speaks the swtpm and abrmd
 * transports; a TPM response parser of our own is code to get wrong.
 *
 * Reads: each GetRandom asks for TPM_REQUEST_BYTES, the one size every TPM
 * 2.0 answers in full (the largest digest it implements, SHA-256 at least;
 * TPM 2.0 Part 3, 16.1). One read() sends commands until n samples are in,
 * but starts none after TPM_FILL_USEC and waits at most TPM_WAIT_USEC in
 * all: it returns within ~1 s whatever the TPM does. A command still
 * unanswered then stays in flight and the next read() waits for it again
 * (-EAGAIN until then). A busy TPM (a warning: TPM_RC_RETRY, YIELDED,
 * TESTING...) is -EAGAIN at once, never retried here. Anything else is a
 * device error (source-tpm.h) and sticks: every later read() returns it,
 * for the stack's state after a failed exchange is not trustworthy; a new
 * open() starts afresh. A command unanswered for TPM_STALL_USEC is
 * -ETIMEDOUT. The swtpm and mssim TCTIs ignore timeouts (they block until
 * the simulator answers or dies); the device TCTI, the one for production,
 * polls with them.
 *
 * Self-test at open (selftest.h): SELFTEST_WORDS 64-bit words from the
 * TPM, none repeated, none all zeros or all ones, or open() is -EDOM with
 * the verdict in SourceParams.selftest. A TPM answering a constant, a
 * counter of repeated words, or the same buffer twice fails it. While it
 * runs, a full answer equal to the previous one is -EBADMSG (the
 * continuous test of FIPS 140-2 4.9.2).
 *
 * Credit: none by default (its row: credit 0; docs/ENTROPY.md). GetRandom
 * hands out a DRBG's output; the DRBG is seeded by the TPM's own noise
 * source but, in TCG's reference implementation, reseeded only every 2^20
 * requests, so its output holds far less fresh entropy than its length.
 * An operator who can justify a credit from the TPM's certification sets
 * one; max_credit() has no opinion.
 *
 * Secrets: the answers pass through the SAPI context's buffer and the
 * previous answer is kept for the continuous test: both live in
 * secret_alloc()'d memory, erased when the source closes.
 * Flow: [source] -> health -> conditioner -> store. */
#include "source.h"
#include "source-tpm.h"
#include "hwrng.h"
#include "secret.h"
#include "util/time-util.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <tss2/tss2_sys.h>
#include <tss2/tss2_tctildr.h>

#define TPM_REQUEST_BYTES 32U
#define TPM_WAIT_USEC (900U * USEC_PER_MSEC)
#define TPM_FILL_USEC (250U * USEC_PER_MSEC)
/* Longer than the kernel's longest TPM command timeout (TPM_LONG_LONG,
 * 300 s: another user's key generation may run ahead of ours in the
 * resource manager) plus GetRandom's own (2 s). */
#define TPM_STALL_USEC (330U * USEC_PER_SEC)
/* Answers shorter than this are not compared with the previous one: two
 * equal 16-byte answers from a working TPM have probability 2^-128. */
#define TPM_REPEAT_MIN 16U
/* The self-test's time at open: a working TPM gives its 512 bytes in
 * 16 commands, ~0.5 s on a slow chip. Past it, open() gives up: -ETIMEDOUT
 * with a command unanswered, -EAGAIN when the TPM said busy throughout.
 * Busy answers are asked again TPM_OPEN_PAUSE_USEC later. */
#define TPM_OPEN_USEC (3U * USEC_PER_SEC)
#define TPM_OPEN_PAUSE_USEC (10U * USEC_PER_MSEC)

typedef struct Tpm {
        TSS2_TCTI_CONTEXT *tcti;
        TSS2_SYS_CONTEXT *sys;       /* secret_alloc(): its buffer holds answers */
        bool inflight;               /* a GetRandom was sent, its answer not read */
        bool continuous;             /* compare each answer with the previous */
        usec_t sent;                 /* when the command in flight was sent */
        int error;                   /* sticky -errno of a device error */
        size_t last_size;
        uint8_t last[TPM_REQUEST_BYTES]; /* the previous answer */
} Tpm;

/* sodium_malloc() puts the region's end against a guard page, so its start
 * is aligned only as far as the size is: keep sizes multiples of 16. */
static size_t aligned_size(size_t n) {
        return (n + 15U) & ~(size_t) 15U;
}

static Tpm *tpm_free(Tpm *t) {
        if (!t)
                return NULL;
        if (t->sys) {
                Tss2_Sys_Finalize(t->sys);
                secret_free(t->sys);
        }
        if (t->tcti)
                Tss2_TctiLdr_Finalize(&t->tcti);
        secret_free(t);
        return NULL;
}
DEFINE_FREEP(Tpm, tpm_free);

/* ---- response codes ----------------------------------------------------- */

static int tpm_rc_errno(uint32_t rc) {
        /* Format one (bit 7): an error about a parameter, handle or session. */
        if (rc & TPM2_RC_FMT1)
                return -EPROTO;
        if ((rc & TPM2_RC_WARN) == TPM2_RC_WARN)
                return -EAGAIN;
        if (rc == TPM2_RC_INITIALIZE)
                return -ENXIO;
        if (rc == TPM2_RC_FAILURE)
                return -EIO;
        return -EPROTO;
}

int source_tpm_errno(uint32_t rc) {
        uint32_t layer = rc & TSS2_RC_LAYER_MASK;

        if (rc == TSS2_RC_SUCCESS)
                return 0;
        switch (layer) {
        case TSS2_TPM_RC_LAYER:
        case TSS2_RESMGR_TPM_RC_LAYER:
                return tpm_rc_errno(rc & ~TSS2_RC_LAYER_MASK);
        case TSS2_TCTI_RC_LAYER:
                if (rc == TSS2_TCTI_RC_TRY_AGAIN)
                        return -EAGAIN;
                if (rc == TSS2_TCTI_RC_IO_ERROR || rc == TSS2_TCTI_RC_NO_CONNECTION)
                        return -EIO;
                return rc == TSS2_TCTI_RC_MALFORMED_RESPONSE ? -EBADMSG : -EPROTO;
        case TSS2_RESMGR_RC_LAYER:
                return -EIO;
        case TSS2_SYS_RC_LAYER:
                /* What a TPM 1.2-style "TPM_FAIL" answer becomes: QEMU's TPM
                 * front end sends one when its backend (swtpm) is gone. */
                if (rc == TSS2_SYS_RC_GENERAL_FAILURE)
                        return -EIO;
                if (rc == TSS2_SYS_RC_MALFORMED_RESPONSE || rc == TSS2_SYS_RC_INSUFFICIENT_RESPONSE ||
                    rc == TSS2_SYS_RC_INSUFFICIENT_CONTEXT)
                        return -EBADMSG;
                return -EPROTO;
        case TSS2_MU_RC_LAYER:
                return -EBADMSG;
        default:
                return -EPROTO;
        }
}

int source_tpm_device_index(const char *path) {
        const char *base;

        if (!path)
                return -EINVAL;
        base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (strncmp(base, "tpmrm", 5) == 0)
                return tpm_number_parse(base + 5);
        if (strncmp(base, "tpm", 3) == 0)
                return tpm_number_parse(base + 3);
        return -EINVAL;
}

/* ---- one GetRandom ------------------------------------------------------ */

static int tpm_send(Tpm *t, size_t n) {
        TSS2_RC rc;

        rc = Tss2_Sys_GetRandom_Prepare(t->sys, (UINT16) MIN(n, (size_t) TPM_REQUEST_BYTES));
        if (rc == TSS2_RC_SUCCESS)
                rc = Tss2_Sys_ExecuteAsync(t->sys);
        if (rc != TSS2_RC_SUCCESS)
                return source_tpm_errno(rc);
        t->inflight = true;
        t->sent = now_usec(CLOCK_MONOTONIC);
        return 0;
}

/* The answer's bytes into buf (at most n), checked against the previous. */
static ssize_t tpm_take(Tpm *t, const TPM2B_DIGEST *d, uint8_t *buf, size_t n) {
        size_t k;

        /* TPM 2.0 Part 3, 16.1: the TPM may answer short, never long. */
        if (d->size > TPM_REQUEST_BYTES)
                return -EBADMSG;
        /* A TPM that has nothing now: the collector backs off. */
        if (d->size == 0)
                return -EAGAIN;
        if (t->continuous && d->size >= TPM_REPEAT_MIN && d->size == t->last_size &&
            sodium_memcmp(d->buffer, t->last, d->size) == 0)
                return -EBADMSG;
        memcpy(t->last, d->buffer, d->size);
        t->last_size = d->size;
        k = MIN(n, (size_t) d->size);
        memcpy(buf, d->buffer, k);
        return (ssize_t) k;
}

/* Waits up to wait for the answer of the command in flight. */
static ssize_t tpm_receive(Tpm *t, uint8_t *buf, size_t n, usec_t wait) {
        int32_t ms = (int32_t) MAX(wait / USEC_PER_MSEC, (usec_t) 1);
        TPM2B_DIGEST d = { .size = 0 };
        ssize_t r;
        TSS2_RC rc;

        rc = Tss2_Sys_ExecuteFinish(t->sys, ms);
        if (rc == TSS2_TCTI_RC_TRY_AGAIN) {
                if (now_usec(CLOCK_MONOTONIC) - t->sent >= TPM_STALL_USEC)
                        return -ETIMEDOUT;
                return -EAGAIN;
        }
        t->inflight = false;
        if (rc == TSS2_RC_SUCCESS)
                rc = Tss2_Sys_GetRandom_Complete(t->sys, &d);
        r = rc == TSS2_RC_SUCCESS ? tpm_take(t, &d, buf, n) : source_tpm_errno(rc);
        sodium_memzero(&d, sizeof(d));
        return r;
}

static ssize_t tpm_read(void *state, uint8_t *buf, size_t n) {
        Tpm *t = state;
        usec_t start = now_usec(CLOCK_MONOTONIC), elapsed = 0;
        ssize_t r = 0;
        size_t got = 0;

        if (n == 0)
                return -EINVAL;
        if (t->error < 0)
                return t->error;
        while (got < n && elapsed < TPM_WAIT_USEC) {
                if (got > 0 && elapsed >= TPM_FILL_USEC)
                        break;
                if (!t->inflight) {
                        r = tpm_send(t, n - got);
                        if (r < 0)
                                break;
                }
                r = tpm_receive(t, buf + got, n - got, TPM_WAIT_USEC - elapsed);
                if (r < 0)
                        break;
                got += (size_t) r;
                elapsed = now_usec(CLOCK_MONOTONIC) - start;
        }
        if (r < 0 && r != -EAGAIN)
                t->error = (int) r;
        if (got > 0)
                return (ssize_t) got;
        return r < 0 ? r : -EAGAIN;
}

/* ---- open, self-test ---------------------------------------------------- */

static int tpm_selftest(Tpm *t, bool induce, SelftestResult *ret) {
        uint64_t words[SELFTEST_WORDS];
        SECRET_GUARD_(words, words);
        struct timespec pause = usec_to_timespec(TPM_OPEN_PAUSE_USEC);
        usec_t start = now_usec(CLOCK_MONOTONIC);
        SelftestResult result;
        size_t have = 0;

        while (have < sizeof(words)) {
                ssize_t r = tpm_read(t, (uint8_t *) words + have, sizeof(words) - have);

                if (r > 0) {
                        have += (size_t) r;
                        continue;
                }
                if (r != -EAGAIN)
                        return (int) r;
                if (now_usec(CLOCK_MONOTONIC) - start >= TPM_OPEN_USEC)
                        return t->inflight ? -ETIMEDOUT : -EAGAIN;
                if (!t->inflight)
                        (void) clock_nanosleep(CLOCK_MONOTONIC, 0, &pause, NULL);
        }
        if (induce)
                for (size_t i = 1; i < SELFTEST_WORDS; i++)
                        words[i] = words[0];
        (void) selftest_words(words, SELFTEST_WORDS, &result);
        if (ret)
                *ret = result;
        return result.reason == SELFTEST_PASSED ? 0 : -EDOM;
}

/* The TCTI: p->tcti as given, else the device path's "device:PATH". */
static int tpm_conf(const SourceParams *p, char *ret, size_t size) {
        const char *path = p && p->path ? p->path : SOURCE_TPM_PATH;
        struct stat st;

        if (p && p->tcti) {
                if (snprintf(ret, size, "%s", p->tcti) >= (int) size)
                        return -ENAMETOOLONG;
                return 0;
        }
        /* No node: no TPM (or no driver) on this machine. */
        if (stat(path, &st) < 0)
                return errno == ENOENT || errno == ENOTDIR ? -ENODEV : -errno;
        if (snprintf(ret, size, "device:%s", path) >= (int) size)
                return -ENAMETOOLONG;
        return 0;
}

/* What the loader's refusal means for the source. */
static int tpm_init_errno(TSS2_RC rc) {
        if (rc == TSS2_TCTI_RC_IO_ERROR || rc == TSS2_TCTI_RC_NO_CONNECTION)
                return -ENODEV;
        if (rc == TSS2_TCTI_RC_BAD_VALUE)
                return -EINVAL;
        if (rc == TSS2_TCTI_RC_MEMORY)
                return -ENOMEM;
        /* No such TCTI library, or one that would not load. */
        return -ENOPKG;
}

static int tpm_open(const SourceParams *p, void **ret_state) {
        _cleanup_(tpm_freep) Tpm *t = NULL;
        TSS2_ABI_VERSION abi = TSS2_ABI_VERSION_CURRENT;
        char conf[PATH_MAX + 16];
        size_t size;
        TSS2_RC rc;
        int r;

        r = tpm_conf(p, conf, sizeof(conf));
        if (r < 0)
                return r;
        /* secret_alloc() needs it; the callers of a source need not know. */
        if (sodium_init() < 0)
                return -EIO;
        t = secret_alloc(aligned_size(sizeof(*t)));
        if (!t)
                return -ENOMEM;
        rc = Tss2_TctiLdr_Initialize(conf, &t->tcti);
        if (rc != TSS2_RC_SUCCESS) {
                t->tcti = NULL;
                return tpm_init_errno(rc);
        }
        size = Tss2_Sys_GetContextSize(0);
        t->sys = secret_alloc(aligned_size(size));
        if (!t->sys)
                return -ENOMEM;
        rc = Tss2_Sys_Initialize(t->sys, size, t->tcti, &abi);
        if (rc != TSS2_RC_SUCCESS) {
                secret_free(t->sys);
                t->sys = NULL;
                return -EPROTO;
        }
        r = tpm_selftest(t, p && p->selftest_induce, p ? p->selftest : NULL);
        if (r < 0)
                return r;
        t->continuous = true;
        *ret_state = TAKE_PTR(t);
        return 0;
}

static uint32_t tpm_max_credit(void *state) {
        return UINT32_MAX;
}

static void tpm_close(void *state) {
        tpm_free(state);
}

const SourceOps source_tpm = {
        .name = "tpm",
        .help = "the TPM 2.0 RNG, TPM2_GetRandom through /dev/tpmrm0",
        .credit = SOURCE_CREDIT_FIXED,
        /* A DRBG's output: credited only where configured (docs/ENTROPY.md). */
        .defaults = { .enable = true, .credit_mbits = 0, .params = { .path = SOURCE_TPM_PATH } },
        .keys = {
                { "path", SOURCE_KEY_PATH, offsetof(SourceParams, path), 0, 0 },
        },
        .open = tpm_open,
        .read = tpm_read,
        .max_credit = tpm_max_credit,
        .close = tpm_close,
};
