/* ctlproto.c - the control protocol's packets, and the client's reading of
 * the status payload (see ctlproto.h for the grammar).
 *
 * Everything here parses bytes a peer chose: every read is bounded by the
 * size given, nothing is assumed NUL-terminated, and a parse either succeeds
 * whole or leaves its output untouched. The daemon uses only the request
 * parser and the reply formatters; the JSON reader and the renderer are for
 * truerandomctl (and the fuzzer).
 * Flow: truerandomctl -> [ctlproto] -> socket -> control -> daemon. */
#include "ctlproto.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
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

/* ---- JSON (the status payload, read by the client) ---------------------------- */

typedef struct JsonParser {
        const char *p, *end;
        unsigned depth;
} JsonParser;

static void json_ws(JsonParser *jp) {
        while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r'))
                jp->p++;
}

static bool json_literal(JsonParser *jp, const char *lit) {
        size_t n = strlen(lit);

        if ((size_t) (jp->end - jp->p) < n || memcmp(jp->p, lit, n) != 0)
                return false;
        jp->p += n;
        return true;
}

static int json_hex4(const char *s, const char *end, uint32_t *ret) {
        uint32_t v = 0;

        if (end - s < 4)
                return -EBADMSG;
        for (int i = 0; i < 4; i++) {
                char c = s[i];
                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (uint32_t) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (uint32_t) (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (uint32_t) (c - 'A' + 10);
                else
                        return -EBADMSG;
        }
        *ret = v;
        return 0;
}

static size_t utf8_put(char *out, uint32_t cp) {
        if (cp < 0x80) {
                out[0] = (char) cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char) (0xc0 | cp >> 6);
                out[1] = (char) (0x80 | (cp & 0x3f));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char) (0xe0 | cp >> 12);
                out[1] = (char) (0x80 | (cp >> 6 & 0x3f));
                out[2] = (char) (0x80 | (cp & 0x3f));
                return 3;
        }
        out[0] = (char) (0xf0 | cp >> 18);
        out[1] = (char) (0x80 | (cp >> 12 & 0x3f));
        out[2] = (char) (0x80 | (cp >> 6 & 0x3f));
        out[3] = (char) (0x80 | (cp & 0x3f));
        return 4;
}

/* jp->p is at the opening quote. Escapes never decode longer than they are
 * written, so the raw length bounds the output. */
static int json_string(JsonParser *jp, char **ret) {
        const char *s = jp->p + 1, *q = s;
        char *out;
        size_t k = 0;

        while (q < jp->end && *q != '"')
                q += *q == '\\' ? 2 : 1;
        if (q >= jp->end)
                return -EBADMSG;
        out = malloc((size_t) (q - s) + 1);
        if (!out)
                return -ENOMEM;

        for (const char *p = s; p < q;) {
                unsigned char c = (unsigned char) *p++;
                uint32_t cp, lo;

                if (c < 0x20)
                        goto bad;
                if (c != '\\') {
                        out[k++] = (char) c;
                        continue;
                }
                switch (*p++) {
                case '"': out[k++] = '"'; break;
                case '\\': out[k++] = '\\'; break;
                case '/': out[k++] = '/'; break;
                case 'b': out[k++] = '\b'; break;
                case 'f': out[k++] = '\f'; break;
                case 'n': out[k++] = '\n'; break;
                case 'r': out[k++] = '\r'; break;
                case 't': out[k++] = '\t'; break;
                case 'u':
                        if (json_hex4(p, q, &cp) < 0)
                                goto bad;
                        p += 4;
                        if (cp >= 0xdc00 && cp <= 0xdfff)
                                goto bad;
                        if (cp >= 0xd800 && cp <= 0xdbff) {
                                if (q - p < 6 || p[0] != '\\' || p[1] != 'u' || json_hex4(p + 2, q, &lo) < 0 ||
                                    lo < 0xdc00 || lo > 0xdfff)
                                        goto bad;
                                p += 6;
                                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                        }
                        /* A NUL would silently cut the string short. */
                        if (cp == 0)
                                goto bad;
                        k += utf8_put(out + k, cp);
                        break;
                default:
                        goto bad;
                }
        }
        out[k] = '\0';
        jp->p = q + 1;
        *ret = out;
        return 0;
bad:
        free(out);
        return -EBADMSG;
}

static int json_number(JsonParser *jp, double *ret) {
        const char *s = jp->p, *q = s, *end = jp->end;
        char buf[64];
        double v;

#define DIGITS()                                                \
        do {                                                    \
                if (q >= end || *q < '0' || *q > '9')           \
                        return -EBADMSG;                        \
                while (q < end && *q >= '0' && *q <= '9')       \
                        q++;                                    \
        } while (0)

        if (q < end && *q == '-')
                q++;
        if (q < end && *q == '0')
                q++;
        else
                DIGITS();
        if (q < end && *q == '.') {
                q++;
                DIGITS();
        }
        if (q < end && (*q == 'e' || *q == 'E')) {
                q++;
                if (q < end && (*q == '+' || *q == '-'))
                        q++;
                DIGITS();
        }
#undef DIGITS
        if ((size_t) (q - s) >= sizeof(buf))
                return -EBADMSG;
        memcpy(buf, s, (size_t) (q - s));
        buf[q - s] = '\0';
        v = strtod(buf, NULL);
        if (!isfinite(v))
                return -EBADMSG;
        jp->p = q;
        *ret = v;
        return 0;
}

static int json_value(JsonParser *jp, CtlJson **ret);

/* Children are linked into j as they come, so freeing j on an error frees
 * whatever was built. */
static int json_container(JsonParser *jp, CtlJson *j) {
        bool object = *jp->p == '{';
        char close = object ? '}' : ']';
        CtlJson **tail = &j->child;
        int r;

        if (++jp->depth > CTL_JSON_DEPTH_MAX)
                return -EBADMSG;
        j->type = object ? CTL_JSON_OBJECT : CTL_JSON_ARRAY;
        jp->p++;
        json_ws(jp);
        if (jp->p < jp->end && *jp->p == close) {
                jp->p++;
                jp->depth--;
                return 0;
        }
        for (;;) {
                char *key = NULL;
                CtlJson *v;

                if (object) {
                        json_ws(jp);
                        if (jp->p >= jp->end || *jp->p != '"')
                                return -EBADMSG;
                        r = json_string(jp, &key);
                        if (r < 0)
                                return r;
                        json_ws(jp);
                        if (jp->p >= jp->end || *jp->p != ':') {
                                free(key);
                                return -EBADMSG;
                        }
                        jp->p++;
                }
                r = json_value(jp, &v);
                if (r < 0) {
                        free(key);
                        return r;
                }
                v->key = key;
                *tail = v;
                tail = &v->next;
                json_ws(jp);
                if (jp->p >= jp->end)
                        return -EBADMSG;
                if (*jp->p == ',') {
                        jp->p++;
                        continue;
                }
                if (*jp->p != close)
                        return -EBADMSG;
                jp->p++;
                break;
        }
        jp->depth--;
        return 0;
}

static int json_value(JsonParser *jp, CtlJson **ret) {
        CtlJson *j;
        int r = 0;

        json_ws(jp);
        if (jp->p >= jp->end)
                return -EBADMSG;
        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        switch (*jp->p) {
        case '{':
        case '[':
                r = json_container(jp, j);
                break;
        case '"':
                j->type = CTL_JSON_STRING;
                r = json_string(jp, &j->string);
                break;
        case 't':
        case 'f':
                j->type = CTL_JSON_BOOL;
                j->boolean = *jp->p == 't';
                if (!json_literal(jp, j->boolean ? "true" : "false"))
                        r = -EBADMSG;
                break;
        case 'n':
                j->type = CTL_JSON_NULL;
                if (!json_literal(jp, "null"))
                        r = -EBADMSG;
                break;
        default:
                j->type = CTL_JSON_NUMBER;
                r = json_number(jp, &j->number);
                break;
        }
        if (r < 0) {
                ctl_json_free(j);
                return r;
        }
        *ret = j;
        return 0;
}

int ctl_json_parse(const char *text, size_t n, CtlJson **ret) {
        JsonParser jp = { .p = text, .end = text + n };
        CtlJson *j;
        int r;

        if (!text)
                return -EBADMSG;
        r = json_value(&jp, &j);
        if (r < 0)
                return r;
        json_ws(&jp);
        if (jp.p != jp.end) {
                ctl_json_free(j);
                return -EBADMSG;
        }
        *ret = j;
        return 0;
}

CtlJson *ctl_json_free(CtlJson *j) {
        /* Siblings in a loop, children by recursion: depth is bounded. */
        while (j) {
                CtlJson *next = j->next;
                ctl_json_free(j->child);
                free(j->key);
                free(j->string);
                free(j);
                j = next;
        }
        return NULL;
}

const CtlJson *ctl_json_get(const CtlJson *object, const char *key) {
        if (!object || object->type != CTL_JSON_OBJECT)
                return NULL;
        for (const CtlJson *c = object->child; c; c = c->next)
                if (c->key && strcmp(c->key, key) == 0)
                        return c;
        return NULL;
}

/* ---- the human status --------------------------------------------------------- */

#define STATUS_COLUMNS 80

/* Every line goes through here: the buffer, not the caller, keeps it within
 * 80 columns whatever the daemon sent. */
__attribute__((format(printf, 2, 3)))
static void status_line(FILE *out, const char *fmt, ...) {
        char buf[STATUS_COLUMNS + 1];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        fputs(buf, out);
        fputc('\n', out);
}

static const CtlJson *get_typed(const CtlJson *o, const char *key, CtlJsonType type) {
        const CtlJson *v = ctl_json_get(o, key);
        return v && v->type == type ? v : NULL;
}

static bool get_number(const CtlJson *o, const char *key, double *ret) {
        const CtlJson *v = get_typed(o, key, CTL_JSON_NUMBER);
        if (!v)
                return false;
        *ret = v->number;
        return true;
}

static bool get_bool(const CtlJson *o, const char *key) {
        const CtlJson *v = get_typed(o, key, CTL_JSON_BOOL);
        return v && v->boolean;
}

/* Printable ASCII only, cut to width: names and error texts come from the
 * daemon and end up on a terminal. */
static const char *clip(const CtlJson *o, const char *key, char *buf, size_t width) {
        const CtlJson *v = get_typed(o, key, CTL_JSON_STRING);
        size_t i = 0;

        if (!v)
                return "-";
        for (const char *s = v->string; *s && i < width; s++)
                buf[i++] = (unsigned char) *s >= 0x20 && (unsigned char) *s < 0x7f ? *s : '?';
        buf[i] = '\0';
        return buf;
}

/* Counts in at most 6 columns: 99999, then 123k, 12.3M, ... */
static const char *fmt_count(const CtlJson *o, const char *key, char buf[static 16]) {
        static const char units[] = "kMGTPE";
        double v;
        int u = -1;

        if (!get_number(o, key, &v) || v < 0)
                return "-";
        if (v < 100000) {
                snprintf(buf, 16, "%.0f", v);
                return buf;
        }
        while (v >= 1000 && u < (int) sizeof(units) - 2) {
                v /= 1000;
                u++;
        }
        snprintf(buf, 16, v < 99.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
        return buf;
}

static const char *fmt_bytes(const CtlJson *o, const char *key, char buf[static 16]) {
        static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
        double v;
        int u = -1;

        if (!get_number(o, key, &v) || v < 0)
                return "-";
        if (v < 1024) {
                snprintf(buf, 16, "%.0f B", v);
                return buf;
        }
        while (v >= 1024 && u < (int) (sizeof(units) / sizeof(units[0])) - 1) {
                v /= 1024;
                u++;
        }
        snprintf(buf, 16, "%.1f %s", v, units[u]);
        return buf;
}

static const char *fmt_duration(double s, char buf[static 32]) {
        uint64_t t;

        if (!(s >= 0) || s > 1e12)
                return "-";
        if (s < 60) {
                snprintf(buf, 32, "%.1f s", s);
                return buf;
        }
        t = (uint64_t) s;
        if (t < 3600)
                snprintf(buf, 32, "%" PRIu64 "m %02" PRIu64 "s", t / 60, t % 60);
        else if (t < 86400)
                snprintf(buf, 32, "%" PRIu64 "h %02" PRIu64 "m", t / 3600, t / 60 % 60);
        else
                snprintf(buf, 32, "%" PRIu64 "d %02" PRIu64 "h", t / 86400, t / 3600 % 24);
        return buf;
}

static const char *fmt_decimal(const CtlJson *o, const char *key, int decimals, char buf[static 16]) {
        double v;

        if (!get_number(o, key, &v) || !(v >= 0) || v >= 1e9)
                return "-";
        snprintf(buf, 16, "%.*f", decimals, v);
        return buf;
}

static void render_source(const CtlJson *s, FILE *out) {
        char nb[8], sb[20], err[64], c1[16], c2[16], c3[16], c4[16], c5[16];
        const CtlJson *f = get_typed(s, "failures", CTL_JSON_OBJECT);
        const char *name = clip(s, "name", nb, 7), *state = clip(s, "state", sb, 19);
        double p;

        if (!get_bool(s, "credited")) {
                if (strcmp(state, "mixed") == 0)
                        status_line(out, "%-7s mixed into CRNG seeds, never credited", name);
                else
                        status_line(out, "%-7s %s", name, state);
                return;
        }
        status_line(out, "%-7s %-19s %6s %10s %6s %6s %10s", name, state, fmt_decimal(s, "credit_bits", 3, c4),
                    fmt_count(s, "samples", c1), fmt_count(f, "rct", c2), fmt_count(f, "apt", c3),
                    fmt_decimal(s, "credited_bits_per_s", 1, c5));
        if ((get_number(f, "permanent_rct", &p) && p > 0) || (get_number(f, "permanent_apt", &p) && p > 0))
                status_line(out, "        failed permanently: %s health test",
                            get_number(f, "permanent_rct", &p) && p > 0 ? "RCT" : "APT");
        if (get_typed(s, "last_error", CTL_JSON_STRING))
                status_line(out, "        last error: %s (%s read errors)", clip(s, "last_error", err, 48),
                            fmt_count(s, "read_errors", c1));
}

static void render_device(const CtlJson *d, FILE *out) {
        char name[23], kind[11], c1[16], c2[16], c3[16], c4[16];

        status_line(out, "%-22s %-10s %8s %5s %6s %12s%s", clip(d, "name", name, 22), clip(d, "kind", kind, 10),
                    fmt_count(d, "waiting", c1), fmt_count(d, "waiting_uids", c2), fmt_count(d, "open_files", c3),
                    fmt_bytes(d, "bytes_served", c4), get_typed(d, "up", CTL_JSON_BOOL) && !get_bool(d, "up") ? " (down)" : "");
}

int ctl_status_render(const CtlJson *st, FILE *out) {
        const CtlJson *sources, *devices, *store, *crng;
        char b1[32], b2[16], b3[16];
        double version, v, fill, capacity;

        if (!st || st->type != CTL_JSON_OBJECT || !get_number(st, "version", &version) || version < 1)
                return -EBADMSG;

        status_line(out, "truerandomd %s, up %s",
                    get_bool(st, "stopping") ? "stopping" : get_bool(st, "ready") ? "serving" : "starting",
                    get_number(st, "uptime_s", &v) ? fmt_duration(v, b1) : "-");

        crng = get_typed(st, "crng", CTL_JSON_OBJECT);
        if (crng && get_bool(crng, "seeded"))
                status_line(out, "CRNG: seeded, %s reseeds (generation %s), seed age %s", fmt_count(crng, "reseeds", b2),
                            fmt_count(crng, "generation", b3),
                            get_number(crng, "seed_age_s", &v) ? fmt_duration(v, b1) : "-");
        else if (crng)
                status_line(out, "CRNG: not seeded yet: the drop-in /dev/random blocks");

        store = get_typed(st, "store", CTL_JSON_OBJECT);
        if (store && get_number(store, "fill", &fill) && get_number(store, "capacity", &capacity) && capacity > 0)
                status_line(out, "Store: %.0f of %.0f blocks ready (%.0f%%), %s served, %s blocks purged", fill,
                            capacity, 100.0 * fill / capacity, fmt_bytes(store, "bytes_served", b2),
                            fmt_count(store, "blocks_purged", b3));

        sources = get_typed(st, "sources", CTL_JSON_ARRAY);
        if (sources) {
                status_line(out, "%s", "");
                status_line(out, "%-7s %-19s %6s %10s %6s %6s %10s", "SOURCE", "STATE", "CREDIT", "SAMPLES", "RCT",
                            "APT", "BITS/S");
                for (const CtlJson *s = sources->child; s; s = s->next)
                        if (s->type == CTL_JSON_OBJECT)
                                render_source(s, out);
        }

        devices = get_typed(st, "devices", CTL_JSON_ARRAY);
        if (devices) {
                status_line(out, "%s", "");
                status_line(out, "%-22s %-10s %8s %5s %6s %12s", "DEVICE", "KIND", "WAITING", "UIDS", "OPEN",
                            "SERVED");
                for (const CtlJson *d = devices->child; d; d = d->next)
                        if (d->type == CTL_JSON_OBJECT)
                                render_device(d, out);
        }
        return ferror(out) ? -EIO : 0;
}
