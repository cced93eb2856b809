/* check.c - verifying an evidence bundle with libarchive (see check.h).
 * Flow: FILE.tar -> [evidence check] -> truerandomctl, auditor. */
#include "check.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK (64U * 1024U)
#define HASH_BYTES crypto_hash_sha256_BYTES

typedef struct Seen {
        char name[EVIDENCE_NAME_MAX + 1];
        uint8_t hash[HASH_BYTES];
        bool listed;
} Seen;

typedef struct Check {
        struct archive *a;
        Seen *seen;
        size_t n, cap;
        char *manifest;         /* EVIDENCE_MANIFEST_MAX + 1 */
        size_t manifest_len;
        bool have_manifest, have_sig;
        uint8_t sig[EVIDENCE_SIGNATURE_BYTES + 1];
        size_t sig_len;
        uint8_t *buf;
        char last[EVIDENCE_NAME_MAX + 1];       /* the last entry read whole */
        EvidenceReport *rep;
} Check;

static const char *const problem_names[_EVIDENCE_PROBLEM_MAX] = {
        [EVIDENCE_CHANGED] = "changed",         [EVIDENCE_MISSING] = "missing",
        [EVIDENCE_UNLISTED] = "unlisted",       [EVIDENCE_DUPLICATE] = "duplicate",
        [EVIDENCE_TRUNCATED] = "truncated",     [EVIDENCE_DAMAGED] = "damaged",
        [EVIDENCE_BAD_MANIFEST] = "manifest",   [EVIDENCE_BAD_SIGNATURE] = "signature",
        [EVIDENCE_UNSIGNED] = "unsigned",
};

const char *evidence_problem_to_string(EvidenceProblem p) {
        return (unsigned) p < _EVIDENCE_PROBLEM_MAX ? problem_names[p] : NULL;
}

EvidenceReport *evidence_report_free(EvidenceReport *r) {
        if (r) {
                free(r->findings);
                free(r);
        }
        return NULL;
}

static int add(Check *c, EvidenceProblem p, const char *name) {
        EvidenceReport *rep = c->rep;
        EvidenceFinding *m = reallocarray(rep->findings, rep->n_findings + 1, sizeof(*m));

        if (!m)
                return -ENOMEM;
        rep->findings = m;
        m[rep->n_findings].problem = p;
        snprintf(m[rep->n_findings++].name, sizeof(m->name), "%s", name ? name : "");
        return 0;
}

/* The entry's data into dst (at most max bytes; more sets *ret_len to
 * max + 1), or hashed into hash. -EPIPE: the tar ended inside it. */
static int read_data(Check *c, uint8_t *dst, size_t max, size_t *ret_len, uint8_t hash[static HASH_BYTES]) {
        crypto_hash_sha256_state st;
        size_t len = 0;

        crypto_hash_sha256_init(&st);
        for (;;) {
                la_ssize_t k = archive_read_data(c->a, c->buf, CHUNK);

                if (k < 0)
                        return -EPIPE;
                if (k == 0)
                        break;
                crypto_hash_sha256_update(&st, c->buf, (size_t) k);
                if (dst && len < max + 1)
                        memcpy(dst + len, c->buf, MIN((size_t) k, max + 1 - len));
                len += (size_t) k;
                c->rep->bytes += dst ? 0 : (uint64_t) k;
        }
        crypto_hash_sha256_final(&st, hash);
        if (ret_len)
                *ret_len = MIN(len, max + 1);
        return 0;
}

static Seen *seen_find(Check *c, const char *name) {
        for (size_t i = 0; i < c->n; i++)
                if (strcmp(c->seen[i].name, name) == 0)
                        return &c->seen[i];
        return NULL;
}

/* One plain file of the tar. */
static int take_entry(Check *c, const char *name) {
        uint8_t hash[HASH_BYTES];
        bool manifest = strcmp(name, EVIDENCE_MANIFEST) == 0, sig = strcmp(name, EVIDENCE_SIGNATURE) == 0;
        int r;

        if ((manifest && c->have_manifest) || (sig && c->have_sig) || seen_find(c, name))
                return add(c, EVIDENCE_DUPLICATE, name);
        if (manifest)
                r = read_data(c, (uint8_t *) c->manifest, EVIDENCE_MANIFEST_MAX, &c->manifest_len, hash);
        else if (sig)
                r = read_data(c, c->sig, EVIDENCE_SIGNATURE_BYTES, &c->sig_len, hash);
        else
                r = read_data(c, NULL, 0, NULL, hash);
        if (r < 0)
                return r;
        c->have_manifest |= manifest;
        c->have_sig |= sig;
        snprintf(c->last, sizeof(c->last), "%s", name);
        if (manifest || sig)
                return 0;
        if (c->n == c->cap) {
                Seen *m = reallocarray(c->seen, c->cap ? c->cap * 2 : 16, sizeof(*m));

                if (!m)
                        return -ENOMEM;
                c->seen = m;
                c->cap = c->cap ? c->cap * 2 : 16;
        }
        c->seen[c->n] = (Seen){ .listed = false };
        snprintf(c->seen[c->n].name, sizeof(c->seen[c->n].name), "%s", name);
        memcpy(c->seen[c->n++].hash, hash, HASH_BYTES);
        c->rep->files++;
        return 0;
}

/* Every entry of the tar, until its end or the first place it cannot be
 * read past. Where a header is damaged libarchive skips ahead to the next
 * good one (ARCHIVE_RETRY, block by block): one finding for the run, and
 * the entries it swallowed show up missing. */
static int read_entries(Check *c) {
        struct archive_entry *e;
        bool damaged = false;
        int r;

        for (;;) {
                const char *name;

                r = archive_read_next_header(c->a, &e);
                if (r == ARCHIVE_EOF)
                        return 0;
                if (r == ARCHIVE_RETRY) {
                        r = damaged ? 0 : add(c, EVIDENCE_DAMAGED, c->last);
                        damaged = true;
                        if (r < 0)
                                return r;
                        continue;
                }
                if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
                        return damaged ? 0 : add(c, EVIDENCE_DAMAGED, c->last);
                damaged = false;
                name = archive_entry_pathname(e);
                if (!name || strlen(name) > EVIDENCE_NAME_MAX || archive_entry_filetype(e) != AE_IFREG) {
                        r = add(c, EVIDENCE_UNLISTED, name);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = take_entry(c, name);
                if (r == -EPIPE)
                        return add(c, EVIDENCE_TRUNCATED, name);
                if (r < 0)
                        return r;
        }
}

/* One MANIFEST line, "<64 hex>  <name>", against what the tar held. */
static int check_line(Check *c, const char *line, size_t len) {
        char name[EVIDENCE_NAME_MAX + 1];
        uint8_t hash[HASH_BYTES];
        size_t n = 0;
        Seen *s;

        if (len < 2 * HASH_BYTES + 3 || len > 2 * HASH_BYTES + 2 + EVIDENCE_NAME_MAX ||
            memcmp(line + 2 * HASH_BYTES, "  ", 2) != 0 ||
            sodium_hex2bin(hash, sizeof(hash), line, 2 * HASH_BYTES, NULL, &n, NULL) < 0 || n != HASH_BYTES)
                return 1;
        memcpy(name, line + 2 * HASH_BYTES + 2, len - 2 * HASH_BYTES - 2);
        name[len - 2 * HASH_BYTES - 2] = '\0';
        if (!evidence_name_ok(name))
                return 1;
        s = seen_find(c, name);
        if (!s)
                return add(c, EVIDENCE_MISSING, name);
        if (s->listed)
                return 1;   /* listed twice */
        s->listed = true;
        return sodium_memcmp(s->hash, hash, HASH_BYTES) == 0 ? 0 : add(c, EVIDENCE_CHANGED, name);
}

static int check_manifest(Check *c) {
        const char *p = c->manifest, *end = c->manifest + c->manifest_len;
        int r = 0;

        if (!c->have_manifest || c->manifest_len > EVIDENCE_MANIFEST_MAX ||
            (c->manifest_len > 0 && end[-1] != '\n'))
                return add(c, EVIDENCE_BAD_MANIFEST, EVIDENCE_MANIFEST);
        while (r == 0 && p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));

                r = check_line(c, p, (size_t) (nl - p));
                p = nl + 1;
        }
        if (r > 0)
                return add(c, EVIDENCE_BAD_MANIFEST, EVIDENCE_MANIFEST);
        for (size_t i = 0; r >= 0 && i < c->n; i++)
                if (!c->seen[i].listed)
                        r = add(c, EVIDENCE_UNLISTED, c->seen[i].name);
        return r;
}

static int check_signature(Check *c, const uint8_t *pk) {
        c->rep->is_signed = c->have_sig;
        if (!c->have_sig)
                return pk ? add(c, EVIDENCE_UNSIGNED, EVIDENCE_SIGNATURE) : 0;
        if (c->sig_len != EVIDENCE_SIGNATURE_BYTES ||
            (pk && (!c->have_manifest ||
                    crypto_sign_verify_detached(c->sig, (const unsigned char *) c->manifest, c->manifest_len, pk) != 0)))
                return add(c, EVIDENCE_BAD_SIGNATURE, EVIDENCE_SIGNATURE);
        c->rep->signature_ok = pk != NULL;
        return 0;
}

int evidence_verify(int fd, const uint8_t *pk, EvidenceReport **ret) {
        Check c = { .rep = calloc(1, sizeof(EvidenceReport)) };
        int r = -ENOMEM;

        if (sodium_init() < 0)
                r = -EIO;
        else if (c.rep && (c.a = archive_read_new()) && (c.buf = malloc(CHUNK)) &&
                 (c.manifest = malloc(EVIDENCE_MANIFEST_MAX + 1))) {
                archive_read_support_format_tar(c.a);
                /* A file that is not even the start of a tar is damaged. */
                if (archive_read_open_fd(c.a, fd, 10240) == ARCHIVE_OK)
                        r = read_entries(&c);
                else
                        r = add(&c, EVIDENCE_DAMAGED, "");
                r = r < 0 ? r : check_manifest(&c);
                r = r < 0 ? r : check_signature(&c, pk);
        }
        if (c.a)
                archive_read_free(c.a);
        free(c.buf);
        free(c.manifest);
        free(c.seen);
        if (r < 0) {
                evidence_report_free(c.rep);
                return r;
        }
        *ret = c.rep;
        return 0;
}
