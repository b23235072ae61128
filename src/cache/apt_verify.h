/* Checking packages from a Debian-format archive the way apt does, on files already on disk:
 * the suite's InRelease carries a good signature by a key in a given keyring, the Packages
 * index matches the hash and size the signed text lists for it, and a .deb matches the hash
 * and size its Packages stanza lists. The keyring is a parameter: the caller decides whose
 * keys to trust (meshlab takes them from the verified cloud image). Needs gpgv on the host. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* What a signed list says one file must be. */
struct ml_apt_sum {
    char sha256[65]; /* lower-case hex */
    guint64 size;
};

/* What a downloaded file is supposed to be, for the form check. */
enum ml_apt_kind {
    ML_APT_INRELEASE, /* a clearsigned OpenPGP message */
    ML_APT_GZIP,      /* a Packages.gz */
    ML_APT_DEB,       /* an ar archive starting with debian-binary */
};

/* Checks that path (downloaded from url) starts like a file of that kind. Catches what a
 * captive portal, a login page or a proxy error page answered with status 200, and says so,
 * before any parsing; the hashes below are what actually protects. Errors: ML_ERR_FETCH. */
bool ml_apt_check_form(const char *path, enum ml_apt_kind kind, const char *url, GError **err);

/* Verifies the clearsigned InRelease at path with gpgv against keyring (a binary OpenPGP
 * keyring file, as /usr/share/keyrings/ships) and returns the signed text, which is the only
 * part of the file ever parsed. Accepted like apt does: at least one good signature with a
 * strong digest by a key in the keyring, and no bad one. url names the file in messages. */
char *ml_apt_inrelease_verify(const char *path, const char *keyring, const char *url, GError **err);

/* Tests only: gpgv's deadline in ml_apt_inrelease_verify (0 restores the default, a minute);
 * past it gpgv is stopped and the file is not trusted. */
void ml_apt_test_set_gpgv_timeout(double seconds);

/* In the signed text of a Release file: checks that its Suite or Codename is suite (another
 * suite's signed file must not stand in), then finds name (relative to dists/SUITE/, e.g.
 * "main/binary-amd64/Packages.gz") in its SHA256 field. */
bool ml_apt_release_lookup(const char *release, const char *suite, const char *name,
                           struct ml_apt_sum *ret, GError **err);

/* Reads the Packages index at path (gzip-compressed when it ends in .gz) and, for every key of
 * wanted (a pool path such as "pool/main/w/wireguard/wireguard-tools_1.0_amd64.deb") whose
 * stanza's Filename matches, sets the value to a new struct ml_apt_sum. A Filename listed
 * twice with different hashes is an error. */
bool ml_apt_packages_collect(const char *path, GHashTable *wanted, GError **err);

/* Checks that the file at path has the size and SHA-256 in sum; on a mismatch deletes it and
 * fails naming url, what listed the hash (listed_by), both hashes and what to do. */
bool ml_apt_check_file(const char *path, const struct ml_apt_sum *sum, const char *url,
                       const char *listed_by, GError **err);
