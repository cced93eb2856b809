/* fuzz-ctlproto.c - the control protocol's parsers on arbitrary packets.
 *
 * The first byte picks the parser, the rest is the packet, copied to a heap
 * buffer of exactly its size (the parsers take no NUL for granted, so a read
 * past it is an ASan report):
 *   request  ctl_request_parse(), what the daemon reads from any local user
 *   reply    ctl_reply_parse(), what truerandomctl reads from the socket
 *   status   ctl_status_parse(), ctl_render_text() and
 *            ctl_render_metrics() in both formats, the status payload
 * Checks: a failed parse leaves its output alone; an accepted packet
 * round-trips through the matching formatter (requests and replies) or
 * json-c's printer (status) to the same value; the rendered status keeps to
 * printable ASCII lines of at most 80 columns.
 * Flow: libFuzzer -> [harness] -> ctlproto. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/render.h"
#include "fuzz.h"
#include "proto/ctlproto.h"
#include "proto/ctlstatus.h"

static void fuzz_request(const uint8_t *msg, size_t size) {
        CtlRequest req, untouched, again;
        char reason[CTL_REASON_MAX] = "", buf[CTL_REQUEST_MAX + 1];
        ssize_t n;
        int r;

        memset(&req, 0x5a, sizeof(req));
        untouched = req;
        r = ctl_request_parse(msg, size, &req, reason, sizeof(reason));
        if (r < 0) {
                FUZZ_CHECK(r == -EMSGSIZE || r == -EPROTONOSUPPORT || r == -EBADMSG);
                FUZZ_CHECK(reason[0]);
                FUZZ_CHECK(memcmp(&req, &untouched, sizeof(req)) == 0);
                return;
        }
        FUZZ_CHECK(r == 0 && ctl_command_valid(req.command));
        if (req.command == ctl_command_from_string("raw"))
                FUZZ_CHECK(req.source[0] && req.samples >= 1 && req.samples <= CTL_RAW_SAMPLES_MAX &&
                           req.rows >= 1 && req.rows <= CTL_RAW_ROWS_MAX);

        n = ctl_request_format(&req, buf, sizeof(buf));
        FUZZ_CHECK(n > 0 && (size_t) n <= CTL_REQUEST_MAX);
        FUZZ_CHECK(ctl_request_parse(buf, (size_t) n, &again, NULL, 0) == 0);
        FUZZ_CHECK(again.command == req.command);
        if (req.command == ctl_command_from_string("raw"))
                FUZZ_CHECK(strcmp(again.source, req.source) == 0 && again.samples == req.samples &&
                           again.rows == req.rows);
}

static void fuzz_reply(const uint8_t *msg, size_t size) {
        static uint8_t buf[CTL_REPLY_MAX];
        CtlReply rep, untouched, again;
        ssize_t n;
        int r;

        memset(&rep, 0x5a, sizeof(rep));
        untouched = rep;
        r = ctl_reply_parse(msg, size, &rep);
        if (r < 0) {
                FUZZ_CHECK(r == -EMSGSIZE || r == -EBADMSG);
                FUZZ_CHECK(memcmp(&rep, &untouched, sizeof(rep)) == 0);
                return;
        }
        FUZZ_CHECK(r == 0 && (unsigned) rep.kind < _CTL_REPLY_KIND_MAX);
        FUZZ_CHECK(!rep.payload || (rep.payload >= msg && rep.payload + rep.payload_size <= msg + size));
        FUZZ_CHECK(rep.payload || rep.payload_size == 0);

        switch (rep.kind) {
        case CTL_REPLY_OK:
        case CTL_REPLY_DATA:
                n = ctl_reply_format(rep.kind, rep.payload, rep.payload_size, buf, sizeof(buf));
                break;
        case CTL_REPLY_ERROR:
                FUZZ_CHECK((unsigned) rep.error < _CTL_ERROR_MAX);
                FUZZ_CHECK(ctl_error_to_errno(rep.error) < 0);
                /* The text may be cut and made printable: only the code must
                 * come back. */
                n = ctl_reply_format_error(rep.error, NULL, buf, sizeof(buf));
                break;
        case CTL_REPLY_START:
                FUZZ_CHECK(rep.samples >= 1 && rep.samples <= CTL_RAW_SAMPLES_MAX && rep.rows >= 1 &&
                           rep.rows <= CTL_RAW_ROWS_MAX);
                n = ctl_reply_format_start(rep.samples, rep.rows, buf, sizeof(buf));
                break;
        default:
                abort();
        }
        FUZZ_CHECK(n > 0);
        FUZZ_CHECK(ctl_reply_parse(buf, (size_t) n, &again) == 0);
        FUZZ_CHECK(again.kind == rep.kind);
        switch (rep.kind) {
        case CTL_REPLY_OK:
        case CTL_REPLY_DATA:
                FUZZ_CHECK(again.payload_size == rep.payload_size &&
                           (rep.payload_size == 0 || memcmp(again.payload, rep.payload, rep.payload_size) == 0));
                break;
        case CTL_REPLY_ERROR:
                FUZZ_CHECK(again.error == rep.error);
                break;
        case CTL_REPLY_START:
                FUZZ_CHECK(again.samples == rep.samples && again.rows == rep.rows);
                break;
        default:
                abort();
        }
}

/* ---- the status payload ------------------------------------------------------ */

static void check_rendered(const char *text, size_t size) {
        size_t column = 0;

        for (size_t i = 0; i < size; i++) {
                unsigned char c = (unsigned char) text[i];

                if (c == '\n') {
                        column = 0;
                        continue;
                }
                FUZZ_CHECK(c >= 0x20 && c < 0x7f);
                FUZZ_CHECK(++column <= 80);
        }
        FUZZ_CHECK(size == 0 || text[size - 1] == '\n');
}

static void fuzz_status(const uint8_t *msg, size_t size) {
        CtlStatus *st = (CtlStatus *) 0x1, *again = NULL;
        struct json_object *root;
        const char *printed;
        char *text = NULL;
        size_t text_size = 0;
        FILE *out;
        int r;

        r = ctl_status_parse((const char *) msg, size, &st);
        if (r < 0) {
                FUZZ_CHECK(r == -EBADMSG || r == -ENOMEM);
                FUZZ_CHECK(st == (CtlStatus *) 0x1);
                return;
        }
        root = (struct json_object *) ctl_status_root(st);
        FUZZ_CHECK(json_object_is_type(root, json_type_object));

        /* What json-c prints back reads as the same document. */
        printed = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
        FUZZ_CHECK(printed);
        r = ctl_status_parse(printed, strlen(printed), &again);
        if (r < 0)
                fprintf(stderr, "printed back: %s\n", printed);
        FUZZ_CHECK(r == 0);
        FUZZ_CHECK(json_object_equal(root, (struct json_object *) ctl_status_root(again)));
        ctl_status_free(again);

        out = open_memstream(&text, &text_size);
        FUZZ_CHECK(out);
        r = ctl_render_text(st, out);
        FUZZ_CHECK(fclose(out) == 0);
        FUZZ_CHECK(r == 0);
        check_rendered(text, text_size);
        free(text);

        /* The metrics, both formats: every line a comment or "name[{labels}]
         * value"; OpenMetrics' last line # EOF. */
        for (int f = CTL_METRICS_OPENMETRICS; f <= CTL_METRICS_PROMETHEUS; f++) {
                text = NULL;
                text_size = 0;
                out = open_memstream(&text, &text_size);
                FUZZ_CHECK(out);
                r = ctl_render_metrics(st, (CtlMetricsFormat) f, out);
                FUZZ_CHECK(fclose(out) == 0);
                FUZZ_CHECK(r == 0 || r == -ENOMEM);
                for (char *line = text; r == 0 && line && *line;) {
                        char *nl = strchr(line, '\n');
                        FUZZ_CHECK(nl);
                        FUZZ_CHECK(line[0] == '#' || strncmp(line, "truerandom_", 11) == 0);
                        FUZZ_CHECK(memchr(line, ' ', (size_t) (nl - line)));
                        line = nl + 1;
                }
                FUZZ_CHECK(r != 0 || f != CTL_METRICS_OPENMETRICS ||
                           (text_size >= 6 && strcmp(text + text_size - 6, "# EOF\n") == 0));
                free(text);
        }
        ctl_status_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        uint8_t *msg;
        uint8_t which;

        if (size == 0)
                return 0;
        which = data[0] % 3;
        size--;
        msg = malloc(size > 0 ? size : 1);
        FUZZ_CHECK(msg);
        memcpy(msg, data + 1, size);
        if (which == 0)
                fuzz_request(msg, size);
        else if (which == 1)
                fuzz_reply(msg, size);
        else
                fuzz_status(msg, size);
        free(msg);
        return 0;
}
