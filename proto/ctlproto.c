/* ctlproto.c - the control protocol's wire format: request and reply
 * packets (see ctlproto.h for the grammar).
 *
 * Everything here parses bytes a peer chose: every read is bounded by the
 * size given, nothing is assumed NUL-terminated, and a parse either succeeds
 * whole or leaves its output untouched. The status payload that an "ok"
 * reply carries is opaque here: ctlstatus reads it.
 * Flow: truerandomctl -> [ctlproto] -> socket -> control -> daemon. */
#include "ctlproto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t min_size(size_t a, size_t b) {
        return a < b ? a : b;
}

/* ---- names ----------------------------------------------------------------- */

static const char *const command_names[_CTL_COMMAND_MAX] = {
        [CTL_COMMAND_STATUS] = "status",
        [CTL_COMMAND_RESEED] = "reseed",
        [CTL_COMMAND_RAW] = "raw",
};

static const struct {
        const char *name;
        int errnum;
} errors[_CTL_ERROR_MAX] = {
        [CTL_ERROR_MALFORMED] = { "malformed", EBADMSG },
        [CTL_ERROR_TOO_LARGE] = { "too-large", EMSGSIZE },
        [CTL_ERROR_VERSION] = { "unsupported-version", EPROTONOSUPPORT },
        [CTL_ERROR_PERMISSION] = { "permission-denied", EPERM },
        [CTL_ERROR_UNKNOWN_SOURCE] = { "unknown-source", ENOENT },
        [CTL_ERROR_UNAVAILABLE] = { "unavailable", ENODEV },
        [CTL_ERROR_BUSY] = { "busy", EBUSY },
        [CTL_ERROR_TIMEOUT] = { "timeout", ETIMEDOUT },
        [CTL_ERROR_NO_DATA] = { "no-data", ENODATA },
        [CTL_ERROR_FAILED] = { "failed", EIO },
};

static const char *const reply_names[_CTL_REPLY_KIND_MAX] = {
        [CTL_REPLY_OK] = "ok",
        [CTL_REPLY_ERROR] = "error",
        [CTL_REPLY_START] = "start",
        [CTL_REPLY_DATA] = "data",
};

const char *ctl_command_to_string(CtlCommand c) {
        return (unsigned) c < _CTL_COMMAND_MAX ? command_names[c] : NULL;
}

const char *ctl_error_to_string(CtlError e) {
        return (unsigned) e < _CTL_ERROR_MAX ? errors[e].name : NULL;
}

CtlError ctl_error_from_string(const char *s, size_t n) {
        for (size_t i = 0; i < _CTL_ERROR_MAX; i++)
                if (strlen(errors[i].name) == n && memcmp(errors[i].name, s, n) == 0)
                        return (CtlError) i;
        return CTL_ERROR_FAILED;
}

CtlError ctl_error_from_errno(int r) {
        if (r == -EACCES)
                return CTL_ERROR_PERMISSION;
        for (size_t i = 0; i < _CTL_ERROR_MAX; i++)
                if (-r == errors[i].errnum)
                        return (CtlError) i;
        return CTL_ERROR_FAILED;
}

int ctl_error_to_errno(CtlError e) {
        return (unsigned) e < _CTL_ERROR_MAX ? -errors[e].errnum : -EIO;
}

/* ---- requests ---------------------------------------------------------------- */

static bool valid_source_name(const char *s, size_t n) {
        if (n == 0 || n > CTL_SOURCE_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]) || !s[i])
                        return false;
        return true;
}

/* Decimal digits only, no sign or leading zero, in [min, max]. */
static int parse_decimal(const char *s, size_t n, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        if (n == 0 || n > 20 || (n > 1 && s[0] == '0'))
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t) (s[i] - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t) (s[i] - '0');
        }
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

ssize_t ctl_request_format(const CtlRequest *req, char *buf, size_t size) {
        int n;

        if (!req || (unsigned) req->command >= _CTL_COMMAND_MAX)
                return -EINVAL;
        if (req->command == CTL_COMMAND_RAW) {
                if (!valid_source_name(req->source, strnlen(req->source, sizeof(req->source))) ||
                    req->samples < 1 || req->samples > CTL_RAW_SAMPLES_MAX || req->rows < 1 ||
                    req->rows > CTL_RAW_ROWS_MAX)
                        return -EINVAL;
                n = snprintf(buf, size, "%s/%d raw source=%s samples=%" PRIu64 " rows=%" PRIu32, CTL_PROTOCOL,
                             CTL_PROTOCOL_VERSION, req->source, req->samples, req->rows);
        } else
                n = snprintf(buf, size, "%s/%d %s", CTL_PROTOCOL, CTL_PROTOCOL_VERSION,
                             command_names[req->command]);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return n;
}

static int request_fail(int r, const char *reason, const char **ret_reason) {
        if (ret_reason)
                *ret_reason = reason;
        return r;
}

/* The next space-separated token of [*p, end): empty tokens (two spaces in a
 * row, a leading or trailing space) are malformed. */
static bool next_token(const char **p, const char *end, const char **ret, size_t *ret_n) {
        const char *s = *p, *e;

        if (s >= end)
                return false;
        e = memchr(s, ' ', (size_t) (end - s));
        if (!e)
                e = end;
        *ret = s;
        *ret_n = (size_t) (e - s);
        *p = e < end ? e + 1 : end;
        return true;
}

int ctl_request_parse(const void *msg, size_t size, CtlRequest *ret, const char **ret_reason) {
        static const char prefix[] = CTL_PROTOCOL "/";
        const char *s = msg, *end, *p, *tok;
        CtlRequest req = { .samples = CTL_RAW_SAMPLES_DEFAULT, .rows = 1 };
        bool seen_source = false, seen_samples = false, seen_rows = false;
        uint64_t v;
        size_t n;

        if (size > CTL_REQUEST_MAX)
                return request_fail(-EMSGSIZE, "request too large", ret_reason);
        if (size > 0 && s[size - 1] == '\n')
                size--;
        if (size == 0)
                return request_fail(-EBADMSG, "empty request", ret_reason);
        for (size_t i = 0; i < size; i++)
                if ((unsigned char) s[i] < 0x20 || (unsigned char) s[i] > 0x7e)
                        return request_fail(-EBADMSG, "request is not printable ASCII on one line", ret_reason);
        end = s + size;
        p = s;

        if (!next_token(&p, end, &tok, &n) || n < sizeof(prefix) - 1 || memcmp(tok, prefix, sizeof(prefix) - 1) != 0)
                return request_fail(-EBADMSG, "not a " CTL_PROTOCOL " request", ret_reason);
        if (parse_decimal(tok + sizeof(prefix) - 1, n - (sizeof(prefix) - 1), 0, UINT32_MAX, &v) < 0)
                return request_fail(-EBADMSG, "malformed protocol version", ret_reason);
        if (v != CTL_PROTOCOL_VERSION)
                return request_fail(-EPROTONOSUPPORT, "unsupported protocol version (this daemon speaks 1)",
                                    ret_reason);

        if (!next_token(&p, end, &tok, &n) || n == 0)
                return request_fail(-EBADMSG, "missing command", ret_reason);
        for (req.command = 0; req.command < _CTL_COMMAND_MAX; req.command++)
                if (strlen(command_names[req.command]) == n && memcmp(command_names[req.command], tok, n) == 0)
                        break;
        if (req.command == _CTL_COMMAND_MAX)
                return request_fail(-EBADMSG, "unknown command", ret_reason);

        while (next_token(&p, end, &tok, &n)) {
                const char *eq = memchr(tok, '=', n);
                size_t kn, vn;

                if (n == 0)
                        return request_fail(-EBADMSG, "empty argument (two spaces?)", ret_reason);
                if (req.command != CTL_COMMAND_RAW)
                        return request_fail(-EBADMSG, "this command takes no arguments", ret_reason);
                if (!eq)
                        return request_fail(-EBADMSG, "argument is not key=value", ret_reason);
                kn = (size_t) (eq - tok);
                vn = n - kn - 1;
                if (kn == 6 && memcmp(tok, "source", 6) == 0) {
                        if (seen_source)
                                return request_fail(-EBADMSG, "duplicate source=", ret_reason);
                        if (!valid_source_name(eq + 1, vn))
                                return request_fail(-EBADMSG, "invalid source name", ret_reason);
                        memcpy(req.source, eq + 1, vn);
                        req.source[vn] = '\0';
                        seen_source = true;
                } else if (kn == 7 && memcmp(tok, "samples", 7) == 0) {
                        if (seen_samples)
                                return request_fail(-EBADMSG, "duplicate samples=", ret_reason);
                        if (parse_decimal(eq + 1, vn, 1, CTL_RAW_SAMPLES_MAX, &req.samples) < 0)
                                return request_fail(-EBADMSG, "samples must be in [1, 1000000000]", ret_reason);
                        seen_samples = true;
                } else if (kn == 4 && memcmp(tok, "rows", 4) == 0) {
                        if (seen_rows)
                                return request_fail(-EBADMSG, "duplicate rows=", ret_reason);
                        if (parse_decimal(eq + 1, vn, 1, CTL_RAW_ROWS_MAX, &v) < 0)
                                return request_fail(-EBADMSG, "rows must be in [1, 1000000]", ret_reason);
                        req.rows = (uint32_t) v;
                        seen_rows = true;
                } else
                        return request_fail(-EBADMSG, "unknown argument", ret_reason);
        }
        if (req.command == CTL_COMMAND_RAW && !seen_source)
                return request_fail(-EBADMSG, "raw needs source=NAME", ret_reason);
        if (end > s && end[-1] == ' ')
                return request_fail(-EBADMSG, "trailing space", ret_reason);

        *ret = req;
        return 0;
}

/* ---- replies ------------------------------------------------------------------ */

ssize_t ctl_reply_format(CtlReplyKind kind, const void *payload, size_t n, void *buf, size_t size) {
        size_t k;

        if ((unsigned) kind >= _CTL_REPLY_KIND_MAX || (n > 0 && !payload))
                return -EINVAL;
        k = strlen(reply_names[kind]);
        if (k + (n > 0 || kind == CTL_REPLY_DATA ? 1 + n : 0) > min_size(size, CTL_REPLY_MAX))
                return -ENOBUFS;
        memcpy(buf, reply_names[kind], k);
        if (n > 0 || kind == CTL_REPLY_DATA) {
                ((char *) buf)[k++] = ' ';
                if (n > 0)
                        memmove((char *) buf + k, payload, n);
        }
        return (ssize_t) (k + n);
}

ssize_t ctl_reply_format_error(CtlError e, const char *text, void *buf, size_t size) {
        char line[sizeof("error ") + 32 + CTL_ERROR_TEXT_MAX];
        size_t k;
        int n;

        if ((unsigned) e >= _CTL_ERROR_MAX)
                e = CTL_ERROR_FAILED;
        n = snprintf(line, sizeof(line), "error %s", errors[e].name);
        k = (size_t) n;
        if (text && *text) {
                size_t tn = strnlen(text, CTL_ERROR_TEXT_MAX);
                line[k++] = ' ';
                /* The text ends up on a terminal: no control bytes. */
                for (size_t i = 0; i < tn; i++)
                        line[k++] = (unsigned char) text[i] >= 0x20 && (unsigned char) text[i] < 0x7f ? text[i] : '?';
        }
        if (k > size)
                return -ENOBUFS;
        memcpy(buf, line, k);
        return (ssize_t) k;
}

ssize_t ctl_reply_format_start(uint64_t samples, uint32_t rows, void *buf, size_t size) {
        char line[64];
        int n = snprintf(line, sizeof(line), "start samples=%" PRIu64 " rows=%" PRIu32, samples, rows);

        if ((size_t) n > size)
                return -ENOBUFS;
        memcpy(buf, line, (size_t) n);
        return n;
}

static int parse_start(const char *s, size_t n, CtlReply *r) {
        const char *p = s, *end = s + n, *tok;
        uint64_t v;
        size_t k;

        if (!next_token(&p, end, &tok, &k) || k < 8 || memcmp(tok, "samples=", 8) != 0 ||
            parse_decimal(tok + 8, k - 8, 1, CTL_RAW_SAMPLES_MAX, &r->samples) < 0)
                return -EBADMSG;
        if (!next_token(&p, end, &tok, &k) || k < 5 || memcmp(tok, "rows=", 5) != 0 ||
            parse_decimal(tok + 5, k - 5, 1, CTL_RAW_ROWS_MAX, &v) < 0)
                return -EBADMSG;
        if (p != end || end[-1] == ' ')
                return -EBADMSG;
        r->rows = (uint32_t) v;
        return 0;
}

int ctl_reply_parse(const void *msg, size_t size, CtlReply *ret) {
        const char *s = msg, *sp;
        CtlReply r = { 0 };
        size_t k;

        if (size > CTL_REPLY_MAX)
                return -EMSGSIZE;
        sp = size > 0 ? memchr(s, ' ', size) : NULL;
        k = sp ? (size_t) (sp - s) : size;
        for (r.kind = 0; r.kind < _CTL_REPLY_KIND_MAX; r.kind++)
                if (strlen(reply_names[r.kind]) == k && memcmp(reply_names[r.kind], s, k) == 0)
                        break;
        if (r.kind == _CTL_REPLY_KIND_MAX)
                return -EBADMSG;
        if (sp) {
                r.payload = (const uint8_t *) sp + 1;
                r.payload_size = size - k - 1;
        }

        switch (r.kind) {
        case CTL_REPLY_OK:
        case CTL_REPLY_DATA:
                break;
        case CTL_REPLY_ERROR: {
                const char *code = (const char *) r.payload, *e;
                size_t cn;

                if (!code || r.payload_size == 0)
                        return -EBADMSG;
                e = memchr(code, ' ', r.payload_size);
                cn = e ? (size_t) (e - code) : r.payload_size;
                if (cn == 0)
                        return -EBADMSG;
                r.error = ctl_error_from_string(code, cn);
                r.payload = e ? (const uint8_t *) e + 1 : NULL;
                r.payload_size = e ? r.payload_size - cn - 1 : 0;
                break;
        }
        case CTL_REPLY_START:
                if (!r.payload || parse_start((const char *) r.payload, r.payload_size, &r) < 0)
                        return -EBADMSG;
                r.payload = NULL;
                r.payload_size = 0;
                break;
        default:
                abort();
        }
        *ret = r;
        return 0;
}
