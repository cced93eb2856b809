/* capture-file.h - a capture written to a file that appears under its
 * name only once complete: the samples go to a temporary file beside it
 * (same directory, so the rename is atomic), which a failed capture, or
 * SIGINT, SIGTERM, SIGHUP or SIGPIPE, removes; an older file of that name
 * stays as it was until the rename. One capture file per process (the
 * signal handler knows it by a static name).
 * Flow: capture -> verb-raw, evidence-build -> [capture-file] -> the file system. */
#pragma once

#include <stdbool.h>

/* The temporary file beside path, mode 0644 less the umask as a plain
 * creat() would give, with the signal handlers in place: its fd, or
 * -errno (-ENAMETOOLONG). */
int capture_file_create(const char *path);

/* Ends the temporary file fd: when complete, synced, closed and renamed
 * to path (0); else, or when one of those fails (-errno), closed and
 * removed (-ECANCELED when not complete). */
int capture_file_end(int fd, const char *path, bool complete);
