/* The NAT sections of report.md: the NAT behaviour observed, the NAT matrix of each dataplane
 * (a grid table, its picture, each cell's explanation) and the captures, all from results.json's
 * nat_observed and nat_matrix (docs/results.md). Absent keys: no section. */
#include <string.h>

#include "dataplanes/dataplane.h"
#include "results/natgrid.h"
#include "report/render.h"
#include "report/runfiles.h"
#include "results/columns.h"

static void put_bool_word(GString *s, struct json_object *o, const struct ml_column *col, void *ctx)
{
    struct json_object *v = ml_j_get(o, col->key);
    if (json_object_is_type(v, json_type_boolean))
        g_string_append(s, json_object_get_boolean(v) ? "yes" : "no");
    else
        g_string_append(s, ML_DASH);
}

static void put_expected(GString *s, struct json_object *e)
{
    ml_put_text(s, ml_j_str_or(e, "mapping", ML_DASH));
    g_string_append(s, " mapping, ");
    ml_put_text(s, ml_j_str_or(e, "filtering", ML_DASH));
    g_string_append(s, " filtering, port ");
    struct json_object *v = ml_j_get(e, "port_preserved");
    if (json_object_is_type(v, json_type_boolean))
        g_string_append(s, json_object_get_boolean(v) ? "preserved" : "not preserved");
    else
        g_string_append(s, ML_DASH);
}

/* A row of the observed table is one NAT type's object; its member name and the render
 * (for footnotes) are the row's ctx. */
struct observed_row {
    struct ml_render *c;
    const char *type;
};

static void put_type(GString *s, struct json_object *o, const struct ml_column *col, void *ctx)
{
    const struct observed_row *at = ctx;
    ml_put_text(s, ml_j_str_or(o, "type", at->type));
}

/* "yes", or "**NO**, expected ...", and what the probe saw. */
static void put_as_configured(GString *s, struct json_object *o, const struct ml_column *col,
                              void *ctx)
{
    const struct observed_row *at = ctx;
    if (ml_j_bool(o, "as_configured")) {
        g_string_append(s, "yes");
    } else {
        g_string_append(s, "**NO**, expected ");
        put_expected(s, ml_j_obj(o, "expected"));
    }
    if (ml_j_str(o, "seen")) {
        g_string_append(s, "; seen: ");
        ml_notes_put(&at->c->notes, s, ml_j_str(o, "seen"));
    }
}

static const struct ml_column observed_columns[] = {
    {.header = "NAT type", .put = put_type},
    ML_COL_TEXT("Node", "node", ML_DASH),
    ML_COL_TEXT("Mapping", "mapping", ML_DASH),
    ML_COL_TEXT("Filtering", "filtering", ML_DASH),
    {.header = "Port preserved", .key = "port_preserved", .put = put_bool_word},
    {.header = "As configured", .put = put_as_configured},
};

void ml_section_nat_observed(struct ml_render *c)
{
    struct json_object *obs = ml_j_obj(c->r, "nat_observed");
    if (!obs || json_object_object_length(obs) == 0)
        return;
    GString *s = c->s;
    g_string_append(s, "## NAT behaviour observed\n\n");
    g_string_append(
        s, "Before the dataplanes ran, meshlab probed each client's NAT from the hub (RFC 4787 "
           "words): UDP from the\ninside to two hub ports and two hub addresses shows whether "
           "the public port depends on the\ndestination (the mapping) and whether the inside "
           "port is kept; sends from a new hub port and a new\nhub address show which "
           "unsolicited packets get in (the filtering). A NAT that does not behave as\n"
           "configured fails the run.\n\n");
    ml_columns_head(s, observed_columns, G_N_ELEMENTS(observed_columns));
    json_object_object_foreach(obs, type, o)
    {
        struct observed_row at = {c, type};
        ml_columns_row(s, observed_columns, G_N_ELEMENTS(observed_columns), o, &at);
    }
    g_string_append(s, "\n");
}

/* A not-run cell's reason without its own "not run: ", which the report writes before it. */
static const char *not_run_reason(struct json_object *cell)
{
    const char *r = ml_j_str_or(cell, "reason", "no reason recorded");
    return g_str_has_prefix(r, "not run: ") && r[9] ? r + 9 : r;
}

static unsigned count_of(struct json_object *cell, const char *key)
{
    double v;
    return ml_j_num(ml_j_obj(cell, "outcomes"), key, &v) && v > 0 ? (unsigned)v : 0;
}

/* "direct 2.5 s, 2/2", "relay, 1/2", "failed, 2/2", "not run: REASON" */
static void put_grid_cell(struct ml_render *c, struct json_object *cell)
{
    GString *s = c->s;
    const char *outcome = ml_j_str_or(cell, "outcome", "not-run");
    unsigned d = count_of(cell, "direct"), r = count_of(cell, "relay"),
             f = count_of(cell, "failed");
    if (strcmp(outcome, "not-run") == 0) {
        g_string_append(s, "not run: ");
        ml_notes_put(&c->notes, s, not_run_reason(cell));
        return;
    }
    ml_put_text(s, outcome);
    double secs;
    if (strcmp(outcome, "direct") == 0 && ml_j_num(cell, "seconds_to_direct", &secs)) {
        g_string_append_c(s, ' ');
        ml_put_fixed(s, secs, 1);
        g_string_append(s, " s");
    }
    if (d + r + f) {
        unsigned n = strcmp(outcome, "direct") == 0 ? d : strcmp(outcome, "relay") == 0 ? r : f;
        g_string_append_printf(s, ", %u/%u", n, d + r + f);
    }
}

/* "relay, direct 2.5 s": each repeat's outcome in the order they ran. */
static void put_repeats(GString *s, struct json_object *cell)
{
    struct json_object *repeats = ml_j_array(cell, "repeats");
    for (size_t i = 0; i < ml_j_len(repeats); i++) {
        struct json_object *rep = json_object_array_get_idx(repeats, i);
        const char *o = ml_j_str_or(rep, "outcome", "?");
        g_string_append(s, i ? ", " : "");
        ml_put_text(s, strcmp(o, "not-run") == 0 ? "not run" : o);
        double secs;
        if (strcmp(o, "direct") == 0 && ml_j_num(rep, "seconds_to_direct", &secs)) {
            g_string_append_c(s, ' ');
            ml_put_fixed(s, secs, 1);
            g_string_append(s, " s");
        }
    }
}

static void put_explanation(struct ml_render *c, struct json_object *cell)
{
    GString *s = c->s;
    const char *outcome = ml_j_str_or(cell, "outcome", "not-run");
    g_string_append(s, "- **");
    ml_put_text(s, ml_j_str_or(cell, "a_nat", "?"));
    g_string_append(s, " × ");
    ml_put_text(s, ml_j_str_or(cell, "b_nat", "?"));
    g_string_append(s, "**: ");
    if (strcmp(outcome, "not-run") == 0) {
        g_string_append(s, "not run: ");
        ml_notes_put(&c->notes, s, not_run_reason(cell));
        g_string_append(s, "\n");
        return;
    }
    const char *stored = ml_j_str(cell, "explanation");
    g_autofree char *made =
        stored && *stored
            ? NULL
            : ml_nat_explain_cell(cell, ml_dataplane_nat(ml_j_str(cell, "dataplane")));
    ml_put_text(s, made ? made : stored);
    g_string_append(s, " (expected ");
    ml_put_text(s, ml_j_str_or(cell, "expected", ML_DASH));
    if (ml_j_len(ml_j_array(cell, "repeats"))) {
        g_string_append(s, "; repeats: ");
        put_repeats(s, cell);
    }
    if (ml_j_get(cell, "hub_bytes")) {
        g_string_append(s, "; hub bytes, median: ");
        double b;
        if (ml_j_num(cell, "hub_bytes", &b) && b >= 0)
            ml_put_count(s, (uint64_t)b);
        else
            g_string_append(s, ML_DASH);
    }
    g_string_append(s, ")\n");
}

/* A row of the grid: the first client's NAT type a (the index-th of types). */
struct grid_row {
    struct ml_render *c;
    struct json_object *matrix;
    const char *dp;
    GPtrArray *types;
    guint index;
};

static void put_grid_label(GString *s, struct json_object *o, const struct ml_column *col,
                           void *ctx)
{
    const struct grid_row *at = ctx;
    ml_put_text(s, g_ptr_array_index(at->types, at->index));
}

/* The cell of the row's type and the column's (col->arg); an unordered pair: once, above the
 * diagonal, so below it the cell is empty. */
static void put_grid_pair(GString *s, struct json_object *o, const struct ml_column *col, void *ctx)
{
    const struct grid_row *at = ctx;
    guint j = 0;
    g_ptr_array_find(at->types, col->arg, &j);
    if (j < at->index)
        return;
    struct json_object *cell =
        ml_nat_cell(at->matrix, at->dp, g_ptr_array_index(at->types, at->index), col->arg);
    if (cell)
        put_grid_cell(at->c, cell);
    else
        g_string_append(s, ML_DASH);
}

static void put_grid(struct ml_render *c, struct json_object *matrix, const char *dp)
{
    GString *s = c->s;
    g_autoptr(GPtrArray) types = ml_nat_types_of(matrix, dp);
    const char *a_node = "client-a", *b_node = "client-b";
    for (size_t i = 0; i < ml_j_len(matrix); i++) {
        struct json_object *cell = json_object_array_get_idx(matrix, i);
        if (g_strcmp0(ml_j_str(cell, "dataplane"), dp) == 0) {
            a_node = ml_j_str_or(cell, "a_node", a_node);
            b_node = ml_j_str_or(cell, "b_node", b_node);
            break;
        }
    }
    g_autofree char *corner = g_strdup_printf("%s's NAT ↓, %s's NAT →", a_node, b_node);
    g_autoptr(GArray) cols = g_array_new(FALSE, TRUE, sizeof(struct ml_column));
    struct ml_column label = {.header = corner, .put = put_grid_label};
    g_array_append_val(cols, label);
    for (guint j = 0; j < types->len; j++) {
        struct ml_column each = {.header = g_ptr_array_index(types, j),
                                 .put = put_grid_pair,
                                 .arg = g_ptr_array_index(types, j)};
        g_array_append_val(cols, each);
    }
    const struct ml_column *col = (const struct ml_column *)(void *)cols->data;
    ml_columns_head(s, col, cols->len);
    for (guint i = 0; i < types->len; i++) {
        struct grid_row at = {c, matrix, dp, types, i};
        ml_columns_row(s, col, cols->len, NULL, &at);
    }
    g_string_append_c(s, '\n');
}

void ml_section_nat_matrix(struct ml_render *c)
{
    struct json_object *matrix = ml_j_array(c->r, "nat_matrix");
    if (!ml_j_len(matrix))
        return;
    GString *s = c->s;
    g_string_append(s, "## NAT matrix\n\n");
    g_string_append(
        s, "Every unordered pair of NAT types on each dataplane, left alone to find its own path "
           "(no forcing\npolicy); each pair ran several times, conntrack flushed and the daemons "
           "restarted between repeats.\nA cell shows the most frequent outcome over its repeats "
           "(direct beats relay on a tie), the median\nseconds from the first packet to the "
           "first direct packet over the repeats that went direct, and how\nmany repeats gave "
           "that outcome (2/3). Rows are the first client's NAT, columns the second's.\n\n");
    g_autoptr(GPtrArray) dataplanes = ml_nat_dataplanes_of(matrix);
    for (guint k = 0; k < dataplanes->len; k++) {
        const char *dp = g_ptr_array_index(dataplanes, k);
        g_string_append(s, "### ");
        ml_put_text(s, dp);
        g_string_append(s, "\n\n");
        put_grid(c, matrix, dp);
        const struct ml_plot *p = ml_plots_nat_of(c->plots, dp);
        if (p)
            ml_put_picture(s, p);
        for (size_t i = 0; i < ml_j_len(matrix); i++) {
            struct json_object *cell = json_object_array_get_idx(matrix, i);
            if (g_strcmp0(ml_j_str(cell, "dataplane"), dp) == 0)
                put_explanation(c, cell);
        }
        g_string_append_c(s, '\n');
    }
}

static bool any_capture(struct json_object *matrix)
{
    for (size_t i = 0; i < ml_j_len(matrix); i++) {
        struct json_object *reps = ml_j_array(json_object_array_get_idx(matrix, i), "repeats");
        for (size_t j = 0; j < ml_j_len(reps); j++)
            if (ml_j_len(ml_j_array(json_object_array_get_idx(reps, j), "captures")))
                return true;
    }
    return false;
}

/* A link into the run directory, [FILE NAME](PATH), for a path that can only name a file of
 * it (ml_runfile_name_ok); any other path is text. */
static void put_link(GString *s, const char *path)
{
    if (!ml_runfile_name_ok(path)) {
        ml_put_text(s, path);
        return;
    }
    const char *base = strrchr(path, '/');
    g_string_append_printf(s, "[%s](%s)", base ? base + 1 : path, path);
}

void ml_section_nat_captures(struct ml_render *c)
{
    struct json_object *matrix = ml_j_array(c->r, "nat_matrix");
    if (!any_capture(matrix))
        return;
    GString *s = c->s;
    g_string_append(s, "## Captures\n\n");
    g_string_append(s, "The packets of each repeat of a cell, taken on the host from the hub's and "
                       "the clients' taps (passively:\nthe bridge has no host address). Open them "
                       "with Wireshark or `tcpdump -nr FILE`; the display filter\nthat shows the "
                       "hole punch:\n\n");
    g_autoptr(GPtrArray) dataplanes = ml_nat_dataplanes_of(matrix);
    for (guint k = 0; k < dataplanes->len; k++) {
        const char *dp = g_ptr_array_index(dataplanes, k);
        const struct ml_nat_traits *traits = ml_dataplane_nat(dp);
        const char *filter = traits ? traits->capture_filter : NULL;
        if (!filter)
            continue;
        g_string_append(s, "- ");
        ml_put_text(s, dp);
        g_string_append_printf(s, ": `%s`%s%s%s\n", filter, traits->capture_what ? " (" : "",
                               traits->capture_what ? traits->capture_what : "",
                               traits->capture_what ? ")" : "");
    }
    const char *run_filter = ml_j_str(c->r, "captures_filter");
    if (run_filter && *run_filter && !strchr(run_filter, '`') && !strchr(run_filter, '\n'))
        g_string_append_printf(s, "- this run's (results.json `captures_filter`): `%s`\n",
                               run_filter);
    g_string_append_c(s, '\n');
    for (size_t i = 0; i < ml_j_len(matrix); i++) {
        struct json_object *cell = json_object_array_get_idx(matrix, i);
        struct json_object *reps = ml_j_array(cell, "repeats");
        for (size_t j = 0; j < ml_j_len(reps); j++) {
            struct json_object *rep = json_object_array_get_idx(reps, j);
            struct json_object *caps = ml_j_array(rep, "captures");
            if (!ml_j_len(caps))
                continue;
            g_string_append(s, "- ");
            ml_put_text(s, ml_j_str_or(cell, "dataplane", "?"));
            g_string_append(s, ", ");
            ml_put_text(s, ml_j_str_or(cell, "a_nat", "?"));
            g_string_append(s, " × ");
            ml_put_text(s, ml_j_str_or(cell, "b_nat", "?"));
            g_string_append_printf(s, ", repeat %zu (", j + 1);
            const char *o = ml_j_str_or(rep, "outcome", "?");
            ml_put_text(s, strcmp(o, "not-run") == 0 ? "not run" : o);
            g_string_append(s, "): ");
            for (size_t k = 0; k < ml_j_len(caps); k++) {
                struct json_object *cap = json_object_array_get_idx(caps, k);
                if (!json_object_is_type(cap, json_type_string))
                    continue;
                g_string_append(s, k ? ", " : "");
                put_link(s, json_object_get_string(cap));
            }
            if (ml_j_str(rep, "view")) {
                g_string_append(s, "; the dataplane's view: ");
                ml_put_text(s, ml_j_str(rep, "view"));
            }
            g_string_append_c(s, '\n');
        }
    }
    g_string_append_c(s, '\n');
}
