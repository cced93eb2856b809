/* assessor.h - one SP 800-90B assessment of a noise source, on a worker
 * thread of its own: capture (pool/capture.h) from a fresh instance of the
 * source, run the estimators (estimate/noniid.h), store the result
 * (assessment.h). The loop thread starts it, reads its progress when woken
 * and takes the result when it is done; the thread touches no secret and
 * nothing of the loop's but the wake callback.
 *
 * How long it will take is measured, not guessed: once the first
 * ASSESSOR_CALIBRATE samples are in, the capture rate is known and the
 * estimators are timed on those samples; the expected total follows
 * (estimator time grows slower than the sample count: 7.5 µs a sample at
 * 20,000 samples, 3.8 µs at 1,000,000, measured on the project's 2-vCPU
 * EPYC, so the extrapolation is scaled by ASSESSOR_SCALE_PERMILLE; in a
 * TCG guest the ratio is nearer 0.4, and the figure errs long, which is
 * the safe side for a start timeout).
 * Stopping it (assessor_free) takes effect between two reads or two
 * estimator steps.
 * Flow: source -> [assessor] -> assessment.json, credit (daemon). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "assessment.h"
#include "pool/source.h"
#include "util/time-util.h"

#define ASSESSOR_CALIBRATE 20000U
#define ASSESSOR_SCALE_PERMILLE 500U
/* The loop hears of progress at most this often (and of every phase). */
#define ASSESSOR_WAKE_USEC (500U * USEC_PER_MSEC)

typedef enum AssessorPhase {
        ASSESSOR_CAPTURING,
        ASSESSOR_ESTIMATING,
        ASSESSOR_SAVING,
        ASSESSOR_DONE,
        _ASSESSOR_PHASE_MAX,
} AssessorPhase;

typedef struct AssessorProgress {
        AssessorPhase phase;
        uint64_t captured, samples;
        unsigned steps_done, steps_total;   /* estimator steps */
        usec_t elapsed_usec;
        usec_t expected_usec;               /* the whole run; 0 until measured */
        double capture_rate;                /* samples/s; 0 until measured */
} AssessorProgress;

typedef struct AssessorParams {
        const SourceOps *ops;
        SourceParams params;      /* copied (path too) */
        size_t samples;
        Identity identity;        /* stored with the result */
        int state_dirfd;          /* -1: do not store; else duplicated */
        void (*wake)(void *userdata); /* called from the thread */
        void *userdata;
} AssessorParams;

typedef struct Assessor Assessor;

int assessor_start(const AssessorParams *p, Assessor **ret);
void assessor_get_progress(Assessor *a, AssessorProgress *ret);
bool assessor_is_done(Assessor *a);
/* Once done: 0 with *ret the assessment (its values as stored) and
 * *ret_save_error 0 or why it could not be stored; or the -errno that
 * ended it (capture_run()'s, -ENOMEM). */
int assessor_result(Assessor *a, Assessment *ret, int *ret_save_error);
/* Asks it to stop, without waiting: it ends (unstored) at its next read
 * or estimator step, and is done then. */
void assessor_stop(Assessor *a);
/* Stops it if it runs, joins the thread, frees; takes NULL, returns NULL. */
Assessor *assessor_free(Assessor *a);

/* "capturing", "estimating", "saving", "done". */
const char *assessor_phase_to_string(AssessorPhase p);
