/* Downloads over HTTP(S) with resume, progress and SHA-256 verification. */
#pragma once

#include <glib.h>
#include <stdbool.h>

/* What a download is, when that can be checked before it is trusted. */
enum ml_fetch_form {
    ML_FETCH_ANY = 0,
    /* A checksum list (SHA256SUMS, checksums.txt, FILE.sha256): every line a SHA-256, alone or
     * followed by a name. An answer served as text/html, or one that does not read so, is
     * refused and deleted before it is recorded in known_hashes. */
    ML_FETCH_SUMS,
};

/* Used when a request leaves max_bytes or deadline_s at 0. */
#define ML_FETCH_DEFAULT_MAX_BYTES ((guint64)256 << 20)
#define ML_FETCH_DEFAULT_DEADLINE_S 1800.0

struct ml_fetch_request {
    const char *url;
    const char *dest;            /* final path; data goes to dest + ".part" first */
    const char *expected_sha256; /* pinned hash, or NULL */
    const char *sums_url;        /* optional SHA256SUMS beside it ("HASH *name" or "HASH  name");
                                    file:// works, so a copy already in the cache can serve */
    const char *sums_name;       /* the file name to look up in it */
    const char *known_hashes;    /* optional: path of a record "sha256  url" per line; the first
                                    verified download records its hash, a later download of the
                                    same URL with another hash is refused; it lives in
                                    dest's directory, which one meshlab at a time fetches into */
    enum ml_fetch_form form;
    const char *what;  /* what the file is, for messages ("the Ubuntu cloud image"), or NULL */
    guint64 max_bytes; /* the file is never larger: a transfer that passes it is stopped and
                          deleted (0: ML_FETCH_DEFAULT_MAX_BYTES) */
    double deadline_s; /* one transfer never takes longer; what arrived is kept to resume from
                          (0: ML_FETCH_DEFAULT_DEADLINE_S) */
};

/* Downloads req->url to req->dest and verifies it. When dest already exists it is not
 * downloaded again (sums_url still is read) but verified the same way, so files copied in by
 * hand are trusted no more than downloaded ones. A failed transfer keeps dest.part, and the next
 * call resumes it; a file that does not verify, or grows past max_bytes, is deleted. A redirect
 * never leaves https for http (ml_fetch_redirect_protocols). While another meshlab fetches into
 * the same directory, it waits. Errors: ML_ERR_FETCH, or ML_ERR_INTERRUPTED. */
bool ml_fetch(const struct ml_fetch_request *req, GError **err);

/* The schemes a redirect from url may lead to, as libcurl's CURLOPT_REDIR_PROTOCOLS_STR takes
 * them: "https" from an https URL (a downgrade would leave the trust-on-first-use checksum lists
 * on plain HTTP), "http,https" from an http one, NULL (no redirect at all) from anything else. */
const char *ml_fetch_redirect_protocols(const char *url);

/* Whether the start of a file reads like an HTML page: what a captive portal, a login page or a
 * proxy answers, with status 200, in place of the file asked for. */
bool ml_fetch_looks_like_html(const char *head, size_t len);

/* Lower-case hex SHA-256 of a file's contents. */
char *ml_fetch_sha256_file(const char *path, GError **err);

/* Tests only: trust the CA certificates in pem_path (a test server's self-signed certificate)
 * instead of the system's; NULL restores the default. meshlab itself never calls it. */
void ml_fetch_test_trust_ca(const char *pem_path);
