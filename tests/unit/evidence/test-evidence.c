/* test-evidence.c - the evidence bundle as an auditor relies on it: a
 * bundle of two 1 MB captures (one streamed in pieces, one from a file)
 * and a report verifies, signed and unsigned, and its MANIFEST is what
 * sha256sum -c reads; each alteration (a changed byte in a file, a file
 * removed, a file added, a file twice, the MANIFEST changed, a bad or
 * absent signature, the tar cut inside a file or inside the MANIFEST, a
 * bundle never finished) fails naming the file; bad names and byte
 * counts are refused and stick. Keys: an Ed25519 pair made by OpenSSL
 * reads back to the same bytes and signs exactly as OpenSSL signed
 * (a known answer), key files round-trip, a readable secret key is
 * refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evidence/bundle.h"
#include "evidence/check.h"
#include "evidence/keys.h"

/* ---- keys --------------------------------------------------------------- */

/* `openssl genpkey -algorithm ed25519`, `openssl pkey -pubout`, and
 * `printf abc | openssl pkeyutl -sign -rawin` (OpenSSL 3.0.x). */
static const char kat_secret[] = "-----BEGIN PRIVATE KEY-----\n"
                                 "MC4CAQAwBQYDK2VwBCIEICfXaHLckp2FKiuJgHtCWCIx+ES0ILABiNAtYk+ayDjY\n"
                                 "-----END PRIVATE KEY-----\n";
static const char kat_public[] = "-----BEGIN PUBLIC KEY-----\n"
                                 "MCowBQYDK2VwAyEAYqPW7+lmfXXozpRuU06rbPIm2UgCz4XrfnfjwXTtPRg=\n"
                                 "-----END PUBLIC KEY-----\n";
static const char kat_public_hex[] = "62a3d6efe9667d75e8ce946e534eab6cf226d94802cf85eb7e77e3c174ed3d18";
static const char kat_sig_abc_hex[] = "cdea4c5c7d7e0d6d871e25e60116b76735c773eb295465d34664952e8c163126"
                                      "95498370b1dff01a39db2618058899fc3c8220569948f3833f5bd246a8c9ce01";

static void unhex(const char *hex, uint8_t *out, size_t n) {
        size_t got = 0;

        assert_int_equal(sodium_hex2bin(out, n, hex, strlen(hex), NULL, &got, NULL), 0);
        assert_int_equal(got, n);
}

static void test_keys_openssl_kat(void **state) {
        uint8_t sk[EVIDENCE_SECRET_KEY_BYTES], pk[EVIDENCE_PUBLIC_KEY_BYTES], want_pk[EVIDENCE_PUBLIC_KEY_BYTES];
        uint8_t sig[EVIDENCE_SIGNATURE_BYTES], want_sig[EVIDENCE_SIGNATURE_BYTES];
        char pem[EVIDENCE_KEY_FILE_MAX];

        unhex(kat_public_hex, want_pk, sizeof(want_pk));
        unhex(kat_sig_abc_hex, want_sig, sizeof(want_sig));
        assert_int_equal(evidence_key_parse_secret(kat_secret, strlen(kat_secret), sk), 0);
        assert_int_equal(evidence_key_parse_public(kat_public, strlen(kat_public), pk), 0);
        assert_memory_equal(pk, want_pk, sizeof(pk));
        assert_memory_equal(sk + 32, want_pk, sizeof(pk));   /* the seed made the same pair */
        crypto_sign_detached(sig, NULL, (const unsigned char *) "abc", 3, sk);
        assert_memory_equal(sig, want_sig, sizeof(sig));
        /* Written back, byte for byte what OpenSSL wrote. */
        assert_int_equal(evidence_key_format_secret(sk, pem, sizeof(pem)), 0);
        assert_string_equal(pem, kat_secret);
        assert_int_equal(evidence_key_format_public(pk, pem, sizeof(pem)), 0);
        assert_string_equal(pem, kat_public);
        assert_int_equal(evidence_key_format_public(pk, pem, 20), -ENOBUFS);
}

static void test_keys_refused(void **state) {
        uint8_t sk[EVIDENCE_SECRET_KEY_BYTES], pk[EVIDENCE_PUBLIC_KEY_BYTES];
        char bad[256];
        /* An X25519 key: same shape, another algorithm (OID 1.3.101.110). */
        const char x25519[] = "-----BEGIN PRIVATE KEY-----\n"
                              "MC4CAQAwBQYDK2VuBCIEICfXaHLckp2FKiuJgHtCWCIx+ES0ILABiNAtYk+ayDjY\n"
                              "-----END PRIVATE KEY-----\n";

        assert_int_equal(evidence_key_parse_secret(x25519, strlen(x25519), sk), -EBADMSG);
        assert_int_equal(evidence_key_parse_secret(kat_public, strlen(kat_public), sk), -EBADMSG);
        assert_int_equal(evidence_key_parse_public(kat_secret, strlen(kat_secret), pk), -EBADMSG);
        snprintf(bad, sizeof(bad), "%sjunk\n", kat_public);
        assert_int_equal(evidence_key_parse_public(bad, strlen(bad), pk), -EBADMSG);
        snprintf(bad, sizeof(bad), "%s", kat_public);
        bad[40] = '*';
        assert_int_equal(evidence_key_parse_public(bad, strlen(bad), pk), -EBADMSG);
}

static int tmp_fd(void) {
        char path[] = "/tmp/test-evidence-XXXXXX";
        int fd = mkstemp(path);

        assert_true(fd >= 0);
        unlink(path);
        return fd;
}

static void test_key_files(void **state) {
        uint8_t sk[EVIDENCE_SECRET_KEY_BYTES], pk[EVIDENCE_PUBLIC_KEY_BYTES];
        uint8_t sk2[EVIDENCE_SECRET_KEY_BYTES], pk2[EVIDENCE_PUBLIC_KEY_BYTES];
        int s = tmp_fd(), p = tmp_fd();

        assert_int_equal(evidence_key_generate(pk, sk), 0);
        assert_int_equal(fchmod(s, 0600), 0);
        assert_int_equal(evidence_key_write_secret(s, sk), 0);
        assert_int_equal(evidence_key_write_public(p, pk), 0);
        assert_int_equal(lseek(s, 0, SEEK_SET), 0);
        assert_int_equal(lseek(p, 0, SEEK_SET), 0);
        assert_int_equal(evidence_key_read_secret(s, sk2), 0);
        assert_int_equal(evidence_key_read_public(p, pk2), 0);
        assert_memory_equal(sk, sk2, sizeof(sk));
        assert_memory_equal(pk, pk2, sizeof(pk));
        /* A signing key others may read is no signing key of the operator's. */
        assert_int_equal(fchmod(s, 0640), 0);
        assert_int_equal(lseek(s, 0, SEEK_SET), 0);
        assert_int_equal(evidence_key_read_secret(s, sk2), -EPERM);
        close(s);
        close(p);
}

/* ---- a bundle ------------------------------------------------------------------ */

#define CAPTURE 1000000U
static const char readme[] = "README: ea_non_iid -v jitter/raw.bin 8\n";
static uint8_t pk[EVIDENCE_PUBLIC_KEY_BYTES], sk[EVIDENCE_SECRET_KEY_BYTES];

static uint8_t sample(size_t i, unsigned salt) {
        return (uint8_t) (((i * 2654435761U) >> 13) ^ (salt * 0x5bU));
}

/* jitter/raw.bin streamed in 4096-byte pieces, jitter/restart.bin from a
 * file, README.txt from memory; signed when sign. */
static int make_bundle(bool sign) {
        EvidenceWriter *w = NULL;
        uint8_t chunk[4096];
        int out = tmp_fd(), cap = tmp_fd();

        for (size_t i = 0; i < CAPTURE; i += sizeof(chunk)) {
                size_t n = MIN(sizeof(chunk), CAPTURE - i);

                for (size_t j = 0; j < n; j++)
                        chunk[j] = sample(i + j, 2);
                assert_int_equal(write(cap, chunk, n), (ssize_t) n);
        }
        assert_int_equal(lseek(cap, 0, SEEK_SET), 0);
        assert_int_equal(evidence_writer_new(out, 1700000000 * USEC_PER_SEC, &w), 0);
        assert_int_equal(evidence_add_buffer(w, "README.txt", readme, strlen(readme)), 0);
        assert_int_equal(evidence_file_begin(w, "jitter/raw.bin", CAPTURE), 0);
        for (size_t i = 0; i < CAPTURE; i += sizeof(chunk)) {
                size_t n = MIN(sizeof(chunk), CAPTURE - i);

                for (size_t j = 0; j < n; j++)
                        chunk[j] = sample(i + j, 1);
                assert_int_equal(evidence_file_write(w, chunk, n), 0);
        }
        assert_int_equal(evidence_file_end(w), 0);
        assert_int_equal(evidence_add_fd(w, "jitter/restart.bin", cap), 0);
        assert_int_equal(evidence_writer_finish(w, sign ? sk : NULL), 0);
        evidence_writer_free(w);
        close(cap);
        assert_int_equal(lseek(out, 0, SEEK_SET), 0);
        return out;
}

static EvidenceReport *check(int fd, const uint8_t *key) {
        EvidenceReport *rep = NULL;

        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        assert_int_equal(evidence_verify(fd, key, &rep), 0);
        for (size_t i = 0; i < rep->n_findings; i++)
                fprintf(stderr, "  finding: %s %s\n", evidence_problem_to_string(rep->findings[i].problem),
                        rep->findings[i].name);
        return rep;
}

/* The findings, exactly these (problem, name) pairs in this order. */
static void expect(int fd, const uint8_t *key, size_t n, const EvidenceFinding *want) {
        EvidenceReport *rep = check(fd, key);

        assert_int_equal(rep->n_findings, n);
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(rep->findings[i].problem, want[i].problem);
                assert_string_equal(rep->findings[i].name, want[i].name);
        }
        assert_false(evidence_report_ok(rep));
        evidence_report_free(rep);
        close(fd);
}

#define EXPECT(fd, key, ...)                                                                  \
        expect(fd, key, sizeof((const EvidenceFinding[]){ __VA_ARGS__ }) / sizeof(EvidenceFinding), \
               (const EvidenceFinding[]){ __VA_ARGS__ })

/* The entries of a bundle in order, each with its data, by libarchive. */
typedef int (*EntryFn)(struct archive *out, const char *name, const void *data, size_t n, void *userdata);

static int copy_entry(struct archive *out, const char *name, const void *data, size_t n) {
        struct archive_entry *e = archive_entry_new();

        archive_entry_set_pathname(e, name);
        archive_entry_set_size(e, (la_int64_t) n);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        assert_int_equal(archive_write_header(out, e), ARCHIVE_OK);
        assert_int_equal(archive_write_data(out, data, n), (la_ssize_t) n);
        archive_entry_free(e);
        return 0;
}

/* A new tar from fd's entries, each passed through fn (which copies,
 * drops, changes or adds). */
static int rewrite(int fd, EntryFn fn, void *userdata) {
        struct archive *in = archive_read_new(), *out = archive_write_new();
        struct archive_entry *e;
        uint8_t *buf = malloc(4 * CAPTURE);
        int dst = tmp_fd();

        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        archive_read_support_format_tar(in);
        assert_int_equal(archive_read_open_fd(in, fd, 10240), ARCHIVE_OK);
        archive_write_set_format_pax_restricted(out);
        assert_int_equal(archive_write_open_fd(out, dst), ARCHIVE_OK);
        while (archive_read_next_header(in, &e) == ARCHIVE_OK) {
                la_ssize_t n = archive_read_data(in, buf, 4 * CAPTURE);

                assert_true(n >= 0);
                fn(out, archive_entry_pathname(e), buf, (size_t) n, userdata);
        }
        fn(out, NULL, NULL, 0, userdata);   /* the end: a chance to append */
        archive_read_free(in);
        assert_int_equal(archive_write_close(out), ARCHIVE_OK);
        archive_write_free(out);
        free(buf);
        close(fd);
        return dst;
}

static int copy_all(struct archive *out, const char *name, const void *data, size_t n, void *userdata) {
        return name ? copy_entry(out, name, data, n) : 0;
}

static void test_roundtrip(void **state) {
        int fd = make_bundle(true);
        EvidenceReport *rep = check(fd, pk);
        struct archive *in = archive_read_new();
        struct archive_entry *e;
        const char *names[] = { "README.txt", "jitter/raw.bin", "jitter/restart.bin", "MANIFEST", "MANIFEST.sig" };
        char manifest[1024] = "", line[160], hex[65];
        uint8_t h[32];
        size_t i = 0;

        assert_true(evidence_report_ok(rep));
        assert_int_equal(rep->files, 3);
        assert_int_equal(rep->bytes, 2 * CAPTURE + strlen(readme));
        assert_true(rep->is_signed && rep->signature_ok);
        evidence_report_free(rep);
        /* Without a key: signed, not checked, nothing wrong. */
        rep = check(fd, NULL);
        assert_true(evidence_report_ok(rep));
        assert_true(rep->is_signed && !rep->signature_ok);
        evidence_report_free(rep);
        /* The order, and a MANIFEST as sha256sum writes it. */
        crypto_hash_sha256(h, (const unsigned char *) readme, strlen(readme));
        sodium_bin2hex(hex, sizeof(hex), h, 32);
        snprintf(line, sizeof(line), "%s  README.txt\n", hex);
        assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
        archive_read_support_format_tar(in);
        assert_int_equal(archive_read_open_fd(in, fd, 10240), ARCHIVE_OK);
        while (archive_read_next_header(in, &e) == ARCHIVE_OK) {
                assert_true(i < 5);
                assert_string_equal(archive_entry_pathname(e), names[i]);
                assert_int_equal(archive_entry_perm(e), 0644);
                if (i++ == 3)
                        assert_true(archive_read_data(in, manifest, sizeof(manifest) - 1) > 0);
        }
        assert_int_equal(i, 5);
        assert_int_equal(strncmp(manifest, line, strlen(line)), 0);
        assert_non_null(strstr(manifest, "  jitter/restart.bin\n"));
        archive_read_free(in);
        /* Copied entry by entry into a new tar: still the same bundle. */
        fd = rewrite(fd, copy_all, NULL);
        rep = check(fd, pk);
        assert_true(evidence_report_ok(rep));
        evidence_report_free(rep);
        close(fd);
}

/* The offset of needle in the bundle's bytes. */
static off_t find(int fd, const void *needle, size_t n) {
        struct stat st;
        uint8_t *m, *hit;
        off_t off;

        assert_int_equal(fstat(fd, &st), 0);
        m = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        assert_true(m != MAP_FAILED);
        hit = memmem(m, (size_t) st.st_size, needle, n);
        assert_non_null(hit);
        off = hit - m;
        munmap(m, (size_t) st.st_size);
        return off;
}

static void test_changed_byte(void **state) {
        int fd = make_bundle(true);
        off_t off = find(fd, readme, strlen(readme));

        assert_int_equal(pwrite(fd, "r", 1, off), 1);
        EXPECT(fd, pk, { EVIDENCE_CHANGED, "README.txt" });
}

static void test_changed_byte_in_capture(void **state) {
        int fd = make_bundle(false);
        uint8_t head[64], b;
        off_t off;

        for (size_t i = 0; i < sizeof(head); i++)
                head[i] = sample(i, 2);
        off = find(fd, head, sizeof(head)) + 500000;
        assert_int_equal(pread(fd, &b, 1, off), 1);
        b ^= 0x10;
        assert_int_equal(pwrite(fd, &b, 1, off), 1);
        EXPECT(fd, NULL, { EVIDENCE_CHANGED, "jitter/restart.bin" });
}

static int drop_restart(struct archive *out, const char *name, const void *data, size_t n, void *userdata) {
        return name && strcmp(name, "jitter/restart.bin") != 0 ? copy_entry(out, name, data, n) : 0;
}

static void test_removed_file(void **state) {
        EXPECT(rewrite(make_bundle(true), drop_restart, NULL), pk, { EVIDENCE_MISSING, "jitter/restart.bin" });
}

static int add_extra(struct archive *out, const char *name, const void *data, size_t n, void *userdata) {
        return name ? copy_entry(out, name, data, n) : copy_entry(out, "extra.txt", "x\n", 2);
}

static void test_added_file(void **state) {
        EXPECT(rewrite(make_bundle(true), add_extra, NULL), pk, { EVIDENCE_UNLISTED, "extra.txt" });
}

static int twice_readme(struct archive *out, const char *name, const void *data, size_t n, void *userdata) {
        if (name && strcmp(name, "README.txt") == 0)
                copy_entry(out, name, data, n);
        return name ? copy_entry(out, name, data, n) : 0;
}

static void test_duplicate_file(void **state) {
        EXPECT(rewrite(make_bundle(true), twice_readme, NULL), pk, { EVIDENCE_DUPLICATE, "README.txt" });
}

/* MANIFEST's first line (README.txt's hash) edited, or the signature. */
static int edit(struct archive *out, const char *name, const void *data, size_t n, void *userdata) {
        uint8_t copy[1024];

        if (!name || strcmp(name, userdata) != 0)
                return name ? copy_entry(out, name, data, n) : 0;
        assert_true(n <= sizeof(copy));
        memcpy(copy, data, n);
        copy[0] = copy[0] == '0' ? '1' : '0';
        return copy_entry(out, name, copy, n);
}

static void test_changed_manifest(void **state) {
        int fd = rewrite(make_bundle(true), edit, (void *) "MANIFEST");

        EXPECT(dup(fd), NULL, { EVIDENCE_CHANGED, "README.txt" });
        EXPECT(fd, pk, { EVIDENCE_CHANGED, "README.txt" }, { EVIDENCE_BAD_SIGNATURE, "MANIFEST.sig" });
}

static void test_bad_signature(void **state) {
        uint8_t other_pk[EVIDENCE_PUBLIC_KEY_BYTES], other_sk[EVIDENCE_SECRET_KEY_BYTES];

        assert_int_equal(evidence_key_generate(other_pk, other_sk), 0);
        EXPECT(make_bundle(true), other_pk, { EVIDENCE_BAD_SIGNATURE, "MANIFEST.sig" });
        EXPECT(rewrite(make_bundle(true), edit, (void *) "MANIFEST.sig"), pk,
               { EVIDENCE_BAD_SIGNATURE, "MANIFEST.sig" });
        EXPECT(make_bundle(false), pk, { EVIDENCE_UNSIGNED, "MANIFEST.sig" });
}

static void test_truncated(void **state) {
        uint8_t head[64];
        int fd = make_bundle(true);
        off_t off;

        for (size_t i = 0; i < sizeof(head); i++)
                head[i] = sample(i, 1);
        off = find(fd, head, sizeof(head));
        assert_int_equal(ftruncate(fd, off + 300000), 0);
        EXPECT(fd, pk, { EVIDENCE_TRUNCATED, "jitter/raw.bin" }, { EVIDENCE_BAD_MANIFEST, "MANIFEST" },
               { EVIDENCE_UNSIGNED, "MANIFEST.sig" });
        fd = make_bundle(true);
        off = find(fd, "  README.txt\n", 13);
        assert_int_equal(ftruncate(fd, off + 13), 0);
        EXPECT(fd, NULL, { EVIDENCE_TRUNCATED, "MANIFEST" }, { EVIDENCE_BAD_MANIFEST, "MANIFEST" });
}

/* A header altered: damaged after the entry before it; libarchive skips
 * to the next good header, so the entry it swallowed is missing, and the
 * rest (the MANIFEST, its signature) still checks. */
static void test_damaged_header(void **state) {
        int fd = make_bundle(true);
        off_t off = find(fd, "jitter/raw.bin\0\0", 16);   /* the header's name field */

        assert_int_equal(pwrite(fd, "J", 1, off), 1);
        EXPECT(fd, pk, { EVIDENCE_DAMAGED, "README.txt" }, { EVIDENCE_MISSING, "jitter/raw.bin" });
}

static void test_writer_refuses(void **state) {
        EvidenceWriter *w = NULL;
        int fd = tmp_fd();
        const char *bad[] = { "", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a b", "MANIFEST", "MANIFEST.sig",
                              "a\nb" };
        char longname[EVIDENCE_NAME_MAX + 2];

        memset(longname, 'a', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                assert_false(evidence_name_ok(bad[i]));
        assert_false(evidence_name_ok(longname));
        assert_true(evidence_name_ok("jitter/raw-1.bin"));
        assert_int_equal(evidence_writer_new(fd, 0, &w), 0);
        assert_int_equal(evidence_add_buffer(w, "a.txt", "x", 1), 0);
        assert_int_equal(evidence_add_buffer(w, "a.txt", "y", 1), -EINVAL);
        assert_int_equal(evidence_add_buffer(w, "b.txt", "y", 1), -EINVAL);   /* the error sticks */
        evidence_writer_free(w);
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(evidence_writer_new(fd, 0, &w), 0);
        assert_int_equal(evidence_file_begin(w, "short.bin", 10), 0);
        assert_int_equal(evidence_file_write(w, "12345", 5), 0);
        assert_int_equal(evidence_file_write(w, "1234567", 7), -EINVAL);
        evidence_writer_free(w);
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(evidence_writer_new(fd, 0, &w), 0);
        assert_int_equal(evidence_file_begin(w, "short.bin", 10), 0);
        assert_int_equal(evidence_file_write(w, "12345", 5), 0);
        assert_int_equal(evidence_file_end(w), -EIO);
        assert_int_equal(evidence_writer_finish(w, NULL), -EIO);
        evidence_writer_free(w);
        close(fd);
}

/* A writer freed before finish leaves no MANIFEST: never a whole bundle. */
static void test_unfinished(void **state) {
        EvidenceWriter *w = NULL;
        int fd = tmp_fd();

        assert_int_equal(evidence_writer_new(fd, 0, &w), 0);
        assert_int_equal(evidence_add_buffer(w, "a.txt", "x", 1), 0);
        evidence_writer_free(w);
        EXPECT(fd, NULL, { EVIDENCE_BAD_MANIFEST, "MANIFEST" });
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_keys_openssl_kat),
                cmocka_unit_test(test_keys_refused),
                cmocka_unit_test(test_key_files),
                cmocka_unit_test(test_roundtrip),
                cmocka_unit_test(test_changed_byte),
                cmocka_unit_test(test_changed_byte_in_capture),
                cmocka_unit_test(test_removed_file),
                cmocka_unit_test(test_added_file),
                cmocka_unit_test(test_duplicate_file),
                cmocka_unit_test(test_changed_manifest),
                cmocka_unit_test(test_bad_signature),
                cmocka_unit_test(test_truncated),
                cmocka_unit_test(test_damaged_header),
                cmocka_unit_test(test_writer_refuses),
                cmocka_unit_test(test_unfinished),
        };

        if (sodium_init() < 0 || evidence_key_generate(pk, sk) < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
