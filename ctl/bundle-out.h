/* bundle-out.h - writing the parts of an evidence bundle (evidence/
 * bundle.h) as truerandomctl evidence makes them: each part a file of
 * bytes or of JSON, or a part that is absent, stated as {"absent": why};
 * every one listed, with what it holds or why it is absent, for the
 * README's list of contents. Failures are said once, with the bundle's
 * name, and come back as exit codes (client.h).
 * Flow: evidence-build, evidence-parts -> [bundle-out] -> evidence/bundle. */
#pragma once

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <json-c/json.h>

#include "evidence/bundle.h"

typedef struct CtlBundle {
        EvidenceWriter *writer;
        const char *output;      /* the bundle's name, for messages */
        FILE *contents;          /* the list of parts (open_memstream) */
        char *contents_text;
        size_t contents_size;
        size_t files;
} CtlBundle;

/* A bundle written to fd. An exit code. */
int ctl_bundle_init(CtlBundle *b, int fd, const char *output);
void ctl_bundle_done(CtlBundle *b);

/* A file of n bytes; what: one line for the list (NULL: not listed). */
int ctl_bundle_add(CtlBundle *b, const char *name, const void *data, size_t n, const char *what);
/* A JSON file (pretty, newline-ended); takes j in every case (NULL: out
 * of memory). */
int ctl_bundle_json(CtlBundle *b, const char *name, struct json_object *j, const char *what);
/* A part that is not there: the file {"absent": why}, listed as absent. */
int ctl_bundle_absent(CtlBundle *b, const char *name, const char *what, const char *why);

/* The list so far: a line per part, "name  what" or "name  absent: why". */
const char *ctl_bundle_contents(CtlBundle *b);

/* MANIFEST (signed with sk when not NULL) and the end of the tar. */
int ctl_bundle_finish(CtlBundle *b, const uint8_t *sk);
