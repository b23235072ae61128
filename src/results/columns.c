#include "results/columns.h"

#include "results/format.h"

void ml_columns_head(GString *s, const struct ml_column *cols, size_t n)
{
    g_string_append_c(s, '|');
    for (size_t i = 0; i < n; i++) {
        g_string_append_c(s, ' ');
        if (cols[i].header && *cols[i].header) {
            ml_put_text(s, cols[i].header);
            g_string_append_c(s, ' ');
        }
        g_string_append_c(s, '|');
    }
    g_string_append(s, "\n|");
    for (size_t i = 0; i < n; i++)
        g_string_append(s, cols[i].right ? "---:|" : "---|");
    g_string_append_c(s, '\n');
}

static void put_cell(GString *s, struct json_object *row, const struct ml_column *col, void *ctx,
                     bool markdown)
{
    if (col->put) {
        col->put(s, row, col, ctx);
        return;
    }
    switch (col->form) {
    case ML_CELL_TEXT: {
        const char *v =
            col->absent ? ml_j_str_or(row, col->key, col->absent) : ml_j_str(row, col->key);
        if (markdown)
            ml_put_text(s, v);
        else
            g_string_append(s, v ? v : "");
        break;
    }
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
        put_cell(s, row, &cols[i], ctx, true);
    }
    g_string_append(s, " |\n");
}

void ml_columns_line(GString *s, const struct ml_column *cols, size_t n, const char *sep,
                     struct json_object *row, void *ctx)
{
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (cols[i].optional && cols[i].key && !ml_j_get(row, cols[i].key))
            continue;
        if (!first)
            g_string_append(s, sep);
        first = false;
        if (cols[i].label) {
            g_string_append(s, cols[i].label);
            g_string_append_c(s, ' ');
        }
        gsize start = s->len;
        put_cell(s, row, &cols[i], ctx, false);
        for (long pad = cols[i].width - (long)g_utf8_strlen(s->str + start, -1); pad > 0; pad--)
            g_string_append_c(s, ' ');
    }
    g_string_append_c(s, '\n');
}

void ml_columns_add(struct json_object *o, const struct ml_column *cols, size_t n, const void *src)
{
    for (size_t i = 0; i < n; i++)
        if (cols[i].get && cols[i].key)
            json_object_object_add(o, cols[i].key, cols[i].get(src));
}

struct json_object *ml_columns_object(const struct ml_column *cols, size_t n, const void *src)
{
    struct json_object *o = json_object_new_object();
    ml_columns_add(o, cols, n, src);
    return o;
}
