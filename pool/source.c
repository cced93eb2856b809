/* source.c - the table of noise sources (source.h's SOURCE_TABLE) and
 * lookup by name. Each row lives in its source's file.
 * Flow: [source] -> health -> conditioner -> store. */
#include "source.h"

#include <string.h>

#define SOURCE_ROW_(ID, name) &source_##name,
const SourceOps *const source_all[] = {
        SOURCE_TABLE(SOURCE_ROW_)
        NULL,
};
#undef SOURCE_ROW_

const SourceOps *source_lookup(const char *name) {
        if (!name)
                return NULL;
        for (const SourceOps *const *s = source_all; *s; s++)
                if (strcmp((*s)->name, name) == 0)
                        return *s;
        return NULL;
}
