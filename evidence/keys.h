/* keys.h - the Ed25519 keys that sign evidence bundles (libsodium).
 *
 * Key files are PEM, exactly as OpenSSL writes Ed25519 keys (RFC 8410):
 *
 *   secret: "-----BEGIN PRIVATE KEY-----", PKCS#8 v1 holding the 32-byte
 *           seed (48 bytes of DER); mode 0600, owner only: a key that
 *           group or others may read is refused, as ssh refuses one
 *   public: "-----BEGIN PUBLIC KEY-----", SubjectPublicKeyInfo (44 bytes
 *           of DER)
 *
 * So an operator may make the pair with `truerandomctl evidence keygen`
 * or with `openssl genpkey -algorithm ed25519 -out evidence.key` (then
 * `chmod 600` it and `openssl pkey -in evidence.key -pubout -out
 * evidence.pub`), and an auditor checks a bundle's MANIFEST.sig (the 64
 * raw signature bytes over MANIFEST) with truerandomctl or with OpenSSL:
 *
 *   openssl pkeyutl -verify -pubin -inkey evidence.pub -rawin \
 *           -in MANIFEST -sigfile MANIFEST.sig
 *
 * The secret key is born in evidence_key_generate() or read from its file,
 * lives in the caller's buffer, and every copy made here is erased before
 * the function returns. Flow: operator's key -> [evidence] -> bundle. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define EVIDENCE_PUBLIC_KEY_BYTES 32U
#define EVIDENCE_SECRET_KEY_BYTES 64U    /* libsodium's: seed, then public key */
#define EVIDENCE_SIGNATURE_BYTES 64U
#define EVIDENCE_KEY_FILE_MAX 4096U

/* A new pair. 0 or -EIO (libsodium unusable). */
int evidence_key_generate(uint8_t ret_pk[static EVIDENCE_PUBLIC_KEY_BYTES],
                          uint8_t ret_sk[static EVIDENCE_SECRET_KEY_BYTES]);

/* The PEM text of a key into buf (NUL-terminated); -ENOBUFS if it does not
 * fit (EVIDENCE_KEY_FILE_MAX always does). */
int evidence_key_format_secret(const uint8_t sk[static EVIDENCE_SECRET_KEY_BYTES], char *buf, size_t size);
int evidence_key_format_public(const uint8_t pk[static EVIDENCE_PUBLIC_KEY_BYTES], char *buf, size_t size);

/* A key from PEM text; -EBADMSG for anything else (another algorithm, a
 * PKCS#8 v2 key with its public key inside, bad base64, trailing junk). */
int evidence_key_parse_secret(const char *pem, size_t len, uint8_t ret_sk[static EVIDENCE_SECRET_KEY_BYTES]);
int evidence_key_parse_public(const char *pem, size_t len, uint8_t ret_pk[static EVIDENCE_PUBLIC_KEY_BYTES]);

/* Writes a key file to fd (the caller creates it: 0600 for the secret
 * key). 0 or -errno. */
int evidence_key_write_secret(int fd, const uint8_t sk[static EVIDENCE_SECRET_KEY_BYTES]);
int evidence_key_write_public(int fd, const uint8_t pk[static EVIDENCE_PUBLIC_KEY_BYTES]);

/* Reads a key file from fd. The secret key: -EPERM if group or others may
 * read or write it; -EBADMSG if it is not a key; -EFBIG if the file is
 * larger than any key file. */
int evidence_key_read_secret(int fd, uint8_t ret_sk[static EVIDENCE_SECRET_KEY_BYTES]);
int evidence_key_read_public(int fd, uint8_t ret_pk[static EVIDENCE_PUBLIC_KEY_BYTES]);
