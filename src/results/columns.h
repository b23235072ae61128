/* One writer of tables (every table of report.md, the NAT report, `meshlab compare`, the lines
 * of `meshlab status`), after iproute2's json_print.h: a table is an array of column
 * descriptions, each saying its header, where its value lies in a row object and how it is
 * written, and one function writes the header and another each row, as Markdown or as aligned
 * text. So every table's cells are separated, escaped and aligned the same way. A column with
 * `get` also builds the row object: one description gives both the JSON and its text. Where
 * the columns depend on the data (report.md's metric tables, the NAT grid), the caller builds
 * the array at run time. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

struct ml_column;

/* Writes one cell of row; ctx is what the table's caller passed to ml_columns_row. */
typedef void (*ml_cell_fn)(GString *s, struct json_object *row, const struct ml_column *col,
                           void *ctx);

enum ml_cell_form {
    ML_CELL_TEXT,  /* the string at key, escaped; absent (or empty, with `absent`) as `absent` */
    ML_CELL_FIXED, /* the number at key with `decimals` decimals, or a dash */
    ML_CELL_SIGNIFICANT, /* the number at key with `decimals` significant digits, or a dash */
    ML_CELL_PAIR,        /* "3 / 0": the numbers at key and key2 with `decimals`, each or a dash */
};

struct ml_column {
    const char *header;
    const char *key;  /* where the value lies in the row object */
    const char *key2; /* ML_CELL_PAIR: the second value */
    enum ml_cell_form form;
    int decimals;
    const char *absent; /* ML_CELL_TEXT: written when the value is absent or empty */
    bool right;         /* right-aligned ("---:"), as numbers are */
    ml_cell_fn put;     /* when set, writes the cell instead of form */
    const void *arg;    /* what put reads besides the row: a group of metrics, a NAT type */
    /* Text lines (ml_columns_line) only: */
    const char *label; /* written before the value, and a space */
    int width;         /* the value padded to this many characters */
    bool optional;     /* an absent value (JSON null) writes no cell, nor its label */
    /* Where the row object is built from a source (ml_columns_object): the member at key. */
    struct json_object *(*get)(const void *src);
};

/* The usual columns: a text, absent as `absent` (NULL: nothing); a number with decimals or
 * significant digits, right-aligned, absent as a dash. */
#define ML_COL_TEXT(h, k, a)                                                                       \
    {                                                                                              \
        .header = (h), .key = (k), .absent = (a)                                                   \
    }
#define ML_COL_FIXED(h, k, d)                                                                      \
    {                                                                                              \
        .header = (h), .key = (k), .form = ML_CELL_FIXED, .decimals = (d), .right = true           \
    }
#define ML_COL_SIG(h, k, d)                                                                        \
    {                                                                                              \
        .header = (h), .key = (k), .form = ML_CELL_SIGNIFICANT, .decimals = (d), .right = true     \
    }

#define ML_COL_PAIR(h, k, k2, d)                                                                   \
    {                                                                                              \
        .header = (h), .key = (k), .key2 = (k2), .form = ML_CELL_PAIR, .decimals = (d),            \
        .right = true                                                                              \
    }
/* A number column that fn writes (a unit conversion, a mark). */
#define ML_COL_NUM_BY(h, k, fn)                                                                    \
    {                                                                                              \
        .header = (h), .key = (k), .right = true, .put = (fn)                                      \
    }

/* "| A | B |\n|---|---:|\n"; an empty header is "| |". */
void ml_columns_head(GString *s, const struct ml_column *cols, size_t n);
/* "| a | b |\n": each column's cell of row. */
void ml_columns_row(GString *s, const struct ml_column *cols, size_t n, struct json_object *row,
                    void *ctx);

/* One line of text: each column's cell (its label first), padded to its width, separated by
 * sep; optional cells whose value is absent are left out. No Markdown escaping: the caller
 * escapes control characters where the text goes to a terminal. */
void ml_columns_line(GString *s, const struct ml_column *cols, size_t n, const char *sep,
                     struct json_object *row, void *ctx);
/* Sets each column's key of o to what its get made of src (columns without get or key add
 * nothing; a NULL from get is a JSON null). */
void ml_columns_add(struct json_object *o, const struct ml_column *cols, size_t n, const void *src);
/* A new object made by ml_columns_add. */
struct json_object *ml_columns_object(const struct ml_column *cols, size_t n, const void *src);
