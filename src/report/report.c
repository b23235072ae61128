#include "report/report.h"

#include <math.h>
#include <string.h>

#include "core/util.h"
#include "report/render.h"
#include "results/tables.h"
#include "results/columns.h"

/* ---- what several parts share ---- */

static void not_measured(struct ml_render *c, struct json_object *path, enum ml_path_status st)
{
    g_string_append(c->s, st == ML_PATH_FAILED ? "failed: " : "not run: ");
    ml_notes_put(&c->notes, c->s, ml_j_str_or(path, "reason", "no reason recorded"));
}

static bool path_status(struct json_object *path, size_t i, enum ml_path_status *ret, GError **err)
{
    const char *name = ml_j_str(path, "name");
    const char *status = ml_j_str(path, "status");
    if (!name || !*name) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "Results path %zu has no name.", i + 1);
        return false;
    }
    if (g_strcmp0(status, "measured") == 0)
        *ret = ML_PATH_MEASURED;
    else if (g_strcmp0(status, "failed") == 0)
        *ret = ML_PATH_FAILED;
    else if (g_strcmp0(status, "not-run") == 0)
        *ret = ML_PATH_NOT_RUN;
    else {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "Results path '%s' has status '%s'; expected measured, failed or not-run.",
                    name, status ? status : "(none)");
        return false;
    }
    return true;
}

static void put_check_summary(GString *s, struct json_object *path)
{
    struct json_object *checks = ml_j_array(path, "checks");
    size_t n = ml_j_len(checks);
    if (n == 0) {
        g_string_append(s, "not checked");
        return;
    }
    bool any_failed = false;
    for (size_t i = 0; i < n; i++) {
        struct json_object *ch = json_object_array_get_idx(checks, i);
        if (ml_j_bool(ch, "ok"))
            continue;
        g_string_append(s, any_failed ? ", " : "failed (");
        ml_put_text(s, ml_j_str_or(ch, "when", "?"));
        any_failed = true;
    }
    g_string_append(s, any_failed ? ")" : "ok");
}

/* ---- the header and the paths ---- */

static void put_matrix(GString *s, struct json_object *profile)
{
    struct json_object *matrix = ml_j_array(profile, "matrix");
    for (size_t i = 0; i < ml_j_len(matrix); i++) {
        struct json_object *m = json_object_array_get_idx(matrix, i);
        g_string_append(s, i ? ", " : "");
        ml_put_text(s, ml_j_str_or(m, "cell", "?"));
        g_string_append(s, " ×");
        ml_put_num(s, m, "passes", 0);
    }
    if (!ml_j_len(matrix))
        g_string_append(s, ML_DASH);
}

/* The seed's own run (shared/seeds: the experiment meshlab repeats) had these versions. */
static const struct {
    const char *name, *shown, *version;
} seed_programs[] = {{"tailscale", "Tailscale", "1.104.4"}, {"headscale", "Headscale", "0.29.7"}};

/* The fetched programs that ran, their versions and how they were obtained, beside the seed's. */
static void put_programs(GString *s, struct json_object *env)
{
    struct json_object *progs = ml_j_obj(env, "programs");
    if (!progs || json_object_object_length(progs) == 0)
        return;
    g_string_append(s, "\n- Programs: ");
    bool first = true;
    g_autoptr(GString) seed = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(seed_programs); i++) {
        struct json_object *p = ml_j_obj(progs, seed_programs[i].name);
        if (!p)
            continue;
        g_string_append(s, first ? "" : "; ");
        first = false;
        g_string_append_printf(s, "%s ", seed_programs[i].shown);
        ml_put_text(s, ml_j_str_or(p, "version", ML_DASH));
        g_string_append(s, ", ");
        ml_put_text(s, ml_j_str_or(p, "obtained", ML_DASH));
        if (ml_j_str(p, "go")) {
            g_string_append(s, " with Go ");
            ml_put_text(s, ml_j_str(p, "go"));
        }
        g_string_append_printf(seed, "%s%s %s", seed->len ? " and " : "", seed_programs[i].shown,
                               seed_programs[i].version);
    }
    if (seed->len)
        g_string_append_printf(s, " (the seed's run had %s)", seed->str);
}

static void put_header(struct ml_render *c)
{
    GString *s = c->s;
    struct json_object *r = c->r;
    struct json_object *env = ml_j_obj(r, "environment");
    struct json_object *image = ml_j_obj(env, "image");
    struct json_object *profile = ml_j_obj(r, "profile");
    struct json_object *fixed = ml_j_obj(r, "fixed_rate");

    g_string_append(s, "# meshlab report: ");
    ml_put_text(s, ml_j_str_or(r, "lab", ML_DASH));
    g_string_append(s, "\n\n- Run: ");
    ml_put_text(s, ml_j_str_or(r, "run_id", ML_DASH));
    g_string_append(s, ", ");
    ml_put_text(s, ml_j_str_or(r, "started", ML_DASH));
    g_string_append(s, " to ");
    ml_put_text(s, ml_j_str_or(r, "finished", "(unfinished)"));
    g_string_append(s, ", meshlab ");
    ml_put_text(s, ml_j_str_or(r, "meshlab_version", ML_DASH));
    g_string_append(s, "\n- Topology: ");
    ml_put_text(s, ml_j_str_or(r, "topology", ML_DASH));
    g_string_append(s, "\n- Profile: ");
    ml_put_text(s, ml_j_str_or(profile, "name", ML_DASH));
    g_string_append(s, ", passes of ");
    ml_put_num(s, profile, "pass_s", 0);
    g_string_append(s, " s; cells (× passes): ");
    put_matrix(s, profile);
    g_string_append(s, "\n- Fixed rate: ");
    if (fixed) {
        double bps;
        if (ml_j_num(fixed, "bits_per_second", &bps))
            ml_put_significant(s, bps / 1e6, 3);
        else
            g_string_append(s, ML_DASH);
        g_string_append(s, " Mbit/s (");
        ml_put_num(s, fixed, "fraction", 2);
        g_string_append(s, " × the median of the slowest path, ");
        ml_put_text(s, ml_j_str_or(fixed, "slowest_path", ML_DASH));
        g_string_append(s, ")");
    } else {
        g_string_append(s, "none (no full-speed cell was measured)");
    }

    /* The image actually booted, and why it is not the one asked for: results from a fallback
     * image are easy to mistake for the requested one. */
    const char *used = ml_j_str_or(image, "name", ML_DASH);
    const char *requested = ml_j_str(image, "requested");
    g_string_append(s, "\n- Image: ");
    ml_put_text(s, used);
    if (requested && *requested && strcmp(requested, used) != 0) {
        g_string_append(s, ", used instead of the requested ");
        ml_put_text(s, requested);
        g_string_append(s, ": ");
        ml_notes_put(&c->notes, s, ml_j_str_or(image, "fallback_reason", "no reason recorded"));
    }

    const char *accel = ml_j_str(env, "accelerator");
    g_string_append(s, "\n- Accelerator: ");
    if (accel && *accel) {
        g_autofree char *up = g_ascii_strup(accel, -1);
        ml_put_text(s, up);
    } else {
        g_string_append(s, "unknown");
    }
    if (ml_j_str(env, "accelerator_reason")) {
        g_string_append(s, " (");
        ml_put_text(s, ml_j_str(env, "accelerator_reason"));
        g_string_append(s, ")");
    }
    put_programs(s, env);
    g_string_append(s, "\n\n");
    ml_section_answer(c);
    ml_section_busy_notice(c);
    if (g_strcmp0(accel, "tcg") == 0)
        g_string_append(s, "> **Warning:** the guests ran under TCG, QEMU's software emulation. "
                           "Absolute throughput and CPU\n"
                           "> seconds under TCG measure the emulation; compare paths of this run "
                           "with each other only.\n"
                           "> Even the hub bytes per payload byte move with CPU speed, through "
                           "ACK coalescing (see Physics).\n\n");
}

/* Each thing once: the description, then only what it does not already say. */
static void put_path_list(struct ml_render *c)
{
    GString *s = c->s;
    g_string_append(s, "## Paths\n\n");
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *p = json_object_array_get_idx(c->paths, i);
        const char *desc = ml_j_str(p, "description");
        const char *from = ml_j_str(p, "from");
        const char *to = ml_j_str(p, "to");
        const char *target = ml_j_str(p, "target");
        const char *role = ml_j_str(p, "hub_role");
        g_string_append(s, "- **");
        ml_put_text(s, ml_j_str(p, "name"));
        g_string_append(s, "**: ");
        ml_put_text(s, desc && *desc ? desc : "no description");
        if (from && to && !(desc && strstr(desc, from) && strstr(desc, to))) {
            g_string_append(s, "; ");
            ml_put_text(s, from);
            g_string_append(s, " to ");
            ml_put_text(s, to);
        }
        if (target && *target && strcmp(target, "0.0.0.0") != 0 &&
            !(desc && strstr(desc, target))) {
            g_string_append(s, "; target ");
            ml_put_text(s, target);
        }
        if (g_strcmp0(role, "carries") == 0)
            g_string_append(s, "; the hub carries its traffic");
        else if (g_strcmp0(role, "quiet") == 0)
            g_string_append(s, "; the hub should carry none of it");
        if (c->st[i] != ML_PATH_MEASURED) {
            g_string_append(s, "; ");
            not_measured(c, p, c->st[i]);
        }
        g_string_append(s, "\n");
    }
    g_string_append(s, "\n");
}

/* ---- the descriptor tables ---- */

/* One value of a metric: a number times its scale with its significant digits or decimals, or
 * text. */
static void put_value(GString *s, const struct ml_metric *m, struct json_object *v,
                      const char *missing)
{
    double x;
    if (json_object_is_type(v, json_type_string))
        ml_put_text(s, json_object_get_string(v));
    else if (json_object_is_type(v, json_type_boolean))
        g_string_append(s, json_object_get_boolean(v) ? "yes" : "no");
    else if (json_object_is_type(v, json_type_int) && !m->scale && !m->significant &&
             !m->decimals && json_object_get_int64(v) >= 0)
        ml_put_count(s, (uint64_t)json_object_get_int64(v));
    else if (ml_j_value_num(v, &x)) {
        x *= m->scale ? m->scale : 1;
        if (m->significant > 0)
            ml_put_significant(s, x, m->significant);
        else
            ml_put_fixed(s, x, m->decimals);
    } else
        g_string_append(s, missing);
}

/* Where a metric of a table reads in a row: "cells.*.x" reads the row's cell at x,
 * "passes.x" the row's pass; any other name reads the path. */
static const char *row_key(const struct ml_report_table *t, const char *name,
                           struct json_object **o, struct json_object *path,
                           struct json_object *row)
{
    *o = path;
    if (t->rows == ML_ROWS_CELL && g_str_has_prefix(name, "cells.*.")) {
        *o = row;
        return name + strlen("cells.*.");
    }
    if (t->rows == ML_ROWS_PASS && g_str_has_prefix(name, "passes.")) {
        *o = row;
        return name + strlen("passes.");
    }
    return name;
}

static bool shown_in(const struct ml_metric *m, const struct ml_report_table *t)
{
    for (size_t i = 0; i < G_N_ELEMENTS(m->shown_in) && m->shown_in[i]; i++)
        if (m->shown_in[i] == t)
            return true;
    return false;
}

static GPtrArray *columns_of(const struct ml_metric *metrics, size_t n,
                             const struct ml_report_table *t)
{
    GPtrArray *cols = g_ptr_array_new();
    for (size_t i = 0; i < n; i++)
        if (shown_in(&metrics[i], t))
            g_ptr_array_add(cols, (gpointer)&metrics[i]);
    return cols;
}

/* Whether column i starts a cell: the metrics next to it with the same header share it. */
static bool starts_cell(GPtrArray *cols, guint i)
{
    const struct ml_metric *m = g_ptr_array_index(cols, i);
    return i == 0 || g_strcmp0(((const struct ml_metric *)g_ptr_array_index(cols, i - 1))->header,
                               m->header) != 0;
}

/* The intro with each {key} replaced by that value of the results document. */
static void put_intro(GString *s, const char *intro, struct json_object *r)
{
    for (const char *p = intro; *p; p++) {
        const char *end = *p == '{' ? strchr(p, '}') : NULL;
        if (!end) {
            g_string_append_c(s, *p);
            continue;
        }
        g_autofree char *key = g_strndup(p + 1, (size_t)(end - p - 1));
        g_autoptr(GPtrArray) v = ml_j_values(r, key, NULL);
        const struct ml_metric plain = {.decimals = 0};
        put_value(s, &plain, v->len == 1 ? g_ptr_array_index(v, 0) : NULL, ML_DASH);
        p = end;
    }
    g_string_append(s, "\n\n");
}

/* A metric's values in a row: one, or a list where its key runs through an array. */
static void put_metric(GString *s, const struct ml_metric *m, struct json_object *o,
                       const char *key, bool *any)
{
    bool list = false;
    g_autoptr(GPtrArray) v = ml_j_values(o, key, &list);
    if (v->len == 0)
        g_string_append(s, ML_DASH);
    for (guint i = 0; i < v->len; i++) {
        *any = *any || g_ptr_array_index(v, i) != NULL;
        if (i)
            g_string_append(s, ", ");
        put_value(s, m, g_ptr_array_index(v, i), list ? "n/a" : ML_DASH);
    }
}

/* A value's 95 % interval beside it, " (low–high)" in the value's form; nothing where it has
 * none (fewer than 2 passes). */
static void put_interval(GString *s, const struct ml_metric *m, const struct ml_report_table *t,
                         struct json_object *path, struct json_object *row)
{
    struct json_object *o;
    const char *key = row_key(t, m->interval, &o, path, row);
    g_autoptr(GPtrArray) v = ml_j_values(o, key, NULL);
    struct json_object *ci = v->len == 1 ? g_ptr_array_index(v, 0) : NULL;
    struct json_object *low = ml_j_get(ci, "low");
    struct json_object *high = ml_j_get(ci, "high");
    double x;
    if (!ml_j_value_num(low, &x) || !ml_j_value_num(high, &x))
        return;
    /* Results of before the log scale hold a Student-t interval of the mean: marked, as the
     * tables' intros speak of the log scale. */
    bool older = !ml_j_str(ci, "scale");
    g_string_append(s, older ? " (t: " : " (");
    put_value(s, m, low, ML_DASH);
    g_string_append(s, "–");
    put_value(s, m, high, ML_DASH);
    g_string_append(s, ")");
}

/* A percentile that landed on a lost ping (m->at_least true) is no figure, and no bound of one
 * is printed as if it were: "undefined: 2.3 % lost", or for a cell whose pooled loss is under
 * the percentile's (one of its passes lost more), "undefined: a pass lost over 1 %". */
static void put_undefined(GString *s, const struct ml_metric *m, const struct ml_report_table *t,
                          struct json_object *path, struct json_object *row)
{
    struct json_object *o;
    const char *key = row_key(t, m->lost, &o, path, row);
    g_autoptr(GPtrArray) v = ml_j_values(o, key, NULL);
    double lost;
    g_string_append(s, "undefined: ");
    if (v->len == 1 && ml_j_value_num(g_ptr_array_index(v, 0), &lost) && lost >= m->lost_over) {
        ml_put_fixed(s, lost, 1);
        g_string_append(s, " % lost");
        return;
    }
    g_string_append(s, "a pass lost over ");
    ml_put_fixed(s, m->lost_over, 0);
    g_string_append(s, " %");
}

/* One row of a metric table: the path, the cell or pass it shows (NULL: the path's own
 * figures), its label, and whether its figures are hidden (a failed pass, no cell). A path that
 * was not measured writes its reason in place of its first figure. */
struct metric_row {
    struct ml_render *c;
    const struct ml_report_table *t;
    struct json_object *path;
    struct json_object *row;
    const char *label;
    const char *status; /* the Status column's text where it is not the pass's */
    enum ml_path_status st;
    bool hidden;
    bool reason_due;
};

/* The metrics next to each other with the same header: one column. */
struct metric_group {
    const struct ml_metric *const *m;
    guint n;
};

static void put_label(GString *s, struct json_object *p, const struct ml_column *col, void *ctx)
{
    const struct metric_row *at = ctx;
    ml_put_text(s, at->label);
}

static void put_check(GString *s, struct json_object *p, const struct ml_column *col, void *ctx)
{
    put_check_summary(s, p);
}

/* The Status column: why the path was not measured, "no passes", or the pass's status: ok, or
 * FAILED with its seconds and reason; a failed pass's figures are evidence in results.json,
 * never figures in a table. */
static void put_pass_status(GString *s, struct json_object *p, const struct ml_column *col,
                            void *ctx)
{
    struct metric_row *at = ctx;
    if (at->reason_due) {
        not_measured(at->c, p, at->st);
        at->reason_due = false;
        return;
    }
    if (at->status) {
        g_string_append(s, at->status);
        return;
    }
    double again = 0;
    if (!g_strcmp0(ml_j_str(at->row, "status"), "repeated")) {
        g_string_append(s, "repeated: passed on a busy host");
        if (ml_j_num(at->row, "run_again_as", &again))
            g_string_append_printf(s, ", run again as seq %.0f", again);
        return;
    }
    if (g_strcmp0(ml_j_str(at->row, "status"), "failed") != 0) {
        g_string_append(s, "ok");
        return;
    }
    g_string_append(s, "FAILED");
    struct json_object *secs = ml_j_array(at->row, "failed_seconds");
    for (size_t i = 0; i < ml_j_len(secs); i++) {
        g_string_append(s, i ? ", " : ", seconds ");
        g_string_append(s, json_object_get_string(json_object_array_get_idx(secs, i)));
    }
    /* a lost path is run again first (results before path_lost was recorded: only it) */
    if (ml_j_num(at->row, "run_again_as", &again))
        g_string_append_printf(s,
                               ml_j_bool(at->row, "path_lost") ||
                                       !ml_j_bool(ml_j_obj(at->row, "host"), "busy")
                                   ? "; it lost its path and was run again as seq %.0f"
                                   : "; its host was busy and it was run again as seq %.0f",
                               again);
    g_string_append(s, ": ");
    ml_notes_put(&at->c->notes, s, ml_j_str_or(at->row, "reason", "no reason recorded"));
}

/* A group's cell: its metrics' values joined by " / ", or a dash when none has one. */
static void put_group(GString *s, struct json_object *p, const struct ml_column *col, void *ctx)
{
    struct metric_row *at = ctx;
    const struct metric_group *g = col->arg;
    if (at->reason_due) {
        not_measured(at->c, p, at->st);
        at->reason_due = false;
        return;
    }
    if (at->st != ML_PATH_MEASURED) {
        g_string_append(s, ML_DASH);
        return;
    }
    g_autoptr(GString) cell = g_string_new(NULL);
    bool any = false;
    for (guint k = 0; !at->hidden && k < g->n; k++) {
        const struct ml_metric *m = g->m[k];
        struct json_object *o;
        const char *key = row_key(at->t, m->name, &o, p, at->row);
        if (k)
            g_string_append(cell, " / ");
        if (m->at_least) {
            struct json_object *ao;
            const char *ak = row_key(at->t, m->at_least, &ao, p, at->row);
            g_autoptr(GPtrArray) b = ml_j_values(ao, ak, NULL);
            bool bound = b->len == 1 && json_object_get_boolean(g_ptr_array_index(b, 0));
            if (bound && m->lost) {
                put_undefined(cell, m, at->t, p, at->row);
                any = true;
                continue;
            }
            if (bound)
                g_string_append(cell, "≥ ");
        }
        put_metric(cell, m, o, key, &any);
        if (m->interval)
            put_interval(cell, m, at->t, p, at->row);
    }
    g_string_append(s, any ? cell->str : ML_DASH);
}

/* The columns of table t: the row's label, the path's check and target where t has them, a
 * pass's status, then one column per group of metrics; groups[] holds what each reads. */
static GArray *table_columns(const struct ml_report_table *t, GPtrArray *metrics, GArray *groups)
{
    GArray *cols = g_array_new(FALSE, TRUE, sizeof(struct ml_column));
    struct ml_column label = {.header = t->rows == ML_ROWS_CELL   ? "Path, cell"
                                        : t->rows == ML_ROWS_PASS ? "Path, cell, pass"
                                                                  : "Path",
                              .put = put_label};
    g_array_append_val(cols, label);
    if (t->check_column) {
        struct ml_column check = {.header = "Path check", .put = put_check};
        g_array_append_val(cols, check);
    }
    if (t->target_column) {
        struct ml_column target = ML_COL_TEXT("Target", "target", ML_DASH);
        g_array_append_val(cols, target);
    }
    if (t->rows == ML_ROWS_PASS) {
        struct ml_column status = {.header = "Status", .put = put_pass_status};
        g_array_append_val(cols, status);
    }
    for (guint i = 0; i < metrics->len;) {
        guint end = i + 1;
        while (end < metrics->len && !starts_cell(metrics, end))
            end++;
        struct metric_group g = {(const struct ml_metric *const *)&metrics->pdata[i], end - i};
        g_array_append_val(groups, g);
        i = end;
    }
    /* groups no longer grows, so its elements stay where the columns point */
    for (guint i = 0; i < groups->len; i++) {
        const struct metric_group *g = &g_array_index(groups, struct metric_group, i);
        struct ml_column each = {.header = g->m[0]->header ? g->m[0]->header : g->m[0]->name,
                                 .right = true,
                                 .put = put_group,
                                 .arg = g};
        g_array_append_val(cols, each);
    }
    return cols;
}

static void put_row(GArray *cols, struct metric_row *at)
{
    at->reason_due = at->st != ML_PATH_MEASURED;
    ml_columns_row(at->c->s, (const struct ml_column *)(void *)cols->data, cols->len, at->path, at);
}

static void put_rows(struct ml_render *c, const struct ml_report_table *t, GArray *cols,
                     struct json_object *p, enum ml_path_status st)
{
    struct metric_row at = {.c = c, .t = t, .path = p, .label = ml_j_str(p, "name"), .st = st};
    if (t->only_with && st != ML_PATH_MEASURED)
        return; /* a table of some cells only: a path without them is not a row */
    if (st != ML_PATH_MEASURED || t->rows == ML_ROWS_PATH) {
        put_row(cols, &at);
    } else if (t->rows == ML_ROWS_CELL) {
        struct json_object *cells = ml_j_obj(p, "cells");
        if (!cells || json_object_object_length(cells) == 0) {
            at.hidden = true; /* measured, yet no cell: dashes, not a lost row */
            put_row(cols, &at);
            return;
        }
        json_object_object_foreach(cells, cell_name, cell)
        {
            if (t->only_with && !ml_j_get(cell, t->only_with))
                continue;
            g_autofree char *label = g_strdup_printf("%s %s", at.label, cell_name);
            struct metric_row each = {.c = c, .t = t, .path = p, .row = cell, .label = label};
            put_row(cols, &each);
        }
    } else {
        struct json_object *passes = ml_j_array(p, "passes");
        if (ml_j_len(passes) == 0) {
            at.status = "no passes";
            at.hidden = true;
            put_row(cols, &at);
        }
        for (size_t i = 0; i < ml_j_len(passes); i++) {
            struct json_object *pass = json_object_array_get_idx(passes, i);
            g_autofree char *label = g_strdup_printf(
                "%s %s #%s", at.label, ml_j_str_or(pass, "cell", "?"),
                ml_j_get(pass, "index") ? json_object_get_string(ml_j_get(pass, "index")) : "?");
            struct metric_row each = {.c = c,
                                      .t = t,
                                      .path = p,
                                      .row = pass,
                                      .label = label,
                                      .hidden = g_strcmp0(ml_j_str(pass, "status"), "failed") == 0};
            put_row(cols, &each);
        }
    }
}

static gint by_place(gconstpointer a, gconstpointer b)
{
    const struct ml_report_table *x = *(const struct ml_report_table *const *)a;
    const struct ml_report_table *y = *(const struct ml_report_table *const *)b;
    return x->place < y->place ? -1 : x->place > y->place;
}

/* Whether a measured path of the run has a cell with a value at key. */
static bool any_cell_with(struct ml_render *c, const char *key)
{
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *cells = ml_j_obj(json_object_array_get_idx(c->paths, i), "cells");
        if (c->st[i] != ML_PATH_MEASURED || !cells)
            continue;
        json_object_object_foreach(cells, name, cell)
        {
            (void)name;
            if (ml_j_get(cell, key))
                return true;
        }
    }
    return false;
}

static void put_metric_tables(struct ml_render *c, const struct ml_metric *metrics, size_t n)
{
    g_autoptr(GPtrArray) tables = g_ptr_array_new();
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < G_N_ELEMENTS(metrics[i].shown_in) && metrics[i].shown_in[j]; j++)
            if (!g_ptr_array_find(tables, metrics[i].shown_in[j], NULL))
                g_ptr_array_add(tables, (gpointer)metrics[i].shown_in[j]);
    g_ptr_array_sort(tables, by_place); /* stable: equal places keep the metrics' order */
    for (guint k = 0; k < tables->len; k++) {
        const struct ml_report_table *t = g_ptr_array_index(tables, k);
        if (t->only_with && !any_cell_with(c, t->only_with))
            continue;
        g_autoptr(GPtrArray) shown = columns_of(metrics, n, t);
        g_autoptr(GArray) groups =
            g_array_sized_new(FALSE, TRUE, sizeof(struct metric_group), shown->len);
        g_autoptr(GArray) cols = table_columns(t, shown, groups);
        g_string_append(c->s, "## ");
        ml_put_text(c->s, t->title);
        g_string_append(c->s, "\n\n");
        if (t->intro)
            put_intro(c->s, t->intro, c->r);
        ml_columns_head(c->s, (const struct ml_column *)(void *)cols->data, cols->len);
        for (size_t i = 0; i < ml_j_len(c->paths); i++)
            put_rows(c, t, cols, json_object_array_get_idx(c->paths, i), c->st[i]);
        g_string_append(c->s, "\n");
        if (t == &ml_table_latency)
            ml_section_pooled_rtt(c);
    }
}

/* ---- pictures, checks, setup, environment ---- */

static void put_pictures(struct ml_render *c)
{
    if (!c->plots || c->plots->n == 0)
        return;
    g_string_append(c->s, "## Pictures\n\n");
    for (size_t i = 0; i < c->plots->n; i++) {
        const struct ml_plot *p = &c->plots->plot[i];
        if (p->nat_dataplane || p->sweep)
            continue; /* in the NAT matrix or the sweep section, beside its table */
        ml_put_picture(c->s, p);
    }
}

void ml_put_picture(GString *s, const struct ml_plot *p)
{
    if (p->svg) {
        g_string_append_printf(s, "![%s](plots/%s.svg)\n\n", p->title, p->name);
        return;
    }
    g_string_append_printf(s, "*%s: not drawn (", p->title);
    ml_put_text(s, p->missing ? p->missing : "no reason recorded");
    g_string_append(s, ").*\n\n");
}

static void put_checks(struct ml_render *c)
{
    GString *s = c->s;
    g_string_append(s, "## Path checks\n\n");
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *p = json_object_array_get_idx(c->paths, i);
        struct json_object *checks = ml_j_array(p, "checks");
        size_t n = ml_j_len(checks);
        if (n == 0) {
            g_string_append(s, "- ");
            ml_put_text(s, ml_j_str(p, "name"));
            g_string_append(s, ": not checked\n");
        }
        for (size_t j = 0; j < n; j++) {
            struct json_object *ch = json_object_array_get_idx(checks, j);
            g_string_append(s, "- ");
            ml_put_text(s, ml_j_str(p, "name"));
            g_string_append(s, ", ");
            ml_put_text(s, ml_j_str_or(ch, "when", "?"));
            g_string_append(s, ml_j_bool(ch, "ok") ? ": ok: " : ": **failed**: ");
            ml_put_text(s, ml_j_str_or(ch, "evidence", "no evidence recorded"));
            g_string_append(s, "\n");
        }
    }
    g_string_append(s, "\n");
}

static const struct ml_column phase_columns[] = {
    ML_COL_TEXT("Phase", "name", "?"),
    ML_COL_FIXED("Seconds (s)", "seconds", 1),
};

static const struct ml_column guest_columns[] = {
    ML_COL_TEXT("Guest", "name", "?"),    ML_COL_TEXT("Address", "address", ML_DASH),
    ML_COL_FIXED("vCPUs", "vcpus", 0),    ML_COL_FIXED("Memory MiB", "memory_mib", 0),
    ML_COL_FIXED("Agent s", "boot_s", 1), ML_COL_FIXED("Ready s", "ready_s", 1),
};

static void put_setup(struct ml_render *c)
{
    GString *s = c->s;
    struct json_object *phases = ml_j_array(c->r, "phases");
    struct json_object *guests = ml_j_array(c->r, "guests");

    g_string_append(s, "## Setup times\n\n");
    ml_columns_head(s, phase_columns, G_N_ELEMENTS(phase_columns));
    double total = 0;
    bool total_known = true;
    for (size_t i = 0; i < ml_j_len(phases); i++) {
        struct json_object *ph = json_object_array_get_idx(phases, i);
        double v;
        if (ml_j_num(ph, "seconds", &v))
            total += v;
        else
            total_known = false;
        ml_columns_row(s, phase_columns, G_N_ELEMENTS(phase_columns), ph, NULL);
    }
    struct json_object *sum = json_object_new_object();
    json_object_object_add(sum, "name", json_object_new_string("total"));
    if (total_known)
        json_object_object_add(sum, "seconds", json_object_new_double(total));
    ml_columns_row(s, phase_columns, G_N_ELEMENTS(phase_columns), sum, NULL);
    json_object_put(sum);
    g_string_append(s, "\n");

    g_string_append(s, "Agent is from starting the guest to its guest agent answering; ready is to "
                       "cloud-init having finished.\n\n");
    ml_columns_head(s, guest_columns, G_N_ELEMENTS(guest_columns));
    for (size_t i = 0; i < ml_j_len(guests); i++)
        ml_columns_row(s, guest_columns, G_N_ELEMENTS(guest_columns),
                       json_object_array_get_idx(guests, i), NULL);
    g_string_append(s, "\n");

    bool any = false;
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *p = json_object_array_get_idx(c->paths, i);
        if (!ml_j_get(p, "setup_s") || c->st[i] != ML_PATH_MEASURED)
            continue; /* no tunnel to set up, or the path list says why it was not measured */
        if (!any)
            g_string_append(s, "Tunnel setup, from the first key generated to the first ping "
                               "through the tunnel answered:\n\n");
        any = true;
        g_string_append(s, "- ");
        ml_put_text(s, ml_j_str(p, "name"));
        g_string_append(s, ": ");
        ml_put_num(s, p, "setup_s", 1);
        g_string_append(s, " s\n");
    }
    if (any)
        g_string_append(s, "\n");
}

/* A row of the environment table: what it is and its value; no value reads as a dash. */
struct env_row {
    const char *label;
    const char *value;
};

static void put_env_label(GString *s, struct json_object *o, const struct ml_column *col, void *ctx)
{
    ml_put_text(s, ((const struct env_row *)ctx)->label);
}

static void put_env_value(GString *s, struct json_object *o, const struct ml_column *col, void *ctx)
{
    const char *v = ((const struct env_row *)ctx)->value;
    ml_put_text(s, v && *v ? v : ML_DASH);
}

static const struct ml_column env_columns[] = {
    {.header = "", .put = put_env_label},
    {.header = "", .put = put_env_value},
};

static void put_env_row(GString *s, const char *label, const char *value)
{
    struct env_row row = {label, value};
    ml_columns_row(s, env_columns, G_N_ELEMENTS(env_columns), NULL, &row);
}

static void put_environment(struct ml_render *c)
{
    GString *s = c->s;
    struct json_object *env = ml_j_obj(c->r, "environment");
    struct json_object *image = ml_j_obj(env, "image");
    struct json_object *tools = ml_j_obj(env, "tools");

    g_string_append(s, "## Environment\n\n");
    ml_columns_head(s, env_columns, G_N_ELEMENTS(env_columns));
    put_env_row(s, "Host kernel", ml_j_str(env, "host_kernel"));
    put_env_row(s, "Host CPU", ml_j_str(env, "host_cpu_model"));
    g_autofree char *cpus = ml_j_get(env, "host_cpus")
                                ? g_strdup(json_object_get_string(ml_j_get(env, "host_cpus")))
                                : NULL;
    put_env_row(s, "Host CPUs", cpus);
    put_env_row(s, "libvirt", ml_j_str(env, "libvirt"));
    put_env_row(s, "QEMU", ml_j_str(env, "qemu"));
    g_autofree char *accel = g_ascii_strup(ml_j_str_or(env, "accelerator", ML_DASH), -1);
    put_env_row(s, "Accelerator", accel);
    put_env_row(s, "Image", ml_j_str(image, "name"));
    put_env_row(s, "Image sha256", ml_j_str(image, "sha256"));
    put_env_row(s, "Guest OS", ml_j_str(env, "guest_os"));
    put_env_row(s, "Guest kernel", ml_j_str(env, "guest_kernel"));
    struct json_object *gcpu = ml_j_obj(env, "guest_cpu");
    if (gcpu) {
        const char *flags = ml_j_str(gcpu, "flags");
        g_autofree char *v = g_strdup_printf("%s (%s)", ml_j_str_or(gcpu, "model", ML_DASH),
                                             !flags   ? "flags not read"
                                             : *flags ? flags
                                                      : "none of them");
        put_env_row(s, "Guest CPU (cipher instructions)", v);
    }
    if (tools) {
        json_object_object_foreach(tools, tool, version)
        {
            g_autofree char *label = g_strdup_printf("%s (guest)", tool);
            put_env_row(s, label,
                        json_object_is_type(version, json_type_string)
                            ? json_object_get_string(version)
                            : NULL);
        }
    }
    struct json_object *ctl = ml_j_obj(c->r, "controller");
    if (ctl) {
        g_autoptr(GString) v = g_string_new(NULL);
        ml_put_num(v, ctl, "cpu_s", 1);
        g_string_append(v, " s CPU, ");
        ml_put_num(v, ctl, "max_rss_kib", 0);
        g_string_append(v, " KiB max RSS, ");
        ml_put_num(v, ctl, "cpu_percent_of_core", 2);
        g_string_append(v, " % of a core");
        put_env_row(s, "meshlab itself", v->str);
    }
    g_string_append(s, "\n");
}

/* ---- the document ---- */

/* The statuses of results' paths, for a document rendered from it: NULL with err on another
 * schema or a path without name or status. */
static enum ml_path_status *render_statuses(struct json_object *results, GError **err)
{
    if (!json_object_is_type(results, json_type_object)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "The results document is not a JSON object.");
        return NULL;
    }
    const char *schema = ml_j_str(results, "schema");
    if (g_strcmp0(schema, ML_RESULTS_SCHEMA) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "The results document's schema is '%s'; this meshlab reads '%s'.",
                    schema ? schema : "(none)", ML_RESULTS_SCHEMA);
        return NULL;
    }
    struct json_object *paths = ml_j_array(results, "paths");
    if (!paths) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "The results document has no paths array.");
        return NULL;
    }
    size_t n = json_object_array_length(paths);
    enum ml_path_status *st = g_new0(enum ml_path_status, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        if (!path_status(json_object_array_get_idx(paths, i), i, &st[i], err)) {
            g_free(st);
            return NULL;
        }
    return st;
}

char *ml_report_render_markdown_with(struct json_object *results, const struct ml_metric *metrics,
                                     size_t n_metrics, const struct ml_plots *plots, GError **err)
{
    g_autofree enum ml_path_status *st = render_statuses(results, err);
    if (!st)
        return NULL;
    struct json_object *paths = ml_j_array(results, "paths");
    struct ml_render c = {
        .s = g_string_new(NULL), .r = results, .paths = paths, .st = st, .plots = plots};
    ml_notes_init(&c.notes);
    put_header(&c);
    put_path_list(&c);
    put_metric_tables(&c, metrics, n_metrics);
    put_pictures(&c);
    ml_section_wan(&c);
    ml_section_wan_sweep(&c);
    ml_section_underlay(&c);
    ml_section_nat_observed(&c);
    ml_section_nat_matrix(&c);
    ml_section_nat_captures(&c);
    ml_section_cpu(&c);
    ml_section_physics(&c);
    ml_section_seed(&c);
    ml_section_variance(&c);
    ml_section_vps(&c);
    put_checks(&c);
    put_setup(&c);
    put_environment(&c);
    ml_notes_write(&c.notes, c.s);
    ml_notes_clear(&c.notes);
    return g_string_free(c.s, false);
}

char *ml_report_render_sizing(struct json_object *results, GError **err)
{
    g_autofree enum ml_path_status *st = render_statuses(results, err);
    if (!st)
        return NULL;
    struct json_object *paths = ml_j_array(results, "paths");
    struct ml_render c = {.s = g_string_new(NULL), .r = results, .paths = paths, .st = st};
    ml_notes_init(&c.notes);
    g_string_append(c.s, "# Sizing the hub VPS: ");
    ml_put_text(c.s, ml_j_str_or(results, "lab", ML_DASH));
    g_string_append(c.s, ", run ");
    ml_put_text(c.s, ml_j_str_or(results, "run_id", ML_DASH));
    g_string_append(c.s, "\n\nFrom the run's results.json alone, as its report.md says it; every "
                         "figure names the field it comes from.\n\n");
    ml_section_answer(&c);
    ml_section_wan(&c);
    ml_section_vps(&c);
    ml_notes_write(&c.notes, c.s);
    ml_notes_clear(&c.notes);
    /* The sections are written for report.md, one level below its title. */
    return g_string_free(c.s, false);
}

char *ml_report_render_markdown(struct json_object *results, const struct ml_metric *metrics,
                                size_t n_metrics, GError **err)
{
    return ml_report_render_markdown_with(results, metrics, n_metrics, NULL, err);
}
