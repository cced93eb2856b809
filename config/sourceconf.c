/* sourceconf.c - configured sources as the pool opens them (see
 * sourceconf.h). Flow: config -> [sourceconf] -> pool/ sources. */
#include "sourceconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

SourceParams sourceconf_params(const SourceConfig *sc) {
        return sc->params;
}

const SourceOps *sourceconf_ops(ConfigSource s) {
        return (unsigned) s < _CONFIG_SOURCE_MAX ? source_all[s] : NULL;
}

int sourceconf_lookup(const char *name, ConfigSource *ret) {
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++)
                if (strcmp(name, source_all[i]->name) == 0) {
                        *ret = i;
                        return 0;
                }
        return -ENOENT;
}

bool sourceconf_creditable(const SourceConfig *sc, ConfigSource s) {
        return sc->enable && source_all[s]->credit != SOURCE_CREDIT_NEVER && (sc->credit_auto || sc->credit_mbits > 0);
}

static bool key_changed(const SourceKey *k, const SourceParams *a, const SourceParams *b) {
        const void *x = (const uint8_t *) a + k->offset, *y = (const uint8_t *) b + k->offset;
        const char *s, *t;

        switch (k->type) {
        case SOURCE_KEY_BOOL:
                return *(const bool *) x != *(const bool *) y;
        case SOURCE_KEY_UNSIGNED:
                return *(const unsigned *) x != *(const unsigned *) y;
        case SOURCE_KEY_U64:
                return *(const uint64_t *) x != *(const uint64_t *) y;
        case SOURCE_KEY_KIB:
                return *(const size_t *) x != *(const size_t *) y;
        case SOURCE_KEY_PATH:
        case SOURCE_KEY_PATH_NONE:
                memcpy(&s, x, sizeof(s));
                memcpy(&t, y, sizeof(t));
                return !s != !t || (s && strcmp(s, t) != 0);
        }
        abort();
}

bool sourceconf_changed(ConfigSource s, const SourceConfig *a, const SourceConfig *b) {
        const SourceOps *ops = source_all[s];

        if (a->enable != b->enable || a->credit_mbits != b->credit_mbits || a->credit_auto != b->credit_auto ||
            a->credit_cap_mbits != b->credit_cap_mbits)
                return true;
        for (int k = 0; k < SOURCE_KEYS_MAX && ops->keys[k].name; k++)
                if (key_changed(&ops->keys[k], &a->params, &b->params))
                        return true;
        return false;
}
