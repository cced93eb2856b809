/* ledger.h - the daemon's append-only, hash-chained event file.
 *
 * Every event that bears on the claim behind /dev/truerandom (start, stop,
 * reload, health failure, gate refusal, credit change, ...; record.h has
 * the table) is one line in the StateDirectory: ledger-<first seq>.jsonl.
 * Each record carries the SHA-256 of the one before it, across files: the
 * first record of a new file links to the last of the previous one, so
 * rotation never breaks the chain. At most keep_files files of at most
 * max_file_bytes each are kept; the oldest goes when a new one starts.
 *
 * Durability: a record is one write() on an O_APPEND descriptor, then
 * fdatasync() (sync, the default). Per record, not per batch: the events
 * are rare (a start, a reload, a failure; the daemon rate-limits bursts),
 * the cost was measured (bench-ledger) and a power cut must lose at most
 * the record being written. A crash mid-write leaves a torn last line; the
 * next open cuts it and appends a "recovery" record that says how many
 * bytes were cut and their SHA-256. A failed write is cut back at once
 * (ftruncate to the size before it), so a full disk never leaves half a
 * record in front of the next one.
 *
 * Not secret, not signed: the chain shows a change to a record only if the
 * records after it were not all rewritten too. What anchors the head is
 * outside: ledger_head() for the journal and for signed evidence bundles
 * (verify.h takes such an anchor). Single writer: the daemon's loop
 * thread. Flow: daemon events -> [ledger] -> StateDirectory -> auditor. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "util/cleanup.h"

#define LEDGER_MAX_FILE_BYTES_DEFAULT (1024U * 1024U)
#define LEDGER_KEEP_FILES_DEFAULT 8U

typedef struct LedgerOptions {
        uint64_t max_file_bytes;   /* >= 2 * LEDGER_RECORD_MAX; 0: the default */
        unsigned keep_files;       /* >= 2; 0: the default */
        bool no_sync;              /* skip fdatasync (tests, benchmarks) */
} LedgerOptions;

typedef struct Ledger Ledger;

/* Opens the ledger in dir_fd (the descriptor is duplicated), continuing
 * the chain of the newest file, or starting one. A torn last line is cut
 * and a recovery record appended. -EBADMSG: the newest complete record is
 * not one (the ledger was damaged: verify it, move it aside); -EINVAL: bad
 * options; other -errno from the file system. opts may be NULL. */
int ledger_open(int dir_fd, const LedgerOptions *opts, Ledger **ret);
Ledger *ledger_free(Ledger *l);
DEFINE_FREEP(Ledger, ledger_free);

/* Appends one record now (CLOCK_REALTIME and CLOCK_MONOTONIC). -EINVAL
 * for an event or fields record.h refuses; a write error as -errno, with
 * the file as it was before; a failed fdatasync as -errno, the record
 * written but perhaps not durable. */
int ledger_append(Ledger *l, LedgerEvent e, const LedgerField *fields, size_t n_fields);

/* The last record's seq (0: none yet) and hash: the anchor to publish. */
void ledger_head(const Ledger *l, uint64_t *ret_seq, uint8_t ret_hash[static LEDGER_HASH_BYTES]);
/* Bytes of a torn last record that ledger_open() cut (0: none). */
size_t ledger_cut_bytes(const Ledger *l);
