/* record.h - one ledger record: its event table, its line, its hash.
 *
 * A record is one line of JSON (json-c, plain), its members always in this
 * order:
 *
 *   {"seq":7,"realtime_usec":...,"monotonic_usec":...,"event":"reload",
 *    "details":{"config_sha256":"..."},"prev":"<64 hex>","hash":"<64 hex>"}
 *
 * "hash" is the SHA-256 of the line's own bytes without its last member,
 * that is of the text before `,"hash":"` followed by `}`; "prev" is the
 * previous record's "hash" (64 zeros for the first record ever). An auditor
 * checks a line with standard tools:
 *
 *   l='...'; printf '%s}' "${l%,\"hash\":*}" | sha256sum
 *
 * The hash covers the bytes as written, not a re-serialisation, so no JSON
 * library's choices enter it. Records are not secret. No I/O.
 * Flow: daemon events -> [ledger] -> StateDirectory -> auditor. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/time-util.h"

#define LEDGER_HASH_BYTES 32U
/* A line, newline included, is at most this long: LEDGER_FIELDS_MAX fields
 * of LEDGER_KEY_MAX + LEDGER_VALUE_MAX bytes fit, escapes and all. */
#define LEDGER_RECORD_MAX 8192U
#define LEDGER_FIELDS_MAX 16U
#define LEDGER_KEY_MAX 32U
#define LEDGER_VALUE_MAX 256U

/* The events that bear on the claim "every /dev/truerandom byte came from
 * credited, health-tested entropy". Adding one is adding a row in
 * record.c's table. */
typedef enum LedgerEvent {
        LEDGER_EVENT_START,
        LEDGER_EVENT_STOP,
        LEDGER_EVENT_RELOAD,
        LEDGER_EVENT_HEALTH_FAILURE,
        LEDGER_EVENT_GATE_REFUSAL,
        LEDGER_EVENT_CREDIT_CHANGE,
        LEDGER_EVENT_SELF_TEST,
        LEDGER_EVENT_VM_GENERATION,
        LEDGER_EVENT_RESUME,
        LEDGER_EVENT_PURGE,
        LEDGER_EVENT_RESEED,
        LEDGER_EVENT_KERNEL_FEED,
        LEDGER_EVENT_INDUCE,
        LEDGER_EVENT_RECOVERY,
        _LEDGER_EVENT_MAX,
} LedgerEvent;

typedef struct LedgerField {
        const char *key;
        const char *value;
} LedgerField;

/* What a parsed line holds. The strings point into the LedgerRecord's own
 * storage and live as long as it does. */
typedef struct LedgerRecord {
        uint64_t seq;
        usec_t realtime;
        usec_t monotonic;
        const char *event;       /* the name as written (may be one this build does not know) */
        LedgerField fields[LEDGER_FIELDS_MAX];
        size_t n_fields;
        uint8_t prev[LEDGER_HASH_BYTES];
        uint8_t hash[LEDGER_HASH_BYTES];   /* as written in the line */
        bool hash_ok;                      /* the line's bytes hash to it */
        char storage_[LEDGER_RECORD_MAX];
} LedgerRecord;

/* "start", "health-failure", ...; NULL out of range. */
const char *ledger_event_to_string(LedgerEvent e);
/* -EINVAL for a name not in the table. */
int ledger_event_from_string(const char *s, LedgerEvent *ret);
/* The detail keys an event must carry, NULL-terminated ("reload": its
 * configuration's hash). */
const char *const *ledger_event_required(LedgerEvent e);

/* Builds the line of a record, newline included, into ret_line (a buffer
 * of LEDGER_RECORD_MAX), its length into ret_len and its hash into
 * ret_hash. -EINVAL: an unknown event, a required key missing, more than
 * LEDGER_FIELDS_MAX fields, a key or value too long or not printable
 * UTF-8, a key twice. -E2BIG if the line would not fit. */
int ledger_record_format(uint64_t seq, usec_t realtime, usec_t monotonic, LedgerEvent e,
                         const LedgerField *fields, size_t n_fields, const uint8_t prev[static LEDGER_HASH_BYTES],
                         char *ret_line, size_t *ret_len, uint8_t ret_hash[static LEDGER_HASH_BYTES]);

/* Parses one line (without its newline) into ret: -EBADMSG for anything
 * that is not a record of this format (ret->hash_ok then means nothing).
 * A record whose bytes were changed parses, with hash_ok false. */
int ledger_record_parse(const char *line, size_t len, LedgerRecord *ret);

/* 64 lowercase hex digits and a NUL. */
void ledger_hash_to_hex(const uint8_t hash[static LEDGER_HASH_BYTES], char ret[static 2 * LEDGER_HASH_BYTES + 1]);
