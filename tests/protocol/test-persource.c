/* test-persource.c - a device per source (issue 21), against the real
 * daemon in-process (fakedaemon.h) with [device] per_source_devices = yes
 * and three credited sources: file (the fake daemon's sample file), jitter
 * (its clock injected: a fixed pseudo-random walk, so it runs anywhere and
 * the running gate credits it) and hwrng on a path that does not exist
 * (unavailable). Each credited source gets /dev/truerandom-SOURCE, moded
 * as /dev/truerandom; each serves its own source's blocks alone, which the
 * store's per-source served counts in status show byte for byte; no 32-byte
 * block comes twice across the three devices and /dev/truerandom; the
 * device of a source that is not healthy stalls (O_NONBLOCK: EAGAIN, bits
 * ready 0, a blocking read waits until interrupted) while the others
 * serve; a source's reader is served from a store the other source keeps
 * full.
 *
 * Waits are hang bounds only (the fake kernel's 600 s), never what a test
 * judges: a busy machine or valgrind makes them longer, never a verdict
 * different. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/random.h>
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

#include "fakedaemon.h"

#define BLOCK 32
#define STORE_BLOCKS 64
/* Bytes each test reads from a device: four stores' worth, so that a
 * device is served from refills, not only from what was stored. */
#define READ_BYTES (4 * STORE_BLOCKS * BLOCK)

static FakeDaemon *daemon_;
static Config config;      /* what the daemon was started with: freed after it stopped */
static const FkCaller root = { .uid = 0, .gid = 0 };

/* Every block served to the tests so far, for the no-repeat check. */
static uint8_t *seen;
static size_t n_seen;

/* The injected jitter clock: every read advances it 2000 to 2199 ticks,
 * chosen by xorshift64 from a fixed seed. Only the jitter source's one
 * thread calls it. */
static uint64_t walk_state = 0x9e3779b97f4a7c15ULL;
static uint64_t walk_time = UINT64_C(1) << 30;

static uint64_t walk_clock(void) {
        walk_state ^= walk_state << 13;
        walk_state ^= walk_state >> 7;
        walk_state ^= walk_state << 17;
        walk_time += 2000 + walk_state % 200;
        return walk_time;
}

static int setup(void **state) {
        Config *c = &config;
        char path[160];

        assert_int_equal(fakedaemon_new("persource", "persource", &daemon_), 0);
        assert_int_equal(fakedaemon_config(daemon_, c), 0);
        c->per_source_devices = true;
        c->store_blocks = STORE_BLOCKS;
        c->low_water = STORE_BLOCKS / 4;
        c->source[CONFIG_SOURCE_JITTER] = (SourceConfig){
                .enable = true,
                .credit_auto = true,
                .credit_cap_mbits = 1000,
                .params = { .jitter_buffer = 65536, .jitter_accesses = 64, .jitter_clock = walk_clock },
        };
        snprintf(path, sizeof(path), "%s/no-such-hwrng", daemon_->dir);
        /* The row's default path (/dev/hwrng) is the configuration's to free. */
        free((char *) c->source[CONFIG_SOURCE_HWRNG].params.path);
        c->source[CONFIG_SOURCE_HWRNG] = (SourceConfig){
                .enable = true,
                .credit_mbits = 1000,
                .params = { .path = strdup(path), .sysfs_dir = daemon_->dir },
        };
        assert_non_null(c->source[CONFIG_SOURCE_HWRNG].params.path);
        assert_int_equal(fakedaemon_start(daemon_, c, NULL, NULL), 0);
        seen = malloc(16 * READ_BYTES);
        assert_non_null(seen);
        return 0;
}

static int teardown(void **state) {
        const char *last = NULL;

        for (size_t i = 0; i < daemon_->n_devices; i++)
                assert_int_equal(fk_violations(daemon_->devices[i].fk, &last), 0);
        assert_int_equal(fakedaemon_stop(daemon_), 0);
        daemon_ = fakedaemon_free(daemon_);
        config_done(&config);
        free(seen);
        return 0;
}

static FakeKernel *kernel(const char *name) {
        FakeKernel *fk = fakedaemon_kernel(daemon_, name);

        assert_non_null(fk);
        return fk;
}

static FkFile open_dev(const char *name, int flags) {
        FkFile f;

        assert_int_equal(fk_open(kernel(name), &root, flags, &f), 0);
        return f;
}

/* n bytes from the device, read by read(2)s as a reader loops over short
 * reads; each block kept for the no-repeat check. */
static void read_full(const char *name, size_t n) {
        FakeKernel *fk = kernel(name);
        FkFile f = open_dev(name, O_RDONLY);

        assert_true(n % BLOCK == 0);
        for (size_t got = 0; got < n;) {
                ssize_t r = fk_read(fk, &f, seen + n_seen * BLOCK, MIN((size_t) 4096, n - got));

                assert_true(r > 0);
                /* Whole blocks: a short read of part of one would erase
                 * its tail, and the count below would not add up. */
                assert_int_equal(r % BLOCK, 0);
                got += (size_t) r;
                n_seen += (size_t) r / BLOCK;
        }
        assert_int_equal(fk_release(fk, &f), 0);
}

static const CtlStatusObject *find(const CtlStatus *s, const char *array, const char *name) {
        const CtlStatusObject *root_obj = ctl_status_root(s);

        for (size_t i = 0; i < ctl_status_get_count(root_obj, array); i++) {
                const CtlStatusObject *e = ctl_status_get_element(root_obj, array, i);
                const char *n = e ? ctl_status_get_string(e, "name") : NULL;

                if (n && strcmp(n, name) == 0)
                        return e;
        }
        fail_msg("no %s named %s in status", array, name);
        return NULL;
}

static uint64_t number(const CtlStatusObject *o, const char *key) {
        double v = -1;

        assert_true(ctl_status_get_number(o, key, &v));
        return (uint64_t) v;
}

/* Bytes of each source's blocks served so far (status: sources[].bytes_served). */
typedef struct Served {
        uint64_t file, jitter, hwrng;
} Served;

static Served served(void) {
        CtlStatus *s = NULL;
        Served v;

        assert_int_equal(fakedaemon_status(daemon_, &s), 0);
        v = (Served){ .file = number(find(s, "sources", "file"), "bytes_served"),
                      .jitter = number(find(s, "sources", "jitter"), "bytes_served"),
                      .hwrng = number(find(s, "sources", "hwrng"), "bytes_served") };
        ctl_status_free(s);
        return v;
}

/* A device for each credited source and none for the others: the kernel
 * source is never credited, rdseed and tpm are off. The nodes get
 * /dev/truerandom's mode, and status names each device's source. */
static void test_devices_named(void **state) {
        CtlStatus *s = NULL;
        char path[200];
        struct stat st;
        const char *own[] = { "truerandom-file", "truerandom-jitter", "truerandom-hwrng" };

        for (size_t i = 0; i < 3; i++) {
                assert_non_null(fakedaemon_kernel(daemon_, own[i]));
                snprintf(path, sizeof(path), "%s/%s", daemon_->devdir, own[i]);
                assert_int_equal(stat(path, &st), 0);
                assert_int_equal(st.st_mode & 07777, 0440);
        }
        assert_null(fakedaemon_kernel(daemon_, "truerandom-kernel"));
        assert_null(fakedaemon_kernel(daemon_, "truerandom-rdseed"));
        assert_null(fakedaemon_kernel(daemon_, "truerandom-tpm"));
        assert_int_equal(fakedaemon_status(daemon_, &s), 0);
        assert_string_equal(ctl_status_get_string(find(s, "devices", "truerandom-jitter"), "source"), "jitter");
        assert_string_equal(ctl_status_get_string(find(s, "devices", "truerandom-file"), "source"), "file");
        assert_string_equal(ctl_status_get_string(find(s, "devices", "truerandom-file"), "kind"), "truerandom");
        /* /dev/truerandom serves any source's: its source is null. */
        assert_null(ctl_status_get_string(find(s, "devices", "truerandom"), "source"));
        ctl_status_free(s);
}

/* Each source's device takes its own blocks alone: what it serves shows in
 * its source's served count, byte for byte, and in no other's. */
static void test_each_serves_its_own(void **state) {
        Served a = served(), b, c;

        read_full("truerandom-file", READ_BYTES);
        b = served();
        assert_int_equal(b.file - a.file, READ_BYTES);
        assert_int_equal(b.jitter, a.jitter);
        read_full("truerandom-jitter", READ_BYTES);
        c = served();
        assert_int_equal(c.jitter - b.jitter, READ_BYTES);
        assert_int_equal(c.file, b.file);
        assert_int_equal(c.hwrng, 0);
}

/* /dev/truerandom serves any source's blocks: they add up to what it
 * served; the unavailable hwrng's count stays 0. */
static void test_truerandom_any(void **state) {
        Served a = served(), b;

        read_full("truerandom", READ_BYTES);
        b = served();
        assert_int_equal((b.file - a.file) + (b.jitter - a.jitter), READ_BYTES);
        assert_int_equal(b.hwrng, 0);
}

/* The device of a source that is not healthy (hwrng: unavailable) stalls:
 * a non-blocking read gets EAGAIN, bits ready are 0, a blocking read waits
 * (still waiting after a later request of the same session was answered:
 * the loop is one thread) until interrupted. Meanwhile the others serve,
 * and their bits ready count their own blocks. */
static void test_unhealthy_source_stalls(void **state) {
        FakeKernel *fk = kernel("truerandom-hwrng");
        FkFile nb = open_dev("truerandom-hwrng", O_RDONLY | O_NONBLOCK);
        FkFile f = open_dev("truerandom-hwrng", O_RDONLY);
        FkFile file = open_dev("truerandom-file", O_RDONLY);
        uint8_t buf[BLOCK];
        int bits = -1;
        int64_t parked;
        FkMsg m;

        assert_int_equal(fk_read(fk, &nb, buf, sizeof(buf)), -EAGAIN);
        assert_int_equal(fk_ioctl(fk, &nb, RNDGETENTCNT, &bits, sizeof(bits)), 0);
        assert_int_equal(bits, 0);
        parked = fk_send_read(fk, &f.caller, f.fh, BLOCK, f.flags);
        assert_true(parked > 0);
        read_full("truerandom-file", 4 * BLOCK);
        assert_int_equal(fk_ioctl(fk, &nb, RNDGETENTCNT, &bits, sizeof(bits)), 0);
        assert_int_equal(bits, 0);
        assert_true(fk_waiting(fk, (uint64_t) parked));
        assert_true(fk_send_interrupt(fk, (uint64_t) parked) > 0);
        assert_int_equal(fk_expect_reply(fk, (uint64_t) parked, 600 * 1000, &m), 0);
        assert_int_equal(m.error, -EINTR);
        /* The file source's device counts its own blocks: a whole number
         * of them, at most a full store. */
        assert_int_equal(fk_ioctl(kernel("truerandom-file"), &file, RNDGETENTCNT, &bits, sizeof(bits)), 0);
        assert_true(bits >= 0 && bits % (BLOCK * 8) == 0 && bits <= STORE_BLOCKS * BLOCK * 8);
        assert_int_equal(fk_release(fk, &nb), 0);
        assert_int_equal(fk_release(fk, &f), 0);
        assert_int_equal(fk_release(kernel("truerandom-file"), &file), 0);
}

/* A reader of one source is served even while the other source could keep
 * the store full: readers of both at once, the store a fraction of what
 * each wants (store_set_wanted(): the waiting source's blocks make room). */
static void test_both_at_once(void **state) {
        FakeKernel *fj = kernel("truerandom-jitter"), *ff = kernel("truerandom-file");
        FkFile j = open_dev("truerandom-jitter", O_RDONLY), f = open_dev("truerandom-file", O_RDONLY);
        size_t got_j = 0, got_f = 0;
        Served a = served(), b;

        while (got_j < READ_BYTES || got_f < READ_BYTES) {
                if (got_f < READ_BYTES) {
                        ssize_t r = fk_read(ff, &f, seen + n_seen * BLOCK, MIN((size_t) 4096, READ_BYTES - got_f));
                        assert_true(r > 0 && r % BLOCK == 0);
                        got_f += (size_t) r;
                        n_seen += (size_t) r / BLOCK;
                }
                if (got_j < READ_BYTES) {
                        ssize_t r = fk_read(fj, &j, seen + n_seen * BLOCK, MIN((size_t) 4096, READ_BYTES - got_j));
                        assert_true(r > 0 && r % BLOCK == 0);
                        got_j += (size_t) r;
                        n_seen += (size_t) r / BLOCK;
                }
        }
        b = served();
        assert_int_equal(b.jitter - a.jitter, READ_BYTES);
        assert_int_equal(b.file - a.file, READ_BYTES);
        assert_int_equal(fk_release(fj, &j), 0);
        assert_int_equal(fk_release(ff, &f), 0);
}

static int compare_blocks(const void *a, const void *b) {
        return memcmp(a, b, BLOCK);
}

/* No block came twice, across every device and test above. */
static void test_no_block_twice(void **state) {
        CtlStatus *s = NULL;

        assert_true(n_seen >= 5 * READ_BYTES / BLOCK);
        qsort(seen, n_seen, BLOCK, compare_blocks);
        for (size_t i = 1; i < n_seen; i++)
                assert_int_not_equal(memcmp(seen + (i - 1) * BLOCK, seen + i * BLOCK, BLOCK), 0);
        assert_int_equal(fakedaemon_status(daemon_, &s), 0);
        /* Said for the log, not judged: how often a full store made room. */
        printf("# %zu blocks, none twice; store blocks_displaced %" PRIu64 "\n", n_seen,
               number(ctl_status_get_object(ctl_status_root(s), "store"), "blocks_displaced"));
        ctl_status_free(s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_devices_named),
                cmocka_unit_test(test_each_serves_its_own),
                cmocka_unit_test(test_truerandom_any),
                cmocka_unit_test(test_unhealthy_source_stalls),
                cmocka_unit_test(test_both_at_once),
                cmocka_unit_test(test_no_block_twice),
        };

        fakedaemon_block_signals();
        return cmocka_run_group_tests(tests, setup, teardown);
}
