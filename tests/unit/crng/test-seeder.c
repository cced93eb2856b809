/* test-seeder.c - the seeding policy against a real Store and Crng: the
 * first seed, each trigger, requests joining a pending one, the rate limit,
 * what a VM generation change does to the store and the keystream, and
 * lost kernel log records: rekeyed each time, purged at most once per
 * SEEDER_LOST_PURGE_USEC, however many (issue 23).
 *
 * The clock is the test's (SeederParams.now_usec). getrandom() is wrapped
 * (-Wl,--wrap=getrandom): calls are counted, and a test can make it fail or
 * return fixed bytes, so "from getrandom() whatever kernel_mix says" and the
 * fallback without it are both seen. With kernel_mix off and fixed bytes a
 * twin Crng fed the same blocks by hand shows exactly what the seeder's Crng
 * would have served without the change. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <cmocka.h>
#include <sodium.h>

#include "crng/seeder.h"

#define CREDIT 320000U
#define SEC 1000000ULL

ssize_t __real_getrandom(void *buf, size_t n, unsigned flags);
ssize_t __wrap_getrandom(void *buf, size_t n, unsigned flags);

typedef enum KernelMode { KERNEL_REAL, KERNEL_FIXED, KERNEL_FAIL } KernelMode;

static KernelMode kernel_mode;
static unsigned kernel_calls;
static uint64_t now;

ssize_t __wrap_getrandom(void *buf, size_t n, unsigned flags) {
        kernel_calls++;
        switch (kernel_mode) {
        case KERNEL_FIXED:
                memset(buf, 0x6b, n);
                return (ssize_t) n;
        case KERNEL_FAIL:
                errno = ENOSYS;
                return -1;
        default:
                return __real_getrandom(buf, n, flags);
        }
}

static uint64_t test_now(void *userdata) {
        return now;
}

typedef struct Fixture {
        Store *store;
        Crng *crng;
        Crng *twin;     /* fed by hand what the seeder feeds crng */
        Seeder *seeder;
        unsigned next_tag;
} Fixture;

static void make_block(uint8_t block[static STORE_BLOCK_SIZE], unsigned tag) {
        for (unsigned i = 0; i < STORE_BLOCK_SIZE; i++)
                block[i] = (uint8_t) (tag * 37 + i);
}

static void put_blocks(Fixture *f, unsigned n) {
        uint8_t block[STORE_BLOCK_SIZE];

        for (unsigned i = 0; i < n; i++) {
                make_block(block, f->next_tag++);
                assert_int_equal(store_put(f->store, block, CREDIT, 1, store_epoch(f->store)), 0);
        }
}

static void fixture_init(Fixture *f, bool kernel_mix, uint64_t min_interval_usec) {
        static const uint8_t initial[CRNG_KEY_SIZE] = { 's', 'e', 'e', 'd' };

        *f = (Fixture){ 0 };
        now = 1000 * SEC;
        kernel_mode = KERNEL_REAL;
        kernel_calls = 0;
        assert_int_equal(store_new(16, 0, &f->store), 0);
        assert_int_equal(crng_new(initial, CRNG_BUFFER_MIN, &f->crng), 0);
        assert_int_equal(crng_new(initial, CRNG_BUFFER_MIN, &f->twin), 0);
        assert_int_equal(seeder_new(&(SeederParams){ .kernel_mix = kernel_mix,
                                                     .min_interval_usec = min_interval_usec,
                                                     .now_usec = test_now },
                                    f->store, f->crng, &f->seeder),
                         0);
}

/* Seeded from the first block, as the daemon's first pump does. */
static void fixture_seeded(Fixture *f, bool kernel_mix, uint64_t min_interval_usec) {
        fixture_init(f, kernel_mix, min_interval_usec);
        put_blocks(f, 1);
        assert_int_equal(seeder_pump(f->seeder), SEED_FIRST);
        assert_true(crng_is_seeded(f->crng));
}

static void fixture_done(Fixture *f) {
        assert_null(seeder_free(f->seeder));
        crng_free(f->crng);
        crng_free(f->twin);
        store_free(f->store);
}

static SeederStats stats(const Fixture *f) {
        SeederStats st;
        seeder_get_stats(f->seeder, &st);
        return st;
}

/* The accounting invariant and the blocks' balance, as status reports them. */
static void assert_accounting(const Fixture *f) {
        StoreStats st;

        store_get_stats(f->store, &st);
        assert_int_equal(st.blocks_in, st.blocks_served + st.blocks_seeded + st.blocks_purged + st.fill);
        assert_true(st.bytes_served * 8 * 1000 * 5 <= st.credited_mbits_taken * 4);
}

/* ------------------------------------------------------------------ */

static void test_first_seed(void **state) {
        Fixture f;
        SeederStats st;

        fixture_init(&f, true, 0);
        assert_true(seeder_wants_block(f.seeder));
        /* Nothing to reseed yet: the first seed comes anyway. */
        for (SeedTrigger t = 0; t < _SEED_TRIGGER_MAX; t++)
                if (t != SEED_TRIGGER_VM_GENERATION && t != SEED_TRIGGER_LOST_RECORDS)
                        assert_int_equal(seeder_trigger(f.seeder, t), -ENODATA);
        assert_int_equal(seeder_trigger(f.seeder, _SEED_TRIGGER_MAX), -EINVAL);
        assert_int_equal(seeder_pump(f.seeder), SEED_NONE);
        assert_false(crng_is_seeded(f.crng));

        put_blocks(&f, 3);
        now += 5;
        assert_int_equal(seeder_pump(f.seeder), SEED_FIRST);
        assert_true(crng_is_seeded(f.crng));
        assert_int_equal(crng_generation(f.crng), 1);
        assert_int_equal(store_fill(f.store), 2);
        assert_false(seeder_wants_block(f.seeder));
        /* Nothing pending: the rest is for readers. */
        assert_int_equal(seeder_pump(f.seeder), SEED_NONE);
        assert_int_equal(store_fill(f.store), 2);
        assert_false(seeder_next_due(f.seeder, NULL));

        st = stats(&f);
        assert_int_equal(st.seeds, 1);
        assert_int_equal(st.last_reseed_usec, now);
        for (SeedTrigger t = 0; t < _SEED_TRIGGER_MAX; t++) {
                assert_int_equal(st.requests[t], 0);
                assert_int_equal(st.reseeds[t], 0);
        }
        /* kernel_mix: the seed had getrandom() in it. */
        assert_int_equal(kernel_calls, 1);
        fixture_done(&f);
}

static void test_credit_first_seed(void **state) {
        Fixture f;

        fixture_init(&f, false, 0);
        put_blocks(&f, 1);
        crng_add_credit(f.crng, CRNG_SEED_BITS - 1);
        assert_int_equal(seeder_seed_from_credit(f.seeder), SEED_NONE);
        crng_add_credit(f.crng, 1);
        assert_int_equal(seeder_seed_from_credit(f.seeder), SEED_FIRST);
        assert_true(crng_is_seeded(f.crng));
        assert_int_equal(seeder_seed_from_credit(f.seeder), SEED_NONE);
        /* No store block, no getrandom() without kernel_mix. */
        assert_int_equal(store_fill(f.store), 1);
        assert_int_equal(stats(&f).seeds, 1);
        assert_int_equal(kernel_calls, 0);
        fixture_done(&f);
}

/* Every trigger but the VM's: the next block, and nothing else. */
static void test_each_trigger_reseeds_from_next_block(void **state) {
        static const SeedTrigger triggers[] = { SEED_TRIGGER_PERIODIC, SEED_TRIGGER_IOCTL, SEED_TRIGGER_CONTROL,
                                                SEED_TRIGGER_RESUME };

        for (size_t i = 0; i < sizeof(triggers) / sizeof(triggers[0]); i++) {
                SeedTrigger t = triggers[i];
                StoreStats before, after;
                SeederStats st;
                Fixture f;

                fixture_seeded(&f, false, 0);
                put_blocks(&f, 3);
                store_get_stats(f.store, &before);
                assert_int_equal(seeder_trigger(f.seeder, t), 0);
                assert_true(seeder_wants_block(f.seeder));
                assert_true(stats(&f).pending);
                assert_int_equal(seeder_pump(f.seeder), SEED_RESEEDED);
                assert_int_equal(crng_generation(f.crng), 2);
                assert_false(seeder_wants_block(f.seeder));
                assert_int_equal(seeder_pump(f.seeder), SEED_NONE);

                store_get_stats(f.store, &after);
                assert_int_equal(after.blocks_seeded, before.blocks_seeded + 1);
                assert_int_equal(after.fill, 2);
                assert_int_equal(after.blocks_purged, 0);
                st = stats(&f);
                for (SeedTrigger u = 0; u < _SEED_TRIGGER_MAX; u++) {
                        assert_int_equal(st.requests[u], u == t);
                        assert_int_equal(st.reseeds[u], u == t);
                }
                assert_int_equal(st.seeds, 2);
                assert_false(st.pending);
                assert_int_equal(st.vm_generation_changes, 0);
                assert_int_equal(st.rekeys, 0);
                fixture_done(&f);
        }
}

/* A resume reseeds exactly once, however often it is reported before the
 * block comes; the store keeps its blocks (the machine was not copied), and
 * the reseed takes the oldest block, the one the next reader would have
 * got: precedence over readers. */
static void test_resume_once_keeps_store(void **state) {
        uint8_t got[STORE_BLOCK_SIZE], expected[STORE_BLOCK_SIZE];
        SeederStats st;
        Fixture f;

        fixture_seeded(&f, false, 0);
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_RESUME), 0);
        assert_int_equal(seeder_pump(f.seeder), SEED_NONE); /* no block yet */
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_RESUME), 0);
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_PERIODIC), 0);
        assert_true(seeder_wants_block(f.seeder));

        put_blocks(&f, 4);                                   /* tags 1..4 */
        assert_int_equal(seeder_pump(f.seeder), SEED_RESEEDED);
        assert_int_equal(seeder_pump(f.seeder), SEED_NONE);
        assert_int_equal(crng_generation(f.crng), 2);
        for (unsigned tag = 2; tag <= 4; tag++) {
                make_block(expected, tag);
                assert_int_equal(store_take(f.store, got, 32), 0);
                assert_memory_equal(got, expected, sizeof(got));
        }
        st = stats(&f);
        assert_int_equal(st.requests[SEED_TRIGGER_RESUME], 2);
        assert_int_equal(st.reseeds[SEED_TRIGGER_RESUME], 1);
        assert_int_equal(st.reseeds[SEED_TRIGGER_PERIODIC], 1);
        assert_int_equal(st.joined, 2);
        assert_int_equal(st.seeds, 2);
        assert_int_equal(st.vm_blocks_purged, 0);
        assert_accounting(&f);
        fixture_done(&f);
}

/* A clone: the stored blocks are gone before the next byte, the buffered
 * keystream is never served, getrandom() rekeys at once, and the next fresh
 * block is the credited reseed. The twin went through the same seeds by
 * hand and shows what the copies would have served. */
static void vm_generation(KernelMode mode) {
        uint8_t a[64], b[64], kernel[CRNG_KEY_SIZE] = { 0 }, block[STORE_BLOCK_SIZE];
        StoreStats ss;
        SeederStats st;
        Fixture f;

        fixture_seeded(&f, false, 0);
        make_block(block, 0);
        assert_int_equal(crng_reseed(f.twin, block, kernel), 0);
        crng_generate(f.crng, a, sizeof(a));
        crng_generate(f.twin, b, sizeof(b));
        assert_memory_equal(a, b, sizeof(a));

        /* A reader was served a block and a half; six wait in the store. */
        put_blocks(&f, 8);
        assert_int_equal(store_take(f.store, block, 32), 0);
        assert_int_equal(store_take(f.store, block, 16), 0);

        kernel_mode = mode;
        kernel_calls = 0;
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_VM_GENERATION), 0);
        /* getrandom() asked although kernel_mix is off. */
        assert_true(kernel_calls >= 1);
        assert_int_equal(store_fill(f.store), 0);
        assert_int_equal(store_take(f.store, block, 32), -ENODATA);
        crng_generate(f.crng, a, sizeof(a));
        crng_generate(f.twin, b, sizeof(b));
        assert_memory_not_equal(a, b, sizeof(a));
        /* Not credited: the generation moves with the fresh block only. */
        assert_int_equal(crng_generation(f.crng), 1);
        assert_true(seeder_wants_block(f.seeder));

        st = stats(&f);
        assert_int_equal(st.vm_generation_changes, 1);
        assert_int_equal(st.vm_blocks_purged, 6);
        assert_int_equal(st.rekeys, mode == KERNEL_FAIL ? 0 : 1);
        assert_int_equal(st.requests[SEED_TRIGGER_VM_GENERATION], 1);
        assert_int_equal(st.reseeds[SEED_TRIGGER_VM_GENERATION], 0);
        assert_true(st.pending);
        store_get_stats(f.store, &ss);
        assert_int_equal(ss.blocks_purged, 6);
        assert_int_equal(ss.bytes_served, 48);
        assert_accounting(&f);

        /* The first fresh block goes to the CRNG. */
        put_blocks(&f, 2);
        assert_int_equal(seeder_pump(f.seeder), SEED_RESEEDED);
        assert_int_equal(crng_generation(f.crng), 2);
        assert_int_equal(store_fill(f.store), 1);
        st = stats(&f);
        assert_int_equal(st.reseeds[SEED_TRIGGER_VM_GENERATION], 1);
        assert_false(st.pending);
        assert_accounting(&f);
        fixture_done(&f);
}

static void test_vm_generation(void **state) {
        vm_generation(KERNEL_REAL);
        /* The same bytes on both copies: the discard alone still keeps the
         * old buffer from being served. */
        vm_generation(KERNEL_FIXED);
        /* No getrandom() at all: discarded, not rekeyed. */
        vm_generation(KERNEL_FAIL);
}

/* Before the first seed a clone still loses its store and its buffer, and
 * the first seed counts for it. */
static void test_vm_generation_unseeded(void **state) {
        uint8_t a[64], b[64];
        Fixture f;

        fixture_init(&f, false, 0);
        put_blocks(&f, 3);
        crng_generate(f.crng, a, 16);
        crng_generate(f.twin, b, 16);
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_VM_GENERATION), 0);
        assert_int_equal(store_fill(f.store), 0);
        crng_generate(f.crng, a, sizeof(a));
        crng_generate(f.twin, b, sizeof(b));
        assert_memory_not_equal(a, b, sizeof(a));
        put_blocks(&f, 1);
        assert_int_equal(seeder_pump(f.seeder), SEED_FIRST);
        assert_int_equal(stats(&f).reseeds[SEED_TRIGGER_VM_GENERATION], 1);
        fixture_done(&f);
}

/* A user floods the kernel log (issue 23): 1,200 losses, one every 50 ms
 * for 60 s of the test's clock, a fresh block each second and the pump
 * after every loss as the daemon runs it. Every loss rekeys; the store is
 * purged at the first loss and then once per SEEDER_LOST_PURGE_USEC, never
 * closer; between purges the blocks stay for readers and no reseed is
 * asked for. A loss held by the limit is purged for when the time is up
 * even with no loss after it, and a VM generation change the kernel
 * reports purges at once whatever the limit. */
static void test_lost_records_flood(void **state) {
        usec_t start, last_purge = 0, due = 0;
        uint64_t purges = 0;
        StoreStats ss;
        SeederStats st;
        Fixture f;

        fixture_seeded(&f, false, 0);
        put_blocks(&f, 6);
        start = now;
        for (int i = 0; i < 1200; i++) {
                uint64_t was = stats(&f).vm_generation_changes;

                if (i % 20 == 0)
                        put_blocks(&f, 1);
                assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_LOST_RECORDS), 0);
                (void)seeder_pump(f.seeder);
                if (stats(&f).vm_generation_changes > was) {
                        assert_true(purges == 0 || now - last_purge >= SEEDER_LOST_PURGE_USEC);
                        last_purge = now;
                        purges++;
                }
                now += SEC / 20;
        }
        st = stats(&f);
        /* 0, 10, ... 50 s; the loss at 60 s is the next test's. */
        assert_int_equal(purges, 6);
        assert_int_equal(st.vm_generation_changes, 6);
        assert_int_equal(st.rekeys, 1200);
        assert_int_equal(st.requests[SEED_TRIGGER_LOST_RECORDS], 1200);
        /* One block for each purge's reseed (and the first seed's); the
         * rest stayed for readers. */
        assert_int_equal(st.reseeds[SEED_TRIGGER_LOST_RECORDS], 6);
        store_get_stats(f.store, &ss);
        assert_int_equal(ss.blocks_seeded, 7);
        assert_accounting(&f);

        /* Held: rekeyed, the blocks kept, no block asked for. */
        now = last_purge + SEC;
        put_blocks(&f, 2);
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_LOST_RECORDS), 0);
        assert_false(seeder_wants_block(f.seeder));
        assert_int_equal(seeder_pump(f.seeder), SEED_NONE);
        assert_int_equal(stats(&f).vm_generation_changes, 6);
        assert_true(store_fill(f.store) >= 2);
        /* The purge it holds falls due 10 s after the last one. */
        assert_true(seeder_next_due(f.seeder, &due));
        assert_int_equal(due, last_purge + SEEDER_LOST_PURGE_USEC);
        now = due - 1;
        assert_int_equal(seeder_pump(f.seeder), SEED_NONE);
        assert_int_equal(stats(&f).vm_generation_changes, 6);
        now = due;
        assert_int_equal(seeder_pump(f.seeder), SEED_NONE);  /* purged: no block left */
        assert_int_equal(stats(&f).vm_generation_changes, 7);
        assert_int_equal(store_fill(f.store), 0);
        assert_true(seeder_wants_block(f.seeder));
        put_blocks(&f, 2);
        assert_int_equal(seeder_pump(f.seeder), SEED_RESEEDED);
        assert_false(seeder_next_due(f.seeder, NULL));

        /* The kernel's own report, a second after that purge: at once. */
        now += SEC;
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_VM_GENERATION), 0);
        assert_int_equal(store_fill(f.store), 0);
        st = stats(&f);
        assert_int_equal(st.vm_generation_changes, 8);
        assert_int_equal(st.rekeys, 1202);
        assert_true(now - start < 80 * SEC);
        assert_accounting(&f);
        fixture_done(&f);
}

/* min_interval: block-taking reseeds at most once per interval; requests
 * within it join the pending one, which falls due when the interval ends;
 * meanwhile the blocks stay for readers. A VM generation change is not
 * held back. */
static void test_rate_limit(void **state) {
        uint64_t due = 0, seeded_at;
        SeederStats st;
        Fixture f;

        fixture_seeded(&f, false, SEC);
        seeded_at = now;
        put_blocks(&f, 4);

        now += SEC / 10;
        for (int i = 0; i < 10000; i++)
                assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_IOCTL), 0);
        assert_false(seeder_wants_block(f.seeder));
        assert_int_equal(seeder_pump(f.seeder), SEED_NONE);
        assert_true(seeder_next_due(f.seeder, &due));
        assert_int_equal(due, seeded_at + SEC);
        now = due - 1;
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_CONTROL), 0);
        assert_int_equal(seeder_pump(f.seeder), SEED_NONE);
        assert_int_equal(store_fill(f.store), 4);

        now = due;
        assert_true(seeder_wants_block(f.seeder));
        assert_int_equal(seeder_pump(f.seeder), SEED_RESEEDED);
        assert_int_equal(store_fill(f.store), 3);
        st = stats(&f);
        assert_int_equal(st.requests[SEED_TRIGGER_IOCTL], 10000);
        assert_int_equal(st.reseeds[SEED_TRIGGER_IOCTL], 1);
        assert_int_equal(st.reseeds[SEED_TRIGGER_CONTROL], 1);
        assert_int_equal(st.joined, 10000);
        assert_int_equal(st.seeds, 2);

        /* A clone, right after: reseeded from the next block at once. */
        now += SEC / 5;
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_VM_GENERATION), 0);
        assert_true(seeder_wants_block(f.seeder));
        assert_true(seeder_next_due(f.seeder, &due));
        assert_int_equal(due, now);
        put_blocks(&f, 2);
        assert_int_equal(seeder_pump(f.seeder), SEED_RESEEDED);

        /* The limit counts from that reseed; a reload without a limit
         * makes the pending one due at once. */
        now += SEC / 10;
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_RESUME), 0);
        assert_false(seeder_wants_block(f.seeder));
        seeder_set_min_interval(f.seeder, 0);
        assert_true(seeder_wants_block(f.seeder));
        assert_int_equal(seeder_pump(f.seeder), SEED_RESEEDED);
        assert_int_equal(stats(&f).seeds, 4);
        fixture_done(&f);
}

/* kernel_mix decides for credited seeds; getrandom() failing costs nothing
 * but its bytes. */
static void test_kernel_mix(void **state) {
        Fixture f;

        fixture_seeded(&f, true, 0);
        put_blocks(&f, 1);
        kernel_calls = 0;
        kernel_mode = KERNEL_FAIL;
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_CONTROL), 0);
        assert_int_equal(seeder_pump(f.seeder), SEED_RESEEDED);
        assert_int_equal(kernel_calls, 2); /* GRND_INSECURE, then GRND_NONBLOCK */
        fixture_done(&f);

        fixture_seeded(&f, false, 0);
        put_blocks(&f, 1);
        kernel_calls = 0;
        assert_int_equal(seeder_trigger(f.seeder, SEED_TRIGGER_PERIODIC), 0);
        assert_int_equal(seeder_pump(f.seeder), SEED_RESEEDED);
        assert_int_equal(kernel_calls, 0);
        fixture_done(&f);
}

static void test_names_and_arguments(void **state) {
        Store *store = NULL;
        Crng *crng = NULL;
        Seeder *s = NULL;
        uint8_t initial[CRNG_KEY_SIZE] = { 0 };

        assert_string_equal(seed_trigger_to_string(SEED_TRIGGER_PERIODIC), "periodic");
        assert_string_equal(seed_trigger_to_string(SEED_TRIGGER_IOCTL), "ioctl");
        assert_string_equal(seed_trigger_to_string(SEED_TRIGGER_CONTROL), "control");
        assert_string_equal(seed_trigger_to_string(SEED_TRIGGER_VM_GENERATION), "vm_generation");
        assert_string_equal(seed_trigger_to_string(SEED_TRIGGER_RESUME), "resume");
        assert_string_equal(seed_trigger_to_string(SEED_TRIGGER_LOST_RECORDS), "lost_records");
        assert_string_equal(seed_trigger_to_string(_SEED_TRIGGER_MAX), "unknown");
        assert_int_equal(store_new(2, 0, &store), 0);
        assert_int_equal(crng_new(initial, CRNG_BUFFER_MIN, &crng), 0);
        assert_int_equal(seeder_new(NULL, store, crng, &s), -EINVAL);
        assert_int_equal(seeder_new(&(SeederParams){ 0 }, NULL, crng, &s), -EINVAL);
        assert_int_equal(seeder_new(&(SeederParams){ 0 }, store, NULL, &s), -EINVAL);
        assert_null(s);
        /* Without a clock of its own it uses CLOCK_MONOTONIC. */
        assert_int_equal(seeder_new(&(SeederParams){ 0 }, store, crng, &s), 0);
        assert_int_equal(store_put(store, (uint8_t[STORE_BLOCK_SIZE]){ 1 }, CREDIT, 1, store_epoch(store)), 0);
        assert_int_equal(seeder_pump(s), SEED_FIRST);
        {
                SeederStats st;
                seeder_get_stats(s, &st);
                assert_true(st.last_reseed_usec > 0);
        }
        assert_null(seeder_free(s));
        assert_null(seeder_free(NULL));
        crng_free(crng);
        store_free(store);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_first_seed),
                cmocka_unit_test(test_credit_first_seed),
                cmocka_unit_test(test_each_trigger_reseeds_from_next_block),
                cmocka_unit_test(test_resume_once_keeps_store),
                cmocka_unit_test(test_vm_generation),
                cmocka_unit_test(test_vm_generation_unseeded),
                cmocka_unit_test(test_lost_records_flood),
                cmocka_unit_test(test_rate_limit),
                cmocka_unit_test(test_kernel_mix),
                cmocka_unit_test(test_names_and_arguments),
        };

        if (sodium_init() < 0)
                return 1;
        return cmocka_run_group_tests(tests, NULL, NULL);
}
