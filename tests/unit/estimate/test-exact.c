/* test-exact.c - ea_non_iid() and ea_restart() give exactly the values
 * they gave before the estimators were made faster (exact-expected.h), on
 * the inputs where a faster path has edges of its own: short inputs and
 * the lengths where an estimator starts to run, the window sizes a running
 * gate uses, two-valued samples (as 1-bit and as 8-bit samples), few-valued
 * samples, one value with one exception, periodic, repeated, lagged and
 * random-walk data, and a restart matrix. test-estimate holds the values to
 * NIST's to 0.5 % on 1,000,000 samples; this holds every estimator to the
 * bit (on x86-64, where the values were computed; elsewhere, where long
 * double and the libm differ, to 1e-9 relative), so that a change in what
 * is computed cannot hide in that tolerance. And windows assessed on
 * several threads at once give what each gives alone.
 *     test-exact --print      prints exact-expected.h's table for this tree */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimate-datasets.h"
#include "estimate/noniid.h"

typedef enum Input {
        IN_UNIFORM,      /* the uniform data set's first n bytes */
        IN_BIASED,
        IN_MARKOV,
        IN_PERIODIC,
        IN_ONEBIT,       /* values 0 and 1 */
        IN_JITTER,       /* tests/data/jitter-raw-1M.bin's first n bytes */
        IN_TWO_WIDE,     /* two values far apart: 0x10 and 0xa5 */
        IN_THREE,        /* values 0..2 */
        IN_NIBBLE,       /* uniform & 15 */
        IN_ALL_BUT_ONE,  /* 0x2a but for one 0x2b in the middle */
        IN_REPEAT,       /* 100 random bytes, repeated */
        IN_LAGGED,       /* 93 % of samples copy the one 777 back */
        IN_WALK,         /* a +-1 random walk over all 256 values */
        IN_COUNT,        /* i mod 251 */
        _IN_MAX,
} Input;

static const char *const input_names[_IN_MAX] = {
        "uniform", "biased", "markov", "periodic", "onebit", "jitter", "two_wide",
        "three", "nibble", "all_but_one", "repeat", "lagged", "walk", "count",
};

typedef struct ExactCase {
        int input;            /* Input */
        size_t n;
        unsigned bits;
        double original[_EA_MAX], bitstring[_EA_MAX];
        double h_original, h_bitstring, min_entropy;
} ExactCase;

typedef struct ExactRestart {
        int input;
        size_t side;
        unsigned bits;
        double h_i;
        unsigned cutoff;
        double row[_EA_MAX], col[_EA_MAX];
        double h_r, h_c, min_entropy;
} ExactRestart;

#include "exact-expected.h"

static void generate(Input in, uint8_t *out, size_t n) {
        EaRng rng;

        ea_rng_seed(&rng, 0x6578616374ULL + (uint64_t)in);
        switch (in) {
        case IN_UNIFORM:
        case IN_BIASED:
        case IN_MARKOV:
        case IN_PERIODIC:
        case IN_ONEBIT: {
                static const EaDataset set[] = { EA_SET_UNIFORM, EA_SET_BIASED, EA_SET_MARKOV, EA_SET_PERIODIC, EA_SET_ONEBIT };

                ea_dataset_generate(set[in], out, n);
                return;
        }
        case IN_JITTER: {
                char path[4096];
                FILE *f;

                snprintf(path, sizeof(path), "%s/jitter-raw-1M.bin", TEST_DATA_DIR);
                f = fopen(path, "rb");
                assert_non_null(f);
                assert_int_equal(fread(out, 1, n, f), n);
                fclose(f);
                return;
        }
        case IN_TWO_WIDE:
                ea_dataset_generate(EA_SET_ONEBIT, out, n);
                for (size_t i = 0; i < n; i++)
                        out[i] = out[i] ? 0xa5 : 0x10;
                return;
        case IN_THREE:
                for (size_t i = 0; i < n; i++)
                        out[i] = (uint8_t)(ea_rng_next(&rng) % 3);
                return;
        case IN_NIBBLE:
                ea_dataset_generate(EA_SET_UNIFORM, out, n);
                for (size_t i = 0; i < n; i++)
                        out[i] &= 15;
                return;
        case IN_ALL_BUT_ONE:
                memset(out, 0x2a, n);
                out[n / 2] = 0x2b;
                return;
        case IN_REPEAT:
                for (size_t i = 0; i < n; i++)
                        out[i] = i < 100 ? (uint8_t)(ea_rng_next(&rng) >> 56) : out[i % 100];
                return;
        case IN_LAGGED:
                for (size_t i = 0; i < n; i++) {
                        uint64_t v = ea_rng_next(&rng);

                        out[i] = i >= 777 && v % 100 < 93 ? out[i - 777] : (uint8_t)(v >> 56);
                }
                return;
        case IN_WALK: {
                uint8_t x = 128;

                for (size_t i = 0; i < n; i++) {
                        x = (uint8_t)(x + (ea_rng_next(&rng) >> 63 ? 1 : -1));
                        out[i] = x;
                }
                return;
        }
        case IN_COUNT:
                for (size_t i = 0; i < n; i++)
                        out[i] = (uint8_t)(i % 251);
                return;
        default:
                fail();
        }
}

static void check(const char *what, const char *estimator, double want, double got) {
        bool same;

        if (isnan(want) || isnan(got))
                same = isnan(want) && isnan(got);
#if defined(__x86_64__)
        else
                same = want == got;
#else
        else
                same = fabs(got - want) <= 1e-9 * fabs(want);
#endif
        if (!same)
                fail_msg("%s %s: want %a (%.17g), got %a (%.17g)", what, estimator, want, want, got, got);
}

static void check_report(const char *what, const double want_o[static _EA_MAX], const double want_b[static _EA_MAX],
                         const EaReport *r) {
        char label[128];

        for (unsigned e = 0; e < _EA_MAX; e++) {
                snprintf(label, sizeof(label), "%s original", what);
                check(label, ea_estimator_name(e), want_o[e], r->original[e]);
                snprintf(label, sizeof(label), "%s bitstring", what);
                check(label, ea_estimator_name(e), want_b[e], r->bitstring[e]);
        }
}

static void test_case(void **state) {
        const ExactCase *x = *state;
        uint8_t *buf = malloc(x->n);
        char what[96];
        EaReport r;

        assert_non_null(buf);
        generate((Input)x->input, buf, x->n);
        assert_int_equal(ea_non_iid(buf, x->n, x->bits, &r), 0);
        free(buf);
        snprintf(what, sizeof(what), "%s n=%zu bits=%u", input_names[x->input], x->n, x->bits);
        check_report(what, x->original, x->bitstring, &r);
        check(what, "h_original", x->h_original, r.h_original);
        check(what, "h_bitstring", x->h_bitstring, r.h_bitstring);
        check(what, "min_entropy", x->min_entropy, r.min_entropy);
}

static void test_restart(void **state) {
        const ExactRestart *x = *state;
        static const double none[_EA_MAX] = { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN };
        uint8_t *buf = malloc(x->side * x->side);
        char what[96];
        EaRestartReport r;

        assert_non_null(buf);
        generate((Input)x->input, buf, x->side * x->side);
        assert_int_equal(ea_restart(buf, x->side, x->side, x->bits, x->h_i, &r), 0);
        free(buf);
        snprintf(what, sizeof(what), "restart %s %zux%zu", input_names[x->input], x->side, x->side);
        assert_int_equal(r.cutoff, x->cutoff);
        check_report(what, x->row, none, &r.row);
        check_report(what, x->col, none, &r.col);
        check(what, "h_r", x->h_r, r.h_r);
        check(what, "h_c", x->h_c, r.h_c);
        check(what, "min_entropy", x->min_entropy, r.min_entropy);
}

/* "IN_" and the input's name in capitals, as the enum spells it. */
static void print_input(int in) {
        printf("IN_");
        for (const char *c = input_names[in]; *c; c++)
                putchar(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
}

/* The running gate judges windows on several worker threads at once: the
 * estimators keep no state between calls, so windows assessed side by
 * side give what each gives alone. */
#define THREADS 4
#define THREAD_WINDOW 20000

typedef struct Window {
        const uint8_t *samples;
        EaReport report;
        int r;
} Window;

static void *assess_window(void *userdata) {
        Window *w = userdata;

        w->r = ea_non_iid(w->samples, THREAD_WINDOW, 8, &w->report);
        return NULL;
}

static bool same_report(const EaReport *a, const EaReport *b) {
        return memcmp(a->original, b->original, sizeof(a->original)) == 0 &&
               memcmp(a->bitstring, b->bitstring, sizeof(a->bitstring)) == 0 &&
               memcmp(&a->min_entropy, &b->min_entropy, sizeof(a->min_entropy)) == 0;
}

static void test_threads(void **state) {
        uint8_t *buf = malloc(THREADS * THREAD_WINDOW);
        pthread_t thread[THREADS];
        Window w[THREADS];

        (void)state;
        assert_non_null(buf);
        generate(IN_JITTER, buf, THREADS * THREAD_WINDOW);
        for (unsigned t = 0; t < THREADS; t++) {
                w[t] = (Window) { .samples = buf + t * THREAD_WINDOW };
                assert_int_equal(pthread_create(&thread[t], NULL, assess_window, &w[t]), 0);
        }
        for (unsigned t = 0; t < THREADS; t++)
                assert_int_equal(pthread_join(thread[t], NULL), 0);
        for (unsigned t = 0; t < THREADS; t++) {
                EaReport alone;

                assert_int_equal(w[t].r, 0);
                assert_int_equal(ea_non_iid(w[t].samples, THREAD_WINDOW, 8, &alone), 0);
                assert_true(same_report(&w[t].report, &alone));
        }
        /* Different windows of a capture differ: the comparison can fail. */
        assert_false(same_report(&w[0].report, &w[1].report));
        free(buf);
}

static void print_values(const double *v, unsigned count) {
        for (unsigned e = 0; e < count; e++) {
                if (isnan(v[e]))
                        printf("NAN");
                else
                        printf("%a", v[e]);
                printf(e + 1 < count ? ", " : "");
        }
}

/* The table as exact-expected.h holds it, computed by this tree. */
static int print_table(void) {
        printf("static const ExactCase exact_cases[] = {\n");
        for (size_t c = 0; c < sizeof(exact_cases) / sizeof(exact_cases[0]); c++) {
                const ExactCase *x = &exact_cases[c];
                uint8_t *buf = malloc(x->n);
                EaReport r;

                if (!buf)
                        return 1;
                generate((Input)x->input, buf, x->n);
                if (ea_non_iid(buf, x->n, x->bits, &r) < 0)
                        return 1;
                free(buf);
                printf("        { ");
                print_input(x->input);
                printf(", %zu, %u,\n          .original = { ", x->n, x->bits);
                print_values(r.original, _EA_MAX);
                printf(" },\n          .bitstring = { ");
                print_values(r.bitstring, _EA_MAX);
                printf(" },\n          .h_original = ");
                print_values(&r.h_original, 1);
                printf(", .h_bitstring = ");
                print_values(&r.h_bitstring, 1);
                printf(", .min_entropy = ");
                print_values(&r.min_entropy, 1);
                printf(" },\n");
        }
        printf("};\n\nstatic const ExactRestart exact_restarts[] = {\n");
        for (size_t c = 0; c < sizeof(exact_restarts) / sizeof(exact_restarts[0]); c++) {
                const ExactRestart *x = &exact_restarts[c];
                uint8_t *buf = malloc(x->side * x->side);
                EaRestartReport r;

                if (!buf)
                        return 1;
                generate((Input)x->input, buf, x->side * x->side);
                if (ea_restart(buf, x->side, x->side, x->bits, x->h_i, &r) < 0)
                        return 1;
                free(buf);
                printf("        { ");
                print_input(x->input);
                printf(", %zu, %u, %a, %u,\n          .row = { ", x->side, x->bits, x->h_i, r.cutoff);
                print_values(r.row.original, _EA_MAX);
                printf(" },\n          .col = { ");
                print_values(r.col.original, _EA_MAX);
                printf(" },\n          .h_r = ");
                print_values(&r.h_r, 1);
                printf(", .h_c = ");
                print_values(&r.h_c, 1);
                printf(", .min_entropy = ");
                print_values(&r.min_entropy, 1);
                printf(" },\n");
        }
        printf("};\n");
        return 0;
}

int main(int argc, char **argv) {
        enum { CASES = sizeof(exact_cases) / sizeof(exact_cases[0]), RESTARTS = sizeof(exact_restarts) / sizeof(exact_restarts[0]) };
        struct CMUnitTest tests[CASES + RESTARTS + 1];
        char names[CASES + RESTARTS][96];

        if (argc == 2 && strcmp(argv[1], "--print") == 0)
                return print_table();
        for (size_t c = 0; c < CASES; c++) {
                snprintf(names[c], sizeof(names[c]), "%s n=%zu bits=%u", input_names[exact_cases[c].input], exact_cases[c].n,
                         exact_cases[c].bits);
                tests[c] = (struct CMUnitTest) { .name = names[c], .test_func = test_case, .initial_state = (void *)&exact_cases[c] };
        }
        for (size_t c = 0; c < RESTARTS; c++) {
                snprintf(names[CASES + c], sizeof(names[0]), "restart %s", input_names[exact_restarts[c].input]);
                tests[CASES + c] = (struct CMUnitTest) { .name = names[CASES + c], .test_func = test_restart,
                                                         .initial_state = (void *)&exact_restarts[c] };
        }
        tests[CASES + RESTARTS] = (struct CMUnitTest) { .name = "threads", .test_func = test_threads };
        return _cmocka_run_group_tests("exact", tests, CASES + RESTARTS + 1, NULL, NULL);
}
