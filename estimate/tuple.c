/* tuple.c - the t-tuple (§6.3.5) and LRS (§6.3.6) estimates from a suffix
 * array.
 *
 * Both need, for every tuple length t, statistics over the counts of all
 * distinct t-tuples: the largest count Q[t] (t-tuple) and the number of
 * colliding pairs, sum of C(count, 2) (LRS). Every repeated tuple is an
 * lcp-interval of the suffix array: a maximal run of adjacent suffixes whose
 * longest common prefix is at least t. An interval with lcp h, parent lcp
 * p and `size` suffixes is the tuple of every length in (p, h] and occurs
 * `size` times. One stack pass over the LCP array visits each interval once
 * (Abouelhoda, Kurtz, Ohlebusch 2004), so the whole test is O(n) after the
 * sort instead of one pass per t.
 * The suffix array comes from libdivsufsort (Debian's suffix sorter, the one
 * NIST's tool uses); the LCP array from it by comparing neighbours 8 bytes
 * at a time, written over the suffix array so the peak stays at 4 bytes
 * per symbol (Kasai's Phi method, 8 bytes per symbol, where long repeats
 * make the comparisons too many). For the
 * samples (not the bitstring) the suffix array and the LCP clamped to a
 * byte are kept for the context predictors (suffix.h). */
#include "tuple.h"

#include <divsufsort.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bound.h"

/* §6.3.5: tuples are counted up to the largest t at which some t-tuple
 * still occurs at least 35 times. */
#define TUPLE_MIN_COUNT 35U

typedef struct Interval {
        int32_t lcp;
        int32_t left;
} Interval;

/* phi[i] = the LCP of the suffix i with the one before it in sa (0 for
 * the first): the permuted LCP array, in text order. */
static void tuple_plcp(const uint8_t *s, int32_t n, const int32_t *sa, int32_t *phi) {
        int32_t h = 0;

        phi[sa[0]] = -1;
        for (int32_t i = 1; i < n; i++)
                phi[sa[i]] = sa[i - 1];
        /* phi becomes the permuted LCP, in text order: PLCP[i] >= PLCP[i-1] - 1. */
        for (int32_t i = 0; i < n; i++) {
                int32_t j = phi[i];

                if (j < 0) {
                        phi[i] = 0;
                        h = 0;
                        continue;
                }
                while (i + h < n && j + h < n && s[i + h] == s[j + h])
                        h++;
                phi[i] = h;
                if (h > 0)
                        h--;
        }
}

typedef struct TupleStats {
        int32_t v;           /* length of the longest repeated substring */
        uint64_t *q;         /* q[t]: largest count of a t-tuple, t = 1..v (scratch before the suffix max) */
        uint64_t *pairs;     /* pairs[t]: sum over t-tuples of C(count, 2), t = 1..v (a difference array before the prefix sum) */
} TupleStats;

/* Visit every lcp-interval; record counts per lcp and the pair sums as a
 * difference array over t. */
static int tuple_scan(const int32_t *lcp, int32_t n, TupleStats *st) {
        size_t cap = 64, top = 0;
        Interval *stack = malloc(cap * sizeof(*stack));
        uint64_t run = 0;

        if (!stack)
                return -ENOMEM;
        st->v = 0;
        for (int32_t i = 1; i < n; i++)
                if (lcp[i] > st->v)
                        st->v = lcp[i];
        st->q = calloc((size_t)st->v + 2, sizeof(*st->q));
        st->pairs = calloc((size_t)st->v + 2, sizeof(*st->pairs));
        if (!st->q || !st->pairs) {
                free(stack);
                return -ENOMEM;
        }

        stack[top++] = (Interval) { .lcp = 0, .left = 0 };
        for (int32_t i = 1; i <= n; i++) {
                int32_t cur = i < n ? lcp[i] : 0, left = i - 1;

                while (cur < stack[top - 1].lcp) {
                        Interval iv = stack[--top];
                        int32_t parent = cur > stack[top - 1].lcp ? cur : stack[top - 1].lcp;
                        uint64_t size = (uint64_t)(i - iv.left);
                        uint64_t c2 = size * (size - 1) / 2;

                        if (size > st->q[iv.lcp])
                                st->q[iv.lcp] = size;
                        /* Unsigned wrap-around cancels in the prefix sum. */
                        st->pairs[parent + 1] += c2;
                        st->pairs[iv.lcp + 1] -= c2;
                        left = iv.left;
                }
                if (cur > stack[top - 1].lcp) {
                        if (top == cap) {
                                Interval *grown = realloc(stack, 2 * cap * sizeof(*stack));

                                if (!grown) {
                                        free(stack);
                                        return -ENOMEM;
                                }
                                stack = grown;
                                cap *= 2;
                        }
                        stack[top++] = (Interval) { .lcp = cur, .left = left };
                }
        }
        free(stack);

        /* A t-tuple inside a longer repeated tuple's interval is counted by
         * the enclosing interval, which is at least as large. */
        for (int32_t t = st->v - 1; t >= 1; t--)
                if (st->q[t + 1] > st->q[t])
                        st->q[t] = st->q[t + 1];
        for (int32_t t = 1; t <= st->v; t++) {
                run += st->pairs[t];
                st->pairs[t] = run;
        }
        return 0;
}

static double tuple_entropy(long double p_max, size_t n) {
        long double pu = p_max + (long double)EA_Z_ALPHA * sqrtl(p_max * (1.0L - p_max) / (long double)(n - 1));

        if (pu > 1.0L)
                pu = 1.0L;
        return (double)-log2l(pu);
}

/* Words of 8 bytes compared per symbol before tuple_lcp_direct() gives up:
 * data worth crediting compare one to six (the jitter bitstring's LCP
 * averages 42); a repeated buffer's LCPs add up to the square of its
 * length. */
#define LCP_DIRECT_WORDS 16U

/* lcp[j] = the LCP of the suffixes sa[j-1] and sa[j] (lcp[0] = 0), by
 * comparing them 8 bytes at a time; lcp may be sa, as each entry is read
 * before it is written. Far faster than the phi way and needs no second
 * array, but its cost is the sum of the LCPs: false, with lcp[] partial,
 * past LCP_DIRECT_WORDS words per symbol. */
static bool tuple_lcp_direct(const uint8_t *s, int32_t n, int32_t *sa, int32_t *lcp) {
        size_t budget = (size_t)n * LCP_DIRECT_WORDS;
        int32_t prev = sa[0];

        lcp[0] = 0;
        for (int32_t j = 1; j < n; j++) {
                const int32_t cur = sa[j], limit = n - (prev > cur ? prev : cur);
                int32_t h = 0;

                for (; h + 8 <= limit; h += 8) {
                        uint64_t a, b;

                        if (budget-- == 0)
                                return false;
                        memcpy(&a, s + prev + h, 8);
                        memcpy(&b, s + cur + h, 8);
                        if (a != b) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                                h += __builtin_ctzll(a ^ b) / 8;
#else
                                h += __builtin_clzll(a ^ b) / 8;
#endif
                                goto found;
                        }
                }
                while (h < limit && s[prev + h] == s[cur + h])
                        h++;
        found:
                lcp[j] = h;
                prev = cur;
        }
        return true;
}

/* The LCP array of s in place of its suffix array sa, or (keep) the LCP
 * array in *ret_lcp and, in *ret_lcp8, the LCP clamped to a byte, with sa
 * left as it is. Compared directly, or where that costs too much (long
 * repeats), the phi way: O(n), but a second array of n entries. */
static int tuple_lcp(const uint8_t *s, int32_t n, int32_t *sa, bool keep, int32_t **ret_lcp, uint8_t **ret_lcp8) {
        int32_t *phi = NULL, *lcp = keep ? malloc((size_t)n * sizeof(*lcp)) : sa;
        uint8_t *lcp8 = keep ? malloc((size_t)n) : NULL;

        if (!lcp || (keep && !lcp8))
                goto fail;
        if (!tuple_lcp_direct(s, n, sa, lcp)) {
                /* In place, sa is half overwritten: sort again. */
                if (!keep && divsufsort(s, sa, n) != 0)
                        goto fail;
                phi = malloc((size_t)n * sizeof(*phi));
                if (!phi)
                        goto fail;
                tuple_plcp(s, n, sa, phi);
                for (int32_t i = 0; i < n; i++)
                        lcp[i] = phi[sa[i]];
                free(phi);
        }
        if (keep)
                for (int32_t i = 0; i < n; i++)
                        lcp8[i] = (uint8_t)(lcp[i] < (int32_t)EA_SUFFIX_LCP_MAX ? lcp[i] : (int32_t)EA_SUFFIX_LCP_MAX);
        *ret_lcp = lcp;
        if (keep)
                *ret_lcp8 = lcp8;
        return 0;
fail:
        free(lcp8);
        if (lcp != sa)
                free(lcp);
        return -ENOMEM;
}

int ea_tuple_estimate(const uint8_t *s, size_t n, double *ret_t_tuple, double *ret_lrs, EaSuffix *ret_suffix) {
        int32_t *sa = NULL, *lcp = NULL, u;
        uint8_t *lcp8 = NULL;
        TupleStats st = { 0 };
        long double p_max;
        double t_tuple = NAN, lrs = NAN;
        int r = -ENOMEM;

        if (n < 2 || n > INT32_MAX)
                return -EINVAL;
        sa = malloc(n * sizeof(*sa));
        if (!sa)
                goto out;
        if (divsufsort(s, sa, (int32_t)n) != 0)
                goto out;
        r = tuple_lcp(s, (int32_t)n, sa, ret_suffix != NULL, &lcp, &lcp8);
        if (r < 0)
                goto out;
        r = tuple_scan(lcp, (int32_t)n, &st);
        if (r < 0)
                goto out;

        /* u: the first length at which no tuple reaches 35 occurrences. */
        for (u = 1; u <= st.v && st.q[u] >= TUPLE_MIN_COUNT; u++)
                ;
        if (u > 1) {
                p_max = -1.0L;
                for (int32_t t = 1; t < u; t++) {
                        long double p = powl((long double)st.q[t] / (long double)(n - (size_t)t + 1), 1.0L / t);

                        if (p > p_max)
                                p_max = p;
                }
                t_tuple = tuple_entropy(p_max, n);
        }
        if (st.v >= u) {
                p_max = 0.0L;
                for (int32_t t = u; t <= st.v; t++) {
                        long double windows = (long double)(n - (size_t)t + 1);
                        long double p = powl((long double)st.pairs[t] / (windows * (windows - 1.0L) / 2.0L), 1.0L / t);

                        if (p > p_max)
                                p_max = p;
                }
                lrs = tuple_entropy(p_max, n);
        }
        if (ret_suffix) {
                *ret_suffix = (EaSuffix) { .sa = sa, .lcp = lcp8, .n = n };
                sa = NULL;
                lcp8 = NULL;
        }
        *ret_t_tuple = t_tuple;
        *ret_lrs = lrs;
        r = 0;
out:
        free(st.q);
        free(st.pairs);
        if (lcp != sa)
                free(lcp);
        free(lcp8);
        free(sa);
        return r;
}
