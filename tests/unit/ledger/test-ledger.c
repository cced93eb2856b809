/* test-ledger.c - the ledger as an auditor relies on it: records written
 * are read back and verify; the chain holds across rotation and reopening;
 * each kind of tampering (a changed byte, a changed and rehashed record, a
 * removed one, one moved, one inserted, a garbage line, records cut from
 * the front or the tail) is reported, alone, at its file, line and
 * sequence number; a torn last record is reported as torn and cut at the
 * next open; a write that fails half way (write() wrapped: short writes,
 * an error after half a record, a cut-back that fails as in a crash) never
 * damages an earlier record; the files stay within their bounds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ledger/files.h"
#include "ledger/ledger.h"
#include "ledger/verify.h"

/* ---- write() and ftruncate() as a failing disk --------------------------- */

enum { DISK_OK, DISK_SHORT, DISK_FAIL_HALF };
static int disk = DISK_OK;
static bool truncate_fails;

ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
int __real_ftruncate(int fd, off_t len);
int __wrap_ftruncate(int fd, off_t len);
int __wrap_ftruncate64(int fd, off_t len);

ssize_t __wrap_write(int fd, const void *buf, size_t n) {
        if (disk == DISK_SHORT)
                return __real_write(fd, buf, n < 7 ? n : 7);
        if (disk == DISK_FAIL_HALF) {
                if (__real_write(fd, buf, n / 2) < 0)
                        return -1;
                errno = EIO;
                return -1;
        }
        return __real_write(fd, buf, n);
}

int __wrap_ftruncate(int fd, off_t len) {
        if (truncate_fails) {
                errno = EIO;
                return -1;
        }
        return __real_ftruncate(fd, len);
}

/* -D_FILE_OFFSET_BITS=64 renames the call the library makes. */
int __wrap_ftruncate64(int fd, off_t len) {
        return __wrap_ftruncate(fd, len);
}

/* ---- a ledger in a scratch directory ------------------------------------- */

typedef struct Fixture {
        char dir[64];
        int dir_fd;
} Fixture;

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(*f));

        snprintf(f->dir, sizeof(f->dir), "/tmp/test-ledger-XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        f->dir_fd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(f->dir_fd >= 0);
        disk = DISK_OK;
        truncate_fails = false;
        *state = f;
        return 0;
}

static int teardown(void **state) {
        Fixture *f = *state;
        char cmd[128];

        close(f->dir_fd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
        assert_int_equal(system(cmd), 0);
        free(f);
        return 0;
}

/* Small files, so a few hundred records rotate several times. */
static const LedgerOptions small = { .max_file_bytes = 2 * LEDGER_RECORD_MAX, .keep_files = 8, .no_sync = true };

static void append_n(Ledger *l, unsigned n) {
        for (unsigned i = 0; i < n; i++) {
                char blocks[16];

                snprintf(blocks, sizeof(blocks), "%u", i);
                assert_int_equal(ledger_append(l, LEDGER_EVENT_PURGE,
                                               (const LedgerField[]){ { "blocks", blocks }, { "reason", "test" } }, 2),
                                 0);
        }
}

static void make_ledger(Fixture *f, unsigned n) {
        Ledger *l = NULL;

        assert_int_equal(ledger_open(f->dir_fd, &small, &l), 0);
        append_n(l, n);
        ledger_free(l);
}

static LedgerReport *verify(Fixture *f, const LedgerAnchor *anchor) {
        LedgerReport *rep = NULL;

        assert_int_equal(ledger_verify(f->dir_fd, anchor, &rep), 0);
        return rep;
}

/* ---- editing files as a tamperer would -------------------------------------- */

typedef struct Lines {
        char *v[1024];
        size_t n;
} Lines;

static void file_name(Fixture *f, size_t idx, char ret[static LEDGER_FILE_NAME_MAX]) {
        LedgerFile *files = NULL;
        size_t n;

        assert_int_equal(ledger_files_list(f->dir_fd, &files, &n), 0);
        assert_true(idx < n);
        memcpy(ret, files[idx].name, LEDGER_FILE_NAME_MAX);
        free(files);
}

static void lines_read(Fixture *f, const char *name, Lines *ret) {
        char path[160], buf[LEDGER_RECORD_MAX + 2];
        FILE *fp;

        snprintf(path, sizeof(path), "%s/%s", f->dir, name);
        fp = fopen(path, "r");
        assert_non_null(fp);
        ret->n = 0;
        while (fgets(buf, sizeof(buf), fp)) {
                buf[strcspn(buf, "\n")] = '\0';
                ret->v[ret->n++] = strdup(buf);
        }
        fclose(fp);
}

static void lines_write(Fixture *f, const char *name, Lines *l) {
        char path[160];
        FILE *fp;

        snprintf(path, sizeof(path), "%s/%s", f->dir, name);
        fp = fopen(path, "w");
        assert_non_null(fp);
        for (size_t i = 0; i < l->n; i++) {
                fprintf(fp, "%s\n", l->v[i]);
                free(l->v[i]);
        }
        fclose(fp);
}

/* What a careful tamperer does after an edit: the record's own hash made
 * right again (the recipe in record.h). */
static void rehash(char *line) {
        char *cut = strstr(line, ",\"hash\":\"");
        crypto_hash_sha256_state st;
        uint8_t h[LEDGER_HASH_BYTES];
        char hex[2 * LEDGER_HASH_BYTES + 1];

        assert_non_null(cut);
        crypto_hash_sha256_init(&st);
        crypto_hash_sha256_update(&st, (const unsigned char *) line, (size_t) (cut - line));
        crypto_hash_sha256_update(&st, (const unsigned char *) "}", 1);
        crypto_hash_sha256_final(&st, h);
        ledger_hash_to_hex(h, hex);
        memcpy(cut + 9, hex, 2 * LEDGER_HASH_BYTES);
}

static void expect_one(LedgerReport *rep, LedgerFindingKind kind, const char *file, unsigned line, uint64_t seq,
                       uint64_t seq_last) {
        for (size_t i = 0; i < rep->n_findings; i++)
                fprintf(stderr, "  finding: %s %s:%u seq %llu..%llu\n",
                        ledger_finding_kind_to_string(rep->findings[i].kind), rep->findings[i].file,
                        rep->findings[i].line, (unsigned long long) rep->findings[i].seq,
                        (unsigned long long) rep->findings[i].seq_last);
        assert_int_equal(rep->n_findings, 1);
        assert_int_equal(rep->findings[0].kind, kind);
        assert_string_equal(rep->findings[0].file, file);
        assert_int_equal(rep->findings[0].line, line);
        assert_int_equal(rep->findings[0].seq, seq);
        assert_int_equal(rep->findings[0].seq_last, seq_last);
        assert_false(ledger_report_intact(rep) && kind != LEDGER_FINDING_TORN);
        ledger_report_free(rep);
}

/* ---- writing and reading ---------------------------------------------------- */

static const char *const value_for[] = { "1", "x" };

static void append_every_event(Ledger *l) {
        for (unsigned e = 0; e < _LEDGER_EVENT_MAX; e++) {
                const char *const *req = ledger_event_required((LedgerEvent) e);
                LedgerField fields[4];
                size_t n = 0;

                for (; req[n]; n++)
                        fields[n] = (LedgerField){ req[n], value_for[n % 2] };
                assert_int_equal(ledger_append(l, (LedgerEvent) e, fields, n), 0);
        }
}

static int count_line(void *userdata, const char *file, unsigned line_no, const char *line, size_t len,
                      const LedgerRecord *rec, bool torn) {
        unsigned *n = userdata;
        struct json_object *o = json_tokener_parse(line);
        LedgerEvent e;

        /* Plain JSON for jq; the event names this build writes are its own. */
        assert_non_null(rec);
        assert_true(rec->hash_ok);
        assert_non_null(o);
        json_object_put(o);
        assert_int_equal(rec->seq, ++*n);
        assert_true(rec->realtime > 0 && rec->monotonic > 0);
        assert_int_equal(ledger_event_from_string(rec->event, &e), 0);
        return 0;
}

static void test_roundtrip(void **state) {
        Fixture *f = *state;
        Ledger *l = NULL;
        LedgerReport *rep;
        uint8_t head[LEDGER_HASH_BYTES];
        uint64_t seq;
        unsigned n = 0;

        assert_int_equal(ledger_verify(f->dir_fd, NULL, &rep), -ENOENT);
        assert_int_equal(ledger_open(f->dir_fd, NULL, &l), 0);
        append_every_event(l);
        l = ledger_free(l);
        /* Reopened, the chain goes on where it stopped. */
        assert_int_equal(ledger_open(f->dir_fd, NULL, &l), 0);
        append_every_event(l);
        ledger_head(l, &seq, head);
        assert_int_equal(seq, 2 * _LEDGER_EVENT_MAX);
        assert_int_equal(ledger_cut_bytes(l), 0);
        ledger_free(l);
        assert_int_equal(ledger_foreach(f->dir_fd, count_line, &n), 0);
        assert_int_equal(n, 2 * _LEDGER_EVENT_MAX);
        rep = verify(f, &(LedgerAnchor){ .seq = seq, .hash = { 0 } });
        assert_int_equal(rep->records, n);
        assert_int_equal(rep->first_seq, 1);
        assert_int_equal(rep->last_seq, n);
        assert_memory_equal(rep->last_hash, head, LEDGER_HASH_BYTES);
        /* A wrong anchor at the head is caught; the right one passes. */
        assert_int_equal(rep->n_findings, 1);
        assert_int_equal(rep->findings[0].kind, LEDGER_FINDING_ANCHOR);
        ledger_report_free(rep);
        LedgerAnchor a = { .seq = seq };
        memcpy(a.hash, head, LEDGER_HASH_BYTES);
        rep = verify(f, &a);
        assert_int_equal(rep->n_findings, 0);
        assert_true(ledger_report_intact(rep));
        ledger_report_free(rep);
}

/* The recipe in record.h: the line without its hash member, "}" closing
 * it, hashes to the member. A hand-made line of the format parses. */
static void test_hash_recipe(void **state) {
        uint8_t prev[LEDGER_HASH_BYTES] = { 1 }, hash[LEDGER_HASH_BYTES];
        char line[LEDGER_RECORD_MAX], copy[LEDGER_RECORD_MAX];
        LedgerRecord *rec = malloc(sizeof(*rec));
        size_t len;

        assert_int_equal(ledger_record_format(5, 10, 20, LEDGER_EVENT_RELOAD,
                                              (const LedgerField[]){ { "config_sha256", "ab/cd" } }, 1, prev, line,
                                              &len, hash),
                         0);
        assert_int_equal(line[len - 1], '\n');
        line[len - 1] = '\0';
        assert_non_null(strstr(line, "{\"seq\":5,\"realtime_usec\":10,\"monotonic_usec\":20,\"event\":\"reload\","
                                     "\"details\":{\"config_sha256\":\"ab/cd\"},\"prev\":\"0100"));
        memcpy(copy, line, len);
        rehash(copy);
        assert_string_equal(copy, line);
        assert_int_equal(ledger_record_parse(line, len - 1, rec), 0);
        assert_true(rec->hash_ok);
        assert_memory_equal(rec->hash, hash, LEDGER_HASH_BYTES);
        assert_memory_equal(rec->prev, prev, LEDGER_HASH_BYTES);
        assert_string_equal(rec->fields[0].value, "ab/cd");
        /* One byte changed: still a record, no longer its hash. */
        line[60] ^= 1;
        assert_int_equal(ledger_record_parse(line, len - 1, rec), 0);
        assert_false(rec->hash_ok);
        assert_int_equal(ledger_record_parse("{\"seq\":1}", 9, rec), -EBADMSG);
        free(rec);
}

static void test_refused(void **state) {
        uint8_t prev[LEDGER_HASH_BYTES] = { 0 }, hash[LEDGER_HASH_BYTES];
        char line[LEDGER_RECORD_MAX], big[LEDGER_VALUE_MAX + 2];
        size_t len;

        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
#define FMT(e, ...)                                                                                           \
        ledger_record_format(1, 1, 1, e, (const LedgerField[]){ __VA_ARGS__ },                               \
                             sizeof((const LedgerField[]){ __VA_ARGS__ }) / sizeof(LedgerField), prev, line, &len, \
                             hash)
        assert_int_equal(FMT(LEDGER_EVENT_RELOAD, { "reason", "no config hash" }), -EINVAL);
        assert_int_equal(FMT(_LEDGER_EVENT_MAX, { "reason", "x" }), -EINVAL);
        assert_int_equal(FMT(LEDGER_EVENT_STOP, { "reason", "line\nbreak" }), -EINVAL);
        assert_int_equal(FMT(LEDGER_EVENT_STOP, { "reason", big }), -EINVAL);
        assert_int_equal(FMT(LEDGER_EVENT_STOP, { "reason", "x" }, { "reason", "y" }), -EINVAL);
        assert_int_equal(FMT(LEDGER_EVENT_STOP, { "Reason", "x" }), -EINVAL);
        assert_int_equal(FMT(LEDGER_EVENT_STOP, { "reason", "" }), -EINVAL);
        assert_int_equal(FMT(LEDGER_EVENT_STOP, { "reason", "sigterm" }), 0);
#undef FMT
}

/* Many records in small files: each file within its bound, at most
 * keep_files of them, the chain whole across every file boundary and
 * across reopening, the oldest records rotated out without a finding. */
static void test_rotation_bounds(void **state) {
        Fixture *f = *state;
        const LedgerOptions opts = { .max_file_bytes = 2 * LEDGER_RECORD_MAX, .keep_files = 3, .no_sync = true };
        LedgerFile *files = NULL;
        LedgerReport *rep;
        Ledger *l = NULL;
        size_t n;

        for (unsigned round = 0; round < 4; round++) {
                assert_int_equal(ledger_open(f->dir_fd, &opts, &l), 0);
                append_n(l, 150);
                l = ledger_free(l);
        }
        assert_int_equal(ledger_files_list(f->dir_fd, &files, &n), 0);
        assert_int_equal(n, 3);
        for (size_t i = 0; i < n; i++) {
                struct stat st;

                assert_int_equal(fstatat(f->dir_fd, files[i].name, &st, 0), 0);
                assert_true(st.st_size > 0 && (uint64_t) st.st_size <= opts.max_file_bytes);
        }
        rep = verify(f, NULL);
        assert_int_equal(rep->n_findings, 0);
        assert_int_equal(rep->last_seq, 600);
        assert_int_equal(rep->first_seq, files[0].first_seq);
        assert_true(rep->first_seq > 1);
        assert_int_equal(rep->records, 600 - rep->first_seq + 1);
        ledger_report_free(rep);
        free(files);
}

/* ---- tampering, one kind at a time ---------------------------------------- */

/* 200 records over a few files; the second file's name and first seq. */
static uint64_t tamper_setup(Fixture *f, char name[static LEDGER_FILE_NAME_MAX], Lines *lines) {
        LedgerFile *files = NULL;
        uint64_t first;
        size_t n;

        make_ledger(f, 200);
        assert_int_equal(ledger_files_list(f->dir_fd, &files, &n), 0);
        assert_true(n >= 3);
        memcpy(name, files[1].name, LEDGER_FILE_NAME_MAX);
        first = files[1].first_seq;
        free(files);
        lines_read(f, name, lines);
        assert_true(lines->n >= 10);
        return first;
}

static void test_changed_in_place(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX], *p;
        Lines l;
        uint64_t first = tamper_setup(f, name, &l);

        p = strstr(l.v[4], "\"reason\":\"test\"");
        assert_non_null(p);
        p[10] = 'b';   /* "best" */
        lines_write(f, name, &l);
        expect_one(verify(f, NULL), LEDGER_FINDING_CHANGED, name, 5, first + 4, first + 4);
}

static void test_changed_rehashed(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX], *p;
        Lines l;
        uint64_t first = tamper_setup(f, name, &l);

        p = strstr(l.v[4], "\"reason\":\"test\"");
        p[10] = 'b';
        rehash(l.v[4]);
        lines_write(f, name, &l);
        expect_one(verify(f, NULL), LEDGER_FINDING_CHANGED, name, 5, first + 4, first + 4);
}

static void test_removed(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX];
        Lines l;
        uint64_t first = tamper_setup(f, name, &l);

        free(l.v[4]);
        free(l.v[5]);
        memmove(&l.v[4], &l.v[6], (l.n - 6) * sizeof(char *));
        l.n -= 2;
        lines_write(f, name, &l);
        /* Reported at the record after the gap, which took line 5. */
        expect_one(verify(f, NULL), LEDGER_FINDING_REMOVED, name, 5, first + 4, first + 5);
}

/* The last record of a file removed: the next file's first record no
 * longer links, reported there. */
static void test_removed_at_file_end(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX], next[LEDGER_FILE_NAME_MAX];
        Lines l;
        uint64_t first = tamper_setup(f, name, &l);

        free(l.v[--l.n]);
        lines_write(f, name, &l);
        file_name(f, 2, next);
        expect_one(verify(f, NULL), LEDGER_FINDING_REMOVED, next, 1, first + l.n, first + l.n);
}

static void test_reordered(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX], *moved;
        Lines l;
        uint64_t first = tamper_setup(f, name, &l);

        /* Record first+2 moved three places later (to line 6). */
        moved = l.v[2];
        memmove(&l.v[2], &l.v[3], 3 * sizeof(char *));
        l.v[5] = moved;
        lines_write(f, name, &l);
        expect_one(verify(f, NULL), LEDGER_FINDING_REORDERED, name, 6, first + 2, first + 2);
}

static void insert_line(Lines *l, size_t at, char *line) {
        memmove(&l->v[at + 1], &l->v[at], (l->n - at) * sizeof(char *));
        l->v[at] = line;
        l->n++;
}

/* A copy of a real record, elsewhere. */
static void test_inserted_copy(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX];
        Lines l;
        uint64_t first = tamper_setup(f, name, &l);

        insert_line(&l, 7, strdup(l.v[3]));
        lines_write(f, name, &l);
        expect_one(verify(f, NULL), LEDGER_FINDING_INSERTED, name, 8, first + 3, first + 3);
}

/* A forged record that fits: the next seq, linked to the record before
 * it, its own hash right. Nothing links to it. */
static void test_inserted_forged(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX], line[LEDGER_RECORD_MAX];
        LedgerRecord *rec = malloc(sizeof(*rec));
        uint8_t hash[LEDGER_HASH_BYTES];
        size_t len;
        Lines l;
        uint64_t first = tamper_setup(f, name, &l);

        assert_int_equal(ledger_record_parse(l.v[3], strlen(l.v[3]), rec), 0);
        assert_int_equal(ledger_record_format(rec->seq + 1, rec->realtime, rec->monotonic, LEDGER_EVENT_CREDIT_CHANGE,
                                              (const LedgerField[]){ { "source", "jitter" }, { "credit", "8" } }, 2,
                                              rec->hash, line, &len, hash),
                         0);
        line[len - 1] = '\0';
        insert_line(&l, 4, strdup(line));
        lines_write(f, name, &l);
        expect_one(verify(f, NULL), LEDGER_FINDING_INSERTED, name, 5, first + 4, first + 4);
        free(rec);
}

/* A garbage line added (line 3), or a record overwritten with garbage
 * (line 7): one finding each, not a second one for the link it broke. */
static void malformed_case(void **state, bool overwrite) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX];
        Lines l;

        (void) tamper_setup(f, name, &l);
        if (overwrite)
                l.v[6][20] = '\0';
        else
                insert_line(&l, 2, strdup("not a record"));
        lines_write(f, name, &l);
        expect_one(verify(f, NULL), LEDGER_FINDING_MALFORMED, name, overwrite ? 7 : 3, 0, 0);
}

static void test_malformed(void **state) {
        malformed_case(state, false);
}

static void test_garbled(void **state) {
        malformed_case(state, true);
}

/* Records cut from the front of the oldest file: its name says where it
 * began. */
static void test_front_cut(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX];
        Lines l;

        make_ledger(f, 100);
        file_name(f, 0, name);
        lines_read(f, name, &l);
        for (size_t i = 0; i < 3; i++)
                free(l.v[i]);
        memmove(&l.v[0], &l.v[3], (l.n - 3) * sizeof(char *));
        l.n -= 3;
        lines_write(f, name, &l);
        expect_one(verify(f, NULL), LEDGER_FINDING_REMOVED, name, 1, 1, 3);
}

/* The tail removed: the chain alone cannot tell; the anchor does. */
static void test_tail_cut_anchor(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX];
        LedgerReport *rep;
        LedgerFile *files = NULL;
        LedgerAnchor a;
        size_t n;
        Lines l;

        make_ledger(f, 100);
        rep = verify(f, NULL);
        a.seq = rep->last_seq;
        memcpy(a.hash, rep->last_hash, LEDGER_HASH_BYTES);
        ledger_report_free(rep);
        assert_int_equal(ledger_files_list(f->dir_fd, &files, &n), 0);
        memcpy(name, files[n - 1].name, LEDGER_FILE_NAME_MAX);
        free(files);
        lines_read(f, name, &l);
        assert_true(l.n > 3);
        for (size_t i = 0; i < 3; i++)
                free(l.v[--l.n]);
        lines_write(f, name, &l);
        rep = verify(f, NULL);
        assert_int_equal(rep->n_findings, 0);
        ledger_report_free(rep);
        expect_one(verify(f, &a), LEDGER_FINDING_ANCHOR, name, (unsigned) l.n + 1, 98, 100);
}

/* ---- crashes and failing disks -------------------------------------------- */

static size_t newest(Fixture *f, char name[static LEDGER_FILE_NAME_MAX]) {
        LedgerFile *files = NULL;
        size_t n;

        assert_int_equal(ledger_files_list(f->dir_fd, &files, &n), 0);
        assert_true(n > 0);
        memcpy(name, files[n - 1].name, LEDGER_FILE_NAME_MAX);
        free(files);
        return n;
}

static unsigned lines_in(Fixture *f, const char *name) {
        Lines l;

        lines_read(f, name, &l);
        for (size_t i = 0; i < l.n; i++)
                free(l.v[i]);
        return (unsigned) l.n;
}

/* After a crash that left a torn record: verify says torn (the rest is
 * intact); the next open cuts it, says so in a recovery record, and the
 * chain goes on whole. */
static void expect_recovery(Fixture *f, const char *name, unsigned complete, size_t torn_bytes) {
        LedgerReport *rep = verify(f, NULL);
        Ledger *l = NULL;

        assert_true(ledger_report_intact(rep));
        expect_one(rep, LEDGER_FINDING_TORN, name, complete + 1, 0, 0);
        assert_int_equal(ledger_open(f->dir_fd, &small, &l), 0);
        assert_int_equal(ledger_cut_bytes(l), torn_bytes);
        append_n(l, 1);
        ledger_free(l);
        rep = verify(f, NULL);
        assert_int_equal(rep->n_findings, 0);
        assert_int_equal(rep->last_seq, complete + 2);   /* the recovery record, then one more */
        ledger_report_free(rep);
        assert_int_equal(lines_in(f, name), complete + 2);
}

static void test_torn_last(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX], path[160];
        const char torn[] = "{\"seq\":11,\"realtime_us";
        FILE *fp;

        make_ledger(f, 10);
        newest(f, name);
        snprintf(path, sizeof(path), "%s/%s", f->dir, name);
        fp = fopen(path, "a");
        fputs(torn, fp);
        fclose(fp);
        expect_recovery(f, name, 10, strlen(torn));
}

/* The process dies half way through a record: write() puts half of it
 * down and fails, and the cut-back fails too (it never runs in a crash). */
static void test_crash_mid_write(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX];
        Ledger *l = NULL;
        struct stat st;
        off_t before;

        assert_int_equal(ledger_open(f->dir_fd, &small, &l), 0);
        append_n(l, 10);
        newest(f, name);
        assert_int_equal(fstatat(f->dir_fd, name, &st, 0), 0);
        before = st.st_size;
        disk = DISK_FAIL_HALF;
        truncate_fails = true;
        assert_int_equal(ledger_append(l, LEDGER_EVENT_STOP, (const LedgerField[]){ { "reason", "crash" } }, 1), -EIO);
        ledger_free(l);
        disk = DISK_OK;
        truncate_fails = false;
        assert_int_equal(fstatat(f->dir_fd, name, &st, 0), 0);
        assert_true(st.st_size > before);
        expect_recovery(f, name, 10, (size_t) (st.st_size - before));
}

/* A write that fails half way with the process alive: cut back at once,
 * the next record follows the last good one. */
static void test_write_error_cut_back(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX];
        LedgerReport *rep;
        Ledger *l = NULL;

        assert_int_equal(ledger_open(f->dir_fd, &small, &l), 0);
        append_n(l, 10);
        disk = DISK_FAIL_HALF;
        assert_int_equal(ledger_append(l, LEDGER_EVENT_STOP, (const LedgerField[]){ { "reason", "x" } }, 1), -EIO);
        /* The cut-back itself failed once: the next append tries again. */
        truncate_fails = true;
        assert_int_equal(ledger_append(l, LEDGER_EVENT_STOP, (const LedgerField[]){ { "reason", "x" } }, 1), -EIO);
        assert_int_equal(ledger_append(l, LEDGER_EVENT_STOP, (const LedgerField[]){ { "reason", "x" } }, 1), -EIO);
        disk = DISK_OK;
        truncate_fails = false;
        append_n(l, 2);
        ledger_free(l);
        newest(f, name);
        rep = verify(f, NULL);
        assert_int_equal(rep->n_findings, 0);
        assert_int_equal(rep->last_seq, 12);
        ledger_report_free(rep);
        assert_int_equal(lines_in(f, name), 12);
}

/* Short writes: a record still lands whole. */
static void test_short_writes(void **state) {
        Fixture *f = *state;
        LedgerReport *rep;

        disk = DISK_SHORT;
        make_ledger(f, 30);
        disk = DISK_OK;
        rep = verify(f, NULL);
        assert_int_equal(rep->n_findings, 0);
        assert_int_equal(rep->records, 30);
        ledger_report_free(rep);
}

/* A newest record that is not one is not written after. */
static void test_damaged_newest_refused(void **state) {
        Fixture *f = *state;
        char name[LEDGER_FILE_NAME_MAX], path[160];
        Ledger *l = NULL;
        FILE *fp;

        make_ledger(f, 5);
        newest(f, name);
        snprintf(path, sizeof(path), "%s/%s", f->dir, name);
        fp = fopen(path, "a");
        fputs("garbage\n", fp);
        fclose(fp);
        assert_int_equal(ledger_open(f->dir_fd, &small, &l), -EBADMSG);
        assert_null(l);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
                cmocka_unit_test(test_hash_recipe),
                cmocka_unit_test(test_refused),
                cmocka_unit_test_setup_teardown(test_rotation_bounds, setup, teardown),
                cmocka_unit_test_setup_teardown(test_changed_in_place, setup, teardown),
                cmocka_unit_test_setup_teardown(test_changed_rehashed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_removed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_removed_at_file_end, setup, teardown),
                cmocka_unit_test_setup_teardown(test_reordered, setup, teardown),
                cmocka_unit_test_setup_teardown(test_inserted_copy, setup, teardown),
                cmocka_unit_test_setup_teardown(test_inserted_forged, setup, teardown),
                cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
                cmocka_unit_test_setup_teardown(test_garbled, setup, teardown),
                cmocka_unit_test_setup_teardown(test_front_cut, setup, teardown),
                cmocka_unit_test_setup_teardown(test_tail_cut_anchor, setup, teardown),
                cmocka_unit_test_setup_teardown(test_torn_last, setup, teardown),
                cmocka_unit_test_setup_teardown(test_crash_mid_write, setup, teardown),
                cmocka_unit_test_setup_teardown(test_write_error_cut_back, setup, teardown),
                cmocka_unit_test_setup_teardown(test_short_writes, setup, teardown),
                cmocka_unit_test_setup_teardown(test_damaged_newest_refused, setup, teardown),
        };

        if (sodium_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
