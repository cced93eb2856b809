/* test-collector.c - the collector end to end with the real running gate
 * (one worker, windows of GATE_WINDOW_MIN samples), health tests,
 * conditioner and store, fed by deterministic sources:
 *   - accounting: blocks come from exactly the credited samples after the
 *     startup test, only once the gate's verdict on their window is in,
 *     each with >= 320 credited bits, and what is served never exceeds 0.8
 *     bit per credited bit;
 *   - the gate: i.i.d. windows are credited (auto: at most half the
 *     estimate); windows of each failure class the most common value
 *     cannot see (tests/lib/degrade.h) are refused, put nothing in the
 *     store and purge what the source had there; uniform data is credited
 *     again; a stop while a window is with the gate neither hangs nor leaks;
 *   - fail closed: what the gate lets through the health tests still
 *     catch (a crafted APT window), failing windows take their blocks with
 *     them; a stuck source is refused; a purge of the whole store drops the
 *     windows read before it;
 *   - no spinning: an erroring device is retried with backoff, counted in
 *     read calls over a window (a spinning thread would make millions);
 *   - on demand: a full store with no demand means no reads at all.
 * Stepped tests take each verdict with collector_finish() so that what
 * they assert does not depend on how fast the gate's worker is. Faults are
 * injected by wrapping read(); thread tests wait for conditions with
 * generous bounds and never assert on elapsed time. */
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
#include <math.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "degrade.h"
#include "pool/collector.h"
#include "pool/conditioner.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Samples per window: the smallest keeps the suite quick (valgrind too). */
#define W GATE_WINDOW_MIN

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

/* ---- the gate ----------------------------------------------------------- */

/* Made for each test, freed after its collectors. */
static Gate *gate;

static int setup(void **state) {
        atomic_store(&reads, 0);
        atomic_store(&read_error, 0);
        return gate_new(1, &gate) < 0 ? -1 : gate_start(gate);
}

static int teardown(void **state) {
        gate = gate_free(gate);
        return 0;
}

#define CREDIT(mbits) (&(CollectorGate) { .gate = gate, .policy = { .credit_mbits = (mbits) }, .window = W })
#define CREDIT_AUTO(cap) \
        (&(CollectorGate) { .gate = gate, .policy = { .auto_credit = true, .cap_mbits = (cap) }, .window = W })

/* ---- helpers ------------------------------------------------------------ */

static atomic_uint wakes;

static void count_wake(void *userdata) {
        atomic_fetch_add(&wakes, 1);
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

/* good (i.i.d. uniform) samples then `stuck` copies of one value */
static uint8_t *make_samples(size_t good, size_t stuck, uint64_t seed) {
        uint8_t *s = malloc(good + stuck);

        assert_non_null(s);
        degrade_fill(DEGRADE_NONE, seed, 0, s, good);
        memset(s + good, 0x42, stuck);
        return s;
}

/* The window at w (i.i.d. from seed), with `zeros` zeros spread evenly
 * over the APT window at offset 1024, its first sample one of them: at
 * credit 1, 325 fail the APT's 2^-30 cutoff, 355 its 2^-60 one; spread
 * out, neither run nor repeat shows, and the gate credits the window
 * (seed 77: estimate 2.08 at 355 zeros). */
static void fill_apt_window(uint8_t *w, uint64_t seed, unsigned zeros) {
        degrade_fill(DEGRADE_NONE, seed, 0, w, W);
        for (unsigned i = 0; i < HEALTH_APT_WINDOW; i++) {
                uint8_t *p = w + 1024 + i;

                if (i == 0 || i * zeros / HEALTH_APT_WINDOW != (i + 1) * zeros / HEALTH_APT_WINDOW)
                        *p = 0;
                else if (*p == 0)
                        *p = 1;
        }
}

static void sleep_ms(unsigned ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L };

        nanosleep(&ts, NULL);
}

/* Waits up to ~20 s for cond(); a broken collector fails here instead of
 * hanging the suite (a window takes the gate ~1 s under valgrind). */
#define WAIT_FOR(cond)                                                          \
        do {                                                                    \
                unsigned waited_ = 0;                                           \
                while (!(cond) && waited_ < 20000) {                            \
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

/* The index of the first sample the health tests at `credit` call
 * creditable after their last failure in data[0..n): where the first block
 * after an intermittent failure must begin. */
static size_t first_ok_after_failure(const uint8_t *data, size_t n, uint32_t credit) {
        HealthTest h;
        size_t first = SIZE_MAX;
        bool failed = false;

        assert_int_equal(health_init(&h, credit), 0);
        for (size_t i = 0; i < n; i++) {
                HealthVerdict v = health_feed(&h, data[i]);

                if (health_verdict_failed(v)) {
                        failed = true;
                        first = SIZE_MAX;
                } else if (failed && v == HEALTH_OK && first == SIZE_MAX)
                        first = i;
        }
        assert_true(failed);
        assert_true(first != SIZE_MAX);
        return first;
}

/* Steps exactly up to `until` samples in total. */
static void step_until(Collector *c, uint64_t until) {
        CollectorStats st;

        for (collector_get_stats(c, &st); st.samples < until; collector_get_stats(c, &st))
                assert_true(collector_step(c, MIN(4096, until - st.samples)) > 0);
}

/* Steps up to the end of window `windows` and takes its verdict: every
 * window read so far is judged and passed on, however fast the gate. */
static void step_windows(Collector *c, unsigned windows) {
        step_until(c, (uint64_t) windows * W);
        assert_int_equal(collector_finish(c), 0);
}

/* A collector of a file holding data[0..n) at credit `g`. */
static Collector *file_collector(Tmp *t, const uint8_t *data, size_t n, bool loop, const CollectorGate *g,
                                 Store *s, CollectorWakeFn wake, void *userdata) {
        SourceParams p;
        Collector *c;

        tmp_new(t);
        tmp_write(t, "raw", data, n);
        p = (SourceParams) { .path = t->path, .loop = loop };
        assert_int_equal(collector_new(&source_file, &p, g, 3, s, wake, userdata, &c), 0);
        return c;
}

/* What the loop sees at each wake-up: a refusal counted must come with the
 * state it set and the store purged, a failed health test with its count. */
typedef struct WakeSeen {
        Collector *c;
        Store *s;
        uint64_t refused_seen;
        unsigned refusals, torn_refusals, failures, uncounted_failures;
} WakeSeen;

static void check_wake(void *userdata) {
        WakeSeen *w = userdata;
        CollectorStats st;

        if (!w->c)
                return;
        collector_get_stats(w->c, &st);
        if (st.gate.refused > w->refused_seen) {
                w->refused_seen = st.gate.refused;
                w->refusals++;
                if (st.state != SOURCE_REFUSED || st.gate.credit_mbits != 0 || store_fill(w->s) != 0)
                        w->torn_refusals++;
        }
        if (st.state == SOURCE_FAILED_INTERMITTENT) {
                w->failures++;
                if (st.fail_rct + st.fail_apt == 0)
                        w->uncounted_failures++;
        }
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

/* `windows` whole windows and `extra` samples of a partial one, at credit
 * C: a file source that ends, its last window's verdict taken by
 * collector_finish() as the thread does. */
static void check_accounting(uint32_t credit, unsigned windows, size_t extra) {
        const size_t judged = (size_t) windows * W, samples = judged + extra;
        uint8_t *data = make_samples(samples, 0, 0x5eed0000ULL + credit);
        uint8_t block[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];
        uint64_t per_block = (CONDITIONER_BLOCK_MBITS + credit - 1) / credit, blocks;
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        atomic_store(&wakes, 0);
        assert_int_equal(store_new(100000, 1, &s), 0);
        c = file_collector(&t, data, samples, false, CREDIT(credit), s, count_wake, NULL);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_STARTUP);
        assert_int_equal(st.gate.window, W);
        assert_false(st.gate.policy.auto_credit);
        assert_int_equal(st.gate.policy.credit_mbits, credit);
        assert_true(isnan(st.gate.estimate));
        assert_int_equal(step_to_end(c), samples);

        /* A file that ended leaves the source unavailable, not failed. */
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_UNAVAILABLE);
        assert_int_equal(st.last_error, -ENODATA);
        /* Its last window still counts once its verdict is in; the
         * partial one never does. */
        assert_int_equal(collector_finish(c), 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.gate.credited, windows);
        assert_int_equal(st.gate.refused, 0);
        assert_int_equal(st.gate.credit_mbits, credit);
        assert_true(st.gate.estimate >= 2.0 * credit / 1000.0);

        /* The startup test's 1024 samples are never credited; every block
         * takes exactly ceil(320000 / credit) samples. Those that end in
         * the last, unfinished health window stay with the collector. */
        blocks = (settled_after(data, judged) - HEALTH_STARTUP_SAMPLES) / per_block;
        assert_int_equal(st.samples, samples);
        assert_int_equal(gate_policy_most(&st.gate.policy), credit);
        assert_int_equal(st.blocks, blocks);
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
        check_accounting(1000, 6, 100);  /* 320 samples per block, no rounding */
        check_accounting(1500, 4, 1);    /* 214 samples, 321000 mbits per block */
        check_accounting(2000, 4, 0);    /* 160 samples per block */
        check_accounting(300, 4, 4095);  /* the jitter default: 1067 per block */
}

/* No sample counts before its window's verdict: a whole window read, and
 * nothing in the store until the verdict is taken. */
static void test_nothing_before_verdict(void **state) {
        uint8_t *data = make_samples(2 * W, 0, 4711);
        CollectorStats st;
        Collector *c;
        Store *s;
        Tmp t;

        assert_int_equal(store_new(1000, 1, &s), 0);
        c = file_collector(&t, data, 2 * W, false, CREDIT(1000), s, NULL, NULL);
        step_until(c, W - 1);
        collector_get_stats(c, &st);
        /* Not yet a window: the gate has nothing, the health tests
         * nothing, the conditioner nothing. */
        assert_int_equal(st.gate.credited + st.gate.refused, 0);
        assert_int_equal(st.state, SOURCE_STARTUP);
        assert_int_equal(st.blocks + st.pending_blocks, 0);
        step_until(c, W);
        assert_int_equal(collector_finish(c), 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.gate.credited, 1);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        assert_int_equal(st.blocks, (W - HEALTH_STARTUP_SAMPLES) / 320);
        assert_int_equal(store_fill(s), st.blocks);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

static void test_store_full_drops_blocks(void **state) {
        uint8_t *data = make_samples(3 * W, 0, 99);
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        /* A block that finds the store full is gone, and not counted as
         * made: its credit is lost rather than kept for later. */
        assert_int_equal(store_new(4, 1, &s), 0);
        c = file_collector(&t, data, 3 * W, false, CREDIT(2000), s, NULL, NULL);
        step_to_end(c);
        assert_int_equal(collector_finish(c), 0);
        collector_get_stats(c, &st);
        store_get_stats(s, &ss);
        assert_int_equal(st.gate.credited, 3);
        assert_int_equal(st.blocks, 4);
        assert_int_equal(ss.blocks_in, 4);
        assert_int_equal(ss.fill, 4);
        assert_int_equal(st.credited_mbits, ss.credited_mbits_in);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* The machine was cloned (store_purge_all()) with windows read: none of
 * the samples read before the purge may end up in a block after it,
 * whether their window was passed on already, is with the gate or is
 * still filling. 160 samples make a block at 2 bits each. */
static void test_purge_all_drops_windows(void **state) {
        enum { N = 6 * W, AFTER = W + 1000 };
        uint8_t *data = make_samples(N, 0, 77);
        uint8_t *seen = malloc(N);       /* what the health tests were fed */
        uint8_t block[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];
        uint64_t blocks_before, purged;
        CollectorStats st;
        Collector *c;
        Store *s;
        Tmp t;

        assert_non_null(seen);
        assert_int_equal(store_new(1000, 1, &s), 0);
        c = file_collector(&t, data, N, false, CREDIT(2000), s, NULL, NULL);

        /* Window 0 passed on (its blocks in the store), 1000 samples of
         * window 1 filling. */
        step_until(c, W);
        assert_int_equal(collector_finish(c), 0);
        step_until(c, AFTER);
        collector_get_stats(c, &st);
        blocks_before = st.blocks;
        assert_true(blocks_before > 0);
        assert_int_equal(st.gate.credited, 1);

        /* Purged: everything of the store goes, and the windows read
         * before go with it; the next window starts at the next sample. */
        purged = store_purge_all(s);
        assert_int_equal(purged, blocks_before);
        step_until(c, AFTER + 2 * W);
        assert_int_equal(collector_finish(c), 0);
        collector_get_stats(c, &st);
        /* The start of window 1 was never judged: two more windows
         * credited, from sample AFTER on. */
        assert_int_equal(st.gate.credited, 3);
        assert_int_equal(st.gate.refused, 0);

        /* The health tests saw window 0 and then the samples from AFTER on;
         * the blocks after the purge are exactly those settled there. */
        memcpy(seen, data, W);
        memcpy(seen + W, data + AFTER, 2 * W);
        assert_int_equal(st.blocks - blocks_before, (settled_after(seen, 3 * W) - W) / 160);
        assert_int_equal(store_fill(s), st.blocks - blocks_before);
        /* The first block after it is made of the samples right after the
         * purge: nothing read before it went in. */
        expected_block(data + AFTER, 160, expected);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
        assert_memory_equal(block, expected, sizeof(block));

        /* Purged again with a window just handed to the gate: the blocks
         * that came of it (if its verdict was in) go, and the first block
         * after is made of samples read after this purge. */
        step_until(c, AFTER + 3 * W);
        store_purge_all(s);
        assert_int_equal(store_fill(s), 0);
        step_until(c, N);
        assert_int_equal(collector_finish(c), 0);
        collector_get_stats(c, &st);
        assert_true(st.gate.credited == 4 || st.gate.credited == 5);
        expected_block(data + AFTER + 3 * W, 160, expected);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
        assert_memory_equal(block, expected, sizeof(block));

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(seen);
        free(data);
}

/* ---- failing sources --------------------------------------------------- */

/* Stuck from the start: the gate refuses every window (estimate 0), so no
 * sample of it ever reaches the health tests or the conditioner. */
static void test_stuck_source_refused(void **state) {
        uint8_t *data = make_samples(0, 3 * W, 0);
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        assert_int_equal(store_new(64, 8, &s), 0);
        c = file_collector(&t, data, 3 * W, true, CREDIT(1000), s, NULL, NULL);
        step_windows(c, 2);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_REFUSED);
        assert_int_equal(st.gate.refused, 2);
        assert_int_equal(st.gate.refusals, 1);
        assert_int_equal(st.gate.credited, 0);
        assert_int_equal(st.gate.credit_mbits, 0);
        assert_true(st.gate.estimate == 0.0);
        assert_int_equal(st.fail_rct + st.fail_apt, 0);
        assert_int_equal(st.blocks + st.pending_blocks, 0);
        store_get_stats(s, &ss);
        assert_int_equal(ss.blocks_in, 0);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* Good windows, then one the gate credits (2.08 bits, enough for 1 bit)
 * whose APT window fails the 2^-60 cutoff: the health tests catch what the
 * gate let through. The source is disabled, its unserved blocks purged,
 * nothing more is read; through the thread it ends by itself. */
static void test_apt_permanent_disables(void **state) {
        const size_t n = 4 * W;
        uint8_t *data = make_samples(n, 0, 5);
        uint8_t block[STORE_BLOCK_SIZE];
        uint64_t blocks;
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        fill_apt_window(data + 2 * W, 77, 355);
        assert_int_equal(store_new(4096, 1, &s), 0);
        c = file_collector(&t, data, n, true, CREDIT(1000), s, NULL, NULL);

        step_windows(c, 2);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        blocks = st.blocks;
        assert_int_equal(blocks, (settled_after(data, 2 * W) - HEALTH_STARTUP_SAMPLES) / 320);
        /* Ten blocks reach readers before the fault. */
        for (int i = 0; i < 10; i++)
                assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);

        /* The blocks of the window's health windows before the failing
         * one still reach the store; then all go. */
        step_windows(c, 3);
        blocks = (settled_after(data, 2 * W + 1024) - HEALTH_STARTUP_SAMPLES) / 320;
        collector_get_stats(c, &st);
        assert_int_equal(st.gate.credited, 3);
        assert_int_equal(st.gate.refused, 0);
        assert_int_equal(st.state, SOURCE_FAILED_PERMANENT);
        assert_int_equal(st.permanent_apt, 1);
        assert_int_equal(st.fail_apt, 1);
        assert_int_equal(st.blocks, blocks);
        store_get_stats(s, &ss);
        assert_int_equal(ss.fill, 0);
        assert_int_equal(ss.blocks_purged, blocks - 10);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), -ENODATA);
        /* Disabled for good: no more reads, even though the file loops. */
        assert_int_equal(collector_step(c, 4096), -ENODEV);
        collector_get_stats(c, &st);
        assert_int_equal(st.samples, 3 * W);
        collector_free(c);

        /* The same through the thread: it ends by itself. */
        atomic_store(&wakes, 0);
        {
                SourceParams p = { .path = t.path, .loop = true };
                unsigned before;

                assert_int_equal(collector_new(&source_file, &p, CREDIT(1000), 2, s, count_wake, NULL, &c), 0);
                assert_int_equal(collector_start(c), 0);
                WAIT_FOR(state_of(c) == SOURCE_FAILED_PERMANENT);
                before = atomic_load(&reads);
                sleep_ms(100);
                assert_int_equal(atomic_load(&reads), before);
        }
        assert_true(atomic_load(&wakes) >= 1);
        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* A source good for a long stretch (24 windows, the store full), then
 * stuck: its first stuck window is refused, every unserved block of it
 * purged, nothing left to serve, and nothing credited while it stays
 * stuck. */
static void test_long_good_then_stuck(void **state) {
        const size_t good = 24 * W, stuck = 2 * W;
        uint8_t *data = make_samples(good, stuck, 3600);
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        assert_int_equal(store_new(256, 1, &s), 0);
        c = file_collector(&t, data, good + stuck, false, CREDIT(2000), s, NULL, NULL);
        free(data);

        step_windows(c, 24);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        assert_int_equal(st.fail_rct + st.fail_apt, 0);
        assert_int_equal(st.gate.credited, 24);
        assert_int_equal(st.gate.refused, 0);
        assert_int_equal(store_fill(s), 256);

        step_windows(c, 25);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_REFUSED);
        assert_int_equal(st.gate.refused, 1);
        assert_int_equal(st.gate.refusals, 1);
        store_get_stats(s, &ss);
        assert_int_equal(ss.fill, 0);
        assert_int_equal(ss.blocks_purged, 256);
        assert_int_equal(st.fail_rct + st.fail_apt, 0);

        /* Still stuck: refused again, the same refusal (one burst). */
        step_windows(c, 26);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_REFUSED);
        assert_int_equal(st.gate.refused, 2);
        assert_int_equal(st.gate.refusals, 1);
        assert_int_equal(store_fill(s), 0);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
}

/* ---- the running gate ----------------------------------------------------- */

/* i.i.d. uniform bytes at credit 1: at least 90 % of the windows are
 * credited (an estimate >= 2 bits), and blocks come out. */
static void test_gate_iid_credited(void **state) {
        enum { WINDOWS = 10 };
        uint8_t *data = malloc((size_t) WINDOWS * W);
        CollectorStats st;
        Collector *c;
        Store *s;
        Tmp t;

        assert_non_null(data);
        degrade_fill(DEGRADE_NONE, 0x11d, 0, data, (size_t) WINDOWS * W);
        assert_int_equal(store_new(100000, 1, &s), 0);
        c = file_collector(&t, data, (size_t) WINDOWS * W, false, CREDIT(1000), s, NULL, NULL);
        step_windows(c, WINDOWS);
        collector_get_stats(c, &st);
        assert_int_equal(st.gate.credited + st.gate.refused, WINDOWS);
        assert_true(st.gate.credited * 10 >= WINDOWS * 9);
        assert_true(st.gate.estimate >= 2.0);
        assert_true(st.blocks > 0);
        assert_int_equal(store_fill(s), st.blocks);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* credit = auto: the credit in force is what gate_credit() grants the
 * last window's estimate, at most the cap and half the estimate; each
 * block still holds >= 320 credited bits. With the bias class the grant
 * falls with the estimate instead of being refused. */
static void check_auto(Degrade kind, uint32_t cap) {
        enum { WINDOWS = 4 };
        uint8_t *data = malloc((size_t) WINDOWS * W);
        GatePolicy policy = { .auto_credit = true, .cap_mbits = cap };
        uint32_t most = 0;
        CollectorStats st;
        Collector *c;
        Store *s;
        Tmp t;

        assert_non_null(data);
        degrade_fill(kind, 0xa070 + kind, 2 * W, data, (size_t) WINDOWS * W);
        assert_int_equal(store_new(100000, 1, &s), 0);
        c = file_collector(&t, data, (size_t) WINDOWS * W, false, CREDIT_AUTO(cap), s, NULL, NULL);
        collector_get_stats(c, &st);
        assert_true(st.gate.policy.auto_credit);
        assert_int_equal(st.gate.policy.cap_mbits, cap);
        assert_int_equal(gate_policy_most(&st.gate.policy), cap);
        for (unsigned w = 1; w <= WINDOWS; w++) {
                step_windows(c, w);
                collector_get_stats(c, &st);
                assert_false(isnan(st.gate.estimate));
                assert_int_equal(st.gate.credit_mbits, gate_credit(&policy, st.gate.estimate));
                assert_true(st.gate.credit_mbits <= cap);
                assert_true(st.gate.credit_mbits <= st.gate.estimate * 500.0);
                most = MAX(most, st.gate.credit_mbits);
                if (w <= 2)
                        assert_int_equal(st.gate.credit_mbits, MIN(cap, (uint32_t) (st.gate.estimate * 500.0)));
                else if (kind != DEGRADE_NONE)
                        assert_true(st.gate.credit_mbits < 1000);
        }
        assert_true(st.blocks > 0);
        assert_true(st.credited_mbits >= st.blocks * CONDITIONER_BLOCK_MBITS);
        /* Conditioned at each window's grant, not at the cap: no more
         * blocks than the credited samples hold at the largest grant. */
        assert_true(st.blocks * CONDITIONER_BLOCK_MBITS <= ((uint64_t) WINDOWS * W - HEALTH_STARTUP_SAMPLES) * most);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

static void test_gate_auto(void **state) {
        check_auto(DEGRADE_NONE, 1000);
        check_auto(DEGRADE_NONE, 8000);  /* half the estimate, ~3 bits */
        check_auto(DEGRADE_BIAS, 1000);
}

/* Two uniform windows, two of a failure class, two uniform again, at
 * credit 1. */
static void check_failure_class(Degrade kind) {
        enum { WINDOWS = 6 };
        uint8_t *data = malloc((size_t) WINDOWS * W);
        uint8_t block[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];
        WakeSeen seen = { 0 };
        uint64_t blocks, credited_mbits;
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        assert_non_null(data);
        degrade_fill(kind, 0xc1a55 + kind, 2 * W, data, 4 * W);
        degrade_fill(DEGRADE_NONE, 0xa9a1 + kind, 0, data + 4 * W, 2 * W);
        assert_int_equal(store_new(100000, 1, &s), 0);
        c = file_collector(&t, data, (size_t) WINDOWS * W, false, CREDIT(1000), s, check_wake, &seen);
        seen.c = c;
        seen.s = s;

        step_windows(c, 2);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        assert_int_equal(st.gate.credited, 2);
        blocks = st.blocks;
        credited_mbits = st.credited_mbits;
        assert_true(blocks > 1);
        assert_int_equal(store_fill(s), blocks);
        /* One block reaches a reader before the fault. */
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);

        /* Each degraded window is refused; the first refusal purges what
         * the source had in the store, and nothing of the segment is put. */
        for (unsigned w = 3; w <= 4; w++) {
                step_windows(c, w);
                collector_get_stats(c, &st);
                if (st.gate.credit_mbits != 0 || st.state != SOURCE_REFUSED)
                        fail_msg("%s: window %u credited %u mbits at estimate %.3f", degrade_name(kind), w - 1,
                                 st.gate.credit_mbits, st.gate.estimate);
                assert_int_equal(st.gate.refused, w - 2);
                assert_int_equal(st.gate.refusals, 1);
                assert_int_equal(st.gate.credited, 2);
                assert_true(st.gate.estimate < 2.0);
                assert_int_equal(st.blocks, blocks);
                assert_int_equal(st.credited_mbits, credited_mbits);
                assert_int_equal(st.pending_blocks, 0);
                assert_int_equal(st.fail_rct + st.fail_apt, 0);
                store_get_stats(s, &ss);
                assert_int_equal(ss.fill, 0);
                assert_int_equal(ss.blocks_purged, blocks - 1);
                assert_int_equal(ss.blocks_in, blocks);
        }

        /* Uniform again: credited, the state back, and the first block is
         * made of the samples after the segment. */
        step_windows(c, WINDOWS);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        assert_int_equal(st.gate.credited, 4);
        assert_int_equal(st.gate.refused, 2);
        assert_int_equal(st.gate.refusals, 1);
        assert_int_equal(st.gate.credit_mbits, 1000);
        assert_true(st.blocks > blocks);
        assert_int_equal(store_fill(s), st.blocks - blocks);
        expected_block(data + 4 * W, 320, expected);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
        assert_memory_equal(block, expected, sizeof(block));

        /* Every wake-up that showed a refusal counted showed it whole. */
        assert_int_equal(seen.refusals, 2);
        assert_int_equal(seen.torn_refusals, 0);

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

static void test_gate_failure_classes(void **state) {
        for (Degrade k = DEGRADE_CHUNKS; k < _DEGRADE_MAX; k++)
                check_failure_class(k);
}

/* Stopped with a window in the gate's hands: collector_free() takes it
 * back (the job cancelled or done) and returns; the gate serves the next
 * collector. Stepped, and through the thread. */
static void test_stop_while_judging(void **state) {
        uint8_t *data = make_samples(3 * W, 0, 1234);
        CollectorStats st;
        SourceParams p;
        Collector *c;
        Store *s;
        Tmp t;

        assert_int_equal(store_new(100000, 1, &s), 0);
        c = file_collector(&t, data, 3 * W, true, CREDIT(1000), s, NULL, NULL);
        step_until(c, W);
        collector_free(c);

        p = (SourceParams) { .path = t.path, .loop = true };
        assert_int_equal(collector_new(&source_file, &p, CREDIT(1000), 3, s, NULL, NULL, &c), 0);
        step_windows(c, 2);
        collector_get_stats(c, &st);
        assert_int_equal(st.gate.credited, 2);
        collector_free(c);

        /* The thread, stopped as soon as it handed a window over (and
         * again later, mid-stream). */
        for (unsigned windows = 1; windows <= 3; windows += 2) {
                assert_int_equal(collector_new(&source_file, &p, CREDIT(1000), 3, s, NULL, NULL, &c), 0);
                assert_int_equal(collector_start(c), 0);
                WAIT_FOR((collector_get_stats(c, &st), st.samples >= (uint64_t) windows * W));
                collector_free(c);
        }

        store_free(s);
        tmp_free(&t);
        free(data);
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
        assert_int_equal(collector_new(&source_jitter, &p, CREDIT(150), 7, s, NULL, NULL, &c), 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_UNAVAILABLE);
        assert_int_equal(st.last_error, -EDOM);
        assert_true(st.selftest.run);
        assert_int_equal(st.selftest.reason, SELFTEST_COARSE_CLOCK);
        assert_int_equal(collector_step(c, 4096), -ENODEV);
        collector_free(c);
        store_free(s);

        /* Standing still later: its samples are all zero, the gate refuses
         * their windows (the health tests never see them), the blocks made
         * before are purged, and nothing more is credited. */
        atomic_store(&clock_reads, 0);
        clock_freeze = 40000;
        assert_int_equal(store_new(4096, 1, &s), 0);
        assert_int_equal(collector_new(&source_jitter, &p, CREDIT(150), 7, s, NULL, NULL, &c), 0);
        do {
                assert_true(collector_step(c, 4096) > 0);
                collector_get_stats(c, &st);
                if (st.samples % W == 0)
                        assert_int_equal(collector_finish(c), 0);
                collector_get_stats(c, &st);
        } while (st.gate.refused < 2 && st.samples < 64 * W);
        assert_int_equal(st.state, SOURCE_REFUSED);
        assert_true(st.gate.credited > 0);
        assert_true(st.blocks > 0);
        assert_true(st.gate.estimate < 0.3);
        assert_int_equal(st.fail_rct + st.fail_apt, 0);
        assert_int_equal(store_fill(s), 0);
        collector_free(c);
        store_free(s);
}

/* Good windows, then one the gate credits whose APT window fails the
 * 2^-30 cutoff (not the 2^-60 one): the blocks stored so far are purged,
 * the startup test runs anew inside the same window, and credit comes back
 * from samples after it only. */
static void test_intermittent_recovers(void **state) {
        enum { WINDOWS = 5 };
        const size_t n = (size_t) WINDOWS * W;
        uint8_t *data = make_samples(n, 0, 31337);
        uint8_t block[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];
        uint64_t per_segment;
        WakeSeen seen = { 0 };
        size_t again;
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        fill_apt_window(data + 3 * W, 77, 330);
        again = first_ok_after_failure(data, n, 1000);
        assert_true(again > 3 * W + 1536 && again < 4 * W);
        assert_int_equal(store_new(4096, 1, &s), 0);
        c = file_collector(&t, data, n, false, CREDIT(1000), s, check_wake, &seen);
        seen.c = c;
        seen.s = s;

        step_windows(c, 3);
        collector_get_stats(c, &st);
        per_segment = (settled_after(data, 3 * W) - HEALTH_STARTUP_SAMPLES) / 320;
        assert_int_equal(st.blocks, per_segment);
        assert_int_equal(store_fill(s), per_segment);

        /* The gate credited the window; the health tests failed it, after
         * the blocks of its first two health windows were stored. */
        step_windows(c, 4);
        per_segment = (settled_after(data, 3 * W + 1024) - HEALTH_STARTUP_SAMPLES) / 320;
        collector_get_stats(c, &st);
        assert_int_equal(st.gate.credited, 4);
        assert_int_equal(st.fail_apt, 1);
        assert_int_equal(st.fail_rct, 0);
        assert_int_equal(st.permanent_apt, 0);
        /* The wake-up that showed the failure showed its count too. */
        assert_true(seen.failures >= 1);
        assert_int_equal(seen.uncounted_failures, 0);
        store_get_stats(s, &ss);
        assert_int_equal(ss.blocks_purged, per_segment);

        /* A fresh startup test, then credit again from zero. */
        step_windows(c, WINDOWS);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_HEALTHY);
        assert_true(st.blocks > per_segment);
        assert_int_equal(store_fill(s), st.blocks - per_segment);

        /* The first block after recovery holds only samples after the new
         * startup test: nothing from before the failure leaked into it. */
        expected_block(data + again, 320, expected);
        assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
        assert_memory_equal(block, expected, sizeof(block));

        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

/* ---- windows that have not closed ------------------------------------------ */

/* The third APT window (samples 1025..1536) of the first gate window
 * clean, or failing the APT at credit 1 (330 of its 512 samples one
 * value) after its first block (samples 1025..1344) was finished: the
 * failing window takes that block with it, and the first block served is
 * made of samples after the new startup test. */
static void test_block_waits_for_its_window(void **state) {
        uint8_t block[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];
        CollectorStats st;
        StoreStats ss;
        Collector *c;
        Store *s;
        Tmp t;

        for (int planted = 0; planted <= 1; planted++) {
                uint8_t *data = malloc(2 * W);

                assert_non_null(data);
                fill_apt_window(data, 77, planted ? 330 : 1);
                degrade_fill(DEGRADE_NONE, 78, 0, data + W, W);
                assert_int_equal(store_new(64, 1, &s), 0);
                c = file_collector(&t, data, 2 * W, false, CREDIT(1000), s, NULL, NULL);

                step_windows(c, 1);
                collector_get_stats(c, &st);
                store_get_stats(s, &ss);
                assert_int_equal(st.gate.credited, 1);
                if (!planted) {
                        /* Clean: its blocks are servable once their health
                         * windows closed, the first made of samples
                         * 1025..1344. */
                        assert_int_equal(st.blocks, (settled_after(data, W) - HEALTH_STARTUP_SAMPLES) / 320);
                        assert_int_equal(ss.fill, st.blocks);
                        expected_block(data + HEALTH_STARTUP_SAMPLES, 320, expected);
                } else {
                        size_t again = first_ok_after_failure(data, 2 * W, 1000);

                        /* The failing window takes its blocks with it. */
                        assert_int_equal(st.fail_apt, 1);
                        assert_int_equal(st.fail_rct, 0);
                        assert_true(again > 1536);
                        /* Whatever was released came after the new
                         * startup test. */
                        assert_int_equal(ss.blocks_in, st.blocks);
                        step_windows(c, 2);
                        expected_block(data + again, 320, expected);
                }
                assert_int_equal(store_take(s, block, STORE_BLOCK_SIZE), 0);
                assert_memory_equal(block, expected, sizeof(block));
                collector_free(c);
                store_free(s);
                tmp_free(&t);
                free(data);
        }
}

/* Blocks reach the store when the verdict on their window is taken, and
 * then exactly those whose health windows and runs closed: a run under the
 * RCT cutoff planted across every gate window's end holds back the blocks
 * before it until the next window (the RCT, not only the APT, holds blocks
 * back). */
static void check_release_timing(uint32_t credit, unsigned run) {
        enum { WINDOWS = 5 };
        const size_t n = (size_t) WINDOWS * W;
        uint8_t *data = make_samples(n, 0, 0x7133 + credit);
        uint64_t per_block = (CONDITIONER_BLOCK_MBITS + credit - 1) / credit;
        uint8_t block[STORE_BLOCK_SIZE];
        HealthCutoffs cut;
        CollectorStats st;
        Collector *c;
        Store *s;
        Tmp t;

        assert_int_equal(health_cutoffs(credit / 1000.0, HEALTH_ALPHA_LOG2_INTERMITTENT, HEALTH_APT_WINDOW, &cut), 0);
        assert_true(run < cut.rct);
        for (size_t b = W; b < n; b += W) {
                memset(data + b - run / 2, data[b], run);
                data[b - run / 2 - 1] = (uint8_t) ~data[b];
                data[b - run / 2 + run] = (uint8_t) ~data[b];
        }
        assert_int_equal(store_new(4096, 1, &s), 0);
        c = file_collector(&t, data, n, false, CREDIT(credit), s, NULL, NULL);

        for (unsigned w = 1; w <= WINDOWS; w++) {
                uint64_t settled = settled_after(data, (size_t) w * W);

                step_windows(c, w);
                collector_get_stats(c, &st);
                assert_int_equal(st.gate.credited, w);
                if (w < WINDOWS)
                        assert_int_equal(settled, (uint64_t) w * W - run / 2);
                assert_int_equal(st.blocks, (settled - HEALTH_STARTUP_SAMPLES) / per_block);
                assert_int_equal(store_fill(s), st.blocks);
        }
        assert_int_equal(st.fail_rct + st.fail_apt, 0);

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
        check_release_timing(1000, 10);  /* RCT cutoff 31 */
        check_release_timing(2000, 8);   /* RCT cutoff 16 */
        check_release_timing(300, 12);   /* the jitter default: RCT cutoff 101 */
}

/* ---- device errors ------------------------------------------------------- */

typedef struct Hw {
        Tmp t;
        SourceParams p;
} Hw;

static void hw_setup(Hw *h, const char *current) {
        uint8_t data[65536];

        tmp_new(&h->t);
        degrade_fill(DEGRADE_NONE, 4321, 0, data, sizeof(data));
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
        assert_int_equal(collector_new(&source_hwrng, &h.p, CREDIT(1000), 1, s, NULL, NULL, &c), 0);
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
        assert_int_equal(collector_new(&source_hwrng, &h.p, CREDIT(1000), 1, s, NULL, NULL, &c), 0);

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
        assert_int_equal(collector_new(&source_hwrng, &h.p, CREDIT(1000), 1, s, NULL, NULL, &c), 0);
        collector_get_stats(c, &st);
        assert_int_equal(st.state, SOURCE_UNAVAILABLE);
        assert_int_equal(st.last_error, -EPERM);
        assert_int_equal(gate_policy_most(&st.gate.policy), 0);
        assert_int_equal(collector_start(c), 0);
        assert_int_equal(collector_step(c, 100), -ENODEV);
        collector_free(c);

        /* An absent device still gives a collector, for status. */
        strcat(h.t.path, ".absent");
        assert_int_equal(collector_new(&source_hwrng, &h.p, CREDIT(1000), 1, s, NULL, NULL, &c), 0);
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
        assert_int_equal(collector_new(&source_starved, NULL, CREDIT(250), 1, s, NULL, NULL, &c), 0);
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
        assert_int_equal(collector_new(&source_file, &p, CREDIT(2000), 1, s, NULL, NULL, &c), 0);
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
        assert_int_equal(collector_new(&source_file, &p, CREDIT(2000), 1, s, NULL, NULL, &c), 0);
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
        CollectorGate g = *CREDIT(100);
        Collector *c = NULL;
        Store *s;

        assert_int_equal(store_new(8, 4, &s), 0);
        assert_int_equal(collector_new(&source_kernel, &p, CREDIT(0), 1, s, NULL, NULL, &c), -EINVAL);
        assert_int_equal(collector_new(&source_kernel, &p, CREDIT(8001), 1, s, NULL, NULL, &c), -EINVAL);
        assert_int_equal(collector_new(&source_kernel, &p, CREDIT_AUTO(0), 1, s, NULL, NULL, &c), -EINVAL);
        assert_int_equal(collector_new(&source_kernel, &p, CREDIT_AUTO(8001), 1, s, NULL, NULL, &c), -EINVAL);
        assert_int_equal(collector_new(NULL, &p, CREDIT(100), 1, s, NULL, NULL, &c), -EINVAL);
        assert_int_equal(collector_new(&source_kernel, &p, NULL, 1, s, NULL, NULL, &c), -EINVAL);
        g.window = GATE_WINDOW_MIN - 1;
        assert_int_equal(collector_new(&source_kernel, &p, &g, 1, s, NULL, NULL, &c), -EINVAL);
        g.window = GATE_WINDOW_MAX + 1;
        assert_int_equal(collector_new(&source_kernel, &p, &g, 1, s, NULL, NULL, &c), -EINVAL);
        g.window = W;
        g.gate = NULL;
        assert_int_equal(collector_new(&source_kernel, &p, &g, 1, s, NULL, NULL, &c), -EINVAL);
        assert_null(c);
        /* The kernel source is never credited, whatever is asked. */
        assert_int_equal(collector_new(&source_kernel, &p, CREDIT(8000), 1, s, NULL, NULL, &c), 0);
        assert_int_equal(state_of(c), SOURCE_UNAVAILABLE);
        assert_int_equal(collector_finish(c), -ENODEV);
        collector_free(c);
        assert_null(collector_free(NULL));
        assert_int_equal(collector_finish(NULL), -EINVAL);
        store_free(s);

        assert_string_equal(source_state_to_string(SOURCE_HEALTHY), "healthy");
        assert_string_equal(source_state_to_string(SOURCE_FAILED_PERMANENT), "failed-permanent");
        assert_string_equal(source_state_to_string(SOURCE_REFUSED), "refused");
        assert_null(source_state_to_string(_SOURCE_STATE_MAX));
}

/* ---- induced failures (induce.h) ------------------------------------------ */

/* Two windows, then an induced failure of kind from the next window's
 * first sample, stepped to the file's end (14 windows). caught: refused
 * by the gate within two windows, no stored block holds an induced
 * sample, and the source is credited again after it. Not caught (bias
 * under credit = auto, which grants half of what it measures): the
 * episode ends at its bound, and the blocks made from its samples are
 * counted, so the count is seen to count. */
static void check_induce(InduceKind kind, const CollectorGate *g, bool caught) {
        enum { WINDOWS = 14 };
        uint8_t *data = make_samples((size_t) WINDOWS * W, 0, 0x1d0ce0ULL + kind);
        CollectorStats st;
        uint64_t credited;
        Collector *c;
        Store *s;
        Tmp t;

        assert_int_equal(store_new(100000, 1, &s), 0);
        c = file_collector(&t, data, (size_t) WINDOWS * W, false, g, s, NULL, NULL);
        step_windows(c, 2);
        collector_get_stats(c, &st);
        credited = st.gate.credited;
        assert_int_equal(collector_induce(c, kind), 0);
        assert_int_equal(collector_induce(c, kind), -EBUSY);
        /* Its first window read and with the gate: no verdict taken yet. */
        step_until(c, 3 * W);
        collector_get_stats(c, &st);
        assert_true(st.induce.active);
        assert_int_equal(st.induce.degraded, W);
        assert_int_equal(st.induce.kind, kind);
        assert_int_equal(st.induce.episodes, 1);
        step_windows(c, WINDOWS);
        collector_get_stats(c, &st);
        assert_false(st.induce.active);
        /* The gate's last verdicts, oldest first: whole windows in order,
         * the refused ones granted nothing. */
        assert_int_equal(st.verdicts, st.gate.credited + st.gate.refused);
        assert_true(st.verdicts >= COLLECTOR_RECENT_VERDICTS - 4);
        for (size_t i = 0, refused = 0; i < MIN(st.verdicts, COLLECTOR_RECENT_VERDICTS); i++) {
                const GateVerdict *v = collector_stats_verdict(&st, i);

                assert_int_equal(v->samples, W);
                assert_true(i == 0 || v->start > collector_stats_verdict(&st, i - 1)->start);
                refused += v->credit_mbits == 0;
                if (i + 1 == MIN(st.verdicts, COLLECTOR_RECENT_VERDICTS))
                        assert_int_equal(refused, st.gate.refused);
        }
        if (caught) {
                assert_int_equal(st.induce.caught, 1);
                assert_string_equal(st.induce.caught_by, "gate");
                assert_true(st.induce.detected_after >= W && st.induce.detected_after <= 2 * W);
                assert_int_equal(st.induce.blocks, 0);
                assert_true(st.gate.refused >= 1);
                /* Credited again: the windows after the episode. */
                assert_true(st.gate.credited > credited + 4);
                assert_int_equal(st.state, SOURCE_HEALTHY);
        } else {
                assert_int_equal(st.induce.uncaught, 1);
                assert_null(st.induce.caught_by);
                assert_int_equal(st.induce.degraded, (uint64_t) INDUCE_WINDOWS_MAX * W);
                assert_true(st.induce.blocks > 0);
        }
        /* One at a time, and only the sample kinds. */
        assert_int_equal(collector_induce(c, INDUCE_SELFTEST), -EINVAL);
        assert_int_equal(collector_induce(c, INDUCE_NONE), -EINVAL);
        collector_free(c);
        store_free(s);
        tmp_free(&t);
        free(data);
}

static void test_induce(void **state) {
        check_induce(INDUCE_STUCK, CREDIT(1000), true);
        check_induce(INDUCE_REPEAT, CREDIT(1000), true);
        check_induce(INDUCE_BIAS, CREDIT(1000), true);
        check_induce(INDUCE_STUCK, CREDIT_AUTO(8000), true);
        check_induce(INDUCE_REPEAT, CREDIT_AUTO(8000), true);
        check_induce(INDUCE_BIAS, CREDIT_AUTO(8000), false);
}

#define TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void) {
        const struct CMUnitTest tests[] = {
                TEST(test_accounting_exact),
                TEST(test_nothing_before_verdict),
                TEST(test_free_idle_without_shutdown),
                TEST(test_store_full_drops_blocks),
                TEST(test_purge_all_drops_windows),
                TEST(test_stuck_source_refused),
                TEST(test_apt_permanent_disables),
                TEST(test_long_good_then_stuck),
                TEST(test_gate_iid_credited),
                TEST(test_gate_auto),
                TEST(test_gate_failure_classes),
                TEST(test_stop_while_judging),
                TEST(test_jitter_clock_stands_still),
                TEST(test_intermittent_recovers),
                TEST(test_block_waits_for_its_window),
                TEST(test_release_timing),
                TEST(test_hwrng_errors_step),
                TEST(test_hwrng_errors_back_off),
                TEST(test_hwrng_virtio_not_credited),
                TEST(test_eagain_backs_off),
                TEST(test_idle_when_full),
                TEST(test_invalid),
                TEST(test_induce),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
