/* commands.c - what truerandomd answers to each control command (see
 * commands.h). Flow: control -> [commands] -> callbacks into the daemon. */
#include "commands.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reply.h"

static void answer_error(ControlAnswer *a, CtlError e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void answer_error(ControlAnswer *a, CtlError e, const char *fmt, ...) {
        va_list ap;

        a->kind = CONTROL_ANSWER_ERROR;
        a->error = e;
        va_start(ap, fmt);
        vsnprintf(a->text, sizeof(a->text), fmt, ap);
        va_end(ap);
}

void control_answer_done(ControlAnswer *a) {
        free(a->payload);
        a->payload = NULL;
}

/* ---- the handlers -------------------------------------------------------------- */

static void handle_status(const ControlCallbacks *cb, const Exports *exports, const CtlRequest *req,
                          ControlAnswer *ret) {
        char *json = NULL, eb[128];
        int r;

        r = cb->status_json ? cb->status_json(cb->userdata, &json) : -EOPNOTSUPP;
        if (r < 0) {
                answer_error(ret, ctl_error_from_errno(r), "status: %s", control_errno_text(r, eb, sizeof(eb)));
                return;
        }
        *ret = (ControlAnswer){ .kind = CONTROL_ANSWER_OK, .payload = json };
}

/* Any other command: the daemon answers (ControlCallbacks.command). */
static void handle_daemon(const ControlCallbacks *cb, const Exports *exports, const CtlRequest *req,
                          ControlAnswer *ret) {
        char text[CTL_ERROR_TEXT_MAX] = "", eb[128];
        char *payload = NULL;
        int r;

        r = cb->command ? cb->command(cb->userdata, req, &payload, text, sizeof(text)) : -EOPNOTSUPP;
        if (r >= 0) {
                *ret = (ControlAnswer){ .kind = CONTROL_ANSWER_OK, .payload = payload };
                return;
        }
        free(payload);
        if (!text[0])
                snprintf(text, sizeof(text), "%s: %s", req->command->name, control_errno_text(r, eb, sizeof(eb)));
        answer_error(ret, ctl_error_from_errno(r), "%s", text);
}

static void handle_raw(const ControlCallbacks *cb, const Exports *exports, const CtlRequest *req,
                       ControlAnswer *ret) {
        const SourceOps *ops = NULL;
        SourceParams params = { 0 };
        char eb[128];
        int r;

        if (exports->n >= CONTROL_MAX_EXPORTS) {
                answer_error(ret, CTL_ERROR_BUSY, "%u raw exports are running already", exports->n);
                return;
        }
        r = cb->raw_source ? cb->raw_source(cb->userdata, req->source, &ops, &params) : -ENOENT;
        if (r == -ENOENT)
                answer_error(ret, CTL_ERROR_UNKNOWN_SOURCE, "no source named '%s'", req->source);
        else if (r == -ENODEV)
                answer_error(ret, CTL_ERROR_UNAVAILABLE, "source %s is not enabled", req->source);
        else if (r < 0)
                answer_error(ret, ctl_error_from_errno(r), "source %s: %s", req->source,
                             control_errno_text(r, eb, sizeof(eb)));
        else
                *ret = (ControlAnswer){ .kind = CONTROL_ANSWER_EXPORT,
                                        .export = { .source = req->source, .ops = ops, .params = params,
                                                    .samples = req->samples, .rows = (uint32_t) req->rows } };
}

/* ---- the table ------------------------------------------------------------------ */

const ControlHandler control_handlers[] = {
        { "status", handle_status },
        { "raw", handle_raw },
        { NULL, NULL },
};

const ControlHandler *control_handler_lookup(const CtlCommand *command) {
        static const ControlHandler daemon_handler = { NULL, handle_daemon };

        if (!command)
                return NULL;
        for (const ControlHandler *h = control_handlers; h->command; h++)
                if (strcmp(h->command, command->name) == 0)
                        return h;
        return &daemon_handler;
}
