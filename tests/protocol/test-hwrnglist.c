/* test-hwrnglist.c - every hwrng in the daemon's status (issue 21), against
 * the real daemon in-process (fakedaemon.h) whose sysfs root is a tree of
 * the test's own: the devices of rng_available, the current one marked
 * with its rng_quality, a TPM's RNG with its number, who selected it; what
 * changes in sysfs shows in the next status (it is read when asked, not
 * kept); a kernel without the hw_random core is said as such, not as an
 * error, and an unreadable listing names its error. The same status goes
 * through truerandomctl's renderers: the text line and the OpenMetrics
 * samples a user and a monitor see. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctl/render.h"
#include "fakedaemon.h"

static FakeDaemon *daemon_;
static char hwdir[160];

/* One attribute of the fake hw_random directory; NULL removes it. */
static void attr(const char *name, const char *text) {
        char path[192];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", hwdir, name);
        if (!text) {
                assert_int_equal(unlink(path), 0);
                return;
        }
        f = fopen(path, "we");
        assert_non_null(f);
        assert_int_equal(fputs(text, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
}

static CtlStatus *status(void) {
        CtlStatus *s = NULL;

        assert_int_equal(fakedaemon_status(daemon_, &s), 0);
        return s;
}

static const CtlStatusObject *hwrng(const CtlStatus *s) {
        const CtlStatusObject *h = ctl_status_get_object(ctl_status_root(s), "hwrng");

        assert_non_null(h);
        return h;
}

/* Device i of the listing: its name, whether it is current, its TPM's
 * number (-1: not a TPM's, the JSON's null). */
static void assert_device(const CtlStatusObject *h, size_t i, const char *name, bool current, int tpm) {
        const CtlStatusObject *e = ctl_status_get_element(h, "devices", i);
        bool cur = !current;
        double n = -1;

        assert_non_null(e);
        assert_string_equal(ctl_status_get_string(e, "name"), name);
        assert_true(ctl_status_get_bool(e, "current", &cur));
        assert_int_equal(cur, current);
        assert_int_equal(ctl_status_get_number(e, "tpm", &n), tpm >= 0);
        if (tpm >= 0)
                assert_true(n == tpm);
}

/* What a renderer prints of s (malloc'd). Not inlined: gcc 12 then takes
 * open_memstream()'s buffer for a pointer to this frame (-Wdangling-pointer). */
__attribute__((noinline)) static char *render(const CtlStatus *s, int (*fn)(const CtlStatus *, FILE *)) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        assert_non_null(f);
        assert_int_equal(fn(s, f), 0);
        assert_int_equal(fclose(f), 0);
        return text;
}

static int render_openmetrics(const CtlStatus *s, FILE *f) {
        return ctl_render_metrics(s, CTL_METRICS_OPENMETRICS, f);
}

/* The text's "Hardware RNGs:" line (the first only), printed for the log. */
static void assert_text(const CtlStatus *s, const char *want) {
        char *text = render(s, ctl_render_text), *line = strstr(text, "Hardware RNGs: ");

        assert_non_null(line);
        line[strcspn(line, "\n")] = '\0';
        print_message("text: %s\n", line);
        assert_string_equal(line, want);
        free(text);
}

/* Every line of want (each a whole sample) is a line of the OpenMetrics
 * output; the hwrng lines are printed for the log. */
static void assert_metrics(const CtlStatus *s, const char *const *want) {
        char *text = render(s, render_openmetrics), *copy, *save = NULL;

        copy = strdup(text);
        assert_non_null(copy);
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                if (strstr(l, "truerandom_hwrng_") && l[0] != '#')
                        print_message("openmetrics: %s\n", l);
        free(copy);
        for (size_t i = 0; want[i]; i++) {
                char needle[256];

                snprintf(needle, sizeof(needle), "\n%s\n", want[i]);
                if (!strstr(text, needle))
                        fail_msg("no line \"%s\" in the OpenMetrics output", want[i]);
        }
        free(text);
}

static void test_hwrng_list(void **state) {
        DaemonHooks hooks = { 0 };
        char sys[96], moved[160], json[CTL_REPLY_MAX];
        const CtlStatusObject *h;
        CtlStatus *s;
        Config c;
        double v = 0;
        bool b = true;

        assert_int_equal(fakedaemon_new("hwrng", "hwrng", &daemon_), 0);
        snprintf(sys, sizeof(sys), "%s/sys", daemon_->dir);
        snprintf(hwdir, sizeof(hwdir), "%s/sys/class/misc/hw_random", daemon_->dir);
        for (const char *const *d = (const char *const[]){ "", "/class", "/class/misc", "/class/misc/hw_random", NULL };
             *d; d++) {
                snprintf(moved, sizeof(moved), "%s%s", sys, *d);
                assert_int_equal(mkdir(moved, 0755), 0);
        }
        /* As Debian 12's 6.1 shows it in the vm-tpm guest: the TPM's RNG
         * registered first, the virtio-rng current by its quality. */
        attr("rng_available", "tpm-rng-0 virtio_rng.0 none\n");
        attr("rng_current", "virtio_rng.0\n");
        attr("rng_quality", "1000\n");
        attr("rng_selected", "0\n");
        assert_int_equal(fakedaemon_config(daemon_, &c), 0);
        hooks.sysfs_root = sys;
        assert_int_equal(fakedaemon_start(daemon_, &c, NULL, &hooks), 0);

        s = status();
        assert_true(ctl_status_get_number(ctl_status_root(s), "version", &v) && v == CTL_STATUS_VERSION);
        h = hwrng(s);
        assert_true(ctl_status_is_true(h, "core"));
        assert_null(ctl_status_get_string(h, "error"));
        assert_string_equal(ctl_status_get_string(h, "current"), "virtio_rng.0");
        assert_true(ctl_status_get_number(h, "quality", &v) && v == 1000);
        assert_true(ctl_status_get_bool(h, "selected", &b) && !b);
        assert_true(ctl_status_get_bool(h, "truncated", &b) && !b);
        assert_int_equal(ctl_status_get_count(h, "devices"), 2);
        assert_device(h, 0, "tpm-rng-0", false, 0);
        assert_device(h, 1, "virtio_rng.0", true, -1);
        snprintf(json, sizeof(json), "%s",
                 json_object_to_json_string_ext((struct json_object *) h, JSON_C_TO_STRING_PLAIN));
        print_message("json: \"hwrng\":%s\n", json);
        assert_text(s, "Hardware RNGs: tpm-rng-0 (TPM 0), virtio_rng.0 (current, quality 1000)");
        assert_metrics(s, (const char *const[]){
                "truerandom_hwrng_core 1",
                "truerandom_hwrng_current{current=\"virtio_rng.0\"} 1",
                "truerandom_hwrng_quality 1000",
                "truerandom_hwrng_selected 0",
                "truerandom_hwrng_device_current{device=\"tpm-rng-0\"} 0",
                "truerandom_hwrng_device_current{device=\"virtio_rng.0\"} 1",
                "truerandom_hwrng_device_tpm{device=\"tpm-rng-0\"} 0",
                NULL });
        ctl_status_free(s);

        /* Someone made the TPM's RNG current by hand, on a kernel that
         * offers no rng_quality: the next status says so. */
        attr("rng_current", "tpm-rng-0\n");
        attr("rng_selected", "1\n");
        attr("rng_quality", NULL);
        s = status();
        h = hwrng(s);
        assert_string_equal(ctl_status_get_string(h, "current"), "tpm-rng-0");
        assert_false(ctl_status_get_number(h, "quality", &v));
        assert_true(ctl_status_get_bool(h, "selected", &b) && b);
        assert_device(h, 0, "tpm-rng-0", true, 0);
        assert_device(h, 1, "virtio_rng.0", false, -1);
        assert_text(s, "Hardware RNGs: tpm-rng-0 (current, set by user, no quality, TPM 0), virtio_rng.0");
        ctl_status_free(s);

        /* A name longer than the kernel writes: the listing is refused,
         * and status names why rather than a guess. */
        attr("rng_available", "tpm-rng-0 virtio_rng.0 "
                              "a-name-of-sixty-four-bytes-which-no-kernel-driver-registers-ever\n");
        s = status();
        h = hwrng(s);
        assert_true(ctl_status_is_true(h, "core"));
        assert_string_equal(ctl_status_get_string(h, "error"), strerror(EBADMSG));
        assert_int_equal(ctl_status_get_count(h, "devices"), 0);
        ctl_status_free(s);

        /* No hw_random core (a kernel without CONFIG_HW_RANDOM): said, not
         * an error, nothing listed. */
        snprintf(moved, sizeof(moved), "%s/hw_random.gone", daemon_->dir);
        assert_int_equal(rename(hwdir, moved), 0);
        s = status();
        h = hwrng(s);
        assert_false(ctl_status_is_true(h, "core"));
        assert_true(ctl_status_get_bool(h, "core", &b));
        assert_null(ctl_status_get_string(h, "error"));
        assert_null(ctl_status_get_string(h, "current"));
        assert_int_equal(ctl_status_get_count(h, "devices"), 0);
        assert_text(s, "Hardware RNGs: none (no hw_random core in this kernel)");
        assert_metrics(s, (const char *const[]){ "truerandom_hwrng_core 0", NULL });
        ctl_status_free(s);

        fakedaemon_free(daemon_);
        daemon_ = NULL;
        config_done(&c);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hwrng_list),
        };

        fakedaemon_block_signals();
        return cmocka_run_group_tests(tests, NULL, NULL);
}
