/* What one guest prints may end up in another guest's root shell or configuration. Only values
 * that pass one of these strict checks ever do: an address, a key of a known shape, a PEM block
 * of a known kind. Everything else from a guest is refused, never escaped and passed on. */
#pragma once

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>

/* s, surrounding whitespace stripped, is one IPv4 address in the canonical dotted quad that
 * inet_pton reads and inet_ntop writes back unchanged. *ret (may be NULL) receives it. */
bool ml_guest_ipv4(const char *s, struct in_addr *ret);

/* text, surrounding whitespace stripped, is exactly one PEM block "-----BEGIN banner-----" ...
 * "-----END banner-----" whose body is base64 lines only and decodes to body_len bytes
 * (0: any non-zero length). Nothing before, after or between. */
bool ml_guest_pem(const char *text, const char *banner, gsize body_len);

/* An OpenSSH ed25519 public key line as ssh-keygen writes it: "ssh-ed25519 BASE64" and an
 * optional comment of [A-Za-z0-9@._-]; the blob is the key type and 32 bytes of key. */
bool ml_guest_ssh_ed25519(const char *s);
