/* test-collector.c - the collector end to end with real health tests,
 * conditioner and store, fed by deterministic sources:
 *   - accounting: blocks come from exactly the credited samples after the
 *     startup test, each with >= 320 credited bits, and what is served never
 *     exceeds 0.8 bit per credited bit;
 *   - fail closed: a stuck source makes nothing and is disabled; a source
 *     that goes stuck loses its unserved blocks;
 *   - no spinning: an erroring device is retried with backoff, counted in
 *     read calls over a window (a spinning thread would make millions);
 *   - on demand: a full store with no demand means no reads at all.
 * Faults are injected by wrapping read(); thread tests wait for conditions
 * with generous bounds and never assert on elapsed time. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pool/collector.h"
#include "pool/conditioner.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* ---- wrapped read ----------------------------------------------------- */

static atomic_uint reads;       /* every read() in the process */
static atomic_int read_error;   /* > 0: every read() fails with it */

ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n);

ssize_t __wrap_read(int fd, void *buf, size_t n) {
        int e = atomic_load(&read_error);

        atomic_fetch_add(&reads, 1);
        if (e > 0) {
                errno = e;
                return -1;
        }
        return __real_read(fd, buf, n);
}

static int reset_fake(void **state) {
        atomic_store(&reads, 0);
        atomic_store(&read_error, 0);
        return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static atomic_uint wakes;

static void count_wake(void *userdata) {
        atomic_fetch_add(&wakes, 1);
}

static void fill_seeded(uint8_t *buf, size_t n, uint64_t seed) {
        for (size_t i = 0; i < n; i++) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                buf[i] = (uint8_t) (seed >> 32);
        }
}

typedef struct Tmp {
        char dir[64];
        char path[PATH_MAX];
} Tmp;

static void tmp_new(Tmp *t) {
        strcpy(t->dir, "/tmp/test-collector-XXXXXX");
        assert_non_null(mkdtemp(t->dir));
        snprintf(t->path, sizeof(t->path), "%s/raw", t->dir);
}

static void tmp_write(Tmp *t, const char *name, const void *data, size_t n) {
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", t->dir, name);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, n), (ssize_t) n);
        close(fd);
}

static void tmp_free(Tmp *t) {
        DIR *d = opendir(t->dir);
        struct dirent *e;

        assert_non_null(d);
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                        assert_int_equal(unlinkat(dirfd(d), e->d_name, 0), 0);
        closedir(d);
        assert_int_equal(rmdir(t->dir), 0);
}

/* good samples then `stuck` copies of one value */
static uint8_t *make_samples(size_t good, size_t stuck, uint64_t seed) {
        uint8_t *s = malloc(good + stuck);

        assert_non_null(s);
        fill_seeded(s, good, seed);
        memset(s + good, 0x42, stuck);
        return s;
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };

        nanosleep(&ts, NULL);
}

/* Waits up to ~10 s for cond(); a broken collector fails here instead of
 * hanging the suite. */
#define WAIT_FOR(cond)                                                          \
        do {                                                                    \
                unsigned waited_ = 0;                                           \
                while (!(cond) && waited_ < 10000) {                            \
                        sleep_ms(5);                                            \
                        waited_ += 5;                                           \
                }                                                               \
                assert_true(cond);                                              \
        } while (0)

static SourceState state_of(Collector *c) {
        CollectorStats st;

        collector_get_stats(c, &st);
        return st.state;
}

/* Steps until the file source ends; returns the total samples read. */
static uint64_t step_to_end(Collector *c) {
        uint64_t total = 0;
        ssize_t r;

        while ((r = collector_step(c, 4096)) > 0)
                total += (uint64_t) r;
        assert_true(r == -ENODATA || r == -ENODEV);
        return total;
}

/* What the conditioner must make of exactly these samples. */
static void expected_block(const uint8_t *samples, size_t n, uint8_t ret[static STORE_BLOCK_SIZE]) {
        crypto_hash_sha256_state h;

        crypto_hash_sha256_init(&h);
        crypto_hash_sha256_update(&h, (const unsigned char *) CONDITIONER_DOMAIN,
                                  sizeof(CONDITIONER_DOMAIN) - 1);
        crypto_hash_sha256_update(&h, samples, n);
        crypto_hash_sha256_final(&h, ret);
}

/* The last sample number (from 1) that no health-test window or run still
 * open after n samples can condemn: the end of the last complete 512-sample
 * APT window, or, when the run the data ends with reaches back further,
 * the sample before that run. Only blocks that end there or earlier may
 * have left the collector. */
static uint64_t settled_after(const uint8_t *data, size_t n) {
        size_t run = n - 1;

        while (run > 0 && data[run - 1] == data[n - 1])
                run--;
        return MIN((uint64_t) (n - n % HEALTH_APT_WINDOW), (uint64_t) run);
}

/* Steps exactly up to `until` samples in total. */
static void step_until(Collector *c, uint64_t until) {
        CollectorStats st;

        for (collector_get_stats(c, &st); st.samples < until; collector_get_stats(c, &st))
                assert_true(collector_step(c, MIN(4096, until - st.samples)) > 0);
}

/* ---- accounting ------------------------------------------------------------ */

/* Every block the collector put was served whole, and bytes served x 8 <=
 * credited bits x 0.8: in millibits, bytes x 10000 <= mbits. */
static void check_invariant(Store *s, const CollectorStats *st) {
        StoreStats ss;

        store_get_stats(s, &ss);
        assert_int_equal(ss.blocks_served, st->blocks);
        assert_int_equal(ss.bytes_served, st->blocks * STORE_BLOCK_SIZE);
        assert_true(ss.bytes_served * 10000 <= ss.credited_mbits_taken);
        assert_int_equal(ss.credited_mbits_taken, st->credited_mbits);
}

static void check_accounting(uint32_t credit, size_t samples) {
        uint8_t *data = make_samples(samples, 0, 0x5eed0000ULL + credit);
        SourceParams p;
        uint8_t block[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];
        uint64_t per_block = (CONDITIONER_BLOCK_MBITS + credit - 1) / credit, blocks;
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        tmp_new(&t);
        tmp_write(&t, "raw", data, samples);
        p = (SourceParams) { .path = t.path };
        atomic_store(&wakes, 0);

        assert_int_equal(store_new(100000, 1, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, credit, 3, s, count_wake, NULL, &c), 0);
        assert_int_equal(state_of(c), SOURCE_STARTUP);
        assert_int_equal(step_to_end(c), samples);
        collector_get_stats(c, &st);

        /* The startup test's 1024 samples are never credited; every block
         * takes exactly ceil(320000 / credit) samples. Those that end in
         * the last, unfinished window stay with the collector. */
        blocks = (settled_after(data, samples) - HEALTH_STARTUP_SAMPLES) / per_block;
        /* A file that ended leaves the source unavailable, not failed. */
        assert_int_equal(st.state, SOURCE_UNAVAILABLE);
        assert_int_equal(st.last_error, -ENODATA);
        assert_int_equal(st.samples, samples);
        assert_int_equal(st.credit_mbits, credit);
        assert_int_equal(st.blocks, blocks);
        assert_int_equal(st.pending_blocks, (samples - HEALTH_STARTUP_SAMPLES) / per_block - blocks);
        assert_int_equal(st.credited_mbits, blocks * per_block * credit);
        assert_true(st.blocks * CONDITIONER_BLOCK_MBITS <= st.credited_mbits);
        assert_int_equal(st.fail_rct + st.fail_apt, 0);
        assert_int_equal(st.read_errors, 1);
        /* One wake per block, plus STARTUP -> HEALTHY -> UNAVAILABLE. */
        assert_true(atomic_load(&wakes) >= blocks + 2);

        /* The first block is the hash of exactly the samples after the
         * startup test: nothing uncredited went in, nothing was skipped. */
        expected_block(data + HEALTH_STARTUP_SAMPLES, per_block, expected);

        for (uint64_t i = 0; i < blocks; i++) {
                assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
                if (i == 0)
                        assert_memory_equal(block, expected, sizeof(block));
        }
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), -ENODATA);

        store_get_stats(s, &ss);
        assert_int_equal(ss.blocks_in, blocks);
        check_invariant(s, &st);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

static void test_accounting_exact(void **state) {
        check_accounting(4000, 200000);  /* 80 samples per block, no rounding */
        check_accounting(3000, 150001);  /* 107 samples, 321000 mbits per block */
        check_accounting(8000, 50000);   /* 40 samples per block */
        check_accounting(300, 120000);   /* the jitter default: 1067 per block */
}

static void test_store_full_drops_blocks(void **state) {
        uint8_t *data = make_samples(20000, 0, 99);
        SourceParams p;
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        tmp_new(&t);
        tmp_write(&t, "raw", data, 20000);
        p = (SourceParams) { .path = t.path };

        /* A block that finds the store full is gone, and not counted as
         * made: its credit is lost rather than kept for later. */
        assert_int_equal(store_new(4, 1, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, 8000, 1, s, NULL, NULL, &c), 0);
        step_to_end(c);
        collector_get_stats(c, &st);
        store_get_stats(s, &ss);
        assert_int_equal(st.blocks, 4);
        assert_int_equal(ss.blocks_in, 4);
        assert_int_equal(ss.fill, 4);
        assert_int_equal(st.credited_mbits, ss.credited_mbits_in);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* The machine was cloned with a block half conditioned: the samples read
 * before the purge must not end up in a block after it. 40 samples make a
 * block at 8 bits each; 20 are in when the store is purged. */
static void test_purge_all_restarts_partial_block(void **state) {
        enum { START = HEALTH_STARTUP_SAMPLES + 20, WINDOW_END = 3 * HEALTH_APT_WINDOW, AGAIN = WINDOW_END + 100 };
        uint8_t *data = make_samples(4000, 0, 77);
        uint8_t block[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];
        SourceParams p;
        Collector *c;
        Store *s;
        Tmp t;

        tmp_new(&t);
        tmp_write(&t, "raw", data, 4000);
        p = (SourceParams) { .path = t.path };
        assert_int_equal(store_new(64, 1, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, 8000, 1, s, NULL, NULL, &c), 0);
        step_until(c, START);
        assert_int_equal(store_fill(s), 0);

        /* A partial block of 20 samples when the store is purged. */
        assert_int_equal(store_purge_all(s), 0);
        step_until(c, START + 39);
        step_until(c, WINDOW_END);
        /* Released once their APT window closed: exactly the 40-sample
         * blocks read after the purge, the first of them first. */
        assert_int_equal(store_fill(s), (WINDOW_END - START) / 40);
        expected_block(data + START, 40, expected);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
        assert_memory_equal(block, expected, sizeof(block));

        /* Now finished blocks wait for the next window (ending at 2048)
         * when the store is purged again: they go too, with the partial
         * one, and the first block released is the 40 samples after it. */
        step_until(c, AGAIN);
        assert_int_equal(store_purge_all(s), (WINDOW_END - START) / 40 - 1);
        step_until(c, 4 * HEALTH_APT_WINDOW);
        expected_block(data + AGAIN, 40, expected);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
        assert_memory_equal(block, expected, sizeof(block));

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* ---- failing sources --------------------------------------------------- */

static void test_stuck_source_disabled(void **state) {
        uint8_t *data = make_samples(0, 100000, 0);
        SourceParams p;
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        tmp_new(&t);
        tmp_write(&t, "raw", data, 100000);
        p = (SourceParams) { .path = t.path, .loop = true };

        assert_int_equal(store_new(64, 8, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, 4000, 2, s, NULL, NULL, &c), 0);
        assert_true(collector_step(c, 4096) > 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_FAILED_PERMANENT);
        assert_int_equal(st.permanent_rct, 1);
        assert_int_equal(st.fail_rct, 1);
        assert_int_equal(st.blocks, 0);
        /* Disabled for good: no more reads, even though the file loops. */
        assert_int_equal(collector_step(c, 4096), -ENODEV);
        collector_get_stats(c, &st);
        assert_int_equal(st.samples, 4096);
        store_get_stats(s, &ss);
        assert_int_equal(ss.blocks_in, 0);
        collector_free(c);

        /* The same through the thread: it ends by itself. */
        atomic_store(&wakes, 0);
        assert_int_equal(collector_new(&source_file, &p, 4000, 2, s, count_wake, NULL, &c), 0);
        assert_int_equal(collector_start(c), 0);
        WAIT_FOR(state_of(c) == SOURCE_FAILED_PERMANENT);
        {
                unsigned before = atomic_load(&reads);

                sleep_ms(100);
                assert_int_equal(atomic_load(&reads), before);
        }
        assert_true(atomic_load(&wakes) >= 1);
        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

static void test_good_then_stuck_purges(void **state) {
        const size_t good = 100000, stuck = 10000;
        uint8_t *data = make_samples(good, stuck, 77);
        uint8_t block[STORE_BLOCK_SIZE];
        uint64_t expected = (settled_after(data, good) - HEALTH_STARTUP_SAMPLES) / 80;
        SourceParams p;
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        tmp_new(&t);
        tmp_write(&t, "raw", data, good + stuck);
        p = (SourceParams) { .path = t.path };

        assert_int_equal(store_new(4096, 1, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, 4000, 5, s, NULL, NULL, &c), 0);

        /* Exactly the good part first. */
        step_until(c, good);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        assert_int_equal(st.blocks, expected);
        assert_int_equal(store_fill(s), expected);

        /* Ten blocks reach readers before the fault. */
        for (int i = 0; i < 10; i++)
                assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);

        step_to_end(c);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_FAILED_PERMANENT);
        assert_int_equal(st.permanent_rct, 1);
        assert_int_equal(st.blocks, expected);
        store_get_stats(s, &ss);
        assert_int_equal(ss.fill, 0);
        assert_int_equal(ss.blocks_purged, expected - 10);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), -ENODATA);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* ---- the running check --------------------------------------------------- */

/* `windows` running-check windows of samples in which one value (0x42)
 * takes `permille` of the places, the rest uniform. */
static void fill_windows(uint8_t *buf, size_t windows, unsigned permille, uint64_t seed) {
        size_t n = windows * ONLINE_WINDOW;
        uint64_t x = seed;

        fill_seeded(buf, n, seed);
        for (size_t i = 0; i < n; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if (x % 1000 < permille)
                        buf[i] = 0x42;
        }
}

static void check_online(Collector *c, OnlineState state, uint64_t windows, uint64_t flagged, uint64_t stops) {
        CollectorStats st;

        collector_get_stats(c, &st);
        assert_int_equal(st.online.state, state);
        assert_int_equal(st.online.windows, windows);
        assert_int_equal(st.online.flagged, flagged);
        assert_int_equal(st.online.stops, stops);
}

/* Credit 0.5 bit: a window is flagged when its most common value is above
 * 1/2 (beyond doubt: more than 33,670 of 65,536), and crediting stops at
 * the fourth flagged window in a row. Good (uniform) for 4 windows, then
 * 6 windows of one value at 60 %, then good again. */
static void test_running_check_degrades(void **state) {
        enum { GOOD = 4, BAD = 6, AFTER = 5, TOTAL = GOOD + BAD + AFTER };
        uint8_t *data = malloc((size_t) TOTAL * ONLINE_WINDOW);
        uint8_t block[STORE_BLOCK_SIZE];
        uint64_t blocks_at_stop, credited_at_stop;
        CollectorStats st;
        StoreStats ss;
        SourceParams p;
        Collector *c;
        Store *s;
        Tmp t;

        assert_non_null(data);
        fill_windows(data, GOOD, 0, 11);
        fill_windows(data + GOOD * ONLINE_WINDOW, BAD, 600, 12);
        fill_windows(data + (GOOD + BAD) * ONLINE_WINDOW, AFTER, 0, 13);
        tmp_new(&t);
        tmp_write(&t, "raw", data, (size_t) TOTAL * ONLINE_WINDOW);
        p = (SourceParams) { .path = t.path };
        assert_int_equal(store_new(100000, 1, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, 500, 4, s, NULL, NULL, &c), 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.online.cutoff_flag, 33670);
        check_online(c, ONLINE_PENDING, 0, 0, 0);

        /* A good stream never trips it. */
        step_until(c, GOOD * ONLINE_WINDOW);
        check_online(c, ONLINE_OK, GOOD, 0, 0);
        collector_get_stats(c, &st);
        assert_true(st.online.last_max < 400);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        /* Ten blocks reach readers. */
        for (int i = 0; i < 10; i++)
                assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);

        /* Flagged three times, still credited (the margin is gone, the
         * credit itself still holds). */
        step_until(c, (GOOD + 3) * ONLINE_WINDOW);
        check_online(c, ONLINE_FLAGGED, GOOD + 3, 3, 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        assert_true(st.online.last_max > st.online.cutoff_flag && st.online.last_max < st.online.cutoff_stop);
        assert_int_equal(store_fill(s), st.blocks - 10);

        /* The fourth: crediting stops, and nothing made before it is
         * served after it: the unserved blocks are purged. */
        step_until(c, (GOOD + 4) * ONLINE_WINDOW);
        check_online(c, ONLINE_STOPPED, GOOD + 4, 4, 1);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_FAILED_ESTIMATE);
        assert_int_equal(st.fail_rct + st.fail_apt, 0);
        store_get_stats(s, &ss);
        assert_int_equal(ss.fill, 0);
        assert_int_equal(ss.blocks_purged, st.blocks - 10);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), -ENODATA);
        blocks_at_stop = st.blocks;
        credited_at_stop = st.credited_mbits;

        /* Still bad, then four good windows: nothing credited meanwhile. */
        step_until(c, (GOOD + BAD + 3) * ONLINE_WINDOW);
        check_online(c, ONLINE_STOPPED, GOOD + BAD + 3, BAD, 1);
        collector_get_stats(c, &st);
        assert_int_equal(st.blocks, blocks_at_stop);
        assert_int_equal(st.credited_mbits, credited_at_stop);
        assert_int_equal(store_fill(s), 0);

        /* The fourth good window in a row: it resumes, and credits again. */
        step_until(c, (GOOD + BAD + 4) * ONLINE_WINDOW);
        check_online(c, ONLINE_OK, GOOD + BAD + 4, BAD, 1);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        assert_int_equal(st.blocks, blocks_at_stop);
        step_to_end(c);
        collector_get_stats(c, &st);
        assert_int_equal(st.online.windows, TOTAL);
        assert_true(st.blocks > blocks_at_stop);
        assert_int_equal(store_fill(s), st.blocks - blocks_at_stop);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* What the loop sees at each wake-up: a stop counted must come with the
 * state it set and the store purged, a failed health test with its count. */
typedef struct WakeSeen {
        Collector *c;
        Store *s;
        unsigned stops, torn_stops, failures, uncounted_failures;
} WakeSeen;

static void check_wake(void *userdata) {
        WakeSeen *w = userdata;
        CollectorStats st;

        if (!w->c)
                return;
        collector_get_stats(w->c, &st);
        if (st.online.stops > 0) {
                w->stops++;
                if ((st.state != SOURCE_FAILED_ESTIMATE && st.state != SOURCE_UNAVAILABLE) || store_fill(w->s) != 0)
                        w->torn_stops++;
        }
        if (st.state == SOURCE_FAILED_INTERMITTENT) {
                w->failures++;
                if (st.fail_rct + st.fail_apt == 0)
                        w->uncounted_failures++;
        }
}

/* One window where the source no longer backs even its credit (one value
 * at 74 % at credit 0.5: above 2^-0.5 = 71 %) stops crediting at once.
 * Every wake-up that shows the stop counted shows it whole: the state it
 * set, the store purged. */
static void test_running_check_below_credit(void **state) {
        uint8_t *data = malloc(3 * ONLINE_WINDOW);
        WakeSeen seen = { 0 };
        CollectorStats st;
        SourceParams p;
        Collector *c;
        Store *s;
        Tmp t;

        assert_non_null(data);
        fill_windows(data, 2, 0, 21);
        fill_windows(data + 2 * ONLINE_WINDOW, 1, 740, 22);
        tmp_new(&t);
        tmp_write(&t, "raw", data, 3 * ONLINE_WINDOW);
        p = (SourceParams) { .path = t.path };
        assert_int_equal(store_new(100000, 1, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, 500, 4, s, check_wake, &seen, &c), 0);
        seen.c = c;
        seen.s = s;
        step_to_end(c);
        assert_true(seen.stops >= 1);
        assert_int_equal(seen.torn_stops, 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.online.stops, 1);
        assert_int_equal(st.online.flagged, 1);
        assert_true(st.online.last_max > st.online.cutoff_stop);
        assert_int_equal(st.online.state, ONLINE_STOPPED);
        assert_int_equal(st.fail_rct + st.fail_apt, 0);
        assert_int_equal(store_fill(s), 0);
        /* A file that ended is unavailable; what stopped it is on record. */
        assert_int_equal(st.state, SOURCE_UNAVAILABLE);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* A source good for an hour (36,000,000 samples: an hour of a 10 KB/s
 * hwrng, replayed fast) and then stuck: disabled within one read of the
 * fault, every unserved block of its purged, nothing left to serve. */
static void test_hour_of_good_then_stuck(void **state) {
        const size_t good = 36000000, stuck = 8192;
        uint8_t *data = make_samples(good, stuck, 3600);
        CollectorStats st;
        StoreStats ss;
        SourceParams p;
        Collector *c;
        Store *s;
        Tmp t;

        tmp_new(&t);
        tmp_write(&t, "raw", data, good + stuck);
        free(data);
        p = (SourceParams) { .path = t.path };
        assert_int_equal(store_new(1024, 1, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, 4000, 6, s, NULL, NULL, &c), 0);

        step_until(c, good);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        assert_int_equal(st.fail_rct + st.fail_apt, 0);
        assert_int_equal(store_fill(s), 1024);
        /* Uniform bytes at 4 bits are exactly at the running check's
         * bound (2 x 4 = 8 bits): a window is flagged with probability
         * at most 256 x 2^-40, and none of these 549 is. */
        assert_int_equal(st.online.windows, good / ONLINE_WINDOW);
        assert_int_equal(st.online.flagged, 0);
        assert_int_equal(st.online.state, ONLINE_OK);

        step_to_end(c);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_FAILED_PERMANENT);
        assert_int_equal(st.permanent_rct, 1);
        /* Stopped within the read that met the cutoff (16 samples at 4 bits). */
        assert_true(st.samples <= good + 4096);
        store_get_stats(s, &ss);
        assert_int_equal(ss.fill, 0);
        assert_int_equal(ss.blocks_purged, 1024);
        /* Disabled for good: no more reads, however often it is stepped. */
        assert_int_equal(collector_step(c, 4096), -ENODEV);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
}

/* A clock that advances in steps of 26 with varying deltas, then stands
 * still after `clock_freeze` reads. The deltas come from a full 64-bit
 * mix of the read count (splitmix64's finaliser): a plain multiplicative
 * hash repeats itself every 563 reads, which the self-test rightly calls
 * periodic. */
static atomic_ulong clock_reads;
static unsigned long clock_freeze;

static uint64_t fake_clock(void) {
        static uint64_t now = 1000;
        uint64_t n = atomic_fetch_add(&clock_reads, 1);

        if (n < clock_freeze) {
                n = (n ^ (n >> 30)) * 0xbf58476d1ce4e5b9ULL;
                n = (n ^ (n >> 27)) * 0x94d049bb133111ebULL;
                now += 26 * (1 + (n ^ (n >> 31)) % 251);
        }
        return now;
}

static void test_jitter_clock_stands_still(void **state) {
        SourceParams p = { .jitter_buffer = 65536, .jitter_clock = fake_clock };
        SelftestResult result = { 0 };
        CollectorStats st;
        Collector *c;
        Store *s;
        void *j;

        /* Standing still from the start: nothing to measure; the self-test
         * refuses it, and a collector of it is unavailable and says why. */
        atomic_store(&clock_reads, 0);
        clock_freeze = 0;
        p.selftest = &result;
        assert_int_equal(source_jitter.open(&p, &j), -EDOM);
        assert_int_equal(result.reason, SELFTEST_COARSE_CLOCK);
        p.selftest = NULL;
        assert_int_equal(store_new(4096, 1, &s), 0);
        assert_int_equal(collector_new(&source_jitter, &p, 150, 7, s, NULL, NULL, &c), 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_UNAVAILABLE);
        assert_int_equal(st.last_error, -EDOM);
        assert_true(st.selftest.run);
        assert_int_equal(st.selftest.reason, SELFTEST_COARSE_CLOCK);
        assert_int_equal(collector_step(c, 4096), -ENODEV);
        collector_free(c);
        store_free(s);

        /* Standing still later: its samples are all zero, the repetition
         * count test disables it, and it reads no more. */
        atomic_store(&clock_reads, 0);
        clock_freeze = 40000;
        assert_int_equal(store_new(4096, 1, &s), 0);
        assert_int_equal(collector_new(&source_jitter, &p, 150, 7, s, NULL, NULL, &c), 0);
        while (collector_step(c, 4096) > 0)
                ;
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_FAILED_PERMANENT);
        assert_int_equal(st.permanent_rct, 1);
        assert_true(st.blocks > 0);
        assert_int_equal(store_fill(s), 0);
        assert_int_equal(collector_step(c, 4096), -ENODEV);
        collector_free(c);
        store_free(s);
}

static void test_intermittent_recovers(void **state) {
        const size_t good = 50000, run = 12;
        uint8_t *data = make_samples(2 * good + run, 0, 31337);
        uint8_t block[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];
        uint64_t per_segment, again;
        WakeSeen seen = { 0 };
        SourceParams p;
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        /* A run of 12 equal samples crosses the 2^-30 RCT cutoff for
         * H = 4 (9) but not the 2^-60 one (16); its neighbours differ. */
        memset(data + good, 0x42, run);
        if (data[good - 1] == 0x42)
                data[good - 1] = 0;
        if (data[good + run] == 0x42)
                data[good + run] = 0;
        tmp_new(&t);
        tmp_write(&t, "raw", data, 2 * good + run);
        p = (SourceParams) { .path = t.path };

        assert_int_equal(store_new(4096, 1, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, 4000, 7, s, check_wake, &seen, &c), 0);
        seen.c = c;
        seen.s = s;

        /* The blocks of windows that closed before the run reached the
         * store; the run's first 8 samples passed and were credited, but the
         * blocks of its window and the partial one die with the failure. */
        per_segment = (settled_after(data, good) - HEALTH_STARTUP_SAMPLES) / 80;
        step_until(c, good + run);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_FAILED_INTERMITTENT);
        assert_int_equal(st.fail_rct, 1);
        assert_int_equal(st.permanent_rct, 0);
        assert_int_equal(st.blocks, per_segment);
        /* The wake-up that showed the failure showed its count too. */
        assert_true(seen.failures >= 1);
        assert_int_equal(seen.uncounted_failures, 0);
        store_get_stats(s, &ss);
        assert_int_equal(ss.fill, 0);
        assert_int_equal(ss.blocks_purged, per_segment);

        /* A fresh startup test, then credit again from zero. */
        step_until(c, 2 * good + run);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        again = (settled_after(data, 2 * good + run) - (good + run) - HEALTH_STARTUP_SAMPLES) / 80;
        assert_int_equal(st.blocks, per_segment + again);
        assert_int_equal(store_fill(s), again);

        /* The first block after recovery holds only samples after the new
         * startup test: nothing from before the failure leaked into it. */
        expected_block(data + good + run + HEALTH_STARTUP_SAMPLES, 80, expected);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
        assert_memory_equal(block, expected, sizeof(block));

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* ---- windows that have not closed ------------------------------------------ */

/* Random samples where sample 1025 (the first of the third APT window) is
 * x and no other sample of that window is, unless `planted`: then x comes
 * again every other sample from sample 1071 on, 15 times, and the window's
 * APT count meets the 2^-30 cutoff for 8 bits per sample (16) at sample
 * 1099, after the window's first block (samples 1025..1064) was finished. */
static uint8_t *apt_window_samples(size_t n, bool planted) {
        uint8_t *d = make_samples(n, 0, 0xa9700000ULL);
        uint8_t x = d[1024];

        for (size_t i = 1025; i < 1536; i++)
                while (d[i] == x || d[i] == d[i - 1])
                        d[i] = (uint8_t) (d[i] * 5 + 1);
        if (planted)
                for (size_t i = 1070; i < 1100; i += 2)
                        d[i] = x;
        return d;
}

static void test_block_waits_for_its_window(void **state) {
        uint8_t block[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];
        HealthCutoffs cut;
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        assert_int_equal(health_cutoffs(8.0, HEALTH_ALPHA_LOG2_INTERMITTENT, HEALTH_APT_WINDOW, &cut), 0);
        assert_int_equal(cut.apt, 16);

        for (int planted = 0; planted <= 1; planted++) {
                uint8_t *data = apt_window_samples(4096, planted);
                SourceParams p;

                tmp_new(&t);
                tmp_write(&t, "raw", data, 4096);
                p = (SourceParams) { .path = t.path };
                assert_int_equal(store_new(64, 1, &s), 0);
                assert_int_equal(collector_new(&source_file, &p, 8000, 4, s, NULL, NULL, &c), 0);

                /* The window's first block is finished, its window is not
                 * closed: nothing may be served yet. */
                step_until(c, 1064);
                collector_get_stats(c, &st);
                assert_int_equal(st.state, SOURCE_HEALTHY);
                assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), -ENODATA);
                step_until(c, 1535);
                assert_int_equal(store_fill(s), 0);

                step_until(c, 1536);
                collector_get_stats(c, &st);
                store_get_stats(s, &ss);
                if (!planted) {
                        /* Clean: its 12 blocks (the 13th ends at 1544) are
                         * servable the moment the window closes. */
                        assert_int_equal(st.blocks, 12);
                        assert_int_equal(ss.fill, 12);
                        expected_block(data + 1024, 40, expected);
                        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
                        assert_memory_equal(block, expected, sizeof(block));
                } else {
                        /* The failing window takes its blocks with it. */
                        assert_int_equal(st.state, SOURCE_FAILED_INTERMITTENT);
                        assert_int_equal(st.fail_apt, 1);
                        assert_int_equal(st.fail_rct, 0);
                        assert_int_equal(st.blocks, 0);
                        assert_int_equal(ss.blocks_in, 0);
                        /* The rest of the window fails, then a new startup
                         * test (1537..2560): the first block served is made
                         * of samples 2561..2600, after the next window. */
                        step_until(c, 3072);
                        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
                        expected_block(data + 2560, 40, expected);
                        assert_memory_equal(block, expected, sizeof(block));
                }
                collector_free(c);
                store_free(s);
                tmp_free(&t);
                free(data);
        }
}

/* Stepped one sample at a time, a block reaches the store exactly when the
 * last window and run over its samples close: never earlier, and never more
 * than one window (or one run under the RCT cutoff) after it was finished.
 * Runs just under the cutoff are planted across every window boundary, so
 * the RCT, not only the APT, holds blocks back, and the ring of held blocks
 * (pool/pending.h) is at its fullest at 8 bits per sample. */
static void check_release_timing(uint32_t credit, unsigned run) {
        const size_t n = 12000;
        uint8_t *data = make_samples(n, 0, 0x7133 + credit);
        uint64_t per_block = (CONDITIONER_BLOCK_MBITS + credit - 1) / credit, delay_max = 0, released = 0;
        uint8_t block[STORE_BLOCK_SIZE];
        HealthCutoffs cut;
        CollectorStats st;
        SourceParams p;
        Collector *c;
        Store *s;
        Tmp t;

        assert_int_equal(health_cutoffs(credit / 1000.0, HEALTH_ALPHA_LOG2_INTERMITTENT, HEALTH_APT_WINDOW, &cut), 0);
        assert_true(run < cut.rct);
        for (size_t b = 2 * HEALTH_APT_WINDOW; b + run < n; b += HEALTH_APT_WINDOW) {
                memset(data + b - run / 2, data[b], run);
                data[b - run / 2 - 1] = (uint8_t) ~data[b];
                data[b - run / 2 + run] = (uint8_t) ~data[b];
        }
        tmp_new(&t);
        tmp_write(&t, "raw", data, n);
        p = (SourceParams) { .path = t.path };
        assert_int_equal(store_new(4096, 1, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, credit, 8, s, NULL, NULL, &c), 0);

        for (size_t i = 1; i <= n; i++) {
                uint64_t settled = settled_after(data, i), expected;

                assert_int_equal(collector_step(c, 1), 1);
                collector_get_stats(c, &st);
                expected = settled > HEALTH_STARTUP_SAMPLES ? (settled - HEALTH_STARTUP_SAMPLES) / per_block : 0;
                assert_int_equal(st.blocks, expected);
                for (; released < st.blocks; released++) {
                        uint64_t last = HEALTH_STARTUP_SAMPLES + (released + 1) * per_block;

                        delay_max = MAX(delay_max, i - last);
                }
        }
        assert_int_equal(st.fail_rct + st.fail_apt, 0);
        print_message("credit %u: blocks servable at most %" PRIu64 " samples after they were finished\n", credit,
                      delay_max);
        assert_true(delay_max <= HEALTH_APT_WINDOW + cut.rct);
        assert_true(delay_max >= HEALTH_APT_WINDOW / 2);

        /* The invariant holds for what was held back and let go. */
        while (store_take(s, block, STORE_BLOCK_SIZE) == 0)
                ;
        check_invariant(s, &st);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

static void test_release_timing(void **state) {
        check_release_timing(3000, 10);  /* RCT cutoff 11 */
        check_release_timing(8000, 4);   /* RCT cutoff 5: 13 blocks a window */
        check_release_timing(150, 150);  /* the jitter default: RCT cutoff 201 */
}

/* ---- device errors ------------------------------------------------------- */

typedef struct Hw {
        Tmp t;
        SourceParams p;
} Hw;

static void hw_setup(Hw *h, const char *current) {
        uint8_t data[65536];

        tmp_new(&h->t);
        fill_seeded(data, sizeof(data), 4321);
        tmp_write(&h->t, "hwrng", data, sizeof(data));
        tmp_write(&h->t, "rng_quality", "1024\n", 5);
        tmp_write(&h->t, "rng_current", current, strlen(current));
        snprintf(h->t.path, sizeof(h->t.path), "%s/hwrng", h->t.dir);
        h->p = (SourceParams) { .path = h->t.path, .sysfs_dir = h->t.dir };
}

static void test_hwrng_errors_step(void **state) {
        CollectorStats st;
        Collector *c;
        Store *s;
        Hw h;

        hw_setup(&h, "intel-rng\n");
        assert_int_equal(store_new(8, 4, &s), 0);
        assert_int_equal(collector_new(&source_hwrng, &h.p, 8000, 1, s, NULL, NULL, &c), 0);
        assert_true(collector_step(c, 100) == 100);

        atomic_store(&read_error, ENODEV);
        assert_int_equal(collector_step(c, 100), -ENODEV);
        atomic_store(&read_error, EIO);
        assert_int_equal(collector_step(c, 100), -EIO);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_UNAVAILABLE);
        assert_int_equal(st.read_errors, 2);
        assert_int_equal(st.last_error, -EIO);

        /* "Nothing now" is not a device error. */
        atomic_store(&read_error, EAGAIN);
        assert_int_equal(collector_step(c, 100), -EAGAIN);
        collector_get_stats(c, &st);
        assert_int_equal(st.read_errors, 2);

        /* Back to where it was once the device answers. */
        atomic_store(&read_error, 0);
        assert_int_equal(collector_step(c, 100), 100);
        assert_int_equal(state_of(c), SOURCE_STARTUP);

        collector_free(c);
        store_free(s);
        tmp_free(&h.t);
}

static void test_hwrng_errors_back_off(void **state) {
        CollectorStats st;
        unsigned attempts;
        Collector *c;
        Store *s;
        Hw h;

        hw_setup(&h, "intel-rng\n");
        assert_int_equal(store_new(8, 4, &s), 0);
        assert_int_equal(collector_new(&source_hwrng, &h.p, 1000, 1, s, NULL, NULL, &c), 0);

        /* Backoff 10, 20, 40, ... ms: about six attempts fit in 600 ms. A
         * thread without backoff would make millions. */
        atomic_store(&read_error, EIO);
        atomic_store(&reads, 0);
        assert_int_equal(collector_start(c), 0);
        sleep_ms(600);
        attempts = atomic_load(&reads);
        collector_get_stats(c, &st);
        assert_true(attempts >= 1);
        assert_true(attempts <= 12);
        assert_int_equal(st.state, SOURCE_UNAVAILABLE);
        assert_int_equal(st.last_error, -EIO);
        assert_true(st.read_errors >= 1 && st.read_errors <= attempts);
        assert_int_equal(st.samples, 0);

        /* The device recovers: the next attempt (<= 1 s away) succeeds. */
        atomic_store(&read_error, 0);
        WAIT_FOR(state_of(c) != SOURCE_UNAVAILABLE);

        store_shutdown(s);
        collector_free(c);
        store_free(s);
        tmp_free(&h.t);
}

static void test_hwrng_virtio_not_credited(void **state) {
        CollectorStats st;
        Collector *c;
        Store *s;
        Hw h;

        hw_setup(&h, "virtio_rng.0\n");
        assert_int_equal(store_new(8, 4, &s), 0);
        assert_int_equal(collector_new(&source_hwrng, &h.p, 8000, 1, s, NULL, NULL, &c), 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_UNAVAILABLE);
        assert_int_equal(st.last_error, -EPERM);
        assert_int_equal(st.credit_mbits, 0);
        assert_int_equal(collector_start(c), 0);
        assert_int_equal(collector_step(c, 100), -ENODEV);
        collector_free(c);

        /* An absent device still gives a collector, for status. */
        strcat(h.t.path, ".absent");
        assert_int_equal(collector_new(&source_hwrng, &h.p, 8000, 1, s, NULL, NULL, &c), 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_UNAVAILABLE);
        assert_int_equal(st.last_error, -ENODEV);
        assert_string_equal(collector_name(c), "hwrng");
        collector_free(c);
        store_free(s);
        h.t.path[strlen(h.t.path) - strlen(".absent")] = '\0';
        tmp_free(&h.t);
}

/* A source that never has anything: RDSEED under endless contention. */
static atomic_uint starved_reads;

static int starved_open(const SourceParams *p, void **ret) {
        static int token;

        *ret = &token;
        return 0;
}

static ssize_t starved_read(void *s, uint8_t *buf, size_t n) {
        atomic_fetch_add(&starved_reads, 1);
        return -EAGAIN;
}

static uint32_t starved_max_credit(void *s) {
        return UINT32_MAX;
}

static void starved_close(void *s) {
}

static const SourceOps source_starved = {
        .name = "starved",
        .open = starved_open,
        .read = starved_read,
        .max_credit = starved_max_credit,
        .close = starved_close,
};

static void test_eagain_backs_off(void **state) {
        CollectorStats st;
        unsigned attempts;
        Collector *c;
        Store *s;

        atomic_store(&starved_reads, 0);
        assert_int_equal(store_new(8, 4, &s), 0);
        assert_int_equal(collector_new(&source_starved, NULL, 250, 1, s, NULL, NULL, &c), 0);
        assert_int_equal(collector_start(c), 0);
        sleep_ms(600);
        attempts = atomic_load(&starved_reads);
        assert_true(attempts >= 1 && attempts <= 12);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_STARTUP);
        assert_int_equal(st.read_errors, 0);

        /* Stopping does not wait out a backoff of up to a second. */
        store_shutdown(s);
        collector_free(c);
        store_free(s);
}

/* ---- on demand ------------------------------------------------------------ */

static void test_idle_when_full(void **state) {
        uint8_t *data = make_samples(65536, 0, 2024);
        uint8_t block[STORE_BLOCK_SIZE];
        SourceParams p;
        CollectorStats st;
        unsigned before;
        Collector *c;
        Store *s;
        Tmp t;

        tmp_new(&t);
        tmp_write(&t, "raw", data, 65536);
        p = (SourceParams) { .path = t.path, .loop = true };

        assert_int_equal(store_new(4, 2, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, 8000, 1, s, NULL, NULL, &c), 0);
        assert_int_equal(collector_start(c), 0);
        WAIT_FOR(store_fill(s) == 4);

        /* Full, no demand: the thread parks and reads nothing. */
        WAIT_FOR((collector_get_stats(c, &st), !st.running));
        before = atomic_load(&reads);
        sleep_ms(300);
        assert_int_equal(atomic_load(&reads), before);

        /* Readers drain it below the low-water mark: sampling resumes. */
        for (int i = 0; i < 3; i++)
                assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
        WAIT_FOR(store_fill(s) == 4);
        assert_true(atomic_load(&reads) > before);

        /* Demand (a reader waiting) makes it run even above low water. */
        WAIT_FOR((collector_get_stats(c, &st), !st.running));
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
        sleep_ms(100);
        assert_int_equal(store_fill(s), 3);
        before = atomic_load(&reads);
        store_set_demand(s, true);
        WAIT_FOR(store_fill(s) == 4);
        assert_true(atomic_load(&reads) > before);

        store_shutdown(s);
        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* One source stops on its own (a reload disabling it) while the store is
 * full and nobody asks: collector_free() must not hang on the idle thread,
 * and the store keeps working for the others. */
static void test_free_idle_without_shutdown(void **state) {
        uint8_t *data = make_samples(65536, 0, 77);
        uint8_t block[STORE_BLOCK_SIZE];
        SourceParams p;
        CollectorStats st;
        Collector *c;
        Store *s;
        Tmp t;

        tmp_new(&t);
        tmp_write(&t, "raw", data, 65536);
        p = (SourceParams) { .path = t.path, .loop = true };
        assert_int_equal(store_new(2, 1, &s), 0);
        assert_int_equal(collector_new(&source_file, &p, 8000, 1, s, NULL, NULL, &c), 0);
        assert_int_equal(collector_start(c), 0);
        WAIT_FOR(store_fill(s) == 2);
        WAIT_FOR((collector_get_stats(c, &st), !st.running));

        collector_free(c);
        assert_int_equal(store_fill(s), 2);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
        assert_int_equal(store_put(s, block, 320000, 2, store_epoch(s)), 0);

        store_shutdown(s);
        store_free(s);
        tmp_free(&t);
        free(data);
}

static void test_invalid(void **state) {
        SourceParams p = { 0 };
        Collector *c = NULL;
        Store *s;

        assert_int_equal(store_new(8, 4, &s), 0);
        assert_int_equal(collector_new(&source_kernel, &p, 0, 1, s, NULL, NULL, &c), -EINVAL);
        assert_int_equal(collector_new(&source_kernel, &p, 8001, 1, s, NULL, NULL, &c), -EINVAL);
        assert_int_equal(collector_new(NULL, &p, 100, 1, s, NULL, NULL, &c), -EINVAL);
        assert_null(c);
        /* The kernel source is never credited, whatever is asked. */
        assert_int_equal(collector_new(&source_kernel, &p, 8000, 1, s, NULL, NULL, &c), 0);
        assert_int_equal(state_of(c), SOURCE_UNAVAILABLE);
        collector_free(c);
        assert_null(collector_free(NULL));
        store_free(s);

        assert_string_equal(source_state_to_string(SOURCE_HEALTHY), "healthy");
        assert_string_equal(source_state_to_string(SOURCE_FAILED_PERMANENT), "failed-permanent");
        assert_null(source_state_to_string(_SOURCE_STATE_MAX));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_accounting_exact, reset_fake),
                cmocka_unit_test_setup(test_free_idle_without_shutdown, reset_fake),
                cmocka_unit_test_setup(test_store_full_drops_blocks, reset_fake),
                cmocka_unit_test_setup(test_purge_all_restarts_partial_block, reset_fake),
                cmocka_unit_test_setup(test_stuck_source_disabled, reset_fake),
                cmocka_unit_test_setup(test_good_then_stuck_purges, reset_fake),
                cmocka_unit_test_setup(test_hour_of_good_then_stuck, reset_fake),
                cmocka_unit_test_setup(test_running_check_degrades, reset_fake),
                cmocka_unit_test_setup(test_running_check_below_credit, reset_fake),
                cmocka_unit_test_setup(test_jitter_clock_stands_still, reset_fake),
                cmocka_unit_test_setup(test_intermittent_recovers, reset_fake),
                cmocka_unit_test_setup(test_block_waits_for_its_window, reset_fake),
                cmocka_unit_test_setup(test_release_timing, reset_fake),
                cmocka_unit_test_setup(test_hwrng_errors_step, reset_fake),
                cmocka_unit_test_setup(test_hwrng_errors_back_off, reset_fake),
                cmocka_unit_test_setup(test_hwrng_virtio_not_credited, reset_fake),
                cmocka_unit_test_setup(test_eagain_backs_off, reset_fake),
                cmocka_unit_test_setup(test_idle_when_full, reset_fake),
                cmocka_unit_test_setup(test_invalid, reset_fake),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
