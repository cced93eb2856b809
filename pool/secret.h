/* secret.h - memory that holds secrets.
 *
 * Long-lived secrets (hash states, stored blocks, CRNG keys) live in
 * sodium_malloc()'d memory: guard pages, mlock()ed, never swapped, erased on
 * free. Stack temporaries are declared with SECRET_BUFFER or SECRET_VAR
 * (erased on every path out of their scope) or wiped with sodium_memzero(). */
#pragma once

#include <sodium.h>
#include <stddef.h>

#include "util/cleanup.h"

/* Allocates zeroed, locked, guarded memory (initialising libsodium if no
 * one did yet); NULL on failure. */
void *secret_alloc(size_t size);
/* Erases and frees; takes NULL; returns NULL. */
void *secret_free(void *p);

/* A stack buffer erased on every path out of its scope:
 *     SECRET_BUFFER(key, 32);
 * declares `uint8_t key[32]` and a guard after it; cleanups run in reverse
 * order, so the guard wipes the buffer just before the buffer dies.
 *     SECRET_VAR(crypto_hash_sha256_state, h);
 * does the same for a variable of any type (a hash state). */
typedef struct SecretGuard {
        void *p;
        size_t n;
} SecretGuard;
static inline void secret_guard_erase(SecretGuard *g) { sodium_memzero(g->p, g->n); }
#define SECRET_GUARD_(name, address)                                           \
        _cleanup_(secret_guard_erase) __attribute__((unused)) SecretGuard name##_guard_ = { address, sizeof(name) }
#define SECRET_BUFFER(name, size)                                              \
        uint8_t name[size];                                                    \
        SECRET_GUARD_(name, name)
#define SECRET_VAR(type, name)                                                 \
        type name;                                                             \
        SECRET_GUARD_(name, &name)
