/* progress.c - progress on a terminal (see progress.h).
 * Flow: capture, verb-assess -> [progress] -> stderr. */
#include "progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void ctl_progress_init(CtlProgress *p, const char *label) {
        *p = (CtlProgress){ .on = isatty(STDERR_FILENO) == 1 };
        snprintf(p->label, sizeof(p->label), "%s", label);
        p->started = now_usec(CLOCK_MONOTONIC);
}

void ctl_progress_restart(CtlProgress *p) {
        p->started = now_usec(CLOCK_MONOTONIC);
        p->shown = 0;
}

/* 12.3 MB/s style; bytes, as a sample is one. */
static void fmt_rate(double per_s, char buf[static 16]) {
        static const char units[] = " kMGT";
        int u = 0;

        while (per_s >= 1000 && u < (int) sizeof(units) - 2) {
                per_s /= 1000;
                u++;
        }
        snprintf(buf, 16, u ? "%.1f %cB/s" : "%.0f B/s", per_s, units[u]);
}

static void fmt_left(double s, char buf[static 32]) {
        uint64_t t = (uint64_t) (s + 0.5);

        if (!(s >= 0) || s > 359999)
                snprintf(buf, 32, "--:--");
        else if (t >= 3600)
                snprintf(buf, 32, "%" PRIu64 ":%02" PRIu64 ":%02" PRIu64, t / 3600, t / 60 % 60, t % 60);
        else
                snprintf(buf, 32, "%" PRIu64 ":%02" PRIu64, t / 60, t % 60);
}

static void bar(char out[static CTL_PROGRESS_WIDTH + 1], uint64_t done, uint64_t total) {
        unsigned filled = total ? (unsigned) (done * CTL_PROGRESS_WIDTH / total) : CTL_PROGRESS_WIDTH;

        memset(out, '#', filled);
        memset(out + filled, '.', CTL_PROGRESS_WIDTH - filled);
        out[CTL_PROGRESS_WIDTH] = '\0';
}

/* Whether to draw now: the last one always, others every
 * CTL_PROGRESS_EVERY_USEC. */
static bool due(CtlProgress *p, bool last, usec_t *ret_now) {
        usec_t t = now_usec(CLOCK_MONOTONIC);

        if (!p->on || (!last && t - p->shown < CTL_PROGRESS_EVERY_USEC))
                return false;
        p->shown = t;
        *ret_now = t;
        return true;
}

/* [####.....]  45% 450000/1000000  1.2 MB/s  0:05 left */
void ctl_progress_samples(CtlProgress *p, uint64_t done, uint64_t total, bool last) {
        char b[CTL_PROGRESS_WIDTH + 1], rate[16], left[32];
        double per_s;
        usec_t t;

        if (!due(p, last, &t))
                return;
        per_s = t > p->started ? (double) done / usec_to_seconds(t - p->started) : 0;
        fmt_rate(per_s, rate);
        fmt_left(per_s > 0 ? (double) (total - done) / per_s : -1, left);
        bar(b, done, total);
        /* Trailing blanks: a shorter line must cover a longer one. */
        fprintf(stderr, "\r%-8.8s [%s] %3u%% %" PRIu64 "/%" PRIu64 " %s %s%s", p->label, b,
                total ? (unsigned) (done * 100 / total) : 100, done, total, rate, last ? "done" : left,
                last ? "     \n" : " left  ");
        p->drawn = !last;
}

void ctl_progress_steps(CtlProgress *p, const char *what, unsigned done, unsigned total, bool last) {
        char b[CTL_PROGRESS_WIDTH + 1];
        usec_t t;

        if (!due(p, last, &t))
                return;
        bar(b, done, total);
        fprintf(stderr, "\r%-8.8s [%s] %s %u of %u, %.1f s%s", p->label, b, what, done, total,
                usec_to_seconds(t - p->started), last ? "     \n" : "     ");
        p->drawn = !last;
}

void ctl_progress_break(CtlProgress *p) {
        if (p->drawn)
                fputc('\n', stderr);
        p->drawn = false;
}
