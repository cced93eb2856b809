/* induce.c - an induced failure's samples (see induce.h).
 * Flow: source -> [induce] -> intake. */
#include "induce.h"

#include <errno.h>
#include <string.h>

#include <sodium.h>

static const char *const kind_names[_INDUCE_KIND_MAX] = {
        [INDUCE_STUCK] = "stuck",
        [INDUCE_BIAS] = "bias",
        [INDUCE_REPEAT] = "repeat",
        [INDUCE_SELFTEST] = "selftest",
};

const char *induce_kind_to_string(InduceKind k) {
        return k > INDUCE_NONE && k < _INDUCE_KIND_MAX ? kind_names[k] : NULL;
}

int induce_kind_from_string(const char *s, InduceKind *ret) {
        for (InduceKind k = INDUCE_NONE + 1; s && k < _INDUCE_KIND_MAX; k++)
                if (strcmp(s, kind_names[k]) == 0) {
                        *ret = k;
                        return 0;
                }
        return -EINVAL;
}

int induce_begin(Induce *e, InduceKind kind, uint64_t samples) {
        if (kind != INDUCE_STUCK && kind != INDUCE_BIAS && kind != INDUCE_REPEAT)
                return -EINVAL;
        if (samples == 0)
                return -EINVAL;
        sodium_memzero(e, sizeof(*e));
        e->kind = kind;
        e->left = samples;
        return 0;
}

void induce_end(Induce *e) {
        e->left = 0;
        sodium_memzero(e->first, sizeof(e->first));
}

bool induce_active(const Induce *e) {
        return e->kind != INDUCE_NONE && e->left > 0;
}

size_t induce_apply(Induce *e, uint8_t *samples, size_t n) {
        size_t k = n < e->left ? n : (size_t) e->left;

        if (!induce_active(e))
                return 0;
        for (size_t i = 0; i < k; i++) {
                uint64_t at = e->done + i;

                /* The episode's first real samples: the value stuck and
                 * biased to, the period repeated. */
                if (e->have < INDUCE_REPEAT_PERIOD && at == e->have)
                        e->first[e->have++] = samples[i];
                switch (e->kind) {
                case INDUCE_STUCK:
                        samples[i] = e->first[0];
                        break;
                case INDUCE_BIAS:
                        if (at % INDUCE_BIAS_KEEP != INDUCE_BIAS_KEEP - 1)
                                samples[i] = e->first[0];
                        break;
                case INDUCE_REPEAT:
                        samples[i] = e->first[at % INDUCE_REPEAT_PERIOD];
                        break;
                default:
                        break;
                }
        }
        e->done += k;
        e->left -= k;
        return k;
}
