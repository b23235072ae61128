#include "report/compare.h"

#include <math.h>
#include <string.h>

#include "core/util.h"
#include "dataplanes/dataplane.h"
#include "results/columns.h"
#include "results/format.h"
#include "results/natgrid.h"
#include "report/report.h"

const char *ml_compare_verdict(const double *a, size_t na, const double *b, size_t nb,
                               struct ml_welch *ret)
{
    *ret = (struct ml_welch){.t = NAN, .df = NAN, .se = NAN, .p = NAN, .noise = NAN};
    if (!ml_welch(a, na, b, nb, ret))
        return "unknown";
    return ret->p < ML_COMPARE_ALPHA ? "differs" : "within noise";
}

/* What one figure is and where its passes' values are. */
enum figure { FIG_CELL_THROUGHPUT, FIG_HUB_FACTOR, FIG_LOADED_P99, FIG_HUB_CPU };

static const struct {
    const char *figure; /* the key in a path (or cell) of results.json */
    const char *unit;
} figures[] = {
    [FIG_CELL_THROUGHPUT] = {"median_bits_per_second", "bit/s"},
    [FIG_HUB_FACTOR] = {"hub_bytes_per_payload_byte", "byte/byte"},
    [FIG_LOADED_P99] = {"rtt_loaded_p99_ms", "ms"},
    [FIG_HUB_CPU] = {"hub_cpu_s_per_gb", "s/GB"},
};

static const char *headline(struct json_object *r)
{
    struct json_object *m = ml_j_array(ml_j_obj(r, "profile"), "matrix");
    return ml_j_len(m) ? ml_j_str(json_object_array_get_idx(m, 0), "cell") : NULL;
}

static void warn(struct json_object *w, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void warn(struct json_object *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *s = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    json_object_array_add(w, json_object_new_string(s));
}

/* One value per pass that passed, of the figure in the cell; *ret_censored counts the values that
 * are lower bounds (a loaded p99 whose pass lost pings beyond its largest reply). */
static GArray *pass_values(struct json_object *path, const char *cell, enum figure f,
                           size_t *ret_censored)
{
    GArray *out = g_array_new(false, false, sizeof(double));
    struct json_object *passes = ml_j_array(path, "passes");
    *ret_censored = 0;
    for (size_t i = 0; i < ml_j_len(passes); i++) {
        struct json_object *p = json_object_array_get_idx(passes, i);
        if (g_strcmp0(ml_j_str(p, "status"), "ok") != 0 || g_strcmp0(ml_j_str(p, "cell"), cell))
            continue;
        double v, busy, payload;
        bool have = false;
        if (f == FIG_CELL_THROUGHPUT)
            have = ml_j_num(p, "bits_per_second", &v);
        else if (f == FIG_HUB_FACTOR)
            have = ml_j_num(p, "hub_bytes_per_payload_byte", &v);
        else if (f == FIG_LOADED_P99) {
            have = ml_j_num(ml_j_obj(p, "rtt_loaded"), "p99_ms", &v);
            *ret_censored += have && ml_j_bool(ml_j_obj(p, "rtt_loaded"), "p99_at_least");
        } else if (ml_j_num(ml_j_obj(ml_j_obj(p, "cpu"), "hub"), "busy_above_idle_s", &busy) &&
                   ml_j_num(p, "payload_bytes", &payload) && payload > 0) {
            v = busy / (payload / 1e9);
            have = true;
        }
        if (have)
            g_array_append_val(out, v);
    }
    return out;
}

/* The offered rate of the cell's first pass that passed, in bit/s; NAN for none (a full-speed
 * cell). */
static double offered(struct json_object *path, const char *cell)
{
    struct json_object *passes = ml_j_array(path, "passes");
    for (size_t i = 0; i < ml_j_len(passes); i++) {
        struct json_object *p = json_object_array_get_idx(passes, i);
        double v;
        if (!g_strcmp0(ml_j_str(p, "status"), "ok") && !g_strcmp0(ml_j_str(p, "cell"), cell) &&
            ml_j_num(p, "offered_bits_per_second", &v))
            return v;
    }
    return NAN;
}

static struct json_object *num_or_null(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

static struct json_object *values_array(const GArray *v)
{
    struct json_object *a = json_object_new_array();
    for (guint i = 0; i < v->len; i++)
        json_object_array_add(a, json_object_new_double(g_array_index(v, double, i)));
    return a;
}

static bool all_positive(const GArray *v)
{
    for (guint i = 0; i < v->len; i++)
        if (!(g_array_index(v, double, i) > 0))
            return false;
    return true;
}

static GArray *logs_of(const GArray *v)
{
    GArray *out = g_array_sized_new(false, false, sizeof(double), v->len);
    for (guint i = 0; i < v->len; i++) {
        double x = log(g_array_index(v, double, i));
        g_array_append_val(out, x);
    }
    return out;
}

/* A row with its Welch test on the passes' values: on their logarithms where every value on both
 * sides is positive (throughput, a hub factor, a p99: ratios are what differ, and their spread
 * grows with them), else on the values. Its verdict waits for the family's Holm adjustment
 * (ml_compare), unless there is nothing to test: "unknown" (under 2 passes a side), "censored"
 * (a p99 that is a lower bound on either side) or "not comparable" (a fixed-rate cell offered
 * at different rates). */
static void add_row(struct json_object *rows, struct json_object *w, const char *path,
                    const char *cell, enum figure f, struct json_object *pa, struct json_object *pb,
                    struct json_object *fa, struct json_object *fb, const char *values_cell)
{
    double a, b;
    if (!ml_j_num(fa, figures[f].figure, &a) || !ml_j_num(fb, figures[f].figure, &b))
        return;
    size_t ca = 0, cb = 0;
    g_autoptr(GArray) va = pass_values(pa, values_cell, f, &ca);
    g_autoptr(GArray) vb = pass_values(pb, values_cell, f, &cb);
    double oa = f == FIG_CELL_THROUGHPUT ? offered(pa, values_cell) : NAN;
    double ob = f == FIG_CELL_THROUGHPUT ? offered(pb, values_cell) : NAN;
    bool log_scale = all_positive(va) && all_positive(vb);
    struct ml_welch t = {.t = NAN, .df = NAN, .se = NAN, .p = NAN, .noise = NAN};
    const char *verdict = NULL;
    if (isfinite(oa) && isfinite(ob) && fabs(ob - oa) > 1e-3 * fmax(oa, ob)) {
        verdict = "not comparable";
        warn(w,
             "%s %s: A offered %.3g Mbit/s and B %.3g: a fixed-rate cell's throughput is the "
             "offered rate's, so only cells offered the same rate are compared",
             path, values_cell, oa / 1e6, ob / 1e6);
    } else if (ca || cb) {
        verdict = "censored";
    } else {
        g_autoptr(GArray) la = log_scale ? logs_of(va) : NULL;
        g_autoptr(GArray) lb = log_scale ? logs_of(vb) : NULL;
        const GArray *xa = log_scale ? la : va, *xb = log_scale ? lb : vb;
        if (!ml_welch((const double *)(const void *)xa->data, xa->len,
                      (const double *)(const void *)xb->data, xb->len, &t) ||
            !isfinite(t.p)) {
            verdict = "unknown";
            t = (struct ml_welch){.t = NAN, .df = NAN, .se = NAN, .p = NAN, .noise = NAN};
        }
    }
    /* The noise in the figure's unit at A's level: on the log scale exp(noise) is the ratio of
     * B's geometric mean to A's that this row's test alone would just call real (Holm's
     * adjustment of the family asks more). */
    double noise_percent = NAN, noise = NAN;
    if (isfinite(t.noise)) {
        noise_percent = log_scale ? 100 * expm1(t.noise) : a != 0 ? 100 * t.noise / fabs(a) : NAN;
        noise = log_scale ? fabs(a) * expm1(t.noise) : t.noise;
    }
    struct json_object *row = json_object_new_object();
    json_object_object_add(row, "path", json_object_new_string(path));
    json_object_object_add(row, "cell", cell ? json_object_new_string(cell) : NULL);
    json_object_object_add(row, "figure", json_object_new_string(figures[f].figure));
    json_object_object_add(row, "unit", json_object_new_string(figures[f].unit));
    json_object_object_add(row, "a", json_object_new_double(a));
    json_object_object_add(row, "b", json_object_new_double(b));
    json_object_object_add(row, "difference", json_object_new_double(b - a));
    json_object_object_add(row, "difference_percent",
                           num_or_null(a != 0 ? 100 * (b - a) / a : NAN));
    json_object_object_add(row, "scale",
                           verdict ? NULL : json_object_new_string(log_scale ? "log" : "linear"));
    json_object_object_add(row, "noise", num_or_null(noise));
    json_object_object_add(row, "noise_percent", num_or_null(noise_percent));
    json_object_object_add(row, "t", num_or_null(t.t));
    json_object_object_add(row, "df", num_or_null(t.df));
    json_object_object_add(row, "p_value", num_or_null(t.p));
    json_object_object_add(row, "p_holm", NULL);
    json_object_object_add(row, "passes_a", json_object_new_int((int)va->len));
    json_object_object_add(row, "passes_b", json_object_new_int((int)vb->len));
    json_object_object_add(row, "values_a", values_array(va));
    json_object_object_add(row, "values_b", values_array(vb));
    json_object_object_add(row, "verdict", verdict ? json_object_new_string(verdict) : NULL);
    json_object_array_add(rows, row);
}

/* Every tested row's p-value adjusted by Holm's method over the comparison's tested rows, and
 * its verdict from the adjusted one: fifty rows tested at 0.05 alone would call two or three
 * identical figures different. */
static void holm_verdicts(struct json_object *rows)
{
    size_t n = ml_j_len(rows);
    g_autofree double *p = g_new(double, n ? n : 1);
    g_autofree double *adj = g_new(double, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        struct json_object *r = json_object_array_get_idx(rows, i);
        if (!ml_j_str(r, "verdict") && ml_j_num(r, "p_value", &p[i]))
            continue;
        p[i] = NAN;
    }
    ml_holm(p, n, adj);
    for (size_t i = 0; i < n; i++) {
        struct json_object *r = json_object_array_get_idx(rows, i);
        if (!isfinite(adj[i]))
            continue;
        json_object_object_add(r, "p_holm", json_object_new_double(adj[i]));
        json_object_object_add(
            r, "verdict",
            json_object_new_string(adj[i] < ML_COMPARE_ALPHA ? "differs" : "within noise"));
    }
}

static bool check_schema(struct json_object *r, const char *name, GError **err)
{
    const char *schema = ml_j_str(r, "schema");
    if (json_object_is_type(r, json_type_object) && g_strcmp0(schema, ML_RESULTS_SCHEMA) == 0)
        return true;
    g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                "%s is not a '%s' results document (its schema is '%s'); compare runs of "
                "this meshlab.",
                name, ML_RESULTS_SCHEMA, schema ? schema : "(none)");
    return false;
}

static void warnings_of(struct json_object *w, struct json_object *a, struct json_object *b)
{
    const char *acc_a = ml_j_str(ml_j_obj(a, "environment"), "accelerator");
    const char *acc_b = ml_j_str(ml_j_obj(b, "environment"), "accelerator");
    if (g_strcmp0(acc_a, acc_b) != 0)
        warn(w,
             "A ran under %s and B under %s: their throughput and CPU figures measure "
             "different machines",
             acc_a ? acc_a : "an unknown accelerator", acc_b ? acc_b : "an unknown accelerator");
    else if (g_strcmp0(acc_a, "tcg") == 0)
        warn(w, "both ran under TCG: throughput and CPU differences may be the emulation's");
    if (ml_j_bool(a, "host_busy"))
        warn(w, "A's host was busy during some passes: its figures are not comparable");
    if (ml_j_bool(b, "host_busy"))
        warn(w, "B's host was busy during some passes: its figures are not comparable");
}

/* A NAT matrix cell whose outcome differs between the runs: a warning, not a row (an outcome is
 * a word, not a figure with noise). Cells not run on either side say nothing. */
static void nat_warnings(struct json_object *w, struct json_object *a, struct json_object *b)
{
    struct json_object *ma = ml_j_array(a, "nat_matrix"), *mb = ml_j_array(b, "nat_matrix");
    for (size_t i = 0; i < ml_j_len(ma); i++) {
        struct json_object *ca = json_object_array_get_idx(ma, i);
        const char *dp = ml_j_str(ca, "dataplane"), *x = ml_j_str(ca, "a_nat"),
                   *y = ml_j_str(ca, "b_nat");
        struct json_object *cb = ml_nat_cell(mb, dp, x, y);
        const char *oa = ml_j_str(ca, "outcome"), *ob = ml_j_str(cb, "outcome");
        if (!dp || !x || !y || !oa || !ob || g_strcmp0(oa, ob) == 0 ||
            g_strcmp0(oa, "not-run") == 0 || g_strcmp0(ob, "not-run") == 0)
            continue;
        warn(w, "NAT matrix, %s, %s x %s: %s in A, %s in B%s", dp, x, y, oa, ob,
             g_strcmp0(ml_nat_expected_outcome(ml_dataplane_nat(dp), x, y), "race") == 0
                 ? " (a race: its repeats may go either way)"
                 : "");
    }
}

struct json_object *ml_compare(struct json_object *a, const char *a_name, struct json_object *b,
                               const char *b_name, GError **err)
{
    if (!check_schema(a, a_name, err) || !check_schema(b, b_name, err))
        return NULL;
    struct json_object *cmp = json_object_new_object();
    struct json_object *rows = json_object_new_array();
    struct json_object *w = json_object_new_array();
    json_object_object_add(cmp, "schema", json_object_new_string(ML_COMPARE_SCHEMA));
    for (int side = 0; side < 2; side++) {
        struct json_object *o = json_object_new_object();
        struct json_object *r = side ? b : a;
        json_object_object_add(o, "source", json_object_new_string(side ? b_name : a_name));
        json_object_object_add(o, "run_id", json_object_get(ml_j_get(r, "run_id")));
        json_object_object_add(
            o, "accelerator", json_object_get(ml_j_get(ml_j_obj(r, "environment"), "accelerator")));
        json_object_object_add(o, "host_busy", json_object_new_boolean(ml_j_bool(r, "host_busy")));
        json_object_object_add(cmp, side ? "b" : "a", o);
    }
    warnings_of(w, a, b);
    nat_warnings(w, a, b);
    const char *head = headline(a);
    struct json_object *paths = ml_j_array(a, "paths");
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *pa = json_object_array_get_idx(paths, i);
        const char *name = ml_j_str(pa, "name");
        struct json_object *pb = ml_j_path_named(b, name);
        if (!name)
            continue;
        if (!pb) {
            warn(w, "%s is in A only", name);
            continue;
        }
        if (g_strcmp0(ml_j_str(pa, "status"), "measured") ||
            g_strcmp0(ml_j_str(pb, "status"), "measured")) {
            warn(w, "%s was not measured in both runs (A: %s, B: %s)", name,
                 ml_j_str_or(pa, "status", "?"), ml_j_str_or(pb, "status", "?"));
            continue;
        }
        struct json_object *ca = ml_j_obj(pa, "cells");
        if (ca) {
            json_object_object_foreach(ca, cell, va)
            {
                struct json_object *vb = ml_j_obj(ml_j_obj(pb, "cells"), cell);
                if (vb)
                    add_row(rows, w, name, cell, FIG_CELL_THROUGHPUT, pa, pb, va, vb, cell);
            }
        }
        add_row(rows, w, name, NULL, FIG_HUB_FACTOR, pa, pb, pa, pb, head);
        add_row(rows, w, name, NULL, FIG_LOADED_P99, pa, pb, pa, pb, head);
        /* hub_cpu_s_per_gb is the headline cell's, above idle: its noise is that cell's too */
        add_row(rows, w, name, NULL, FIG_HUB_CPU, pa, pb, pa, pb, head);
    }
    struct json_object *pbs = ml_j_array(b, "paths");
    for (size_t i = 0; i < ml_j_len(pbs); i++) {
        const char *name = ml_j_str(json_object_array_get_idx(pbs, i), "name");
        if (name && !ml_j_path_named(a, name))
            warn(w, "%s is in B only", name);
    }
    holm_verdicts(rows);
    json_object_object_add(cmp, "warnings", w);
    json_object_object_add(cmp, "rows", rows);
    return cmp;
}

/* A value in the unit people read: Mbit/s for bit/s. */
static void put_value(GString *s, struct json_object *row, const struct ml_column *col, void *ctx)
{
    double v;
    if (!ml_j_num(row, col->key, &v)) {
        g_string_append(s, ML_DASH);
        return;
    }
    if (g_strcmp0(ml_j_str(row, "unit"), "bit/s") == 0)
        v /= 1e6;
    ml_put_significant(s, v, 3);
}

static void put_unit(GString *s, struct json_object *row, const struct ml_column *col, void *ctx)
{
    bool mbit = g_strcmp0(ml_j_str(row, "unit"), "bit/s") == 0;
    g_string_append(s, mbit ? "Mbit/s" : ml_j_str_or(row, "unit", "?"));
}

static void put_verdict(GString *s, struct json_object *row, const struct ml_column *col, void *ctx)
{
    const char *v = ml_j_str_or(row, "verdict", "?");
    g_string_append_printf(s, strcmp(v, "differs") == 0 ? "**%s**" : "%s", v);
}

/* Each side's pass values, in the unit people read: "118 122 126 / 165 171 176". */
static void put_values(GString *s, struct json_object *row, const struct ml_column *col, void *ctx)
{
    bool mbit = g_strcmp0(ml_j_str(row, "unit"), "bit/s") == 0;
    for (int side = 0; side < 2; side++) {
        struct json_object *v = ml_j_array(row, side ? "values_b" : "values_a");
        if (side)
            g_string_append(s, " / ");
        if (!ml_j_len(v))
            g_string_append(s, ML_DASH);
        for (size_t i = 0; i < ml_j_len(v); i++) {
            double x = json_object_get_double(json_object_array_get_idx(v, i));
            if (i)
                g_string_append_c(s, ' ');
            ml_put_significant(s, mbit ? x / 1e6 : x, 3);
        }
    }
}

static const struct ml_column compare_columns[] = {
    ML_COL_TEXT("Path", "path", NULL),
    ML_COL_TEXT("Cell", "cell", ML_DASH),
    ML_COL_TEXT("Figure", "figure", NULL),
    {.header = "Unit", .put = put_unit},
    ML_COL_NUM_BY("A", "a", put_value),
    ML_COL_NUM_BY("B", "b", put_value),
    ML_COL_NUM_BY("B - A", "difference", put_value),
    ML_COL_FIXED("B - A %", "difference_percent", 1),
    ML_COL_NUM_BY("Noise (95 %)", "noise", put_value),
    ML_COL_FIXED("p", "p_value", 3),
    ML_COL_FIXED("p (Holm)", "p_holm", 3),
    ML_COL_PAIR("Passes A / B", "passes_a", "passes_b", 0),
    {.header = "Values A / B", .put = put_values},
    {.header = "Verdict", .put = put_verdict},
};

char *ml_compare_text(struct json_object *cmp)
{
    GString *s = g_string_new(NULL);
    struct json_object *a = ml_j_obj(cmp, "a"), *b = ml_j_obj(cmp, "b");
    g_string_append_printf(s, "A: %s (run %s)\nB: %s (run %s)\n\n", ml_j_str_or(a, "source", "?"),
                           ml_j_str_or(a, "run_id", "?"), ml_j_str_or(b, "source", "?"),
                           ml_j_str_or(b, "run_id", "?"));
    struct json_object *w = ml_j_array(cmp, "warnings");
    for (size_t i = 0; i < ml_j_len(w); i++)
        g_string_append_printf(s, "warning: %s\n",
                               json_object_get_string(json_object_array_get_idx(w, i)));
    if (ml_j_len(w))
        g_string_append(s, "\n");
    ml_columns_head(s, compare_columns, G_N_ELEMENTS(compare_columns));
    struct json_object *rows = ml_j_array(cmp, "rows");
    for (size_t i = 0; i < ml_j_len(rows); i++)
        ml_columns_row(s, compare_columns, G_N_ELEMENTS(compare_columns),
                       json_object_array_get_idx(rows, i), NULL);
    return g_string_free(s, false);
}
