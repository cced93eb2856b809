/* source.c - the table of noise sources and lookup by name.
 *
 * The order of source_all[] is the order status and the configuration list
 * them: credited hardware-independent first, then hardware, then the
 * never-credited and test-only sources.
 * Flow: [source] -> health -> conditioner -> store. */
#include "source.h"

#include <string.h>

const SourceOps *const source_all[] = {
        &source_jitter,
        &source_rdseed,
        &source_hwrng,
        &source_kernel,
        &source_file,
        NULL,
};

const SourceOps *source_lookup(const char *name) {
        if (!name)
                return NULL;
        for (const SourceOps *const *s = source_all; *s; s++)
                if (strcmp((*s)->name, name) == 0)
                        return *s;
        return NULL;
}
