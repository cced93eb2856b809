/* suffix.h - a suffix array and its LCP array clamped to a byte, kept
 * from the t-tuple estimate (tuple.c) for the context predictors
 * (predict-context.c): the substrings of one length that are equal are
 * one run of the suffix array, so one pass over it numbers them.
 * Internal to libestimate. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define EA_SUFFIX_LCP_MAX 255U

typedef struct EaSuffix {
        int32_t *sa;   /* the suffixes of s[0..n) in order */
        uint8_t *lcp;  /* lcp[j] = min(LCP of the suffixes sa[j-1], sa[j], 255); lcp[0] = 0 */
        size_t n;
} EaSuffix;

void ea_suffix_free(EaSuffix *x);

/* ids[p] for every p < n: the number of the substring s[p..p+len), equal
 * numbers for equal substrings (a suffix shorter than len has a number of
 * its own); 1 <= len <= EA_SUFFIX_LCP_MAX. Returns how many numbers there
 * are: each is below it. */
uint32_t ea_suffix_ids(const EaSuffix *x, unsigned len, uint32_t *ids);
