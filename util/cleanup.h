/* cleanup.h - scope-bound cleanups (GCC/clang's cleanup attribute, as
 * systemd's _cleanup_) and the small macros every folder uses.
 *
 *     _cleanup_free_ char *s = NULL;      freed on every path out
 *     _cleanup_close_ int fd = -1;        closed on every path out
 *     _cleanup_(foo_freep) Foo *f = NULL; any type with a foo_freep()
 *
 * Ownership leaves a scope explicitly: `*ret = TAKE_PTR(f);`.
 * Secrets have their own helpers (pool/secret.h). No I/O, no state. */
#pragma once

#include <stdlib.h>
#include <unistd.h>

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd) {
        if (*fd >= 0)
                close(*fd);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* Hands a pointer (or fd) over: returns it and leaves NULL (or -1) behind,
 * so the cleanup of the scope it leaves does nothing. (__extension__: a
 * statement expression, GNU C, which -Wpedantic would flag.) */
#define TAKE_PTR(p)                                                            \
        __extension__({                                                        \
                __typeof__(p) take_ptr_ = (p);                                 \
                (p) = NULL;                                                    \
                take_ptr_;                                                     \
        })
#define TAKE_FD(fd)                                                            \
        __extension__({                                                        \
                int take_fd_ = (fd);                                           \
                (fd) = -1;                                                     \
                take_fd_;                                                      \
        })

/* Declares func##p() for a func() that takes NULL, as the cleanup of a
 * `type *`: `DEFINE_FREEP(Foo, foo_free);` makes foo_freep(). The empty
 * struct declaration at the end takes the caller's semicolon. */
#define DEFINE_FREEP(type, func)                                               \
        static inline void func##p(type **p) {                                 \
                if (*p)                                                        \
                        func(*p);                                              \
        }                                                                      \
        struct define_freep_needs_a_semicolon_

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
