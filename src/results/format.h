/* Reading a results document and writing its values as text: the helpers every renderer of
 * report/ shares (Markdown, HTML, the comparison), and measure/'s NAT grid with them. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "results/json.h"

#define ML_DASH "—"

/* The headline cell's name (the profile's first), or NULL. */
const char *ml_results_headline_cell(struct json_object *r);
/* The path's first cell with rate "fixed", or NULL. */
struct json_object *ml_results_fixed_cell(struct json_object *path, const char **ret_name);

/* What ml_put_text escapes with a backslash: a table's '|', and what could make Markdown link
 * syntax ("[x](y)", "<http://x>", raw HTML) of text that came from results.json. */
#define ML_TEXT_ESCAPED "\\|[]<"

/* One line of table or list text: ML_TEXT_ESCAPED escaped, line breaks as spaces. */
void ml_put_text(GString *s, const char *text);
/* An integer count with thousands separators: 1,080,164,352. */
void ml_put_count(GString *s, uint64_t n);
/* Fixed decimals (0-3) with a '.', whatever the locale, grouped by thousands. */
void ml_put_fixed(GString *s, double v, int decimals);
/* digits significant digits: 2.26, 0.0123, 6.4e-05 (never 0.00 for a small non-zero value),
 * 1,234 (no digit after the point is dropped before it). */
void ml_put_significant(GString *s, double v, int digits);
/* A number at key with decimals, or a dash. */
void ml_put_num(GString *s, struct json_object *o, const char *key, int decimals);
/* A number at key with significant digits, or a dash. */
void ml_put_sig(GString *s, struct json_object *o, const char *key, int digits);

/* Footnotes: a long text (a reason a not-run path shares with others) is written once, at the
 * end, and referenced by a marker wherever it applies. */
struct ml_notes {
    GPtrArray *texts; /* char *, owned */
};
void ml_notes_init(struct ml_notes *n);
void ml_notes_clear(struct ml_notes *n);
/* Appends text itself when it is short, else the marker of its footnote ("[^2]"), registering
 * it the first time. */
void ml_notes_put(struct ml_notes *n, GString *s, const char *text);
/* "## Notes" with every footnote, or nothing when there is none. */
void ml_notes_write(const struct ml_notes *n, GString *s);
