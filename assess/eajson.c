/* eajson.c - SP 800-90B reports as JSON (see eajson.h).
 * Flow: estimate/ -> [eajson] -> truerandomctl, assessment, status. */
#include "eajson.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/cleanup.h"
#include "util/json-util.h"

double ea_json_round(double v) {
        char buf[64];

        if (isnan(v))
                return v;
        snprintf(buf, sizeof(buf), "%.*f", EA_JSON_DECIMALS, v);
        return strtod(buf, NULL);
}

void ea_report_round(EaReport *r) {
        for (unsigned e = 0; e < _EA_MAX; e++) {
                r->original[e] = ea_json_round(r->original[e]);
                r->bitstring[e] = ea_json_round(r->bitstring[e]);
        }
        r->h_original = ea_json_round(r->h_original);
        r->h_bitstring = ea_json_round(r->h_bitstring);
        r->min_entropy = ea_json_round(r->min_entropy);
}

struct json_object *ea_json_value(double v) {
        char buf[64];

        if (isnan(v))
                return NULL;
        snprintf(buf, sizeof(buf), "%.*f", EA_JSON_DECIMALS, v);
        return json_object_new_double_s(ea_json_round(v), buf);
}

static int add_value(struct json_object *o, const char *key, double v) {
        return json_put_value(o, key, ea_json_value(v), isnan(v));
}

struct json_object *ea_report_to_json(const EaReport *r) {
        _cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
        int k = 0;

        if (!o)
                return NULL;
        k |= json_put(o, "samples", json_object_new_uint64(r->samples));
        k |= json_put(o, "bits", json_object_new_uint64(r->bits));
        k |= add_value(o, "h_original", r->h_original);
        k |= add_value(o, "h_bitstring", r->h_bitstring);
        k |= add_value(o, "min_entropy", r->min_entropy);
        for (unsigned e = 0; e < _EA_MAX; e++) {
                struct json_object *x = json_object_new_object();

                if (!x) {
                        k = -ENOMEM;
                        break;
                }
                k |= add_value(x, "original", r->original[e]);
                k |= add_value(x, "bitstring", r->bitstring[e]);
                k |= json_put(o, ea_estimator_name(e), x);
        }
        return k ? NULL : TAKE_PTR(o);
}

static bool get_count(const struct json_object *o, const char *key, uint64_t max, uint64_t *ret) {
        struct json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int64(v) < 0 || json_object_get_uint64(v) > max)
                return false;
        *ret = json_object_get_uint64(v);
        return true;
}

/* An entropy in [0, max], or null (NAN) where null_ok. */
static bool get_entropy(const struct json_object *o, const char *key, double max, bool null_ok, double *ret) {
        struct json_object *v;
        double d;

        if (!json_object_object_get_ex(o, key, &v))
                return false;
        if (!v) {
                *ret = NAN;
                return null_ok;
        }
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
                return false;
        d = json_object_get_double(v);
        if (!(d >= 0.0 && d <= max))
                return false;
        *ret = d;
        return true;
}

int ea_report_from_json(const struct json_object *o, EaReport *ret) {
        EaReport r = { 0 };
        uint64_t samples, bits;

        if (!json_object_is_type(o, json_type_object) || !get_count(o, "samples", EA_SAMPLES_MAX, &samples) ||
            !get_count(o, "bits", 8, &bits) || bits < 1 || samples < EA_SAMPLES_MIN)
                return -EBADMSG;
        r.samples = (size_t) samples;
        r.bits = (unsigned) bits;
        if (!get_entropy(o, "h_original", bits, false, &r.h_original) ||
            !get_entropy(o, "h_bitstring", 1.0, true, &r.h_bitstring) ||
            !get_entropy(o, "min_entropy", bits, false, &r.min_entropy))
                return -EBADMSG;
        for (unsigned e = 0; e < _EA_MAX; e++) {
                struct json_object *x;

                if (!json_object_object_get_ex(o, ea_estimator_name(e), &x) ||
                    !json_object_is_type(x, json_type_object) ||
                    !get_entropy(x, "original", bits, true, &r.original[e]) ||
                    !get_entropy(x, "bitstring", 1.0, true, &r.bitstring[e]))
                        return -EBADMSG;
        }
        /* h_original and h_bitstring are the least of their estimators,
         * and min_entropy what ea_non_iid reports from those two: a file
         * that claims more than its own estimators said is not ours. */
        for (unsigned e = 0; e < _EA_MAX; e++)
                if ((!isnan(r.original[e]) && r.h_original > r.original[e] + 1e-6) ||
                    (!isnan(r.bitstring[e]) && !isnan(r.h_bitstring) && r.h_bitstring > r.bitstring[e] + 1e-6))
                        return -EBADMSG;
        if (r.min_entropy > r.h_original + 1e-6 || (!isnan(r.h_bitstring) && r.min_entropy > bits * r.h_bitstring + 1e-5))
                return -EBADMSG;
        *ret = r;
        return 0;
}
