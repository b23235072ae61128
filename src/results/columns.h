/* One writer of Markdown tables (report.md, the NAT report, `meshlab compare`), after
 * iproute2's json_print.h: a table is an array of column descriptions, each saying its header
 * and how a row object's value is written, and one function writes the header and another
 * each row. So every table's cells are separated, escaped and aligned the same way. */
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

/* "| A | B |\n|---|---:|\n" */
void ml_columns_head(GString *s, const struct ml_column *cols, size_t n);
/* "| a | b |\n": each column's cell of row. */
void ml_columns_row(GString *s, const struct ml_column *cols, size_t n, struct json_object *row,
                    void *ctx);
