/* estimates.c - capture into memory, the estimators, their report (see
 * estimates.h). Flow: capture -> [estimates] -> verb-assess, verb-evidence. */
#include "estimates.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "assess/eajson.h"
#include "client.h"
#include "proto/ctlproto.h"
#include "util/cleanup.h"
#include "util/json-util.h"

static int samples_sink(void *userdata, const uint8_t *samples, size_t n) {
        CtlSamples *b = userdata;

        if (n > b->size - b->n)
                return -EMSGSIZE;
        memcpy(b->p + b->n, samples, n);
        b->n += n;
        return 0;
}

int ctl_samples_capture(const CtlCapture *capture, uint64_t samples, uint32_t rows, CtlProgress *p, CtlSamples *ret) {
        CtlCapture c = *capture;
        CtlSamples b = { .size = (size_t) (samples * rows) };
        _cleanup_free_ uint8_t *data = NULL;
        int code;

        c.samples = samples;
        c.rows = rows;
        b.p = data = malloc(b.size);
        if (!data)
                return ctl_fail(EXIT_FAILED, "out of memory for %zu samples", b.size);
        code = ctl_capture(&c, p, samples_sink, &b, "memory");
        if (code != EXIT_OK)
                return code;
        *ret = b;
        data = NULL;
        return EXIT_OK;
}

/* ---- the estimators ---------------------------------------------------------------- */

int ctl_steps_show(void *userdata, unsigned done, unsigned total) {
        CtlSteps *s = userdata;

        ctl_progress_steps(s->progress, s->what, done, total, done == total);
        return 0;
}

int ctl_samples_estimate(const CtlSamples *b, unsigned bits, CtlProgress *p, EaReport *ret) {
        CtlSteps s = { .progress = p, .what = "estimator" };
        int r;

        ctl_progress_restart(p);
        r = ea_non_iid_progress(b->p, b->n, bits, ctl_steps_show, &s, ret);
        if (r < 0) {
                ctl_progress_break(p);
                return ctl_fail(EXIT_FAILED, "the estimators: %s", strerror(-r));
        }
        return EXIT_OK;
}

int ctl_samples_restart(const CtlSamples *m, double h_i, CtlProgress *p, EaRestartReport *ret) {
        CtlSteps s = { .progress = p, .what = "restart estimator" };
        int r;

        ctl_progress_restart(p);
        r = ea_restart_progress(m->p, CTL_RESTART_ROWS, CTL_RESTART_SAMPLES, 8, h_i, ctl_steps_show, &s, ret);
        if (r < 0) {
                ctl_progress_break(p);
                return ctl_fail(EXIT_FAILED, "the restart test: %s", strerror(-r));
        }
        return EXIT_OK;
}

/* ---- the report -------------------------------------------------------------------- */

static void print_value(FILE *f, double v) {
        if (isnan(v))
                fprintf(f, " %10s", "-");
        else
                fprintf(f, " %10.6f", v);
}

void ctl_report_print(FILE *f, const EaReport *r, const EaRestartReport *rr) {
        fprintf(f, "%-12s %10s %10s\n", "estimator", "original", "bitstring");
        for (unsigned e = 0; e < _EA_MAX; e++) {
                fprintf(f, "%-12s", ea_estimator_name(e));
                print_value(f, r->original[e]);
                print_value(f, r->bitstring[e]);
                fputc('\n', f);
        }
        fprintf(f, "H_original: %.6f\n", r->h_original);
        if (isnan(r->h_bitstring))
                fprintf(f, "min-entropy: %.6f (binary samples: no bitstring pass)\n", r->min_entropy);
        else {
                fprintf(f, "H_bitstring: %.6f\n", r->h_bitstring);
                fprintf(f, "min(H_original, %u X H_bitstring): %.6f\n", r->bits, r->min_entropy);
        }
        if (!rr)
                return;
        fprintf(f, "\nrestart test (SP 800-90B 3.1.4): %zu x %zu samples, H_I = %.6f\n", rr->rows, rr->cols, rr->h_i);
        fprintf(f, "sanity check: a value %u times in one row, %u in one column, cutoff %u: %s\n", rr->max_row_count,
                rr->max_col_count, rr->cutoff, rr->sanity_passed ? "passed" : "FAILED");
        if (rr->sanity_passed) {
                fprintf(f, "H_r: %.6f\nH_c: %.6f\n", rr->h_r, rr->h_c);
                fprintf(f, "min(H_r, H_c, H_I): %.6f\n", rr->min_entropy);
        }
        fprintf(f, "restart test: %s\n", rr->passed ? "passed (min(H_r, H_c) >= H_I / 2)" : "FAILED");
}

/* A value that may be NAN: null then. */
static int put_value(struct json_object *o, const char *key, double v) {
        return json_put_value(o, key, ea_json_value(v), isnan(v));
}

struct json_object *ctl_restart_to_json(const EaRestartReport *rr) {
        struct json_object *o = json_object_new_object();
        int r = 0;

        if (!o)
                return NULL;
        r |= json_put(o, "rows", json_object_new_uint64(rr->rows));
        r |= json_put(o, "cols", json_object_new_uint64(rr->cols));
        r |= put_value(o, "h_i", rr->h_i);
        r |= json_put(o, "cutoff", json_object_new_uint64(rr->cutoff));
        r |= json_put(o, "max_row_count", json_object_new_uint64(rr->max_row_count));
        r |= json_put(o, "max_col_count", json_object_new_uint64(rr->max_col_count));
        r |= json_put(o, "sanity_passed", json_object_new_boolean(rr->sanity_passed));
        r |= put_value(o, "h_r", rr->h_r);
        r |= put_value(o, "h_c", rr->h_c);
        r |= put_value(o, "min_entropy", rr->min_entropy);
        r |= json_put(o, "passed", json_object_new_boolean(rr->passed));
        r |= json_put(o, "row", ea_report_to_json(&rr->row));
        r |= json_put(o, "col", ea_report_to_json(&rr->col));
        if (r) {
                json_object_put(o);
                return NULL;
        }
        return o;
}
