/* The pictures: each is a gnuplot script with its data inline (datablocks), written to a
 * private temporary directory and run with a deadline; gnuplot's SVG comes back on stdout. */
#include "report/plot.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sys/wait.h>
#include <string.h>

#include "core/spawn.h"
#include "core/leftovers.h"
#include "results/format.h"
#include "results/natgrid.h"

/* Seconds one picture may take; gnuplot draws these in well under one. */
#define PLOT_TIMEOUT_S 30.0

static const struct {
    const char *name;
    const char *title;
} plots[ML_PLOTS_GNUPLOT] = {
    {"throughput", "Throughput of every pass, Mbit/s (failed passes marked ×)"},
    {"hub-series", "Hub NIC bytes per second during every pass, MB/s (failed seconds marked ×)"},
    {"rtt", "Round-trip time idle and under load, p50 / p90 / p99 / max, ms"},
    {"cpu", "Busy CPU above idle per GB of payload, per guest, s/GB"},
};

/* A string in a gnuplot command: single-quoted, where gnuplot expands nothing (in double quotes
 * it runs `backquoted` commands), a quote doubled, a control character (a newline would end the
 * command) a space. The labels are names from results.json, which may come from anyone. */
static void put_quoted(GString *s, const char *text)
{
    g_string_append_c(s, '\'');
    for (const char *p = text ? text : ""; *p; p++) {
        if (*p == '\'')
            g_string_append(s, "''");
        else if (g_ascii_iscntrl(*p))
            g_string_append_c(s, ' ');
        else
            g_string_append_c(s, *p);
    }
    g_string_append_c(s, '\'');
}

/* A label in a datablock: data, never evaluated, read up to the next '"' (gnuplot's data
 * reader knows no escapes), so a '"' or '\\' becomes '_' and a control character a space; the
 * line, and the datablock, cannot end early. */
static void put_label(GString *s, const char *text)
{
    g_string_append_c(s, '"');
    for (const char *p = text ? text : ""; *p; p++) {
        if (*p == '"' || *p == '\\')
            g_string_append_c(s, '_');
        else if (g_ascii_iscntrl(*p))
            g_string_append_c(s, ' ');
        else
            g_string_append_c(s, *p);
    }
    g_string_append_c(s, '"');
}

static void put_number(GString *s, struct json_object *o, const char *key, double scale)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    double v;
    if (ml_j_num(o, key, &v))
        g_string_append_printf(s, " %s", g_ascii_formatd(buf, sizeof buf, "%.6g", v * scale));
    else
        g_string_append(s, " ?");
}

static bool measured(struct json_object *p)
{
    return g_strcmp0(ml_j_str(p, "status"), "measured") == 0;
}

static void head(GString *s, const char *title, const char *ylabel)
{
    g_string_append(s, "set terminal svg size 900,420 dynamic font 'sans,11' background "
                       "'#ffffff'\nset datafile missing '?'\nset key outside right top\n"
                       "set grid ytics\nset title ");
    put_quoted(s, title);
    g_string_append(s, "\nset ylabel ");
    put_quoted(s, ylabel);
    g_string_append(s, "\n");
}

/* Throughput per pass, x = the pass's place in the run (seq): one series per path, and one of
 * the failed passes. */
static bool script_throughput(GString *s, struct json_object *paths)
{
    g_autoptr(GString) plot = g_string_new(NULL);
    g_autoptr(GString) failed = g_string_new("$failed << EOD\n");
    size_t n = 0, nf = 0;
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        struct json_object *passes = ml_j_array(p, "passes");
        if (!measured(p) || !ml_j_len(passes))
            continue;
        g_string_append_printf(s, "$p%zu << EOD\n", i);
        for (size_t j = 0; j < ml_j_len(passes); j++) {
            struct json_object *pass = json_object_array_get_idx(passes, j);
            bool bad = g_strcmp0(ml_j_str(pass, "status"), "failed") == 0;
            if (!bad && g_strcmp0(ml_j_str(pass, "status"), "ok"))
                continue; /* repeated: in no figure, its repeat is plotted */
            GString *to = bad ? failed : s;
            put_number(to, pass, "seq", 1);
            put_number(to, pass, "bits_per_second", 1e-6);
            g_string_append(to, "\n");
            nf += bad;
        }
        g_string_append(s, "EOD\n");
        g_string_append_printf(plot, "%s$p%zu using 1:2 with points pt 7 ps 0.8 title ",
                               n ? ", " : "", i);
        put_quoted(plot, ml_j_str(p, "name"));
        n++;
    }
    if (!n)
        return false;
    g_string_append(failed, "EOD\n");
    g_string_append(s, failed->str);
    head(s, plots[0].title, "Mbit/s");
    g_string_append(s, "set xlabel 'pass, in the order the run made them'\nset logscale y\n"
                       "plot ");
    g_string_append(s, plot->str);
    if (nf)
        g_string_append(s, ", $failed using 1:2 with points pt 2 ps 1.6 lc rgb '#d00000' "
                           "title 'FAILED'");
    g_string_append(s, "\n");
    return true;
}

/* Hub bytes per second through every pass, the passes laid end to end in the run's order: a
 * detour in the middle of a pass shows as a step in the line of a path that should be quiet. */
static bool script_series(GString *s, struct json_object *paths)
{
    g_autoptr(GString) plot = g_string_new(NULL);
    g_autoptr(GString) failed = g_string_new("$bad << EOD\n");
    size_t n = 0, nf = 0;
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        struct json_object *passes = ml_j_array(p, "passes");
        if (!measured(p) || !ml_j_len(passes))
            continue;
        g_string_append_printf(s, "$s%zu << EOD\n", i);
        for (size_t j = 0; j < ml_j_len(passes); j++) {
            struct json_object *pass = json_object_array_get_idx(passes, j);
            struct json_object *series = ml_j_array(pass, "series");
            double seq = 0, dur = 0;
            ml_j_num(pass, "seq", &seq);
            if (!ml_j_num(pass, "duration_s", &dur) || dur <= 0)
                dur = 1;
            for (size_t k = 0; k < ml_j_len(series); k++) {
                struct json_object *sec = json_object_array_get_idx(series, k);
                double t = 0, bytes;
                ml_j_num(sec, "t_s", &t);
                if (!ml_j_num(sec, "hub_bytes", &bytes))
                    continue;
                char x[G_ASCII_DTOSTR_BUF_SIZE], y[G_ASCII_DTOSTR_BUF_SIZE];
                g_ascii_formatd(x, sizeof x, "%.4f", seq - 1 + t / (dur + 1));
                g_ascii_formatd(y, sizeof y, "%.6g", bytes / 1e6);
                g_string_append_printf(s, "%s %s\n", x, y);
                struct json_object *ok = ml_j_get(sec, "ok");
                if (json_object_is_type(ok, json_type_boolean) && !json_object_get_boolean(ok)) {
                    g_string_append_printf(failed, "%s %s\n", x, y);
                    nf++;
                }
            }
            g_string_append(s, "\n"); /* a gap between passes */
        }
        g_string_append(s, "EOD\n");
        g_string_append_printf(plot, "%s$s%zu using 1:2 with linespoints pt 7 ps 0.4 title ",
                               n ? ", " : "", i);
        put_quoted(plot, ml_j_str(p, "name"));
        n++;
    }
    if (!n)
        return false;
    g_string_append(failed, "EOD\n");
    g_string_append(s, failed->str);
    head(s, plots[1].title, "hub MB/s (rx + tx, per second)");
    g_string_append(s, "set xlabel 'pass (seq), its seconds within it'\nplot ");
    g_string_append(s, plot->str);
    if (nf)
        g_string_append(s, ", $bad using 1:2 with points pt 2 ps 1.6 lc rgb '#d00000' "
                           "title 'failed second'");
    g_string_append(s, "\n");
    return true;
}

static const char *headline(struct json_object *r)
{
    struct json_object *matrix = ml_j_array(ml_j_obj(r, "profile"), "matrix");
    return ml_j_len(matrix) ? ml_j_str(json_object_array_get_idx(matrix, 0), "cell") : NULL;
}

/* Clustered bars, one cluster per measured path. */
static bool script_rtt(GString *s, struct json_object *r, struct json_object *paths)
{
    static const char *const q[] = {"p50", "p90", "p99", "max"};
    const char *cell = headline(r);
    g_string_append(s, "$d << EOD\n");
    size_t n = 0;
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        if (!measured(p))
            continue;
        put_label(s, ml_j_str(p, "name"));
        struct json_object *idle = ml_j_obj(ml_j_obj(p, "idle"), "rtt");
        struct json_object *loaded = cell ? ml_j_obj(ml_j_obj(p, "cells"), cell) : NULL;
        for (size_t k = 0; k < G_N_ELEMENTS(q); k++) {
            g_autofree char *key = g_strdup_printf("%s_ms", q[k]);
            put_number(s, idle, key, 1);
        }
        for (size_t k = 0; k < G_N_ELEMENTS(q); k++) {
            g_autofree char *key = g_strdup_printf("rtt_loaded_%s_ms", q[k]);
            put_number(s, loaded, key, 1);
        }
        g_string_append(s, "\n");
        n++;
    }
    g_string_append(s, "EOD\n");
    if (!n)
        return false;
    head(s, plots[2].title, "ms (log)");
    g_string_append(s, "set style data histograms\nset style histogram clustered gap 1\n"
                       "set style fill solid 0.8 border -1\nset logscale y\nset yrange [0.01:*]\n"
                       "plot $d using 2:xtic(1) title 'idle p50'");
    for (int k = 1; k < 8; k++)
        g_string_append_printf(s, ", '' using %d title '%s %s'", k + 2, k < 4 ? "idle" : "loaded",
                               q[k % 4]);
    g_string_append(s, "\n");
    return true;
}

static bool script_cpu(GString *s, struct json_object *r, struct json_object *paths)
{
    struct json_object *guests = ml_j_array(r, "guests");
    const char *head_cell = headline(r);
    if (!ml_j_len(guests))
        return false;
    g_string_append(s, "$d << EOD\n");
    size_t n = 0;
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        struct json_object *cells = ml_j_obj(p, "cells");
        if (!measured(p) || !cells)
            continue;
        struct json_object *cell = head_cell ? ml_j_obj(cells, head_cell) : NULL;
        json_object_object_foreach(cells, name, each)
        {
            (void)name;
            if (g_strcmp0(ml_j_str(each, "rate"), "fixed") == 0) {
                cell = each;
                break;
            }
        }
        put_label(s, ml_j_str(p, "name"));
        for (size_t g = 0; g < ml_j_len(guests); g++)
            put_number(s,
                       ml_j_obj(ml_j_obj(cell, "cpu_s_per_gb"),
                                ml_j_str(json_object_array_get_idx(guests, g), "name")),
                       "busy_above_idle_s_per_gb", 1);
        g_string_append(s, "\n");
        n++;
    }
    g_string_append(s, "EOD\n");
    if (!n)
        return false;
    head(s, plots[3].title, "busy CPU s per GB of payload");
    g_string_append(s, "set xlabel 'at the fixed rate where measured, else the headline cell'\n"
                       "set style data histograms\nset style histogram clustered gap 1\n"
                       "set style fill solid 0.8 border -1\nset yrange [0:*]\nplot ");
    for (size_t g = 0; g < ml_j_len(guests); g++) {
        g_string_append_printf(s, "%s$d using %zu%s title ", g ? ", " : "", g + 2,
                               g ? "" : ":xtic(1)");
        put_quoted(s, ml_j_str(json_object_array_get_idx(guests, g), "name"));
    }
    g_string_append(s, "\n");
    return true;
}

/* Each path's median throughput at each step of the WAN sweep, x = the step in the order run,
 * labelled by its profiles: the relay falls away from the direct path as the hub moves off. */
static bool script_sweep(GString *s, struct json_object *results)
{
    struct json_object *sweep = ml_j_array(results, "wan_sweep");
    size_t steps = ml_j_len(sweep);
    if (steps < 2)
        return false;
    struct json_object *first = ml_j_array(json_object_array_get_idx(sweep, 0), "paths");
    g_autoptr(GString) plot = g_string_new(NULL);
    size_t n = 0;
    for (size_t i = 0; i < ml_j_len(first); i++) {
        const char *name = ml_j_str(json_object_array_get_idx(first, i), "name");
        g_autoptr(GString) data = g_string_new(NULL);
        bool any = false;
        for (size_t k = 0; k < steps; k++) {
            struct json_object *p = ml_j_path_named(json_object_array_get_idx(sweep, k), name);
            g_string_append_printf(data, "%zu", k);
            put_number(data, measured(p) ? p : NULL, "median_bits_per_second", 1e-6);
            g_string_append(data, "\n");
            any = any || measured(p);
        }
        if (!any)
            continue;
        g_string_append_printf(s, "$s%zu << EOD\n%sEOD\n", i, data->str);
        g_string_append_printf(plot, "%s$s%zu using 1:2 with linespoints pt 7 ps 0.8 title ",
                               n ? ", " : "", i);
        put_quoted(plot, name);
        n++;
    }
    if (!n)
        return false;
    head(s, "Median throughput at each step of the WAN sweep, Mbit/s", "Mbit/s");
    g_string_append(s, "set xlabel 'WAN profiles, in the order measured'\nset logscale y\n"
                       "set xtics (");
    for (size_t k = 0; k < steps; k++) {
        if (k)
            g_string_append(s, ", ");
        put_quoted(s, ml_j_str(json_object_array_get_idx(sweep, k), "step"));
        g_string_append_printf(s, " %zu", k);
    }
    g_string_append_printf(s, ")\nset xrange [-0.3:%g]\nplot %s\n", steps - 0.7, plot->str);
    return true;
}

char *ml_plot_script(struct json_object *results, const char *name)
{
    struct json_object *paths = ml_j_array(results, "paths");
    GString *s = g_string_new(NULL);
    bool ok = false;
    if (strcmp(name, "throughput") == 0)
        ok = script_throughput(s, paths);
    else if (strcmp(name, "hub-series") == 0)
        ok = script_series(s, paths);
    else if (strcmp(name, "rtt") == 0)
        ok = script_rtt(s, results, paths);
    else if (strcmp(name, "cpu") == 0)
        ok = script_cpu(s, results, paths);
    else if (strcmp(name, ML_PLOT_SWEEP) == 0)
        ok = script_sweep(s, results);
    return g_string_free(s, !ok);
}

static char *draw(const char *gnuplot, const char *dir, const char *name, const char *script,
                  char **ret_missing)
{
    g_autofree char *file = g_strdup_printf("%s/%s.gp", dir, name);
    g_autoptr(GError) err = NULL;
    if (!g_file_set_contents(file, script, -1, &err)) {
        *ret_missing = g_strdup_printf("cannot write its gnuplot script: %s", err->message);
        return NULL;
    }
    const char *argv[] = {gnuplot, file, NULL};
    struct ml_proc proc = {0};
    bool started = ml_proc_run(argv, PLOT_TIMEOUT_S, &proc, &err);
    g_unlink(file);
    char *svg = NULL;
    if (!started)
        *ret_missing = g_strdup_printf("%s could not be started: %s; install gnuplot-nox", gnuplot,
                                       err->message);
    else if (proc.timed_out || proc.interrupted)
        *ret_missing = g_strdup_printf("%s did not finish in %.0f s", gnuplot, PLOT_TIMEOUT_S);
    else if (!WIFEXITED(proc.status) || WEXITSTATUS(proc.status) != 0 || !strstr(proc.out, "<svg"))
        *ret_missing = g_strdup_printf("%s failed: %s", gnuplot,
                                       proc.err && *g_strstrip(proc.err) ? proc.err : "no SVG");
    else
        svg = g_strdup(strstr(proc.out, "<svg")); /* inline-ready: no XML declaration */
    ml_proc_clear(&proc);
    return svg;
}

void ml_plots_none(struct ml_plots *ret, const char *why)
{
    *ret = (struct ml_plots){.n = ML_PLOTS_GNUPLOT};
    for (size_t i = 0; i < ML_PLOTS_GNUPLOT; i++) {
        ret->plot[i].name = g_strdup(plots[i].name);
        ret->plot[i].title = g_strdup(plots[i].title);
        ret->plot[i].missing = g_strdup(why);
    }
}

/* A dataplane's name as part of a file name: letters, digits and '-' only. */
static char *file_safe(const char *name)
{
    char *s = g_ascii_strdown(name, -1);
    for (char *p = s; *p; p++)
        if (!g_ascii_isalnum(*p) && *p != '-')
            *p = '_';
    return s;
}

void ml_plots_nat(struct json_object *results, struct ml_plots *p)
{
    struct json_object *matrix = ml_j_array(results, "nat_matrix");
    g_autoptr(GPtrArray) dataplanes = ml_nat_dataplanes_of(matrix);
    for (guint i = 0; i < dataplanes->len && p->n < ML_PLOTS_MAX; i++) {
        const char *dp = g_ptr_array_index(dataplanes, i);
        g_autofree char *safe = file_safe(dp);
        struct ml_plot *plot = &p->plot[p->n++];
        /* the title goes into report.md's "![title](...)" as it is: the file-safe name, which
         * for every name the schema admits is the name itself */
        *plot = (struct ml_plot){
            .name = g_strdup_printf("nat-matrix-%s", safe),
            .title = g_strdup_printf("NAT matrix, %s: green direct (seconds to the first direct "
                                     "packet), amber relay, red failed, grey not run",
                                     safe),
            .svg = ml_nat_svg(matrix, dp),
            .nat_dataplane = g_strdup(dp),
        };
        if (!plot->svg)
            plot->missing = g_strdup("no cell to draw");
    }
}

const struct ml_plot *ml_plots_nat_of(const struct ml_plots *p, const char *dataplane)
{
    for (size_t i = 0; p && i < p->n; i++)
        if (g_strcmp0(p->plot[i].nat_dataplane, dataplane) == 0)
            return &p->plot[i];
    return NULL;
}

/* The WAN sweep's picture, when results has a sweep: drawn with gnuplot in dir, or missing for
 * why. */
static void add_sweep(struct json_object *results, const char *gnuplot, const char *dir,
                      const char *why, struct ml_plots *p)
{
    if (ml_j_len(ml_j_array(results, "wan_sweep")) < 2 || p->n >= ML_PLOTS_MAX)
        return;
    struct ml_plot *plot = &p->plot[p->n++];
    *plot = (struct ml_plot){
        .name = g_strdup(ML_PLOT_SWEEP),
        .title = g_strdup("Median throughput of each path at each step of the WAN sweep, Mbit/s"),
        .sweep = true,
    };
    g_autofree char *script = ml_plot_script(results, ML_PLOT_SWEEP);
    if (why)
        plot->missing = g_strdup(why);
    else if (!script)
        plot->missing = g_strdup("no path measured at any step");
    else
        plot->svg = draw(gnuplot, dir, plot->name, script, &plot->missing);
}

const struct ml_plot *ml_plots_sweep_of(const struct ml_plots *p)
{
    for (size_t i = 0; p && i < p->n; i++)
        if (p->plot[i].sweep)
            return &p->plot[i];
    return NULL;
}

void ml_plots_draw(struct json_object *results, const char *gnuplot, struct ml_plots *ret)
{
    g_autofree char *found = g_find_program_in_path(gnuplot ? gnuplot : "gnuplot");
    if (!found) {
        g_autofree char *why = g_strdup_printf(
            "%s is not installed; install gnuplot-nox and run 'meshlab report RUN_DIR'",
            gnuplot ? gnuplot : "gnuplot");
        ml_plots_none(ret, why);
        add_sweep(results, NULL, NULL, why, ret);
        ml_plots_nat(results, ret);
        return;
    }
    ml_plots_none(ret, NULL);
    g_autoptr(GError) err = NULL;
    g_autofree char *tmpl = ml_leftover_template("plot", "");
    g_autofree char *dir = g_dir_make_tmp(tmpl, &err);
    for (size_t i = 0; i < ML_PLOTS_GNUPLOT; i++) {
        struct ml_plot *p = &ret->plot[i];
        g_autofree char *script = ml_plot_script(results, p->name);
        if (!dir)
            p->missing = g_strdup_printf("no temporary directory: %s", err->message);
        else if (!script)
            p->missing = g_strdup("nothing measured to draw");
        else
            p->svg = draw(found, dir, p->name, script, &p->missing);
    }
    add_sweep(results, found, dir, dir ? NULL : "no temporary directory", ret);
    if (dir)
        g_rmdir(dir);
    ml_plots_nat(results, ret);
}

void ml_plots_clear(struct ml_plots *p)
{
    for (size_t i = 0; i < p->n; i++) {
        g_clear_pointer(&p->plot[i].svg, g_free);
        g_clear_pointer(&p->plot[i].missing, g_free);
        g_clear_pointer(&p->plot[i].name, g_free);
        g_clear_pointer(&p->plot[i].title, g_free);
        g_clear_pointer(&p->plot[i].nat_dataplane, g_free);
    }
    p->n = 0;
}
