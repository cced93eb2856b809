/* bench-ledger.c - what a ledger record costs the daemon's loop thread.
 *
 * Appends records like the daemon's (a health failure: three fields) into
 * a fresh ledger in DIR (default /var/tmp: a real disk, not tmpfs), with
 * fdatasync per record (the daemon's setting) and without it (the CPU
 * part alone: format, hash, write), then verifies the whole ledger at its
 * size bound. Prints the median and the 99th percentile per record, and a
 * JSON line for scripts. It measures; the exit status says nothing about
 * speed.
 *
 *   bench-ledger [DIR] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger/files.h"
#include "ledger/ledger.h"
#include "ledger/verify.h"
#include "util/time-util.h"

#define SYNCED 500U
#define UNSYNCED 20000U

static int cmp(const void *a, const void *b) {
        usec_t x = *(const usec_t *) a, y = *(const usec_t *) b;

        return (x > y) - (x < y);
}

/* n records; per-record times into t (sorted). */
static int run(int dir_fd, bool sync, unsigned n, usec_t *t) {
        const LedgerOptions opts = { .no_sync = !sync };
        const LedgerField f[] = { { "source", "jitter" }, { "test", "APT" }, { "severity", "intermittent" } };
        Ledger *l = NULL;
        int r = ledger_open(dir_fd, &opts, &l);

        for (unsigned i = 0; r >= 0 && i < n; i++) {
                usec_t start = now_usec(CLOCK_MONOTONIC);

                r = ledger_append(l, LEDGER_EVENT_HEALTH_FAILURE, f, 3);
                t[i] = now_usec(CLOCK_MONOTONIC) - start;
        }
        ledger_free(l);
        qsort(t, n, sizeof(*t), cmp);
        return r;
}

static void remove_ledger(int dir_fd, const char *dir) {
        LedgerFile *files = NULL;
        size_t n = 0;

        if (ledger_files_list(dir_fd, &files, &n) >= 0)
                for (size_t i = 0; i < n; i++)
                        unlinkat(dir_fd, files[i].name, 0);
        free(files);
        close(dir_fd);
        rmdir(dir);
}

int main(int argc, char **argv) {
        char dir[256];
        static usec_t ts[SYNCED], tu[UNSYNCED];
        LedgerReport *rep = NULL;
        usec_t vstart, vtime;
        int dir_fd, r;

        snprintf(dir, sizeof(dir), "%s/bench-ledger-XXXXXX", argc > 1 ? argv[1] : "/var/tmp");
        if (!mkdtemp(dir) || (dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                perror(dir);
                return 1;
        }
        r = run(dir_fd, true, SYNCED, ts);
        if (r >= 0)
                r = run(dir_fd, false, UNSYNCED, tu);
        /* 20,500 records of ~280 B: the default bound (8 x 1 MiB) is past,
         * so this is the largest ledger verify meets. */
        vstart = now_usec(CLOCK_MONOTONIC);
        if (r >= 0)
                r = ledger_verify(dir_fd, NULL, &rep);
        vtime = now_usec(CLOCK_MONOTONIC) - vstart;
        if (r < 0) {
                fprintf(stderr, "bench-ledger: %s\n", strerror(-r));
                return 1;
        }
        printf("%-28s %10s %10s\n", "per record", "median us", "p99 us");
        printf("%-28s %10llu %10llu\n", "append + fdatasync", (unsigned long long) ts[SYNCED / 2],
               (unsigned long long) ts[SYNCED * 99 / 100]);
        printf("%-28s %10llu %10llu\n", "append, no sync", (unsigned long long) tu[UNSYNCED / 2],
               (unsigned long long) tu[UNSYNCED * 99 / 100]);
        printf("verify: %zu records in %zu files, %.3f s\n", rep->records, rep->files, usec_to_seconds(vtime));
        printf("{\"sync_median_us\":%llu,\"sync_p99_us\":%llu,\"nosync_median_us\":%llu,\"nosync_p99_us\":%llu,"
               "\"verify_records\":%zu,\"verify_s\":%.3f}\n",
               (unsigned long long) ts[SYNCED / 2], (unsigned long long) ts[SYNCED * 99 / 100],
               (unsigned long long) tu[UNSYNCED / 2], (unsigned long long) tu[UNSYNCED * 99 / 100], rep->records,
               usec_to_seconds(vtime));
        ledger_report_free(rep);
        remove_ledger(dir_fd, dir);
        return 0;
}
