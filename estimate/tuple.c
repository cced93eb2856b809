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
        int32_t u;           /* the shortest t at which no t-tuple occurs 35 times */
        uint32_t *q;         /* q[t]: largest count of a t-tuple, t = 1..u-1 (scratch before the suffix max) */
        uint64_t *pairs;     /* pairs[t-u]: sum over t-tuples of C(count, 2), t = u..v (a difference array before the prefix sum) */
} TupleStats;

/* One lcp-interval: `size` suffixes share a prefix of length lcp, the
 * enclosing interval's lcp is parent. */
typedef void (*TupleVisit)(TupleStats *st, int32_t lcp, int32_t parent, uint64_t size);

/* Visit every lcp-interval (lcp >= 1) once: one stack pass. */
static int tuple_intervals(const int32_t *lcp, int32_t n, TupleStats *st, TupleVisit visit) {
        size_t cap = 64, top = 0;
        Interval *stack = malloc(cap * sizeof(*stack));

        if (!stack)
                return -ENOMEM;
        stack[top++] = (Interval) { .lcp = 0, .left = 0 };
        for (int32_t i = 1; i <= n; i++) {
                int32_t cur = i < n ? lcp[i] : 0, left = i - 1;

                while (cur < stack[top - 1].lcp) {
                        Interval iv = stack[--top];

                        visit(st, iv.lcp, cur > stack[top - 1].lcp ? cur : stack[top - 1].lcp, (uint64_t)(i - iv.left));
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
        return 0;
}

/* First pass: v, and u - 1 = the longest lcp of an interval of 35 or
 * more suffixes (a t-tuple occurs 35 times exactly when t is at most
 * that). */
static void tuple_visit_bounds(TupleStats *st, int32_t lcp, int32_t parent, uint64_t size) {
        (void)parent;
        if (lcp > st->v)
                st->v = lcp;
        if (size >= TUPLE_MIN_COUNT && lcp + 1 > st->u)
                st->u = lcp + 1;
}

/* Second pass: q over t < u (an interval longer than that counts at
 * u - 1, where the suffix max carries it down), the pair sums over
 * t = u..v as a difference array. */
static void tuple_visit_counts(TupleStats *st, int32_t lcp, int32_t parent, uint64_t size) {
        const uint64_t c2 = size * (size - 1) / 2;
        const int32_t at = lcp < st->u ? lcp : st->u - 1, from = parent + 1 > st->u ? parent + 1 : st->u;

        if (at >= 1 && size > st->q[at])
                st->q[at] = (uint32_t)size;
        /* Unsigned wrap-around cancels in the prefix sum. */
        if (from <= lcp) {
                st->pairs[from - st->u] += c2;
                st->pairs[lcp + 1 - st->u] -= c2;
        }
}

/* Every lcp-interval, twice: the first pass finds u and v, so that the
 * counts take u + (v - u) entries, where a long repeat (v near the
 * length of the data) would otherwise need 16 bytes per symbol. */
static int tuple_scan(const int32_t *lcp, int32_t n, TupleStats *st) {
        uint64_t run = 0;
        int r;

        st->v = 0;
        st->u = 1;
        r = tuple_intervals(lcp, n, st, tuple_visit_bounds);
        if (r < 0)
                return r;
        st->q = calloc((size_t)st->u, sizeof(*st->q));
        st->pairs = calloc((size_t)(st->v - st->u) + 2, sizeof(*st->pairs));
        if (!st->q || !st->pairs)
                return -ENOMEM;
        r = tuple_intervals(lcp, n, st, tuple_visit_counts);
        if (r < 0)
                return r;

        /* A t-tuple inside a longer repeated tuple's interval is counted by
         * the enclosing interval, which is at least as large. */
        for (int32_t t = st->u - 2; t >= 1; t--)
                if (st->q[t + 1] > st->q[t])
                        st->q[t] = st->q[t + 1];
        for (int32_t t = st->u; t <= st->v; t++) {
                run += st->pairs[t - st->u];
                st->pairs[t - st->u] = run;
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

/* p(t): the t-th root of the largest t-tuple's share of the windows
 * (t-tuple) or of the share of window pairs that collide (LRS). */
static long double tuple_p(const TupleStats *st, size_t n, int32_t t, bool lrs) {
        long double windows = (long double)(n - (size_t)t + 1);

        if (!lrs)
                return powl((long double)st->q[t] / windows, 1.0L / t);
        return powl((long double)st->pairs[t - st->u] / (windows * (windows - 1.0L) / 2.0L), 1.0L / t);
}

/* Above p(t) for every t in [a, b]: q[t] and pairs[t] fall as t grows and
 * the windows shrink, so the share is at most the numerator at a over the
 * denominator at b; and for a share x <= 1, x^(1/t) <= x^(1/b). */
static long double tuple_p_bound(const TupleStats *st, size_t n, int32_t a, int32_t b, bool lrs) {
        long double windows = (long double)(n - (size_t)b + 1), x;

        if (!lrs)
                x = (long double)st->q[a] / windows;
        else
                x = (long double)st->pairs[a - st->u] / (windows * (windows - 1.0L) / 2.0L);
        return x < 1.0L ? powl(x, 1.0L / b) : 1.0L;
}

#define TUPLE_BLOCK 64

/* The largest p(t), lo <= t <= hi, and not below `floor`: what the loop
 * over every t gives, to the bit. A long repeat (a stuck or repeating
 * source) makes hi the length of the data and the loop a million powl()s;
 * from the longest t down (where a repeat's p(t) is largest), a block
 * whose bound is clearly below the largest so far cannot hold a larger
 * one and is skipped. */
static long double tuple_p_max(const TupleStats *st, size_t n, int32_t lo, int32_t hi, bool lrs, long double floor) {
        long double p_max = floor;

        for (int32_t b = hi; b >= lo; b -= TUPLE_BLOCK) {
                const int32_t a = b - lo >= TUPLE_BLOCK ? b - TUPLE_BLOCK + 1 : lo;

                /* The margin is far above powl()'s rounding. */
                if (a < b && tuple_p_bound(st, n, a, b, lrs) * (1.0L + 1e-12L) < p_max)
                        continue;
                for (int32_t t = a; t <= b; t++) {
                        long double p = tuple_p(st, n, t, lrs);

                        if (p > p_max)
                                p_max = p;
                }
        }
        return p_max;
}

int ea_tuple_estimate(const uint8_t *s, size_t n, double *ret_t_tuple, double *ret_lrs, EaSuffix *ret_suffix) {
        int32_t *sa = NULL, *lcp = NULL, u;
        uint8_t *lcp8 = NULL;
        TupleStats st = { 0 };
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

        u = st.u;
        if (u > 1)
                t_tuple = tuple_entropy(tuple_p_max(&st, n, 1, u - 1, false, -1.0L), n);
        if (st.v >= u)
                lrs = tuple_entropy(tuple_p_max(&st, n, u, st.v, true, 0.0L), n);
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
