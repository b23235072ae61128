/* SHA-256 hex strings and the checksum lists that publish them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum { ML_SHA256_HEX_LEN = 64 };

/* True when s begins with exactly 64 hex digits (either case) and no 65th. */
bool ml_sha256_hex_prefix(const char *s);

/* True when s is a SHA-256 in hex: 64 hex digits and nothing else. */
bool ml_sha256_hex_valid(const char *s);

/* The hash a checksum list gives for name: lines "HASH  NAME" as sha256sum writes them
 * ("HASH *NAME" in binary mode), white space around a line ignored, other lines skipped.
 * With name NULL, the first hash in the list, which may stand alone on its line (a
 * FILE.sha256 holding the bare hash). Returns the hash in lower case, or NULL. */
char *ml_sha256_list_lookup(const char *text, const char *name);

/* Whether text (len bytes) reads as a checksum list: at least one line, and every line that is
 * not blank a SHA-256 alone or followed by white space, an optional '*' and a name. Sets
 * *ret_bad_line (may be NULL) to the 1-based number of the first line that is not, or 0. */
bool ml_sha256_list_valid(const char *text, size_t len, int *ret_bad_line);
