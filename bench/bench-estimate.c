/* bench-estimate.c - how long the SP 800-90B §6.3 assessment of 1,000,000
 * samples takes with libestimate, and, where NIST's reference tool is on
 * the machine, with that tool on the same bytes, side by side.
 *
 * Data: uniform bytes (tests/lib/estimate-datasets.h) and the committed
 * jitter capture (tests/data/jitter-raw-1M.bin). Each is timed ROUNDS
 * times; the table shows the median wall and CPU time of one call (one
 * thread: the estimators are single-threaded). NIST's tool, if EA_NON_IID
 * names its ea_non_iid binary, runs once per set as `ea_non_iid -v FILE 8`
 * on a temporary copy, output discarded, and is timed as a process (wall,
 * and CPU from wait4()). The
 * last line is one JSON object for scripts. It measures, it does not
 * judge: the exit status says nothing about speed.
 *
 *   bench-estimate [ROUNDS]            (default 3)
 *   EA_NON_IID=/path/to/ea_non_iid bench-estimate */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "estimate-datasets.h"
#include "estimate/noniid.h"

#define SETS 2
static const char *const set_name[SETS] = { "uniform", "jitter" };

extern char **environ;

static double now(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

static int load(int set, uint8_t *buf) {
        FILE *f;
        size_t n;

        if (set == 0) {
                ea_dataset_generate(EA_SET_UNIFORM, buf, EA_DATASET_SAMPLES);
                return 0;
        }
        f = fopen(BENCH_DATA_DIR "/jitter-raw-1M.bin", "rb");
        if (!f)
                return -errno;
        n = fread(buf, 1, EA_DATASET_SAMPLES, f);
        fclose(f);
        return n == EA_DATASET_SAMPLES ? 0 : -EIO;
}

/* Wall time of `tool -v FILE 8`, or a negative errno; *ret_cpu: its CPU
 * time (user + system, from wait4). */
static double time_nist(const char *tool, const uint8_t *buf, double *ret_cpu) {
        char path[] = "/tmp/bench-estimate-XXXXXX";
        char *argv[] = { (char *)tool, (char *)"-v", path, (char *)"8", NULL };
        posix_spawn_file_actions_t fa;
        int fd = mkstemp(path), status;
        struct rusage ru;
        double t0, t1;
        pid_t pid;

        if (fd < 0)
                return -errno;
        if (write(fd, buf, EA_DATASET_SAMPLES) != EA_DATASET_SAMPLES) {
                close(fd);
                unlink(path);
                return -EIO;
        }
        close(fd);
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        t0 = now(CLOCK_MONOTONIC);
        if (posix_spawn(&pid, tool, &fa, NULL, argv, environ) != 0) {
                posix_spawn_file_actions_destroy(&fa);
                unlink(path);
                return -ENOENT;
        }
        posix_spawn_file_actions_destroy(&fa);
        while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
                ;
        t1 = now(CLOCK_MONOTONIC);
        *ret_cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                   (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
        unlink(path);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -ECHILD;
        return t1 - t0;
}

int main(int argc, char **argv) {
        int rounds = argc > 1 ? atoi(argv[1]) : 3;
        const char *tool = getenv("EA_NON_IID");
        double wall[SETS], cpu[SETS], nist[SETS], nist_cpu[SETS], h[SETS];
        uint8_t *buf = malloc(EA_DATASET_SAMPLES);

        if (!buf || rounds < 1 || rounds > 100) {
                fprintf(stderr, "usage: bench-estimate [ROUNDS 1..100]\n");
                return 2;
        }
        for (int s = 0; s < SETS; s++) {
                double w[100], c[100];
                int r = load(s, buf);

                if (r < 0) {
                        fprintf(stderr, "bench-estimate: %s: %s\n", set_name[s], strerror(-r));
                        return 1;
                }
                for (int i = 0; i < rounds; i++) {
                        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
                        EaReport rep;

                        r = ea_non_iid(buf, EA_DATASET_SAMPLES, 8, &rep);
                        if (r < 0) {
                                fprintf(stderr, "bench-estimate: ea_non_iid: %s\n", strerror(-r));
                                return 1;
                        }
                        w[i] = now(CLOCK_MONOTONIC) - w0;
                        c[i] = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
                        h[s] = rep.min_entropy;
                }
                qsort(w, (size_t)rounds, sizeof(double), cmp_double);
                qsort(c, (size_t)rounds, sizeof(double), cmp_double);
                wall[s] = w[rounds / 2];
                cpu[s] = c[rounds / 2];
                nist[s] = tool ? time_nist(tool, buf, &nist_cpu[s]) : -ENOENT;
        }

        /* CPU time is the one-core figure that survives a busy machine;
         * wall time is what a user waits. */
        printf("%-8s %10s %10s %10s %10s %10s %10s %10s\n", "set", "min_ent", "ours_wall", "ours_cpu",
               "nist_wall", "nist_cpu", "wall_ratio", "cpu_ratio");
        for (int s = 0; s < SETS; s++) {
                if (nist[s] > 0)
                        printf("%-8s %10.6f %9.2fs %9.2fs %9.2fs %9.2fs %9.2fx %9.2fx\n", set_name[s], h[s], wall[s], cpu[s],
                               nist[s], nist_cpu[s], nist[s] / wall[s], nist_cpu[s] / cpu[s]);
                else
                        printf("%-8s %10.6f %9.2fs %9.2fs %10s %10s %10s %10s\n", set_name[s], h[s], wall[s], cpu[s], "-", "-", "-", "-");
        }
        if (tool && (nist[0] < 0 || nist[1] < 0))
                fprintf(stderr, "bench-estimate: EA_NON_IID=%s did not run\n", tool);
        printf("{\"rounds\": %d", rounds);
        for (int s = 0; s < SETS; s++) {
                printf(", \"%s_wall_s\": %.3f, \"%s_cpu_s\": %.3f", set_name[s], wall[s], set_name[s], cpu[s]);
                if (nist[s] > 0)
                        printf(", \"%s_nist_wall_s\": %.3f, \"%s_nist_cpu_s\": %.3f", set_name[s], nist[s], set_name[s], nist_cpu[s]);
        }
        printf("}\n");
        free(buf);
        return 0;
}
