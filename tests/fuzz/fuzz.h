/* fuzz.h - what every libFuzzer harness shares: the entry points, a check
 * that aborts (so libFuzzer keeps the input), and a reader that turns the
 * input into a sequence of choices.
 *
 * A harness reads its input front to back; once it is used up every read
 * yields zeros, so any prefix of an input is itself a valid input and the
 * fuzzer can grow inputs a byte at a time.
 * Flow: libFuzzer -> [harness] -> the parser under test. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken promise of the code under test: report and abort, which libFuzzer
 * records as a crash with this input. */
#define FUZZ_CHECK(cond)                                                                   \
        do {                                                                               \
                if (!(cond)) {                                                             \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
                        abort();                                                           \
                }                                                                          \
        } while (0)

typedef struct FuzzInput {
        const uint8_t *p;
        size_t n;
} FuzzInput;

static inline bool fuzz_empty(const FuzzInput *in) {
        return in->n == 0;
}

static inline uint8_t fuzz_u8(FuzzInput *in) {
        if (in->n == 0)
                return 0;
        in->n--;
        return *in->p++;
}

static inline uint16_t fuzz_u16(FuzzInput *in) {
        uint16_t v = fuzz_u8(in);
        return (uint16_t) (v | fuzz_u8(in) << 8);
}

static inline uint32_t fuzz_u32(FuzzInput *in) {
        uint32_t v = fuzz_u16(in);
        return v | (uint32_t) fuzz_u16(in) << 16;
}

/* Up to want bytes of the input (fewer at its end): *ret_n says how many. */
static inline const uint8_t *fuzz_bytes(FuzzInput *in, size_t want, size_t *ret_n) {
        const uint8_t *p = in->p;
        size_t n = want < in->n ? want : in->n;

        in->p += n;
        in->n -= n;
        *ret_n = n;
        return p;
}

/* Exactly n bytes: the input's next ones, then zeros. */
static inline void fuzz_fill(FuzzInput *in, void *out, size_t n) {
        size_t got;
        const uint8_t *p = fuzz_bytes(in, n, &got);

        if (got > 0)
                memcpy(out, p, got);
        memset((uint8_t *) out + got, 0, n - got);
}
