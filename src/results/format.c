#include "results/format.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* Texts up to this long are written where they apply; longer ones become footnotes. */
#define ML_NOTE_INLINE_MAX 60

const char *ml_results_headline_cell(struct json_object *r)
{
    struct json_object *matrix = ml_j_array(ml_j_obj(r, "profile"), "matrix");
    return ml_j_len(matrix) ? ml_j_str(json_object_array_get_idx(matrix, 0), "cell") : NULL;
}

struct json_object *ml_results_fixed_cell(struct json_object *path, const char **ret_name)
{
    struct json_object *cells = ml_j_obj(path, "cells");
    if (!cells)
        return NULL;
    json_object_object_foreach(cells, name, cell)
    {
        if (g_strcmp0(ml_j_str(cell, "rate"), "fixed") == 0) {
            if (ret_name)
                *ret_name = name;
            return cell;
        }
    }
    return NULL;
}

void ml_put_text(GString *s, const char *text)
{
    for (const char *p = text ? text : ""; *p; p++) {
        if (strchr(ML_TEXT_ESCAPED, *p)) {
            g_string_append_c(s, '\\');
            g_string_append_c(s, *p);
        } else if (*p == '\n' || *p == '\r' || *p == '\t')
            g_string_append_c(s, ' ');
        else
            g_string_append_c(s, *p);
    }
}

/* Appends digits, grouped by thousands: "1080164352.5" -> "1,080,164,352.5". */
static void put_grouped(GString *s, const char *digits)
{
    if (*digits == '-')
        g_string_append_c(s, *digits++);
    size_t whole = strspn(digits, "0123456789");
    for (size_t i = 0; i < whole; i++) {
        if (i > 0 && (whole - i) % 3 == 0)
            g_string_append_c(s, ',');
        g_string_append_c(s, digits[i]);
    }
    g_string_append(s, digits + whole);
}

void ml_put_count(GString *s, uint64_t n)
{
    char digits[24];
    g_snprintf(digits, sizeof digits, "%" PRIu64, n);
    put_grouped(s, digits);
}

void ml_put_fixed(GString *s, double v, int decimals)
{
    static const char *const formats[] = {"%.0f", "%.1f", "%.2f", "%.3f"};
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    decimals = CLAMP(decimals, 0, 3);
    if (v == 0)
        v = 0; /* no "-0.0" */
    put_grouped(s, g_ascii_formatd(buf, sizeof buf, formats[decimals], v));
}

void ml_put_significant(GString *s, double v, int digits)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    char fmt[8];
    digits = CLAMP(digits, 1, 9);
    if (v == 0) {
        g_string_append_c(s, '0');
        return;
    }
    int e = (int)floor(log10(fabs(v)));
    /* rounding may carry into the next power of ten: 9.996 to 3 digits is 10.0 */
    double rounded = round(v / pow(10, e - digits + 1)) * pow(10, e - digits + 1);
    if (rounded != 0)
        e = (int)floor(log10(fabs(rounded)));
    if (e < -3) {
        g_snprintf(fmt, sizeof fmt, "%%.%de", digits - 1);
        g_ascii_formatd(buf, sizeof buf, fmt, v);
        /* 6.40e-05 -> 6.4e-05: the zeros say nothing the exponent form needs */
        char *e_at = strchr(buf, 'e');
        char *end = e_at;
        while (end > buf && end[-1] == '0')
            end--;
        if (end > buf && end[-1] == '.')
            end--;
        memmove(end, e_at, strlen(e_at) + 1);
        g_string_append(s, buf);
        return;
    }
    int decimals = MAX(0, digits - 1 - e);
    g_snprintf(fmt, sizeof fmt, "%%.%df", MIN(decimals, 9));
    put_grouped(s, g_ascii_formatd(buf, sizeof buf, fmt, v));
}

/* The number at key as put writes it with n, or a dash. */
static void put_at(GString *s, struct json_object *o, const char *key, int n,
                   void (*put)(GString *, double, int))
{
    double v;
    if (ml_j_num(o, key, &v))
        put(s, v, n);
    else
        g_string_append(s, ML_DASH);
}

void ml_put_num(GString *s, struct json_object *o, const char *key, int decimals)
{
    put_at(s, o, key, decimals, ml_put_fixed);
}

void ml_put_sig(GString *s, struct json_object *o, const char *key, int digits)
{
    put_at(s, o, key, digits, ml_put_significant);
}

void ml_notes_init(struct ml_notes *n)
{
    n->texts = g_ptr_array_new_with_free_func(g_free);
}

void ml_notes_clear(struct ml_notes *n)
{
    g_clear_pointer(&n->texts, g_ptr_array_unref);
}

void ml_notes_put(struct ml_notes *n, GString *s, const char *text)
{
    if (!text)
        text = "";
    if (g_utf8_strlen(text, -1) <= ML_NOTE_INLINE_MAX) {
        ml_put_text(s, text);
        return;
    }
    guint i;
    if (!g_ptr_array_find_with_equal_func(n->texts, text, g_str_equal, &i)) {
        g_ptr_array_add(n->texts, g_strdup(text));
        i = n->texts->len - 1;
    }
    g_string_append_printf(s, "[^%u]", i + 1);
}

void ml_notes_write(const struct ml_notes *n, GString *s)
{
    if (n->texts->len == 0)
        return;
    g_string_append(s, "## Notes\n\n");
    for (guint i = 0; i < n->texts->len; i++) {
        g_string_append_printf(s, "[^%u]: ", i + 1);
        ml_put_text(s, g_ptr_array_index(n->texts, i));
        g_string_append(s, "\n");
    }
    g_string_append(s, "\n");
}
