/* bundle.h - the auditor's evidence bundle: a tar of the files given, a
 * MANIFEST with the SHA-256 of each, and an optional Ed25519 signature.
 *
 * Layout (a POSIX tar, uncompressed: the raw captures are random bytes):
 *
 *   the files, in the order added, each mode 0644, owner root
 *   MANIFEST       one line per file, in that order, as sha256sum writes
 *                  them: "<64 hex>  <name>\n"; so `tar xf B.tar &&
 *                  sha256sum -c MANIFEST` checks a bundle with standard
 *                  tools
 *   MANIFEST.sig   (signed bundles) the 64 raw bytes of the Ed25519
 *                  signature over MANIFEST (keys.h: OpenSSL checks it too)
 *
 * The MANIFEST comes last because it is made while the files stream
 * through: nothing is held but one 64 KiB chunk, each file's running hash
 * and the list of names, so two 1 MB captures cost 64 KiB of buffer. A
 * bundle cut anywhere loses its MANIFEST or the entry it was cut in.
 *
 * Names: 1..100 bytes of [A-Za-z0-9._+-/], relative, no empty, "." or
 * ".." part, not MANIFEST or MANIFEST.sig, each once (the limits of a
 * plain ustar header, and what a shell and sha256sum -c read as is).
 *
 * Errors stick: after a failed call every later one returns the same
 * error, and what was written is not a bundle (no MANIFEST: it never
 * verifies; the caller removes it).
 * Flow: captures, reports, ledger -> [evidence] -> FILE.tar -> auditor. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keys.h"
#include "util/cleanup.h"
#include "util/time-util.h"

#define EVIDENCE_NAME_MAX 100U
#define EVIDENCE_MANIFEST "MANIFEST"
#define EVIDENCE_SIGNATURE "MANIFEST.sig"

typedef struct EvidenceWriter EvidenceWriter;

/* A bundle written to fd (not closed here). mtime: the entries' time
 * (0: now). 0, -ENOMEM or -EIO. */
int evidence_writer_new(int fd, usec_t mtime, EvidenceWriter **ret);
EvidenceWriter *evidence_writer_free(EvidenceWriter *w);
DEFINE_FREEP(EvidenceWriter, evidence_writer_free);

/* A file of size bytes, streamed: begin, write until size bytes are in,
 * end. -EINVAL: a bad or repeated name, a file begun while another is
 * open, more bytes than declared; end: -EIO if fewer. */
int evidence_file_begin(EvidenceWriter *w, const char *name, uint64_t size);
int evidence_file_write(EvidenceWriter *w, const void *data, size_t n);
int evidence_file_end(EvidenceWriter *w);

/* The same in one call: bytes in memory, or a regular file read from fd
 * to its end (-EIO if it changed size meanwhile). */
int evidence_add_buffer(EvidenceWriter *w, const char *name, const void *data, size_t n);
int evidence_add_fd(EvidenceWriter *w, const char *name, int fd);

/* Writes MANIFEST, and MANIFEST.sig when sk is not NULL, and ends the tar.
 * The writer takes no more files. */
int evidence_writer_finish(EvidenceWriter *w, const uint8_t *sk);

/* True for a name a bundle may hold (above). */
bool evidence_name_ok(const char *name);
