/* sourceconf.c - configured sources as the pool opens them (see
 * sourceconf.h). Flow: config -> [sourceconf] -> pool/ sources. */
#include "sourceconf.h"

#include <errno.h>
#include <string.h>

SourceParams sourceconf_params(const SourceConfig *sc) {
        return (SourceParams){
                .path = sc->path,
                .loop = sc->loop,
                .rate = sc->rate,
                .jitter_buffer = sc->jitter_buffer,
                .jitter_accesses = sc->jitter_accesses,
        };
}

const SourceOps *sourceconf_ops(ConfigSource s) {
        return source_lookup(config_source_name(s));
}

int sourceconf_lookup(const char *name, ConfigSource *ret) {
        for (ConfigSource i = 0; i < _CONFIG_SOURCE_MAX; i++)
                if (strcmp(name, config_source_name(i)) == 0) {
                        *ret = i;
                        return 0;
                }
        return -ENOENT;
}
