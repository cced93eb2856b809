/* restart.c - SP 800-90B §3.1.4 restart tests, as NIST's `ea_restart`
 * runs them on a 1000 x 1000 matrix (row i: the samples right after the
 * i-th restart).
 *
 * Sanity check (§3.1.4.3): no row and no column may hold one value more
 * often than a source of min-entropy H_I plausibly would. NIST's tool
 * finds that cutoff by simulating 5,000,000 rows from the "inverted near
 * uniform" distribution (the worst case for a given H_I) and taking the
 * 1 - alpha quantile of their largest counts, alpha = 1 - 0.99^(1/(r+c)).
 * Here the distribution of the largest count is computed exactly instead:
 * with Poisson counts Y_j of means n p_j, conditioned on their sum being n,
 *   P(max <= x) = prod_j P(Y_j <= x) * P(sum of truncated Y_j = n) / P(Poisson(n) = n),
 * one convolution per value (Levin 1981). Deterministic, and a few
 * milliseconds instead of minutes.
 * Then (§3.1.4.2) the estimators run on the row dataset (the matrix as
 * captured) and the column dataset (its transpose), without a bitstring
 * pass; the test passes if min(H_r, H_c) >= H_I / 2.
 * Flow: callers hand in a restart capture; a report comes back. */
#include "restart.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "noniid-internal.h"

/* P(max <= x) for n samples, `many` values of probability p and one of
 * probability rest. work holds 3 (n + 1) doubles. */
/* log(k!), with lgamma_r(): lgamma() writes the global signgam, and the
 * library promises to be safe from any thread (noniid.h). */
static double log_factorial(double k) {
        int sign;

        return lgamma_r(k + 1.0, &sign);
}

static double restart_max_cdf(size_t n, double p, unsigned many, double rest, unsigned x, double *work) {
        double *dist = work, *next = work + n + 1, *q = work + 2 * (n + 1), log_scale = 0.0;

        memset(dist, 0, (n + 1) * sizeof(*dist));
        dist[0] = 1.0;
        for (unsigned j = 0; j <= many; j++) {
                double lambda = (double)n * (j < many ? p : rest), total = 0.0;
                unsigned top = x < n ? x : (unsigned)n;

                if (j == many && !(rest > 0.0))
                        break;
                /* Poisson(lambda) pmf up to x, from its log for large lambda. */
                for (unsigned m = 0; m <= top; m++) {
                        q[m] = exp(-lambda + m * log(lambda) - log_factorial(m));
                        total += q[m];
                }
                if (!(total > 0.0))
                        return 0.0;
                log_scale += log(total);
                for (unsigned m = 0; m <= top; m++)
                        q[m] /= total;
                memset(next, 0, (n + 1) * sizeof(*next));
                for (size_t s = 0; s <= n; s++) {
                        if (dist[s] == 0.0)
                                continue;
                        for (unsigned m = 0; m <= top && s + m <= n; m++)
                                next[s + m] += dist[s] * q[m];
                }
                memcpy(dist, next, (n + 1) * sizeof(*dist));
        }
        /* log P(Poisson(n) = n) = -n + n log n - log n! */
        return exp(log_scale + log(dist[n]) - (-(double)n + (double)n * log((double)n) - log_factorial((double)n)));
}

int ea_restart_cutoff(size_t n, double h, double alpha, unsigned *ret) {
        double p = exp2(-h), rest, *work;
        unsigned many, lo, hi;

        if (n < 1 || n > 1000000 || !(h >= 0.0 && h <= 8.0) || !(alpha > 0.0 && alpha < 1.0) || !ret)
                return -EINVAL;
        many = (unsigned)floor(1.0 / p);
        rest = 1.0 - many * p;
        if (rest < 1e-12)
                rest = 0.0;
        work = malloc(3 * (n + 1) * sizeof(*work));
        if (!work)
                return -ENOMEM;
        /* The largest count is at least n / (number of values). */
        lo = (unsigned)(n / (many + (rest > 0.0)));
        hi = (unsigned)n;
        while (lo < hi) {
                unsigned mid = lo + (hi - lo) / 2;

                if (restart_max_cdf(n, p, many, rest, mid, work) >= 1.0 - alpha)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        free(work);
        *ret = lo;
        return 0;
}

/* The largest count of one value within any row of a rows x cols matrix of
 * symbols < 256. */
static unsigned restart_max_row_count(const uint8_t *m, size_t rows, size_t cols) {
        unsigned best = 0;

        for (size_t i = 0; i < rows; i++) {
                unsigned counts[256] = { 0 };

                for (size_t j = 0; j < cols; j++)
                        if (++counts[m[i * cols + j]] > best)
                                best = counts[m[i * cols + j]];
        }
        return best;
}

int ea_restart(const uint8_t *matrix, size_t rows, size_t cols, unsigned bits, double h_i, EaRestartReport *ret) {
        return ea_restart_progress(matrix, rows, cols, bits, h_i, NULL, NULL, ret);
}

int ea_restart_progress(const uint8_t *matrix, size_t rows, size_t cols, unsigned bits, double h_i, EaProgressFn fn,
                        void *userdata, EaRestartReport *ret) {
        EaProgress progress = { .fn = fn, .userdata = userdata };
        EaRestartReport rep = { .rows = rows, .cols = cols, .h_i = h_i };
        const size_t n = rows * cols;
        uint8_t *row = NULL, *col = NULL;
        unsigned k;
        int r;

        if (!matrix || !ret || bits < 1 || bits > 8 || rows != cols || n < EA_SAMPLES_MIN ||
            n > EA_SAMPLES_MAX || !(h_i >= 0.0 && h_i <= bits))
                return -EINVAL;
        row = malloc(n);
        col = malloc(n);
        r = -ENOMEM;
        if (!row || !col)
                goto out;
        r = ea_map_symbols(matrix, n, bits, row, &k);
        if (r < 0)
                goto out;
        for (size_t i = 0; i < rows; i++)
                for (size_t j = 0; j < cols; j++)
                        col[j * rows + i] = row[i * cols + j];

        r = ea_restart_cutoff(cols, h_i, 1.0 - exp(log(0.99) / (double)(rows + cols)), &rep.cutoff);
        if (r < 0)
                goto out;
        rep.max_row_count = restart_max_row_count(row, rows, cols);
        rep.max_col_count = restart_max_row_count(col, cols, rows);
        rep.sanity_passed = rep.max_row_count <= rep.cutoff && rep.max_col_count <= rep.cutoff;

        /* As the tool does, a failed sanity check ends the test: no
         * estimates are made for a source that fails it. */
        for (unsigned e = 0; e < _EA_MAX; e++)
                rep.row.original[e] = rep.row.bitstring[e] = rep.col.original[e] = rep.col.bitstring[e] = NAN;
        rep.row.h_original = rep.row.h_bitstring = rep.row.min_entropy = NAN;
        rep.col = rep.row;
        rep.row.samples = rep.col.samples = n;
        rep.row.bits = rep.col.bits = bits;
        rep.h_r = rep.h_c = rep.min_entropy = NAN;
        if (rep.sanity_passed) {
                progress.total = k > 1 ? 2 * ea_progress_steps(k) : 0;
                r = ea_assess_mapped(row, n, k, bits, &progress, &rep.row);
                if (r < 0)
                        goto out;
                r = ea_assess_mapped(col, n, k, bits, &progress, &rep.col);
                if (r < 0)
                        goto out;
                rep.h_r = rep.row.h_original;
                rep.h_c = rep.col.h_original;
                rep.min_entropy = fmin(fmin(rep.h_r, rep.h_c), h_i);
                rep.passed = fmin(rep.h_r, rep.h_c) >= h_i / 2.0;
        }
        *ret = rep;
        r = 0;
out:
        free(col);
        free(row);
        return r;
}
