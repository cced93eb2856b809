/* bench-crng.c - the CRNG against raw ChaCha20 keystream and getrandom().
 *
 * For 32 B, 4 KiB and 64 KiB requests, each round times every contender
 * once, in an order that rotates from round to round so that neither warm-up
 * nor a noisy neighbour favours one of them; the table reports medians over
 * the rounds. The last line is one JSON object for scripts. It measures, it
 * does not judge: the exit status says nothing about speed.
 *
 *   bench-crng [BUFFER_SIZE]      (CRNG buffer, default CRNG_BUFFER_MAX) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <sodium.h>

#include "crng/crng.h"

#define ROUNDS 25
#define TRIAL_NS 15000000LL     /* per contender, size and round */
#define BATCH 16                /* calls between clock reads */

enum { CRNG, KEYSTREAM, GETRANDOM, CONTENDERS };
static const char *const contender_name[CONTENDERS] = { "crng", "keystream", "getrandom" };
static const size_t sizes[] = { 32, 4096, 65536 };
static const char *const size_tag[] = { "32", "4k", "64k" };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static Crng *crng;
static uint8_t key[crypto_stream_chacha20_ietf_KEYBYTES];
static uint8_t nonce[crypto_stream_chacha20_ietf_NONCEBYTES];

static long long now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int fill(int who, uint8_t *buf, size_t n) {
        switch (who) {
        case CRNG:
                crng_generate(crng, buf, n);
                return 0;
        case KEYSTREAM:
                crypto_stream_chacha20_ietf(buf, n, nonce, key);
                sodium_increment(nonce, sizeof(nonce));
                return 0;
        case GETRANDOM:
                for (size_t done = 0; done < n;) {
                        ssize_t r = getrandom(buf + done, n - done, 0);
                        if (r < 0) {
                                if (errno == EINTR)
                                        continue;
                                return -errno;
                        }
                        done += (size_t) r;
                }
                return 0;
        default:
                abort();
        }
}

/* Calls per second of one contender at one size. */
static int trial(int who, uint8_t *buf, size_t n, double *ret_rate) {
        long long start = now_ns(), elapsed;
        unsigned long long calls = 0;

        do {
                for (int i = 0; i < BATCH; i++) {
                        int r = fill(who, buf, n);
                        if (r < 0)
                                return r;
                }
                calls += BATCH;
                elapsed = now_ns() - start;
        } while (elapsed < TRIAL_NS);

        *ret_rate = (double) calls * 1e9 / (double) elapsed;
        return 0;
}

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static double median(double v[static ROUNDS]) {
        qsort(v, ROUNDS, sizeof(double), compare_double);
        return v[ROUNDS / 2];
}

int main(int argc, char *argv[]) {
        static double rate[NSIZES][CONTENDERS][ROUNDS];
        double med[NSIZES][CONTENDERS];
        uint8_t initial[CRNG_KEY_SIZE];
        size_t buffer_size = CRNG_BUFFER_MAX;
        uint8_t *buf;
        int r;

        if (argc > 2 || (argc == 2 && sscanf(argv[1], "%zu", &buffer_size) != 1)) {
                fprintf(stderr, "usage: %s [BUFFER_SIZE]\n", argv[0]);
                return 2;
        }
        if (sodium_init() < 0) {
                fprintf(stderr, "sodium_init failed\n");
                return 1;
        }
        randombytes_buf(initial, sizeof(initial));
        randombytes_buf(key, sizeof(key));
        r = crng_new(initial, buffer_size, &crng);
        if (r < 0) {
                fprintf(stderr, "crng_new(buffer %zu): %s\n", buffer_size, strerror(-r));
                return 1;
        }
        buf = aligned_alloc(64, sizes[NSIZES - 1]);
        if (!buf) {
                fprintf(stderr, "out of memory\n");
                return 1;
        }
        memset(buf, 0, sizes[NSIZES - 1]);

        for (int round = 0; round < ROUNDS; round++)
                for (size_t s = 0; s < NSIZES; s++)
                        for (int k = 0; k < CONTENDERS; k++) {
                                int who = (round + k) % CONTENDERS;
                                r = trial(who, buf, sizes[s], &rate[s][who][round]);
                                if (r < 0) {
                                        fprintf(stderr, "%s: %s\n", contender_name[who], strerror(-r));
                                        return 1;
                                }
                        }

        printf("CRNG buffer %zu B, %d rounds x %lld ms per contender and size, medians\n\n",
               buffer_size, ROUNDS, TRIAL_NS / 1000000);
        printf("%8s  %-10s %14s %10s\n", "request", "contender", "calls/s", "MB/s");
        for (size_t s = 0; s < NSIZES; s++) {
                for (int who = 0; who < CONTENDERS; who++) {
                        med[s][who] = median(rate[s][who]);
                        printf("%8zu  %-10s %14.0f %10.1f\n", sizes[s], contender_name[who],
                               med[s][who], med[s][who] * (double) sizes[s] / 1e6);
                }
                printf("%8s  crng/keystream %.3f   crng/getrandom %.2f\n\n", "",
                       med[s][CRNG] / med[s][KEYSTREAM], med[s][CRNG] / med[s][GETRANDOM]);
        }

        printf("{\"buffer_size\": %zu, \"rounds\": %d", buffer_size, ROUNDS);
        for (size_t s = 0; s < NSIZES; s++)
                printf(", \"crng_vs_keystream_%s\": %.3f, \"crng_vs_getrandom_%s\": %.3f",
                       size_tag[s], med[s][CRNG] / med[s][KEYSTREAM],
                       size_tag[s], med[s][CRNG] / med[s][GETRANDOM]);
        for (size_t s = 0; s < NSIZES; s++)
                for (int who = 0; who < CONTENDERS; who++)
                        printf(", \"%s_calls_per_s_%s\": %.0f", contender_name[who], size_tag[s],
                               med[s][who]);
        printf("}\n");

        free(buf);
        crng_free(crng);
        return 0;
}
