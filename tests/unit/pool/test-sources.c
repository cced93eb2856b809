/* test-sources.c - each source against what a user of it would notice:
 * replayed files come back byte for byte and end or loop as asked, pacing
 * asks for the right amount of sleep, jitter's clock step is divided out,
 * RDSEED exists exactly when CPUID says so and its retries are bounded, the
 * kernel source is never credited, and /dev/hwrng errors come straight up
 * (one device read per call, no retry loop) while its credit follows sysfs
 * (nothing for a virtio-rng or a TPM's RNG).
 * Faults are injected by wrapping read(), poll() and clock_nanosleep(). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "pool/source.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* ---- wrapped libc ---------------------------------------------------- */

static struct {
        bool armed;          /* reads are faked while set */
        int error;           /* > 0: read fails with it */
        ssize_t length;      /* >= 0: read returns at most this many bytes */
        unsigned reads;
        bool poll_fake;
        int poll_result;     /* when poll_fake: 0 timeout, -1 error, 1 ready */
        int poll_errno;
        short poll_revents;
        unsigned polls;
        int poll_timeout;
        unsigned sleeps;
        uint64_t slept_ns;
} fake;

ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);
int __real_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout);
int __wrap_clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem);

ssize_t __wrap_read(int fd, void *buf, size_t n) {
        if (!fake.armed)
                return __real_read(fd, buf, n);
        fake.reads++;
        if (fake.error > 0) {
                errno = fake.error;
                return -1;
        }
        if (fake.length >= 0 && (size_t) fake.length < n)
                n = (size_t) fake.length;
        if (n == 0)
                return 0;
        return __real_read(fd, buf, n);
}

int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout) {
        fake.polls++;
        fake.poll_timeout = timeout;
        if (!fake.poll_fake)
                return __real_poll(fds, n, timeout);
        if (fake.poll_result < 0) {
                errno = fake.poll_errno;
                return -1;
        }
        fds[0].revents = fake.poll_result > 0 ? fake.poll_revents : 0;
        return fake.poll_result;
}

/* Records the requested sleep instead of sleeping: pacing is checked by
 * what was asked for, not by the wall clock. */
int __wrap_clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem) {
        assert_int_equal(clock, CLOCK_MONOTONIC);
        assert_int_equal(flags, 0);
        fake.sleeps++;
        fake.slept_ns += (uint64_t) req->tv_sec * 1000000000U + (uint64_t) req->tv_nsec;
        return 0;
}

static int reset_fake(void **state) {
        memset(&fake, 0, sizeof(fake));
        fake.length = -1;
        return 0;
}

/* ---- helpers --------------------------------------------------------- */

static uint64_t xorshift(uint64_t *s) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

static void fill_seeded(uint8_t *buf, size_t n, uint64_t seed) {
        for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t) (xorshift(&seed) >> 32);
}

static void write_file(const char *path, const void *data, size_t n) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, n), (ssize_t) n);
        close(fd);
}

static void write_text(const char *dir, const char *name, const char *text) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        write_file(path, text, strlen(text));
}

static char *make_tempdir(void) {
        char tmpl[] = "/tmp/test-sources-XXXXXX";
        char *dir = mkdtemp(tmpl);

        assert_non_null(dir);
        return strdup(dir);
}

static void remove_tree(char *dir) {
        DIR *d = opendir(dir);
        struct dirent *e;

        assert_non_null(d);
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                        assert_int_equal(unlinkat(dirfd(d), e->d_name, 0), 0);
        closedir(d);
        assert_int_equal(rmdir(dir), 0);
        free(dir);
}

/* ---- table ------------------------------------------------------------ */

static void test_lookup(void **state) {
        const char *names[] = { "jitter", "rdseed", "hwrng", "tpm", "kernel", "file" };
        size_t n = 0;

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                const SourceOps *ops = source_lookup(names[i]);

                assert_non_null(ops);
                assert_string_equal(ops->name, names[i]);
        }
        assert_null(source_lookup("jitterx"));
        assert_null(source_lookup(""));
        assert_null(source_lookup(NULL));
        while (source_all[n])
                n++;
        assert_int_equal(n, 6);
}

/* Every row says what the configuration, reload, --check-config and the
 * help read from it, and nothing they would misread. */
static void test_rows(void **state) {
        static const char *const common[] = { "enable", "credit", "credit_cap" };

        for (const SourceOps *const *s = source_all; *s; s++) {
                const SourceOps *o = *s;
                const SourceDefaults *d = &o->defaults;
                bool has_path = false;

                assert_non_null(o->help);
                assert_true(strlen(o->help) > 0 && strlen(o->help) < 80);
                assert_true(o->open && o->read && o->max_credit && o->close);
                assert_true(d->credit_mbits <= 8000 && d->credit_cap_mbits <= 8000);
                /* auto and its cap only where the estimators judge the noise. */
                if (o->credit != SOURCE_CREDIT_MEASURED)
                        assert_true(!d->credit_auto && d->credit_cap_mbits == 0);
                if (d->credit_auto)
                        assert_true(d->credit_mbits == 0 && d->credit_cap_mbits > 0);
                if (o->credit == SOURCE_CREDIT_NEVER)
                        assert_true(d->credit_mbits == 0 && !o->credit_required);
                for (int k = 0; k < SOURCE_KEYS_MAX && o->keys[k].name; k++) {
                        const SourceKey *key = &o->keys[k];

                        for (size_t c = 0; c < sizeof(common) / sizeof(common[0]); c++)
                                assert_string_not_equal(key->name, common[c]);
                        for (int j = 0; j < k; j++)
                                assert_string_not_equal(key->name, o->keys[j].name);
                        assert_true(key->offset < sizeof(SourceParams));
                        assert_true(key->min <= key->max);
                        if (key->offset == offsetof(SourceParams, path)) {
                                assert_true(key->type == SOURCE_KEY_PATH || key->type == SOURCE_KEY_PATH_NONE);
                                has_path = true;
                        }
                }
                /* A default path only where a key can change it; one that
                 * may not be none, always. */
                if (d->params.path)
                        assert_true(has_path && d->params.path[0] == '/');
                for (int k = 0; k < SOURCE_KEYS_MAX && o->keys[k].name; k++)
                        if (o->keys[k].type == SOURCE_KEY_PATH)
                                assert_non_null(d->params.path);
        }
}

/* ---- file --------------------------------------------------------------- */

#define FILE_SIZE 10007U

static void test_file_replays_then_ends(void **state) {
        char *dir = make_tempdir(), path[PATH_MAX];
        uint8_t data[FILE_SIZE], got[FILE_SIZE + 100];
        SourceParams p = { .path = path };
        size_t total = 0;
        void *s;
        ssize_t r;

        snprintf(path, sizeof(path), "%s/raw", dir);
        fill_seeded(data, sizeof(data), 42);
        write_file(path, data, sizeof(data));

        assert_int_equal(source_file.open(&p, &s), 0);
        /* An odd chunk size so the end falls inside a read. */
        while ((r = source_file.read(s, got + total, 777)) > 0)
                total += (size_t) r;
        assert_int_equal(r, -ENODATA);
        assert_int_equal(total, FILE_SIZE);
        assert_memory_equal(got, data, FILE_SIZE);
        /* The end stays the end. */
        assert_int_equal(source_file.read(s, got, 10), -ENODATA);
        assert_int_equal(source_file.max_credit(s), UINT32_MAX);
        source_file.close(s);
        assert_int_equal(fake.sleeps, 0);
        remove_tree(dir);
}

static void test_file_loops(void **state) {
        char *dir = make_tempdir(), path[PATH_MAX];
        uint8_t data[FILE_SIZE];
        static uint8_t got[3 * FILE_SIZE];
        SourceParams p = { .path = path, .loop = true };
        size_t total = 0;
        void *s;

        snprintf(path, sizeof(path), "%s/raw", dir);
        fill_seeded(data, sizeof(data), 7);
        write_file(path, data, sizeof(data));

        assert_int_equal(source_file.open(&p, &s), 0);
        while (total < sizeof(got)) {
                ssize_t r = source_file.read(s, got + total, MIN(sizeof(got) - total, 4096));

                assert_true(r > 0);
                total += (size_t) r;
        }
        for (unsigned k = 0; k < 3; k++)
                assert_memory_equal(got + k * FILE_SIZE, data, FILE_SIZE);
        source_file.close(s);
        remove_tree(dir);
}

static void test_file_errors(void **state) {
        char *dir = make_tempdir(), path[PATH_MAX];
        SourceParams none = { 0 }, missing = { .path = path }, empty = { .path = path, .loop = true };
        uint8_t buf[16];
        void *s;

        assert_int_equal(source_file.open(&none, &s), -EINVAL);
        assert_int_equal(source_file.open(NULL, &s), -EINVAL);
        snprintf(path, sizeof(path), "%s/absent", dir);
        assert_int_equal(source_file.open(&missing, &s), -ENOENT);

        /* An empty file cannot loop forever returning nothing. */
        write_file(path, "", 0);
        assert_int_equal(source_file.open(&empty, &s), 0);
        assert_int_equal(source_file.read(s, buf, sizeof(buf)), -ENODATA);
        source_file.close(s);
        remove_tree(dir);
}

static void test_file_pacing(void **state) {
        char *dir = make_tempdir(), path[PATH_MAX];
        uint8_t data[FILE_SIZE], buf[4096];
        SourceParams p = { .path = path, .rate = 100 };
        size_t total = 0;
        void *s;

        snprintf(path, sizeof(path), "%s/raw", dir);
        fill_seeded(data, sizeof(data), 9);
        write_file(path, data, sizeof(data));

        /* 1000 samples at 100/s: ten seconds of sleep asked for, and no
         * read returns more than one second's worth. */
        assert_int_equal(source_file.open(&p, &s), 0);
        while (total < 1000) {
                ssize_t r = source_file.read(s, buf, MIN(sizeof(buf), 1000 - total));

                assert_true(r > 0 && r <= 100);
                assert_memory_equal(buf, data + total, (size_t) r);
                total += (size_t) r;
        }
        assert_int_equal(fake.sleeps, 10);
        assert_int_equal(fake.slept_ns, 10ULL * 1000000000ULL);
        source_file.close(s);

        /* A fast rate sleeps in proportion: 5000 samples at 1e6/s = 5 ms. */
        memset(&fake, 0, sizeof(fake));
        fake.length = -1;
        p.rate = 1000000;
        total = 0;
        assert_int_equal(source_file.open(&p, &s), 0);
        while (total < 5000) {
                ssize_t r = source_file.read(s, buf, MIN(sizeof(buf), 5000 - total));

                assert_true(r > 0);
                total += (size_t) r;
        }
        assert_int_equal(fake.slept_ns, 5000000ULL);
        source_file.close(s);
        remove_tree(dir);
}

/* ---- jitter --------------------------------------------------------------- */

/* A FIFO without a writer must not hang whoever opens it (the daemon's
 * loop): open returns at once, reads say "later" until a writer came, and
 * "ended" once it is gone. */
static void test_file_fifo(void **state) {
        char path[64] = "/tmp/truerandom-fifo-XXXXXX";
        uint8_t buf[16];
        void *s;
        int w;

        assert_non_null(mkdtemp(path));
        strcat(path, "/fifo");
        assert_int_equal(mkfifo(path, 0600), 0);
        assert_int_equal(source_file.open(&(SourceParams){ .path = path }, &s), 0);
        assert_int_equal(source_file.read(s, buf, sizeof(buf)), -EAGAIN);
        w = open(path, O_WRONLY | O_CLOEXEC);
        assert_true(w >= 0);
        assert_int_equal(write(w, "abc", 3), 3);
        assert_int_equal(source_file.read(s, buf, sizeof(buf)), 3);
        assert_memory_equal(buf, "abc", 3);
        close(w);
        assert_int_equal(source_file.read(s, buf, sizeof(buf)), -ENODATA);
        source_file.close(s);
        unlink(path);
        *strrchr(path, '/') = '\0';
        rmdir(path);
}

/* ---- jitter: the self-test at open ------------------------------------------- */

/* A clock for the jitter source, restarted before each open: walks of
 * 2000..2199 ticks of `step`, except that the first `collapse` reads after
 * the restart advance by one fixed amount (in 95 % of reads when
 * `nearly`), one read (`odd_at`) is one tick off the step, every
 * `back_every`-th read lags 5000 ticks (two walks) behind, and the clock reads through
 * `& ~(granularity - 1)`. */
static struct {
        uint64_t step, granularity, t, seed;
        unsigned long reads, collapse, odd_at, back_every;
        bool nearly;
} fclock;

static void fclock_restart(uint64_t step) {
        memset(&fclock, 0, sizeof(fclock));
        fclock.step = step;
        fclock.granularity = 1;
        fclock.t = 1U << 30;
        fclock.seed = 0x9e3779b97f4a7c15ULL;
}

static uint64_t fake_jitter_clock(void) {
        unsigned long n = fclock.reads++;
        uint64_t r = xorshift(&fclock.seed);

        if (n < fclock.collapse && (!fclock.nearly || r % 100 < 95))
                fclock.t += fclock.step * 1000;
        else
                fclock.t += fclock.step * (2000 / fclock.step + r % 200);
        if (n == fclock.odd_at)
                fclock.t += 1;
        if (fclock.back_every && n % fclock.back_every == fclock.back_every - 1)
                return (fclock.t - 5000) & ~(fclock.granularity - 1);
        return fclock.t & ~(fclock.granularity - 1);
}

static unsigned row_max(const uint8_t *row, size_t n) {
        unsigned count[256] = { 0 }, max = 0;

        for (size_t i = 0; i < n; i++)
                if (++count[row[i]] > max)
                        max = count[row[i]];
        return max;
}

static void read_full(void *s, uint8_t *buf, size_t n) {
        for (size_t got = 0; got < n;) {
                ssize_t r = source_jitter.read(s, buf + got, n - got);

                assert_true(r > 0);
                got += (size_t) r;
        }
}

/* What a broken clock or sampler looks like at open: each is refused
 * (-EDOM) with its reason, so nothing of it is ever read or credited. */
static void test_jitter_selftest_refuses(void **state) {
        SelftestResult r = { 0 };
        SourceParams p = { .jitter_buffer = 65536, .jitter_clock = fake_jitter_clock, .selftest = &r };
        uint32_t warmup = selftest_warmup_samples(65536, 64);
        void *s = NULL;

        /* A clock wrapped to coarse steps: most walks see no tick. */
        fclock_restart(1);
        fclock.granularity = 1U << 14;
        assert_int_equal(source_jitter.open(&p, &s), -EDOM);
        assert_int_equal(r.reason, SELFTEST_COARSE_CLOCK);

        /* A clock that goes back every 500 reads. */
        fclock_restart(1);
        fclock.back_every = 500;
        assert_int_equal(source_jitter.open(&p, &s), -EDOM);
        assert_int_equal(r.reason, SELFTEST_CLOCK_BACKWARDS);

        /* The row right after the warm-up nearly stuck (the restart row of
         * the issue, made worse): refused. Open reads the clock twice
         * before the first delta. */
        fclock_restart(26);
        fclock.collapse = 2 + warmup + SELFTEST_ROW;
        fclock.nearly = true;
        assert_int_equal(source_jitter.open(&p, &s), -EDOM);
        assert_int_equal(r.reason, SELFTEST_STUCK_AFTER_OPEN);

        /* Stuck for longer than the whole window: refused. */
        fclock_restart(26);
        fclock.collapse = 6000;
        assert_int_equal(source_jitter.open(&p, &s), -EDOM);
        assert_int_equal(r.reason, SELFTEST_FEW_VALUES);
        assert_int_equal(r.warmup, warmup);
}

/* What a working one looks like: opened, and its first samples are
 * already the steady ones. */
static void test_jitter_selftest_passes(void **state) {
        SelftestResult r = { 0 };
        SourceParams p = { .jitter_buffer = 65536, .jitter_clock = fake_jitter_clock, .selftest = &r };
        uint32_t warmup = selftest_warmup_samples(65536, 64);
        static uint8_t buf[4096];
        unsigned odd = 0;
        void *s;

        /* A collapse inside the warm-up is thrown away with it. */
        fclock_restart(26);
        fclock.collapse = warmup - 10;
        assert_int_equal(source_jitter.open(&p, &s), 0);
        assert_true(r.run);
        assert_int_equal(r.reason, SELFTEST_PASSED);
        read_full(s, buf, SELFTEST_ROW);
        assert_true(row_max(buf, SELFTEST_ROW) < 40);
        source_jitter.close(s);

        /* A clock stepping by 26 with one odd delta in the window: still
         * divided by 26, so the lowest bit keeps varying (the plain GCD
         * of the window was 1, and every sample even). */
        fclock_restart(26);
        fclock.odd_at = warmup + 2000;
        assert_int_equal(source_jitter.open(&p, &s), 0);
        assert_int_equal(r.step, 26);
        read_full(s, buf, sizeof(buf));
        for (size_t i = 0; i < sizeof(buf); i++)
                odd += buf[i] & 1;
        assert_true(odd > sizeof(buf) / 4 && odd < sizeof(buf) * 3 / 4);
        source_jitter.close(s);
}

/* The sampler's output through an injected clock stepping by 26 (so every
 * assertion holds on a loaded machine): credited what it measures, at most 1
 * bit per sample; the GCD division makes the low bit vary (undivided, a
 * clock stepping by an even number would leave it constant); small buffers
 * and few accesses are accepted, odd sizes are not. */
static void test_jitter_samples(void **state) {
        SourceParams p = { .jitter_clock = fake_jitter_clock };
        static uint8_t buf[65536];
        unsigned count[256] = { 0 }, distinct = 0, odd = 0;
        void *s;

        assert_int_equal(source_jitter.credit, SOURCE_CREDIT_MEASURED);
        assert_true(source_jitter.defaults.credit_auto);
        assert_int_equal(source_jitter.defaults.credit_cap_mbits, 1000);
        fclock_restart(26);
        assert_int_equal(source_jitter.open(&p, &s), 0);
        read_full(s, buf, sizeof(buf));
        for (size_t i = 0; i < sizeof(buf); i++)
                count[buf[i]]++;
        for (unsigned v = 0; v < 256; v++) {
                distinct += count[v] > 0;
                if (v & 1)
                        odd += count[v];
        }
        assert_true(odd > 0 && odd < sizeof(buf));
        assert_true(distinct >= 16);
        assert_int_equal(source_jitter.max_credit(s), UINT32_MAX);
        source_jitter.close(s);

        fclock_restart(26);
        p.jitter_buffer = 1 << 16;
        p.jitter_accesses = 8;
        assert_int_equal(source_jitter.open(&p, &s), 0);
        assert_true(source_jitter.read(s, buf, 100) == 100);
        source_jitter.close(s);
        p.jitter_buffer = 100000;
        assert_int_equal(source_jitter.open(&p, &s), -EINVAL);
}

/* Restarts: a sampler whose first reads after open run in a collapsed
 * regime (the cold cache of a restart, which made NIST's restart sanity
 * check fail) hands out rows that look like its own steady rows 20,000
 * samples later, because the collapse falls inside the warm-up that open
 * throws away. The clock is injected, so this holds under any load; the
 * real sampler's figures on this machine are printed by bench-sources. */
static void test_jitter_restarts(void **state) {
        enum { OPENS = 50, GAP = 20000 };
        static uint8_t row[SELFTEST_ROW], gap[GAP];
        uint32_t warmup = selftest_warmup_samples(65536, 64);
        unsigned first = 0, later = 0;

        for (unsigned i = 0; i < OPENS; i++) {
                SelftestResult r = { 0 };
                SourceParams p = { .jitter_buffer = 65536, .jitter_clock = fake_jitter_clock, .selftest = &r };
                char why[256];
                void *s;

                fclock_restart(26);
                fclock.seed += i;
                fclock.collapse = warmup - 1 - i % 16;
                fclock.nearly = true;
                if (source_jitter.open(&p, &s) != 0)
                        fail_msg("open %u: %s", i, selftest_describe(&r, why, sizeof(why)));
                assert_int_equal(r.warmup, warmup);
                read_full(s, row, sizeof(row));
                first = MAX(first, row_max(row, sizeof(row)));
                read_full(s, gap, sizeof(gap));
                read_full(s, row, sizeof(row));
                later = MAX(later, row_max(row, sizeof(row)));
                source_jitter.close(s);
        }
        /* A steady row (1000 samples over 200 values) holds its most common
         * value about 12 times; a collapsed one about 950 times. */
        assert_true(first < 40);
        assert_true(later < 40);
}

/* ---- rdseed ----------------------------------------------------------------- */

static bool cpu_has_rdseed(void) {
#if defined(__x86_64__)
        unsigned a, b, c, d;

        if (__get_cpuid_max(0, NULL) < 7 || !__get_cpuid_count(7, 0, &a, &b, &c, &d))
                return false;
        return (b >> 18) & 1;
#else
        return false;
#endif
}

static void test_rdseed_matches_cpuid(void **state) {
        uint8_t buf[64];
        void *s;
        int r;

        assert_int_equal(source_rdseed.defaults.credit_mbits, 250);
        r = source_rdseed.open(NULL, &s);
        if (!cpu_has_rdseed()) {
                assert_int_equal(r, -ENODEV);
                return;
        }
        assert_int_equal(r, 0);
        for (int i = 0; i < 10; i++) {
                ssize_t n = source_rdseed.read(s, buf, sizeof(buf));

                assert_true(n == -EAGAIN || (n > 0 && n <= (ssize_t) sizeof(buf)));
        }
        source_rdseed.close(s);
}

static unsigned step_calls, step_successes_left;
static uint64_t step_value;

static bool step_fake(uint64_t *ret) {
        step_calls++;
        if (step_successes_left == 0)
                return false;
        step_successes_left--;
        *ret = step_value++;
        return true;
}

static void test_rdseed_retry_bound(void **state) {
        uint8_t buf[32];
        uint64_t failures = 0, w;

        /* A device that never delivers: exactly the bound, then -EAGAIN. */
        step_calls = 0;
        step_successes_left = 0;
        assert_int_equal(source_rdseed_fill(step_fake, 100, buf, sizeof(buf), &failures), -EAGAIN);
        assert_int_equal(step_calls, 100);
        assert_int_equal(failures, 100);

        /* Two words, then nothing: what it has, 16 bytes, and one more
         * bounded round of attempts for the third word. */
        step_calls = 0;
        failures = 0;
        step_successes_left = 2;
        step_value = 0x0102030405060708ULL;
        assert_int_equal(source_rdseed_fill(step_fake, 100, buf, sizeof(buf), &failures), 16);
        assert_int_equal(step_calls, 102);
        assert_int_equal(failures, 100);
        w = 0x0102030405060708ULL;
        assert_memory_equal(buf, &w, 8);

        /* A short tail takes a prefix of the last word. */
        step_calls = 0;
        step_successes_left = 10;
        step_value = 0x1111111111111111ULL;
        assert_int_equal(source_rdseed_fill(step_fake, 3, buf, 13, NULL), 13);
        assert_int_equal(step_calls, 2);
        w = 0x1111111111111112ULL;
        assert_memory_equal(buf + 8, &w, 5);

        assert_int_equal(source_rdseed_fill(step_fake, 0, buf, 8, NULL), -EINVAL);
}

/* ---- kernel --------------------------------------------------------------- */

static void test_kernel_never_credited(void **state) {
        uint8_t a[64], b[64];
        void *s;

        assert_int_equal(source_kernel.credit, SOURCE_CREDIT_NEVER);
        assert_int_equal(source_kernel.defaults.credit_mbits, 0);
        assert_int_equal(source_kernel.open(NULL, &s), 0);
        assert_int_equal(source_kernel.max_credit(s), 0);
        assert_int_equal(source_kernel.read(s, a, sizeof(a)), sizeof(a));
        assert_int_equal(source_kernel.read(s, b, sizeof(b)), sizeof(b));
        assert_memory_not_equal(a, b, sizeof(a));
        source_kernel.close(s);
}

/* ---- hwrng ---------------------------------------------------------------- */

typedef struct Hw {
        char *dir;
        char dev[PATH_MAX];
        SourceParams p;
} Hw;

static void hw_setup(Hw *h, const char *current, const char *quality) {
        uint8_t data[4096];

        h->dir = make_tempdir();
        snprintf(h->dev, sizeof(h->dev), "%s/hwrng", h->dir);
        fill_seeded(data, sizeof(data), 1234);
        write_file(h->dev, data, sizeof(data));
        if (current)
                write_text(h->dir, "rng_current", current);
        if (quality)
                write_text(h->dir, "rng_quality", quality);
        h->p = (SourceParams) { .path = h->dev, .sysfs_dir = h->dir };
}

static uint32_t hw_credit(const char *current, const char *quality) {
        uint32_t credit;
        Hw h;
        void *s;

        hw_setup(&h, current, quality);
        assert_int_equal(source_hwrng.open(&h.p, &s), 0);
        credit = source_hwrng.max_credit(s);
        source_hwrng.close(s);
        remove_tree(h.dir);
        return credit;
}

static void test_hwrng_quality(void **state) {
        assert_int_equal(hw_credit("intel-rng\n", "1024\n"), 8000);
        assert_int_equal(hw_credit("intel-rng\n", "512\n"), 4000);
        /* 1000 * 8000 / 1024 = 7812.5: rounded down, never up. */
        assert_int_equal(hw_credit("intel-rng\n", "1000\n"), 7812);
        assert_int_equal(hw_credit("intel-rng\n", "1\n"), 7);
        assert_int_equal(hw_credit("intel-rng\n", "0\n"), 0);
        assert_int_equal(hw_credit("intel-rng\n", "abc\n"), 0);
        assert_int_equal(hw_credit("intel-rng\n", "-5\n"), 0);
        assert_int_equal(hw_credit("intel-rng\n", "1025\n"), 0);
        assert_int_equal(hw_credit("intel-rng\n", "12x\n"), 0);
        assert_int_equal(hw_credit("intel-rng\n", ""), 0);
        assert_int_equal(hw_credit("intel-rng\n", NULL), 0);
        /* No rng_current at all: the quality alone decides. */
        assert_int_equal(hw_credit(NULL, "256"), 2000);
        /* A virtio-rng forwards the host: worth nothing whatever it claims. */
        assert_int_equal(hw_credit("virtio_rng.0\n", "1024\n"), 0);
        /* A TPM's RNG is the tpm source's to credit, never /dev/hwrng's:
         * its 1024 is the hw_random core's default, not its driver's claim. */
        assert_int_equal(hw_credit("tpm-rng-0\n", "1024\n"), 0);
        assert_int_equal(hw_credit("tpm-rng-12\n", "512\n"), 0);
        assert_int_equal(hw_credit("tpm-rng-\n", "1024\n"), 8000);
}

static void test_hwrng_absent(void **state) {
        Hw h;
        void *s;

        hw_setup(&h, "none\n", "1024\n");
        assert_int_equal(source_hwrng.open(&h.p, &s), -ENODEV);
        remove_tree(h.dir);

        hw_setup(&h, "intel-rng\n", "1024\n");
        strcat(h.dev, ".absent");
        assert_int_equal(source_hwrng.open(&h.p, &s), -ENODEV);
        remove_tree(h.dir);
}

/* Expects one hwrng read to return `expected` after `reads` device reads:
 * errors come straight up, never retried inside the source. */
static void hw_expect(void *s, ssize_t expected, unsigned reads) {
        uint8_t buf[256];
        unsigned before = fake.reads;

        assert_int_equal(source_hwrng.read(s, buf, sizeof(buf)), expected);
        assert_int_equal(fake.reads - before, reads);
}

static void test_hwrng_faults(void **state) {
        uint8_t data[4096], buf[256];
        Hw h;
        void *s;

        hw_setup(&h, "intel-rng\n", "1024\n");
        fill_seeded(data, sizeof(data), 1234);
        assert_int_equal(source_hwrng.open(&h.p, &s), 0);

        /* Healthy: the device's bytes, in order, poll bounded by 1 s. */
        assert_int_equal(source_hwrng.read(s, buf, sizeof(buf)), sizeof(buf));
        assert_memory_equal(buf, data, sizeof(buf));
        assert_true(fake.poll_timeout > 0 && fake.poll_timeout <= 1000);

        fake.armed = true;
        fake.error = ENODEV;
        hw_expect(s, -ENODEV, 1);
        fake.error = EIO;
        hw_expect(s, -EIO, 1);
        fake.error = EAGAIN;
        hw_expect(s, -EAGAIN, 1);
        fake.error = EINTR;
        hw_expect(s, -EAGAIN, 1);

        /* Short reads are returned as they are, not topped up. */
        fake.error = 0;
        fake.length = 5;
        hw_expect(s, 5, 1);
        /* A device that returns nothing is broken, not at an end. */
        fake.length = 0;
        hw_expect(s, -EIO, 1);

        /* poll timing out, failing or flagging an error. */
        fake.length = -1;
        fake.poll_fake = true;
        fake.poll_result = 0;
        hw_expect(s, -EAGAIN, 0);
        fake.poll_result = -1;
        fake.poll_errno = ENOMEM;
        hw_expect(s, -ENOMEM, 0);
        fake.poll_result = 1;
        fake.poll_revents = POLLERR;
        hw_expect(s, -EIO, 0);

        source_hwrng.close(s);
        remove_tree(h.dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_lookup, reset_fake),
                cmocka_unit_test_setup(test_rows, reset_fake),
                cmocka_unit_test_setup(test_file_replays_then_ends, reset_fake),
                cmocka_unit_test_setup(test_file_loops, reset_fake),
                cmocka_unit_test_setup(test_file_errors, reset_fake),
                cmocka_unit_test_setup(test_file_pacing, reset_fake),
                cmocka_unit_test_setup(test_file_fifo, reset_fake),
                cmocka_unit_test_setup(test_jitter_samples, reset_fake),
                cmocka_unit_test_setup(test_jitter_selftest_refuses, reset_fake),
                cmocka_unit_test_setup(test_jitter_selftest_passes, reset_fake),
                cmocka_unit_test_setup(test_jitter_restarts, reset_fake),
                cmocka_unit_test_setup(test_rdseed_matches_cpuid, reset_fake),
                cmocka_unit_test_setup(test_rdseed_retry_bound, reset_fake),
                cmocka_unit_test_setup(test_kernel_never_credited, reset_fake),
                cmocka_unit_test_setup(test_hwrng_quality, reset_fake),
                cmocka_unit_test_setup(test_hwrng_absent, reset_fake),
                cmocka_unit_test_setup(test_hwrng_faults, reset_fake),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
