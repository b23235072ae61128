/* Keys made on this host, for an export (the lab's own keys are made inside each guest and never
 * leave it): WireGuard's X25519 from OpenSSL's libcrypto, written as wg(8) writes them, 44
 * characters of base64 for 32 bytes; RSA key pairs in the PEM forms tinc 1.0 reads; and EC
 * certificates made with the openssl command. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#define ML_WG_KEY_LEN 44 /* base64 of 32 bytes, with its '=' */

struct ml_wg_keypair {
    char private_key[ML_WG_KEY_LEN + 1];
    char public_key[ML_WG_KEY_LEN + 1];
};

/* A fresh pair from the system's random source: the private key clamped as `wg genkey` clamps
 * it (curve25519_clamp_secret), the public key its X25519 base-point product, as `wg pubkey`
 * prints it. False, with err, when libcrypto cannot make one. */
bool ml_wg_keypair_new(struct ml_wg_keypair *ret, GError **err);
/* The public key of a base64 private key: what `wg pubkey` prints for it. False when the text
 * is not 32 bytes of base64. */
bool ml_wg_public_of(const char *private_b64, char ret[ML_WG_KEY_LEN + 1]);
/* Overwrites the pair. */
void ml_wg_keypair_clear(struct ml_wg_keypair *k);

/* An EC P-256 key (unencrypted PKCS#8) at key_path and a certificate for it at crt_path, valid
 * for days, subject "/CN=..." as given: self-signed (`openssl req -x509`) with the addext
 * extensions (NULL-terminated; may be NULL), as the lab's guests make theirs. False with err
 * (openssl's own message) when openssl fails. */
bool ml_ec_selfsigned(const char *subject, unsigned days, const char *const *addext,
                      const char *key_path, const char *crt_path, GError **err);

/* A fresh RSA key pair of bits from libcrypto, in the PEM forms `tincd -K` writes: the private
 * key as PKCS#1 ("BEGIN RSA PRIVATE KEY", read by PEM_read_RSAPrivateKey) and the public key as
 * PKCS#1 ("BEGIN RSA PUBLIC KEY", PEM_read_RSAPublicKey), each with its trailing newline. The
 * private text is the caller's to wipe. False with err when libcrypto cannot make them. */
bool ml_rsa_keypair_new(unsigned bits, char **ret_private_pem, char **ret_public_pem, GError **err);
/* A fresh ECDSA P-256 key pair from libcrypto, as strongSwan's `pki --gen --type ecdsa --size 256
 * --outform pem` and `pki --pub --outform pem` write them: the private key in SEC1 PEM ("BEGIN EC
 * PRIVATE KEY"), the public key as SubjectPublicKeyInfo ("BEGIN PUBLIC KEY"). The private text is
 * the caller's to wipe. False with err when libcrypto cannot make them. */
bool ml_ec_keypair_new(char **ret_private_pem, char **ret_public_pem, GError **err);
