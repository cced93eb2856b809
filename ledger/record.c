/* record.c - the event table, a record's line and its hash (see record.h).
 * Flow: daemon events -> [ledger] -> StateDirectory -> auditor. */
#include "record.h"

#include <errno.h>
#include <json-c/json.h>
#include <sodium.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/json-util.h"

typedef struct EventRow {
        const char *name;
        const char *required[4];
} EventRow;

/* What each event must say for an auditor to make sense of it. */
static const EventRow events[_LEDGER_EVENT_MAX] = {
        [LEDGER_EVENT_START] = { "start", { "version", "config_sha256" } },
        [LEDGER_EVENT_STOP] = { "stop", { "reason" } },
        [LEDGER_EVENT_RELOAD] = { "reload", { "config_sha256" } },
        [LEDGER_EVENT_HEALTH_FAILURE] = { "health-failure", { "source", "test", "severity" } },
        [LEDGER_EVENT_GATE_REFUSAL] = { "gate-refusal", { "source", "estimate" } },
        [LEDGER_EVENT_CREDIT_CHANGE] = { "credit-change", { "source", "credit" } },
        [LEDGER_EVENT_SELF_TEST] = { "self-test", { "source", "result" } },
        [LEDGER_EVENT_VM_GENERATION] = { "vm-generation", { NULL } },
        [LEDGER_EVENT_RESUME] = { "resume", { NULL } },
        [LEDGER_EVENT_PURGE] = { "purge", { "blocks", "reason" } },
        [LEDGER_EVENT_RESEED] = { "reseed", { "reason" } },
        [LEDGER_EVENT_KERNEL_FEED] = { "kernel-feed", { "bits" } },
        [LEDGER_EVENT_INDUCE] = { "induce", { "source", "kind" } },
        /* The ledger's own: a torn last record found and cut at open. */
        [LEDGER_EVENT_RECOVERY] = { "recovery", { "reason" } },
};

/* The suffix every line ends with: ,"hash":"<64 hex>"} */
#define HASH_MEMBER ",\"hash\":\""
#define HASH_MEMBER_LEN (sizeof(HASH_MEMBER) - 1)
#define HASH_SUFFIX_LEN (HASH_MEMBER_LEN + 2 * LEDGER_HASH_BYTES + 2)

const char *ledger_event_to_string(LedgerEvent e) {
        return (unsigned) e < _LEDGER_EVENT_MAX ? events[e].name : NULL;
}

int ledger_event_from_string(const char *s, LedgerEvent *ret) {
        for (unsigned i = 0; s && i < _LEDGER_EVENT_MAX; i++)
                if (strcmp(s, events[i].name) == 0) {
                        *ret = (LedgerEvent) i;
                        return 0;
                }
        return -EINVAL;
}

const char *const *ledger_event_required(LedgerEvent e) {
        return (unsigned) e < _LEDGER_EVENT_MAX ? events[e].required : NULL;
}

void ledger_hash_to_hex(const uint8_t hash[static LEDGER_HASH_BYTES], char ret[static 2 * LEDGER_HASH_BYTES + 1]) {
        sodium_bin2hex(ret, 2 * LEDGER_HASH_BYTES + 1, hash, LEDGER_HASH_BYTES);
}

static int hex_to_hash(const char *hex, size_t len, uint8_t ret[static LEDGER_HASH_BYTES]) {
        size_t n = 0;

        if (len != 2 * LEDGER_HASH_BYTES)
                return -EBADMSG;
        for (size_t i = 0; i < len; i++)   /* lowercase only: one spelling per hash */
                if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
                        return -EBADMSG;
        if (sodium_hex2bin(ret, LEDGER_HASH_BYTES, hex, len, NULL, &n, NULL) < 0 || n != LEDGER_HASH_BYTES)
                return -EBADMSG;
        return 0;
}

/* Printable ASCII only: what an auditor's terminal and jq show as it is. */
static bool text_ok(const char *s, size_t max, bool key) {
        size_t n = s ? strlen(s) : 0;

        if (n == 0 || n > max)
                return false;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];

                if (key ? !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') : (c < 0x20 || c > 0x7e))
                        return false;
        }
        return true;
}

static int fields_check(LedgerEvent e, const LedgerField *fields, size_t n_fields) {
        const char *const *req = ledger_event_required(e);

        if (!req || n_fields > LEDGER_FIELDS_MAX || (n_fields > 0 && !fields))
                return -EINVAL;
        for (size_t i = 0; i < n_fields; i++) {
                if (!text_ok(fields[i].key, LEDGER_KEY_MAX, true) || !text_ok(fields[i].value, LEDGER_VALUE_MAX, false))
                        return -EINVAL;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(fields[i].key, fields[j].key) == 0)
                                return -EINVAL;
        }
        for (; *req; req++) {
                size_t i = 0;

                while (i < n_fields && strcmp(fields[i].key, *req) != 0)
                        i++;
                if (i == n_fields)
                        return -EINVAL;
        }
        return 0;
}

/* The record without its hash, members in their fixed order (json-c
 * keeps insertion order). */
static int record_body(uint64_t seq, usec_t realtime, usec_t monotonic, LedgerEvent e, const LedgerField *fields,
                       size_t n_fields, const uint8_t prev[static LEDGER_HASH_BYTES], struct json_object **ret) {
        _cleanup_(json_object_putp) struct json_object *b = json_object_new_object();
        _cleanup_(json_object_putp) struct json_object *details = json_object_new_object();
        char hex[2 * LEDGER_HASH_BYTES + 1];
        int r;

        for (size_t i = 0; i < n_fields; i++)
                if (json_put(details, fields[i].key, json_object_new_string(fields[i].value)) < 0)
                        return -ENOMEM;
        ledger_hash_to_hex(prev, hex);
        r = json_put(b, "seq", json_object_new_uint64(seq));
        r = r < 0 ? r : json_put(b, "realtime_usec", json_object_new_uint64(realtime));
        r = r < 0 ? r : json_put(b, "monotonic_usec", json_object_new_uint64(monotonic));
        r = r < 0 ? r : json_put(b, "event", json_object_new_string(ledger_event_to_string(e)));
        r = r < 0 ? r : json_put(b, "details", TAKE_PTR(details));
        r = r < 0 ? r : json_put(b, "prev", json_object_new_string(hex));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(b);
        return 0;
}

int ledger_record_format(uint64_t seq, usec_t realtime, usec_t monotonic, LedgerEvent e,
                         const LedgerField *fields, size_t n_fields, const uint8_t prev[static LEDGER_HASH_BYTES],
                         char *ret_line, size_t *ret_len, uint8_t ret_hash[static LEDGER_HASH_BYTES]) {
        _cleanup_(json_object_putp) struct json_object *b = NULL;
        char hex[2 * LEDGER_HASH_BYTES + 1];
        const char *s;
        size_t n;
        int r;

        r = fields_check(e, fields, n_fields);
        if (r < 0)
                return r;
        r = record_body(seq, realtime, monotonic, e, fields, n_fields, prev, &b);
        if (r < 0)
                return r;
        s = json_object_to_json_string_length(b, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
        if (!s || n < 2 || s[n - 1] != '}')
                return -ENOMEM;
        if (n - 1 + HASH_SUFFIX_LEN + 1 > LEDGER_RECORD_MAX)
                return -E2BIG;
        crypto_hash_sha256(ret_hash, (const unsigned char *) s, n);
        ledger_hash_to_hex(ret_hash, hex);
        memcpy(ret_line, s, n - 1);
        memcpy(ret_line + n - 1, HASH_MEMBER, HASH_MEMBER_LEN);
        memcpy(ret_line + n - 1 + HASH_MEMBER_LEN, hex, 2 * LEDGER_HASH_BYTES);
        memcpy(ret_line + n - 1 + HASH_MEMBER_LEN + 2 * LEDGER_HASH_BYTES, "\"}\n", 3);
        *ret_len = n - 1 + HASH_SUFFIX_LEN + 1;
        return 0;
}

/* The hash over the line without its hash member; -EBADMSG if the line
 * does not end with one. */
static int line_hash(const char *line, size_t len, uint8_t ret_written[static LEDGER_HASH_BYTES],
                     uint8_t ret_computed[static LEDGER_HASH_BYTES]) {
        crypto_hash_sha256_state st;
        size_t cut;

        if (len < HASH_SUFFIX_LEN + 2 || memcmp(line + len - 2, "\"}", 2) != 0)
                return -EBADMSG;
        cut = len - HASH_SUFFIX_LEN;
        if (memcmp(line + cut, HASH_MEMBER, HASH_MEMBER_LEN) != 0 ||
            hex_to_hash(line + cut + HASH_MEMBER_LEN, 2 * LEDGER_HASH_BYTES, ret_written) < 0)
                return -EBADMSG;
        crypto_hash_sha256_init(&st);
        crypto_hash_sha256_update(&st, (const unsigned char *) line, cut);
        crypto_hash_sha256_update(&st, (const unsigned char *) "}", 1);
        crypto_hash_sha256_final(&st, ret_computed);
        return 0;
}

/* Copies s into the record's storage; NULL when it is full. */
static const char *keep(LedgerRecord *rec, size_t *used, const char *s) {
        size_t n = strlen(s) + 1;
        char *p;

        if (*used + n > sizeof(rec->storage_))
                return NULL;
        p = memcpy(rec->storage_ + *used, s, n);
        *used += n;
        return p;
}

static int get_u64(struct json_object *o, const char *key, uint64_t *ret) {
        struct json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int64(v) < 0)
                return -EBADMSG;
        *ret = json_object_get_uint64(v);
        return 0;
}

static int parse_details(struct json_object *details, LedgerRecord *rec, size_t *used) {
        if (!json_object_is_type(details, json_type_object) || json_object_object_length(details) > (int) LEDGER_FIELDS_MAX)
                return -EBADMSG;
        json_object_object_foreach(details, k, v) {
                LedgerField *f = &rec->fields[rec->n_fields++];

                if (!json_object_is_type(v, json_type_string))
                        return -EBADMSG;
                f->key = keep(rec, used, k);
                f->value = keep(rec, used, json_object_get_string(v));
                if (!f->key || !f->value)
                        return -EBADMSG;
        }
        return 0;
}

int ledger_record_parse(const char *line, size_t len, LedgerRecord *ret) {
        _cleanup_(json_object_putp) struct json_object *o = NULL;
        struct json_object *v, *details;
        uint8_t computed[LEDGER_HASH_BYTES];
        size_t used = 0;
        json_tokener *tok;
        int r;

        memset(ret, 0, offsetof(LedgerRecord, storage_));
        if (len >= LEDGER_RECORD_MAX || memchr(line, '\0', len) || line_hash(line, len, ret->hash, computed) < 0)
                return -EBADMSG;
        ret->hash_ok = sodium_memcmp(ret->hash, computed, LEDGER_HASH_BYTES) == 0;
        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        o = json_tokener_parse_ex(tok, line, (int) len);
        r = json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == len ? 0 : -EBADMSG;
        json_tokener_free(tok);
        if (r < 0 || !json_object_is_type(o, json_type_object) || json_object_object_length(o) != 7)
                return -EBADMSG;
        r = get_u64(o, "seq", &ret->seq);
        r = r < 0 ? r : get_u64(o, "realtime_usec", &ret->realtime);
        r = r < 0 ? r : get_u64(o, "monotonic_usec", &ret->monotonic);
        if (r < 0 || !json_object_object_get_ex(o, "event", &v) || !json_object_is_type(v, json_type_string) ||
            !(ret->event = keep(ret, &used, json_object_get_string(v))))
                return -EBADMSG;
        if (!json_object_object_get_ex(o, "details", &details) || parse_details(details, ret, &used) < 0)
                return -EBADMSG;
        if (!json_object_object_get_ex(o, "prev", &v) || !json_object_is_type(v, json_type_string) ||
            hex_to_hash(json_object_get_string(v), (size_t) json_object_get_string_len(v), ret->prev) < 0)
                return -EBADMSG;
        return 0;
}
