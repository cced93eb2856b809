/* render-openmetrics.c - the status for Prometheus (see render.h), in
 * OpenMetrics 1.0 or the Prometheus text format 0.0.4.
 *
 * The object is walked, not listed field by field, so that a field the
 * daemon adds appears as a metric without a change here. Both formats
 * want a family's samples together, under one HELP and TYPE: samples are
 * gathered first, then printed family by family in order of first sight.
 * Names from the daemon become [a-z0-9_], a member in seconds ends in
 * _seconds and a rate in _per_second (the base units both formats ask
 * for), and label values are escaped, so no daemon can break the
 * exposition. The formats differ in a counter's family name (OpenMetrics
 * names it without the _total its samples carry), in the info type
 * (OpenMetrics' own; a gauge in 0.0.4) and in OpenMetrics' closing # EOF.
 * Flow: ctlstatus -> [render-openmetrics] -> stdout (-> node_exporter). */
#include "render.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define METRIC_PREFIX "truerandom"
#define NAME_MAX_LEN 128
#define LABELS_MAX_LEN 512

typedef enum SampleType {
        SAMPLE_GAUGE,
        SAMPLE_COUNTER, /* the sample's name ends in _total, its family's (OpenMetrics) not */
        SAMPLE_INFO,    /* the sample's name ends in _info, its family's (OpenMetrics) not */
} SampleType;

typedef struct Sample {
        char name[NAME_MAX_LEN];     /* the family's, in OpenMetrics terms */
        char labels[LABELS_MAX_LEN]; /* 'a="x",b="y"' or empty */
        double value;
        SampleType type;
} Sample;

typedef struct Samples {
        Sample *v;
        size_t n, allocated;
        int error;
} Samples;

/* Ever-growing counts (a restarted source starts its own again, which
 * both formats allow a counter): TYPE counter, and the _total suffix of
 * their samples. Everything else is a gauge. */
static const char *const counters[] = {
        "samples", "blocks", "credited_bits", "rct", "apt", "permanent_rct", "permanent_apt", "read_errors",
        "blocks_in", "blocks_served", "blocks_seeded", "blocks_purged", "blocks_displaced", "bytes_served",
        "credited_bits_in", "credited_bits_taken", "reads", "eagain", "interrupted", "reseeds", "count", "requests",
        "vm_generation_changes", "vm_blocks_purged", "rekeys", "windows_credited", "windows_refused", "refusals",
        "lost_records", "jumps", "accepted", "refused", "dropped", "bytes_written", "feeds",
};

/* Free text (error messages): no label value, and not a state. */
static const char *const texts[] = { "last_error", "error", "name", "kind", "reason", "date", "detail" };

static const struct {
        const char *name, *help;
} helps[] = {
        { "truerandom_up", "1 if truerandomctl reached truerandomd and read its status" },
        { "truerandom_health", "0 serving, 1 degraded, 2 not serving /dev/truerandom (truerandomctl(1))" },
        { "truerandom_build", "truerandomd's version and its status schema, as labels" },
        { "truerandom_uptime_seconds", "seconds since truerandomd started" },
        { "truerandom_ready", "1 once every device is up and the CRNG seeded" },
        { "truerandom_stopping", "1 while truerandomd shuts down" },
        { "truerandom_trng_serving", "1 while /dev/truerandom hands out bytes" },
        { "truerandom_min_healthy", "healthy credited sources /dev/truerandom needs" },
        { "truerandom_reload_count", "configuration reloads (SIGHUP) handled" },
        { "truerandom_reload_result", "the last reload's result, as a label (ok, refused, none)" },
        { "truerandom_reload_age_seconds", "seconds since the last reload" },
        { "truerandom_source_state", "a source's state, as a label" },
        { "truerandom_source_credit_bits", "credit in force: the last window's grant, bits per sample" },
        { "truerandom_source_credited_bits_per_second", "credited bits per second over the last 5 to 10 s" },
        { "truerandom_source_credit_origin", "how the credit is set, as a label (auto, explicit)" },
        { "truerandom_source_credit_cap_bits", "the most a window may be granted: auto's cap, or the explicit credit" },
        { "truerandom_source_samples", "raw samples read" },
        { "truerandom_source_credited_bits", "entropy bits credited" },
        { "truerandom_source_failures_rct", "repetition count test failures" },
        { "truerandom_source_failures_apt", "adaptive proportion test failures" },
        { "truerandom_source_selftest_result", "the sampler self-test at open, as a label (passed, or why not)" },
        { "truerandom_source_selftest_step", "clock step the jitter source divides its deltas by" },
        { "truerandom_source_selftest_distinct", "distinct 8-bit samples in the self-test's window" },
        { "truerandom_source_selftest_row_max", "most common value's count in the first 1000 samples after open" },
        { "truerandom_source_store_fill", "the source's blocks stored now" },
        { "truerandom_source_blocks_served", "the source's blocks served, from any device" },
        { "truerandom_source_bytes_served", "bytes of the source's blocks served, from any device" },
        { "truerandom_source_gate_window", "samples per window the running gate judges" },
        { "truerandom_source_gate_windows_credited", "windows the running gate credited" },
        { "truerandom_source_gate_windows_refused", "windows the running gate refused: none of their samples counted" },
        { "truerandom_source_gate_refusals", "bursts of refused windows (each after a credited one, or the start)" },
        { "truerandom_source_gate_last", "the last window's verdict, as a label (credited, refused)" },
        { "truerandom_source_gate_estimate_bits", "the last window's SP 800-90B min-entropy estimate, bits per sample" },
        { "truerandom_store_fill", "conditioned blocks ready" },
        { "truerandom_store_capacity", "conditioned blocks the store holds" },
        { "truerandom_store_bytes_served", "bytes served from /dev/truerandom" },
        { "truerandom_store_blocks_displaced", "blocks erased from a full store to make room for a source "
                                                     "whose own device's readers waited" },
        { "truerandom_device_waiting", "readers waiting on the device" },
        { "truerandom_egd_socket", "the EGD socket's path, as a label" },
        { "truerandom_kernel_feed_feeds", "feeds of the kernel's pool truerandom-seed-kernel reported" },
        { "truerandom_kernel_feed_last_bits", "bits the last feed gave the kernel" },
        { "truerandom_kernel_feed_last_reason", "why the last feed was made, as a label" },
        { "truerandom_kernel_feed_last_age_seconds", "seconds since the last feed" },
        { "truerandom_hwrng_core", "1 if the kernel has a hw_random core (/sys/class/misc/hw_random)" },
        { "truerandom_hwrng_current", "the hwrng /dev/hwrng reads (rng_current), as a label" },
        { "truerandom_hwrng_quality", "entropy per 1024 bits the kernel credits the current hwrng with (rng_quality)" },
        { "truerandom_hwrng_selected", "1 if user space chose rng_current, 0 if the kernel did" },
        { "truerandom_hwrng_truncated", "1 if rng_available named more hwrngs than the status lists" },
        { "truerandom_hwrng_device_current", "1 for the hwrng /dev/hwrng reads, 0 for each other one in rng_available" },
        { "truerandom_hwrng_device_tpm", "the number N of the TPM whose RNG the hwrng is (tpm-rng-N)" },
        { "truerandom_egd_connections", "EGD peers connected now" },
        { "truerandom_egd_waiting", "EGD reads waiting for blocks now" },
        { "truerandom_egd_waiting_uids", "distinct uids among the EGD reads waiting" },
        { "truerandom_egd_accepted", "EGD connections accepted" },
        { "truerandom_egd_refused", "EGD connections refused: over a bound" },
        { "truerandom_egd_dropped", "EGD peers disconnected: not EGD, a write not root's, a waiting bound" },
        { "truerandom_egd_requests", "EGD requests handled" },
        { "truerandom_egd_bytes_served", "bytes of /dev/truerandom's blocks served over EGD" },
        { "truerandom_egd_bytes_written", "bytes root wrote over EGD, mixed into the CRNG uncredited" },
        { "truerandom_device_bytes_served", "bytes served by the device" },
        { "truerandom_device_source", "the source whose blocks alone the device serves, as a label" },
        { "truerandom_crng_seeded", "1 once the CRNG is seeded" },
        { "truerandom_crng_seed_age_seconds", "seconds since the last CRNG reseed" },
        { "truerandom_crng_reseed_pending", "1 while a CRNG reseed waits for a block" },
        { "truerandom_crng_vm_generation_changes", "times the machine was found cloned or restored" },
        { "truerandom_crng_vm_blocks_purged", "stored blocks erased because the machine was cloned" },
        { "truerandom_crng_rekeys", "uncredited getrandom() rekeys of the CRNG (VM generation changes)" },
        { "truerandom_crng_trigger_requests", "CRNG reseeds asked for, by trigger" },
        { "truerandom_crng_trigger_reseeds", "CRNG reseeds that served a trigger's request" },
        { "truerandom_vm_generation_detection", "whether clones and restores are noticed, as a label "
                                                "(available, unavailable, no-device)" },
        { "truerandom_vm_generation_lost_records", "times kernel log records were lost unread (each handled "
                                                         "as a VM generation change)" },
        { "truerandom_resume_jumps", "resumes from suspend seen (CLOCK_BOOTTIME jumps)" },
};

static bool in(const char *const *list, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(list[i], s) == 0)
                        return true;
        return false;
}

#define IN(list, s) in(list, sizeof(list) / sizeof(list[0]), s)

/* prefix "_" key, in [a-z0-9_]; false when it does not fit. */
static bool join_name(char *out, const char *prefix, const char *key) {
        size_t n = strlen(prefix), k = 0;

        if (n + 1 + strlen(key) >= NAME_MAX_LEN)
                return false;
        memcpy(out, prefix, n);
        out[n++] = '_';
        for (const char *s = key; *s; s++) {
                char c = *s >= 'A' && *s <= 'Z' ? (char) (*s - 'A' + 'a') : *s;
                out[n + k++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_';
        }
        out[n + k] = '\0';
        return true;
}

/* labels + ',' name="value", the value escaped as the format says. */
static bool add_label(char *labels, const char *name, const char *value) {
        size_t n = strlen(labels);
        int k = snprintf(labels + n, LABELS_MAX_LEN - n, "%s%s=\"", n ? "," : "", name);

        if (k < 0 || (size_t) k >= LABELS_MAX_LEN - n)
                return false;
        n += (size_t) k;
        for (const char *s = value; *s; s++) {
                const char *esc = *s == '\\' ? "\\\\" : *s == '"' ? "\\\"" : *s == '\n' ? "\\n" : NULL;
                size_t need = esc ? 2 : 1;

                if (n + need + 2 > LABELS_MAX_LEN)
                        return false;
                if (esc)
                        memcpy(labels + n, esc, 2);
                else
                        labels[n] = *s;
                n += need;
        }
        labels[n++] = '"';
        labels[n] = '\0';
        return true;
}

/* name with its unit spelled as both formats want it: "_s" (seconds) is
 * "_seconds", "_per_s" is "_per_second". */
static void unit_name(char *out, const char *name) {
        size_t n = strlen(name);
        const char *unit = NULL;

        if (n > 6 && strcmp(name + n - 6, "_per_s") == 0)
                unit = "_per_second", n -= 6;
        else if (n > 2 && strcmp(name + n - 2, "_s") == 0)
                unit = "_seconds", n -= 2;
        snprintf(out, NAME_MAX_LEN, "%.*s%s", (int) n, name, unit ? unit : "");
}

static void push(Samples *s, const char *name, const char *labels, double value, SampleType type) {
        Sample *x;

        if (s->n == s->allocated) {
                size_t a = s->allocated ? 2 * s->allocated : 64;
                Sample *v = realloc(s->v, a * sizeof(*v));
                if (!v) {
                        s->error = -ENOMEM;
                        return;
                }
                s->v = v;
                s->allocated = a;
        }
        x = &s->v[s->n++];
        unit_name(x->name, name);
        snprintf(x->labels, sizeof(x->labels), "%s", labels);
        x->value = value;
        x->type = type;
}

static void walk(Samples *s, const char *prefix, const char *labels, const CtlStatusObject *o);

/* sources -> source, devices -> device: the label of one element. */
static void walk_array(Samples *s, const char *prefix, const char *labels, const char *key,
                       const CtlStatusObject *parent) {
        char singular[NAME_MAX_LEN], name[NAME_MAX_LEN];
        size_t k = strlen(key);

        if (k == 0 || k >= sizeof(singular))
                return;
        memcpy(singular, key, k + 1);
        if (k > 1 && singular[k - 1] == 's')
                singular[k - 1] = '\0';
        if (!join_name(name, prefix, singular))
                return;
        /* The label's own name must be a valid one, like the metric's. */
        for (char *c = singular; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
                        *c = '_';
        for (size_t i = 0; i < ctl_status_get_count(parent, key); i++) {
                const CtlStatusObject *e = ctl_status_get_element(parent, key, i);
                const char *id = ctl_status_get_string(e, "name"), *kind = ctl_status_get_string(e, "kind");
                char l[LABELS_MAX_LEN], idx[24];

                if (!e)
                        continue;
                snprintf(idx, sizeof(idx), "%zu", i);
                snprintf(l, sizeof(l), "%s", labels);
                /* An element without a name still gets a label of its own:
                 * two samples of one family must never share their labels. */
                if (!add_label(l, singular, id ? id : idx) || (kind && !add_label(l, "kind", kind)))
                        continue;
                walk(s, name, l, e);
        }
}

static void walk(Samples *s, const char *prefix, const char *labels, const CtlStatusObject *o) {
        json_object_object_foreach((struct json_object *) o, key, v) {
                char name[NAME_MAX_LEN], l[LABELS_MAX_LEN];
                double d;

                /* The root's schema and daemon versions: truerandom_build. */
                if (!labels[0] && strcmp(prefix, METRIC_PREFIX) == 0 &&
                    (strcmp(key, "version") == 0 || strcmp(key, "daemon_version") == 0))
                        continue;
                if (!join_name(name, prefix, key))
                        continue;
                switch (json_object_get_type(v)) {
                case json_type_int:
                case json_type_double:
                        if (ctl_status_get_number(o, key, &d))
                                push(s, name, labels, d, IN(counters, key) ? SAMPLE_COUNTER : SAMPLE_GAUGE);
                        break;
                case json_type_boolean:
                        push(s, name, labels, json_object_get_boolean(v) ? 1 : 0, SAMPLE_GAUGE);
                        break;
                case json_type_string:
                        snprintf(l, sizeof(l), "%s", labels);
                        if (!IN(texts, key) && ctl_status_get_string(o, key) &&
                            add_label(l, name + strlen(prefix) + 1, ctl_status_get_string(o, key)))
                                push(s, name, l, 1, SAMPLE_GAUGE);
                        break;
                case json_type_object:
                        walk(s, name, labels, v);
                        break;
                case json_type_array:
                        walk_array(s, prefix, labels, key, o);
                        break;
                default:
                        break;
                }
        }
}

static const char *help_of(const char *name) {
        for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
                if (strcmp(helps[i].name, name) == 0)
                        return helps[i].help;
        return NULL;
}

/* Exact integers as such, others in the fewest digits that read back the
 * same (3725.4, not 3725.4000000000001); Prometheus reads doubles. */
static void print_value(FILE *out, double v) {
        char buf[32];

        if (v == floor(v) && fabs(v) < 9007199254740992.0) {
                fprintf(out, "%.0f\n", v);
                return;
        }
        snprintf(buf, sizeof(buf), "%.15g", v);
        if (strtod(buf, NULL) != v)
                snprintf(buf, sizeof(buf), "%.17g", v);
        fprintf(out, "%s\n", buf);
}

/* truerandom_build_info{version="...",schema="N"} 1: what OpenMetrics
 * calls an info metric, for the daemon's version and its status schema. */
static void push_build(Samples *s, const CtlStatus *status) {
        const CtlStatusObject *root = ctl_status_root(status);
        const char *version = ctl_status_get_string(root, "daemon_version");
        char labels[LABELS_MAX_LEN] = "", schema[24] = "";
        double v;

        if (ctl_status_get_number(root, "version", &v))
                snprintf(schema, sizeof(schema), "%.0f", v);
        if (add_label(labels, "version", version ? version : "") && add_label(labels, "schema", schema))
                push(s, METRIC_PREFIX "_build", labels, 1, SAMPLE_INFO);
}

static const char *type_name(SampleType t, CtlMetricsFormat format) {
        return t == SAMPLE_COUNTER ? "counter" : t == SAMPLE_INFO && format == CTL_METRICS_OPENMETRICS ? "info" : "gauge";
}

static const char *sample_suffix(SampleType t) {
        return t == SAMPLE_COUNTER ? "_total" : t == SAMPLE_INFO ? "_info" : "";
}

int ctl_render_metrics(const CtlStatus *status, CtlMetricsFormat format, FILE *out) {
        Samples s = { 0 };

        push(&s, METRIC_PREFIX "_up", "", status ? 1 : 0, SAMPLE_GAUGE);
        if (status) {
                push_build(&s, status);
                push(&s, METRIC_PREFIX "_health", "", ctl_status_health(status), SAMPLE_GAUGE);
                walk(&s, METRIC_PREFIX, "", ctl_status_root(status));
        }
        if (s.error < 0) {
                free(s.v);
                return s.error;
        }
        for (size_t i = 0; i < s.n; i++) {
                const char *help, *suffix = sample_suffix(s.v[i].type);
                /* 0.0.4 names a family as its samples; OpenMetrics without
                 * the type's suffix. */
                const char *family_suffix = format == CTL_METRICS_PROMETHEUS ? suffix : "";
                bool first = true;

                for (size_t j = 0; j < i && first; j++)
                        first = strcmp(s.v[j].name, s.v[i].name) != 0;
                if (!first)
                        continue;
                help = help_of(s.v[i].name);
                fprintf(out, "# HELP %s%s %s\n", s.v[i].name, family_suffix, help ? help : "truerandomd status field");
                fprintf(out, "# TYPE %s%s %s\n", s.v[i].name, family_suffix, type_name(s.v[i].type, format));
                for (size_t j = i; j < s.n; j++) {
                        if (strcmp(s.v[j].name, s.v[i].name) != 0)
                                continue;
                        if (s.v[j].labels[0])
                                fprintf(out, "%s%s{%s} ", s.v[j].name, suffix, s.v[j].labels);
                        else
                                fprintf(out, "%s%s ", s.v[j].name, suffix);
                        print_value(out, s.v[j].value);
                }
        }
        if (format == CTL_METRICS_OPENMETRICS)
                fputs("# EOF\n", out);
        free(s.v);
        return ferror(out) ? -EIO : 0;
}
