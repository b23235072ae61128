#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/util.h"

#define DASH "—"

/* ---- reading the document: absent or mistyped values read as absent ---- */

static struct json_object *get(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;
    if (!o || !json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
        return NULL;
    return v; /* NULL for a JSON null too */
}

static struct json_object *get_obj(struct json_object *o, const char *key)
{
    struct json_object *v = get(o, key);
    return json_object_is_type(v, json_type_object) ? v : NULL;
}

static struct json_object *get_array(struct json_object *o, const char *key)
{
    struct json_object *v = get(o, key);
    return json_object_is_type(v, json_type_array) ? v : NULL;
}

static const char *get_str(struct json_object *o, const char *key)
{
    struct json_object *v = get(o, key);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static const char *str_or(struct json_object *o, const char *key, const char *fallback)
{
    const char *s = get_str(o, key);
    return s && *s ? s : fallback;
}

static bool get_num(struct json_object *o, const char *key, double *ret)
{
    struct json_object *v = get(o, key);
    if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
        return false;
    *ret = json_object_get_double(v);
    return isfinite(*ret);
}

static bool get_count(struct json_object *o, const char *key, uint64_t *ret)
{
    struct json_object *v = get(o, key);
    if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
        return false;
    *ret = (uint64_t)json_object_get_int64(v);
    return true;
}

/* ---- writing Markdown ---- */

/* A cell or list item holds one line; a '|' from a reason or evidence would split the table. */
static void put_text(GString *s, const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '|')
            g_string_append(s, "\\|");
        else if (*p == '\n' || *p == '\r' || *p == '\t')
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

static void put_bytes(GString *s, uint64_t n)
{
    char digits[24];
    g_snprintf(digits, sizeof digits, "%" PRIu64, n);
    put_grouped(s, digits);
}

static void put_count(GString *s, struct json_object *o, const char *key)
{
    uint64_t n;
    if (get_count(o, key, &n))
        put_bytes(s, n);
    else
        g_string_append(s, DASH);
}

/* Fixed decimals with a '.', whatever LC_NUMERIC the command layer set, and grouped like the
 * byte counts so that 27,438.0 Mbit/s reads as easily as the seed's "29,338 Mbps". */
static void put_fixed(GString *s, double v, int decimals)
{
    static const char *const formats[] = {"%.0f", "%.1f", "%.2f", "%.3f"};
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    put_grouped(s, g_ascii_formatd(buf, sizeof buf, formats[decimals], v));
}

static void put_num(GString *s, struct json_object *o, const char *key, int decimals)
{
    double v;
    if (get_num(o, key, &v))
        put_fixed(s, v, decimals);
    else
        g_string_append(s, DASH);
}

/* ---- the sections ---- */

enum path_status { PATH_MEASURED, PATH_FAILED, PATH_NOT_RUN };

static bool path_status(struct json_object *path, size_t i, enum path_status *ret, GError **err)
{
    const char *name = get_str(path, "name");
    const char *status = get_str(path, "status");
    if (!name || !*name) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "Results path %zu has no name.", i + 1);
        return false;
    }
    if (g_strcmp0(status, "measured") == 0)
        *ret = PATH_MEASURED;
    else if (g_strcmp0(status, "failed") == 0)
        *ret = PATH_FAILED;
    else if (g_strcmp0(status, "not-run") == 0)
        *ret = PATH_NOT_RUN;
    else {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "Results path '%s' has status '%s'; expected measured, failed or not-run.",
                    name, status ? status : "(none)");
        return false;
    }
    return true;
}

/* "failed: <reason>" or "not run: <reason>", standing in for every number of the path. */
static void put_not_measured(GString *s, struct json_object *path, enum path_status st)
{
    g_string_append(s, st == PATH_FAILED ? "failed: " : "not run: ");
    put_text(s, str_or(path, "reason", "no reason recorded"));
}

static void put_check_summary(GString *s, struct json_object *path)
{
    struct json_object *checks = get_array(path, "checks");
    size_t n = checks ? json_object_array_length(checks) : 0;
    if (n == 0) {
        g_string_append(s, "not checked");
        return;
    }
    bool any_failed = false;
    for (size_t i = 0; i < n; i++) {
        struct json_object *c = json_object_array_get_idx(checks, i);
        if (json_object_get_boolean(get(c, "ok")))
            continue;
        g_string_append(s, any_failed ? ", " : "failed (");
        put_text(s, str_or(c, "when", "?"));
        any_failed = true;
    }
    g_string_append(s, any_failed ? ")" : "ok");
}

static void put_header(GString *s, struct json_object *r)
{
    struct json_object *env = get_obj(r, "environment");
    struct json_object *image = get_obj(env, "image");
    struct json_object *profile = get_obj(r, "profile");

    g_string_append(s, "# meshlab report: ");
    put_text(s, str_or(r, "lab", DASH));
    g_string_append(s, "\n\n- Run: ");
    put_text(s, str_or(r, "run_id", DASH));
    g_string_append(s, ", ");
    put_text(s, str_or(r, "started", DASH));
    g_string_append(s, " to ");
    put_text(s, str_or(r, "finished", "(unfinished)"));
    g_string_append(s, "\n- Topology: ");
    put_text(s, str_or(r, "topology", DASH));

    g_string_append(s, "\n- Profile: ");
    put_text(s, str_or(profile, "name", DASH));
    g_string_append(s, " (transfer ");
    put_num(s, profile, "transfer_s", 0);
    g_string_append(s, " s, ");
    put_count(s, profile, "passes");
    g_string_append(s, " passes of ");
    put_num(s, profile, "pass_s", 0);
    g_string_append(s, " s, ");
    put_count(s, profile, "ping_count");
    g_string_append(s, " pings per path)");

    /* The image actually booted, and why it is not the one asked for: results from a fallback
     * image are easy to mistake for the requested one. */
    const char *used = str_or(image, "name", DASH);
    const char *requested = get_str(image, "requested");
    g_string_append(s, "\n- Image: ");
    put_text(s, used);
    if (requested && *requested && strcmp(requested, used) != 0) {
        g_string_append(s, ", used instead of the requested ");
        put_text(s, requested);
        g_string_append(s, ": ");
        put_text(s, str_or(image, "fallback_reason", "no reason recorded"));
    }

    const char *accel = get_str(env, "accelerator");
    bool tcg = g_strcmp0(accel, "tcg") == 0;
    g_string_append(s, "\n- Accelerator: ");
    if (accel && *accel) {
        g_autofree char *up = g_ascii_strup(accel, -1);
        put_text(s, up);
    } else {
        g_string_append(s, "unknown");
    }
    if (get_str(env, "accelerator_reason")) {
        g_string_append(s, " (");
        put_text(s, get_str(env, "accelerator_reason"));
        g_string_append(s, ")");
    }
    g_string_append(s, "\n\n");
    if (tcg)
        g_string_append(s,
                        "> **Warning:** the guests ran under TCG, QEMU's software emulation. "
                        "Absolute throughput\n"
                        "> under TCG means little; compare the hub bytes per payload byte, which "
                        "do not depend\n"
                        "> on how fast the CPU is emulated.\n\n");
}

static void put_path_list(GString *s, struct json_object *paths)
{
    g_string_append(s, "## Paths\n\n");
    for (size_t i = 0; i < json_object_array_length(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        g_string_append(s, "- **");
        put_text(s, get_str(p, "name"));
        g_string_append(s, "**: ");
        put_text(s, str_or(p, "description", "no description"));
        g_string_append(s, " (");
        put_text(s, str_or(p, "from", DASH));
        g_string_append(s, " to ");
        put_text(s, str_or(p, "to", DASH));
        g_string_append(s, " at ");
        put_text(s, str_or(p, "target", DASH));
        g_string_append(s, ")\n");
    }
    g_string_append(s, "\n");
}

/* One value of a metric: a number times its scale with its decimals, or text. */
static void put_value(GString *s, const struct ml_metric *m, struct json_object *v,
                      const char *missing)
{
    double x;
    if (json_object_is_type(v, json_type_string))
        put_text(s, json_object_get_string(v));
    else if ((json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) &&
             isfinite(x = json_object_get_double(v)))
        put_fixed(s, x * (m->scale ? m->scale : 1), m->decimals);
    else
        g_string_append(s, missing);
}

/* A metric's values in a path: one, or a list where its key runs through an array (a missing
 * element is "n/a", so that the others keep their places). */
static void put_metric(GString *s, const struct ml_metric *m, struct json_object *path)
{
    bool list = false;
    g_autoptr(GPtrArray) v = ml_metric_values(path, m->name, &list);
    if (v->len == 0)
        g_string_append(s, DASH);
    for (guint i = 0; i < v->len; i++) {
        if (i)
            g_string_append(s, ", ");
        put_value(s, m, g_ptr_array_index(v, i), list ? "n/a" : DASH);
    }
}

static bool shown_in(const struct ml_metric *m, const struct ml_report_table *t)
{
    for (size_t i = 0; i < G_N_ELEMENTS(m->shown_in) && m->shown_in[i]; i++)
        if (m->shown_in[i] == t)
            return true;
    return false;
}

/* The metrics of one table, in the metrics table's order. */
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
        g_autoptr(GPtrArray) v = ml_metric_values(r, key, NULL);
        const struct ml_metric plain = {.decimals = 0};
        put_value(s, &plain, v->len == 1 ? g_ptr_array_index(v, 0) : NULL, DASH);
        p = end;
    }
    g_string_append(s, "\n\n");
}

static void put_table_head(GString *s, const struct ml_report_table *t, GPtrArray *cols)
{
    GString *rule = g_string_new("|---|");
    g_string_append(s, "| Path |");
    if (t->check_column) {
        g_string_append(s, " Path check |");
        g_string_append(rule, "---|");
    }
    if (t->target_column) {
        g_string_append(s, " Target |");
        g_string_append(rule, "---|");
    }
    for (guint i = 0; i < cols->len; i++) {
        if (!starts_cell(cols, i))
            continue;
        const struct ml_metric *m = g_ptr_array_index(cols, i);
        g_string_append_c(s, ' ');
        put_text(s, m->header ? m->header : m->name);
        g_string_append(s, " |");
        g_string_append(rule, "---:|");
    }
    g_string_append_printf(s, "\n%s\n", rule->str);
    g_string_free(rule, TRUE);
}

/* One cell of a measured path: the values of the metrics that share it, "a / b / c", or one
 * dash when it has none of them. */
static void put_cell(GString *s, GPtrArray *cols, guint from, guint to, struct json_object *p)
{
    g_autoptr(GString) cell = g_string_new(NULL);
    bool any = false;
    for (guint i = from; i < to; i++) {
        const struct ml_metric *m = g_ptr_array_index(cols, i);
        g_autoptr(GPtrArray) v = ml_metric_values(p, m->name, NULL);
        for (guint j = 0; j < v->len; j++)
            any = any || g_ptr_array_index(v, j) != NULL;
        if (i > from)
            g_string_append(cell, " / ");
        put_metric(cell, m, p);
    }
    g_string_append(s, any ? cell->str : DASH);
}

/* One row per path. A path that was not measured shows why in place of its first figure and
 * dashes for the rest: its numbers, if any reached the document, are not results. */
static void put_table_row(GString *s, const struct ml_report_table *t, GPtrArray *cols,
                          struct json_object *p, enum path_status st)
{
    g_string_append(s, "| ");
    put_text(s, get_str(p, "name"));
    g_string_append(s, " |");
    if (t->check_column) {
        g_string_append_c(s, ' ');
        put_check_summary(s, p);
        g_string_append(s, " |");
    }
    if (t->target_column) {
        g_string_append_c(s, ' ');
        put_text(s, str_or(p, "target", DASH));
        g_string_append(s, " |");
    }
    for (guint i = 0; i < cols->len;) {
        guint end = i + 1;
        while (end < cols->len && !starts_cell(cols, end))
            end++;
        g_string_append_c(s, ' ');
        if (st == PATH_MEASURED)
            put_cell(s, cols, i, end, p);
        else if (i == 0)
            put_not_measured(s, p, st);
        else
            g_string_append(s, DASH);
        g_string_append(s, " |");
        i = end;
    }
    g_string_append_c(s, '\n');
}

static gint by_place(gconstpointer a, gconstpointer b)
{
    const struct ml_report_table *x = *(const struct ml_report_table *const *)a;
    const struct ml_report_table *y = *(const struct ml_report_table *const *)b;
    return x->place < y->place ? -1 : x->place > y->place;
}

/* Every table the metrics are shown in, by place. */
static void put_metric_tables(GString *s, struct json_object *r, struct json_object *paths,
                              const enum path_status *st, const struct ml_metric *metrics, size_t n)
{
    g_autoptr(GPtrArray) tables = g_ptr_array_new();
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < G_N_ELEMENTS(metrics[i].shown_in) && metrics[i].shown_in[j]; j++)
            if (!g_ptr_array_find(tables, metrics[i].shown_in[j], NULL))
                g_ptr_array_add(tables, (gpointer)metrics[i].shown_in[j]);
    g_ptr_array_sort(tables, by_place); /* stable: equal places keep the metrics' order */
    for (guint k = 0; k < tables->len; k++) {
        const struct ml_report_table *t = g_ptr_array_index(tables, k);
        g_autoptr(GPtrArray) cols = columns_of(metrics, n, t);
        g_string_append(s, "## ");
        put_text(s, t->title);
        g_string_append(s, "\n\n");
        if (t->intro)
            put_intro(s, t->intro, r);
        put_table_head(s, t, cols);
        for (size_t i = 0; i < json_object_array_length(paths); i++)
            put_table_row(s, t, cols, json_object_array_get_idx(paths, i), st[i]);
        g_string_append(s, "\n");
    }
}

/* The evidence is what makes a path's numbers believable, or shows why they were withheld. */
static void put_checks(GString *s, struct json_object *paths)
{
    g_string_append(s, "## Path checks\n\n");
    for (size_t i = 0; i < json_object_array_length(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        struct json_object *checks = get_array(p, "checks");
        size_t n = checks ? json_object_array_length(checks) : 0;
        if (n == 0) {
            g_string_append(s, "- ");
            put_text(s, get_str(p, "name"));
            g_string_append(s, ": not checked\n");
        }
        for (size_t j = 0; j < n; j++) {
            struct json_object *c = json_object_array_get_idx(checks, j);
            g_string_append(s, "- ");
            put_text(s, get_str(p, "name"));
            g_string_append(s, ", ");
            put_text(s, str_or(c, "when", "?"));
            g_string_append(s, json_object_get_boolean(get(c, "ok")) ? ": ok: " : ": **failed**: ");
            put_text(s, str_or(c, "evidence", "no evidence recorded"));
            g_string_append(s, "\n");
        }
    }
    g_string_append(s, "\n");
}

static void put_setup(GString *s, struct json_object *r, struct json_object *paths,
                      const enum path_status *st)
{
    struct json_object *phases = get_array(r, "phases");
    struct json_object *guests = get_array(r, "guests");

    g_string_append(s, "## Setup times\n\n| Phase | Seconds |\n|---|---:|\n");
    double total = 0;
    bool total_known = true;
    for (size_t i = 0; phases && i < json_object_array_length(phases); i++) {
        struct json_object *ph = json_object_array_get_idx(phases, i);
        double v;
        if (get_num(ph, "seconds", &v))
            total += v;
        else
            total_known = false;
        g_string_append(s, "| ");
        put_text(s, str_or(ph, "name", "?"));
        g_string_append(s, " | ");
        put_num(s, ph, "seconds", 1);
        g_string_append(s, " |\n");
    }
    g_string_append(s, "| total | ");
    if (total_known)
        put_fixed(s, total, 1);
    else
        g_string_append(s, DASH);
    g_string_append(s, " |\n\n");

    g_string_append(s, "Agent is from starting the guest to its guest agent answering; ready is to "
                       "cloud-init having finished.\n\n"
                       "| Guest | Address | Agent s | Ready s |\n|---|---|---:|---:|\n");
    for (size_t i = 0; guests && i < json_object_array_length(guests); i++) {
        struct json_object *g = json_object_array_get_idx(guests, i);
        g_string_append(s, "| ");
        put_text(s, str_or(g, "name", "?"));
        g_string_append(s, " | ");
        put_text(s, str_or(g, "address", DASH));
        g_string_append(s, " | ");
        put_num(s, g, "boot_s", 1);
        g_string_append(s, " | ");
        put_num(s, g, "ready_s", 1);
        g_string_append(s, " |\n");
    }
    g_string_append(s, "\n");

    bool any = false;
    for (size_t i = 0; i < json_object_array_length(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        if (!get(p, "setup_s"))
            continue; /* a path without a tunnel to set up */
        if (!any)
            g_string_append(s, "Tunnel setup, from the first key generated to the first ping "
                               "through the tunnel answered:\n\n");
        any = true;
        g_string_append(s, "- ");
        put_text(s, get_str(p, "name"));
        g_string_append(s, ": ");
        if (st[i] == PATH_MEASURED) {
            put_num(s, p, "setup_s", 1);
            g_string_append(s, " s\n");
        } else {
            put_not_measured(s, p, st[i]);
            g_string_append(s, "\n");
        }
    }
    if (any)
        g_string_append(s, "\n");
}

static void put_env_row(GString *s, const char *label, const char *value)
{
    g_string_append_printf(s, "| %s | ", label);
    put_text(s, value && *value ? value : DASH);
    g_string_append(s, " |\n");
}

static void put_environment(GString *s, struct json_object *r)
{
    struct json_object *env = get_obj(r, "environment");
    struct json_object *image = get_obj(env, "image");
    struct json_object *tools = get_obj(env, "tools");

    g_string_append(s, "## Environment\n\n| | |\n|---|---|\n");
    put_env_row(s, "Host kernel", get_str(env, "host_kernel"));
    put_env_row(s, "libvirt", get_str(env, "libvirt"));
    put_env_row(s, "QEMU", get_str(env, "qemu"));
    g_autofree char *accel = g_ascii_strup(str_or(env, "accelerator", DASH), -1);
    put_env_row(s, "Accelerator", accel);
    put_env_row(s, "Image", get_str(image, "name"));
    put_env_row(s, "Image sha256", get_str(image, "sha256"));
    put_env_row(s, "Guest OS", get_str(env, "guest_os"));
    put_env_row(s, "Guest kernel", get_str(env, "guest_kernel"));
    if (tools) {
        json_object_object_foreach(tools, tool, version)
        {
            g_autoptr(GString) cell = g_string_new(NULL);
            put_text(cell, tool);
            g_string_append(cell, " (guest)");
            put_env_row(s, cell->str,
                        json_object_is_type(version, json_type_string)
                            ? json_object_get_string(version)
                            : NULL);
        }
    }
}

char *ml_report_render_markdown(struct json_object *results, const struct ml_metric *metrics,
                                size_t n_metrics, GError **err)
{
    if (!json_object_is_type(results, json_type_object)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "The results document is not a JSON object.");
        return NULL;
    }
    const char *schema = get_str(results, "schema");
    if (g_strcmp0(schema, ML_RESULTS_SCHEMA) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "The results document's schema is '%s'; this meshlab reads '%s'.",
                    schema ? schema : "(none)", ML_RESULTS_SCHEMA);
        return NULL;
    }
    struct json_object *paths = get_array(results, "paths");
    if (!paths) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "The results document has no paths array.");
        return NULL;
    }

    size_t n = json_object_array_length(paths);
    g_autofree enum path_status *st = g_new0(enum path_status, n ? n : 1);
    for (size_t i = 0; i < n; i++)
        if (!path_status(json_object_array_get_idx(paths, i), i, &st[i], err))
            return NULL;

    GString *s = g_string_new(NULL);
    put_header(s, results);
    put_path_list(s, paths);
    put_metric_tables(s, results, paths, st, metrics, n_metrics);
    put_checks(s, paths);
    put_setup(s, results, paths, st);
    put_environment(s, results);
    return g_string_free(s, false);
}
