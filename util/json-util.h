/* json-util.h - building JSON objects with json-c without leaking on the
 * error paths: every helper takes ownership of the value it is given, in
 * every case, so a caller chains puts and checks once. No I/O. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "cleanup.h"

/* _cleanup_(json_object_putp): drops a reference on every path out. */
DEFINE_FREEP(struct json_object, json_object_put);

/* o[key] = v. v is taken in every case (put on failure). A NULL v is an
 * allocation that failed: -ENOMEM, unless null_ok (then JSON null).
 * -ENOMEM when o is NULL or the add fails. */
int json_put_value(struct json_object *o, const char *key, struct json_object *v, bool null_ok);

/* The common case: a value that must be there. */
static inline int json_put(struct json_object *o, const char *key, struct json_object *v) {
        return json_put_value(o, key, v, false);
}

/* A value that may be JSON null ("not measured yet", "no error"). */
static inline int json_put_nullable(struct json_object *o, const char *key, struct json_object *v) {
        return json_put_value(o, key, v, true);
}

/* A double written with a fixed number of decimals ("0.250", not
 * "0.25000000000000001"); NULL when out of memory. */
struct json_object *json_new_fixed(double v, int decimals);
