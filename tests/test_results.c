/* results/: the one JSON reader (json.h) and the one table writer (columns.h): Markdown rows,
 * text lines and the JSON object a description builds. */
#include <json-c/json.h>
#include <math.h>

#include "check.h"
#include "results/columns.h"
#include "results/format.h"
#include "results/json.h"

static const char *doc_text =
    "{\"s\": \"text\", \"n\": 2.5, \"i\": 7, \"b\": true, \"z\": null, \"bs\": \"true\","
    " \"passes\": [{\"x\": 1}, {\"x\": 2}], \"one\": [{\"x\": 3}],"
    " \"cpu\": {\"hub\": {\"user_s\": 1}, \"a\": {\"user_s\": 2}},"
    " \"t\": {\"rx\": {\"bytes\": 40}}, \"empty\": \"\"}";

/* Absent and mistyped values read as absent: a string is not a number, nor a bool. */
static void test_reader(void)
{
    struct json_object *d = json_tokener_parse(doc_text);
    double v = -1;
    CHECK_STR(ml_j_str(d, "s"), "text");
    CHECK(ml_j_str(d, "n") == NULL && ml_j_str(d, "absent") == NULL && ml_j_str(NULL, "s") == NULL);
    CHECK_STR(ml_j_str_or(d, "empty", "fallback"), "fallback");
    CHECK(ml_j_num(d, "n", &v) && v == 2.5);
    CHECK(!ml_j_num(d, "s", &v) && v == 2.5); /* untouched on failure */
    CHECK(ml_j_bool(d, "b") && !ml_j_bool(d, "bs") && !ml_j_bool(d, "absent"));
    CHECK(ml_j_int(d, "i") == 7 && ml_j_int(d, "n") == 2 && ml_j_int(d, "absent") == 0);
    CHECK(ml_j_get(d, "z") == NULL && ml_j_obj(d, "s") == NULL && ml_j_array(d, "cpu") == NULL);
    /* a member that is a JSON null is there, though it reads as absent */
    CHECK(ml_j_has(d, "z") && ml_j_has(d, "s") && !ml_j_has(d, "absent") && !ml_j_has(NULL, "s"));
    CHECK(!ml_j_has(ml_j_get(d, "passes"), "x"));
    CHECK(ml_j_len(ml_j_array(d, "passes")) == 2 && ml_j_len(ml_j_obj(d, "cpu")) == 0);
    /* dotted keys: one value, one per element, one per member with "*" */
    CHECK(ml_j_num_at(d, "t.rx.bytes", &v) && v == 40);
    CHECK(!ml_j_num_at(d, "passes.x", &v)); /* two values are not one number */
    CHECK(ml_j_num_at(d, "one.x", &v) && v == 3);
    CHECK(ml_j_num_at(d, "passes.1.x", &v) && v == 2);
    bool list = false;
    g_autoptr(GPtrArray) each = ml_j_values(d, "cpu.*.user_s", &list);
    CHECK(list && each->len == 2);
    g_autoptr(GPtrArray) missing = ml_j_values(d, "t.tx.bytes", &list);
    CHECK(!list && missing->len == 1 && g_ptr_array_index(missing, 0) == NULL);
    json_object_put(d);
}

static void put_twice(GString *s, struct json_object *row, const struct ml_column *col, void *ctx)
{
    g_string_append_printf(s, "%s%s", (const char *)ctx, ml_j_str_or(row, col->key, "none"));
}

/* The header, the alignment rule and each form of cell, escaped and with dashes for absent. */
static void test_columns(void)
{
    static const struct ml_column cols[] = {
        ML_COL_TEXT("Name", "name", "?"),       ML_COL_TEXT("Note|s", "note", NULL),
        ML_COL_FIXED("Mbit/s", "rate", 1),      ML_COL_SIG("Factor", "factor", 3),
        ML_COL_NUM_BY("By", "name", put_twice), ML_COL_PAIR("A / B", "rate", "absent", 0),
    };
    g_autoptr(GString) s = g_string_new(NULL);
    ml_columns_head(s, cols, G_N_ELEMENTS(cols));
    CHECK_STR(
        s->str,
        "| Name | Note\\|s | Mbit/s | Factor | By | A / B |\n|---|---|---:|---:|---:|---:|\n");
    g_string_truncate(s, 0);
    struct json_object *row =
        json_tokener_parse("{\"name\": \"a|b\", \"note\": \"two\\nlines\", \"rate\": 1234.56,"
                           " \"factor\": 0.000064}");
    ml_columns_row(s, cols, G_N_ELEMENTS(cols), row, "x:");
    CHECK_STR(s->str, "| a\\|b | two lines | 1,234.6 | 6.4e-05 | x:a|b | 1,235 / — |\n");
    json_object_put(row);
    g_string_truncate(s, 0);
    struct json_object *empty = json_object_new_object();
    ml_columns_row(s, cols, G_N_ELEMENTS(cols), empty, "");
    CHECK_STR(s->str, "| ? |  | — | — | none | — / — |\n");
    json_object_put(empty);
    /* a table of labelled rows has empty headers: "| |", as GitHub renders a headless table */
    static const struct ml_column headless[] = {ML_COL_TEXT("", "k", NULL),
                                                ML_COL_TEXT("", "v", NULL)};
    g_string_truncate(s, 0);
    ml_columns_head(s, headless, G_N_ELEMENTS(headless));
    CHECK_STR(s->str, "| | |\n|---|---|\n");
}

static struct json_object *get_name(const void *src)
{
    return json_object_new_string(src);
}

static struct json_object *get_nothing(const void *src)
{
    return NULL;
}

static void put_on(GString *s, struct json_object *row, const struct ml_column *col, void *ctx)
{
    g_string_append(s, ml_j_bool(row, col->key) ? "on" : "off");
}

/* One description builds the object (get) and writes it as a text line: labels, widths,
 * optional cells left out when absent, no Markdown escaping. */
static void test_columns_line(void)
{
    static const struct ml_column cols[] = {
        {.label = "name", .key = "name", .width = 6, .get = get_name},
        {.label = "run", .key = "run", .optional = true, .get = get_nothing},
        {.key = "up", .put = put_on},
        {.key = "no_get"},
    };
    struct json_object *o = ml_columns_object(cols, G_N_ELEMENTS(cols), "a|é");
    CHECK_STR(ml_j_str(o, "name"), "a|é");
    /* get made a JSON null: the member is there; a column without get adds nothing */
    CHECK(json_object_object_get_ex(o, "run", NULL) && ml_j_get(o, "run") == NULL);
    CHECK(!json_object_object_get_ex(o, "up", NULL) &&
          !json_object_object_get_ex(o, "no_get", NULL));
    g_autoptr(GString) s = g_string_new(NULL);
    ml_columns_line(s, cols, G_N_ELEMENTS(cols), "  ", o, NULL);
    CHECK_STR(s->str, "name a|é     off  \n"); /* padded by characters, not bytes */
    json_object_object_add(o, "run", json_object_new_string("r1"));
    json_object_object_add(o, "up", json_object_new_boolean(true));
    g_string_truncate(s, 0);
    ml_columns_line(s, cols, G_N_ELEMENTS(cols), " ", o, NULL);
    CHECK_STR(s->str, "name a|é    run r1 on \n");
    json_object_put(o);
}

int main(void)
{
    test_reader();
    test_columns();
    test_columns_line();
    return check_finish();
}
