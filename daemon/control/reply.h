/* reply.h - the last packet on a control connection, as the loop
 * (control.c) and the export threads (export.c) both send it: an "error"
 * reply made from a printf format, and the close that lets it arrive.
 * No state; safe on any thread.
 * Flow: control, export -> [reply] -> socket -> truerandomctl. */
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

#include "proto/ctlproto.h"

/* An error reply: its text and the framing. */
#define CONTROL_ERROR_MSG_MAX (CTL_ERROR_TEXT_MAX + 64)

/* strerror_r's text for an -errno or errno. */
const char *control_errno_text(int r, char *buf, size_t size);

/* An error reply with the text fmt makes (cut to CTL_ERROR_TEXT_MAX), in
 * msg: its length, or -errno from ctl_reply_format_error(). */
ssize_t control_format_error(CtlError e, char msg[static CONTROL_ERROR_MSG_MAX], const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));

/* Closes a connection fd, its unread requests discarded first: a unix
 * socket closed with unread packets resets its peer, and the reset can
 * overtake the reply still queued there. */
void control_close_drained(int fd);
