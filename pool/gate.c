/* gate.c - see gate.h: the verdict on a window, and the worker threads
 * that reach it away from the sampling threads and the loop.
 *
 * Threads: workers take jobs off one FIFO queue under the gate's mutex,
 * judge them without it, and broadcast each completion; a submitter waits
 * on that broadcast. A job's samples are read only while it is RUNNING. */
#include "gate.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "estimate/noniid.h"
#include "health.h"
#include "util/cleanup.h"

struct Gate {
        pthread_mutex_t lock;
        pthread_cond_t work;       /* a job was queued, or stopping */
        pthread_cond_t done;       /* a job finished */
        TAILQ_HEAD(, GateJob) queue;
        TAILQ_HEAD(, GateJob) running;
        bool stopping;
        uint64_t windows, samples;
        unsigned n_threads, max_threads;  /* running, and asked for */
        pthread_t threads[];
};

static void gate_lock(Gate *g) {
        if (pthread_mutex_lock(&g->lock) != 0)
                abort();
}

static void gate_unlock(Gate *g) {
        if (pthread_mutex_unlock(&g->lock) != 0)
                abort();
}

/* ---- the verdict ------------------------------------------------------- */

uint32_t gate_credit(const GatePolicy *p, double h) {
        double half_mbits;

        if (!p || !(h > 0.0))
                return 0;
        /* Millibits, rounded down: never more than half of what was measured. */
        half_mbits = floor(h * 1000.0 / 2.0);
        if (half_mbits > CREDIT_MBITS_MAX)
                half_mbits = CREDIT_MBITS_MAX;
        if (p->auto_credit)
                return (uint32_t) half_mbits < p->cap_mbits ? (uint32_t) half_mbits : p->cap_mbits;
        /* credit = C is granted only with the margin: h >= 2 C. */
        return p->credit_mbits > 0 && (double) p->credit_mbits <= half_mbits ? p->credit_mbits : 0;
}

static int judge_progress(void *userdata, unsigned done, unsigned total) {
        const atomic_bool *cancel = userdata;

        return cancel && atomic_load(cancel) ? -ECANCELED : 0;
}

int gate_judge(const uint8_t *samples, size_t n, const GatePolicy *p, const atomic_bool *cancel, GateVerdict *ret) {
        EaReport report;
        int r;

        if (!samples || !p || !ret || n < GATE_WINDOW_MIN || n > GATE_WINDOW_MAX)
                return -EINVAL;
        if (gate_policy_most(p) == 0 || gate_policy_most(p) > CREDIT_MBITS_MAX)
                return -EINVAL;
        if (p->bits > 8)
                return -EINVAL;
        ret->samples = (uint32_t) n;
        ret->estimate = NAN;
        ret->credit_mbits = 0;
        ret->error = 0;
        r = ea_non_iid_progress(samples, n, p->bits ? p->bits : 8, judge_progress, (void *) cancel, &report);
        if (r == -ECANCELED)
                return r;
        if (r < 0) {
                /* The estimators could not judge it: nothing is granted. */
                ret->error = r;
                return 0;
        }
        ret->estimate = report.min_entropy;
        ret->credit_mbits = gate_credit(p, report.min_entropy);
        return 0;
}

/* ---- workers ----------------------------------------------------------- */

static void *gate_worker(void *userdata) {
        Gate *g = userdata;

        gate_lock(g);
        for (;;) {
                GateJob *job;
                int r;

                while (!g->stopping && TAILQ_EMPTY(&g->queue))
                        if (pthread_cond_wait(&g->work, &g->lock) != 0)
                                abort();
                if (g->stopping)
                        break;
                job = TAILQ_FIRST(&g->queue);
                TAILQ_REMOVE(&g->queue, job, link);
                TAILQ_INSERT_TAIL(&g->running, job, link);
                job->state = GATE_JOB_RUNNING;
                gate_unlock(g);

                r = gate_judge(job->samples, job->n, &job->policy, &job->cancel, &job->verdict);
                job->verdict.start = job->start;

                gate_lock(g);
                TAILQ_REMOVE(&g->running, job, link);
                job->result = r;
                job->state = GATE_JOB_DONE;
                if (r == 0) {
                        g->windows++;
                        g->samples += job->n;
                }
                if (pthread_cond_broadcast(&g->done) != 0)
                        abort();
        }
        gate_unlock(g);
        return NULL;
}

int gate_new(unsigned threads, Gate **ret) {
        _cleanup_free_ Gate *g = NULL;

        if (threads == 0 || threads > 64 || !ret)
                return -EINVAL;
        g = calloc(1, sizeof(*g) + threads * sizeof(pthread_t));
        if (!g)
                return -ENOMEM;
        TAILQ_INIT(&g->queue);
        TAILQ_INIT(&g->running);
        g->max_threads = threads;
        if (pthread_mutex_init(&g->lock, NULL) != 0 || pthread_cond_init(&g->work, NULL) != 0 ||
            pthread_cond_init(&g->done, NULL) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(g);
        return 0;
}

int gate_start(Gate *g) {
        sigset_t all, old;
        int r = 0;

        if (!g)
                return -EINVAL;
        /* Signals belong to the loop thread (signalfd); a worker must
         * never be picked to run a handler. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        for (; g->n_threads < g->max_threads; g->n_threads++) {
                r = -pthread_create(&g->threads[g->n_threads], NULL, gate_worker, g);
                if (r < 0)
                        break;
                (void) pthread_setname_np(g->threads[g->n_threads], "tr-gate");
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return r;
}

Gate *gate_free(Gate *g) {
        GateJob *job;

        if (!g)
                return NULL;
        gate_lock(g);
        g->stopping = true;
        while ((job = TAILQ_FIRST(&g->queue))) {
                TAILQ_REMOVE(&g->queue, job, link);
                job->result = -ECANCELED;
                job->state = GATE_JOB_DONE;
        }
        /* Running ones stop at their next estimator step. */
        TAILQ_FOREACH(job, &g->running, link)
                atomic_store(&job->cancel, true);
        if (pthread_cond_broadcast(&g->work) != 0 || pthread_cond_broadcast(&g->done) != 0)
                abort();
        gate_unlock(g);
        for (unsigned i = 0; i < g->n_threads; i++)
                pthread_join(g->threads[i], NULL);
        pthread_cond_destroy(&g->work);
        pthread_cond_destroy(&g->done);
        pthread_mutex_destroy(&g->lock);
        free(g);
        return NULL;
}

/* ---- jobs -------------------------------------------------------------- */

int gate_submit(Gate *g, GateJob *job) {
        if (!g || !job || !job->samples || job->n < GATE_WINDOW_MIN || job->n > GATE_WINDOW_MAX)
                return -EINVAL;
        gate_lock(g);
        if (job->state == GATE_JOB_QUEUED || job->state == GATE_JOB_RUNNING || g->stopping) {
                gate_unlock(g);
                return g->stopping ? -ESHUTDOWN : -EINVAL;
        }
        atomic_store(&job->cancel, false);
        job->result = 0;
        job->state = GATE_JOB_QUEUED;
        TAILQ_INSERT_TAIL(&g->queue, job, link);
        if (pthread_cond_signal(&g->work) != 0)
                abort();
        gate_unlock(g);
        return 0;
}

int gate_wait(Gate *g, GateJob *job) {
        int r;

        gate_lock(g);
        if (job->state == GATE_JOB_IDLE) {
                gate_unlock(g);
                return -EINVAL;
        }
        while (job->state != GATE_JOB_DONE)
                if (pthread_cond_wait(&g->done, &g->lock) != 0)
                        abort();
        r = job->result;
        gate_unlock(g);
        return r;
}

bool gate_done(Gate *g, GateJob *job) {
        bool done;

        gate_lock(g);
        done = job->state == GATE_JOB_DONE;
        gate_unlock(g);
        return done;
}

void gate_cancel(Gate *g, GateJob *job) {
        gate_lock(g);
        if (job->state == GATE_JOB_QUEUED) {
                TAILQ_REMOVE(&g->queue, job, link);
                job->result = -ECANCELED;
                job->state = GATE_JOB_DONE;
                /* Someone may be waiting for it. */
                if (pthread_cond_broadcast(&g->done) != 0)
                        abort();
        } else if (job->state == GATE_JOB_RUNNING) {
                atomic_store(&job->cancel, true);
                while (job->state != GATE_JOB_DONE)
                        if (pthread_cond_wait(&g->done, &g->lock) != 0)
                                abort();
        }
        gate_unlock(g);
}

void gate_get_counts(Gate *g, uint64_t *ret_windows, uint64_t *ret_samples) {
        gate_lock(g);
        *ret_windows = g->windows;
        *ret_samples = g->samples;
        gate_unlock(g);
}
