/* bundle.c - writing an evidence bundle with libarchive (see bundle.h).
 * Flow: captures, reports, ledger -> [evidence] -> FILE.tar -> auditor. */
#include "bundle.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (64U * 1024U)
#define HASH_BYTES crypto_hash_sha256_BYTES

typedef struct Item {
        char name[EVIDENCE_NAME_MAX + 1];
        uint8_t hash[HASH_BYTES];
} Item;

struct EvidenceWriter {
        struct archive *a;
        usec_t mtime;
        int error;              /* sticky: every call after a failure returns it */
        bool open, finished;
        uint64_t left;          /* bytes the open file still owes */
        crypto_hash_sha256_state st;
        Item *items;
        size_t n, cap;
};

static void archive_entry_freep(struct archive_entry **e) {
        if (*e)
                archive_entry_free(*e);
}

bool evidence_name_ok(const char *name) {
        size_t n = name ? strlen(name) : 0;
        const char *part = name;

        if (n == 0 || n > EVIDENCE_NAME_MAX || strcmp(name, EVIDENCE_MANIFEST) == 0 ||
            strcmp(name, EVIDENCE_SIGNATURE) == 0 || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                                  "0123456789._+-/") != n)
                return false;
        for (;;) {   /* every part between slashes: not empty, ".", or ".." */
                size_t len = strcspn(part, "/");

                if (len == 0 || (len == 1 && part[0] == '.') || (len == 2 && part[0] == '.' && part[1] == '.'))
                        return false;
                if (part[len] == '\0')
                        return true;
                part += len + 1;
        }
}

static int archive_error(struct archive *a) {
        int e = archive_errno(a);

        return e > 0 ? -e : -EIO;
}

/* Records a failure so that it sticks. */
static int fail(EvidenceWriter *w, int r) {
        if (w->error == 0)
                w->error = r;
        return r;
}

int evidence_writer_new(int fd, usec_t mtime, EvidenceWriter **ret) {
        EvidenceWriter *w;

        if (sodium_init() < 0)
                return -EIO;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->mtime = mtime ? mtime : now_usec(CLOCK_REALTIME);
        w->a = archive_write_new();
        if (!w->a || archive_write_set_format_pax_restricted(w->a) != ARCHIVE_OK ||
            archive_write_add_filter_none(w->a) != ARCHIVE_OK || archive_write_open_fd(w->a, fd) != ARCHIVE_OK) {
                evidence_writer_free(w);
                return -EIO;
        }
        *ret = w;
        return 0;
}

EvidenceWriter *evidence_writer_free(EvidenceWriter *w) {
        if (!w)
                return NULL;
        /* An unfinished bundle is closed like any tar (archive_write_fail()
         * would leave libarchive's buffers behind): it has no MANIFEST, so
         * it never verifies. */
        if (w->a)
                archive_write_free(w->a);
        free(w->items);
        free(w);
        return NULL;
}

/* Begins an entry; reserved names (MANIFEST) only from finish. */
static int file_begin(EvidenceWriter *w, const char *name, uint64_t size) {
        _cleanup_(archive_entry_freep) struct archive_entry *e = archive_entry_new();

        if (w->n == w->cap) {
                Item *m = reallocarray(w->items, w->cap ? w->cap * 2 : 16, sizeof(Item));

                if (!m)
                        return fail(w, -ENOMEM);
                w->items = m;
                w->cap = w->cap ? w->cap * 2 : 16;
        }
        if (!e)
                return fail(w, -ENOMEM);
        archive_entry_set_pathname(e, name);
        archive_entry_set_size(e, (la_int64_t) size);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_uname(e, "root");
        archive_entry_set_gname(e, "root");
        archive_entry_set_mtime(e, (time_t) (w->mtime / USEC_PER_SEC), 0);
        if (archive_write_header(w->a, e) != ARCHIVE_OK)
                return fail(w, archive_error(w->a));
        snprintf(w->items[w->n].name, sizeof(w->items[w->n].name), "%s", name);
        crypto_hash_sha256_init(&w->st);
        w->left = size;
        w->open = true;
        return 0;
}

int evidence_file_begin(EvidenceWriter *w, const char *name, uint64_t size) {
        if (w->error)
                return w->error;
        if (w->open || w->finished || !evidence_name_ok(name))
                return fail(w, -EINVAL);
        for (size_t i = 0; i < w->n; i++)
                if (strcmp(w->items[i].name, name) == 0)
                        return fail(w, -EINVAL);
        return file_begin(w, name, size);
}

int evidence_file_write(EvidenceWriter *w, const void *data, size_t n) {
        if (w->error)
                return w->error;
        if (!w->open || n > w->left)
                return fail(w, -EINVAL);
        if (n == 0)
                return 0;
        if (archive_write_data(w->a, data, n) != (la_ssize_t) n)
                return fail(w, archive_error(w->a));
        crypto_hash_sha256_update(&w->st, data, n);
        w->left -= n;
        return 0;
}

int evidence_file_end(EvidenceWriter *w) {
        if (w->error)
                return w->error;
        if (!w->open)
                return fail(w, -EINVAL);
        if (w->left > 0)
                return fail(w, -EIO);
        if (archive_write_finish_entry(w->a) != ARCHIVE_OK)
                return fail(w, archive_error(w->a));
        crypto_hash_sha256_final(&w->st, w->items[w->n++].hash);
        w->open = false;
        return 0;
}

int evidence_add_buffer(EvidenceWriter *w, const char *name, const void *data, size_t n) {
        int r = evidence_file_begin(w, name, n);

        r = r < 0 ? r : evidence_file_write(w, data, n);
        return r < 0 ? r : evidence_file_end(w);
}

int evidence_add_fd(EvidenceWriter *w, const char *name, int fd) {
        _cleanup_free_ uint8_t *buf = malloc(CHUNK);
        struct stat st;
        int r;

        if (!buf)
                return fail(w, -ENOMEM);
        if (fstat(fd, &st) < 0)
                return fail(w, -errno);
        if (!S_ISREG(st.st_mode))
                return fail(w, -EINVAL);
        r = evidence_file_begin(w, name, (uint64_t) st.st_size);
        while (r >= 0 && w->left > 0) {
                ssize_t k = read(fd, buf, (size_t) (w->left < CHUNK ? w->left : CHUNK));

                if (k < 0 && errno == EINTR)
                        continue;
                r = k < 0 ? fail(w, -errno) : k == 0 ? fail(w, -EIO) : evidence_file_write(w, buf, (size_t) k);
        }
        if (r >= 0 && read(fd, buf, 1) != 0)
                r = fail(w, -EIO);   /* it grew while we read it */
        return r < 0 ? r : evidence_file_end(w);
}

/* The MANIFEST text: one sha256sum line per file. */
static char *manifest_text(const EvidenceWriter *w, size_t *ret_len) {
        size_t cap = w->n * (2 * HASH_BYTES + 3 + EVIDENCE_NAME_MAX) + 1, len = 0;
        char *s = malloc(cap);

        for (size_t i = 0; s && i < w->n; i++) {
                char hex[2 * HASH_BYTES + 1];

                sodium_bin2hex(hex, sizeof(hex), w->items[i].hash, HASH_BYTES);
                len += (size_t) snprintf(s + len, cap - len, "%s  %s\n", hex, w->items[i].name);
        }
        *ret_len = len;
        return s;
}

static int add_reserved(EvidenceWriter *w, const char *name, const void *data, size_t n) {
        int r = file_begin(w, name, n);

        r = r < 0 ? r : evidence_file_write(w, data, n);
        return r < 0 ? r : evidence_file_end(w);
}

int evidence_writer_finish(EvidenceWriter *w, const uint8_t *sk) {
        _cleanup_free_ char *manifest = NULL;
        uint8_t sig[EVIDENCE_SIGNATURE_BYTES];
        size_t len, files;
        int r;

        if (w->error)
                return w->error;
        if (w->open || w->finished)
                return fail(w, -EINVAL);
        files = w->n;
        manifest = manifest_text(w, &len);
        if (!manifest)
                return fail(w, -ENOMEM);
        r = add_reserved(w, EVIDENCE_MANIFEST, manifest, len);
        if (r >= 0 && sk) {
                crypto_sign_detached(sig, NULL, (const unsigned char *) manifest, len, sk);
                r = add_reserved(w, EVIDENCE_SIGNATURE, sig, sizeof(sig));
        }
        if (r < 0)
                return r;
        w->n = files;
        if (archive_write_close(w->a) != ARCHIVE_OK)
                return fail(w, archive_error(w->a));
        w->finished = true;
        return 0;
}
