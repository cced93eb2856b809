/* test-assessment.c - credit = auto below the daemon: the machine identity
 * an assessment holds for, reports as JSON, the state file, the credit
 * decision and the assessment thread, as the daemon relies on them:
 *   - auto credit from a stored assessment: half its min-entropy, rounded
 *     down, at most credit_cap; a fresh report and its stored form give the
 *     same credit;
 *   - an identity change forces reassessment: a stored assessment of
 *     another clocksource, kernel, CPU or sampler setting is not used, and
 *     credit = auto then waits for a new one (pending, no credit);
 *   - an identity change found at run time (the machine read again) or a
 *     stored assessment made from fewer samples than [assessment] samples
 *     asks: the assessment no longer holds, the source is pending, and is
 *     credited again from a new one made on the worker with the identity
 *     now read;
 *   - an explicit credit above half the stored estimate is reported
 *     (above_bound), one at or below it is not;
 *   - the state file is written atomically, keeps the other sources, is
 *     readable by auditors, and a damaged or foreign file is refused with a
 *     reason, never half-read;
 *   - the assessment thread measures a synthetic source of known entropy
 *     (P(0) = 1/4, the rest uniform: exactly 2 bits per sample) close to,
 *     and not above, what it is, stores it, and stops when asked. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "assess/assessment.h"
#include "assess/assessor.h"
#include "assess/credit.h"
#include "assess/eajson.h"
#include "assess/identity.h"
#include "config-build.h"
#include "estimate-datasets.h"

static char dir[] = "/tmp/test-assessment-XXXXXX";
static int dirfd_ = -1;

static int setup(void **state) {
        memcpy(dir, "/tmp/test-assessment-XXXXXX", sizeof(dir));
        if (!mkdtemp(dir))
                return -1;
        dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return dirfd_ < 0 ? -1 : 0;
}

static int teardown(void **state) {
        char cmd[128];

        close(dirfd_);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *name, const char *text) {
        int fd = openat(dirfd_, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

/* The biased source: 0 with probability 1/4, else one of 1..255. */
static void biased(uint8_t *buf, size_t n, uint64_t seed) {
        EaRng r;

        ea_rng_seed(&r, seed);
        for (size_t i = 0; i < n; i++) {
                uint64_t v = ea_rng_next(&r);

                buf[i] = (v >> 62) == 0 ? 0 : (uint8_t) (1 + (v & 0xffffffffU) % 255);
        }
}

static void machine(Identity *id) {
        SourceParams p = { .jitter_buffer = 4096 * 1024, .jitter_accesses = 64 };

        identity_read_machine(NULL, id);
        identity_set_sampler(id, "jitter", &p);
}

static Assessment sample_assessment(void) {
        Assessment a = { .date = 1764767611, .duration_usec = 5250000 };
        uint8_t *buf = malloc(20000);

        assert_non_null(buf);
        machine(&a.identity);
        biased(buf, 20000, 1);
        assert_int_equal(ea_non_iid(buf, 20000, 8, &a.report), 0);
        ea_report_round(&a.report);
        free(buf);
        return a;
}

static void assert_report_equal(const EaReport *x, const EaReport *y) {
        assert_int_equal(x->samples, y->samples);
        assert_int_equal(x->bits, y->bits);
        for (unsigned e = 0; e < _EA_MAX; e++) {
                assert_true(isnan(x->original[e]) ? isnan(y->original[e]) : x->original[e] == y->original[e]);
                assert_true(isnan(x->bitstring[e]) ? isnan(y->bitstring[e]) : x->bitstring[e] == y->bitstring[e]);
        }
        assert_true(x->h_original == y->h_original);
        assert_true(isnan(x->h_bitstring) ? isnan(y->h_bitstring) : x->h_bitstring == y->h_bitstring);
        assert_true(x->min_entropy == y->min_entropy);
}

/* ---- identity --------------------------------------------------------------------- */

/* A /sys of the test's own under dir whose clocksource is `clocksource`
 * (made on the first call, rewritten after); its path in sys. */
static void fake_sysfs(const char *clocksource, char sys[static sizeof(dir) + 64]) {
        snprintf(sys, sizeof(dir) + 64, "%s/sys/devices/system/clocksource/clocksource0", dir);
        for (char *p = sys + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                (void) mkdir(sys, 0755);
                *p = '/';
        }
        (void) mkdir(sys, 0755);
        write_file("sys/devices/system/clocksource/clocksource0/current_clocksource", clocksource);
        snprintf(sys, sizeof(dir) + 64, "%s/sys", dir);
}

static void test_identity_reads_the_machine(void **state) {
        char sys[sizeof(dir) + 64];
        struct utsname u;
        Identity id;

        fake_sysfs("hpet\n", sys);
        identity_read_machine(sys, &id);
        assert_string_equal(id.clocksource, "hpet");
        assert_int_equal(uname(&u), 0);
        assert_string_equal(id.kernel, u.release);
        assert_string_equal(id.version, TRUERANDOM_VERSION);
        assert_true(id.cpu_vendor[0] != '\0');
        assert_true(id.hypervisor[0] != '\0');

        /* The CPU as the kernel sees it, where /proc/cpuinfo is readable. */
        FILE *f = fopen("/proc/cpuinfo", "re");
        if (f) {
                char line[256];
                while (fgets(line, sizeof(line), f))
                        if (strncmp(line, "vendor_id", 9) == 0) {
                                line[strcspn(line, "\n")] = '\0';
                                assert_string_equal(strchr(line, ':') + 2, id.cpu_vendor);
                                break;
                        }
                fclose(f);
        }

        /* Without a clocksource file: said so, not left empty. */
        identity_read_machine(dir, &id);
        assert_string_equal(id.clocksource, "unknown");
}

static void test_identity_changes(void **state) {
        SourceParams file = { .path = "/nonexistent/capture.bin" };
        Identity a, b;
        char why[160];

        machine(&a);
        b = a;
        assert_true(identity_equal(&a, &b, why, sizeof(why)));

        snprintf(a.clocksource, sizeof(a.clocksource), "tsc");
        snprintf(b.clocksource, sizeof(b.clocksource), "hpet");
        assert_false(identity_equal(&a, &b, why, sizeof(why)));
        assert_string_equal(why, "clocksource was tsc, now hpet");

        b = a;
        b.accesses = 128;
        assert_false(identity_equal(&a, &b, why, sizeof(why)));
        assert_string_equal(why, "accesses was 64, now 128");
        b = a;
        snprintf(b.kernel, sizeof(b.kernel), "6.1.0-99-amd64");
        assert_false(identity_equal(&a, &b, NULL, 0));
        b = a;
        b.cpu_model++;
        assert_false(identity_equal(&a, &b, NULL, 0));
        b = a;
        snprintf(b.hypervisor, sizeof(b.hypervisor), "TCGTCGTCGTCG");
        assert_false(identity_equal(&a, &b, NULL, 0));

        /* A capture file: its path, size and mtime. */
        write_file("capture.bin", "0123456789");
        char path[sizeof(dir) + 32];
        snprintf(path, sizeof(path), "%s/capture.bin", dir);
        file.path = path;
        identity_set_sampler(&b, "file", &file);
        assert_string_equal(b.source, "file");
        assert_int_equal(b.file_size, 10);
        assert_true(b.file_mtime_ns > 0);
        assert_int_equal(b.buffer_kib, 0);
        a = b;
        write_file("capture.bin", "0123456789abc");
        identity_set_sampler(&b, "file", &file);
        assert_false(identity_equal(&a, &b, why, sizeof(why)));
        assert_string_equal(why, "file_size was 10, now 13");
}

static void test_identity_json(void **state) {
        struct json_object *o, *v;
        Identity a, b;

        machine(&a);
        o = identity_to_json(&a);
        assert_non_null(o);
        memset(&b, 0x5a, sizeof(b));
        assert_int_equal(identity_from_json(o, &b), 0);
        assert_true(identity_equal(&a, &b, NULL, 0));

        json_object_object_add(o, "accesses", json_object_new_int(-1));
        assert_int_equal(identity_from_json(o, &b), -EBADMSG);
        json_object_object_add(o, "accesses", json_object_new_string("64"));
        assert_int_equal(identity_from_json(o, &b), -EBADMSG);
        json_object_object_add(o, "accesses", json_object_new_uint64(1ULL << 40));
        assert_int_equal(identity_from_json(o, &b), -EBADMSG);
        json_object_object_add(o, "accesses", json_object_new_int(64));
        json_object_object_add(o, "clocksource", json_object_new_string("0123456789012345678901234567890123456789"));
        assert_int_equal(identity_from_json(o, &b), -EBADMSG);
        json_object_object_del(o, "clocksource");
        assert_int_equal(identity_from_json(o, &b), -EBADMSG);
        json_object_put(o);
        v = json_object_new_array();
        assert_int_equal(identity_from_json(v, &b), -EBADMSG);
        json_object_put(v);
}

/* ---- reports as JSON ------------------------------------------------------------ */

static void test_report_json(void **state) {
        Assessment a = sample_assessment();
        struct json_object *o = ea_report_to_json(&a.report), *x;
        EaReport back;

        assert_non_null(o);
        /* The members truerandomctl assess --json promises. */
        assert_true(json_object_object_get_ex(o, "h_original", NULL));
        assert_true(json_object_object_get_ex(o, "h_bitstring", NULL));
        assert_true(json_object_object_get_ex(o, "min_entropy", NULL));
        assert_true(json_object_object_get_ex(o, "samples", NULL));
        for (unsigned e = 0; e < _EA_MAX; e++)
                assert_true(json_object_object_get_ex(o, ea_estimator_name(e), NULL));
        /* 8-bit samples: no collision estimate on them, as NIST. */
        assert_true(json_object_object_get_ex(o, "collision", &x));
        assert_true(json_object_object_get_ex(x, "original", &x));
        assert_null(x);

        assert_int_equal(ea_report_from_json(o, &back), 0);
        assert_report_equal(&a.report, &back);

        /* Not ours: an entropy out of range, a result above its own
         * estimators, 9-bit samples. */
        json_object_object_add(o, "min_entropy", json_object_new_double(8.5));
        assert_int_equal(ea_report_from_json(o, &back), -EBADMSG);
        json_object_object_add(o, "min_entropy", json_object_new_double(a.report.h_original + 0.5));
        assert_int_equal(ea_report_from_json(o, &back), -EBADMSG);
        /* Above its own estimators: every estimator low, the summary
         * figures high and consistent with each other. */
        json_object_object_add(o, "min_entropy", json_object_new_double(7.9));
        json_object_object_add(o, "h_original", json_object_new_double(7.9));
        json_object_object_add(o, "h_bitstring", json_object_new_double(0.999));
        assert_int_equal(ea_report_from_json(o, &back), -EBADMSG);
        json_object_object_add(o, "h_original", ea_json_value(a.report.h_original));
        json_object_object_add(o, "min_entropy", ea_json_value(a.report.min_entropy));
        assert_int_equal(ea_report_from_json(o, &back), -EBADMSG);
        json_object_object_add(o, "h_bitstring", ea_json_value(a.report.h_bitstring));
        assert_int_equal(ea_report_from_json(o, &back), 0);
        json_object_object_add(o, "bits", json_object_new_int(9));
        assert_int_equal(ea_report_from_json(o, &back), -EBADMSG);
        json_object_put(o);
}

/* ---- the state file ----------------------------------------------------------------- */

static unsigned count_entries(void) {
        DIR *d = opendir(dir);
        struct dirent *e;
        unsigned n = 0;

        assert_non_null(d);
        while ((e = readdir(d)))
                n += e->d_name[0] != '.' || strncmp(e->d_name, ".assessment", 11) == 0;
        closedir(d);
        return n;
}

static void test_save_and_load(void **state) {
        Assessment a = sample_assessment(), f = sample_assessment(), back;
        SourceParams fp = { .path = "/var/lib/raw.bin" };
        struct stat st;
        char why[256];

        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), -ENOENT);
        assert_int_equal(assessment_save(dirfd_, &a), 0);
        assert_int_equal(fstatat(dirfd_, ASSESSMENT_FILE, &st, 0), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        assert_int_equal(count_entries(), 1);

        memset(&back, 0, sizeof(back));
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), 0);
        assert_true(identity_equal(&a.identity, &back.identity, NULL, 0));
        assert_report_equal(&a.report, &back.report);
        assert_int_equal(back.date, a.date);
        assert_true(fabs(usec_to_seconds(back.duration_usec) - usec_to_seconds(a.duration_usec)) < 0.06);

        /* A second source joins the first. */
        identity_set_sampler(&f.identity, "file", &fp);
        f.report.samples = 12345;
        assert_int_equal(assessment_save(dirfd_, &f), 0);
        assert_int_equal(assessment_load(dirfd_, "file", &back, why, sizeof(why)), 0);
        assert_int_equal(back.report.samples, 12345);
        assert_string_equal(back.identity.path, "/var/lib/raw.bin");
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), 0);
        assert_int_equal(back.report.samples, 20000);
        assert_int_equal(assessment_load(dirfd_, "rdseed", &back, why, sizeof(why)), -ENOENT);
        assert_int_equal(count_entries(), 1);
}

static void test_damaged_or_foreign_files_are_refused(void **state) {
        static const struct {
                const char *text, *why;
        } cases[] = {
                { "", "assessment.json is not JSON" },
                { "garbage", "assessment.json is not JSON" },
                { "{\"format\": \"truerandomd-assessment\", \"version\": 1, \"sources\": {", "is not JSON" },
                { "[1, 2]", "is not a truerandomd assessment" },
                { "{\"format\": \"something-else\", \"version\": 1, \"sources\": {}}", "is not a truerandomd assessment" },
                { "{\"format\": \"truerandomd-assessment\", \"version\": 2, \"sources\": {}}", "version 2, this truerandomd reads 1" },
                { "{\"format\": \"truerandomd-assessment\", \"version\": 1, \"sources\": []}", "no \"sources\" object" },
                { "{\"format\": \"truerandomd-assessment\", \"version\": 1, \"sources\": {}} trailing", "is not JSON" },
                { "{\"format\": \"truerandomd-assessment\", \"version\": 1, \"sources\": {\"jitter\": 1}}",
                  "sources.jitter is not an object" },
                { "{\"format\": \"truerandomd-assessment\", \"version\": 1, \"sources\": {\"jitter\": "
                  "{\"date\": \"yesterday\"}}}", "sources.jitter.date missing or malformed" },
        };
        Assessment a = sample_assessment(), back;
        char why[256];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                write_file(ASSESSMENT_FILE, cases[i].text);
                why[0] = '\0';
                if (assessment_load(dirfd_, "jitter", &back, why, sizeof(why)) != -EBADMSG ||
                    !strstr(why, cases[i].why))
                        fail_msg("case %zu: got \"%s\", want \"%s\"", i, why, cases[i].why);
        }

        /* A well-formed entry with one field tampered: refused too. */
        assert_int_equal(unlinkat(dirfd_, ASSESSMENT_FILE, 0), 0);
        assert_int_equal(assessment_save(dirfd_, &a), 0);
        {
                char text[ASSESSMENT_FILE_MAX + 1], *p;
                int fd = openat(dirfd_, ASSESSMENT_FILE, O_RDONLY | O_CLOEXEC);
                ssize_t n = read(fd, text, sizeof(text) - 1);

                close(fd);
                assert_true(n > 0);
                text[n] = '\0';
                p = strstr(text, "\"min_entropy\"");
                assert_non_null(p);
                memcpy(p, "\"min_entropX\"", 13);
                write_file(ASSESSMENT_FILE, text);
        }
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), -EBADMSG);
        assert_non_null(strstr(why, "sources.jitter.report missing or malformed"));

        /* Saving over a damaged file replaces it. */
        assert_int_equal(assessment_save(dirfd_, &a), 0);
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), 0);

        /* Not a regular file, and not through a symbolic link. */
        assert_int_equal(unlinkat(dirfd_, ASSESSMENT_FILE, 0), 0);
        assert_int_equal(mkdirat(dirfd_, ASSESSMENT_FILE, 0755), 0);
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), -EBADMSG);
        assert_int_equal(unlinkat(dirfd_, ASSESSMENT_FILE, AT_REMOVEDIR), 0);
        assert_int_equal(symlinkat("/etc/passwd", dirfd_, ASSESSMENT_FILE), 0);
        assert_true(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)) < 0);
        assert_int_equal(unlinkat(dirfd_, ASSESSMENT_FILE, 0), 0);
}

/* Only a file root or the directory's owner wrote, in a directory no one
 * else may write, decides a credit. */
static void test_writable_by_others_is_refused(void **state) {
        Assessment a = sample_assessment(), back;
        struct stat st;
        char why[256];

        assert_int_equal(assessment_save(dirfd_, &a), 0);
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), 0);

        assert_int_equal(fchmodat(dirfd_, ASSESSMENT_FILE, 0666, 0), 0);
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), -EPERM);
        assert_non_null(strstr(why, "mode 0666"));
        assert_int_equal(fchmodat(dirfd_, ASSESSMENT_FILE, 0644, 0), 0);

        assert_int_equal(fstat(dirfd_, &st), 0);
        assert_int_equal(fchmod(dirfd_, 01777), 0);
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), -EPERM);
        assert_non_null(strstr(why, "writable by group or others"));
        assert_int_equal(fchmod(dirfd_, st.st_mode & 07777), 0);
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), 0);

        /* Another user's file (root can make one). */
        if (geteuid() == 0) {
                assert_int_equal(fchownat(dirfd_, ASSESSMENT_FILE, 65534, 65534, 0), 0);
                assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), -EPERM);
                assert_non_null(strstr(why, "owned by uid 65534"));
        }
        assert_int_equal(unlinkat(dirfd_, ASSESSMENT_FILE, 0), 0);
}

static void test_failed_save_leaves_nothing(void **state) {
        Assessment a = sample_assessment();
        char sub[sizeof(dir) + 16];
        int fd;

        snprintf(sub, sizeof(sub), "%s/gone", dir);
        assert_int_equal(mkdir(sub, 0755), 0);
        fd = open(sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(rmdir(sub), 0);
        assert_int_equal(assessment_save(fd, &a), -ENOENT);
        close(fd);
        assert_int_equal(count_entries(), 0);
}

/* ---- the credit ------------------------------------------------------------------- */

static void test_auto_credit_from_stored(void **state) {
        Assessment a = sample_assessment(), back;
        SourceConfig sc = { .enable = true, .credit_auto = true, .credit_cap_mbits = 8000 };
        CreditDecision fresh, stored;
        char why[256];

        assert_int_equal(assessment_save(dirfd_, &a), 0);
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), 0);
        credit_decide(&sc, &a, &fresh);
        credit_decide(&sc, &back, &stored);
        assert_int_equal(stored.origin, CREDIT_AUTO);
        assert_int_equal(stored.credit_mbits, (uint32_t) floor(back.report.min_entropy * 500.0));
        assert_int_equal(stored.credit_mbits, stored.bound_mbits);
        assert_int_equal(fresh.credit_mbits, stored.credit_mbits);
        assert_true(stored.has_estimate);
        /* 2 bits per sample exactly: the credit stays under 1 bit. */
        assert_true(stored.credit_mbits > 900 && stored.credit_mbits <= 1000);

        sc.credit_cap_mbits = 500;
        credit_decide(&sc, &back, &stored);
        assert_int_equal(stored.origin, CREDIT_CAPPED);
        assert_int_equal(stored.credit_mbits, 500);
        assert_string_equal(credit_origin_to_string(stored.origin), "capped");

        assert_int_equal(credit_bound_mbits(1.3111), 655);
        assert_int_equal(credit_bound_mbits(0.001), 0);
        assert_int_equal(credit_bound_mbits(NAN), 0);
        assert_int_equal(credit_bound_mbits(-1), 0);
        assert_int_equal(credit_bound_mbits(8.0), 4000);
}

/* What the daemon does at start (autocredit_resolve): the stored
 * assessment counts only for the identity it was made for. */
static void test_identity_change_forces_reassessment(void **state) {
        Assessment a = sample_assessment(), back;
        SourceConfig sc = { .enable = true, .credit_auto = true, .credit_cap_mbits = 1000 };
        SourceParams p = { .jitter_buffer = 8192 * 1024, .jitter_accesses = 64 };
        CreditDecision d;
        Identity now;
        char why[256];

        assert_int_equal(assessment_save(dirfd_, &a), 0);
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), 0);

        now = a.identity;
        assert_true(identity_equal(&back.identity, &now, why, sizeof(why)));
        credit_decide(&sc, &back, &d);
        assert_int_equal(d.origin, CREDIT_AUTO);

        /* Another clocksource: not this machine's assessment any more. */
        snprintf(now.clocksource, sizeof(now.clocksource), "acpi_pm");
        assert_false(identity_equal(&back.identity, &now, why, sizeof(why)));
        credit_decide(&sc, NULL, &d);
        assert_int_equal(d.origin, CREDIT_PENDING);
        assert_int_equal(d.credit_mbits, 0);
        assert_false(d.has_estimate);

        /* A changed sampler setting, likewise. */
        now = a.identity;
        identity_set_sampler(&now, "jitter", &p);
        assert_false(identity_equal(&back.identity, &now, why, sizeof(why)));
        assert_string_equal(why, "buffer_kib was 4096, now 8192");
}

static void test_explicit_above_bound_is_reported(void **state) {
        Assessment a = sample_assessment();
        uint32_t bound = credit_bound_mbits(a.report.min_entropy);
        SourceConfig sc = { .enable = true, .credit_mbits = bound + 1, .credit_cap_mbits = 1000 };
        CreditDecision d;

        credit_decide(&sc, &a, &d);
        assert_int_equal(d.origin, CREDIT_EXPLICIT);
        assert_int_equal(d.credit_mbits, bound + 1);
        assert_true(d.has_estimate);
        assert_int_equal(d.bound_mbits, bound);
        assert_true(d.above_bound);

        sc.credit_mbits = bound;
        credit_decide(&sc, &a, &d);
        assert_false(d.above_bound);
        assert_int_equal(d.credit_mbits, bound);

        /* Nothing measured here: nothing to compare with, nothing said. */
        sc.credit_mbits = 8000;
        credit_decide(&sc, NULL, &d);
        assert_false(d.has_estimate);
        assert_false(d.above_bound);
        assert_int_equal(d.credit_mbits, 8000);
}

/* ---- the assessment thread ------------------------------------------------------- */

typedef struct Fake {
        uint64_t seed;
        bool silent;       /* never a sample: -EAGAIN */
} Fake;

static Fake fake;

static int fake_open(const SourceParams *p, void **ret) {
        EaRng *r = malloc(sizeof(*r));

        if (!r)
                return -ENOMEM;
        ea_rng_seed(r, fake.seed);
        *ret = r;
        return 0;
}

static ssize_t fake_read(void *state, uint8_t *buf, size_t n) {
        EaRng *r = state;

        if (fake.silent)
                return -EAGAIN;
        for (size_t i = 0; i < n; i++) {
                uint64_t v = ea_rng_next(r);
                buf[i] = (v >> 62) == 0 ? 0 : (uint8_t) (1 + (v & 0xffffffffU) % 255);
        }
        return (ssize_t) n;
}

static void fake_close(void *state) {
        free(state);
}

static const SourceOps fake_ops = { .name = "file", .open = fake_open, .read = fake_read, .close = fake_close };

static void on_wake(void *userdata) {
        uint64_t one = 1;

        (void) !write(*(int *) userdata, &one, sizeof(one));
}

static void test_assessor_measures_and_stores(void **state) {
        int efd = eventfd(0, EFD_CLOEXEC);
        AssessorParams p = {
                .ops = &fake_ops,
                .params = { .path = "/fake" },
                .samples = 50000,
                .state_dirfd = dirfd_,
                .wake = on_wake,
                .userdata = &efd,
        };
        bool saw[_ASSESSOR_PHASE_MAX] = { false }, calibrated = false;
        Assessment res, back;
        Assessor *a = NULL;
        int save_error = -1;
        char why[256];

        fake = (Fake){ .seed = 1 };
        identity_read_machine(NULL, &p.identity);
        identity_set_sampler(&p.identity, "file", &p.params);
        assert_int_equal(assessor_start(&p, &a), 0);
        while (!assessor_is_done(a)) {
                struct pollfd pf = { .fd = efd, .events = POLLIN };
                AssessorProgress pr;
                uint64_t n;

                assert_true(poll(&pf, 1, 60000) == 1);
                (void) !read(efd, &n, sizeof(n));
                assessor_get_progress(a, &pr);
                saw[pr.phase] = true;
                calibrated = calibrated || (pr.expected_usec > 0 && pr.capture_rate > 0);
        }
        assert_int_equal(assessor_result(a, &res, &save_error), 0);
        a = assessor_free(a);
        close(efd);
        assert_true(saw[ASSESSOR_DONE]);
        assert_true(calibrated);
        assert_int_equal(save_error, 0);

        /* Exactly 2 bits per sample: measured a little below, never above. */
        assert_int_equal(res.report.samples, 50000);
        assert_true(res.report.min_entropy > 1.85 && res.report.min_entropy <= 2.0);
        assert_true(res.duration_usec > 0);
        assert_string_equal(res.identity.source, "file");

        assert_int_equal(assessment_load(dirfd_, "file", &back, why, sizeof(why)), 0);
        assert_report_equal(&res.report, &back.report);
        assert_int_equal(back.date, res.date);
}

static void test_assessor_stops_when_asked(void **state) {
        AssessorParams p = { .ops = &fake_ops, .samples = 50000, .state_dirfd = dirfd_ };
        Assessment res;
        Assessor *a = NULL;
        int save_error;

        /* A source that never yields: the capture waits (backing off) until
         * it is stopped, and nothing is stored. */
        fake = (Fake){ .seed = 2, .silent = true };
        machine(&p.identity);
        assert_int_equal(assessor_start(&p, &a), 0);
        usleep(100000);
        assert_false(assessor_is_done(a));
        assert_int_equal(assessor_result(a, &res, &save_error), -EBUSY);
        a = assessor_free(a);
        assert_null(a);
        assert_int_equal(count_entries(), 0);

        assert_int_equal(assessor_start(&(AssessorParams){ .ops = &fake_ops, .samples = 5 }, &a), -EINVAL);
        assert_int_equal(assessor_start(&(AssessorParams){ .samples = 50000 }, &a), -EINVAL);
}

/* ---- an assessment that stops holding while the daemon runs ---------------------- */

/* One assessment of the fake source on the worker thread, as the daemon
 * starts it (autocredit.c: the machine as last read, the sampler set), its
 * result stored under dir. */
static void assess_on_worker(const Identity *machine, uint64_t seed, Assessment *ret) {
        int efd = eventfd(0, EFD_CLOEXEC);
        AssessorParams p = {
                .ops = &fake_ops,
                .params = { .path = "/fake" },
                .samples = 20000,
                .identity = *machine,
                .state_dirfd = dirfd_,
                .wake = on_wake,
                .userdata = &efd,
        };
        Assessor *a = NULL;
        int save_error = -1;

        assert_true(efd >= 0);
        fake = (Fake){ .seed = seed };
        identity_set_sampler(&p.identity, "file", &p.params);
        assert_int_equal(assessor_start(&p, &a), 0);
        while (!assessor_is_done(a)) {
                struct pollfd pf = { .fd = efd, .events = POLLIN };
                uint64_t n;

                assert_true(poll(&pf, 1, 60000) == 1);
                (void) !read(efd, &n, sizeof(n));
        }
        assert_int_equal(assessor_result(a, ret, &save_error), 0);
        assert_int_equal(save_error, 0);
        assessor_free(a);
        close(efd);
}

/* The daemon's run-time check (autocredit_recheck): the machine is read
 * again (a timer, a reload, a VM generation change, a resume); when the
 * assessment behind an auto credit no longer holds for it, the source is
 * pending (no credit) until the worker has assessed it again, and is then
 * credited from that new result, stored with the new identity. */
static void test_identity_change_at_run_time(void **state) {
        SourceConfig sc = { .enable = true, .credit_auto = true, .credit_cap_mbits = 8000 };
        SourceParams fp = { .path = "/fake" };
        Identity machine, again, now;
        Assessment held, fresh, back;
        CreditDecision d;
        char sys[sizeof(dir) + 64], why[256];

        /* At start: tsc, assessed, credited from it. */
        fake_sysfs("tsc\n", sys);
        identity_read_machine(sys, &machine);
        assert_string_equal(machine.clocksource, "tsc");
        assess_on_worker(&machine, 3, &held);
        now = machine;
        identity_set_sampler(&now, "file", &fp);
        assert_true(credit_assessment_holds(&held, &now, 20000, why, sizeof(why)));
        credit_decide(&sc, &held, &d);
        assert_int_equal(d.origin, CREDIT_AUTO);
        assert_true(d.credit_mbits > 900);

        /* Read again with nothing changed: it still holds. */
        identity_read_machine(sys, &again);
        assert_true(identity_equal(&machine, &again, NULL, 0));

        /* The kernel marks the TSC unstable and falls back to hpet: read
         * again, the machine is another, the credit in force no longer
         * holds, and with no assessment for this machine the source is
         * pending: not credited. */
        fake_sysfs("hpet\n", sys);
        identity_read_machine(sys, &again);
        assert_false(identity_equal(&machine, &again, why, sizeof(why)));
        assert_string_equal(why, "clocksource was tsc, now hpet");
        now = again;
        identity_set_sampler(&now, "file", &fp);
        assert_false(credit_assessment_holds(&held, &now, 20000, why, sizeof(why)));
        assert_string_equal(why, "holds for another machine or sampler: clocksource was tsc, now hpet");
        /* Nor does what is stored (the same assessment). */
        assert_int_equal(assessment_load(dirfd_, "file", &back, why, sizeof(why)), 0);
        assert_false(credit_assessment_holds(&back, &now, 20000, NULL, 0));
        credit_decide(&sc, NULL, &d);
        assert_int_equal(d.origin, CREDIT_PENDING);
        assert_int_equal(d.credit_mbits, 0);

        /* Assessed again on the worker with the machine as now read: that
         * result is stored with the new identity and credited. */
        assess_on_worker(&again, 4, &fresh);
        assert_string_equal(fresh.identity.clocksource, "hpet");
        assert_true(credit_assessment_holds(&fresh, &now, 20000, why, sizeof(why)));
        credit_decide(&sc, &fresh, &d);
        assert_int_equal(d.origin, CREDIT_AUTO);
        assert_int_equal(d.credit_mbits, credit_bound_mbits(fresh.report.min_entropy));
        assert_int_equal(assessment_load(dirfd_, "file", &back, why, sizeof(why)), 0);
        assert_string_equal(back.identity.clocksource, "hpet");
        assert_true(credit_assessment_holds(&back, &now, 20000, NULL, 0));
}

/* An operator who raises [assessment] samples asks for a more certain
 * estimate: a stored one made from fewer samples is stale (assessed
 * again); one made from as many or more still holds. */
static void test_fewer_samples_than_configured_is_stale(void **state) {
        Assessment a = sample_assessment(), back;
        char why[256];

        assert_int_equal(a.report.samples, 20000);
        assert_int_equal(assessment_save(dirfd_, &a), 0);
        assert_int_equal(assessment_load(dirfd_, "jitter", &back, why, sizeof(why)), 0);
        assert_true(credit_assessment_holds(&back, &a.identity, 20000, why, sizeof(why)));
        assert_true(credit_assessment_holds(&back, &a.identity, 10000, why, sizeof(why)));
        assert_false(credit_assessment_holds(&back, &a.identity, 20001, why, sizeof(why)));
        assert_false(credit_assessment_holds(&back, &a.identity, 1000000, why, sizeof(why)));
        assert_string_equal(why, "was made from 20000 samples, fewer than [assessment] samples = 1000000");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_identity_reads_the_machine, setup, teardown),
                cmocka_unit_test_setup_teardown(test_identity_changes, setup, teardown),
                cmocka_unit_test(test_identity_json),
                cmocka_unit_test(test_report_json),
                cmocka_unit_test_setup_teardown(test_save_and_load, setup, teardown),
                cmocka_unit_test_setup_teardown(test_damaged_or_foreign_files_are_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_writable_by_others_is_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_failed_save_leaves_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(test_auto_credit_from_stored, setup, teardown),
                cmocka_unit_test_setup_teardown(test_identity_change_forces_reassessment, setup, teardown),
                cmocka_unit_test(test_explicit_above_bound_is_reported),
                cmocka_unit_test_setup_teardown(test_assessor_measures_and_stores, setup, teardown),
                cmocka_unit_test_setup_teardown(test_assessor_stops_when_asked, setup, teardown),
                cmocka_unit_test_setup_teardown(test_identity_change_at_run_time, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fewer_samples_than_configured_is_stale, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
