/* export.h - raw exports: `truerandomctl raw` streams a source's samples
 * from a thread of its own, one per export (control.h bounds how many).
 * The thread captures with pool/capture.h's capture_run(), as `raw
 * --direct` and the daemon's assessments do: its own instance of the
 * source (reopened before each row of a restart matrix), the collector's
 * chunk size, the same backoff and limits. Its sink sends each chunk as a
 * "data" packet and ends the capture (by its return value) when the
 * daemon stops or the client goes away.
 *
 * Invariants: an export thread owns only its connection fd and its own
 * source instance, and talks back through two eventfds (stop: readable
 * once exports_deinit() began; done: an export finished and can be
 * joined). It sends at most one final reply, then closes the connection.
 * Its samples come from an instance that feeds nothing: no secret, not
 * erased.
 * Flow: control -> [export] -> capture -> a source; samples -> socket. */
#pragma once

#include <stdint.h>
#include <sys/queue.h>

#include "pool/source.h"

typedef struct Export Export;

typedef struct Exports {
        LIST_HEAD(, Export) list;
        unsigned n;
        int stop_fd;       /* readable once exports_deinit() began */
        int done_fd;       /* readable when an export is done: exports_join() */
} Exports;

/* What an export streams. exports_start() copies the strings: a reload
 * may free the configuration's while the export runs. */
typedef struct ExportSpec {
        const char *source;          /* its name, for the messages */
        const SourceOps *ops;
        SourceParams params;         /* its strings borrowed until exports_start() returns */
        uint64_t samples;            /* per row */
        uint32_t rows;
} ExportSpec;

/* The two eventfds; -errno. */
int exports_init(Exports *x);
/* Stops every export (each within one source read or backoff wait, about
 * 1 s at most) and joins it; closes the eventfds. */
void exports_deinit(Exports *x);

/* Hands fd to a new thread streaming spec: 0 (the thread closes fd when
 * done), or -errno (fd is still the caller's). */
int exports_start(Exports *x, int fd, const ExportSpec *spec);
/* Joins the exports that are done; call it when done_fd is readable. */
void exports_join(Exports *x);
