/* keys.c - Ed25519 key files as OpenSSL writes them (see keys.h).
 * Flow: operator's key -> [evidence] -> bundle. */
#include "keys.h"

#include <errno.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fdio.h"

#define SEED_BYTES 32U
#define DER_MAX 48U

/* RFC 8410's fixed DER around the 32 key bytes: id-Ed25519 is 1.3.101.112. */
typedef struct Armor {
        const char *label;
        uint8_t prefix[16];
        size_t prefix_len;
} Armor;

static const Armor secret_armor = {
        "PRIVATE KEY",
        { 0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20 },
        16,
};
static const Armor public_armor = {
        "PUBLIC KEY",
        { 0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00 },
        12,
};

/* Erases a key file's text on every path out: it holds the seed. */
static void erase_text(char (*p)[EVIDENCE_KEY_FILE_MAX + 1]) {
        sodium_memzero(*p, sizeof(*p));
}

static void erase_der(uint8_t (*p)[DER_MAX]) {
        sodium_memzero(*p, sizeof(*p));
}

int evidence_key_generate(uint8_t ret_pk[static EVIDENCE_PUBLIC_KEY_BYTES],
                          uint8_t ret_sk[static EVIDENCE_SECRET_KEY_BYTES]) {
        if (sodium_init() < 0)
                return -EIO;
        crypto_sign_keypair(ret_pk, ret_sk);
        return 0;
}

static int pem_format(const Armor *a, const uint8_t key[static SEED_BYTES], char *buf, size_t size) {
        _cleanup_(erase_der) uint8_t der[DER_MAX] = { 0 };
        char b64[sodium_base64_ENCODED_LEN(DER_MAX, sodium_base64_VARIANT_ORIGINAL)];
        int n;

        memcpy(der, a->prefix, a->prefix_len);
        memcpy(der + a->prefix_len, key, SEED_BYTES);
        sodium_bin2base64(b64, sizeof(b64), der, a->prefix_len + SEED_BYTES, sodium_base64_VARIANT_ORIGINAL);
        n = snprintf(buf, size, "-----BEGIN %s-----\n%s\n-----END %s-----\n", a->label, b64, a->label);
        sodium_memzero(b64, sizeof(b64));
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

int evidence_key_format_secret(const uint8_t sk[static EVIDENCE_SECRET_KEY_BYTES], char *buf, size_t size) {
        return pem_format(&secret_armor, sk, buf, size);   /* libsodium's sk begins with the seed */
}

int evidence_key_format_public(const uint8_t pk[static EVIDENCE_PUBLIC_KEY_BYTES], char *buf, size_t size) {
        return pem_format(&public_armor, pk, buf, size);
}

static bool blank(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!strchr(" \t\r\n", s[i]))
                        return false;
        return true;
}

/* The 32 key bytes of a PEM text of armor a. */
static int pem_parse(const Armor *a, const char *pem, size_t len, uint8_t ret[static SEED_BYTES]) {
        _cleanup_(erase_der) uint8_t der[DER_MAX];
        char begin[48], end[48];
        const char *body, *stop;
        size_t n = 0;

        snprintf(begin, sizeof(begin), "-----BEGIN %s-----", a->label);
        snprintf(end, sizeof(end), "-----END %s-----", a->label);
        if (len < strlen(begin) || memcmp(pem, begin, strlen(begin)) != 0)
                return -EBADMSG;
        body = pem + strlen(begin);
        stop = memmem(body, len - (size_t) (body - pem), end, strlen(end));
        if (!stop || !blank(stop + strlen(end), len - (size_t) (stop + strlen(end) - pem)))
                return -EBADMSG;
        if (sodium_base642bin(der, sizeof(der), body, (size_t) (stop - body), " \t\r\n", &n, NULL,
                              sodium_base64_VARIANT_ORIGINAL) < 0 ||
            n != a->prefix_len + SEED_BYTES || memcmp(der, a->prefix, a->prefix_len) != 0)
                return -EBADMSG;
        memcpy(ret, der + a->prefix_len, SEED_BYTES);
        return 0;
}

int evidence_key_parse_secret(const char *pem, size_t len, uint8_t ret_sk[static EVIDENCE_SECRET_KEY_BYTES]) {
        _cleanup_(erase_der) uint8_t seed[DER_MAX];
        uint8_t pk[EVIDENCE_PUBLIC_KEY_BYTES];
        int r;

        if (sodium_init() < 0)
                return -EIO;
        r = pem_parse(&secret_armor, pem, len, seed);
        if (r < 0)
                return r;
        crypto_sign_seed_keypair(pk, ret_sk, seed);
        return 0;
}

int evidence_key_parse_public(const char *pem, size_t len, uint8_t ret_pk[static EVIDENCE_PUBLIC_KEY_BYTES]) {
        return pem_parse(&public_armor, pem, len, ret_pk);
}

int evidence_key_write_secret(int fd, const uint8_t sk[static EVIDENCE_SECRET_KEY_BYTES]) {
        _cleanup_(erase_text) char pem[EVIDENCE_KEY_FILE_MAX + 1];
        int r = evidence_key_format_secret(sk, pem, sizeof(pem));

        return r < 0 ? r : fd_write_all(fd, pem, strlen(pem));
}

int evidence_key_write_public(int fd, const uint8_t pk[static EVIDENCE_PUBLIC_KEY_BYTES]) {
        char pem[EVIDENCE_KEY_FILE_MAX + 1];
        int r = evidence_key_format_public(pk, pem, sizeof(pem));

        return r < 0 ? r : fd_write_all(fd, pem, strlen(pem));
}

/* A whole key file into text (NUL-terminated), *ret_len its length. */
static int read_key_file(int fd, bool secret, char text[static EVIDENCE_KEY_FILE_MAX + 1], size_t *ret_len) {
        struct stat st;
        size_t n = 0;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADMSG;
        if (secret && (st.st_mode & 077))
                return -EPERM;
        for (;;) {
                ssize_t k = read(fd, text + n, EVIDENCE_KEY_FILE_MAX + 1 - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > EVIDENCE_KEY_FILE_MAX)
                        return -EFBIG;
        }
        text[n] = '\0';
        *ret_len = n;
        return 0;
}

int evidence_key_read_secret(int fd, uint8_t ret_sk[static EVIDENCE_SECRET_KEY_BYTES]) {
        _cleanup_(erase_text) char text[EVIDENCE_KEY_FILE_MAX + 1];
        size_t n;
        int r = read_key_file(fd, true, text, &n);

        return r < 0 ? r : evidence_key_parse_secret(text, n, ret_sk);
}

int evidence_key_read_public(int fd, uint8_t ret_pk[static EVIDENCE_PUBLIC_KEY_BYTES]) {
        char text[EVIDENCE_KEY_FILE_MAX + 1];
        size_t n;
        int r = read_key_file(fd, false, text, &n);

        return r < 0 ? r : evidence_key_parse_public(text, n, ret_pk);
}
