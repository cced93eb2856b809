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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t min_size(size_t a, size_t b) {
        return a < b ? a : b;
}

/* ---- names ----------------------------------------------------------------- */

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

/* ---- arguments ---------------------------------------------------------------- */

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

/* Where a request keeps the value of an argument (CtlArg.field). */
static char *arg_name(CtlRequest *req, const CtlArg *a) {
        return (char *) req + a->field;
}

static uint64_t *arg_number(CtlRequest *req, const CtlArg *a) {
        return (uint64_t *) (void *) ((char *) req + a->field);
}

/* Whether the value a request holds for a is one the wire may carry. */
static bool arg_valid(const CtlRequest *req, const CtlArg *a) {
        const char *name = (const char *) req + a->field;
        const uint64_t *v = (const uint64_t *) (const void *) name;

        if (a->kind == CTL_ARG_NAME)
                return valid_source_name(name, strnlen(name, CTL_SOURCE_NAME_MAX + 1));
        return *v >= a->min && *v <= a->max;
}

/* Stores the n bytes of value s into req; -EINVAL when it is not one. */
static int arg_store(CtlRequest *req, const CtlArg *a, const char *s, size_t n) {
        if (a->kind == CTL_ARG_NUMBER)
                return parse_decimal(s, n, a->min, a->max, arg_number(req, a)) < 0 ? -EINVAL : 0;
        if (!valid_source_name(s, n))
                return -EINVAL;
        memcpy(arg_name(req, a), s, n);
        arg_name(req, a)[n] = '\0';
        return 0;
}

/* ---- requests ---------------------------------------------------------------- */

void ctl_request_init(CtlRequest *req, const CtlCommand *command) {
        *req = (CtlRequest){ .command = command };
        for (const CtlArg *a = ctl_args; a->key; a++)
                if (a->kind == CTL_ARG_NUMBER)
                        *arg_number(req, a) = a->fallback;
}

ssize_t ctl_request_format(const CtlRequest *req, char *buf, size_t size) {
        const CtlCommandArg *args;
        size_t k;
        int n;

        if (!req || !ctl_command_valid(req->command))
                return -EINVAL;
        args = req->command->args;
        for (size_t i = 0; i < CTL_COMMAND_ARGS_MAX && args[i].arg; i++)
                if (!arg_valid(req, args[i].arg))
                        return -EINVAL;
        n = snprintf(buf, size, "%s/%d %s", CTL_PROTOCOL, CTL_PROTOCOL_VERSION, req->command->name);
        for (size_t i = 0; i < CTL_COMMAND_ARGS_MAX && args[i].arg && n >= 0 && (size_t) n < size; i++) {
                const CtlArg *a = args[i].arg;
                const char *s = (const char *) req + a->field;

                k = (size_t) n;
                if (a->kind == CTL_ARG_NAME)
                        n = snprintf(buf + k, size - k, " %s=%s", a->key, s);
                else
                        n = snprintf(buf + k, size - k, " %s=%" PRIu64, a->key, *(const uint64_t *) (const void *) s);
                n = n < 0 ? n : (int) k + n;
        }
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return n;
}

static int reject(int r, char *reason, size_t size, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int reject(int r, char *reason, size_t size, const char *fmt, ...) {
        va_list ap;

        if (reason && size > 0) {
                va_start(ap, fmt);
                vsnprintf(reason, size, fmt, ap);
                va_end(ap);
        }
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

/* One key=value token of a request for req->command; *seen has a bit per
 * argument of the command given so far. */
static int parse_argument(CtlRequest *req, const char *tok, size_t n, unsigned *seen, char *reason, size_t size) {
        const CtlCommandArg *args = req->command->args;
        const char *eq = memchr(tok, '=', n);
        size_t kn, i;

        if (n == 0)
                return reject(-EBADMSG, reason, size, "empty argument (two spaces?)");
        if (!args[0].arg)
                return reject(-EBADMSG, reason, size, "this command takes no arguments");
        if (!eq)
                return reject(-EBADMSG, reason, size, "argument is not key=value");
        kn = (size_t) (eq - tok);
        for (i = 0; i < CTL_COMMAND_ARGS_MAX && args[i].arg; i++)
                if (strlen(args[i].arg->key) == kn && memcmp(args[i].arg->key, tok, kn) == 0)
                        break;
        if (i == CTL_COMMAND_ARGS_MAX || !args[i].arg)
                return reject(-EBADMSG, reason, size, "unknown argument");
        if (*seen & (1U << i))
                return reject(-EBADMSG, reason, size, "duplicate %s=", args[i].arg->key);
        if (arg_store(req, args[i].arg, eq + 1, n - kn - 1) < 0) {
                if (args[i].arg->kind == CTL_ARG_NAME)
                        return reject(-EBADMSG, reason, size, "invalid %s name", args[i].arg->key);
                return reject(-EBADMSG, reason, size, "%s must be in [%" PRIu64 ", %" PRIu64 "]", args[i].arg->key,
                              args[i].arg->min, args[i].arg->max);
        }
        *seen |= 1U << i;
        return 0;
}

/* The protocol and its version, the first token. */
static int parse_header(const char **p, const char *end, char *reason, size_t size) {
        static const char prefix[] = CTL_PROTOCOL "/";
        const char *tok;
        uint64_t v;
        size_t n;

        if (!next_token(p, end, &tok, &n) || n < sizeof(prefix) - 1 || memcmp(tok, prefix, sizeof(prefix) - 1) != 0)
                return reject(-EBADMSG, reason, size, "not a " CTL_PROTOCOL " request");
        if (parse_decimal(tok + sizeof(prefix) - 1, n - (sizeof(prefix) - 1), 0, UINT32_MAX, &v) < 0)
                return reject(-EBADMSG, reason, size, "malformed protocol version");
        if (v != CTL_PROTOCOL_VERSION)
                return reject(-EPROTONOSUPPORT, reason, size, "unsupported protocol version (this daemon speaks 1)");
        return 0;
}

int ctl_request_parse(const void *msg, size_t size, CtlRequest *ret, char *reason, size_t reason_size) {
        const char *s = msg, *end, *p, *tok;
        const CtlCommandArg *args;
        unsigned seen = 0;
        CtlRequest req;
        size_t n;
        int r;

        if (size > CTL_REQUEST_MAX)
                return reject(-EMSGSIZE, reason, reason_size, "request too large");
        if (size > 0 && s[size - 1] == '\n')
                size--;
        if (size == 0)
                return reject(-EBADMSG, reason, reason_size, "empty request");
        for (size_t i = 0; i < size; i++)
                if ((unsigned char) s[i] < 0x20 || (unsigned char) s[i] > 0x7e)
                        return reject(-EBADMSG, reason, reason_size, "request is not printable ASCII on one line");
        end = s + size;
        p = s;

        r = parse_header(&p, end, reason, reason_size);
        if (r < 0)
                return r;
        if (!next_token(&p, end, &tok, &n) || n == 0)
                return reject(-EBADMSG, reason, reason_size, "missing command");
        ctl_request_init(&req, ctl_command_lookup(tok, n));
        if (!req.command)
                return reject(-EBADMSG, reason, reason_size, "unknown command");
        while (next_token(&p, end, &tok, &n)) {
                r = parse_argument(&req, tok, n, &seen, reason, reason_size);
                if (r < 0)
                        return r;
        }
        args = req.command->args;
        for (size_t i = 0; i < CTL_COMMAND_ARGS_MAX && args[i].arg; i++)
                if (args[i].required && !(seen & (1U << i)))
                        return reject(-EBADMSG, reason, reason_size, "%s needs %s=%s", req.command->name,
                                      args[i].arg->key, args[i].arg->kind == CTL_ARG_NAME ? "NAME" : "N");
        if (end > s && end[-1] == ' ')
                return reject(-EBADMSG, reason, reason_size, "trailing space");

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
