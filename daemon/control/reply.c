/* reply.c - the last packet on a control connection (see reply.h).
 * Flow: control, export -> [reply] -> socket -> truerandomctl. */
#include "reply.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

const char *control_errno_text(int r, char *buf, size_t size) {
        /* GNU strerror_r: thread-safe, returns the text. */
        return strerror_r(r < 0 ? -r : r, buf, size);
}

ssize_t control_format_error(CtlError e, char msg[static CONTROL_ERROR_MSG_MAX], const char *fmt, va_list ap) {
        char text[CTL_ERROR_TEXT_MAX];

        vsnprintf(text, sizeof(text), fmt, ap);
        return ctl_reply_format_error(e, text, msg, CONTROL_ERROR_MSG_MAX);
}

void control_close_drained(int fd) {
        char c;

        /* Bounded; MSG_TRUNC reads nothing. */
        for (unsigned i = 0; i < 64; i++)
                if (recv(fd, &c, sizeof(c), MSG_DONTWAIT | MSG_TRUNC) < 0)
                        break;
        close(fd);
}
