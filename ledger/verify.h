/* verify.h - reading the ledger back and checking its chain, for
 * `truerandomctl ledger [--json] [--verify]` and the evidence bundle.
 *
 * The walk goes over every file oldest first and every line in order. The
 * verdict names each finding by position (file, line, sequence number):
 *
 *   changed    a record's bytes no longer hash to its "hash" (edited in
 *              place), or its hash was recomputed and the next record's
 *              link no longer matches (reported at the edited record)
 *   removed    sequence numbers missing from the chain (first..last),
 *              at the record after the gap; also records cut from the
 *              front of the oldest file (its name says where it began)
 *   reordered  a record of the chain out of its place in the files
 *   inserted   a record no one links to, off the chain
 *   malformed  a line that is not a record (garbage, a line too long)
 *   torn       the bytes after the last line end of the newest file: a
 *              write cut short by a crash. Reported, not a tampering: it
 *              leaves every earlier record intact
 *   anchor     the record at an anchor's seq has another hash, or the
 *              ledger ends before the anchor (its tail was removed)
 *
 * What a chain cannot show by itself: the tail removed or rewritten as a
 * whole, or the oldest files removed (rotation removes them too). The
 * anchor (the head published elsewhere: the journal, a signed evidence
 * bundle) covers the tail; the report says where the chain starts.
 * Flow: StateDirectory -> [ledger verify] -> ctl, evidence bundle. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "files.h"
#include "record.h"
#include "util/cleanup.h"

/* A line as read: rec is NULL for one that is not a record; torn marks
 * the bytes after the newest file's last line end. */
typedef int (*LedgerLineFn)(void *userdata, const char *file, unsigned line_no, const char *line, size_t len,
                            const LedgerRecord *rec, bool torn);

/* Calls fn for every line of every file, oldest first. -ENOENT: no ledger
 * file in dir_fd. fn's negative return ends the walk with it. */
int ledger_foreach(int dir_fd, LedgerLineFn fn, void *userdata);

typedef enum LedgerFindingKind {
        LEDGER_FINDING_CHANGED,
        LEDGER_FINDING_REMOVED,
        LEDGER_FINDING_REORDERED,
        LEDGER_FINDING_INSERTED,
        LEDGER_FINDING_MALFORMED,
        LEDGER_FINDING_TORN,
        LEDGER_FINDING_ANCHOR,
        _LEDGER_FINDING_MAX,
} LedgerFindingKind;

typedef struct LedgerFinding {
        LedgerFindingKind kind;
        char file[LEDGER_FILE_NAME_MAX];
        unsigned line;          /* 1-based line in file */
        uint64_t seq;           /* the record's (removed: the first missing) */
        uint64_t seq_last;      /* removed: the last missing; else seq */
} LedgerFinding;

typedef struct LedgerAnchor {
        uint64_t seq;
        uint8_t hash[LEDGER_HASH_BYTES];
} LedgerAnchor;

typedef struct LedgerReport {
        size_t files, records;
        uint64_t first_seq, last_seq;          /* 0 when there is no record */
        uint8_t last_hash[LEDGER_HASH_BYTES];  /* the head, to anchor */
        LedgerFinding *findings;               /* in file order */
        size_t n_findings;
} LedgerReport;

/* Walks and judges the ledger in dir_fd, against anchor if not NULL. 0
 * with the report (findings inside, possibly none); -ENOENT: no ledger;
 * other -errno: the walk itself failed. */
int ledger_verify(int dir_fd, const LedgerAnchor *anchor, LedgerReport **ret);
LedgerReport *ledger_report_free(LedgerReport *r);
DEFINE_FREEP(LedgerReport, ledger_report_free);

/* True when nothing but a torn last record was found. */
bool ledger_report_intact(const LedgerReport *r);
const char *ledger_finding_kind_to_string(LedgerFindingKind k);
/* The report as JSON: {"intact":..,"files":..,"records":..,"first_seq":..,
 * "last_seq":..,"last_hash":"..","findings":[{"kind","file","line","seq",
 * "seq_last"}]}. */
int ledger_report_to_json(const LedgerReport *r, struct json_object **ret);
