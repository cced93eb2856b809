/* noniid.c - ea_non_iid(): the SP 800-90B §6.3 assessment as NIST's
 * `ea_non_iid -v FILE bits` runs it (initial entropy estimate, all bits).
 *
 * The samples are mapped down to ranks 0..k-1 of their distinct values
 * (the estimators' alphabet is what occurs, not 2^bits); the bitstring is
 * made from the unmapped samples, `bits` bits each, most significant
 * first. Binary data (k = 2) run every estimator on the samples and skip
 * the bitstring; otherwise the samples get the seven estimators defined
 * for any alphabet and the bitstring all ten.
 * Flow: callers hand in raw samples; a report comes back. */
#include "noniid.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "counting.h"
#include "noniid-internal.h"
#include "predict.h"
#include "tuple.h"

static const char *const estimator_names[_EA_MAX] = {
        [EA_MCV] = "mcv",
        [EA_COLLISION] = "collision",
        [EA_MARKOV] = "markov",
        [EA_COMPRESSION] = "compression",
        [EA_T_TUPLE] = "t_tuple",
        [EA_LRS] = "lrs",
        [EA_MULTI_MCW] = "multi_mcw",
        [EA_LAG] = "lag",
        [EA_MULTI_MMC] = "multi_mmc",
        [EA_LZ78Y] = "lz78y",
};

const char *ea_estimator_name(EaEstimator e) {
        if ((unsigned)e >= _EA_MAX)
                return NULL;
        return estimator_names[e];
}

unsigned ea_progress_steps(unsigned k) {
        /* t-tuple and LRS come from one pass. */
        return k == 2 ? 7 : 6;
}

/* Tells the caller one step is done; its refusal ends the assessment. */
static int step(EaProgress *p) {
        if (!p || !p->fn)
                return 0;
        p->done++;
        return p->fn(p->userdata, p->done, p->total);
}

/* Every estimator that applies to symbols s[i] < k; binary ones only for
 * k = 2. h[] keeps NAN where an estimator does not run. For k > 2 the
 * t-tuple estimate's suffix array is kept for the context predictors. */
static int assess_symbols(const uint8_t *s, size_t n, unsigned k, double h[static _EA_MAX], EaProgress *p) {
        EaSuffix suffix = { 0 };
        int r;

        h[EA_MCV] = ea_count_mcv(s, n, k);
        if ((r = step(p)) < 0)
                return r;
        if (k == 2) {
                h[EA_COLLISION] = ea_count_collision(s, n);
                h[EA_MARKOV] = ea_count_markov(s, n);
                r = ea_count_compression(s, n, &h[EA_COMPRESSION]);
                if (r < 0 || (r = step(p)) < 0)
                        return r;
        }
        r = ea_tuple_estimate(s, n, &h[EA_T_TUPLE], &h[EA_LRS], k > 2 ? &suffix : NULL);
        if (r < 0 || (r = step(p)) < 0)
                goto out;
        r = ea_predict_multi_mcw(s, n, k, &h[EA_MULTI_MCW]);
        if (r < 0 || (r = step(p)) < 0)
                goto out;
        r = ea_predict_lag(s, n, k, &h[EA_LAG]);
        if (r < 0 || (r = step(p)) < 0)
                goto out;
        r = ea_predict_multi_mmc(s, n, k, &suffix, &h[EA_MULTI_MMC]);
        if (r < 0 || (r = step(p)) < 0)
                goto out;
        r = ea_predict_lz78y(s, n, k, &suffix, &h[EA_LZ78Y]);
        if (r < 0 || (r = step(p)) < 0)
                goto out;
        r = 0;
out:
        ea_suffix_free(&suffix);
        return r;
}

/* The smallest estimate that ran, and never above `cap`. */
static double assess_min(const double h[static _EA_MAX], double cap) {
        for (unsigned e = 0; e < _EA_MAX; e++)
                if (!isnan(h[e]) && h[e] < cap)
                        cap = h[e];
        return cap;
}

int ea_map_symbols(const uint8_t *samples, size_t n, unsigned bits, uint8_t *mapped, unsigned *ret_k) {
        unsigned rank[256] = { 0 }, k = 0;
        bool seen[256] = { false };

        for (size_t i = 0; i < n; i++)
                seen[samples[i]] = true;
        for (unsigned v = 0; v < 256; v++) {
                if (!seen[v])
                        continue;
                if (v >> bits)
                        return -EINVAL;
                rank[v] = k++;
        }
        for (size_t i = 0; i < n; i++)
                mapped[i] = (uint8_t)rank[samples[i]];
        *ret_k = k;
        return 0;
}

int ea_assess_mapped(const uint8_t *mapped, size_t n, unsigned k, unsigned bits, EaProgress *progress,
                     EaReport *ret) {
        EaReport rep = { .samples = n, .bits = bits, .h_bitstring = NAN };
        int r;

        for (unsigned e = 0; e < _EA_MAX; e++)
                rep.original[e] = rep.bitstring[e] = NAN;
        if (k > 1) {
                r = assess_symbols(mapped, n, k, rep.original, progress);
                if (r < 0)
                        return r;
        }
        rep.h_original = k > 1 ? assess_min(rep.original, (double)bits) : 0.0;
        rep.min_entropy = rep.h_original;
        *ret = rep;
        return 0;
}

int ea_non_iid(const uint8_t *samples, size_t n, unsigned bits, EaReport *ret) {
        return ea_non_iid_progress(samples, n, bits, NULL, NULL, ret);
}

int ea_non_iid_progress(const uint8_t *samples, size_t n, unsigned bits, EaProgressFn fn, void *userdata,
                        EaReport *ret) {
        EaProgress progress = { .fn = fn, .userdata = userdata };
        EaReport rep;
        uint8_t *mapped = NULL, *bitstring = NULL;
        unsigned k;
        int r;

        if (!samples || !ret || bits < 1 || bits > 8 || n < EA_SAMPLES_MIN || n > EA_SAMPLES_MAX)
                return -EINVAL;
        mapped = malloc(n);
        if (!mapped)
                return -ENOMEM;
        r = ea_map_symbols(samples, n, bits, mapped, &k);
        if (r < 0)
                goto out;
        /* Steps: the estimators on the samples, then on the bitstring. */
        progress.total = k > 1 ? ea_progress_steps(k) + (k > 2 ? ea_progress_steps(2) : 0) : 0;
        r = ea_assess_mapped(mapped, n, k, bits, &progress, &rep);
        if (r < 0)
                goto out;

        if (k > 2) {
                r = -ENOMEM;
                bitstring = malloc(n * bits);
                if (!bitstring)
                        goto out;
                for (size_t i = 0; i < n; i++)
                        for (unsigned j = 0; j < bits; j++)
                                bitstring[i * bits + j] = (samples[i] >> (bits - 1 - j)) & 1U;
                r = assess_symbols(bitstring, n * bits, 2, rep.bitstring, &progress);
                if (r < 0)
                        goto out;
                rep.h_bitstring = assess_min(rep.bitstring, 1.0);
                rep.min_entropy = fmin(rep.h_original, bits * rep.h_bitstring);
        }
        *ret = rep;
        r = 0;
out:
        free(bitstring);
        free(mapped);
        return r;
}
