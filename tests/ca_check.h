/* What a Headscale CA of meshlab's vouches for, asked of the real openssl: a leaf signed with
 * the CA's key for another name or address must not verify, and the CA must not outlive its
 * days. For test_tailscale (the lab's CA) and test_export (the export's). */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/spawn.h"

/* Whether `openssl verify -CAfile DIR/ca.crt FLAG NAME` accepts a server certificate for san
 * ("DNS:www.bank.example", "IP:198.51.100.7") signed with DIR/ca.key. */
static inline bool ca_vouches_for(const char *dir, const char *san, const char *flag,
                                  const char *name)
{
    g_autofree char *key = g_build_filename(dir, "leaf.key", NULL);
    g_autofree char *csr = g_build_filename(dir, "leaf.csr", NULL);
    g_autofree char *crt = g_build_filename(dir, "leaf.crt", NULL);
    g_autofree char *ext = g_build_filename(dir, "leaf.ext", NULL);
    g_autofree char *ca = g_build_filename(dir, "ca.crt", NULL);
    g_autofree char *cakey = g_build_filename(dir, "ca.key", NULL);
    g_autofree char *srl = g_build_filename(dir, "leaf.srl", NULL);
    g_autofree char *ext_text = g_strdup_printf("basicConstraints=critical,CA:FALSE\n"
                                     "keyUsage=critical,digitalSignature\n"
                                     "extendedKeyUsage=serverAuth\nsubjectAltName=%s\n",
                                     san);
    const char *req[] = {"openssl", "req",  "-new", "-newkey", "ec",   "-pkeyopt",
                         "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                         "-out",    csr,    "-subj", "/CN=leaf", NULL};
    const char *sign[] = {"openssl", "x509",  "-req",     "-in",       csr,  "-CA",
                          ca,        "-CAkey", cakey,     "-CAserial", srl,  "-CAcreateserial",
                          "-days",   "10",    "-extfile", ext,         "-out", crt, NULL};
    const char *verify[] = {"openssl", "verify", "-CAfile", ca, flag, name, crt, NULL};
    bool made = g_file_set_contents(ext, ext_text, -1, NULL) && ml_spawn(req, NULL, NULL) &&
                ml_spawn(sign, NULL, NULL);
    bool ok = made && ml_spawn(verify, NULL, NULL);
    if (!made)
        fprintf(stderr, "ca_vouches_for: could not sign a leaf for %s with %s\n", san, cakey);
    return ok;
}

/* Whether the certificate at crt still holds `days` days from now (openssl x509 -checkend). */
static inline bool cert_lasts_days(const char *crt, unsigned days)
{
    g_autofree char *secs = g_strdup_printf("%u", days * 86400u);
    const char *argv[] = {"openssl", "x509", "-noout", "-checkend", secs, "-in", crt, NULL};
    return ml_spawn(argv, NULL, NULL);
}

/* `openssl x509 -noout -ext nameConstraints` of the certificate at crt, or NULL. */
static inline char *cert_name_constraints(const char *crt)
{
    const char *argv[] = {"openssl", "x509", "-noout", "-ext", "nameConstraints", "-in", crt, NULL};
    char *out = NULL;
    if (!ml_spawn(argv, &out, NULL))
        g_clear_pointer(&out, g_free);
    return out;
}
