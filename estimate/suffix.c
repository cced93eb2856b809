/* suffix.c - substrings of one length numbered from a suffix array: the
 * suffixes that start with one substring of length len are adjacent in
 * the suffix array, and a new run begins where the LCP with the previous
 * suffix is below len. So the context predictors get, for every position,
 * the number of the context that ends there with one sequential pass, and
 * then index flat arrays by it instead of hashing 17-byte keys.
 * Flow: tuple.c builds it; predict-context.c reads it. */
#include "suffix.h"

#include <stdlib.h>

void ea_suffix_free(EaSuffix *x) {
        free(x->sa);
        free(x->lcp);
        *x = (EaSuffix) { 0 };
}

uint32_t ea_suffix_ids(const EaSuffix *x, unsigned len, uint32_t *ids) {
        uint32_t id = 0;

        for (size_t j = 0; j < x->n; j++) {
                id += j > 0 && x->lcp[j] < len;
                ids[x->sa[j]] = id;
        }
        return x->n > 0 ? id + 1 : 0;
}
