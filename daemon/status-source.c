/* status-source.c - a credited source's parts of the status (see
 * status-json.h): its self-test, its induced failures, its running gate
 * and the gate's last verdicts. Reads counters only: no secrets.
 * Flow: collectors' stats -> [status-source] -> status -> control. */
#include "status-json.h"

#include <math.h>
#include <stdio.h>

#include "pool/induce.h"

/* Induced failures (schema 10): truerandomctl induce's steps. */
struct json_object *status_induce_json(const CollectorInduce *e) {
        struct json_object *o = json_object_new_object();
        const char *kind = induce_kind_to_string(e->kind);
        int r = 0;

        if (!o)
                return NULL;
        ADD(o, "episodes", json_object_new_uint64(e->episodes));
        ADD(o, "active", json_object_new_boolean(e->active));
        ADD(o, "caught", json_object_new_uint64(e->caught));
        ADD(o, "uncaught", json_object_new_uint64(e->uncaught));
        ADD(o, "degraded", json_object_new_uint64(e->degraded));
        ADD(o, "detected_after", json_object_new_uint64(e->detected_after));
        ADD(o, "blocks", json_object_new_uint64(e->blocks));
        if (json_put_nullable(o, "kind", kind ? json_object_new_string(kind) : NULL) < 0 ||
            json_put_nullable(o, "caught_by", e->caught_by ? json_object_new_string(e->caught_by) : NULL) < 0)
                r = -ENOMEM;
        return finish(o, r);
}

/* The self-test the source ran at open; null for a source without one. */
struct json_object *status_selftest_json(const SelftestResult *st) {
        struct json_object *o;
        char detail[256];
        int r = 0;

        if (!st->run)
                return NULL;
        o = json_object_new_object();
        if (!o)
                return NULL;
        ADD(o, "result", json_object_new_string(selftest_reason_to_string(st->reason)));
        ADD(o, "detail", json_object_new_string(selftest_describe(st, detail, sizeof(detail))));
        if (st->words) {
                ADD(o, "words", json_object_new_uint64(st->words));
                return finish(o, r);
        }
        ADD(o, "step", json_object_new_uint64(st->step));
        ADD(o, "warmup", json_object_new_uint64(st->warmup));
        ADD(o, "window", json_object_new_uint64(st->samples));
        ADD(o, "backwards", json_object_new_uint64(st->backwards));
        ADD(o, "zero_deltas", json_object_new_uint64(st->zero));
        ADD(o, "distinct", json_object_new_uint64(st->distinct));
        ADD(o, "stuck", json_object_new_uint64(st->stuck));
        ADD(o, "low_bit", json_object_new_uint64(st->low_bit));
        ADD(o, "lag", json_object_new_uint64(st->lag));
        ADD(o, "lag_match", json_object_new_uint64(st->lag_match));
        ADD(o, "row_max", json_object_new_uint64(st->row_max));
        return finish(o, r);
}

/* The running gate's verdicts on a credited source. */
/* The gate's last verdicts, oldest first (schema 10). */
static struct json_object *recent_json(const CollectorStats *st) {
        struct json_object *a = json_object_new_array();
        size_t kept = st->verdicts < COLLECTOR_RECENT_VERDICTS ? (size_t) st->verdicts : COLLECTOR_RECENT_VERDICTS;
        int r = 0;

        for (size_t i = 0; a && i < kept && r == 0; i++) {
                const GateVerdict *v = collector_stats_verdict(st, i);
                struct json_object *o = json_object_new_object();

                if (o) {
                        ADD(o, "start", json_object_new_uint64(v->start));
                        ADD(o, "samples", json_object_new_uint64(v->samples));
                        ADD(o, "credit_bits", json_new_fixed(v->credit_mbits / 1000.0, 3));
                        ADD(o, "released", json_object_new_boolean(v->credit_mbits > 0));
                        if (json_put_nullable(o, "estimate_bits",
                                              isnan(v->estimate) ? NULL : json_new_fixed(v->estimate, 6)) < 0)
                                r = -ENOMEM;
                }
                append(a, o, &r);
        }
        return finish(a, r);
}

struct json_object *status_gate_json(const CollectorStats *st) {
        const GateStats *g = &st->gate;
        struct json_object *o = json_object_new_object();
        int r = 0;

        if (!o)
                return NULL;
        ADD(o, "window", json_object_new_uint64(g->window));
        ADD(o, "windows_credited", json_object_new_uint64(g->credited));
        ADD(o, "windows_refused", json_object_new_uint64(g->refused));
        ADD(o, "refusals", json_object_new_uint64(g->refusals));
        /* null until the first verdict */
        if (json_put_nullable(o, "last", g->credited + g->refused == 0 ? NULL
                                         : json_object_new_string(g->last_refused ? "refused" : "credited")) < 0 ||
            json_put_nullable(o, "estimate_bits", isnan(g->estimate) ? NULL : json_new_fixed(g->estimate, 3)) < 0)
                r = -ENOMEM;
        ADD(o, "verdicts", json_object_new_uint64(st->verdicts));
        ADD(o, "recent_verdicts", recent_json(st));
        return finish(o, r);
}
