/* assessment.h - what credit = auto measured, kept across restarts in
 * STATE_DIRECTORY/assessment.json:
 *   { "format": "truerandomd-assessment", "version": 1,
 *     "sources": { "jitter": { "date": "2026-12-03T13:13:31Z",
 *                              "seconds": 5.2,
 *                              "identity": { ... identity.h ... },
 *                              "report": { ... eajson.h ... } }, ... } }
 * One entry per source; saving one keeps the others.
 *
 * The file is written atomically (a temporary file in the same directory,
 * fsync, renameat, fsync of the directory) through a directory fd the
 * daemon opens at start-up, so nothing here needs a path after privileges
 * are dropped. It is read with json-c, strictly: anything but a file of
 * this format and version with every field present, typed and in range is
 * refused (-EBADMSG, with the reason), never half-trusted. It holds
 * estimates, not secrets: mode 0644, for auditors.
 * Flow: assessor -> [assessment] -> credit (daemon). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "estimate/noniid.h"
#include "identity.h"
#include "util/time-util.h"

#define ASSESSMENT_FILE "assessment.json"
#define ASSESSMENT_FORMAT "truerandomd-assessment"
#define ASSESSMENT_VERSION 1
/* A few sources of a few kilobytes each; more is not a file of ours. */
#define ASSESSMENT_FILE_MAX (256U * 1024U)

typedef struct Assessment {
        Identity identity;    /* the machine and sampler it holds for */
        EaReport report;      /* 8-bit samples; values as stored (eajson.h) */
        int64_t date;         /* when it finished, seconds since the epoch (a calendar date) */
        usec_t duration_usec; /* capture and estimators, CLOCK_MONOTONIC; "seconds" in the file */
} Assessment;

/* The stored assessment of `source` from dirfd/ASSESSMENT_FILE. 0;
 * -ENOENT when there is no file or no entry for the source; -EBADMSG when
 * the file is not ours or is damaged (why says how); another -errno when it
 * cannot be read. why (may be NULL) is set on every failure. */
int assessment_load(int dirfd, const char *source, Assessment *ret, char *why, size_t why_size);

/* Stores a, replacing the entry of its source (a->identity.source) and
 * keeping the others of a readable file (a damaged one is replaced). 0 or
 * -errno; on failure the old file is as it was and no temporary is left. */
int assessment_save(int dirfd, const Assessment *a);

/* "2026-12-03T13:13:31Z". */
void assessment_format_date(int64_t date, char buf[static 32]);
