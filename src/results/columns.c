#include "results/columns.h"

#include "results/format.h"

void ml_columns_head(GString *s, const struct ml_column *cols, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        g_string_append(s, i ? " | " : "| ");
        ml_put_text(s, cols[i].header);
    }
    g_string_append(s, " |\n|");
    for (size_t i = 0; i < n; i++)
        g_string_append(s, cols[i].right ? "---:|" : "---|");
    g_string_append_c(s, '\n');
}

static void put_cell(GString *s, struct json_object *row, const struct ml_column *col, void *ctx)
{
    if (col->put) {
        col->put(s, row, col, ctx);
        return;
    }
    switch (col->form) {
    case ML_CELL_TEXT:
        ml_put_text(s, col->absent ? ml_j_str_or(row, col->key, col->absent)
                                   : ml_j_str(row, col->key));
        break;
    case ML_CELL_FIXED:
        ml_put_num(s, row, col->key, col->decimals);
        break;
    case ML_CELL_SIGNIFICANT:
        ml_put_sig(s, row, col->key, col->decimals);
        break;
    case ML_CELL_PAIR:
        ml_put_num(s, row, col->key, col->decimals);
        g_string_append(s, " / ");
        ml_put_num(s, row, col->key2, col->decimals);
        break;
    }
}

void ml_columns_row(GString *s, const struct ml_column *cols, size_t n, struct json_object *row,
                    void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        g_string_append(s, i ? " | " : "| ");
        put_cell(s, row, &cols[i], ctx);
    }
    g_string_append(s, " |\n");
}
