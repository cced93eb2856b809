/* parser.c - the first error of a parse, recorded where it happened and
 * said as "FILE:LINE: reason" (or "FILE: reason" without a line).
 * Flow: reader, keys, values, checks -> [parser] -> config_load's error. */
#include "parser.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 4, 0)))
static void vfail(Parser *p, int error, ParserAt at, const char *fmt, va_list ap) {
        if (p->error)
                return;
        p->error = error;
        p->error_at = at;
        vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
}

void parser_fail(Parser *p, int error, unsigned line, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vfail(p, error, parser_at(p->file, line), fmt, ap);
        va_end(ap);
}

void parser_fail_at(Parser *p, int error, ParserAt at, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vfail(p, error, at, fmt, ap);
        va_end(ap);
}

char *parser_format_error(const Parser *p) {
        /* Every error has a place in a file: the defaults pass the checks. */
        const char *path = p->error_at ? p->config->files[(p->error_at >> 32) - 1] : "defaults";
        unsigned line = parser_at_line(p->error_at);
        char buf[128], *s;
        int r;

        if (line > 0)
                r = asprintf(&s, "%s:%u: %s", path, line, p->reason);
        else if (p->error == -ENOENT || p->error == -EINVAL)
                r = asprintf(&s, "%s: %s", path, p->reason);
        else
                /* GNU strerror_r(): thread-safe, returns the text. */
                r = asprintf(&s, "%s: %s", path, strerror_r(-p->error, buf, sizeof(buf)));
        return r < 0 ? NULL : s;
}
