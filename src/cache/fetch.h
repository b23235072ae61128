/* Downloads over HTTP(S) with resume, progress and SHA-256 verification. */
#pragma once

#include <glib.h>
#include <stdbool.h>

struct ml_fetch_request {
    const char *url;
    const char *dest;            /* final path; data goes to dest + ".part" first */
    const char *expected_sha256; /* pinned hash, or NULL */
    const char *sums_url;        /* optional SHA256SUMS beside it ("HASH *name" or "HASH  name");
                                    file:// works, so a copy already in the cache can serve */
    const char *sums_name;       /* the file name to look up in it */
    const char *known_hashes;    /* optional: path of a record "sha256  url" per line; the first
                                    verified download records its hash, a later download of the
                                    same URL with another hash is refused */
};

/* Downloads req->url to req->dest and verifies it. When dest already exists it is not
 * downloaded again (sums_url still is read) but verified the same way, so files copied in by
 * hand are trusted no more than downloaded ones. A failed transfer keeps dest.part, and the next call resumes it;
 * a file that does not verify is deleted. Errors: ML_ERR_FETCH, or ML_ERR_INTERRUPTED. */
bool ml_fetch(const struct ml_fetch_request *req, GError **err);

/* Whether the start of a file reads like an HTML page: what a captive portal, a login page or a
 * proxy's error page answers, with status 200, in place of the file asked for. */
bool ml_fetch_looks_like_html(const char *head, size_t len);

/* Lower-case hex SHA-256 of a file's contents. */
char *ml_fetch_sha256_file(const char *path, GError **err);
