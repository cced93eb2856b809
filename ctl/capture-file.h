/* capture-file.h - a capture written to a file that appears under its
 * name only once complete: the samples go to a temporary file beside it
 * (same directory, so the rename is atomic), which a failed capture, or
 * SIGINT, SIGTERM, SIGHUP or SIGPIPE, removes; an older file of that name
 * stays as it was until the rename. One capture file per process (the
 * signal handler knows it by a static name).
 * Flow: capture -> verb-raw -> [capture-file] -> the file system. */
#pragma once

/* The temporary file beside path, mode 0644 less the umask as a plain
 * creat() would give, with the signal handlers in place: its fd, or
 * -errno (-ENAMETOOLONG). */
int capture_file_create(const char *path);

/* Renames the temporary file (written, synced and closed) to path: 0 or
 * -errno (then it is still there: capture_file_discard()). */
int capture_file_publish(const char *path);

/* Removes the temporary file, if there is one. */
void capture_file_discard(void);
