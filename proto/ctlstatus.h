/* ctlstatus.h - the status model: what `truerandomctl status` is told, as
 * one JSON object whose schema truerandomctl(1) documents ("version"
 * counts its changes: fields are added, never renamed, except that
 * version 4 put the running gate's "gate" object and credit in force in
 * place of the stored assessment's and the running check's fields;
 * version 5 added "egd" and "kernel_feed", version 6 "hwrng").
 *
 * The daemon builds the object (daemon/status.c) and truerandomctl reads it
 * here, both through json-c. This module owns the reading: a strict parse
 * of bytes a peer chose, typed look-ups that treat a missing or mistyped
 * field as absent, and the verdict monitoring acts on (ctl_status_health()).
 * Renderers (ctl/render.h) only ever read through these look-ups.
 * Flow: daemon -> status.c -> socket -> [ctlstatus] -> ctl/render -> stdout. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The schema this tree writes; readers accept any version >= 1. */
#define CTL_STATUS_VERSION 10
/* Nesting the reader accepts, as json-c counts it (a scalar inside the
 * innermost container is a level too): the schema needs 4. */
#define CTL_STATUS_DEPTH_MAX 32

/* What monitoring acts on; truerandomctl's status exit codes (the numbers
 * are documented in truerandomctl(1), and 3 is "daemon unreachable"). */
typedef enum CtlHealth {
        CTL_HEALTH_SERVING = 0,     /* /dev/truerandom serves, no source failed */
        CTL_HEALTH_DEGRADED = 1,    /* serving, but a credited source failed, or
                                     * fewer than min_healthy are healthy */
        CTL_HEALTH_NOT_SERVING = 2, /* starting, stopping, or /dev/truerandom closed */
} CtlHealth;

typedef struct CtlStatus CtlStatus;
typedef struct json_object CtlStatusObject;

/* Strict RFC 8259 (json-c's strict mode, UTF-8 checked), one object and
 * nothing after it but whitespace, with a number "version" >= 1.
 * -EBADMSG on anything else, -ENOMEM. */
int ctl_status_parse(const char *text, size_t n, CtlStatus **ret);
CtlStatus *ctl_status_free(CtlStatus *s);
const CtlStatusObject *ctl_status_root(const CtlStatus *s);

/* The verdict on a parsed status. A daemon of schema 1 (no "trng_serving")
 * is judged by "ready" alone. */
CtlHealth ctl_status_health(const CtlStatus *s);
/* Credited sources, and how many of them are healthy. */
void ctl_status_count_sources(const CtlStatus *s, unsigned *ret_credited, unsigned *ret_healthy,
                              unsigned *ret_failed);

/* Look-ups in any object of the status; NULL objects read as empty. A field
 * of the wrong type reads as absent (false / NULL). */
const CtlStatusObject *ctl_status_get_object(const CtlStatusObject *o, const char *key);
bool ctl_status_get_number(const CtlStatusObject *o, const char *key, double *ret);
bool ctl_status_get_bool(const CtlStatusObject *o, const char *key, bool *ret);
/* True only for a present true. */
bool ctl_status_is_true(const CtlStatusObject *o, const char *key);
/* NUL-terminated; a string with a NUL inside reads as absent. */
const char *ctl_status_get_string(const CtlStatusObject *o, const char *key);
/* An array member: its length (0 if absent), and its objects by index
 * (NULL for an element that is not an object). */
size_t ctl_status_get_count(const CtlStatusObject *o, const char *key);
const CtlStatusObject *ctl_status_get_element(const CtlStatusObject *o, const char *key, size_t i);
