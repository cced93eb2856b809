/* assess-gate.c - see assess-gate.h: the gate's verdicts on a capture,
 * window by window, and their two renderings.
 *
 * Invariants: every full window is judged, in order, by gate_judge()
 * with the policy as given; the totals are sums over the windows it
 * released, so they are what the daemon would have credited. Credits are
 * millibits throughout (as gate.h grants them) and printed with three
 * decimals, so the text and the JSON show them exactly. */
#include "assess-gate.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "assess/eajson.h"
#include "config/config.h"
#include "pool/health.h"
#include "pool/source.h"
#include "util/cleanup.h"
#include "util/json-util.h"

uint32_t assess_gate_default_cap(const char *source) {
        const SourceOps *ops = source ? source_lookup(source) : NULL;

        if (ops && ops->defaults.credit_auto && ops->defaults.credit_cap_mbits > 0)
                return ops->defaults.credit_cap_mbits;
        return source_jitter.defaults.credit_cap_mbits;
}

int assess_gate_parse_credit(const char *s, GatePolicy *p) {
        uint32_t mbits;

        if (strcmp(s, "auto") == 0) {
                p->auto_credit = true;
                return 0;
        }
        if (config_parse_milli(s, CREDIT_MBITS_MAX, &mbits) < 0 || mbits == 0)
                return -EINVAL;
        p->auto_credit = false;
        p->credit_mbits = mbits;
        return 0;
}

int assess_gate_parse_cap(const char *s, GatePolicy *p) {
        uint32_t mbits;

        if (config_parse_milli(s, CREDIT_MBITS_MAX, &mbits) < 0 || mbits == 0)
                return -EINVAL;
        p->cap_mbits = mbits;
        return 0;
}

/* ---- the replay ------------------------------------------------------------------------ */

int assess_gate_run(const uint8_t *samples, size_t n, uint32_t window, const GatePolicy *policy,
                    AssessGateProgressFn fn, void *userdata, AssessGate *ret) {
        AssessGate g = { .window = window, .samples = n };
        _cleanup_free_ GateVerdict *v = NULL;
        int r;

        if (!samples || !policy || !ret || window < GATE_WINDOW_MIN || window > GATE_WINDOW_MAX)
                return -EINVAL;
        if (n < window)
                return -ENODATA;
        g.policy = *policy;
        g.n_windows = n / window;
        v = calloc(g.n_windows, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t k = 0; k < g.n_windows; k++) {
                r = gate_judge(samples + k * window, window, policy, NULL, &v[k]);
                if (r < 0)
                        return r;
                v[k].start = (uint64_t) k * window;
                if (v[k].credit_mbits > 0) {
                        g.samples_credited += v[k].samples;
                        g.mbits_credited += (uint64_t) v[k].samples * v[k].credit_mbits;
                }
                r = fn ? fn(userdata, (unsigned) (k + 1), (unsigned) g.n_windows) : 0;
                if (r < 0)
                        return r;
        }
        g.verdicts = TAKE_PTR(v);
        *ret = g;
        return 0;
}

void assess_gate_done(AssessGate *g) {
        if (!g)
                return;
        free(g->verdicts);
        *g = (AssessGate){ 0 };
}

static size_t released(const AssessGate *g) {
        size_t k = 0;

        for (size_t i = 0; i < g->n_windows; i++)
                k += g->verdicts[i].credit_mbits > 0;
        return k;
}

/* ---- text ------------------------------------------------------------------------------ */

static void print_policy(const AssessGate *g, FILE *f) {
        const GatePolicy *p = &g->policy;

        fprintf(f, "gate: %zu windows of %" PRIu32 " samples of %u bits", g->n_windows, g->window,
                p->bits ? p->bits : 8);
        if (g->samples % g->window)
                fprintf(f, " (the last %zu samples, a partial window, never judged)", g->samples % g->window);
        if (p->auto_credit)
                fprintf(f, "; credit = auto: half the estimate, at most %.3f bits/sample\n", p->cap_mbits / 1000.0);
        else
                fprintf(f, "; credit = %.3f bits/sample, granted when the estimate is at least %.3f\n",
                        p->credit_mbits / 1000.0, 2 * p->credit_mbits / 1000.0);
}

void assess_gate_print(const AssessGate *g, FILE *f) {
        print_policy(g, f);
        for (size_t k = 0; k < g->n_windows; k++) {
                const GateVerdict *v = &g->verdicts[k];

                fprintf(f, "window %zu: samples %" PRIu64 "..%" PRIu64 " estimate ", k, v->start,
                        v->start + v->samples - 1);
                if (isnan(v->estimate))
                        fprintf(f, "- bits/sample (the estimators failed: %s)",
                                strerror(v->error < 0 ? -v->error : EIO));
                else
                        fprintf(f, "%.6f bits/sample", v->estimate + 0.0); /* -0 is 0 */
                if (v->credit_mbits > 0)
                        fprintf(f, ": credit %.3f\n", v->credit_mbits / 1000.0);
                else
                        fprintf(f, ": REFUSED\n");
        }
        fprintf(f, "credited: %" PRIu64 " samples (%zu of %zu windows released), %.3f bits\n", g->samples_credited,
                released(g), g->n_windows, (double) g->mbits_credited / 1000.0);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static struct json_object *policy_json(const GatePolicy *p) {
        _cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
        int r = 0;

        if (!o)
                return NULL;
        if (p->auto_credit) {
                r |= json_put(o, "credit", json_object_new_string("auto"));
                r |= json_put(o, "cap", json_new_fixed(p->cap_mbits / 1000.0, 3));
        } else {
                r |= json_put(o, "credit", json_new_fixed(p->credit_mbits / 1000.0, 3));
                r |= json_put_nullable(o, "cap", NULL);
        }
        r |= json_put(o, "bits", json_object_new_int((int) (p->bits ? p->bits : 8)));
        return r ? NULL : TAKE_PTR(o);
}

static struct json_object *verdict_json(const GateVerdict *v) {
        _cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
        int r = 0;

        if (!o)
                return NULL;
        r |= json_put(o, "start", json_object_new_uint64(v->start));
        r |= json_put(o, "samples", json_object_new_uint64(v->samples));
        r |= json_put_value(o, "estimate", ea_json_value(v->estimate + 0.0), isnan(v->estimate)); /* -0 is 0 */
        r |= json_put(o, "credit", json_new_fixed(v->credit_mbits / 1000.0, 3));
        r |= json_put(o, "released", json_object_new_boolean(v->credit_mbits > 0));
        return r ? NULL : TAKE_PTR(o);
}

struct json_object *assess_gate_to_json(const AssessGate *g) {
        _cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
        struct json_object *windows = json_object_new_array();
        int r = 0;

        if (!o) {
                json_object_put(windows);
                return NULL;
        }
        r |= json_put(o, "window", json_object_new_uint64(g->window));
        r |= json_put(o, "policy", policy_json(&g->policy));
        r |= json_put(o, "samples", json_object_new_uint64(g->samples));
        for (size_t k = 0; windows && k < g->n_windows && !r; k++) {
                struct json_object *w = verdict_json(&g->verdicts[k]);

                if (!w || json_object_array_add(windows, w) < 0) {
                        json_object_put(w);
                        r = -ENOMEM;
                }
        }
        r |= json_put(o, "windows", windows);
        r |= json_put(o, "samples_credited", json_object_new_uint64(g->samples_credited));
        r |= json_put(o, "bits_credited", json_new_fixed((double) g->mbits_credited / 1000.0, 3));
        return r ? NULL : TAKE_PTR(o);
}
