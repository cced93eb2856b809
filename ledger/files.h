/* files.h - the ledger's files in its directory: ledger-<first seq>.jsonl,
 * the sequence number of the file's first record in 20 decimal digits, so
 * that names sort as the chain runs and an auditor's `ls` shows the order.
 * Shared by the writer and the reader. Flow: [ledger] -> StateDirectory. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define LEDGER_FILE_PREFIX "ledger-"
#define LEDGER_FILE_SUFFIX ".jsonl"
#define LEDGER_FILE_NAME_MAX 64U

typedef struct LedgerFile {
        char name[LEDGER_FILE_NAME_MAX];
        uint64_t first_seq;
} LedgerFile;

/* The name of the file whose first record is seq. */
void ledger_file_name(uint64_t seq, char ret[static LEDGER_FILE_NAME_MAX]);

/* The ledger's files in dir_fd, oldest first, into *ret (freed by the
 * caller; NULL when there are none). Other names are not the ledger's and
 * are left out. 0 or -errno. */
int ledger_files_list(int dir_fd, LedgerFile **ret, size_t *ret_n);
