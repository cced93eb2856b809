/* ledger.c - the writer: open (continue the chain, cut a torn tail),
 * append (one write, fdatasync), rotate (a new file, the oldest removed).
 * See ledger.h. Flow: daemon events -> [ledger] -> StateDirectory. */
#include "ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "util/fdio.h"
#include "util/time-util.h"

struct Ledger {
        int dir_fd;
        int fd;                 /* the newest file, O_APPEND; -1 until the first record */
        uint64_t size;          /* its size: what a failed write is cut back to */
        bool dirty;             /* a failed write could not be cut back yet */
        uint64_t seq;           /* the last record's, 0 for none */
        uint8_t hash[LEDGER_HASH_BYTES];
        LedgerOptions opts;
        size_t cut;
        char line[LEDGER_RECORD_MAX];
};

Ledger *ledger_free(Ledger *l) {
        if (!l)
                return NULL;
        if (l->fd >= 0)
                close(l->fd);
        if (l->dir_fd >= 0)
                close(l->dir_fd);
        free(l);
        return NULL;
}

static int pread_all(int fd, void *buf, size_t n, uint64_t off) {
        uint8_t *p = buf;

        while (n > 0) {
                ssize_t k = pread(fd, p, n, (off_t) off);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EIO;   /* the file shrank under us */
                p += k;
                n -= (size_t) k;
                off += (uint64_t) k;
        }
        return 0;
}

/* The file's last complete line into rec (*ret_found), and where it ends:
 * what follows is a torn record. A torn tail is shorter than one record,
 * so two records' worth of the file's end hold both. */
static int last_record(int fd, uint64_t size, LedgerRecord *rec, bool *ret_found, uint64_t *ret_end) {
        uint64_t off = size > 2 * LEDGER_RECORD_MAX ? size - 2 * LEDGER_RECORD_MAX : 0;
        _cleanup_free_ char *buf = malloc(2 * LEDGER_RECORD_MAX);
        size_t n = (size_t) (size - off), end, start;
        int r;

        if (!buf)
                return -ENOMEM;
        r = pread_all(fd, buf, n, off);
        if (r < 0)
                return r;
        for (end = n; end > 0 && buf[end - 1] != '\n'; end--)
                ;
        if (end == 0 && off > 0)
                return -EBADMSG;   /* no line end in two records' worth */
        *ret_end = off + end;
        *ret_found = end > 0;
        if (end == 0)
                return 0;
        for (start = end - 1; start > 0 && buf[start - 1] != '\n'; start--)
                ;
        if (start == 0 && off > 0)
                return -EBADMSG;   /* a line longer than a record */
        r = ledger_record_parse(buf + start, end - 1 - start, rec);
        return r < 0 || !rec->hash_ok ? -EBADMSG : 0;
}

/* Cuts what follows the last line end and says what it was. */
static int cut_tail(int fd, uint64_t size, uint64_t end, char ret_hex[static 2 * LEDGER_HASH_BYTES + 1]) {
        _cleanup_free_ uint8_t *torn = malloc((size_t) (size - end));
        uint8_t h[LEDGER_HASH_BYTES];
        int r;

        if (!torn)
                return -ENOMEM;
        r = pread_all(fd, torn, (size_t) (size - end), end);
        if (r < 0)
                return r;
        crypto_hash_sha256(h, torn, size - end);
        ledger_hash_to_hex(h, ret_hex);
        if (ftruncate(fd, (off_t) end) < 0 || fdatasync(fd) < 0)
                return -errno;
        return 0;
}

/* Finds the newest record, newest file first: sets seq, hash, and the
 * current file. A newest file with no complete record (a crash before its
 * first one was written whole) is removed: it holds nothing. */
static int ledger_load(Ledger *l, char torn_hex[static 2 * LEDGER_HASH_BYTES + 1]) {
        _cleanup_free_ LedgerFile *files = NULL;
        _cleanup_free_ LedgerRecord *rec = malloc(sizeof(LedgerRecord));
        size_t n;
        int r;

        if (!rec)
                return -ENOMEM;
        r = ledger_files_list(l->dir_fd, &files, &n);
        while (r >= 0 && n-- > 0) {
                _cleanup_close_ int fd = openat(l->dir_fd, files[n].name, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
                uint64_t end;
                struct stat st;
                bool found;

                if (fd < 0 || fstat(fd, &st) < 0)
                        return -errno;
                r = last_record(fd, (uint64_t) st.st_size, rec, &found, &end);
                if (r >= 0 && end < (uint64_t) st.st_size && l->cut == 0) {
                        l->cut = (size_t) ((uint64_t) st.st_size - end);
                        r = cut_tail(fd, (uint64_t) st.st_size, end, torn_hex);
                }
                if (r < 0)
                        return r;
                if (found) {
                        l->seq = rec->seq;
                        memcpy(l->hash, rec->hash, LEDGER_HASH_BYTES);
                        l->fd = TAKE_FD(fd);
                        l->size = end;
                        return 0;
                }
                if (unlinkat(l->dir_fd, files[n].name, 0) < 0)
                        return -errno;
        }
        return r;
}

int ledger_open(int dir_fd, const LedgerOptions *opts, Ledger **ret) {
        _cleanup_(ledger_freep) Ledger *l = NULL;
        char torn_hex[2 * LEDGER_HASH_BYTES + 1], bytes[24];
        int r;

        if (opts && ((opts->max_file_bytes && opts->max_file_bytes < 2 * LEDGER_RECORD_MAX) || opts->keep_files == 1))
                return -EINVAL;
        if (sodium_init() < 0)
                return -EIO;
        l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        l->fd = -1;
        l->opts = opts ? *opts : (LedgerOptions){ 0 };
        if (l->opts.max_file_bytes == 0)
                l->opts.max_file_bytes = LEDGER_MAX_FILE_BYTES_DEFAULT;
        if (l->opts.keep_files == 0)
                l->opts.keep_files = LEDGER_KEEP_FILES_DEFAULT;
        l->dir_fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (l->dir_fd < 0)
                return -errno;
        r = ledger_load(l, torn_hex);
        if (r < 0)
                return r;
        if (l->cut > 0) {
                snprintf(bytes, sizeof(bytes), "%zu", l->cut);
                r = ledger_append(l, LEDGER_EVENT_RECOVERY,
                                  (const LedgerField[]){ { "reason", "torn last record cut at open" },
                                                         { "cut_bytes", bytes },
                                                         { "cut_sha256", torn_hex } }, 3);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

/* Removes the oldest files beyond keep_files. The bound is kept as well as
 * unlink allows: a file that cannot be removed stays, and is tried again
 * at the next rotation. */
static void ledger_prune(Ledger *l) {
        _cleanup_free_ LedgerFile *files = NULL;
        size_t n;

        if (ledger_files_list(l->dir_fd, &files, &n) < 0)
                return;
        for (size_t i = 0; i + l->opts.keep_files < n; i++)
                (void) unlinkat(l->dir_fd, files[i].name, 0);
}

/* Starts the file whose first record is seq. */
static int ledger_rotate(Ledger *l, uint64_t seq) {
        char name[LEDGER_FILE_NAME_MAX];
        int fd;

        ledger_file_name(seq, name);
        fd = openat(l->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        /* The new name must survive a power cut with the record in it. */
        if (!l->opts.no_sync && fsync(l->dir_fd) < 0) {
                int r = -errno;

                close(fd);
                (void) unlinkat(l->dir_fd, name, 0);
                return r;
        }
        if (l->fd >= 0)
                close(l->fd);
        l->fd = fd;
        l->size = 0;
        l->dirty = false;
        ledger_prune(l);
        return 0;
}

int ledger_append(Ledger *l, LedgerEvent e, const LedgerField *fields, size_t n_fields) {
        uint8_t hash[LEDGER_HASH_BYTES];
        size_t len;
        int r;

        r = ledger_record_format(l->seq + 1, now_usec(CLOCK_REALTIME), now_usec(CLOCK_MONOTONIC), e, fields,
                                 n_fields, l->hash, l->line, &len, hash);
        if (r < 0)
                return r;
        if (l->dirty && ftruncate(l->fd, (off_t) l->size) < 0)
                return -errno;
        l->dirty = false;
        if (l->fd < 0 || l->size + len > l->opts.max_file_bytes) {
                r = ledger_rotate(l, l->seq + 1);
                if (r < 0)
                        return r;
        }
        r = fd_write_all(l->fd, l->line, len);
        if (r < 0) {
                /* Half a record must not stand in front of the next one. */
                l->dirty = ftruncate(l->fd, (off_t) l->size) < 0;
                return r;
        }
        l->size += len;
        l->seq++;
        memcpy(l->hash, hash, LEDGER_HASH_BYTES);
        if (!l->opts.no_sync && fdatasync(l->fd) < 0)
                return -errno;
        return 0;
}

void ledger_head(const Ledger *l, uint64_t *ret_seq, uint8_t ret_hash[static LEDGER_HASH_BYTES]) {
        *ret_seq = l->seq;
        memcpy(ret_hash, l->hash, LEDGER_HASH_BYTES);
}

size_t ledger_cut_bytes(const Ledger *l) {
        return l->cut;
}
