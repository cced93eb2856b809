/* secret.c - allocation of locked, guarded memory for secrets. */
#include "secret.h"

#include <string.h>

void *secret_alloc(size_t size) {
        void *p = sodium_malloc(size);
        if (p)
                sodium_memzero(p, size);
        return p;
}

void *secret_free(void *p) {
        /* sodium_free() erases the whole region before unmapping it. */
        sodium_free(p);
        return NULL;
}
