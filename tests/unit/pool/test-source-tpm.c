/* test-source-tpm.c - the tpm source against a TPM that misbehaves on cue.
 *
 * A fake TCTI (the TSS2 transport interface: transmit a command, receive
 * its answer) stands in for the TPM: the TCTI loader is wrapped
 * (-Wl,--wrap=Tss2_TctiLdr_Initialize), so the source's own SAPI calls,
 * marshalling and checks run for real against answers built here. The
 * monotonic clock and the source's pauses are wrapped too, so time passes
 * when the test says so: nothing here depends on how fast the machine is.
 *
 * What a user would notice: bytes come through unchanged; the self-test
 * refuses constant, zero, one-filled and repeated answers; a busy TPM is
 * "try later" after one command, never a loop; a TPM that never answers
 * costs each read one bounded wait and, in the end, -ETIMEDOUT; one that
 * disappears or answers garbage is a lasting, named error; an open with no
 * TPM is -ENODEV. test-source-tpm-swtpm.c does the same against swtpm. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <tss2/tss2_tcti.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_tpm2_types.h>

#include "pool/source.h"
#include "pool/source-tpm.h"

#define ANSWER_MAX 64U
#define SCRIPT_MAX 8U

/* ---- the fake TPM ------------------------------------------------------ */

typedef enum Mode {
        MODE_RANDOM,    /* a xorshift stream */
        MODE_CONSTANT,  /* every byte `constant` */
        MODE_REPEAT,    /* every answer the first one again */
} Mode;

static struct {
        Mode mode;
        uint8_t constant;
        uint64_t seed;
        size_t answer_size;          /* 0: what was asked */
        bool empty;                  /* answer with no bytes */
        bool hang;                   /* never answer */
        uint16_t tag;                /* the responses' tag; 0: TPM2_ST_NO_SESSIONS */
        bool oversize;               /* more bytes than asked */
        long fail_after;             /* >= 0: transmit fails after this many commands */
        uint32_t script[SCRIPT_MAX]; /* response codes for the next commands */
        unsigned script_len;
        uint8_t first[ANSWER_MAX];
        bool have_first;
        unsigned requested;          /* bytes asked by the command in flight */
        bool pending;
        unsigned transmits, receives, finalized, loads;
        int32_t max_timeout;
        char conf[PATH_MAX];         /* what the loader was asked for */
} tpm;

static TSS2_TCTI_CONTEXT_COMMON_V2 fake_tcti;

static uint8_t stream_byte(uint64_t *s) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return (uint8_t) (*s >> 24);
}

static void put_be16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) (v >> 8);
        p[1] = (uint8_t) v;
}

static void put_be32(uint8_t *p, uint32_t v) {
        put_be16(p, (uint16_t) (v >> 16));
        put_be16(p + 2, (uint16_t) v);
}

static TSS2_RC fake_transmit(TSS2_TCTI_CONTEXT *ctx, size_t size, const uint8_t *cmd) {
        /* TPM2_GetRandom: tag, size 12, TPM_CC_GetRandom, bytesRequested. */
        assert_int_equal(size, 12);
        assert_int_equal((cmd[6] << 24) | (cmd[7] << 16) | (cmd[8] << 8) | cmd[9], TPM2_CC_GetRandom);
        assert_false(tpm.pending);
        if (tpm.fail_after >= 0 && tpm.transmits >= (unsigned) tpm.fail_after)
                return TSS2_TCTI_RC_IO_ERROR;
        tpm.transmits++;
        tpm.requested = (unsigned) ((cmd[10] << 8) | cmd[11]);
        tpm.pending = true;
        return TSS2_RC_SUCCESS;
}

static size_t answer_bytes(uint8_t *out) {
        size_t n = tpm.answer_size ? tpm.answer_size : tpm.requested;

        if (tpm.empty)
                return 0;
        if (tpm.oversize)
                n = tpm.requested + 8;
        assert_true(n <= ANSWER_MAX);
        if (tpm.mode == MODE_REPEAT && tpm.have_first) {
                memcpy(out, tpm.first, n);
                return n;
        }
        for (size_t i = 0; i < n; i++)
                out[i] = tpm.mode == MODE_CONSTANT ? tpm.constant : stream_byte(&tpm.seed);
        memcpy(tpm.first, out, n);
        tpm.have_first = true;
        return n;
}

/* The response to the command in flight: header, then TPM2B bytes. */
static size_t build_response(uint8_t *r) {
        uint32_t rc = TPM2_RC_SUCCESS;
        size_t n = 0;

        if (tpm.script_len > 0) {
                rc = tpm.script[0];
                memmove(tpm.script, tpm.script + 1, --tpm.script_len * sizeof(tpm.script[0]));
        }
        put_be16(r, tpm.tag ? tpm.tag : TPM2_ST_NO_SESSIONS);
        put_be32(r + 6, rc);
        if (rc == TPM2_RC_SUCCESS) {
                n = answer_bytes(r + 12);
                put_be16(r + 10, (uint16_t) n);
                n += 2;
        }
        put_be32(r + 2, (uint32_t) (10 + n));
        return 10 + n;
}

static TSS2_RC fake_receive(TSS2_TCTI_CONTEXT *ctx, size_t *size, uint8_t *buf, int32_t timeout) {
        static uint8_t response[12 + ANSWER_MAX];
        static size_t response_size;

        tpm.receives++;
        assert_true(tpm.pending);
        if (timeout > tpm.max_timeout)
                tpm.max_timeout = timeout;
        if (tpm.hang)
                return TSS2_TCTI_RC_TRY_AGAIN;
        if (!buf) {
                /* The SAPI asks the size first, then for the bytes. */
                response_size = build_response(response);
                *size = response_size;
                return TSS2_RC_SUCCESS;
        }
        assert_true(*size >= response_size);
        memcpy(buf, response, response_size);
        *size = response_size;
        tpm.pending = false;
        return TSS2_RC_SUCCESS;
}

static void fake_finalize(TSS2_TCTI_CONTEXT *ctx) {
        tpm.finalized++;
}

TSS2_RC __wrap_Tss2_TctiLdr_Initialize(const char *conf, TSS2_TCTI_CONTEXT **ret);
void __wrap_Tss2_TctiLdr_Finalize(TSS2_TCTI_CONTEXT **ctx);

/* "fake" is the fake TPM; anything else is a TPM that is not there. */
TSS2_RC __wrap_Tss2_TctiLdr_Initialize(const char *conf, TSS2_TCTI_CONTEXT **ret) {
        tpm.loads++;
        snprintf(tpm.conf, sizeof(tpm.conf), "%s", conf);
        if (strcmp(conf, "fake") != 0)
                return TSS2_TCTI_RC_IO_ERROR;
        fake_tcti = (TSS2_TCTI_CONTEXT_COMMON_V2) {
                .v1 = {
                        .magic = 0x7472756572616e64ULL,
                        .version = 2,
                        .transmit = fake_transmit,
                        .receive = fake_receive,
                        .finalize = fake_finalize,
                },
        };
        *ret = (TSS2_TCTI_CONTEXT *) &fake_tcti;
        return TSS2_RC_SUCCESS;
}

void __wrap_Tss2_TctiLdr_Finalize(TSS2_TCTI_CONTEXT **ctx) {
        assert_ptr_equal(*ctx, &fake_tcti);
        fake_finalize(*ctx);
        *ctx = NULL;
}

/* ---- the clock --------------------------------------------------------- */

static struct {
        uint64_t now_ns;    /* CLOCK_MONOTONIC as the source sees it */
        uint64_t tick_ns;   /* added at every read of it */
        unsigned pauses;
} clk;

int __real_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem);

int __wrap_clock_gettime(clockid_t id, struct timespec *ts) {
        if (id != CLOCK_MONOTONIC)
                return __real_clock_gettime(id, ts);
        clk.now_ns += clk.tick_ns;
        ts->tv_sec = (time_t) (clk.now_ns / 1000000000U);
        ts->tv_nsec = (long) (clk.now_ns % 1000000000U);
        return 0;
}

/* A pause makes its time pass, without sleeping. */
int __wrap_clock_nanosleep(clockid_t id, int flags, const struct timespec *req, struct timespec *rem) {
        clk.pauses++;
        clk.now_ns += (uint64_t) req->tv_sec * 1000000000U + (uint64_t) req->tv_nsec;
        return 0;
}

static int reset(void **state) {
        memset(&tpm, 0, sizeof(tpm));
        tpm.seed = 0x9e3779b97f4a7c15ULL;
        tpm.fail_after = -1;
        memset(&clk, 0, sizeof(clk));
        clk.now_ns = 1000000000U;
        return 0;
}

/* ---- helpers ------------------------------------------------------------ */

typedef struct Opened {
        SelftestResult selftest;
        SourceParams p;
        void *s;
} Opened;

static int open_fake(Opened *o) {
        memset(o, 0, sizeof(*o));
        o->p.tcti = "fake";
        o->p.selftest = &o->selftest;
        o->s = NULL;
        return source_tpm.open(&o->p, &o->s);
}

static void assert_selftest_refused(Opened *o) {
        assert_int_equal(open_fake(o), -EDOM);
        assert_null(o->s);
        assert_true(o->selftest.run);
        assert_int_equal(o->selftest.reason, SELFTEST_STUCK_WORD);
        assert_int_equal(o->selftest.words, SELFTEST_WORDS);
        /* The stack is let go of on the way out. */
        assert_int_equal(tpm.finalized, 1);
}

/* A lasting error: every read returns it, and none sends a command. */
static void assert_sticky(void *s, ssize_t error) {
        unsigned before = tpm.transmits;
        uint8_t buf[64];

        for (int i = 0; i < 3; i++)
                assert_int_equal(source_tpm.read(s, buf, sizeof(buf)), error);
        assert_int_equal(tpm.transmits, before);
}

/* The fake's stream from its start, to compare with what came out. */
static void expected_stream(uint8_t *buf, size_t n, size_t skip) {
        uint64_t seed = 0x9e3779b97f4a7c15ULL;

        for (size_t i = 0; i < skip; i++)
                (void) stream_byte(&seed);
        for (size_t i = 0; i < n; i++)
                buf[i] = stream_byte(&seed);
}

/* ---- working TPM ------------------------------------------------------- */

/* The self-test takes SELFTEST_WORDS words (16 commands of 32 bytes), then
 * reads hand the TPM's bytes on unchanged, in order, none lost. */
static void test_open_and_read(void **state) {
        uint8_t buf[4096], want[4096];
        Opened o;

        assert_int_equal(open_fake(&o), 0);
        assert_true(o.selftest.run);
        assert_int_equal(o.selftest.reason, SELFTEST_PASSED);
        assert_int_equal(o.selftest.words, SELFTEST_WORDS);
        assert_int_equal(tpm.transmits, SELFTEST_WORDS * 8 / 32);
        assert_string_equal(tpm.conf, "fake");

        assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), (ssize_t) sizeof(buf));
        expected_stream(want, sizeof(want), SELFTEST_WORDS * 8);
        assert_memory_equal(buf, want, sizeof(buf));
        assert_int_equal(tpm.transmits, SELFTEST_WORDS * 8 / 32 + sizeof(buf) / 32);
        /* Every wait is bounded: the read's whole budget at the most. */
        assert_true(tpm.max_timeout > 0 && tpm.max_timeout <= 1000);
        assert_int_equal(source_tpm.read(o.s, buf, 0), -EINVAL);
        source_tpm.close(o.s);
        assert_int_equal(tpm.finalized, 1);
}

/* A TPM that answers short (it may: TPM 2.0 Part 3, 16.1) still fills
 * the self-test and the reads. */
static void test_short_answers(void **state) {
        uint8_t buf[100];
        Opened o;

        tpm.answer_size = 7;
        assert_int_equal(open_fake(&o), 0);
        assert_int_equal(o.selftest.reason, SELFTEST_PASSED);
        assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), (ssize_t) sizeof(buf));
        source_tpm.close(o.s);
}

/* A read starts no command after its fill budget once it holds bytes: on
 * a slow TPM (here 100 ms per clock read) it returns what it has. */
static void test_read_budget(void **state) {
        uint8_t buf[4096];
        unsigned before;
        ssize_t r;
        Opened o;

        assert_int_equal(open_fake(&o), 0);
        clk.tick_ns = 100000000U;
        before = tpm.transmits;
        r = source_tpm.read(o.s, buf, sizeof(buf));
        assert_true(r > 0 && r < (ssize_t) sizeof(buf));
        assert_true(tpm.transmits - before <= 4);
        source_tpm.close(o.s);
}

/* ---- what the self-test refuses ----------------------------------------- */

/* All zeros, all ones (how RNGs have been seen to fail) and any other
 * constant: every word repeats the first. */
static void test_selftest_constant(void **state) {
        static const uint8_t constants[] = { 0x00, 0xff, 0xa5 };

        for (size_t i = 0; i < sizeof(constants); i++) {
                Opened o;

                reset(NULL);
                tpm.mode = MODE_CONSTANT;
                tpm.constant = constants[i];
                assert_selftest_refused(&o);
        }
}

/* The same 32 random-looking bytes twice: every word of the second answer
 * repeats one of the first. */
static void test_selftest_same_buffer(void **state) {
        Opened o;

        tpm.mode = MODE_REPEAT;
        assert_selftest_refused(&o);
}

static void test_selftest_reason_text(void **state) {
        char text[160];
        Opened o;

        tpm.mode = MODE_REPEAT;
        assert_int_equal(open_fake(&o), -EDOM);
        assert_string_equal(selftest_reason_to_string(o.selftest.reason), "stuck-word");
        selftest_describe(&o.selftest, text, sizeof(text));
        assert_non_null(strstr(text, "64 words"));
}

/* After the self-test, a full answer equal to the previous one is a
 * stuck TPM: the read fails with -EBADMSG and keeps failing. */
static void test_continuous_repeat(void **state) {
        uint8_t buf[256];
        ssize_t r;
        Opened o;

        assert_int_equal(open_fake(&o), 0);
        tpm.mode = MODE_REPEAT;
        tpm.have_first = false;
        r = source_tpm.read(o.s, buf, sizeof(buf));
        /* The first answer of the stuck TPM passes; the second is refused. */
        assert_int_equal(r, 32);
        assert_sticky(o.s, -EBADMSG);
        source_tpm.close(o.s);
}

/* ---- busy, silent, gone, garbage ---------------------------------------- */

/* TPM_RC_RETRY, YIELDED, TESTING: "try later" after one command, no retry
 * inside the read; the next read works. */
static void test_busy(void **state) {
        static const uint32_t busy[] = { TPM2_RC_RETRY, TPM2_RC_YIELDED, TPM2_RC_TESTING };
        uint8_t buf[64];
        Opened o;

        assert_int_equal(open_fake(&o), 0);
        for (size_t i = 0; i < sizeof(busy) / sizeof(busy[0]); i++) {
                unsigned before = tpm.transmits;

                tpm.script[0] = busy[i];
                tpm.script_len = 1;
                assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), -EAGAIN);
                assert_int_equal(tpm.transmits - before, 1);
                assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), (ssize_t) sizeof(buf));
        }
        source_tpm.close(o.s);
}

/* Busy at open: asked again after a pause, a bounded number of times. */
static void test_busy_at_open(void **state) {
        Opened o;

        tpm.script[0] = tpm.script[1] = tpm.script[2] = TPM2_RC_RETRY;
        tpm.script_len = 3;
        assert_int_equal(open_fake(&o), 0);
        assert_int_equal(clk.pauses, 3);
        assert_int_equal(tpm.transmits, 3 + SELFTEST_WORDS * 8 / 32);
        source_tpm.close(o.s);

        /* Busy for good: open gives up when its time is over. */
        reset(NULL);
        tpm.script_len = SCRIPT_MAX;
        for (unsigned i = 0; i < SCRIPT_MAX; i++)
                tpm.script[i] = TPM2_RC_YIELDED;
        clk.tick_ns = 400000000U;
        assert_int_equal(open_fake(&o), -EAGAIN);
        assert_true(tpm.transmits <= SCRIPT_MAX);
}

/* A TPM that never answers: each read sends nothing new while its command
 * is in flight, waits once (bounded), says -EAGAIN; past TPM_STALL (330 s)
 * the source gives up with -ETIMEDOUT, for good. */
static void test_silent(void **state) {
        uint8_t buf[64];
        Opened o;

        assert_int_equal(open_fake(&o), 0);
        tpm.hang = true;
        tpm.max_timeout = 0;
        for (int i = 0; i < 5; i++)
                assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), -EAGAIN);
        assert_int_equal(tpm.transmits, SELFTEST_WORDS * 8 / 32 + 1);
        assert_true(tpm.max_timeout > 0 && tpm.max_timeout <= 1000);
        clk.now_ns += 331ULL * 1000000000U;
        assert_sticky(o.s, -ETIMEDOUT);
        assert_int_equal(tpm.transmits, SELFTEST_WORDS * 8 / 32 + 1);
        source_tpm.close(o.s);
}

/* Silent from the start: the open's self-test gives up, -ETIMEDOUT. */
static void test_silent_at_open(void **state) {
        Opened o;

        tpm.hang = true;
        clk.tick_ns = 50000000U;
        assert_int_equal(open_fake(&o), -ETIMEDOUT);
        assert_int_equal(tpm.transmits, 1);
        assert_int_equal(tpm.finalized, 1);
}

/* A TPM that disappears (the transport fails): -EIO, and it stays so
 * without another command. */
static void test_disappears(void **state) {
        uint8_t buf[4096];
        Opened o;

        assert_int_equal(open_fake(&o), 0);
        tpm.fail_after = tpm.transmits + 4;
        /* The bytes in hand come first, then the error. */
        assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), 4 * 32);
        assert_sticky(o.s, -EIO);
        source_tpm.close(o.s);

        /* A guest's TPM whose swtpm died: QEMU's TIS answers every command
         * with a TPM 1.2 failure (tag TPM_TAG_RSP_COMMAND, TPM_FAIL), seen
         * in the vm prototype (run-tpm-vm.sh). */
        reset(NULL);
        assert_int_equal(open_fake(&o), 0);
        tpm.tag = 0x00c4;
        tpm.script[0] = 9;
        tpm.script_len = 1;
        assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), -EIO);
        assert_sticky(o.s, -EIO);
        source_tpm.close(o.s);
}

static void test_garbage(void **state) {
        uint8_t buf[64];
        Opened o;

        /* At open: the self-test never gets its words. */
        tpm.tag = 0x1234;
        assert_int_equal(open_fake(&o), -EBADMSG);
        assert_false(o.selftest.run);

        /* While running: a malformed answer, then more bytes than asked. */
        reset(NULL);
        assert_int_equal(open_fake(&o), 0);
        tpm.tag = 0x1234;
        assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), -EBADMSG);
        assert_sticky(o.s, -EBADMSG);
        source_tpm.close(o.s);

        reset(NULL);
        assert_int_equal(open_fake(&o), 0);
        tpm.oversize = true;
        assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), -EBADMSG);
        source_tpm.close(o.s);
}

/* TPM errors by kind: not started up, failure mode, a refused command. */
static void test_tpm_errors(void **state) {
        uint8_t buf[64];
        Opened o;

        tpm.script[0] = TPM2_RC_INITIALIZE;
        tpm.script_len = 1;
        assert_int_equal(open_fake(&o), -ENXIO);

        reset(NULL);
        assert_int_equal(open_fake(&o), 0);
        tpm.script[0] = TPM2_RC_FAILURE;
        tpm.script_len = 1;
        assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), -EIO);
        source_tpm.close(o.s);

        reset(NULL);
        assert_int_equal(open_fake(&o), 0);
        tpm.script[0] = TPM2_RC_VALUE | TPM2_RC_P | TPM2_RC_1;
        tpm.script_len = 1;
        assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), -EPROTO);
        source_tpm.close(o.s);
}

/* A TPM with nothing to give: "try later" while running; at open, the
 * self-test's time runs out. */
static void test_empty_answers(void **state) {
        uint8_t buf[64];
        Opened o;

        assert_int_equal(open_fake(&o), 0);
        tpm.empty = true;
        assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), -EAGAIN);
        tpm.empty = false;
        assert_int_equal(source_tpm.read(o.s, buf, sizeof(buf)), (ssize_t) sizeof(buf));
        source_tpm.close(o.s);

        reset(NULL);
        tpm.empty = true;
        clk.tick_ns = 100000000U;
        assert_int_equal(open_fake(&o), -EAGAIN);
}

/* ---- no TPM ------------------------------------------------------------- */

/* No device node: -ENODEV without loading anything. A node that is there
 * goes to the loader as "device:PATH"; a TCTI that cannot reach its TPM
 * is -ENODEV too. */
static void test_absent(void **state) {
        char path[] = "/tmp/test-source-tpm-XXXXXX";
        SourceParams p = { .path = "/nonexistent/tpmrm0" };
        char want[sizeof(path) + 8];
        void *s = NULL;
        int fd;

        assert_int_equal(source_tpm.open(&p, &s), -ENODEV);
        assert_int_equal(tpm.loads, 0);

        fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        p.path = path;
        assert_int_equal(source_tpm.open(&p, &s), -ENODEV);
        snprintf(want, sizeof(want), "device:%s", path);
        assert_string_equal(tpm.conf, want);
        unlink(path);

        p = (SourceParams) { .tcti = "swtpm:path=/nonexistent" };
        assert_int_equal(source_tpm.open(&p, &s), -ENODEV);
        assert_string_equal(tpm.conf, "swtpm:path=/nonexistent");
        assert_null(s);
}

/* ---- pure helpers ------------------------------------------------------- */

static void test_errno_table(void **state) {
        assert_int_equal(source_tpm_errno(TSS2_RC_SUCCESS), 0);
        assert_int_equal(source_tpm_errno(TPM2_RC_RETRY), -EAGAIN);
        assert_int_equal(source_tpm_errno(TPM2_RC_YIELDED), -EAGAIN);
        assert_int_equal(source_tpm_errno(TPM2_RC_TESTING), -EAGAIN);
        assert_int_equal(source_tpm_errno(TPM2_RC_CANCELED), -EAGAIN);
        assert_int_equal(source_tpm_errno(TPM2_RC_OBJECT_MEMORY), -EAGAIN);
        /* The same warning relayed by a resource manager daemon (abrmd). */
        assert_int_equal(source_tpm_errno(TSS2_RESMGR_TPM_RC_LAYER | TPM2_RC_RETRY), -EAGAIN);
        assert_int_equal(source_tpm_errno(TSS2_TCTI_RC_TRY_AGAIN), -EAGAIN);
        assert_int_equal(source_tpm_errno(TSS2_TCTI_RC_IO_ERROR), -EIO);
        assert_int_equal(source_tpm_errno(TSS2_TCTI_RC_NO_CONNECTION), -EIO);
        assert_int_equal(source_tpm_errno(TPM2_RC_FAILURE), -EIO);
        assert_int_equal(source_tpm_errno(TSS2_SYS_RC_GENERAL_FAILURE), -EIO);
        assert_int_equal(source_tpm_errno(TSS2_RESMGR_RC_LAYER | TSS2_BASE_RC_GENERAL_FAILURE), -EIO);
        assert_int_equal(source_tpm_errno(TPM2_RC_INITIALIZE), -ENXIO);
        assert_int_equal(source_tpm_errno(TSS2_SYS_RC_MALFORMED_RESPONSE), -EBADMSG);
        assert_int_equal(source_tpm_errno(TSS2_SYS_RC_INSUFFICIENT_RESPONSE), -EBADMSG);
        assert_int_equal(source_tpm_errno(TSS2_MU_RC_LAYER | TSS2_BASE_RC_INSUFFICIENT_BUFFER), -EBADMSG);
        /* Format one: a parameter, handle or session error (0x80 set), even
         * where its parameter number makes it look like a warning. */
        assert_int_equal(source_tpm_errno(TPM2_RC_VALUE | TPM2_RC_P | TPM2_RC_1), -EPROTO);
        assert_int_equal(source_tpm_errno(TPM2_RC_SIZE | TPM2_RC_P | TPM2_RC_9), -EPROTO);
        assert_int_equal(source_tpm_errno(TPM2_RC_COMMAND_CODE), -EPROTO);
        assert_int_equal(source_tpm_errno(TSS2_SYS_RC_BAD_SEQUENCE), -EPROTO);
        assert_int_equal(source_tpm_errno(TSS2_ESAPI_RC_LAYER | 1U), -EPROTO);
}

static void test_device_index(void **state) {
        assert_int_equal(source_tpm_device_index("/dev/tpmrm0"), 0);
        assert_int_equal(source_tpm_device_index("/dev/tpm0"), 0);
        assert_int_equal(source_tpm_device_index("/dev/tpmrm12"), 12);
        assert_int_equal(source_tpm_device_index("tpm3"), 3);
        assert_int_equal(source_tpm_device_index("/dev/tpmrm"), -EINVAL);
        assert_int_equal(source_tpm_device_index("/dev/tpmrm01"), -EINVAL);
        assert_int_equal(source_tpm_device_index("/dev/tpmrm0x"), -EINVAL);
        assert_int_equal(source_tpm_device_index("/dev/hwrng"), -EINVAL);
        assert_int_equal(source_tpm_device_index("/dev/tpm0/"), -EINVAL);
        assert_int_equal(source_tpm_device_index(NULL), -EINVAL);
}

/* Not credited unless configured; no ceiling of its own. */
static void test_credit_policy(void **state) {
        Opened o;

        assert_string_equal(source_tpm.name, "tpm");
        assert_int_equal(source_tpm.credit, SOURCE_CREDIT_FIXED);
        assert_true(source_tpm.defaults.enable);
        assert_int_equal(source_tpm.defaults.credit_mbits, 0);
        assert_string_equal(source_tpm.defaults.params.path, "/dev/tpmrm0");
        assert_string_equal(source_tpm.keys[0].name, "path");
        assert_int_equal(open_fake(&o), 0);
        assert_int_equal(source_tpm.max_credit(o.s), UINT32_MAX);
        source_tpm.close(o.s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_open_and_read, reset),
                cmocka_unit_test_setup(test_short_answers, reset),
                cmocka_unit_test_setup(test_read_budget, reset),
                cmocka_unit_test_setup(test_selftest_constant, reset),
                cmocka_unit_test_setup(test_selftest_same_buffer, reset),
                cmocka_unit_test_setup(test_selftest_reason_text, reset),
                cmocka_unit_test_setup(test_continuous_repeat, reset),
                cmocka_unit_test_setup(test_busy, reset),
                cmocka_unit_test_setup(test_busy_at_open, reset),
                cmocka_unit_test_setup(test_silent, reset),
                cmocka_unit_test_setup(test_silent_at_open, reset),
                cmocka_unit_test_setup(test_disappears, reset),
                cmocka_unit_test_setup(test_garbage, reset),
                cmocka_unit_test_setup(test_tpm_errors, reset),
                cmocka_unit_test_setup(test_empty_answers, reset),
                cmocka_unit_test_setup(test_absent, reset),
                cmocka_unit_test_setup(test_errno_table, reset),
                cmocka_unit_test_setup(test_device_index, reset),
                cmocka_unit_test_setup(test_credit_policy, reset),
        };

        /* The stack's own messages (a TPM that failed on purpose) are noise here. */
        setenv("TSS2_LOG", "all+none", 1);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
