/* commands.h - the daemon's side of the control commands: a table with a
 * row per command of proto's ctlcommand.h, its name and its handler.
 *
 * A handler decides the answer to one request and does no I/O on the
 * connection: control.c sends the answer, or hands the connection over to
 * a raw export (export.h). Root-only commands (their proto row says so)
 * are refused before their handler runs, so a handler never needs to ask.
 * What the daemon itself knows comes through ControlCallbacks (control.h).
 * Only commands the socket serves itself have a row here (status, raw:
 * a raw export streams on the connection); every other command goes to
 * the daemon's own table (daemon/commands.c) through
 * ControlCallbacks.command, so adding a command is a row in proto/ and a
 * row and a function in daemon/commands.c.
 * Flow: control -> [commands] -> callbacks into the daemon. */
#pragma once

#include "control.h"
#include "export.h"
#include "proto/ctlproto.h"

typedef enum ControlAnswerKind {
        CONTROL_ANSWER_OK,       /* "ok", with the payload if there is one */
        CONTROL_ANSWER_ERROR,    /* "error", its code and text */
        CONTROL_ANSWER_EXPORT,   /* the connection streams export */
} ControlAnswerKind;

typedef struct ControlAnswer {
        ControlAnswerKind kind;
        char *payload;                  /* ok: malloc'd; NULL: none */
        CtlError error;                 /* error */
        char text[CTL_ERROR_TEXT_MAX];  /* error */
        ExportSpec export;              /* export */
} ControlAnswer;

/* Frees what an answer holds. */
void control_answer_done(ControlAnswer *a);

typedef struct ControlHandler {
        const char *command;            /* the name of its row in ctl_commands[] */
        /* Answers req (one of command's) into *ret. */
        void (*handle)(const ControlCallbacks *cb, const Exports *exports, const CtlRequest *req,
                       ControlAnswer *ret);
} ControlHandler;

/* One row per command, ended by a row whose command is NULL. */
extern const ControlHandler control_handlers[];

/* The handler of command: its row here, else the one that asks the
 * daemon (ControlCallbacks.command); NULL for no command. */
const ControlHandler *control_handler_lookup(const CtlCommand *command);
