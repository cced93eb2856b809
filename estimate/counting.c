/* counting.c - SP 800-90B §6.3.1 most common value, §6.3.2 collision,
 * §6.3.3 Markov and §6.3.4 compression estimates.
 *
 * The collision estimate solves the spec's step 7 in closed form: for
 * binary data the expected time to the first collision is 2 + 2p(1-p), a
 * quadratic in p. The compression estimate inverts Maurer's statistic for
 * the near-uniform distribution with one likely 6-bit block; its G()
 * function is summed in closed form (the inner sums of §6.3.4 step 7 nest),
 * stopping once the geometric tail can no longer change a long double.
 * Flow: noniid.c hands symbols in; estimates come back. */
#include "counting.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "bound.h"

double ea_count_mcv(const uint8_t *s, size_t n, unsigned k) {
        size_t counts[256] = { 0 };
        size_t mode = 0;

        if (n < 2)
                return NAN;
        for (size_t i = 0; i < n; i++)
                counts[s[i]]++;
        for (unsigned v = 0; v < k; v++)
                if (counts[v] > mode)
                        mode = counts[v];
        return -log2(ea_bound_upper((double)mode / (double)n, (double)n));
}

double ea_count_collision(const uint8_t *s, size_t n) {
        size_t i = 0, v = 0;
        double sum_sq = 0.0, mean, sigma, x;

        /* Walk the data in non-overlapping steps to each collision; for bits
         * a collision comes after 2 or 3 samples. */
        while (i + 1 < n) {
                unsigned t;

                if (s[i] == s[i + 1])
                        t = 2;
                else if (i + 2 < n)
                        t = 3;
                else
                        break;
                v++;
                sum_sq += (double)(t * t);
                i += t;
        }
        if (v < 2)
                return NAN;

        mean = (double)i / (double)v;
        sigma = sqrt((sum_sq - (double)i * mean) / (double)(v - 1));
        x = mean - EA_Z_ALPHA * sigma / sqrt((double)v);
        if (x < 2.0)
                x = 2.0;
        /* 2 + 2p(1-p) = x has a root above 1/2 only while x < 2.5; beyond
         * that the data look better than ideal and earn a full bit. */
        if (x >= 2.5)
                return 1.0;
        return -log2(0.5 + sqrt(1.25 - 0.5 * x));
}

double ea_count_markov(const uint8_t *s, size_t n) {
        size_t c0 = 0, c00 = 0, c10 = 0, c1;
        double p0, p1, p00 = 0.0, p01 = 0.0, p10 = 0.0, p11 = 0.0, h = 128.0;

        if (n < 2)
                return NAN;
        for (size_t i = 0; i + 1 < n; i++) {
                if (s[i] == 0) {
                        c0++;
                        c00 += s[i + 1] == 0;
                } else {
                        c10 += s[i + 1] == 0;
                }
        }
        /* Transition probabilities count pairs, so the last sample has no
         * successor; the initial probabilities count every sample. */
        c1 = n - 1 - c0;
        if (c0 > 0) {
                p00 = (double)c00 / (double)c0;
                p01 = 1.0 - p00;
        }
        if (c1 > 0) {
                p10 = (double)c10 / (double)c1;
                p11 = 1.0 - p10;
        }
        c0 += s[n - 1] == 0;
        p0 = (double)c0 / (double)n;
        p1 = 1.0 - p0;

        /* The most likely 128-bit sequence is one of these six. */
        if (p00 > 0.0)
                h = fmin(h, -log2(p0) - 127.0 * log2(p00));
        if (p01 > 0.0 && p10 > 0.0) {
                h = fmin(h, -log2(p0) - 64.0 * log2(p01) - 63.0 * log2(p10));
                h = fmin(h, -log2(p1) - 64.0 * log2(p10) - 63.0 * log2(p01));
        }
        if (p01 > 0.0 && p11 > 0.0)
                h = fmin(h, -log2(p0) - log2(p01) - 126.0 * log2(p11));
        if (p10 > 0.0 && p00 > 0.0)
                h = fmin(h, -log2(p1) - log2(p10) - 126.0 * log2(p00));
        if (p11 > 0.0)
                h = fmin(h, -log2(p1) - 127.0 * log2(p11));
        return fmin(h / 128.0, 1.0);
}

/* §6.3.4: b = 6 bit blocks, d = 1000 blocks to initialise the dictionary. */
#define BLOCK_BITS 6U
#define BLOCK_VALUES (1U << BLOCK_BITS)
#define DICT_BLOCKS 1000U

typedef struct Compression {
        const double *log2i;   /* log2i[i] = log2(i), i < blocks + 1 */
        size_t blocks;         /* L in the spec */
} Compression;

/* G(z) of §6.3.4 step 7:
 *   (1/v) sum_{t=d+1}^{L} [ sum_{u<t} log2(u) z^2 (1-z)^(u-1) + log2(t) z (1-z)^(t-1) ]
 * With a_u = log2(u) (1-z)^(u-1) and A(m) = sum_{u<=m} a_u this is
 *   (1/v) [ z^2 ((L-d) A(d) + sum_{u=d+1}^{L-1} (L-u) a_u) + z (A(L) - A(d)) ]. */
static long double compression_g(const Compression *c, long double z) {
        const size_t d = DICT_BLOCKS, L = c->blocks;
        long double b = 1.0L - z, bu = 1.0L, a_d = 0.0L, a_tail = 0.0L, weighted = 0.0L;
        size_t u;

        for (u = 1; u <= d; u++) {
                a_d += (long double)c->log2i[u] * bu;
                bu *= b;
        }
        for (; u <= L; u++) {
                long double a = (long double)c->log2i[u] * bu;

                a_tail += a;
                if (u < L)
                        weighted += (long double)(L - u) * a;
                /* The rest is below a geometric series of ratio b from here. */
                if (a * (long double)L < 1e-22L * z * (weighted + a_d))
                        break;
                bu *= b;
        }
        return (z * z * ((long double)(L - d) * a_d + weighted) + z * a_tail) / (long double)(L - d);
}

/* The expected statistic when one block has probability p and the other
 * 63 share the rest. */
static double compression_expect(double p, void *ctx) {
        const Compression *c = ctx;
        long double q = (1.0L - p) / (long double)(BLOCK_VALUES - 1);

        return (double)(compression_g(c, p) + (long double)(BLOCK_VALUES - 1) * compression_g(c, q));
}

int ea_count_compression(const uint8_t *s, size_t n, double *ret_h) {
        size_t last[BLOCK_VALUES] = { 0 };
        size_t blocks = n / BLOCK_BITS, v;
        long double sum = 0.0L, sum_sq = 0.0L;
        double mean, sigma, x, p, *log2i;
        Compression c;

        if (blocks <= DICT_BLOCKS) {
                *ret_h = NAN;
                return 0;
        }
        log2i = malloc((blocks + 1) * sizeof(*log2i));
        if (!log2i)
                return -ENOMEM;
        log2i[0] = 0.0;
        for (size_t i = 1; i <= blocks; i++)
                log2i[i] = log2((double)i);

        /* last[] holds the 1-based index of each block value's latest
         * occurrence, 0 if none; the distance to it is Maurer's statistic. */
        for (size_t i = 0; i < blocks; i++) {
                unsigned block = 0;

                for (unsigned j = 0; j < BLOCK_BITS; j++)
                        block = (block << 1) | (s[i * BLOCK_BITS + j] & 1U);
                if (i >= DICT_BLOCKS) {
                        double l = log2i[i + 1 - last[block]];

                        sum += l;
                        sum_sq += (long double)l * l;
                }
                last[block] = i + 1;
        }
        v = blocks - DICT_BLOCKS;
        mean = (double)(sum / (long double)v);
        sigma = 0.5907 * sqrt((double)(sum_sq / ((long double)v - 1.0L)) - mean * mean);
        x = mean - EA_Z_ALPHA * sigma / sqrt((double)v);

        c = (Compression) { .log2i = log2i, .blocks = blocks };
        p = ea_bound_bisect(compression_expect, &c, 1.0 / BLOCK_VALUES, 1.0, x);
        free(log2i);
        /* No p above uniform explains the statistic: full entropy. */
        *ret_h = p > 1.0 / BLOCK_VALUES ? -log2(p) / BLOCK_BITS : 1.0;
        return 0;
}
