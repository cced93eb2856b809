/* assessor.c - an assessment on a worker thread (see assessor.h).
 *
 * Threads: the worker owns the sample buffer and the source instance; the
 * mutex guards the progress, the result and the stop flag, which the loop
 * reads and sets. Samples are no secret: this instance feeds nothing.
 * Flow: source -> [assessor] -> assessment.json, credit (daemon). */
#include "assessor.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "eajson.h"
#include "estimate/noniid.h"
#include "pool/capture.h"
#include "util/cleanup.h"

struct Assessor {
        AssessorParams p;
        char *path;                 /* p.params.path's copy */
        int dirfd;
        uint8_t *buf;
        pthread_t thread;
        usec_t started, last_wake;  /* CLOCK_MONOTONIC */

        pthread_mutex_t lock;       /* guards everything below */
        bool stop;
        AssessorProgress progress;
        bool done;
        int error;
        int save_error;
        Assessment result;
};

static usec_t now(void) {
        return now_usec(CLOCK_MONOTONIC);
}

static usec_t elapsed(const Assessor *a) {
        return now() - a->started;
}

static void lock(Assessor *a) {
        if (pthread_mutex_lock(&a->lock) != 0)
                abort();
}

static void unlock(Assessor *a) {
        if (pthread_mutex_unlock(&a->lock) != 0)
                abort();
}

/* The loop hears of a phase change at once, of progress every
 * ASSESSOR_WAKE_USEC. */
static void wake(Assessor *a, bool at_once) {
        usec_t t = now();

        if (!at_once && t - a->last_wake < ASSESSOR_WAKE_USEC)
                return;
        a->last_wake = t;
        if (a->p.wake)
                a->p.wake(a->p.userdata);
}

static bool stopped(Assessor *a) {
        bool s;

        lock(a);
        s = a->stop;
        unlock(a);
        return s;
}

static int on_estimator_step(void *userdata, unsigned done, unsigned total) {
        Assessor *a = userdata;

        lock(a);
        a->progress.steps_done = done;
        a->progress.steps_total = total;
        a->progress.elapsed_usec = elapsed(a);
        unlock(a);
        wake(a, false);
        return stopped(a) ? -ECANCELED : 0;
}

static int refuse_if_stopped(void *userdata, unsigned done, unsigned total) {
        return stopped(userdata) ? -ECANCELED : 0;
}

/* The first samples are in: time the capture so far and the estimators on
 * those samples, and so the whole run. */
static int calibrate(Assessor *a, uint64_t done) {
        usec_t t0 = now(), captured = MAX(t0 - a->started, (usec_t) 1), estimators;
        double rate = (double) done * (double) USEC_PER_SEC / (double) captured;   /* samples/s */
        EaReport r;
        int k;

        k = ea_non_iid_progress(a->buf, ASSESSOR_CALIBRATE, 8, refuse_if_stopped, a, &r);
        if (k < 0)
                return k;
        estimators = (usec_t) ((double) (now() - t0) * (double) a->p.samples / ASSESSOR_CALIBRATE *
                               ASSESSOR_SCALE_PERMILLE / 1000.0);
        lock(a);
        a->progress.capture_rate = rate;
        a->progress.expected_usec = (t0 - a->started) +
                                    (usec_t) ((double) (a->p.samples - done) * (double) USEC_PER_SEC / rate) +
                                    estimators;
        unlock(a);
        wake(a, true);
        return 0;
}

static int on_capture(void *userdata, const uint8_t *samples, size_t n, uint64_t done, uint64_t total) {
        Assessor *a = userdata;
        bool calibrated;

        (void) capture_to_buffer(a->buf, samples, n, done, total);
        lock(a);
        a->progress.captured = done;
        a->progress.elapsed_usec = elapsed(a);
        calibrated = a->progress.expected_usec > 0;
        unlock(a);
        if (stopped(a))
                return -ECANCELED;
        if (!calibrated && done >= ASSESSOR_CALIBRATE && total >= 2 * ASSESSOR_CALIBRATE)
                return calibrate(a, done);
        wake(a, false);
        return 0;
}

static void set_phase(Assessor *a, AssessorPhase phase) {
        lock(a);
        a->progress.phase = phase;
        a->progress.elapsed_usec = elapsed(a);
        unlock(a);
        wake(a, true);
}

static int run(Assessor *a, Assessment *ret, int *ret_save_error) {
        Assessment res = { .identity = a->p.identity };
        int r;

        r = capture_run(a->p.ops, &a->p.params, a->p.samples, 1, on_capture, a);
        if (r < 0)
                return r;
        set_phase(a, ASSESSOR_ESTIMATING);
        r = ea_non_iid_progress(a->buf, a->p.samples, 8, on_estimator_step, a, &res.report);
        if (r < 0)
                return r;
        /* As it will read back from the file, so a stored assessment and a
         * fresh one give the very same credit. */
        ea_report_round(&res.report);
        res.date = (int64_t) time(NULL);
        res.duration_usec = elapsed(a);
        *ret_save_error = 0;
        /* Stopped after the last step: its sampler is no longer the one
         * configured, so it must not replace what is stored. */
        if (stopped(a))
                return -ECANCELED;
        if (a->dirfd >= 0) {
                set_phase(a, ASSESSOR_SAVING);
                *ret_save_error = assessment_save(a->dirfd, &res);
        }
        *ret = res;
        return 0;
}

static void *thread_main(void *userdata) {
        Assessor *a = userdata;
        Assessment res;
        int save_error = 0, r;

        r = run(a, &res, &save_error);
        free(a->buf);
        a->buf = NULL;
        lock(a);
        a->error = r;
        a->save_error = save_error;
        if (r == 0)
                a->result = res;
        a->done = true;
        a->progress.phase = ASSESSOR_DONE;
        a->progress.elapsed_usec = elapsed(a);
        unlock(a);
        wake(a, true);
        return NULL;
}

/* An Assessor with its lock made and nothing else; NULL without memory. */
static Assessor *alloc(void) {
        _cleanup_free_ Assessor *a = calloc(1, sizeof(*a));

        if (!a || pthread_mutex_init(&a->lock, NULL) != 0)
                return NULL;
        a->dirfd = -1;
        return TAKE_PTR(a);
}

/* What an Assessor holds besides its thread; takes NULL; returns NULL. */
static Assessor *release(Assessor *a) {
        if (!a)
                return NULL;
        if (a->dirfd >= 0)
                close(a->dirfd);
        free(a->buf);
        free(a->path);
        pthread_mutex_destroy(&a->lock);
        free(a);
        return NULL;
}

DEFINE_FREEP(Assessor, release);

/* The thread, with every signal blocked: they are the loop's (signalfd). */
static int spawn(Assessor *a) {
        sigset_t all, old;
        int r;

        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        r = pthread_create(&a->thread, NULL, thread_main, a);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return -r;
}

int assessor_start(const AssessorParams *p, Assessor **ret) {
        _cleanup_(releasep) Assessor *a = NULL;
        int r;

        if (!p || !p->ops || p->samples < EA_SAMPLES_MIN || p->samples > EA_SAMPLES_MAX)
                return -EINVAL;
        a = alloc();
        if (!a)
                return -ENOMEM;
        a->p = *p;
        a->buf = malloc(p->samples);
        if (!a->buf)
                return -ENOMEM;
        if (p->params.path) {
                a->path = strdup(p->params.path);
                if (!a->path)
                        return -ENOMEM;
        }
        a->p.params.path = a->path;
        if (p->state_dirfd >= 0) {
                a->dirfd = fcntl(p->state_dirfd, F_DUPFD_CLOEXEC, 3);
                if (a->dirfd < 0)
                        return -errno;
        }
        a->progress.samples = p->samples;
        a->started = now();
        r = spawn(a);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(a);
        return 0;
}

void assessor_get_progress(Assessor *a, AssessorProgress *ret) {
        lock(a);
        *ret = a->progress;
        if (!a->done)
                ret->elapsed_usec = elapsed(a);
        unlock(a);
}

bool assessor_is_done(Assessor *a) {
        bool d;

        lock(a);
        d = a->done;
        unlock(a);
        return d;
}

int assessor_result(Assessor *a, Assessment *ret, int *ret_save_error) {
        int r;

        lock(a);
        if (!a->done)
                r = -EBUSY;
        else if ((r = a->error) == 0) {
                *ret = a->result;
                *ret_save_error = a->save_error;
        }
        unlock(a);
        return r;
}

void assessor_stop(Assessor *a) {
        lock(a);
        a->stop = true;
        unlock(a);
}

Assessor *assessor_free(Assessor *a) {
        if (!a)
                return NULL;
        assessor_stop(a);
        pthread_join(a->thread, NULL);
        return release(a);
}

const char *assessor_phase_to_string(AssessorPhase p) {
        static const char *const names[_ASSESSOR_PHASE_MAX] = {
                [ASSESSOR_CAPTURING] = "capturing",
                [ASSESSOR_ESTIMATING] = "estimating",
                [ASSESSOR_SAVING] = "saving",
                [ASSESSOR_DONE] = "done",
        };
        return (unsigned) p < _ASSESSOR_PHASE_MAX ? names[p] : "?";
}
