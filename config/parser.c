/* parser.c - the first error of a parse, recorded where it happened and
 * said as "FILE:LINE: reason" (or "FILE: reason" without a line).
 * Flow: reader, keys, values, checks -> [parser] -> config_load's error. */
#include "parser.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void parser_fail(Parser *p, int error, unsigned line, const char *fmt, ...) {
        va_list ap;

        if (p->error)
                return;
        p->error = error;
        p->error_line = line;
        va_start(ap, fmt);
        vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
        va_end(ap);
}

char *parser_format_error(const Parser *p) {
        char buf[128], *s;
        int r;

        if (p->error_line > 0)
                r = asprintf(&s, "%s:%u: %s", p->path, p->error_line, p->reason);
        else if (p->error == -ENOENT)
                r = asprintf(&s, "%s: %s", p->path, p->reason);
        else
                /* GNU strerror_r(): thread-safe, returns the text. */
                r = asprintf(&s, "%s: %s", p->path, strerror_r(-p->error, buf, sizeof(buf)));
        return r < 0 ? NULL : s;
}
