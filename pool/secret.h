/* secret.h - helpers for memory that holds secrets, and cleanup attributes.
 *
 * Long-lived secrets (hash states, stored blocks, CRNG keys) live in
 * sodium_malloc()'d memory: guard pages, mlock()ed, never swapped, erased on
 * free. Stack temporaries are wiped with _cleanup_erase_ or explicit
 * sodium_memzero() on every path. Everything above pool/ includes this. */
#pragma once

#include <sodium.h>
#include <stdlib.h>
#include <unistd.h>

/* Allocates zeroed, locked, guarded memory; NULL on failure. */
void *secret_alloc(size_t size);
/* Erases and frees; takes NULL; returns NULL. */
void *secret_free(void *p);

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* A stack buffer erased on every path out of its scope:
 *     SECRET_BUFFER(key, 32);
 * declares `uint8_t key[32]` and a guard after it; cleanups run in reverse
 * order, so the guard wipes the buffer just before the buffer dies. */
typedef struct SecretGuard {
        void *p;
        size_t n;
} SecretGuard;
static inline void secret_guard_erase(SecretGuard *g) { sodium_memzero(g->p, g->n); }
#define SECRET_BUFFER(name, size)                                              \
        uint8_t name[size];                                                    \
        _cleanup_(secret_guard_erase) __attribute__((unused)) SecretGuard name##_guard_ = { name, sizeof(name) }

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
