/* reader.c - the lines of truerandomd.conf on their way to libinih.
 *
 * libinih reports only the line of the first failure, and in this build its
 * handler gets no line number; so lines reach libinih through this reader,
 * which counts them, and which also rejects what libinih would pass over
 * silently or misread: unknown or unterminated [section] lines (seen even
 * when empty), over-long lines (libinih would split them) and indented lines
 * (libinih would take them as continuations of the previous value).
 * Flow: the file -> [reader] -> libinih -> keys. */
#include "parser.h"

#include <errno.h>
#include <string.h>
#include <sys/types.h>

/* A [section] line: known, closed, and nothing but a comment after it. */
static bool section_line_ok(Parser *p, const char *s) {
        const char *end = strchr(s, ']');

        if (!end) {
                parser_fail(p, -EINVAL, p->lineno, "syntax error: '[' without ']'");
                return false;
        }
        if (!key_section_known(s + 1, (size_t) (end - s - 1))) {
                parser_fail(p, -EINVAL, p->lineno, "unknown section [%.*s]", (int) (end - s - 1), s + 1);
                return false;
        }
        end += 1 + strspn(end + 1, " \t\r\n\v\f");
        if (*end && *end != ';' && *end != '#') {
                parser_fail(p, -EINVAL, p->lineno, "syntax error: text after ']'");
                return false;
        }
        return true;
}

char *parser_read(char *str, int num, void *userdata) {
        Parser *p = userdata;
        ssize_t n;
        char *s;

        if (p->error)
                return NULL;
        errno = 0;
        n = getline(&p->line, &p->line_size, p->f);
        if (n < 0) {
                if (ferror(p->f))
                        parser_fail(p, errno > 0 ? -errno : -EIO, 0, "%s", "cannot read");
                return NULL;
        }
        p->lineno++;
        crypto_hash_sha256_update(&p->digest, (const unsigned char *) p->line, (unsigned long long) n);

        if (strlen(p->line) != (size_t) n) {
                parser_fail(p, -EINVAL, p->lineno, "syntax error: NUL byte in line");
                return NULL;
        }
        s = p->line;
        if (p->lineno == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
                s += 3;         /* a UTF-8 byte order mark */
        s += strspn(s, " \t\r\n\v\f");
        /* libinih gets the text without its line ending (any run of CR
         * and LF), then one "\n": the limit leaves room for "\r\n\0" after
         * the text, whichever ending the file has. */
        size_t len = strlen(s);
        while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
                len--;
        if (num < 4 || len > (size_t) num - 4) {
                parser_fail(p, -EINVAL, p->lineno, "line too long (at most %d characters)", num - 4);
                return NULL;
        }

        if (s[0] == '[') {
                if (!section_line_ok(p, s))
                        return NULL;
        } else if (*s && *s != ';' && *s != '#' && !strpbrk(s, "=:")) {
                parser_fail(p, -EINVAL, p->lineno, "syntax error: expected 'key = value'");
                return NULL;
        }

        memcpy(str, s, len);
        memcpy(str + len, "\n", 2);
        return str;
}
