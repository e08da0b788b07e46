#ifndef RESCIND_CLIBCRYPTO_SHIM_H
#define RESCIND_CLIBCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/err.h>
#include <openssl/crypto.h>
#endif
