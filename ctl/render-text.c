/* render-text.c - the 80-column status (see render.h).
 *
 * Names and error texts come from the daemon and end up on a terminal:
 * every string is made printable, and, for a terminal, cut to its column,
 * every line going through status_line(), which keeps it within 80
 * columns. Whole (ctl_render_text_full()): nothing is cut, for a pipe, a
 * log or --full; a field's copy is kept until the render ends.
 * Flow: ctlstatus -> [render-text] -> stdout. */
#include "render.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef const CtlStatusObject Obj;

/* What ends a line or a field that was cut short, so nobody reads
 * "No such dev" as the whole message. */
#define CUT_MARK '>'

/* The render in progress prints whole lines and fields (one render at a
 * time: truerandomctl prints one status), and the copies clip() made for
 * it, freed when it ends. */
#define KEPT_MAX 512
static bool whole;
static char *kept[KEPT_MAX];
static size_t n_kept;

__attribute__((format(printf, 2, 3)))
static void status_line(FILE *out, const char *fmt, ...) {
        char buf[CTL_RENDER_COLUMNS + 1];
        va_list ap;
        int n;

        va_start(ap, fmt);
        if (whole) {
                vfprintf(out, fmt, ap);
                va_end(ap);
                fputc('\n', out);
                return;
        }
        n = vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (n > CTL_RENDER_COLUMNS)
                buf[CTL_RENDER_COLUMNS - 1] = CUT_MARK;
        fputs(buf, out);
        fputc('\n', out);
}

/* Printable ASCII only, cut to width (the last column then marks the cut);
 * whole, a copy of it all (or cut, should memory or room for copies run
 * out). */
static const char *clip(Obj *o, const char *key, char *buf, size_t width) {
        const char *s = ctl_status_get_string(o, key);
        size_t i = 0;

        if (!s)
                return "-";
        if (whole && n_kept < KEPT_MAX && (kept[n_kept] = malloc(strlen(s) + 1))) {
                buf = kept[n_kept++];
                width = strlen(s);
        }
        for (; *s && i < width; s++)
                buf[i++] = (unsigned char) *s >= 0x20 && (unsigned char) *s < 0x7f ? *s : '?';
        if (*s && width > 0)
                buf[width - 1] = CUT_MARK;
        buf[i] = '\0';
        return buf;
}

/* Counts in at most 6 columns: 99999, then 123k, 12.3M, ... */
static const char *fmt_count(Obj *o, const char *key, char buf[static 16]) {
        static const char units[] = "kMGTPE";
        double v;
        int u = -1;

        if (!ctl_status_get_number(o, key, &v) || v < 0)
                return "-";
        if (v < 100000) {
                snprintf(buf, 16, "%.0f", v);
                return buf;
        }
        while (v >= 1000 && u < (int) sizeof(units) - 2) {
                v /= 1000;
                u++;
        }
        snprintf(buf, 16, v < 99.95 ? "%.1f%c" : "%.0f%c", v, units[u]);
        return buf;
}

static const char *fmt_bytes(Obj *o, const char *key, char buf[static 16]) {
        static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
        double v;
        int u = -1;

        if (!ctl_status_get_number(o, key, &v) || v < 0)
                return "-";
        if (v < 1024) {
                snprintf(buf, 16, "%.0f B", v);
                return buf;
        }
        while (v >= 1024 && u < (int) (sizeof(units) / sizeof(units[0])) - 1) {
                v /= 1024;
                u++;
        }
        snprintf(buf, 16, "%.1f %s", v, units[u]);
        return buf;
}

static const char *fmt_duration(Obj *o, const char *key, char buf[static 32]) {
        double s;
        uint64_t t;

        if (!ctl_status_get_number(o, key, &s) || !(s >= 0) || s > 1e12)
                return "-";
        if (s < 60) {
                snprintf(buf, 32, "%.1f s", s);
                return buf;
        }
        t = (uint64_t) s;
        if (t < 3600)
                snprintf(buf, 32, "%" PRIu64 "m %02" PRIu64 "s", t / 60, t % 60);
        else if (t < 86400)
                snprintf(buf, 32, "%" PRIu64 "h %02" PRIu64 "m", t / 3600, t / 60 % 60);
        else
                snprintf(buf, 32, "%" PRIu64 "d %02" PRIu64 "h", t / 86400, t / 3600 % 24);
        return buf;
}

static const char *fmt_decimal(Obj *o, const char *key, int decimals, char buf[static 16]) {
        double v;

        if (!ctl_status_get_number(o, key, &v) || !(v >= 0) || v >= 1e9)
                return "-";
        snprintf(buf, 16, "%.*f", decimals, v);
        return buf;
}

static bool positive(Obj *o, const char *key) {
        double v;
        return ctl_status_get_number(o, key, &v) && v > 0;
}

/* How the source is credited (schema 4): the policy, then the running
 * gate's last verdict. */
static void render_credit(Obj *s, FILE *out) {
        Obj *g = ctl_status_get_object(s, "gate");
        const char *origin = ctl_status_get_string(s, "credit_origin"), *last = ctl_status_get_string(g, "last");
        char b1[16], b2[16], b3[16], b4[16], b5[16], b6[16];

        if (!origin)
                return;
        if (strcmp(origin, "auto") == 0)
                status_line(out, "        credit auto: half of each %s-sample window's estimate, at most %s",
                            fmt_count(g, "window", b2), fmt_decimal(s, "credit_cap_bits", 3, b1));
        else
                status_line(out, "        credit %s: a window of %s counts if it measures twice that",
                            fmt_decimal(s, "credit_cap_bits", 3, b1), fmt_count(g, "window", b2));
        if (!g)
                return;
        if (!last)
                status_line(out, "        gate: first window not judged yet");
        else
                status_line(out, "        gate: last %s at %s bits, credit %s; %s credited, %s refused",
                            strcmp(last, "refused") == 0 ? "REFUSED" : "released",
                            fmt_decimal(g, "estimate_bits", 3, b3), fmt_decimal(s, "credit_bits", 3, b4),
                            fmt_count(g, "windows_credited", b5), fmt_count(g, "windows_refused", b6));
}

/* The self-test at open, under the source's line. */
static void render_checks(Obj *s, FILE *out) {
        Obj *t = ctl_status_get_object(s, "selftest");
        const char *result = ctl_status_get_string(t, "result");
        char r1[24], d1[72], c1[16], c2[16], c3[16];
        double samples, low;

        if (result && strcmp(result, "passed") != 0) {
                status_line(out, "        self-test FAILED (%s):", clip(t, "result", r1, 20));
                status_line(out, "          %s", clip(t, "detail", d1, 70));
        } else if (result && ctl_status_get_number(t, "window", &samples) && samples > 0 &&
                   ctl_status_get_number(t, "low_bit", &low)) {
                status_line(out, "        self-test passed: step %s, %s values, low bit %.0f%% one value, row max %s",
                            fmt_count(t, "step", c1), fmt_count(t, "distinct", c2), 100.0 * low / samples,
                            fmt_count(t, "row_max", c3));
        } else if (result) {
                status_line(out, "        self-test passed: %s words, none repeated", fmt_count(t, "words", c1));
        }
}

static void render_source(Obj *s, FILE *out) {
        char nb[8], sb[20], err[64], c1[16], c2[16], c3[16], c4[16], c5[16];
        Obj *f = ctl_status_get_object(s, "failures");
        const char *name = clip(s, "name", nb, 7), *state = clip(s, "state", sb, 19);

        if (!ctl_status_is_true(s, "credited")) {
                if (strcmp(state, "mixed") == 0)
                        status_line(out, "%-7s mixed into CRNG seeds, never credited", name);
                else
                        status_line(out, "%-7s %s", name, state);
                return;
        }
        status_line(out, "%-7s %-19s %6s %10s %6s %6s %10s", name, state, fmt_decimal(s, "credit_bits", 3, c4),
                    fmt_count(s, "samples", c1), fmt_count(f, "rct", c2), fmt_count(f, "apt", c3),
                    fmt_decimal(s, "credited_bits_per_s", 1, c5));
        render_credit(s, out);
        if (positive(f, "permanent_rct") || positive(f, "permanent_apt"))
                status_line(out, "        failed permanently: %s health test",
                            positive(f, "permanent_rct") ? "RCT" : "APT");
        if (ctl_status_get_string(s, "last_error"))
                status_line(out, "        last error: %s (%s read errors)", clip(s, "last_error", err, 48),
                            fmt_count(s, "read_errors", c1));
        render_checks(s, out);
}

static void render_device(Obj *d, FILE *out) {
        char name[23], kind[11], c1[16], c2[16], c3[16], c4[16];
        bool up = true;

        ctl_status_get_bool(d, "up", &up);
        status_line(out, "%-22s %-10s %8s %5s %6s %12s%s", clip(d, "name", name, 22), clip(d, "kind", kind, 10),
                    fmt_count(d, "waiting", c1), fmt_count(d, "waiting_uids", c2), fmt_count(d, "open_files", c3),
                    fmt_bytes(d, "bytes_served", c4), up ? "" : " (down)");
}

/* What truerandom-seed-kernel reported giving the kernel's pool. */
static void render_kernel_feed(Obj *st, FILE *out) {
        Obj *k = ctl_status_get_object(st, "kernel_feed");
        char b1[16], b2[16], b3[32], reason[24];

        if (!k)
                return;
        status_line(out, "Kernel pool: fed %s times, last %s bits (%s) %s ago",
                    fmt_count(k, "feeds", b1), fmt_count(k, "last_bits", b2), clip(k, "last_reason", reason, 23),
                    fmt_duration(k, "last_age_s", b3));
}

/* One hwrng of the list: "virtio_rng.0 (current, quality 1000)", "tpm-rng-0
 * (TPM 0)"; its name cut to 27 columns, so that an item fits a line after
 * the 15 of "Hardware RNGs: " (one with everything at once is cut). */
static void hwrng_item(Obj *h, Obj *dev, bool comma, char buf[static CTL_RENDER_COLUMNS + 1]) {
        char nb[28], c1[16], c2[16], tpm[24] = "", quality[24] = "no quality";
        bool current = ctl_status_is_true(dev, "current");
        const char *name = clip(dev, "name", nb, 27);
        double v;

        if (ctl_status_get_number(dev, "tpm", &v))
                snprintf(tpm, sizeof(tpm), "%sTPM %s", current ? ", " : "", fmt_count(dev, "tpm", c1));
        if (ctl_status_get_number(h, "quality", &v))
                snprintf(quality, sizeof(quality), "quality %s", fmt_count(h, "quality", c2));
        if (current)
                snprintf(buf, CTL_RENDER_COLUMNS + 1, "%s (current%s, %s%s)%s", name,
                         ctl_status_is_true(h, "selected") ? ", set by user" : "", quality, tpm, comma ? "," : "");
        else
                snprintf(buf, CTL_RENDER_COLUMNS + 1, "%s%s%s%s%s", name, tpm[0] ? " (" : "", tpm, tpm[0] ? ")" : "",
                         comma ? "," : "");
}

/* Every hwrng the kernel lists (schema 6), on as many lines as they take:
 * "Hardware RNGs: virtio_rng.0 (current, quality 1000), tpm-rng-0 (TPM 0)". */
static void render_hwrng(Obj *st, FILE *out) {
        static const char head[] = "Hardware RNGs: ";
        const size_t indent = sizeof(head) - 1;
        Obj *h = ctl_status_get_object(st, "hwrng");
        bool truncated = ctl_status_is_true(h, "truncated");
        size_t n = ctl_status_get_count(h, "devices"), len = indent;
        char line[2 * CTL_RENDER_COLUMNS + 2], item[CTL_RENDER_COLUMNS + 1], err[56];

        if (!h)
                return;
        if (!ctl_status_is_true(h, "core")) {
                status_line(out, "%snone (no hw_random core in this kernel)", head);
                return;
        }
        if (ctl_status_get_string(h, "error")) {
                status_line(out, "%sunreadable: %s", head, clip(h, "error", err, 55));
                return;
        }
        if (n == 0 && !truncated) {
                status_line(out, "%snone registered", head);
                return;
        }
        memcpy(line, head, indent + 1);
        for (size_t i = 0; i < n + truncated; i++) {
                if (i < n)
                        hwrng_item(h, ctl_status_get_element(h, "devices", i), i + 1 < n || truncated, item);
                else
                        snprintf(item, sizeof(item), "and more");
                /* A line never exceeds the columns by more than one item. */
                if (len > indent && len + 1 + strlen(item) > CTL_RENDER_COLUMNS) {
                        status_line(out, "%s", line);
                        memset(line, ' ', indent);
                        line[indent] = '\0';
                        len = indent;
                }
                len += (size_t) snprintf(line + len, sizeof(line) - len, "%s%s", len > indent ? " " : "", item);
        }
        status_line(out, "%s", line);
}

/* The EGD socket as a row of the device table: its connections are its
 * open files. */
static void render_egd(Obj *e, FILE *out) {
        char name[23], c1[16], c2[16], c3[16], c4[16];

        status_line(out, "%-22s %-10s %8s %5s %6s %12s", clip(e, "socket", name, 22), "egd",
                    fmt_count(e, "waiting", c1), fmt_count(e, "waiting_uids", c2), fmt_count(e, "connections", c3),
                    fmt_bytes(e, "bytes_served", c4));
}

static void render_trng(const CtlStatus *status, FILE *out) {
        Obj *st = ctl_status_root(status);
        unsigned credited, healthy, failed;
        char b1[16];
        bool serving;

        if (!ctl_status_get_bool(st, "trng_serving", &serving))
                return;
        ctl_status_count_sources(status, &credited, &healthy, &failed);
        status_line(out, "/dev/truerandom: %s; %u of %u credited sources healthy (min_healthy %s)",
                    serving ? "serving" : "not serving", healthy, credited, fmt_count(st, "min_healthy", b1));
}

static void render_reload(Obj *st, FILE *out) {
        Obj *rl = ctl_status_get_object(st, "reload");
        const char *result = ctl_status_get_string(rl, "result");
        char b1[32], b2[16], err[64];

        if (!result || strcmp(result, "none") == 0)
                return;
        if (strcmp(result, "ok") == 0)
                status_line(out, "Last reload: ok, %s ago (%s reloads)", fmt_duration(rl, "age_s", b1),
                            fmt_count(rl, "count", b2));
        else
                status_line(out, "Last reload: REFUSED %s ago, running the previous configuration: %s",
                            fmt_duration(rl, "age_s", b1), clip(rl, "error", err, 60));
}

/* Clones, restores, resumes (schema 3): the verdict on a line of its own,
 * whole (the daemon writes at most 60 columns with an errno text of 23),
 * then what was done: the changes and their purges are the seeder's
 * counts (crng), the resumes the detector's. */
static void render_vm(Obj *st, FILE *out) {
        Obj *vm = ctl_status_get_object(st, "vm_generation"), *rs = ctl_status_get_object(st, "resume"),
            *crng = ctl_status_get_object(st, "crng");
        char detail[62], b1[16], b2[16], b3[16];

        if (!vm)
                return;
        status_line(out, "VM fork detection: %s", clip(vm, "detail", detail, 61));
        status_line(out, "Seen: %s VM generation changes (%s blocks purged), %s resumes from suspend",
                    fmt_count(crng, "vm_generation_changes", b1), fmt_count(crng, "vm_blocks_purged", b2),
                    fmt_count(rs, "jumps", b3));
}

static int render_text(const CtlStatus *status, FILE *out) {
        Obj *st = ctl_status_root(status), *store, *crng, *egd;
        char b1[32], b2[16], b3[16], ver[17];
        double fill, capacity;
        size_t n;

        status_line(out, "truerandomd %s%s%s, up %s", ctl_status_get_string(st, "daemon_version") ? clip(st, "daemon_version", ver, 16) : "",
                    ctl_status_get_string(st, "daemon_version") ? " " : "",
                    ctl_status_is_true(st, "stopping") ? "stopping"
                    : ctl_status_is_true(st, "ready")  ? "serving"
                                                       : "starting",
                    fmt_duration(st, "uptime_s", b1));
        render_trng(status, out);
        render_reload(st, out);

        crng = ctl_status_get_object(st, "crng");
        if (crng && ctl_status_is_true(crng, "seeded"))
                status_line(out, "CRNG: seeded, %s reseeds (generation %s), seed age %s",
                            fmt_count(crng, "reseeds", b2), fmt_count(crng, "generation", b3),
                            fmt_duration(crng, "seed_age_s", b1));
        else if (crng)
                status_line(out, "CRNG: not seeded yet: the drop-in /dev/random blocks");

        render_vm(st, out);
        render_kernel_feed(st, out);
        render_hwrng(st, out);

        store = ctl_status_get_object(st, "store");
        if (ctl_status_get_number(store, "fill", &fill) && ctl_status_get_number(store, "capacity", &capacity) &&
            capacity > 0)
                status_line(out, "Store: %.0f of %.0f blocks ready (%.0f%%), %s served, %s blocks purged", fill,
                            capacity, 100.0 * fill / capacity, fmt_bytes(store, "bytes_served", b2),
                            fmt_count(store, "blocks_purged", b3));

        n = ctl_status_get_count(st, "sources");
        if (n > 0) {
                status_line(out, "%s", "");
                status_line(out, "%-7s %-19s %6s %10s %6s %6s %10s", "SOURCE", "STATE", "CREDIT", "SAMPLES", "RCT",
                            "APT", "BITS/S");
                for (size_t i = 0; i < n; i++)
                        if (ctl_status_get_element(st, "sources", i))
                                render_source(ctl_status_get_element(st, "sources", i), out);
        }

        n = ctl_status_get_count(st, "devices");
        egd = ctl_status_get_object(st, "egd");
        if (n > 0 || egd) {
                status_line(out, "%s", "");
                status_line(out, "%-22s %-10s %8s %5s %6s %12s", "DEVICE", "KIND", "WAITING", "UIDS", "OPEN",
                            "SERVED");
                for (size_t i = 0; i < n; i++)
                        if (ctl_status_get_element(st, "devices", i))
                                render_device(ctl_status_get_element(st, "devices", i), out);
                if (egd)
                        render_egd(egd, out);
        }
        return ferror(out) ? -EIO : 0;
}

int ctl_render_text_full(const CtlStatus *status, FILE *out, bool full) {
        int r;

        whole = full;
        r = render_text(status, out);
        whole = false;
        while (n_kept > 0)
                free(kept[--n_kept]);
        return r;
}

int ctl_render_text(const CtlStatus *status, FILE *out) {
        return ctl_render_text_full(status, out, false);
}
