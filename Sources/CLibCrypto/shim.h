#ifndef RESCIND_CLIBCRYPTO_SHIM_H
#define RESCIND_CLIBCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/err.h>
#include <openssl/crypto.h>

/*
 * HKDF-SHA256 (RFC 5869, extract-and-expand) through an already fetched EVP_KDF.
 * Lives in C because OSSL_PARAM keeps the parameter-name pointers: the names must be
 * the static string literals from core_names.h, never a temporary bridged Swift string.
 * An empty salt is left out, so HKDF uses HashLen zero bytes as RFC 5869 specifies.
 * Returns 1 on success, 0 on failure (details on the OpenSSL error queue).
 */
static inline int rescind_hkdf_sha256(EVP_KDF *kdf,
                                      const unsigned char *ikm, size_t ikm_len,
                                      const unsigned char *salt, size_t salt_len,
                                      const unsigned char *info, size_t info_len,
                                      unsigned char *out, size_t out_len) {
    EVP_KDF_CTX *ctx = EVP_KDF_CTX_new(kdf);
    if (ctx == NULL) {
        return 0;
    }
    OSSL_PARAM params[5];
    int n = 0;
    params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikm_len);
    if (salt_len > 0) {
        params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, salt_len);
    }
    params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, info_len);
    params[n] = OSSL_PARAM_construct_end();
    int ok = EVP_KDF_derive(ctx, out, out_len, params);
    EVP_KDF_CTX_free(ctx);
    return ok == 1 ? 1 : 0;
}

#endif
