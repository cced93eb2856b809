/* test-ledger.c - the daemon's ledger (daemon/events.c) against the real
 * daemon in-process (fakedaemon.h): a start records the version and the
 * configuration's SHA-256 as config.h defines it (so an auditor's
 * sha256sum finds it), every reload its verdict and the configuration in
 * force after it (the old one's hash when refused), the first seed a
 * reseed, the stop its signal; the chain verifies; a restart continues
 * it. And the burst bound: past EVENT_BURST records of one event the rest
 * are counted, and the first record after the refill says how many, on
 * the test's clock (no timing on the machine's).
 * Induced failures (truerandomctl induce, pool/induce.h) land there too:
 * refused without [daemon] allow_induce and, for the last healthy
 * credited source, without force; stuck, bias and repeat each caught by
 * the gate within two windows of the episode's first sample, the source
 * credited again after it, no stored block holding an induced sample, and
 * each step a record; selftest reopens jitter with a failing self-test,
 * then as configured. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "config-build.h"
#include "fakedaemon.h"
#include "fakekernel.h"
#include "ledger/verify.h"
#include "proto/ctlcommand.h"
#include "proto/ctlproto.h"
#include "proto/ctlstatus.h"

#define RECORDS_MAX 64
#define WAIT_MS (600 * 1000)

typedef struct Run {
        FakeDaemon *daemon;
        char conf[128];
        char state[128];
        uint64_t clock;          /* the daemon's budgets' clock (hooks.now) */
        LedgerRecord *rec;       /* the ledger as last read */
        size_t n;
} Run;

static uint64_t run_now(void *userdata) {
        return __atomic_load_n(&((Run *) userdata)->clock, __ATOMIC_RELAXED);
}

static void sleep_ms(unsigned ms) {
        nanosleep(&(struct timespec){ .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L }, NULL);
}

/* The file source, as fakedaemon_config() has it, and jitter's section
 * (its enable key first), with `extra`. */
static void write_conf_with(Run *r, const char *jitter, const char *extra) {
        FILE *f = fopen(r->conf, "we");

        assert_non_null(f);
        fprintf(f,
                "[pool]\ngate_window = 4096\nstore_blocks = 64\nlow_water = 16\n[device]\ngroup = %u\n"
                "[control]\nsocket = %s/control\n[assessment]\nstate_directory = %s\n"
                "[source.jitter]\n%s\n[source.rdseed]\nenable = no\n[source.hwrng]\nenable = no\n"
                "[source.tpm]\nenable = no\n"
                "[source.file]\nenable = yes\ncredit = 2\nloop = yes\npath = %s\n%s",
                (unsigned) getgid(), r->daemon->dir, r->state, jitter, r->daemon->samples, extra);
        assert_int_equal(fclose(f), 0);
}

/* The file source alone. */
static void write_conf(Run *r, const char *extra) {
        write_conf_with(r, "enable = no", extra);
}

/* What config.h says an auditor computes: the path, a NUL, the bytes. */
static void conf_sha(const Run *r, char hex[static 65]) {
        crypto_hash_sha256_state st;
        uint8_t h[32], buf[4096];
        ssize_t n;
        int fd = open(r->conf, O_RDONLY | O_CLOEXEC);

        assert_true(fd >= 0);
        crypto_hash_sha256_init(&st);
        crypto_hash_sha256_update(&st, (const unsigned char *) r->conf, strlen(r->conf) + 1);
        while ((n = read(fd, buf, sizeof(buf))) > 0)
                crypto_hash_sha256_update(&st, buf, (unsigned long long) n);
        close(fd);
        crypto_hash_sha256_final(&st, h);
        sodium_bin2hex(hex, 65, h, sizeof(h));
}

static void start(Run *r, bool own_clock) {
        DaemonHooks hooks = { .now = own_clock ? run_now : NULL, .userdata = r };
        char *error = NULL;
        Config c;

        assert_int_equal(config_load(r->conf, false, &c, &error), 0);
        assert_int_equal(fakedaemon_start(r->daemon, &c, r->conf, &hooks), 0);
        config_done(&c);
}

/* SIGHUP, and the wait for the daemon to have handled `count` reloads. */
static void reload(Run *r, double count) {
        uint64_t waited = 0;
        double n = 0;

        assert_int_equal(kill(getpid(), SIGHUP), 0);
        for (;;) {
                CtlStatus *s = NULL;

                assert_int_equal(fakedaemon_status(r->daemon, &s), 0);
                (void) ctl_status_get_number(ctl_status_get_object(ctl_status_root(s), "reload"), "count", &n);
                ctl_status_free(s);
                if (n >= count || waited > WAIT_MS)
                        break;
                sleep_ms(20);
                waited += 20;
        }
        assert_true(n == count);
}

/* Until the CRNG's first seed. */
static void wait_seeded(Run *r) {
        uint64_t waited = 0;
        bool seeded = false;

        while (!seeded && waited <= WAIT_MS) {
                CtlStatus *s = NULL;

                assert_int_equal(fakedaemon_status(r->daemon, &s), 0);
                (void) ctl_status_get_bool(ctl_status_get_object(ctl_status_root(s), "crng"), "seeded", &seeded);
                ctl_status_free(s);
                if (!seeded) {
                        sleep_ms(20);
                        waited += 20;
                }
        }
        assert_true(seeded);
}

/* A record's strings point into its own storage_: a copy's into the copy's. */
static const char *moved(const LedgerRecord *to, const LedgerRecord *from, const char *p) {
        return p ? to->storage_ + (p - from->storage_) : NULL;
}

static void rebase(LedgerRecord *to, const LedgerRecord *from) {
        to->event = moved(to, from, from->event);
        for (size_t i = 0; i < from->n_fields; i++) {
                to->fields[i].key = moved(to, from, from->fields[i].key);
                to->fields[i].value = moved(to, from, from->fields[i].value);
        }
}

static int collect(void *userdata, const char *file, unsigned line_no, const char *line, size_t len,
                   const LedgerRecord *rec, bool torn) {
        Run *r = userdata;

        assert_non_null(rec);
        assert_false(torn);
        assert_true(r->n < RECORDS_MAX);
        r->rec[r->n] = *rec;
        rebase(&r->rec[r->n++], rec);
        return 0;
}

/* Reads the ledger into r->rec, and checks that its chain is whole. */
static void read_ledger(Run *r) {
        LedgerReport *report = NULL;
        int dir = open(r->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        assert_true(dir >= 0);
        r->n = 0;
        assert_int_equal(ledger_foreach(dir, collect, r), 0);
        assert_int_equal(ledger_verify(dir, NULL, &report), 0);
        assert_true(ledger_report_intact(report));
        assert_int_equal(report->n_findings, 0);
        assert_int_equal(report->records, r->n);
        ledger_report_free(report);
        close(dir);
}

static const char *field(const LedgerRecord *rec, const char *key) {
        for (size_t i = 0; i < rec->n_fields; i++)
                if (strcmp(rec->fields[i].key, key) == 0)
                        return rec->fields[i].value;
        return NULL;
}

/* The index of the next record of event at or after *from, moving *from
 * past it; fails the test when there is none. */
static const LedgerRecord *next(Run *r, size_t *from, const char *event) {
        for (; *from < r->n; (*from)++)
                if (strcmp(r->rec[*from].event, event) == 0)
                        return &r->rec[(*from)++];
        fail_msg("no %s record after the %zu-th", event, *from);
        return NULL;
}

static size_t count_events(const Run *r, const char *event) {
        size_t n = 0;

        for (size_t i = 0; i < r->n; i++)
                n += strcmp(r->rec[i].event, event) == 0;
        return n;
}

static Run *run_new(void) {
        Run *r = calloc(1, sizeof(*r));

        assert_non_null(r);
        r->rec = calloc(RECORDS_MAX, sizeof(*r->rec));
        assert_non_null(r->rec);
        assert_int_equal(fakedaemon_new("ledger", "ledger", &r->daemon), 0);
        snprintf(r->conf, sizeof(r->conf), "%s/truerandomd.conf", r->daemon->dir);
        snprintf(r->state, sizeof(r->state), "%s/state", r->daemon->dir);
        return r;
}

static void run_free(Run *r) {
        fakedaemon_free(r->daemon);
        free(r->rec);
        free(r);
}

static void test_ledger_records(void **state) {
        char sha_a[65], sha_b[65], sha_c[65];
        const LedgerRecord *rec;
        size_t at = 0, before;
        Run *r = run_new(), *second;

        /* The daemon makes a configured directory that is not there yet. */
        write_conf(r, "");
        conf_sha(r, sha_a);
        start(r, false);
        wait_seeded(r);

        write_conf(r, "[device]\ntrng_mode = 0400\n");
        conf_sha(r, sha_b);
        reload(r, 1);
        write_conf(r, "[device]\nmax_parked = many\n");
        reload(r, 2);
        write_conf(r, "[crng]\nreseed_interval = 30\n");
        conf_sha(r, sha_c);
        reload(r, 3);
        assert_int_equal(fakedaemon_stop(r->daemon), 0);

        read_ledger(r);
        rec = next(r, &at, "start");
        assert_int_equal(at, 1);        /* the first record of all */
        assert_int_equal(rec->seq, 1);
        assert_string_equal(field(rec, "version"), TRUERANDOM_VERSION);
        assert_string_equal(field(rec, "config_sha256"), sha_a);
        assert_string_equal(field(rec, "config"), r->conf);
        rec = next(r, &at, "reload");
        assert_string_equal(field(rec, "result"), "applied");
        assert_string_equal(field(rec, "config_sha256"), sha_b);
        rec = next(r, &at, "reload");
        assert_string_equal(field(rec, "result"), "refused");
        assert_string_equal(field(rec, "config_sha256"), sha_b);
        assert_non_null(strstr(field(rec, "error"), "max_parked"));
        rec = next(r, &at, "reload");
        assert_string_equal(field(rec, "result"), "applied");
        assert_string_equal(field(rec, "config_sha256"), sha_c);
        rec = &r->rec[r->n - 1];
        assert_string_equal(rec->event, "stop");
        assert_string_equal(field(rec, "reason"), "signal 15");
        at = 0;
        rec = next(r, &at, "reseed");
        assert_string_equal(field(rec, "reason"), "first-seed");
        at = 0;
        rec = next(r, &at, "credit-change");
        assert_string_equal(field(rec, "source"), "file");
        assert_string_equal(field(rec, "reason"), "first window");

        /* A second daemon on the same directory continues the chain:
         * one ledger over two runs. */
        second = run_new();
        snprintf(second->state, sizeof(second->state), "%s", r->state);
        write_conf(second, "");
        start(second, false);
        assert_int_equal(fakedaemon_stop(second->daemon), 0);
        before = r->n;
        read_ledger(r);
        assert_true(r->n > before);
        assert_string_equal(r->rec[before].event, "start");
        assert_int_equal(r->rec[before].seq, r->rec[before - 1].seq + 1);
        assert_memory_equal(r->rec[before].prev, r->rec[before - 1].hash, LEDGER_HASH_BYTES);
        assert_string_equal(r->rec[r->n - 1].event, "stop");
        run_free(second);
        run_free(r);
}

/* Twelve reloads inside a minute: ten recorded; a minute later on the
 * test's clock the next one is, saying that two were not. */
static void test_ledger_burst(void **state) {
        const LedgerRecord *rec;
        size_t at = 0;
        Run *r = run_new();

        r->clock = 1000 * 1000000ULL;
        write_conf(r, "");
        start(r, true);
        for (unsigned i = 1; i <= 12; i++)
                reload(r, i);
        __atomic_store_n(&r->clock, r->clock + 60 * 1000000ULL, __ATOMIC_RELAXED);
        reload(r, 13);
        assert_int_equal(fakedaemon_stop(r->daemon), 0);

        read_ledger(r);
        assert_int_equal(count_events(r, "reload"), 11);
        for (unsigned i = 0; i < 10; i++)
                assert_null(field(next(r, &at, "reload"), "suppressed"));
        rec = next(r, &at, "reload");
        assert_string_equal(field(rec, "suppressed"), "2");
        assert_string_equal(r->rec[r->n - 1].event, "stop");
        run_free(r);
}

/* ---- induced failures --------------------------------------------------------- */

/* induce source=SOURCE kind=KIND [force=1]: CTL_REPLY_OK, or the error
 * (*ret_error) with its text in text. */
static int induce(Run *r, const char *source, const char *kind, bool force, CtlError *ret_error, char *text,
                  size_t size) {
        static char buf[CTL_REPLY_MAX];
        CtlRequest req = { .command = ctl_command_from_string("induce"), .force = force };
        CtlReply reply;
        char msg[256];
        ssize_t n;

        snprintf(req.source, sizeof(req.source), "%s", source);
        snprintf(req.kind, sizeof(req.kind), "%s", kind);
        n = ctl_request_format(&req, msg, sizeof(msg) - 1);
        assert_true(n > 0);
        assert_int_equal(fakedaemon_ask(r->daemon, msg, (size_t) n, buf, &reply), 0);
        snprintf(text, size, "%.*s", (int) reply.payload_size, (const char *) reply.payload);
        *ret_error = reply.error;
        return (int) reply.kind;
}

/* Source name's object in a status. */
static const CtlStatusObject *status_source(const CtlStatus *s, const char *name) {
        for (size_t i = 0; i < ctl_status_get_count(ctl_status_root(s), "sources"); i++) {
                const CtlStatusObject *o = ctl_status_get_element(ctl_status_root(s), "sources", i);
                const char *n = ctl_status_get_string(o, "name");

                if (n && strcmp(n, name) == 0)
                        return o;
        }
        fail_msg("no source %s in the status", name);
        return NULL;
}

typedef struct InduceSeen {
        double episodes, caught, uncaught, detected_after, blocks, source_blocks;
        unsigned recent_refused;   /* refused windows among the gate's recent_verdicts */
        char caught_by[8], state[24];
} InduceSeen;

static void induce_seen(Run *r, const char *name, InduceSeen *ret) {
        CtlStatus *s = NULL;
        const CtlStatusObject *o, *e;
        const char *by, *state;

        assert_int_equal(fakedaemon_status(r->daemon, &s), 0);
        o = status_source(s, name);
        e = ctl_status_get_object(o, "induce");
        assert_non_null(e);
        *ret = (InduceSeen) { 0 };
        assert_true(ctl_status_get_number(e, "episodes", &ret->episodes));
        assert_true(ctl_status_get_number(e, "caught", &ret->caught));
        assert_true(ctl_status_get_number(e, "uncaught", &ret->uncaught));
        assert_true(ctl_status_get_number(e, "detected_after", &ret->detected_after));
        assert_true(ctl_status_get_number(e, "blocks", &ret->blocks));
        assert_true(ctl_status_get_number(o, "blocks", &ret->source_blocks));
        for (size_t i = 0; i < ctl_status_get_count(ctl_status_get_object(o, "gate"), "recent_verdicts"); i++) {
                const CtlStatusObject *v = ctl_status_get_element(ctl_status_get_object(o, "gate"), "recent_verdicts", i);
                double estimate = 9;

                (void) ctl_status_get_number(v, "estimate_bits", &estimate);
                ret->recent_refused += !ctl_status_is_true(v, "released") && estimate < 1;
        }
        by = ctl_status_get_string(e, "caught_by");
        state = ctl_status_get_string(o, "state");
        snprintf(ret->caught_by, sizeof(ret->caught_by), "%s", by ? by : "");
        snprintf(ret->state, sizeof(ret->state), "%s", state ? state : "");
        ctl_status_free(s);
}

/* Reads /dev/truerandom without waiting, so that the store wants blocks
 * and the source runs. */
static void drain(Run *r, const FkFile *f) {
        uint8_t buf[4096];

        while (fk_read(r->daemon->fk[CUSEDEV_TRNG], f, buf, sizeof(buf)) > 0)
                ;
}

static void test_induce_samples(void **state) {
        static const char *const kinds[] = { "stuck", "bias", "repeat" };
        char text[CTL_REPLY_MAX];
        InduceSeen seen, was;
        CtlError error;
        FkFile f;
        Run *r = run_new();

        r->clock = 1000 * 1000000ULL;
        write_conf(r, "");
        start(r, true);
        wait_seeded(r);
        assert_int_equal(fk_open(r->daemon->fk[CUSEDEV_TRNG], NULL, O_RDONLY, &f), 0);
        f.flags |= O_NONBLOCK;

        /* Not without allow_induce; not the last healthy source unforced. */
        assert_int_equal(induce(r, "file", "stuck", true, &error, text, sizeof(text)), CTL_REPLY_ERROR);
        assert_int_equal(error, CTL_ERROR_PERMISSION);
        assert_non_null(strstr(text, "allow_induce"));
        write_conf(r, "[daemon]\nallow_induce = yes\n");
        reload(r, 1);
        assert_int_equal(induce(r, "file", "stuck", false, &error, text, sizeof(text)), CTL_REPLY_ERROR);
        assert_int_equal(error, CTL_ERROR_BUSY);
        assert_non_null(strstr(text, "--force"));
        assert_int_equal(induce(r, "file", "melt", true, &error, text, sizeof(text)), CTL_REPLY_ERROR);
        assert_int_equal(induce(r, "rdseed", "stuck", true, &error, text, sizeof(text)), CTL_REPLY_ERROR);
        assert_int_equal(error, CTL_ERROR_UNKNOWN_SOURCE);
        assert_int_equal(induce(r, "file", "selftest", true, &error, text, sizeof(text)), CTL_REPLY_ERROR);
        assert_non_null(strstr(text, "no self-test"));

        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
                uint64_t waited = 0;

                induce_seen(r, "file", &was);
                assert_int_equal(induce(r, "file", kinds[k], true, &error, text, sizeof(text)), CTL_REPLY_OK);
                do {
                        drain(r, &f);
                        sleep_ms(20);
                        waited += 20;
                        induce_seen(r, "file", &seen);
                } while (seen.caught + seen.uncaught == was.caught + was.uncaught && waited < WAIT_MS);
                print_message("%s: caught by the %s after %.0f samples\n", kinds[k], seen.caught_by,
                              seen.detected_after);
                assert_true(seen.episodes == was.episodes + 1);
                assert_true(seen.caught == was.caught + 1);
                assert_string_equal(seen.caught_by, "gate");
                /* The window it began with, judged while the next one
                 * filled: two windows at the most. */
                assert_true(seen.detected_after >= 4096 && seen.detected_after <= 2 * 4096);
                /* It recovers: credited again, blocks again, none induced. */
                do {
                        drain(r, &f);
                        sleep_ms(20);
                        waited += 20;
                        induce_seen(r, "file", &seen);
                } while ((strcmp(seen.state, "healthy") != 0 || seen.source_blocks <= was.source_blocks + 64) &&
                         waited < 2 * WAIT_MS);
                assert_string_equal(seen.state, "healthy");
                assert_true(seen.blocks == 0);
                /* The status's last verdicts hold the refused window. */
                assert_true(seen.recent_refused >= 1);
                /* Past the burst bound of the next kind's records. */
                __atomic_store_n(&r->clock, r->clock + 600 * 1000000ULL, __ATOMIC_RELAXED);
        }
        assert_int_equal(fakedaemon_stop(r->daemon), 0);

        read_ledger(r);
        for (size_t k = 0, at = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
                const LedgerRecord *rec = next(r, &at, "induce");

                assert_string_equal(field(rec, "kind"), kinds[k]);
                assert_string_equal(field(rec, "phase"), "asked");
                assert_string_equal(field(rec, "forced"), "yes");
                assert_string_equal(field(next(r, &at, "induce"), "phase"), "begun");
                assert_string_equal(field(next(r, &at, "gate-refusal"), "source"), "file");
                rec = next(r, &at, "induce");
                assert_string_equal(field(rec, "phase"), "caught");
                assert_string_equal(field(rec, "by"), "gate");
                assert_string_equal(field(rec, "blocks_stored"), "0");
                assert_string_equal(field(next(r, &at, "credit-change"), "reason"), "credited again");
        }
        run_free(r);
}

/* selftest: jitter reopened with a stuck window for its self-test fails
 * it (unavailable, its blocks purged), then reopens as configured and
 * passes; each step a record. */
static void test_induce_selftest(void **state) {
        char text[CTL_REPLY_MAX];
        const LedgerRecord *rec;
        CtlError error;
        CtlStatus *s = NULL;
        size_t at = 0;
        Run *r = run_new();

        write_conf_with(r, "enable = yes\ncredit = auto", "[daemon]\nallow_induce = yes\n");
        start(r, false);
        wait_seeded(r);
        /* Unforced: file stays healthy meanwhile. */
        for (uint64_t waited = 0; waited < WAIT_MS; waited += 20) {
                InduceSeen file, jitter;

                induce_seen(r, "file", &file);
                induce_seen(r, "jitter", &jitter);
                if (strcmp(file.state, "healthy") == 0 && strcmp(jitter.state, "healthy") == 0)
                        break;
                sleep_ms(20);
        }
        if (induce(r, "jitter", "selftest", false, &error, text, sizeof(text)) != CTL_REPLY_OK)
                fail_msg("induce jitter selftest: %s", text);
        assert_non_null(strstr(text, "self-test failed, then it reopened"));
        assert_int_equal(fakedaemon_status(r->daemon, &s), 0);
        assert_string_equal(ctl_status_get_string(ctl_status_get_object(status_source(s, "jitter"), "selftest"),
                                                  "result"),
                            "passed");
        ctl_status_free(s);
        assert_int_equal(fakedaemon_stop(r->daemon), 0);

        read_ledger(r);
        rec = next(r, &at, "self-test");       /* at start */
        assert_string_equal(field(rec, "result"), "passed");
        rec = next(r, &at, "induce");
        assert_string_equal(field(rec, "kind"), "selftest");
        assert_string_equal(field(rec, "forced"), "no");
        rec = next(r, &at, "purge");
        assert_string_equal(field(rec, "reason"), "induce selftest");
        rec = next(r, &at, "self-test");
        assert_string_equal(field(rec, "source"), "jitter");
        assert_string_not_equal(field(rec, "result"), "passed");
        rec = next(r, &at, "self-test");
        assert_string_equal(field(rec, "result"), "passed");
        run_free(r);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_ledger_records),
                cmocka_unit_test(test_ledger_burst),
                cmocka_unit_test(test_induce_samples),
                cmocka_unit_test(test_induce_selftest),
        };

        fakedaemon_block_signals();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
