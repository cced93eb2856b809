/* files.c - see files.h. Flow: [ledger] -> StateDirectory. */
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"

static void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

void ledger_file_name(uint64_t seq, char ret[static LEDGER_FILE_NAME_MAX]) {
        snprintf(ret, LEDGER_FILE_NAME_MAX, LEDGER_FILE_PREFIX "%020" PRIu64 LEDGER_FILE_SUFFIX, seq);
}

/* The first seq a name stands for; -EINVAL for a name not spelled as
 * ledger_file_name() spells it. */
static int name_seq(const char *name, uint64_t *ret) {
        size_t p = strlen(LEDGER_FILE_PREFIX);
        char expect[LEDGER_FILE_NAME_MAX];
        uint64_t v = 0;

        if (strncmp(name, LEDGER_FILE_PREFIX, p) != 0 || strlen(name) != p + 20 + strlen(LEDGER_FILE_SUFFIX))
                return -EINVAL;
        for (size_t i = p; i < p + 20; i++) {
                if (name[i] < '0' || name[i] > '9' || v > (UINT64_MAX - 9) / 10)
                        return -EINVAL;
                v = v * 10 + (uint64_t) (name[i] - '0');
        }
        ledger_file_name(v, expect);
        if (strcmp(expect, name) != 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int file_cmp(const void *a, const void *b) {
        const LedgerFile *x = a, *y = b;

        return x->first_seq < y->first_seq ? -1 : x->first_seq > y->first_seq;
}

int ledger_files_list(int dir_fd, LedgerFile **ret, size_t *ret_n) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ LedgerFile *files = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        int fd;

        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        while ((errno = 0, de = readdir(d))) {
                uint64_t seq;

                if (name_seq(de->d_name, &seq) < 0)
                        continue;
                if (n == cap) {
                        LedgerFile *m = reallocarray(files, cap ? cap * 2 : 8, sizeof(*files));

                        if (!m)
                                return -ENOMEM;
                        files = m;
                        cap = cap ? cap * 2 : 8;
                }
                snprintf(files[n].name, sizeof(files[n].name), "%s", de->d_name);
                files[n++].first_seq = seq;
        }
        if (errno != 0)
                return -errno;
        if (n > 0)
                qsort(files, n, sizeof(*files), file_cmp);
        *ret = TAKE_PTR(files);
        *ret_n = n;
        return 0;
}
