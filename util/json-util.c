/* json-util.c - see json-util.h. */
#include "json-util.h"

#include <errno.h>
#include <stdio.h>

int json_put_value(struct json_object *o, const char *key, struct json_object *v, bool null_ok) {
        if (!o || (!v && !null_ok) || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

struct json_object *json_new_fixed(double v, int decimals) {
        char buf[64];

        snprintf(buf, sizeof(buf), "%.*f", decimals, v);
        return json_object_new_double_s(v, buf);
}
