/* secret.c - allocation of locked, guarded memory for secrets. */
#include "secret.h"

#include <string.h>

void *secret_alloc(size_t size) {
        void *p;

        /* sodium_malloc() needs the library initialised (its page size);
         * sodium_init() is cheap once done and safe from any thread. */
        if (sodium_init() < 0)
                return NULL;
        p = sodium_malloc(size);
        if (p)
                sodium_memzero(p, size);
        return p;
}

void *secret_free(void *p) {
        /* sodium_free() erases the whole region before unmapping it. */
        sodium_free(p);
        return NULL;
}
