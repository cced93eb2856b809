/* status-json.h - what the status's builders share (status.c, and
 * status-source.c for a source's parts): the checked adds and the
 * builders of a credited source's collector stats. Reads counters only.
 * Flow: collectors' stats -> [status-source] -> status -> control. */
#pragma once

#include <errno.h>
#include <json-c/json.h>

#include "pool/collector-board.h"
#include "util/json-util.h"

/* o whole, or NULL (and o freed) when one of its adds failed. */
static inline struct json_object *finish(struct json_object *o, int r) {
        if (r < 0) {
                json_object_put(o);
                return NULL;
        }
        return o;
}

static inline void append(struct json_object *a, struct json_object *e, int *r) {
        if (!e || json_object_array_add(a, e) < 0) {
                json_object_put(e);
                *r = -ENOMEM;
        }
}

/* Every add is checked; r keeps the last failure. */
#define ADD(o, key, v)                                  \
        do {                                            \
                int r_ = json_put((o), (key), (v));     \
                if (r_ < 0)                             \
                        r = r_;                         \
        } while (0)

/* A source's sampler self-test, induced failures (schema 10) and running
 * gate with its recent verdicts (schema 10); NULL on no memory (the
 * self-test: also for a source without one). */
struct json_object *status_selftest_json(const SelftestResult *st);
struct json_object *status_induce_json(const CollectorInduce *e);
struct json_object *status_gate_json(const CollectorStats *st);
