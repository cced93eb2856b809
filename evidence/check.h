/* check.h - verifying an evidence bundle (bundle.h): every file against
 * the MANIFEST, the MANIFEST against the signature, streaming (one 64 KiB
 * chunk, a running hash, the list of names; the MANIFEST, at most
 * EVIDENCE_MANIFEST_MAX, is the one thing held whole).
 *
 * Each finding names the file it is about:
 *   changed    its SHA-256 is not the MANIFEST's
 *   missing    in the MANIFEST, not in the tar
 *   unlisted   in the tar, not in the MANIFEST (an added file, or an entry
 *              that is not a plain file)
 *   duplicate  in the tar twice
 *   truncated  the tar ends inside it
 *   damaged    a header after it does not read (altered; the name is
 *              the last entry read whole, "" if none); the entries
 *              skipped until the next good header then show as missing
 *   manifest   MANIFEST missing, malformed, or too large
 *   signature  MANIFEST.sig does not verify with the key given, or is not
 *              64 bytes
 *   unsigned   a key was given and the bundle has no signature
 * Without a key, a signature is reported present and not checked: a key
 * carried in the bundle would prove nothing.
 * Flow: FILE.tar -> [evidence check] -> truerandomctl, auditor. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bundle.h"

#define EVIDENCE_MANIFEST_MAX (1024U * 1024U)

typedef enum EvidenceProblem {
        EVIDENCE_CHANGED,
        EVIDENCE_MISSING,
        EVIDENCE_UNLISTED,
        EVIDENCE_DUPLICATE,
        EVIDENCE_TRUNCATED,
        EVIDENCE_DAMAGED,
        EVIDENCE_BAD_MANIFEST,
        EVIDENCE_BAD_SIGNATURE,
        EVIDENCE_UNSIGNED,
        _EVIDENCE_PROBLEM_MAX,
} EvidenceProblem;

typedef struct EvidenceFinding {
        EvidenceProblem problem;
        char name[EVIDENCE_NAME_MAX + 1];
} EvidenceFinding;

typedef struct EvidenceReport {
        size_t files;                   /* plain files checked against the MANIFEST */
        uint64_t bytes;                 /* their bytes */
        bool is_signed;                 /* MANIFEST.sig present */
        bool signature_ok;              /* checked with the key given, and good */
        EvidenceFinding *findings;
        size_t n_findings;
} EvidenceReport;

/* Reads the bundle from fd to its end. 0 with the report (findings
 * inside); -ENOMEM, or -errno reading fd. pk may be NULL. */
int evidence_verify(int fd, const uint8_t *pk, EvidenceReport **ret);
EvidenceReport *evidence_report_free(EvidenceReport *r);
DEFINE_FREEP(EvidenceReport, evidence_report_free);

static inline bool evidence_report_ok(const EvidenceReport *r) {
        return r->n_findings == 0;
}
const char *evidence_problem_to_string(EvidenceProblem p);
