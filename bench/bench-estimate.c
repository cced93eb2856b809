/* bench-estimate.c - what the SP 800-90B §6.3 assessment costs with
 * libestimate: time per estimator and samples per second at the window
 * sizes a running gate may use, the peak memory of one call, and, where
 * NIST's reference tool is on the machine, that tool on the same bytes.
 *
 * Data: uniform bytes (tests/lib/estimate-datasets.h) and the committed
 * jitter capture (tests/data/jitter-raw-1M.bin), each cut to windows of
 * 65,536, 262,144 and 1,000,000 samples (the first n samples). Each call is
 * timed ROUNDS times in thread CPU time (the one-core figure that survives
 * a busy machine) and wall time; the tables show the median. The split per
 * estimator comes from ea_non_iid_progress(): the CPU time between two
 * progress calls is one step (the first step on the samples includes
 * mapping them to ranks, the first on the bitstring includes building it).
 * Peak memory: one ea_non_iid() of 1,000,000 samples in a fresh process
 * (this program again, `--rss SET`), VmHWM before and after the call.
 * NIST's tool, if EA_NON_IID names its ea_non_iid binary, runs once per set
 * as `ea_non_iid -v FILE 8` on a temporary copy of the 1,000,000 samples,
 * output discarded, timed as a process (wall, and CPU from wait4()).
 * The last line is one JSON object for scripts. It measures, it does not
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

#define WINDOWS 3
static const size_t window[WINDOWS] = { 65536, 262144, EA_DATASET_SAMPLES };

/* The 13 progress steps of 8-bit samples with more than two values. */
#define STEPS 13
static const char *const step_name[STEPS] = {
        "mcv (+ map)", "t_tuple + lrs", "multi_mcw", "lag", "multi_mmc", "lz78y",
        "mcv (+ bits)", "collision..compression", "t_tuple + lrs", "multi_mcw", "lag", "multi_mmc", "lz78y",
};

#define ROUNDS_MAX 100

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

static double median(double *v, int n) {
        qsort(v, (size_t)n, sizeof(double), cmp_double);
        return v[n / 2];
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

/* Thread CPU time at each progress call. */
typedef struct Split {
        double start, at[STEPS];
        unsigned steps;
} Split;

static int split_step(void *userdata, unsigned done, unsigned total) {
        Split *s = userdata;

        if (done >= 1 && done <= STEPS)
                s->at[done - 1] = now(CLOCK_THREAD_CPUTIME_ID);
        s->steps = total;
        return 0;
}

/* One window of one set, `rounds` times: median per step, total CPU and
 * wall. */
typedef struct Timing {
        double step[STEPS], cpu, wall, h;
} Timing;

static int time_window(const uint8_t *buf, size_t n, int rounds, Timing *ret) {
        double step[STEPS][ROUNDS_MAX], cpu[ROUNDS_MAX], wall[ROUNDS_MAX];

        for (int i = 0; i < rounds; i++) {
                Split s = { .start = now(CLOCK_THREAD_CPUTIME_ID) };
                double w0 = now(CLOCK_MONOTONIC);
                EaReport rep;
                int r = ea_non_iid_progress(buf, n, 8, split_step, &s, &rep);

                if (r < 0)
                        return r;
                wall[i] = now(CLOCK_MONOTONIC) - w0;
                cpu[i] = now(CLOCK_THREAD_CPUTIME_ID) - s.start;
                if (s.steps != STEPS)
                        return -EPROTO;
                for (unsigned j = 0; j < STEPS; j++)
                        step[j][i] = s.at[j] - (j ? s.at[j - 1] : s.start);
                ret->h = rep.min_entropy;
        }
        for (unsigned j = 0; j < STEPS; j++)
                ret->step[j] = median(step[j], rounds);
        ret->cpu = median(cpu, rounds);
        ret->wall = median(wall, rounds);
        return 0;
}

static long vm_hwm_kib(void) {
        char line[256];
        long kib = -1;
        FILE *f = fopen("/proc/self/status", "r");

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
                        break;
        fclose(f);
        return kib;
}

/* `--rss SET`: one call on 1,000,000 samples in this fresh process;
 * prints VmHWM before and after, in KiB. */
static int rss_child(int set) {
        uint8_t *buf = malloc(EA_DATASET_SAMPLES);
        long before;
        EaReport rep;

        if (!buf || load(set, buf) < 0)
                return 1;
        before = vm_hwm_kib();
        if (ea_non_iid(buf, EA_DATASET_SAMPLES, 8, &rep) < 0)
                return 1;
        printf("%ld %ld\n", before, vm_hwm_kib());
        free(buf);
        return 0;
}

/* Runs `self --rss SET`; its VmHWM before and after the call, in KiB. */
static int rss_measure(int set, long *ret_before, long *ret_after) {
        char path[] = "/tmp/bench-estimate-rss-XXXXXX", arg[16], out[64] = { 0 };
        char *argv[] = { (char *)"/proc/self/exe", (char *)"--rss", arg, NULL };
        posix_spawn_file_actions_t fa;
        int fd = mkstemp(path), status;
        ssize_t len;
        pid_t pid;

        if (fd < 0)
                return -errno;
        unlink(path);
        snprintf(arg, sizeof(arg), "%d", set);
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fd, STDOUT_FILENO);
        if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ) != 0) {
                posix_spawn_file_actions_destroy(&fa);
                close(fd);
                return -ENOENT;
        }
        posix_spawn_file_actions_destroy(&fa);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        len = pread(fd, out, sizeof(out) - 1, 0);
        close(fd);
        if (len <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
            sscanf(out, "%ld %ld", ret_before, ret_after) != 2)
                return -ECHILD;
        return 0;
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

/* Per step: ms of CPU and samples/s, one column per window. */
static void print_split(int set, const Timing t[static WINDOWS]) {
        printf("\n%s: CPU ms per call (samples/s), median\n%-24s", set_name[set], "step");
        for (int w = 0; w < WINDOWS; w++)
                printf(" %11zu %-10s", window[w], "");
        printf("\n");
        for (unsigned j = 0; j < STEPS; j++) {
                printf("%-2s %-21s", j < 6 ? "o" : "b", step_name[j]);
                for (int w = 0; w < WINDOWS; w++)
                        printf(" %9.1fms (%8.3g)", 1e3 * t[w].step[j], (double)window[w] / t[w].step[j]);
                printf("\n");
        }
        printf("%-24s", "total (cpu)");
        for (int w = 0; w < WINDOWS; w++)
                printf(" %9.1fms (%8.3g)", 1e3 * t[w].cpu, (double)window[w] / t[w].cpu);
        printf("\n%-24s", "total (wall)");
        for (int w = 0; w < WINDOWS; w++)
                printf(" %9.1fms (%8.3g)", 1e3 * t[w].wall, (double)window[w] / t[w].wall);
        printf("\n%-24s", "min-entropy");
        for (int w = 0; w < WINDOWS; w++)
                printf(" %11.6f %-10s", t[w].h, "");
        printf("\n");
}

int main(int argc, char **argv) {
        int rounds = argc > 1 ? atoi(argv[1]) : 3;
        const char *tool = getenv("EA_NON_IID");
        double nist[SETS], nist_cpu[SETS];
        long rss_before[SETS], rss_after[SETS];
        Timing t[SETS][WINDOWS];
        uint8_t *buf;

        if (argc == 3 && strcmp(argv[1], "--rss") == 0)
                return rss_child(atoi(argv[2]));
        buf = malloc(EA_DATASET_SAMPLES);
        if (!buf || rounds < 1 || rounds > ROUNDS_MAX) {
                fprintf(stderr, "usage: bench-estimate [ROUNDS 1..100]\n");
                return 2;
        }
        for (int s = 0; s < SETS; s++) {
                int r = load(s, buf);

                for (int w = 0; r >= 0 && w < WINDOWS; w++)
                        r = time_window(buf, window[w], rounds, &t[s][w]);
                if (r >= 0)
                        r = rss_measure(s, &rss_before[s], &rss_after[s]);
                if (r < 0) {
                        fprintf(stderr, "bench-estimate: %s: %s\n", set_name[s], strerror(-r));
                        return 1;
                }
                nist[s] = tool ? time_nist(tool, buf, &nist_cpu[s]) : -ENOENT;
                print_split(s, t[s]);
        }

        printf("\n%-8s %10s %10s %10s %10s %10s %10s %10s %9s\n", "1M set", "min_ent", "ours_wall", "ours_cpu",
               "nist_wall", "nist_cpu", "wall_ratio", "cpu_ratio", "peak_MiB");
        for (int s = 0; s < SETS; s++) {
                const Timing *x = &t[s][WINDOWS - 1];
                double mib = (double)rss_after[s] / 1024.0;

                if (nist[s] > 0)
                        printf("%-8s %10.6f %9.2fs %9.2fs %9.2fs %9.2fs %9.2fx %9.2fx %9.1f\n", set_name[s], x->h, x->wall,
                               x->cpu, nist[s], nist_cpu[s], nist[s] / x->wall, nist_cpu[s] / x->cpu, mib);
                else
                        printf("%-8s %10.6f %9.2fs %9.2fs %10s %10s %10s %10s %9.1f\n", set_name[s], x->h, x->wall, x->cpu,
                               "-", "-", "-", "-", mib);
        }
        printf("peak_MiB: VmHWM of a fresh process after one call (%.1f MiB before it)\n",
               (double)rss_before[0] / 1024.0);
        if (tool && (nist[0] < 0 || nist[1] < 0))
                fprintf(stderr, "bench-estimate: EA_NON_IID=%s did not run\n", tool);
        printf("{\"rounds\": %d", rounds);
        for (int s = 0; s < SETS; s++) {
                for (int w = 0; w < WINDOWS; w++)
                        printf(", \"%s_%zu_cpu_s\": %.4f, \"%s_%zu_wall_s\": %.4f", set_name[s], window[w], t[s][w].cpu,
                               set_name[s], window[w], t[s][w].wall);
                printf(", \"%s_wall_s\": %.3f, \"%s_cpu_s\": %.3f, \"%s_peak_kib\": %ld", set_name[s],
                       t[s][WINDOWS - 1].wall, set_name[s], t[s][WINDOWS - 1].cpu, set_name[s], rss_after[s]);
                if (nist[s] > 0)
                        printf(", \"%s_nist_wall_s\": %.3f, \"%s_nist_cpu_s\": %.3f", set_name[s], nist[s], set_name[s],
                               nist_cpu[s]);
        }
        printf("}\n");
        free(buf);
        return 0;
}
