/* test-render.c - the status for people: a typical daemon's report
 * reads as documented, and whatever the daemon sends (huge numbers, long
 * or hostile names, missing fields) stays within 80 printable columns. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/render.h"

static char *render_as(const char *json, bool full) {
        CtlStatus *st = NULL;
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (ctl_status_parse(json, strlen(json), &st) < 0)
                fail_msg("refused: %s", json);
        assert_non_null(f);
        assert_int_equal(full ? ctl_render_text_full(st, f, true) : ctl_render_text(st, f), 0);
        fclose(f);
        ctl_status_free(st);
        return text;
}

static char *render(const char *json) {
        return render_as(json, false);
}

static void assert_fits(const char *text) {
        const char *line = text;

        while (*line) {
                size_t n = strcspn(line, "\n");
                if (n > 80)
                        fail_msg("line of %zu columns: %.*s", n, (int) n, line);
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char) line[i] < 0x20 || (unsigned char) line[i] >= 0x7f)
                                fail_msg("unprintable byte in: %.*s", (int) n, line);
                line += n + (line[n] == '\n');
        }
}

/* As daemon/status.c writes it. */
static const char typical[] =
        "{\"version\":1,\"uptime_s\":3725.4,\"ready\":true,\"stopping\":false,\"sources\":["
        "{\"name\":\"jitter\",\"enabled\":true,\"credited\":true,\"state\":\"healthy\",\"running\":true,"
        "\"credit_bits\":0.300,\"samples\":123456789,\"blocks\":1000,\"credited_bits\":320000,"
        "\"credited_bits_per_s\":1234.5,\"failures\":{\"rct\":0,\"apt\":2,\"permanent_rct\":0,\"permanent_apt\":0},"
        "\"read_errors\":0,\"last_error\":null},"
        "{\"name\":\"rdseed\",\"enabled\":true,\"credited\":true,\"state\":\"unavailable\",\"running\":false,"
        "\"credit_bits\":0.250,\"samples\":0,\"blocks\":0,\"credited_bits\":0,\"credited_bits_per_s\":0.0,"
        "\"failures\":{\"rct\":0,\"apt\":0,\"permanent_rct\":0,\"permanent_apt\":0},\"read_errors\":1,"
        "\"last_error\":\"No such device\"},"
        "{\"name\":\"hwrng\",\"enabled\":true,\"credited\":true,\"state\":\"failed-permanent\",\"running\":false,"
        "\"credit_bits\":4.000,\"samples\":2048,\"blocks\":0,\"credited_bits\":0,\"credited_bits_per_s\":0.0,"
        "\"failures\":{\"rct\":1,\"apt\":0,\"permanent_rct\":0,\"permanent_apt\":1},\"read_errors\":0,"
        "\"last_error\":null},"
        "{\"name\":\"kernel\",\"enabled\":true,\"credited\":false,\"state\":\"mixed\"},"
        "{\"name\":\"file\",\"enabled\":false,\"credited\":false,\"state\":\"disabled\"}],"
        "\"store\":{\"fill\":812,\"capacity\":1024,\"blocks_in\":2000,\"blocks_served\":1100,\"blocks_seeded\":88,"
        "\"blocks_purged\":0,\"bytes_served\":35200,\"credited_bits_in\":640000,\"credited_bits_taken\":352000},"
        "\"devices\":[{\"name\":\"truerandom\",\"kind\":\"truerandom\",\"up\":true,\"open_files\":5,\"waiting\":3,"
        "\"waiting_uids\":2,\"reads\":100,\"bytes_served\":35200,\"eagain\":0,\"interrupted\":0},"
        "{\"name\":\"truerandom-random\",\"kind\":\"random\",\"up\":true,\"open_files\":1,\"waiting\":0,"
        "\"waiting_uids\":0,\"reads\":9,\"bytes_served\":3650722202,\"eagain\":0,\"interrupted\":0}],"
        "\"crng\":{\"seeded\":true,\"generation\":42,\"reseeds\":41,\"seed_age_s\":12.3}}";

static void test_status_typical(void **state) {
        char *text = render(typical);

        assert_fits(text);
        assert_non_null(strstr(text, "truerandomd serving, up 1h 02m\n"));
        assert_non_null(strstr(text, "CRNG: seeded, 41 reseeds (generation 42), seed age 12.3 s\n"));
        assert_non_null(strstr(text, "Store: 812 of 1024 blocks ready (79%), 34.4 KiB served, 0 blocks purged\n"));
        assert_non_null(strstr(text, "jitter  healthy              0.300       123M      0      2     1234.5\n"));
        assert_non_null(strstr(text, "        last error: No such device (1 read errors)\n"));
        assert_non_null(strstr(text, "hwrng   failed-permanent     4.000       2048      1      0        0.0\n"));
        assert_non_null(strstr(text, "        failed permanently: APT health test\n"));
        assert_non_null(strstr(text, "kernel  mixed into CRNG seeds, never credited\n"));
        assert_non_null(strstr(text, "file    disabled\n"));
        assert_non_null(strstr(text, "truerandom             truerandom        3     2      5     34.4 KiB\n"));
        assert_non_null(strstr(text, "truerandom-random      random            0     0      1      3.4 GiB\n"));
        free(text);
}

static void test_status_version_2(void **state) {
        char *text = render("{\"version\":2,\"daemon_version\":\"0.2\",\"ready\":true,\"trng_serving\":false,"
                            "\"min_healthy\":2,\"uptime_s\":5,\"reload\":{\"count\":3,\"result\":\"refused\","
                            "\"age_s\":65,\"error\":\"/etc/truerandomd.conf:12: [pool] min_healthy: not a number "
                            "(an inline comment? they are not allowed)\"},\"sources\":[{\"name\":\"jitter\","
                            "\"credited\":true,\"state\":\"healthy\"}]}");

        assert_fits(text);
        assert_non_null(strstr(text, "truerandomd 0.2 serving, up 5.0 s\n"));
        assert_non_null(strstr(text, "/dev/truerandom: not serving; 1 of 1 credited sources healthy (min_healthy 2)\n"));
        assert_non_null(strstr(text, "Last reload: REFUSED 1m 05s ago, running the previous configuration: /etc/t"));
        assert_non_null(strstr(text, ">\n"));
        free(text);
}

/* Schema 4: how each credit is set, and the running gate's last verdict. */
static void test_status_credit_origin(void **state) {
        char *text = render(
                "{\"version\":4,\"ready\":true,\"sources\":["
                "{\"name\":\"jitter\",\"credited\":true,\"state\":\"healthy\",\"credit_bits\":0.655,"
                "\"credit_origin\":\"auto\",\"credit_cap_bits\":1.000,\"gate\":{\"window\":65536,"
                "\"windows_credited\":12,\"windows_refused\":0,\"refusals\":0,\"last\":\"credited\","
                "\"estimate_bits\":1.311}},"
                "{\"name\":\"file\",\"credited\":true,\"state\":\"refused\",\"credit_bits\":0,"
                "\"credit_origin\":\"explicit\",\"credit_cap_bits\":1.000,\"gate\":{\"window\":4096,"
                "\"windows_credited\":3,\"windows_refused\":2,\"refusals\":1,\"last\":\"refused\","
                "\"estimate_bits\":0.021}},"
                "{\"name\":\"rdseed\",\"credited\":true,\"state\":\"startup\",\"credit_bits\":0,"
                "\"credit_origin\":\"explicit\",\"credit_cap_bits\":0.250,\"gate\":{\"window\":65536,"
                "\"windows_credited\":0,\"windows_refused\":0,\"refusals\":0,\"last\":null,"
                "\"estimate_bits\":null}}]}");

        assert_fits(text);
        assert_non_null(strstr(text, "        credit auto: half of each 65536-sample window's estimate, at most 1.000\n"
                                     "        gate: last released at 1.311 bits, credit 0.655; 12 credited, 0 refused\n"));
        assert_non_null(strstr(text, "        credit 1.000: a window of 4096 counts if it measures twice that\n"
                                     "        gate: last REFUSED at 0.021 bits, credit 0.000; 3 credited, 2 refused\n"));
        assert_non_null(strstr(text, "        credit 0.250: a window of 65536 counts if it measures twice that\n"
                                     "        gate: first window not judged yet\n"));
        free(text);
}

/* A self-test that failed says which check and why, cut to its column. */
static void test_status_checks(void **state) {
        char *text = render("{\"version\":4,\"ready\":true,\"sources\":[{\"name\":\"jitter\",\"credited\":true,"
                            "\"state\":\"unavailable\",\"last_error\":\"sampler self-test failed\","
                            "\"selftest\":{\"result\":\"constant-low-bit\",\"detail\":\"low bit of the reduced delta "
                            "4092 of 4096 one value (limit 3840): a missed clock step\",\"window\":4096,"
                            "\"low_bit\":4092}},"
                            "{\"name\":\"rdseed\",\"credited\":true,\"state\":\"startup\","
                            "\"selftest\":{\"result\":\"passed\",\"words\":64}}]}");

        assert_fits(text);
        assert_non_null(strstr(text, "        last error: sampler self-test failed (- read errors)\n"
                                     "        self-test FAILED (constant-low-bit):\n"
                                     "          low bit of the reduced delta 4092 of 4096 one value (limit 3840): a m>\n"));
        assert_non_null(strstr(text, "        self-test passed: 64 words, none repeated\n"));
        free(text);
}

/* Clones, restores, resumes: the detector's verdict, and the seeder's
 * counts beside the detector's resumes. */
static void test_status_vm(void **state) {
        /* The longest verdict the daemon writes, whole on its line. */
        char *text = render("{\"version\":3,\"ready\":true,\"crng\":{\"seeded\":true,\"vm_generation_changes\":2,"
                            "\"vm_blocks_purged\":4096,\"rekeys\":2},\"vm_generation\":{\"detection\":\"unavailable\","
                            "\"detail\":\"unavailable: kernel log unreadable (Operation not permitted)\","
                            "\"device\":\"QEMUVGID:00\",\"kernel_log\":false,\"uevents\":false,"
                            "\"lost_records\":0,\"last_change_age_s\":null},\"resume\":{\"jumps\":1,"
                            "\"slept_s\":2.4,\"last_age_s\":3.0}}");

        assert_fits(text);
        assert_non_null(strstr(text, "VM fork detection: unavailable: kernel log unreadable (Operation not permitted)\n"));
        assert_non_null(strstr(text, "Seen: 2 VM generation changes (4096 blocks purged), 1 resumes from suspend\n"));
        free(text);
        /* A daemon of schema 2 says nothing about it. */
        text = render("{\"version\":2,\"ready\":true}");
        assert_null(strstr(text, "VM fork"));
        free(text);
}

/* Every hwrng the kernel lists (schema 6): the current one with its
 * quality and who chose it, a TPM's with its number, the list wrapped
 * under its head within 80 columns, a cut list said to be cut. */
static void test_status_hwrng(void **state) {
        static const struct {
                const char *json, *line;
        } said[] = {
                { "{\"version\":6,\"hwrng\":{\"core\":false,\"truncated\":false,\"devices\":[]}}",
                  "\nHardware RNGs: none (no hw_random core in this kernel)\n" },
                { "{\"version\":6,\"hwrng\":{\"core\":true,\"error\":\"Bad message\",\"devices\":[]}}",
                  "\nHardware RNGs: unreadable: Bad message\n" },
                { "{\"version\":6,\"hwrng\":{\"core\":true,\"current\":null,\"devices\":[]}}",
                  "\nHardware RNGs: none registered\n" },
        };
        char json[2048], name[200];
        char *text = render("{\"version\":6,\"hwrng\":{\"core\":true,\"error\":null,\"current\":\"virtio_rng.0\","
                            "\"quality\":1024,\"selected\":true,\"truncated\":true,\"devices\":["
                            "{\"name\":\"virtio_rng.0\",\"current\":true,\"tpm\":null},"
                            "{\"name\":\"tpm-rng-0\",\"current\":false,\"tpm\":0},"
                            "{\"name\":\"tpm-rng-1\",\"current\":false,\"tpm\":1},"
                            "{\"name\":\"intel-rng\",\"current\":false,\"tpm\":null},"
                            "{\"name\":\"timeriomem_rng\",\"current\":false,\"tpm\":null}]}}");

        assert_fits(text);
        assert_non_null(strstr(text, "\nHardware RNGs: virtio_rng.0 (current, set by user, quality 1024),\n"
                                     "               tpm-rng-0 (TPM 0), tpm-rng-1 (TPM 1), intel-rng, timeriomem_rng,\n"
                                     "               and more\n"));
        free(text);

        /* Names no kernel writes: cut to their column and marked, control
         * bytes shown as '?', every line within 80 columns. */
        memset(name, 'n', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        snprintf(json, sizeof(json),
                 "{\"version\":6,\"hwrng\":{\"core\":true,\"quality\":1e30,\"selected\":true,\"devices\":["
                 "{\"name\":\"%s\",\"current\":true,\"tpm\":1e19},{\"name\":\"esc\\u001b[31m\",\"tpm\":7},"
                 "{\"name\":\"%s\"},{},\"junk\"]}}",
                 name, name);
        text = render(json);
        assert_fits(text);
        assert_non_null(strstr(text, "Hardware RNGs: nnnnnnnnnnnnnnnnnnnnnnnnnn> (current, set by user, quality "));
        assert_non_null(strstr(text, "esc?[31m (TPM 7),"));
        assert_non_null(strstr(text, "nnnnnnnnnnnnnnnnnnnnnnnnnn>, -, -\n"));
        free(text);

        /* No core, an unreadable listing, none registered: said as such. */
        for (size_t i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
                text = render(said[i].json);
                if (!strstr(text, said[i].line))
                        fail_msg("no line \"%s\" for %s in:\n%s", said[i].line, said[i].json, text);
                free(text);
        }
        /* A daemon of schema 5 says nothing about it. */
        text = render("{\"version\":5,\"ready\":true}");
        assert_null(strstr(text, "Hardware RNGs"));
        free(text);
}

static void test_status_extremes(void **state) {
        char json[4096], name[200], want[96];
        char *text;

        /* Whatever the daemon sends, lines stay within 80 printable columns. */
        memset(name, 'n', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        snprintf(json, sizeof(json),
                 "{\"version\":7,\"uptime_s\":1e11,\"ready\":false,\"future\":[1,{\"x\":null}],\"sources\":["
                 "{\"name\":\"%s\",\"credited\":true,\"state\":\"%s\",\"credit_bits\":8,"
                 "\"samples\":1.8e19,\"credited_bits_per_s\":1e15,\"failures\":{\"rct\":1e18,\"apt\":99999},"
                 "\"read_errors\":1e19,\"last_error\":\"%s\\u001b[31m\"},"
                 "{\"name\":\"tab\\there\",\"credited\":false,\"state\":\"%s\"},{\"name\":1},\"junk\",7],"
                 "\"store\":{\"fill\":1e9,\"capacity\":1e9,\"bytes_served\":1.8e19,\"blocks_purged\":1e19},"
                 "\"devices\":[{\"name\":\"%s\",\"kind\":\"%s\",\"up\":false,\"waiting\":1e12,\"waiting_uids\":1e12,"
                 "\"open_files\":1e12,\"bytes_served\":1e30}],"
                 "\"crng\":{\"seeded\":true,\"generation\":1e19,\"reseeds\":1e19,\"seed_age_s\":1e10}}",
                 name, name, name, name, name, name);
        text = render(json);
        assert_fits(text);
        assert_non_null(strstr(text, "truerandomd starting"));
        assert_non_null(strstr(text, "(down)"));
        /* Whatever was cut says so: a name cut to its column, a line to 80. */
        assert_non_null(strstr(text, "\nnnnnnn> "));
        snprintf(want, sizeof(want), "        last error: %.47s> (", name);
        assert_non_null(strstr(text, want));
        free(text);

        /* Missing fields show as "-", not as a crash. */
        text = render("{\"version\":1,\"sources\":[{\"credited\":true}],\"devices\":[{}],\"crng\":{},"
                      "\"store\":{\"fill\":\"x\"}}");
        assert_fits(text);
        assert_non_null(strstr(text, "truerandomd starting, up -\n"));
        assert_non_null(strstr(text, "CRNG: not seeded yet"));
        free(text);
}

/* Whole lines (a pipe, a file, --full): a long reason and a long name come
 * whole, nothing is marked cut, and every byte is still made printable;
 * the same status for a terminal is cut. */
static void test_status_whole(void **state) {
        char json[4096], name[200], reason[300], want[400];
        char *text;

        memset(name, 'n', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        snprintf(reason, sizeof(reason), "/etc/truerandomd.conf:12: %s", "trng_mode must be an octal mode "
                 "such as 0440, at most 0777, with no bit for others when the group is set");
        snprintf(json, sizeof(json),
                 "{\"version\":8,\"uptime_s\":5,\"ready\":true,\"reload\":{\"count\":1,\"result\":\"refused\","
                 "\"age_s\":65,\"error\":\"%s\"},\"sources\":[{\"name\":\"jitter\",\"credited\":true,"
                 "\"state\":\"unavailable\",\"credit_bits\":1,\"samples\":1,\"credited_bits_per_s\":0,"
                 "\"failures\":{\"rct\":0,\"apt\":0},\"read_errors\":1,\"last_error\":\"%s\\u001b\"}],"
                 "\"devices\":[{\"name\":\"%s\",\"kind\":\"truerandom\",\"up\":true}]}",
                 reason, name, name);
        text = render_as(json, true);
        assert_non_null(strstr(text, reason));
        snprintf(want, sizeof(want), "        last error: %s? (", name);
        assert_non_null(strstr(text, want));
        snprintf(want, sizeof(want), "\n%s ", name);
        assert_non_null(strstr(text, want));
        assert_null(strchr(text, '>'));
        for (const char *c = text; *c; c++)
                assert_true(*c == '\n' || ((unsigned char) *c >= 0x20 && (unsigned char) *c < 0x7f));
        free(text);
        text = render_as(json, false);
        assert_fits(text);
        assert_null(strstr(text, reason));
        assert_non_null(strchr(text, '>'));
        free(text);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_status_whole),
                cmocka_unit_test(test_status_typical),
                cmocka_unit_test(test_status_credit_origin),
                cmocka_unit_test(test_status_extremes),
                cmocka_unit_test(test_status_checks),
                cmocka_unit_test(test_status_version_2),
                cmocka_unit_test(test_status_vm),
                cmocka_unit_test(test_status_hwrng),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
