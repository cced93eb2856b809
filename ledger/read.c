/* read.c - every line of every ledger file, oldest first (see verify.h).
 * Flow: StateDirectory -> [ledger read] -> ctl, verify. */
#include "verify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

/* One file's lines; last says it is the newest file, where a line with no
 * end is a torn record rather than damage. */
static int read_file(int dir_fd, const char *name, bool last, LedgerRecord *rec, LedgerLineFn fn, void *userdata) {
        _cleanup_(fclosep) FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        unsigned no = 0;
        ssize_t n;
        int fd, r;

        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        f = fdopen(fd, "r");
        if (!f) {
                close(fd);
                return -errno;
        }
        while ((errno = 0, n = getline(&line, &cap, f)) > 0) {
                bool ended = line[n - 1] == '\n';
                size_t len = (size_t) n - (ended ? 1 : 0);
                bool ok = ended && ledger_record_parse(line, len, rec) >= 0;

                r = fn(userdata, name, ++no, line, len, ok ? rec : NULL, !ended && last);
                if (r < 0)
                        return r;
        }
        return errno != 0 ? -errno : 0;
}

int ledger_foreach(int dir_fd, LedgerLineFn fn, void *userdata) {
        _cleanup_free_ LedgerFile *files = NULL;
        _cleanup_free_ LedgerRecord *rec = malloc(sizeof(LedgerRecord));
        size_t n;
        int r;

        if (!rec)
                return -ENOMEM;
        r = ledger_files_list(dir_fd, &files, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return -ENOENT;
        for (size_t i = 0; i < n; i++) {
                r = read_file(dir_fd, files[i].name, i + 1 == n, rec, fn, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}
