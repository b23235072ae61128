#include "core/keys.h"

#include <openssl/encoder.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <string.h>

#include "core/spawn.h"
#include "core/util.h"

static void put_b64(const unsigned char key[32], char out[ML_WG_KEY_LEN + 1])
{
    g_autofree char *b = g_base64_encode(key, 32);
    g_strlcpy(out, b, ML_WG_KEY_LEN + 1);
    memset(b, 0, strlen(b));
}

/* X25519's public key of a raw private key (libcrypto clamps as it multiplies). */
static bool public_of_raw(const unsigned char priv[32], unsigned char pub[32])
{
    EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, priv, 32);
    size_t len = 32;
    bool ok = k && EVP_PKEY_get_raw_public_key(k, pub, &len) == 1 && len == 32;
    EVP_PKEY_free(k);
    return ok;
}

bool ml_wg_keypair_new(struct ml_wg_keypair *ret, GError **err)
{
    unsigned char priv[32], pub[32];
    bool ok = RAND_priv_bytes(priv, sizeof(priv)) == 1;
    if (ok) {
        /* curve25519_clamp_secret, as wg genkey stores it. */
        priv[0] &= 248;
        priv[31] = (unsigned char)((priv[31] & 127) | 64);
        ok = public_of_raw(priv, pub);
    }
    if (ok) {
        put_b64(priv, ret->private_key);
        put_b64(pub, ret->public_key);
    } else {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "OpenSSL's libcrypto could not make an X25519 key pair (its random source "
                    "or its X25519 support failed)");
    }
    OPENSSL_cleanse(priv, sizeof(priv));
    return ok;
}

bool ml_wg_public_of(const char *private_b64, char ret[ML_WG_KEY_LEN + 1])
{
    if (!private_b64 || strlen(private_b64) != ML_WG_KEY_LEN)
        return false;
    gsize len = 0;
    guchar *priv = g_base64_decode(private_b64, &len);
    unsigned char pub[32];
    bool ok = len == 32 && public_of_raw(priv, pub);
    OPENSSL_cleanse(priv, len);
    g_free(priv);
    if (ok)
        put_b64(pub, ret);
    return ok;
}

void ml_wg_keypair_clear(struct ml_wg_keypair *k)
{
    OPENSSL_cleanse(k, sizeof(*k));
}

bool ml_ec_selfsigned(const char *subject, unsigned days, const char *const *addext,
                      const char *key_path, const char *crt_path, GError **err)
{
    g_autofree char *d = g_strdup_printf("%u", days);
    GPtrArray *argv = g_ptr_array_new();
    const char *head[] = {"openssl",
                          "req",
                          "-x509",
                          "-newkey",
                          "ec",
                          "-pkeyopt",
                          "ec_paramgen_curve:prime256v1",
                          "-nodes",
                          "-sha256",
                          "-days",
                          d,
                          "-subj",
                          subject,
                          "-keyout",
                          key_path,
                          "-out",
                          crt_path};
    for (size_t i = 0; i < G_N_ELEMENTS(head); i++)
        g_ptr_array_add(argv, (gpointer)head[i]);
    for (size_t i = 0; addext && addext[i]; i++) {
        g_ptr_array_add(argv, (gpointer) "-addext");
        g_ptr_array_add(argv, (gpointer)addext[i]);
    }
    g_ptr_array_add(argv, NULL);
    bool ok = ml_spawn((const char *const *)argv->pdata, NULL, err);
    g_ptr_array_free(argv, TRUE);
    if (!ok)
        g_prefix_error(err, "openssl req (a key and certificate for %s): ", subject);
    return ok;
}

/* k's selection as PEM in structure ("type-specific": PKCS#1 for RSA, SEC1 for EC;
 * "SubjectPublicKeyInfo"); NULL when libcrypto has no encoder for it. */
static char *pem_of(EVP_PKEY *k, int selection, const char *structure)
{
    OSSL_ENCODER_CTX *ctx = OSSL_ENCODER_CTX_new_for_pkey(k, selection, "PEM", structure, NULL);
    unsigned char *data = NULL;
    size_t len = 0;
    char *ret = NULL;
    if (ctx && OSSL_ENCODER_CTX_get_num_encoders(ctx) > 0 &&
        OSSL_ENCODER_to_data(ctx, &data, &len) == 1 && data && len > 0)
        ret = g_strndup((const char *)data, len);
    if (data) {
        OPENSSL_cleanse(data, len);
        OPENSSL_free(data);
    }
    OSSL_ENCODER_CTX_free(ctx);
    return ret;
}

bool ml_rsa_keypair_new(unsigned bits, char **ret_private_pem, char **ret_public_pem, GError **err)
{
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits);
    char *priv = k ? pem_of(k, OSSL_KEYMGMT_SELECT_KEYPAIR, "type-specific") : NULL;
    char *pub = priv ? pem_of(k, OSSL_KEYMGMT_SELECT_PUBLIC_KEY, "type-specific") : NULL;
    EVP_PKEY_free(k);
    if (!pub || !g_str_has_prefix(priv, "-----BEGIN RSA PRIVATE KEY-----\n") ||
        !g_str_has_prefix(pub, "-----BEGIN RSA PUBLIC KEY-----\n")) {
        if (priv)
            OPENSSL_cleanse(priv, strlen(priv));
        g_free(priv);
        g_free(pub);
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "OpenSSL's libcrypto could not make a %u-bit RSA key pair in PKCS#1 PEM", bits);
        return false;
    }
    *ret_private_pem = priv;
    *ret_public_pem = pub;
    return true;
}

bool ml_ec_keypair_new(char **ret_private_pem, char **ret_public_pem, GError **err)
{
    EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    char *priv = k ? pem_of(k, OSSL_KEYMGMT_SELECT_KEYPAIR, "type-specific") : NULL;
    char *pub = priv ? pem_of(k, OSSL_KEYMGMT_SELECT_PUBLIC_KEY, "SubjectPublicKeyInfo") : NULL;
    EVP_PKEY_free(k);
    if (!pub || !g_str_has_prefix(priv, "-----BEGIN EC PRIVATE KEY-----\n") ||
        !g_str_has_prefix(pub, "-----BEGIN PUBLIC KEY-----\n")) {
        if (priv)
            OPENSSL_cleanse(priv, strlen(priv));
        g_free(priv);
        g_free(pub);
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "OpenSSL's libcrypto could not make an ECDSA P-256 key pair in PEM");
        return false;
    }
    *ret_private_pem = priv;
    *ret_public_pem = pub;
    return true;
}
