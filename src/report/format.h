/* Reading a results document and writing its values as text: the helpers every renderer of
 * report/ shares (Markdown, HTML, the comparison). Absent or mistyped values read as absent. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#define ML_DASH "—"

struct json_object *ml_j_get(struct json_object *o, const char *key);
struct json_object *ml_j_obj(struct json_object *o, const char *key);
struct json_object *ml_j_array(struct json_object *o, const char *key);
const char *ml_j_str(struct json_object *o, const char *key);
/* The string at key, or fallback when it is absent or empty. */
const char *ml_j_str_or(struct json_object *o, const char *key, const char *fallback);
bool ml_j_num(struct json_object *o, const char *key, double *ret);
bool ml_j_value_num(struct json_object *v, double *ret);
bool ml_j_bool(struct json_object *o, const char *key);
size_t ml_j_len(struct json_object *array);

/* One line of table or list text: '|' escaped, line breaks as spaces. */
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
