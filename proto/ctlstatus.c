/* ctlstatus.c - reading the status object (see ctlstatus.h).
 *
 * json-c does the parsing; what is kept here is what json-c cannot know:
 * the document must be exactly one object with a version, nothing may
 * follow it, and every field read is checked for its type, because the
 * peer may be a newer (or hostile) daemon.
 * Flow: socket -> [ctlstatus] -> ctl/render. */
#include "ctlstatus.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct CtlStatus {
        struct json_object *root;
};

int ctl_status_parse(const char *text, size_t n, CtlStatus **ret) {
        struct json_tokener *tok;
        struct json_object *root;
        CtlStatus *s;
        double version;

        if (!text || n == 0 || n > INT_MAX)
                return -EBADMSG;
        tok = json_tokener_new_ex(CTL_STATUS_DEPTH_MAX);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        root = json_tokener_parse_ex(tok, text, (int) n);
        /* A complete object that stops short of n was followed by something
         * else (json-c stops after one value). */
        if (!root || json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != n ||
            !json_object_is_type(root, json_type_object) || !ctl_status_get_number(root, "version", &version) ||
            version < 1) {
                json_object_put(root);
                json_tokener_free(tok);
                return -EBADMSG;
        }
        json_tokener_free(tok);
        s = calloc(1, sizeof(*s));
        if (!s) {
                json_object_put(root);
                return -ENOMEM;
        }
        s->root = root;
        *ret = s;
        return 0;
}

CtlStatus *ctl_status_free(CtlStatus *s) {
        if (s) {
                json_object_put(s->root);
                free(s);
        }
        return NULL;
}

const CtlStatusObject *ctl_status_root(const CtlStatus *s) {
        return s ? s->root : NULL;
}

static struct json_object *get(const CtlStatusObject *o, const char *key, enum json_type type) {
        struct json_object *v = NULL;

        if (!o || !json_object_is_type(o, json_type_object) ||
            !json_object_object_get_ex((struct json_object *) o, key, &v) || !json_object_is_type(v, type))
                return NULL;
        return v;
}

const CtlStatusObject *ctl_status_get_object(const CtlStatusObject *o, const char *key) {
        return get(o, key, json_type_object);
}

bool ctl_status_get_number(const CtlStatusObject *o, const char *key, double *ret) {
        struct json_object *v = get(o, key, json_type_int);
        double d;

        if (!v)
                v = get(o, key, json_type_double);
        if (!v)
                return false;
        d = json_object_get_double(v);
        /* json-c reads 1e999 as infinity; JSON has no such number. */
        if (!isfinite(d))
                return false;
        *ret = d;
        return true;
}

bool ctl_status_get_bool(const CtlStatusObject *o, const char *key, bool *ret) {
        struct json_object *v = get(o, key, json_type_boolean);

        if (!v)
                return false;
        *ret = json_object_get_boolean(v);
        return true;
}

bool ctl_status_is_true(const CtlStatusObject *o, const char *key) {
        bool b = false;
        return ctl_status_get_bool(o, key, &b) && b;
}

const char *ctl_status_get_string(const CtlStatusObject *o, const char *key) {
        struct json_object *v = get(o, key, json_type_string);
        const char *s;

        if (!v)
                return NULL;
        s = json_object_get_string(v);
        /* "\u0000" would silently cut the string short. */
        if (strlen(s) != (size_t) json_object_get_string_len(v))
                return NULL;
        return s;
}

size_t ctl_status_get_count(const CtlStatusObject *o, const char *key) {
        struct json_object *v = get(o, key, json_type_array);
        return v ? json_object_array_length(v) : 0;
}

const CtlStatusObject *ctl_status_get_element(const CtlStatusObject *o, const char *key, size_t i) {
        struct json_object *v = get(o, key, json_type_array), *e;

        if (!v || i >= json_object_array_length(v))
                return NULL;
        e = json_object_array_get_idx(v, i);
        return json_object_is_type(e, json_type_object) ? e : NULL;
}

void ctl_status_count_sources(const CtlStatus *s, unsigned *ret_credited, unsigned *ret_healthy,
                              unsigned *ret_failed) {
        const CtlStatusObject *root = ctl_status_root(s);
        unsigned credited = 0, healthy = 0, failed = 0;

        for (size_t i = 0; i < ctl_status_get_count(root, "sources"); i++) {
                const CtlStatusObject *src = ctl_status_get_element(root, "sources", i);
                const char *state = ctl_status_get_string(src, "state");

                if (!ctl_status_is_true(src, "credited") || !state)
                        continue;
                credited++;
                if (strcmp(state, "healthy") == 0)
                        healthy++;
                /* failed-intermittent, failed-permanent, and refused by the
                 * running gate: an unavailable source (no RDSEED on this
                 * CPU) is how the machine is, not a fault. */
                if (strncmp(state, "failed", 6) == 0 || strcmp(state, "refused") == 0)
                        failed++;
        }
        *ret_credited = credited;
        *ret_healthy = healthy;
        *ret_failed = failed;
}

CtlHealth ctl_status_health(const CtlStatus *s) {
        const CtlStatusObject *root = ctl_status_root(s);
        unsigned credited, healthy, failed;
        double min_healthy = 1;
        bool serving;

        if (!ctl_status_is_true(root, "ready") || ctl_status_is_true(root, "stopping"))
                return CTL_HEALTH_NOT_SERVING;
        if (ctl_status_get_bool(root, "trng_serving", &serving) && !serving)
                return CTL_HEALTH_NOT_SERVING;
        ctl_status_count_sources(s, &credited, &healthy, &failed);
        (void) ctl_status_get_number(root, "min_healthy", &min_healthy);
        if (failed > 0 || healthy < min_healthy)
                return CTL_HEALTH_DEGRADED;
        return CTL_HEALTH_SERVING;
}
