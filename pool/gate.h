/* gate.h - the running gate: no sample of a credited source counts toward a
 * block until the window that holds it has been judged by the project's
 * SP 800-90B non-IID estimators (estimate/noniid.h: all ten, on the 8-bit
 * samples and on their bitstring, as `truerandomctl assess` runs them).
 *
 * The verdict on a window (gate_judge(): pure, the same code for the
 * daemon's collectors and for `truerandomctl assess --gate`): its
 * min-entropy estimate h in bits per sample, and the credit it grants
 *   credit = auto    min(cap, h / 2), in millibits, rounded down
 *   credit = C       C when h >= 2 C, else nothing
 * A window granted nothing is refused: none of its samples ever counts.
 * So "credit <= 1/2 of the estimate measured here" holds for the very
 * samples credited, whatever the load did to the source since the last
 * window. What no statistical test can see (a deterministic generator
 * passes them all) the gate cannot either: it bounds, the sampler's
 * design justifies (docs/ENTROPY.md).
 *
 * The judging runs on worker threads (Gate): a collector hands a full
 * window over (gate_submit()) and samples on into its other buffer; it
 * takes the verdict (gate_wait()) before a sample of the window reaches
 * the health tests' credited path and the conditioner, so no block holds
 * a sample before the verdict covering it. The window buffer is the
 * submitter's (secret memory: its samples are conditioned afterwards);
 * workers only read it while the job runs. Nothing here logs or touches a
 * key. Flow: source -> [gate] -> health -> conditioner -> store. */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

/* How many samples a window holds, unless a caller says otherwise: see
 * docs/ENTROPY.md for the choice (small windows give lower, more
 * conservative estimates and verdicts sooner; the estimators' per-sample
 * cost sets the floor). */
#define GATE_WINDOW_DEFAULT 65536U
/* The smallest window the estimators are run on (their statistics need a
 * few thousand samples to mean anything). */
#define GATE_WINDOW_MIN 4096U
/* The largest: about SP 800-90B's 1,000,000, and ~50 MiB of estimator heap
 * while it is judged (estimate/noniid.h), 2 MiB of locked windows per
 * source. */
#define GATE_WINDOW_MAX (1U << 20)

typedef struct GatePolicy {
        bool auto_credit;          /* credit = auto */
        uint32_t credit_mbits;     /* credit = C, millibits per sample (auto: unused) */
        uint32_t cap_mbits;        /* auto: the most it grants (1..8000) */
        /* Bits per sample the estimators judge, 1..8; 0 means 8. The daemon
         * leaves it 0 (a source's samples have 8 bits); `truerandomctl
         * assess --gate --file --bits B` replays a capture of B-bit samples. */
        unsigned bits;
} GatePolicy;

typedef struct GateVerdict {
        uint64_t start;            /* the window's first sample, counted from the source's first */
        uint32_t samples;
        double estimate;           /* min-entropy, bits per sample; NAN when it could not be computed */
        uint32_t credit_mbits;     /* granted per sample; 0: refused */
        int error;                 /* 0, or the estimators' -errno (-ENOMEM): refused */
} GateVerdict;

/* The most policy p may grant a window: auto's cap, or C. */
static inline uint32_t gate_policy_most(const GatePolicy *p) {
        return p->auto_credit ? p->cap_mbits : p->credit_mbits;
}

/* What policy p grants a window whose estimate is h (bits per sample):
 * millibits per sample, 0 for a refusal (NAN and h <= 0 included). */
uint32_t gate_credit(const GatePolicy *p, double h);

/* Judges samples[0..n) (p->bits-bit samples, GATE_WINDOW_MIN <= n <=
 * GATE_WINDOW_MAX): writes the estimate and the credit p grants into
 * *ret (start is left to the caller). 0, or -EINVAL on bad arguments
 * (p->bits above 8 included); an
 * estimator failure (-ENOMEM) is a refusal with ret->error set, not an
 * error of the call. cancel (may be NULL) is read between estimator
 * steps: once true, the judging stops with -ECANCELED. */
int gate_judge(const uint8_t *samples, size_t n, const GatePolicy *p, const atomic_bool *cancel, GateVerdict *ret);

/* ---- the worker threads --------------------------------------------- */

typedef enum GateJobState {
        GATE_JOB_IDLE,
        GATE_JOB_QUEUED,
        GATE_JOB_RUNNING,
        GATE_JOB_DONE,
} GateJobState;

/* A window to judge, embedded in its submitter. samples must stay valid
 * and unchanged until the job is done (gate_wait()) or cancelled. */
typedef struct GateJob {
        const uint8_t *samples;
        size_t n;
        GatePolicy policy;
        uint64_t start;
        GateVerdict verdict;       /* valid once done */
        /* The gate's own: */
        GateJobState state;
        atomic_bool cancel;
        int result;                /* gate_judge()'s: 0 or -ECANCELED */
        TAILQ_ENTRY(GateJob) link;
} GateJob;

typedef struct Gate Gate;

/* A gate of threads (1..64) workers, judging jobs in the order they came,
 * once started. -EINVAL, -ENOMEM. */
int gate_new(unsigned threads, Gate **ret);
/* Starts the workers not running yet (signals blocked in them). Separate
 * from gate_new() so that a daemon can make the gate before it gives up
 * root, which a process with other threads cannot do. 0, or
 * pthread_create()'s -errno (the workers made so far run). Jobs
 * submitted before it wait in the queue. */
int gate_start(Gate *g);
/* Cancels every job, joins the workers; takes NULL, returns NULL. Every
 * submitter must have waited for or cancelled its jobs first. */
Gate *gate_free(Gate *g);

/* Queues job (idle or done) with its samples, n, policy and start set.
 * -EINVAL for a job already queued or running, or a bad n. */
int gate_submit(Gate *g, GateJob *job);
/* Blocks until job is done; 0 with job->verdict valid, or -ECANCELED when
 * it was cancelled. An idle job returns -EINVAL at once. */
int gate_wait(Gate *g, GateJob *job);
/* Non-blocking: whether job is done (gate_wait() would not block). */
bool gate_done(Gate *g, GateJob *job);
/* Takes job back: a queued one leaves the queue, a running one is told to
 * stop at its next estimator step and waited for. Afterwards the job is
 * done (cancelled, result -ECANCELED) or done with its verdict, and its
 * samples are no longer read. */
void gate_cancel(Gate *g, GateJob *job);

/* Windows judged since gate_new(), and how many samples: for the
 * benchmark's throughput and status. */
void gate_get_counts(Gate *g, uint64_t *ret_windows, uint64_t *ret_samples);
