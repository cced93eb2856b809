/* truerandom-provider.c - the OpenSSL 3 provider "truerandom": a seed
 * source, TRUERANDOM (property provider=truerandom), that draws every
 * seed from /dev/truerandom through libtruerandom, all or nothing.
 *
 * With [random] seed = TRUERANDOM in openssl.cnf, OpenSSL's primary DRBG
 * takes its entropy from here (get_seed), and every RAND_bytes() of the
 * process comes from a DRBG seeded by the device.
 *
 * Fail closed: instantiate always succeeds and opens nothing; a seed the
 * device cannot give fails with an error on OpenSSL's queue, and the DRBG
 * and RAND_bytes() fail with it. This matters in OpenSSL 3.0: when the
 * seed source cannot be created (an instantiate that failed), OpenSSL
 * drops the error and seeds the primary DRBG from the operating system;
 * once this source is the DRBG's parent, no such fallback exists.
 *
 * Configuration (the provider's section): device = PATH (default
 * /dev/truerandom). Flow: /dev/truerandom -> libtruerandom ->
 * [provider] -> OpenSSL's primary DRBG -> RAND_bytes(). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/proverr.h>

#include <truerandom.h>

#include "config-build.h"

/* What a seed source reports (OpenSSL's own SEED-SRC says the same):
 * full entropy, more than any DRBG asks for. */
#define SEED_STRENGTH 1024
/* One request of the device carries at most this; ALL loops past it. */
#define SEED_MAX_REQUEST (128 * 1024)

typedef struct Provider {
        const OSSL_CORE_HANDLE *handle;
        char *device;
} Provider;

typedef struct Seed {
        Provider *prov;
        struct truerandom *dev; /* opened at the first seed */
        int state;              /* EVP_RAND_STATE_* */
        bool locking;
        pthread_mutex_t lock;
} Seed;

/* ---- the seed source ---------------------------------------------------- */

static void *seed_new(void *provctx, void *parent, const OSSL_DISPATCH *parent_calls) {
        Seed *s;

        if (parent) {
                ERR_raise(ERR_LIB_PROV, PROV_R_SEED_SOURCES_MUST_NOT_HAVE_A_PARENT);
                return NULL;
        }
        s = calloc(1, sizeof(*s));
        if (!s) {
                ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
                return NULL;
        }
        s->prov = provctx;
        s->state = EVP_RAND_STATE_UNINITIALISED;
        return s;
}

static void seed_free(void *vctx) {
        Seed *s = vctx;

        if (!s)
                return;
        truerandom_close(s->dev);
        if (s->locking)
                pthread_mutex_destroy(&s->lock);
        free(s);
}

static int seed_instantiate(void *vctx, unsigned int strength, int prediction_resistance,
                            const unsigned char *pstr, size_t pstr_len, const OSSL_PARAM params[]) {
        ((Seed *) vctx)->state = EVP_RAND_STATE_READY;
        return 1;
}

static int seed_uninstantiate(void *vctx) {
        Seed *s = vctx;

        s->dev = truerandom_close(s->dev);
        s->state = EVP_RAND_STATE_UNINITIALISED;
        return 1;
}

/* n bytes from the device, or 0 with the reason on the error queue. */
static int seed_read(Seed *s, unsigned char *out, size_t n) {
        const char *path = s->prov->device;
        ssize_t k;
        int r;

        if (s->state != EVP_RAND_STATE_READY) {
                ERR_raise(ERR_LIB_PROV, PROV_R_NOT_INSTANTIATED);
                return 0;
        }
        if (!s->dev) {
                r = truerandom_open(path, &s->dev);
                if (r < 0) {
                        ERR_raise_data(ERR_LIB_PROV, PROV_R_ERROR_RETRIEVING_ENTROPY,
                                       "truerandom: cannot open %s: %s%s", path, strerror(-r),
                                       r == -ENOENT ? " (is truerandomd running?)" : "");
                        return 0;
                }
        }
        k = truerandom_read(s->dev, out, n, TRUERANDOM_READ_ALL);
        if (k < 0) {
                /* The library reopened once already; the next seed opens afresh. */
                s->dev = truerandom_close(s->dev);
                ERR_raise_data(ERR_LIB_PROV, PROV_R_ERROR_RETRIEVING_ENTROPY,
                               "truerandom: cannot read %zu bytes from %s: %s", n, path, strerror((int) -k));
                return 0;
        }
        return 1;
}

static int seed_generate(void *vctx, unsigned char *out, size_t outlen, unsigned int strength,
                         int prediction_resistance, const unsigned char *adin, size_t adin_len) {
        return seed_read(vctx, out, outlen);
}

static int seed_reseed(void *vctx, int prediction_resistance, const unsigned char *ent, size_t ent_len,
                       const unsigned char *adin, size_t adin_len) {
        return 1;
}

/* A DRBG's seed: entropy bits at 8 per byte, at least min_len bytes,
 * rounded up to whole blocks where max_len allows. OpenSSL's CTR-DRBG
 * asks for its entropy input and nonce in one request (384 bits, 48
 * bytes); the device erases the unread rest of a block, so the DRBG gets
 * the whole second block (64 bytes) rather than wasting half of it. */
static size_t seed_get_seed(void *vctx, unsigned char **pout, int entropy, size_t min_len, size_t max_len,
                            int prediction_resistance, const unsigned char *adin, size_t adin_len) {
        size_t n = entropy > 0 ? ((size_t) entropy + 7) / 8 : 0, whole;
        unsigned char *p;

        if (n < min_len)
                n = min_len;
        whole = (n + TRUERANDOM_BLOCK_SIZE - 1) / TRUERANDOM_BLOCK_SIZE * TRUERANDOM_BLOCK_SIZE;
        if (whole <= max_len)
                n = whole;
        if (n > max_len || n == 0) {
                ERR_raise(ERR_LIB_PROV, PROV_R_ENTROPY_SOURCE_STRENGTH_TOO_WEAK);
                return 0;
        }
        p = OPENSSL_secure_malloc(n);
        if (!p) {
                ERR_raise(ERR_LIB_PROV, ERR_R_MALLOC_FAILURE);
                return 0;
        }
        if (!seed_read(vctx, p, n)) {
                OPENSSL_secure_clear_free(p, n);
                return 0;
        }
        *pout = p;
        return n;
}

static void seed_clear_seed(void *vctx, unsigned char *out, size_t outlen) {
        OPENSSL_secure_clear_free(out, outlen);
}

static int seed_enable_locking(void *vctx) {
        Seed *s = vctx;

        if (!s->locking) {
                if (pthread_mutex_init(&s->lock, NULL) != 0)
                        return 0;
                s->locking = true;
        }
        return 1;
}

static int seed_lock(void *vctx) {
        Seed *s = vctx;

        return !s->locking || pthread_mutex_lock(&s->lock) == 0;
}

static void seed_unlock(void *vctx) {
        Seed *s = vctx;

        if (s->locking)
                pthread_mutex_unlock(&s->lock);
}

static const OSSL_PARAM *seed_gettable_ctx_params(void *vctx, void *provctx) {
        static const OSSL_PARAM known[] = {
                OSSL_PARAM_int(OSSL_RAND_PARAM_STATE, NULL),
                OSSL_PARAM_uint(OSSL_RAND_PARAM_STRENGTH, NULL),
                OSSL_PARAM_size_t(OSSL_RAND_PARAM_MAX_REQUEST, NULL),
                OSSL_PARAM_END,
        };
        return known;
}

static int seed_get_ctx_params(void *vctx, OSSL_PARAM params[]) {
        Seed *s = vctx;
        OSSL_PARAM *p;

        p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_STATE);
        if (p && !OSSL_PARAM_set_int(p, s->state))
                return 0;
        p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_STRENGTH);
        if (p && !OSSL_PARAM_set_uint(p, SEED_STRENGTH))
                return 0;
        p = OSSL_PARAM_locate(params, OSSL_RAND_PARAM_MAX_REQUEST);
        if (p && !OSSL_PARAM_set_size_t(p, SEED_MAX_REQUEST))
                return 0;
        return 1;
}

/* Nothing secret stays here: seeds are erased when the DRBG clears them. */
static int seed_verify_zeroization(void *vctx) {
        return 1;
}

typedef void (*Fn)(void);

static const OSSL_DISPATCH seed_functions[] = {
        { OSSL_FUNC_RAND_NEWCTX, (Fn) seed_new },
        { OSSL_FUNC_RAND_FREECTX, (Fn) seed_free },
        { OSSL_FUNC_RAND_INSTANTIATE, (Fn) seed_instantiate },
        { OSSL_FUNC_RAND_UNINSTANTIATE, (Fn) seed_uninstantiate },
        { OSSL_FUNC_RAND_GENERATE, (Fn) seed_generate },
        { OSSL_FUNC_RAND_RESEED, (Fn) seed_reseed },
        { OSSL_FUNC_RAND_ENABLE_LOCKING, (Fn) seed_enable_locking },
        { OSSL_FUNC_RAND_LOCK, (Fn) seed_lock },
        { OSSL_FUNC_RAND_UNLOCK, (Fn) seed_unlock },
        { OSSL_FUNC_RAND_GETTABLE_CTX_PARAMS, (Fn) seed_gettable_ctx_params },
        { OSSL_FUNC_RAND_GET_CTX_PARAMS, (Fn) seed_get_ctx_params },
        { OSSL_FUNC_RAND_VERIFY_ZEROIZATION, (Fn) seed_verify_zeroization },
        { OSSL_FUNC_RAND_GET_SEED, (Fn) seed_get_seed },
        { OSSL_FUNC_RAND_CLEAR_SEED, (Fn) seed_clear_seed },
        { 0, NULL },
};

/* ---- the provider ------------------------------------------------------- */

static const OSSL_ALGORITHM rands[] = {
        { "TRUERANDOM", "provider=truerandom", seed_functions,
          "seed source: full-entropy blocks of /dev/truerandom" },
        { NULL, NULL, NULL, NULL },
};

static const OSSL_ALGORITHM *query(void *provctx, int operation_id, int *no_cache) {
        *no_cache = 0;
        return operation_id == OSSL_OP_RAND ? rands : NULL;
}

static const OSSL_PARAM *gettable_params(void *provctx) {
        static const OSSL_PARAM known[] = {
                OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_NAME, NULL, 0),
                OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_VERSION, NULL, 0),
                OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, NULL, 0),
                OSSL_PARAM_int(OSSL_PROV_PARAM_STATUS, NULL),
                OSSL_PARAM_END,
        };
        return known;
}

static int get_params(void *provctx, OSSL_PARAM params[]) {
        OSSL_PARAM *p;

        p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_NAME);
        if (p && !OSSL_PARAM_set_utf8_ptr(p, "truerandom: seeds from /dev/truerandom"))
                return 0;
        p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_VERSION);
        if (p && !OSSL_PARAM_set_utf8_ptr(p, TRUERANDOM_VERSION))
                return 0;
        p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_BUILDINFO);
        if (p && !OSSL_PARAM_set_utf8_ptr(p, TRUERANDOM_VERSION))
                return 0;
        p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_STATUS);
        if (p && !OSSL_PARAM_set_int(p, 1))
                return 0;
        return 1;
}

static void teardown(void *provctx) {
        Provider *prov = provctx;

        free(prov->device);
        free(prov);
}

static const OSSL_DISPATCH provider_functions[] = {
        { OSSL_FUNC_PROVIDER_TEARDOWN, (Fn) teardown },
        { OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, (Fn) gettable_params },
        { OSSL_FUNC_PROVIDER_GET_PARAMS, (Fn) get_params },
        { OSSL_FUNC_PROVIDER_QUERY_OPERATION, (Fn) query },
        { 0, NULL },
};

/* "device" from the provider's configuration section, or the default. */
static char *configured_device(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in) {
        OSSL_FUNC_core_get_params_fn *core_get_params = NULL;
        const char *device = NULL;
        OSSL_PARAM params[] = {
                OSSL_PARAM_utf8_ptr("device", (char **) &device, 0),
                OSSL_PARAM_END,
        };

        for (; in && in->function_id != 0; in++)
                if (in->function_id == OSSL_FUNC_CORE_GET_PARAMS)
                        core_get_params = OSSL_FUNC_core_get_params(in);
        if (!core_get_params || !core_get_params(handle, params) || !device || !device[0])
                device = TRUERANDOM_DEFAULT_PATH;
        return strdup(device);
}

__attribute__((visibility("default"))) int OSSL_provider_init(const OSSL_CORE_HANDLE *handle,
                                                               const OSSL_DISPATCH *in,
                                                               const OSSL_DISPATCH **out, void **provctx) {
        Provider *prov = calloc(1, sizeof(*prov));

        if (!prov)
                return 0;
        prov->handle = handle;
        prov->device = configured_device(handle, in);
        if (!prov->device) {
                free(prov);
                return 0;
        }
        *out = provider_functions;
        *provctx = prov;
        return 1;
}
