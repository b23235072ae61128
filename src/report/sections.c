/* The sections of report.md that read results.json directly rather than through the metrics
 * table: what the CPU costs, whether the hub factor matches the frames' physics, how much the
 * passes vary and whether the host disturbed them, and what all of it means for a VPS. */
#include <math.h>
#include <string.h>

#include "measure/stats.h"
#include "report/render.h"
#include "results/columns.h"
#include "results/month.h"

/* Above this coefficient of variation (%) a figure is flagged as noisy. */
#define CV_WARN_PERCENT 10.0
/* Above this difference (%) between the model and the measurement the physics is flagged. */
#define PHYSICS_FLAG_PERCENT 5.0

static bool is_tcg(struct ml_render *c)
{
    return g_strcmp0(ml_j_str(ml_j_obj(c->r, "environment"), "accelerator"), "tcg") == 0;
}

static bool is_kvm(struct ml_render *c)
{
    return g_strcmp0(ml_j_str(ml_j_obj(c->r, "environment"), "accelerator"), "kvm") == 0;
}

static struct json_object *path_at(struct ml_render *c, size_t i)
{
    return json_object_array_get_idx(c->paths, i);
}

/* What a row of a table of cells (variance, physics) is written with besides its row object:
 * the path, the cell's name and object, and the physics table's "Flagged" list. */
struct cell_row {
    struct json_object *path;
    const char *name;
    struct json_object *obj;
    GString *flags;
};

/* "plain forward-1": the path and its cell. */
static void put_path_cell(GString *s, struct json_object *cell, const struct ml_column *col,
                          void *ctx)
{
    const struct cell_row *at = ctx;
    ml_put_text(s, ml_j_str(at->path, "name"));
    g_string_append(s, " ");
    ml_put_text(s, at->name);
}

/* ---- the busy host ---- */

/* Whether a busy pass's figures (throughput, hub bytes per payload byte) lie within the range of
 * its cell's passes that passed and were not busy: 1 within, 0 outside, -1 fewer than two such
 * passes to judge it by (one pass is no range: CI's quick run at b9ba3cb called every busy pass
 * with a single unflagged replicate "outside"), or no figure. */
static int within_replicates(struct json_object *path, struct json_object *pass)
{
    static const char *const keys[] = {"bits_per_second", "hub_bytes_per_payload_byte"};
    struct json_object *passes = ml_j_array(path, "passes");
    int verdict = -1;
    for (size_t k = 0; k < G_N_ELEMENTS(keys); k++) {
        double v, lo = INFINITY, hi = -INFINITY, x;
        size_t replicates = 0;
        if (!ml_j_num(pass, keys[k], &v))
            continue;
        for (size_t j = 0; j < ml_j_len(passes); j++) {
            struct json_object *q = json_object_array_get_idx(passes, j);
            if (q == pass || g_strcmp0(ml_j_str(q, "cell"), ml_j_str(pass, "cell")) ||
                g_strcmp0(ml_j_str(q, "status"), "ok") || ml_j_bool(ml_j_obj(q, "host"), "busy") ||
                !ml_j_num(q, keys[k], &x))
                continue;
            lo = MIN(lo, x);
            hi = MAX(hi, x);
            replicates++;
        }
        if (replicates < 2)
            return -1;
        if (v < lo || v > hi)
            return 0;
        verdict = 1;
    }
    return verdict;
}

/* The passes of a run on a busy host: all, busy, busy and in the figures (status ok), those of
 * them within their replicates' range (within_replicates), and the busy ones run again. */
struct busy_count {
    size_t total, busy, in_figures, within, repeated;
};

static struct busy_count busy_passes(struct ml_render *c)
{
    struct busy_count n = {0};
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *passes = ml_j_array(path_at(c, i), "passes");
        for (size_t j = 0; j < ml_j_len(passes); j++) {
            struct json_object *p = json_object_array_get_idx(passes, j);
            n.total++;
            if (!ml_j_bool(ml_j_obj(p, "host"), "busy"))
                continue;
            n.busy++;
            if (ml_j_get(p, "run_again_as"))
                n.repeated++;
            else if (!g_strcmp0(ml_j_str(p, "status"), "ok")) {
                n.in_figures++;
                n.within += within_replicates(path_at(c, i), p) == 1;
            }
        }
    }
    return n;
}

/* Whether a figure of the run came from a busy pass whose figures left its replicates' range or
 * had none to be judged by: only then are the run's figures not comparable. */
static bool busy_condemns(struct ml_render *c)
{
    if (!ml_j_bool(c->r, "host_busy"))
        return false;
    struct busy_count n = busy_passes(c);
    return n.in_figures > n.within;
}

/* A run whose host was busy: a WARNING where a busy pass's figure left its replicates' range or
 * had none to be judged by; a note where each lies within it. Either lists the passes whose
 * seconds were named, with the other programs of their worst second where those were read. */
void ml_section_busy_notice(struct ml_render *c)
{
    if (!ml_j_bool(c->r, "host_busy"))
        return;
    struct busy_count n = busy_passes(c);
    if (!busy_condemns(c)) {
        g_string_append_printf(c->s,
                               "> **Note: the host was busy** during %zu of %zu passes (other "
                               "programs' CPU or steal time; see\n"
                               "> Variance and the host).",
                               n.busy, n.total);
        if (n.repeated)
            g_string_append_printf(c->s,
                                   " %s run again at once, and the repeat%s in the figures in "
                                   "%s place.",
                                   n.repeated == 1 ? "That pass was" : "Those passes were",
                                   n.repeated == 1 ? " is" : "s are",
                                   n.repeated == 1 ? "its" : "their");
        if (n.within)
            g_string_append(c->s, n.repeated ? " Each busy pass in the figures has its throughput "
                                               "and hub bytes per payload byte\n> within the "
                                               "range of its cell's passes that were not busy: the "
                                               "figures stand beside them.\n"
                                             : " Each of those passes' throughput and hub bytes "
                                               "per payload byte lies\n> within the range of its "
                                               "cell's passes that were not busy: the figures "
                                               "stand beside them.\n");
        else
            g_string_append(c->s, "\n");
    } else
        g_string_append_printf(
            c->s,
            "> **WARNING: the host was busy** during %zu of %zu passes (other "
            "programs' CPU or steal time; see\n"
            "> Variance and the host). The figures of this run are not "
            "comparable with other runs, and\n"
            "> differences between its paths may be the host's, not the paths'.\n",
            n.busy, n.total);
    /* The seconds each busy pass names (results.json host.busy_flag), where it names them. */
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *passes = ml_j_array(path_at(c, i), "passes");
        for (size_t j = 0; j < ml_j_len(passes); j++) {
            struct json_object *p = json_object_array_get_idx(passes, j);
            const char *flag = ml_j_str(ml_j_obj(p, "host"), "busy_flag");
            if (!flag)
                continue;
            double seq = 0;
            ml_j_num(p, "seq", &seq);
            g_string_append(c->s, "> - ");
            ml_put_text(c->s, ml_j_str_or(path_at(c, i), "name", "?"));
            g_string_append_printf(c->s, " pass seq %.0f (", seq);
            ml_put_text(c->s, ml_j_str_or(p, "cell", "?"));
            g_string_append(c->s, "): ");
            ml_put_text(c->s, flag);
            double again = 0;
            if (ml_j_num(p, "run_again_as", &again)) {
                g_string_append_printf(c->s, "; run again at once as seq %.0f, in no figure\n",
                                       again);
                continue;
            }
            if (g_strcmp0(ml_j_str(p, "status"), "ok")) {
                g_string_append(c->s, "; failed, in no figure\n");
                continue;
            }
            int w = within_replicates(path_at(c, i), p);
            g_string_append(c->s, w == 1 ? "; its figures within the range of its cell's unflagged "
                                           "passes\n"
                                  : w == 0
                                      ? "; **its figures outside the range of its cell's unflagged "
                                        "passes**\n"
                                      : "; fewer than two unflagged passes of its cell to judge it "
                                        "by\n");
        }
    }
    g_string_append(c->s, "\n");
}

/* ---- pooled round trips ---- */

/* "12.3 (11.9 to 12.8)": a pooled percentile and its interval, or why there is none. */
static void put_pooled(GString *s, struct json_object *pooled, const char *key)
{
    g_autofree char *ms = g_strdup_printf("%s_ms", key);
    g_autofree char *lost = g_strdup_printf("%s_lost", key);
    g_autofree char *ci = g_strdup_printf("%s_ci95", key);
    if (ml_j_bool(pooled, lost)) {
        g_string_append(s, "undefined: a lost ping");
        return;
    }
    ml_put_sig(s, pooled, ms, 3);
    struct json_object *i = ml_j_obj(pooled, ci);
    double lo;
    if (!ml_j_num(i, "low", &lo)) {
        g_string_append(s, " (no interval: too few pings)");
        return;
    }
    g_string_append(s, " (");
    ml_put_significant(s, lo, 3);
    g_string_append(s, " to ");
    if (ml_j_bool(i, "high_censored"))
        g_string_append(s, "a lost ping");
    else
        ml_put_sig(s, i, "high", 3);
    g_string_append(s, ")");
}

void ml_section_pooled_rtt(struct ml_render *c)
{
    GString *s = c->s;
    bool any = false;
    for (size_t i = 0; i < ml_j_len(c->paths) && !any; i++) {
        struct json_object *cells = ml_j_obj(path_at(c, i), "cells");
        if (!cells)
            continue;
        json_object_object_foreach(cells, name, cell)
        {
            (void)name;
            any |= ml_j_obj(cell, "rtt_loaded_pooled") != NULL;
        }
    }
    if (!any)
        return;
    g_string_append(s, "### Round trips under load, every ping of a cell pooled\n\n"
                       "Each cell's pings of its passes that passed, together, the lost ones "
                       "counted above every reply; in\nparentheses the 95 % interval from order "
                       "statistics (distribution-free; narrower than the truth,\nsince "
                       "consecutive pings under load are not independent). p99 needs ");
    ml_put_fixed(s, (double)ml_pooled_quantile_min_n(99), 0);
    g_string_append(s, " pings or more for one.\n\n"
                       "| Path, cell | Pings (lost) | p50 ms | p99 ms |\n|---|---:|---:|---:|\n");
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        if (c->st[i] != ML_PATH_MEASURED)
            continue;
        struct json_object *cells = ml_j_obj(path_at(c, i), "cells");
        if (!cells)
            continue;
        json_object_object_foreach(cells, name, cell)
        {
            struct json_object *pooled = ml_j_obj(cell, "rtt_loaded_pooled");
            if (!pooled)
                continue;
            g_string_append(s, "| ");
            ml_put_text(s, ml_j_str_or(path_at(c, i), "name", ML_DASH));
            g_string_append(s, " ");
            ml_put_text(s, name);
            g_string_append(s, " | ");
            double n = 0, lost = 0;
            ml_j_num(pooled, "n", &n);
            ml_j_num(pooled, "lost", &lost);
            ml_put_fixed(s, n, 0);
            g_string_append(s, " (");
            ml_put_fixed(s, lost, 0);
            g_string_append(s, ") | ");
            put_pooled(s, pooled, "p50");
            g_string_append(s, " | ");
            put_pooled(s, pooled, "p99");
            g_string_append(s, " |\n");
        }
    }
    g_string_append(s, "\n");
}

/* ---- CPU cost ---- */

struct ranked {
    size_t index;
    bool free;  /* the hub carries none of its traffic */
    double hub; /* hub busy s above idle per GB; NAN when unknown */
};

/* Cheapest first: a path that costs the hub nothing, then the known figures, then the unknown. */
static gint by_hub_cpu(gconstpointer a, gconstpointer b)
{
    const struct ranked *x = a, *y = b;
    if (x->free != y->free)
        return x->free ? -1 : 1;
    if (isnan(x->hub) != isnan(y->hub))
        return isnan(x->hub) ? 1 : -1;
    if (!isnan(x->hub) && x->hub != y->hub)
        return x->hub < y->hub ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void put_guest_cpu(GString *s, struct json_object *cell, const char *guest)
{
    ml_put_sig(s, ml_j_obj(ml_j_obj(cell, "cpu_s_per_gb"), guest), "busy_above_idle_s_per_gb", 3);
}

/* Every "guest: {daemon: value}" of o, one after another: "GUEST DAEMON 1.23" (CPU s per GB) or
 * "DAEMON on the GUEST 1234 KiB" (memory); `none` when there is none. */
static void put_guest_daemons(GString *s, struct json_object *o, bool memory, const char *none)
{
    bool any = false;
    if (!json_object_is_type(o, json_type_object)) {
        g_string_append(s, none);
        return;
    }
    json_object_object_foreach(o, guest, daemons)
    {
        if (!json_object_is_type(daemons, json_type_object))
            continue;
        json_object_object_foreach(daemons, name, v)
        {
            double x;
            if (!ml_j_value_num(v, &x))
                continue;
            g_string_append(s, any ? ", " : "");
            ml_put_text(s, memory ? name : guest);
            g_string_append(s, memory ? " on the " : " ");
            ml_put_text(s, memory ? guest : name);
            g_string_append(s, " ");
            if (memory) {
                ml_put_fixed(s, x, 0);
                g_string_append(s, " KiB");
            } else {
                ml_put_significant(s, x, 3);
            }
            any = true;
        }
    }
    if (!any)
        g_string_append(s, none);
}

static void put_daemons(GString *s, struct json_object *cell)
{
    put_guest_daemons(s, ml_j_obj(cell, "daemons_cpu_above_idle_s_per_gb"), false, ML_DASH);
}

/* A row of the CPU table: a path, its rank, and the cells its figures come from. */
struct cpu_row {
    guint rank;
    struct json_object *fixed, *full;
};

static void put_rank(GString *s, struct json_object *p, const struct ml_column *col, void *ctx)
{
    g_string_append_printf(s, "%u", ((const struct cpu_row *)ctx)->rank);
}

static void put_cpu_fixed(GString *s, struct json_object *p, const struct ml_column *col, void *ctx)
{
    put_guest_cpu(s, ((const struct cpu_row *)ctx)->fixed, col->key);
}

static void put_cpu_full(GString *s, struct json_object *p, const struct ml_column *col, void *ctx)
{
    put_guest_cpu(s, ((const struct cpu_row *)ctx)->full, col->key);
}

static void put_cpu_daemons(GString *s, struct json_object *p, const struct ml_column *col,
                            void *ctx)
{
    const struct cpu_row *at = ctx;
    put_daemons(s, at->fixed ? at->fixed : at->full);
}

/* Rank, path, each guest's s/GB at the fixed rate, then at full speed, the daemons'. The
 * headers are kept in headers. */
static GArray *cpu_columns(struct json_object *guests, GPtrArray *headers)
{
    GArray *cols = g_array_new(false, true, sizeof(struct ml_column));
    const struct ml_column rank = {.header = "Rank", .right = true, .put = put_rank};
    const struct ml_column path = ML_COL_TEXT("Path", "name", NULL);
    g_array_append_val(cols, rank);
    g_array_append_val(cols, path);
    for (int pass = 0; pass < 2; pass++)
        for (size_t g = 0; g < ml_j_len(guests); g++) {
            const char *name = ml_j_str_or(json_object_array_get_idx(guests, g), "name", "?");
            char *header = g_strdup_printf("%s s/GB %s", name, pass == 0 ? "fixed" : "full");
            g_ptr_array_add(headers, header);
            const struct ml_column each =
                ML_COL_NUM_BY(header, name, pass == 0 ? put_cpu_fixed : put_cpu_full);
            g_array_append_val(cols, each);
        }
    const struct ml_column daemons = {.header = "Daemons s/GB (fixed)", .put = put_cpu_daemons};
    g_array_append_val(cols, daemons);
    return cols;
}

static bool quiet(struct json_object *p);

/* What the proof cost the hub on one path, over its passes of the headline cell that passed:
 * the medians of the views in each pass's window, of their CPU on the hub (cpu.HUB.proof_s) and
 * of the hub's CPU above idle with them. False where the passes did not price it (older
 * results, an unknown view cost). */
static bool proof_figures(struct json_object *p, const char *cell, double *ret_views,
                          double *ret_proof, double *ret_share)
{
    const char *hub = ml_j_str(p, "hub");
    struct json_object *passes = ml_j_array(p, "passes");
    size_t n = 0;
    g_autofree double *views = g_new(double, ml_j_len(passes) + 1);
    g_autofree double *proof = g_new(double, ml_j_len(passes) + 1);
    g_autofree double *share = g_new(double, ml_j_len(passes) + 1);
    size_t n_share = 0;
    for (size_t k = 0; hub && cell && k < ml_j_len(passes); k++) {
        struct json_object *x = json_object_array_get_idx(passes, k);
        struct json_object *g = ml_j_obj(ml_j_obj(x, "cpu"), hub);
        double v, pr, above;
        if (g_strcmp0(ml_j_str(x, "cell"), cell) || g_strcmp0(ml_j_str(x, "status"), "ok") ||
            !ml_j_num(x, "proof_views", &v) || !ml_j_num(g, "proof_s", &pr))
            continue;
        views[n] = v;
        proof[n++] = pr;
        if (ml_j_num(g, "busy_above_idle_s", &above) && above + pr > 0)
            share[n_share++] = 100 * pr / (above + pr);
    }
    if (n == 0)
        return false;
    *ret_views = ml_median(views, n);
    *ret_proof = ml_median(proof, n);
    *ret_share = n_share ? ml_median(share, n_share) : NAN;
    return true;
}

/* Per path, what its views cost the hub: each pass's proof that it took its path, priced by
 * views read after the path's idle window (idle.view_cost_s, the median of
 * idle.view_cost_views) and kept out of the figures above. */
static void put_proof(struct ml_render *c, const char *head)
{
    GString *line = g_string_new(NULL);
    /* how many views priced the proof (idle.view_cost_views): their number where the paths
     * named agree on it, 0 where one lacks it (older results) or they differ */
    int64_t priced_by = -1;
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        if (c->st[i] != ML_PATH_MEASURED)
            continue;
        struct json_object *p = path_at(c, i);
        double views, proof, share;
        if (!proof_figures(p, head, &views, &proof, &share))
            continue;
        int64_t k = ml_j_int(ml_j_obj(p, "idle"), "view_cost_views");
        if (priced_by != 0)
            priced_by = k >= 1 && (priced_by < 0 || k == priced_by) ? k : 0;
        g_string_append(line, line->len ? "; " : "");
        ml_put_text(line, ml_j_str(p, "name"));
        g_string_append_printf(line, " %.0f view%s, ", views, views == 1 ? "" : "s");
        ml_put_significant(line, proof, 2);
        g_string_append(line, " s");
        /* A hub that carries none of the path's traffic has nothing above idle to share. */
        if (quiet(p)) {
            g_string_append(line, " (the hub carries none of its traffic)");
        } else if (isfinite(share)) {
            g_string_append(line, " (");
            ml_put_significant(line, share, 2);
            g_string_append(line, " % of the hub's CPU above idle with them)");
        }
    }
    if (line->len) {
        g_string_append(c->s, "What the proof cost the hub: each pass reads its path's own view "
                              "(the dataplane's state and the\nclient's route) through its "
                              "transfer, to show the path it took; ");
        int n = priced_by > 0 ? (int)priced_by : 0;
        if (n > 1)
            g_string_append_printf(c->s,
                                   "%d views, read after the path's\nidle window, "
                                   "priced it on each guest (their median), ",
                                   n);
        else if (n == 1)
            g_string_append(c->s, "one view, read after the path's\nidle window, priced it on "
                                  "each guest, ");
        else
            g_string_append(c->s, "views read after the path's\nidle window priced it on each "
                                  "guest, ");
        g_string_append(c->s, "and the views are kept out of the\nseconds above. Per pass of\n");
        ml_put_text(c->s, head);
        g_string_append(c->s, ", the medians of the passes that passed: ");
        g_string_append_len(c->s, line->str, (gssize)line->len);
        g_string_append(c->s, ".\n\n");
    }
    g_string_free(line, TRUE);
}

void ml_section_cpu(struct ml_render *c)
{
    GString *s = c->s;
    struct json_object *guests = ml_j_array(c->r, "guests");
    const char *head = ml_results_headline_cell(c->r);
    g_autoptr(GArray) rank = g_array_new(false, false, sizeof(struct ranked));
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        if (c->st[i] != ML_PATH_MEASURED)
            continue;
        struct json_object *p = path_at(c, i);
        struct json_object *fixed = ml_results_fixed_cell(p, NULL);
        struct json_object *cell = fixed  ? fixed
                                   : head ? ml_j_obj(ml_j_obj(p, "cells"), head)
                                          : NULL;
        struct ranked r = {i, g_strcmp0(ml_j_str(p, "hub_role"), "quiet") == 0, NAN};
        ml_j_num(ml_j_obj(ml_j_obj(cell, "cpu_s_per_gb"), ml_j_str(p, "hub")),
                 "busy_above_idle_s_per_gb", &r.hub);
        g_array_append_val(rank, r);
    }
    if (rank->len == 0)
        return;
    g_array_sort(rank, by_hub_cpu);

    g_string_append(s, "## CPU cost\n\n");
    g_string_append(s, "Busy CPU seconds (user + system + softirq, from each guest's /proc/stat) "
                       "above what the guest\nspends idle (its rate over the idle seconds before "
                       "the passes, the same pings running), per GB\nof payload (— where that is "
                       "under a tenth of its busy time: lost in the idle work), at the fixed\n"
                       "offered rate and at full speed (the ");
    ml_put_text(s, head ? head : "headline");
    g_string_append(
        s, " cell), ranked by the hub's CPU per GB (the fixed rate's where there\n"
           "is one), cheapest first; a path whose hub carries none of its traffic "
           "costs the hub nothing and\nranks first. Daemons: those of the path's own dataplane, "
           "their CPU seconds per GB above their idle\nrate (measured with the guests'), at the "
           "fixed rate; another dataplane's daemons are never counted.\n\n");
    if (is_tcg(c))
        g_string_append(s, "> Under TCG this is an emulation cost: QEMU translates every guest "
                           "instruction, so these seconds\n"
                           "> are comparable only between paths of one run, never with a KVM "
                           "host, a VPS or another run;\n"
                           "> and between paths, each cipher costs what its code costs the "
                           "emulator (the guest CPU the\n"
                           "> environment names decides which code runs: docs/performance.md, "
                           "the guests' CPU under TCG).\n\n");

    g_autoptr(GPtrArray) headers = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GArray) cols = cpu_columns(guests, headers);
    const struct ml_column *col = (const struct ml_column *)(void *)cols->data;
    ml_columns_head(s, col, cols->len);
    for (guint k = 0; k < rank->len; k++) {
        struct ranked *r = &g_array_index(rank, struct ranked, k);
        struct json_object *p = path_at(c, r->index);
        struct cpu_row at = {k + 1, ml_results_fixed_cell(p, NULL),
                             head ? ml_j_obj(ml_j_obj(p, "cells"), head) : NULL};
        ml_columns_row(s, col, cols->len, p, &at);
    }
    g_string_append(s, "\n");
    put_proof(c, head);
}

/* ---- physics ---- */

/* A path whose hub should carry none of its traffic (a direct path, or one found direct). */
static bool quiet(struct json_object *p)
{
    return g_strcmp0(ml_j_str(p, "hub_role"), "quiet") == 0;
}

/* A cell's physics: its own `expected`, or, in results of before every cell had one, the path's
 * for the headline cell. */
static struct json_object *cell_physics(struct json_object *p, const char *cell,
                                        struct json_object *cell_obj)
{
    if (ml_j_has(cell_obj, "expected"))
        return ml_j_get(cell_obj, "expected");
    return !g_strcmp0(cell, ml_j_str(p, "headline_cell")) ? ml_j_obj(p, "expected") : NULL;
}

/* The factor the physics measured for a cell (the hub's bytes less the probe's, pooled), or the
 * cell's median where results predate it. */
static bool physics_measured(struct json_object *e, struct json_object *cell, double *ret)
{
    return ml_j_num(e, "measured_hub_bytes_per_payload_byte", ret) ||
           ml_j_num(cell, "median_hub_bytes_per_payload_byte", ret);
}

/* "wireguard-hub forward-1 measured 2.23 at 5.85 data segments per ACK, between its floor 2.18
 * (data only) and its ceiling 2.39 (an ACK per segment)": this run's own figures. The ceiling is
 * the one the per-second judge holds each window to (ml_physics_bounds). */
static void put_physics_sentence(GString *s, struct json_object *p, const char *cell,
                                 struct json_object *e, struct json_object *cell_obj)
{
    double m, lo, hi, k;
    /* Results written before the model counted on the guests' taps (no acks_from) carry the
     * ceiling they were computed with: an ACK per two segments. */
    const char *per = ml_j_has(e, "acks_from") ? "an ACK per segment" : "an ACK per two segments";
    if (!physics_measured(e, cell_obj, &m) ||
        !ml_j_num(e, "floor_hub_bytes_per_payload_byte", &lo) ||
        !ml_j_num(e, "ceiling_hub_bytes_per_payload_byte", &hi))
        return;
    g_string_append(s, "- ");
    ml_put_text(s, ml_j_str(p, "name"));
    g_string_append(s, " ");
    ml_put_text(s, cell);
    g_string_append(s, " measured ");
    ml_put_significant(s, m, 3);
    if (ml_j_num(e, "ack_ratio", &k)) {
        g_string_append(s, " at ");
        ml_put_significant(s, k, 3);
        g_string_append(s, " data segments per ACK");
    } else {
        g_string_append(s, " with no ACK counted");
    }
    if (m < lo) {
        g_string_append(s, ", below its floor ");
        ml_put_significant(s, lo, 3);
        g_string_append_printf(s, " (data only; its ceiling, %s, is ", per);
        ml_put_significant(s, hi, 3);
        g_string_append(s, "): part of the payload went around the hub.\n");
    } else if (m > hi) {
        g_string_append(s, ", above its ceiling ");
        ml_put_significant(s, hi, 3);
        g_string_append_printf(s, " (%s; its floor, data only, is ", per);
        ml_put_significant(s, lo, 3);
        g_string_append_printf(s,
                               "): more than its data and %s, which is what is no payload "
                               "(retransmits, the tail sent and never received)%s or a detour.\n",
                               per, ml_j_has(e, "acks_from") ? "" : ", quick ACKs");
    } else {
        g_string_append(s, ", between its floor ");
        ml_put_significant(s, lo, 3);
        g_string_append(s, " (data only) and its ceiling ");
        ml_put_significant(s, hi, 3);
        g_string_append_printf(s, " (%s): between those the ACKs move it by at most ", per);
        ml_put_fixed(s, (hi - lo) / lo * 100, 1);
        g_string_append(s, " %.\n");
    }
}

/* The physics table's cells that need more than the row's figures (its ctx: the path, the
 * cell's name and object, and the "Flagged" list the Differs column adds to). */
static void put_expected(GString *s, struct json_object *e, const struct ml_column *col, void *ctx)
{
    const struct cell_row *at = ctx;
    if (e)
        ml_put_sig(s, e, col->key, 3);
    else
        g_string_append(s, quiet(at->path) ? "0 (direct)" : ML_DASH); /* older results */
}

static void put_measured(GString *s, struct json_object *e, const struct ml_column *col, void *ctx)
{
    const struct cell_row *at = ctx;
    double m;
    if (physics_measured(e, at->obj, &m))
        ml_put_significant(s, m, 3);
    else
        g_string_append(s, ML_DASH);
}

static void put_differs(GString *s, struct json_object *e, const struct ml_column *col, void *ctx)
{
    const struct cell_row *at = ctx;
    double d = NAN;
    if (!ml_j_num(e, col->key, &d)) {
        g_string_append(s, ML_DASH);
        return;
    }
    bool flag = ml_j_bool(e, "flag") || fabs(d) > PHYSICS_FLAG_PERCENT;
    if (!flag) {
        ml_put_fixed(s, d, 1);
        return;
    }
    g_string_append(s, "**");
    ml_put_fixed(s, d, 1);
    g_string_append(s, "**");
    GString *flags = at->flags;
    g_string_append(flags, "- **");
    ml_put_text(flags, ml_j_str(at->path, "name"));
    g_string_append(flags, " ");
    ml_put_text(flags, at->name);
    g_string_append(flags, "** differs from its model by ");
    ml_put_fixed(flags, d, 1);
    /* The explanation follows the sign: more on the hub than the model counts, or less. */
    if (d > 0)
        g_string_append(flags, " % (more than 5 %): the hub carries what the model "
                               "does not count (a detour, keepalives,\n  another flow) "
                               "or the model's frame sizes are too small; its passes' "
                               "series show which seconds.\n");
    else
        g_string_append(flags, " % (more than 5 % under it): the hub carried less than the "
                               "model counts: part of the payload\n  went around the hub, or "
                               "the model priced frames that never reached it (a tail the "
                               "sender's\n  tap did not bound) or frame sizes that are too "
                               "large; its passes' series show which seconds.\n");
}

static const struct ml_column physics_columns[] = {
    {.header = "Path, cell", .put = put_path_cell},
    ML_COL_NUM_BY("Expected hub bytes / payload byte", "hub_bytes_per_payload_byte", put_expected),
    ML_COL_SIG("Floor (data only)", "floor_hub_bytes_per_payload_byte", 3),
    ML_COL_SIG("Ceiling", "ceiling_hub_bytes_per_payload_byte", 3),
    ML_COL_NUM_BY("Measured hub bytes / payload byte", NULL, put_measured),
    ML_COL_NUM_BY("Differs %", "differs_percent", put_differs),
    ML_COL_SIG("ACK ratio (segments/ACK)", "ack_ratio", 3),
    ML_COL_PAIR("Data / ACK frame bytes", "data_frame_bytes", "ack_frame_bytes", 0),
    ML_COL_FIXED("MSS bytes", "mss_bytes", 0),
};

void ml_section_physics(struct ml_render *c)
{
    GString *s = c->s;
    g_string_append(s, "## Physics\n\n");
    g_string_append(
        s, "What the hub's NIC should carry per payload byte, from the frame sizes: a relayed "
           "byte crosses it\ntwice (in and out), in data frames and in the ACKs that answer "
           "them. The data segments are the\npayload in full segments; the ACKs are counted "
           "on the receiving guest's own tap and the tail\nsent and never received is bounded "
           "by what the sending guest's tap carried, not by the hub the\nmodel is checked "
           "against (where a guest shares the hub's tap, or the frames are an average, the\n"
           "hub's packets beyond the data stand in); the measured factor leaves the latency "
           "probe's bytes\nout. How many data segments one ACK answers (the ACK ratio) depends "
           "on how much the receiver\ncoalesces (GRO, delayed ACKs), and so on CPU speed. "
           "With no ACK at all the factor would be the\nfloor; with an ACK for every segment, "
           "the ceiling, which the per-second judge holds each window\nto as well; only what "
           "is no payload (retransmits, the tail sent and never received) or a detour\nputs it "
           "above. A direct path should put nothing on the hub.");
    /* Older results: their ceilings and ACKs were computed otherwise, and say so. */
    bool older = false;
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *p = path_at(c, i);
        const char *head = ml_j_str(p, "headline_cell");
        struct json_object *e =
            cell_physics(p, head, head ? ml_j_obj(ml_j_obj(p, "cells"), head) : NULL);
        older |= c->st[i] == ML_PATH_MEASURED && e && !ml_j_has(e, "acks_from");
    }
    if (older)
        g_string_append(s, "\nThese results were written by an older meshlab, whose models "
                           "counted the ACKs on the hub's\npackets and set the ceiling at an ACK "
                           "per two segments.");
    g_string_append(s, "\n\n");
    g_autoptr(GString) said = g_string_new(NULL);
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *p = path_at(c, i);
        const char *head = ml_j_str(p, "headline_cell");
        struct json_object *cell = head ? ml_j_obj(ml_j_obj(p, "cells"), head) : NULL;
        struct json_object *e = cell_physics(p, head, cell);
        if (c->st[i] == ML_PATH_MEASURED && e)
            put_physics_sentence(said, p, head, e, cell);
    }
    if (said->len) {
        g_string_append(s, "In this run");
        if (is_tcg(c) || is_kvm(c))
            g_string_append(s, is_tcg(c) ? " (under TCG)" : " (on KVM)");
        g_string_append_printf(s, ", in the headline cells:\n\n%s\n", said->str);
    }
    ml_columns_head(s, physics_columns, G_N_ELEMENTS(physics_columns));
    g_autoptr(GString) flags = g_string_new(NULL);
    g_autoptr(GString) models = g_string_new(NULL);
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        if (c->st[i] != ML_PATH_MEASURED)
            continue;
        struct json_object *p = path_at(c, i);
        struct json_object *cells = ml_j_obj(p, "cells");
        if (!cells)
            continue;
        json_object_object_foreach(cells, cell, cell_obj)
        {
            struct json_object *e = cell_physics(p, cell, cell_obj);
            struct cell_row at = {p, cell, cell_obj, flags};
            ml_columns_row(s, physics_columns, G_N_ELEMENTS(physics_columns), e, &at);
            if (ml_j_str(e, "model")) {
                g_string_append(models, "- ");
                ml_put_text(models, ml_j_str(p, "name"));
                g_string_append(models, " ");
                ml_put_text(models, cell);
                g_string_append(models, ": ");
                ml_put_text(models, ml_j_str(e, "model"));
                g_string_append(models, "\n");
            }
        }
    }
    g_string_append(s, "\n");
    if (models->len)
        g_string_append_printf(s, "The models:\n\n%s\n", models->str);
    if (flags->len)
        g_string_append_printf(s, "Flagged:\n\n%s\n", flags->str);
}

/* ---- variance and the host ---- */

static void put_cv(GString *s, struct json_object *cell, const struct ml_column *col, void *ctx)
{
    double v;
    if (!ml_j_num(cell, col->key, &v)) {
        g_string_append(s, ML_DASH);
        return;
    }
    if (v > CV_WARN_PERCENT)
        g_string_append(s, "**WARNING** ");
    ml_put_fixed(s, v, 1);
}

/* The highest value of host.KEY over the passes of one cell. */
static void put_host_max(GString *s, struct json_object *cell_obj, const struct ml_column *col,
                         void *ctx)
{
    const struct cell_row *at = ctx;
    const char *cell = at->name, *key = col->key;
    struct json_object *passes = ml_j_array(at->path, "passes");
    double max = NAN;
    for (size_t i = 0; i < ml_j_len(passes); i++) {
        struct json_object *p = json_object_array_get_idx(passes, i);
        double v;
        if (g_strcmp0(ml_j_str(p, "cell"), cell) == 0 && ml_j_num(ml_j_obj(p, "host"), key, &v))
            max = isnan(max) || v > max ? v : max;
    }
    if (isnan(max))
        g_string_append(s, ML_DASH);
    else
        ml_put_fixed(s, max, 1);
}

/* ---- the order the passes ran in ---- */

/* Whether a cell runs at the fixed rate: its rate in the profile's matrix, else its name. */
static bool cell_fixed(struct ml_render *c, const char *cell)
{
    struct json_object *matrix = ml_j_array(ml_j_obj(c->r, "profile"), "matrix");
    for (size_t i = 0; cell && i < ml_j_len(matrix); i++) {
        struct json_object *m = json_object_array_get_idx(matrix, i);
        if (g_strcmp0(ml_j_str(m, "cell"), cell) == 0)
            return g_strcmp0(ml_j_str(m, "rate"), "fixed") == 0;
    }
    return cell && g_str_has_suffix(cell, "-fixed");
}

static void add_unique(GPtrArray *a, const char *name)
{
    for (guint i = 0; i < a->len; i++)
        if (g_strcmp0(g_ptr_array_index(a, i), name) == 0)
            return;
    g_ptr_array_add(a, (gpointer)name);
}

static bool holds(GPtrArray *a, const char *name)
{
    for (guint i = 0; i < a->len; i++)
        if (g_strcmp0(g_ptr_array_index(a, i), name) == 0)
            return true;
    return false;
}

/* "a", "a and b", "a, b and c". */
static void put_names(GString *s, GPtrArray *names)
{
    for (guint i = 0; i < names->len; i++) {
        g_string_append(s, i == 0 ? "" : i + 1 == names->len ? " and " : ", ");
        ml_put_text(s, g_ptr_array_index(names, i));
    }
}

/* A block of the order: passes whose round never goes back (a sweep of one group of paths). */
struct block {
    size_t from, to; /* indices into order, inclusive */
    GPtrArray *paths, *cells;
    int rounds;
    bool full, fixed;
    bool same_order; /* every round ran its paths in the same order */
};

static const char *entry_str(struct json_object *order, size_t i, const char *key)
{
    return ml_j_str_or(json_object_array_get_idx(order, i), key, "?");
}

static int entry_round(struct json_object *order, size_t i)
{
    double r = 0;
    return ml_j_num(json_object_array_get_idx(order, i), "round", &r) ? (int)r : 0;
}

static long entry_seq(struct json_object *order, size_t i)
{
    double v = (double)i + 1;
    ml_j_num(json_object_array_get_idx(order, i), "seq", &v);
    return (long)v;
}

/* The paths of one round of a block, in the order they ran, a path's repeats folded. */
static char *round_sequence(struct json_object *order, const struct block *b, int round)
{
    GString *s = g_string_new(NULL);
    const char *last = NULL;
    for (size_t i = b->from; i <= b->to; i++) {
        const char *p = entry_str(order, i, "path");
        if (entry_round(order, i) != round || g_strcmp0(p, last) == 0)
            continue;
        g_string_append_printf(s, "%s\n", p);
        last = p;
    }
    return g_string_free(s, FALSE);
}

static void block_fill(struct ml_render *c, struct json_object *order, struct block *b)
{
    b->paths = g_ptr_array_new();
    b->cells = g_ptr_array_new();
    for (size_t i = b->from; i <= b->to; i++) {
        const char *cell = entry_str(order, i, "cell");
        add_unique(b->paths, entry_str(order, i, "path"));
        add_unique(b->cells, cell);
        b->rounds = MAX(b->rounds, entry_round(order, i));
        if (cell_fixed(c, cell))
            b->fixed = true;
        else
            b->full = true;
    }
    b->same_order = true;
    g_autofree char *first = round_sequence(order, b, entry_round(order, b->from));
    for (int r = entry_round(order, b->from) + 1; r <= b->rounds; r++) {
        g_autofree char *seq = round_sequence(order, b, r);
        if (*seq && strcmp(seq, first) != 0)
            b->same_order = false;
    }
}

static void put_block(GString *s, struct json_object *order, const struct block *b)
{
    g_string_append_printf(s, "- seq %ld-%ld, %s, %d round%s: ", entry_seq(order, b->from),
                           entry_seq(order, b->to),
                           b->full && b->fixed ? "full speed and fixed rate"
                           : b->fixed          ? "fixed rate"
                                               : "full speed",
                           b->rounds, b->rounds == 1 ? "" : "s");
    put_names(s, b->paths);
    if (b->paths->len == 1)
        g_string_append(s, " alone");
    else if (b->rounds > 1)
        g_string_append(s, b->same_order ? ", in the same order every round"
                                         : ", in an order that changes between rounds");
    if (b->cells->len > 1) {
        g_string_append(s, "; cells ");
        put_names(s, b->cells);
    }
    g_string_append(s, "\n");
}

/* The passes of one path that ran one after another, two or more: "nebula-relay's 6 (seq
 * 7-12)". */
static bool put_back_to_back(GString *s, struct json_object *order)
{
    size_t n = ml_j_len(order);
    bool any = false;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && g_strcmp0(entry_str(order, j, "path"), entry_str(order, i, "path")) == 0)
            j++;
        if (j - i >= 2) {
            g_string_append(s, any ? ", " : "Back to back: ");
            ml_put_text(s, entry_str(order, i, "path"));
            g_string_append_printf(s, "'s %zu passes (seq %ld-%ld)", j - i, entry_seq(order, i),
                                   entry_seq(order, j - 1));
            any = true;
        }
        i = j;
    }
    g_string_append(s, any ? "." : "No path ran two passes back to back.");
    return any;
}

/* What results.json `order` shows: the blocks the passes ran in (a group of paths through its
 * rounds), which paths took turns, which ran back to back, and whether the full-speed and the
 * fixed-rate passes interleave; and so which paths a slow minute of the host can spread over.
 * Built from the run's order, never from how the sweeps are meant to run. */
static void put_order(struct ml_render *c)
{
    GString *s = c->s;
    struct json_object *order = ml_j_array(c->r, "order");
    size_t n = ml_j_len(order);
    if (n == 0)
        return;
    g_autoptr(GArray) blocks = g_array_new(false, true, sizeof(struct block));
    for (size_t i = 0; i < n; i++)
        if (i == 0 || entry_round(order, i) < entry_round(order, i - 1)) {
            struct block b = {.from = i, .to = i};
            g_array_append_val(blocks, b);
        } else {
            g_array_index(blocks, struct block, blocks->len - 1).to = i;
        }
    g_autoptr(GPtrArray) paths = g_ptr_array_new(), shared = g_ptr_array_new();
    long last_full = -1, first_full = -1, last_fixed = -1, first_fixed = -1;
    for (size_t i = 0; i < n; i++) {
        long seq = entry_seq(order, i);
        bool fixed = cell_fixed(c, entry_str(order, i, "cell"));
        long *first = fixed ? &first_fixed : &first_full, *last = fixed ? &last_fixed : &last_full;
        if (*first < 0)
            *first = seq;
        *last = seq;
        add_unique(paths, entry_str(order, i, "path"));
    }
    for (guint k = 0; k < blocks->len; k++) {
        struct block *b = &g_array_index(blocks, struct block, k);
        block_fill(c, order, b);
        for (guint p = 0; b->paths->len > 1 && p < b->paths->len; p++)
            add_unique(shared, g_ptr_array_index(b->paths, p));
    }
    /* Two paths that never ran in one block ran at different times. */
    bool apart = false;
    for (guint a = 0; a < paths->len; a++)
        for (guint z = a + 1; z < paths->len; z++) {
            bool together = false;
            for (guint k = 0; k < blocks->len; k++) {
                struct block *b = &g_array_index(blocks, struct block, k);
                together |= holds(b->paths, g_ptr_array_index(paths, a)) &&
                            holds(b->paths, g_ptr_array_index(paths, z));
            }
            apart |= !together;
        }

    if (blocks->len == 1)
        g_string_append_printf(s, "The %zu passes ran in one block (results.json `order`):\n\n", n);
    else
        g_string_append_printf(s,
                               "The %zu passes ran in %u blocks, one after the other "
                               "(results.json `order`; a block's rounds count from 1):\n\n",
                               n, blocks->len);
    for (guint k = 0; k < blocks->len; k++)
        put_block(s, order, &g_array_index(blocks, struct block, k));
    g_string_append(s, "\n");
    if (first_full >= 0 && first_fixed >= 0)
        g_string_append(s, last_full < first_fixed   ? "Every full-speed pass ran before every "
                                                       "fixed-rate one. "
                           : last_fixed < first_full ? "Every fixed-rate pass ran before every "
                                                       "full-speed one. "
                                                     : "Full-speed and fixed-rate passes "
                                                       "interleave. ");
    put_back_to_back(s, order);
    if (paths->len > 1) {
        g_autoptr(GPtrArray) alone = g_ptr_array_new();
        for (guint p = 0; p < paths->len; p++)
            if (!holds(shared, g_ptr_array_index(paths, p)))
                g_ptr_array_add(alone, g_ptr_array_index(paths, p));
        if (shared->len == 0) {
            g_string_append(s, " No two paths took turns: a slow minute of the host lands on "
                               "one path's passes.");
        } else {
            g_string_append(s, " A slow minute of the host spreads over paths only where they "
                               "take turns in a block (");
            put_names(s, shared);
            g_string_append(s, ")");
            if (alone->len) {
                g_string_append(s, "; on ");
                put_names(s, alone);
                g_string_append(s, alone->len == 1 ? ", alone in its blocks,"
                                                   : ", each alone "
                                                     "in its blocks,");
                g_string_append(s, " it lands whole");
            }
            g_string_append(s, ".");
        }
        if (apart)
            g_string_append(s, " Paths that never shared a block ran at different times: a "
                               "difference between them may be the host's, not the paths'.");
    }
    g_string_append(s, "\n\n");
    for (guint k = 0; k < blocks->len; k++) {
        struct block *b = &g_array_index(blocks, struct block, k);
        g_ptr_array_free(b->paths, TRUE);
        g_ptr_array_free(b->cells, TRUE);
    }
}

static const struct ml_column variance_columns[] = {
    {.header = "Path, cell", .put = put_path_cell},
    ML_COL_PAIR("Passes ok / failed", "passes_ok", "passes_failed", 0),
    ML_COL_NUM_BY("CV throughput %", "cv_bits_per_second_percent", put_cv),
    ML_COL_NUM_BY("CV hub bytes per payload byte %", "cv_hub_bytes_per_payload_byte_percent",
                  put_cv),
    ML_COL_NUM_BY("Host other CPU % (max)", "other_cpu_percent", put_host_max),
    ML_COL_NUM_BY("Host steal % (max)", "steal_percent", put_host_max),
    ML_COL_NUM_BY("Lab vCPUs per host CPU", "oversubscription", put_host_max),
};

void ml_section_variance(struct ml_render *c)
{
    GString *s = c->s;
    g_string_append(s, "## Variance and the host\n\n");
    if (busy_condemns(c))
        g_string_append(s,
                        "**The host was busy: the figures of this run are not comparable.**\n\n");
    g_string_append(s, "Coefficient of variation (standard deviation / mean) over the passes "
                       "that passed, per cell; above\n10 % a figure is marked WARNING: the "
                       "median is then a rough figure. Host: the highest share of the\nhost's "
                       "CPU that other programs used, and of steal time, during a pass of the "
                       "cell; the lab's\nguest vCPUs per host CPU (above 1 the guests wait "
                       "for the host's CPUs, and the CV grows).\n\n");
    ml_columns_head(s, variance_columns, G_N_ELEMENTS(variance_columns));
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        if (c->st[i] != ML_PATH_MEASURED)
            continue;
        struct json_object *p = path_at(c, i);
        struct json_object *cells = ml_j_obj(p, "cells");
        if (!cells)
            continue;
        json_object_object_foreach(cells, name, cell)
        {
            struct cell_row at = {p, name, cell, NULL};
            ml_columns_row(s, variance_columns, G_N_ELEMENTS(variance_columns), cell, &at);
        }
    }
    g_string_append(s, "\nA cell of one pass has no CV (—).\n\n");
    put_order(c);
}

/* ---- what it means for the VPS ---- */

static void put_rss(GString *s, struct json_object *rss)
{
    put_guest_daemons(s, rss, true, "none recorded");
}

/* "X GB" from v's key, or a dash. */
static void put_gb(GString *s, struct json_object *v, const char *key)
{
    double gb;
    if (ml_j_num(v, key, &gb))
        ml_put_fixed(s, gb, 0);
    else
        g_string_append(s, ML_DASH);
    g_string_append(s, " GB");
}

/* "1,234 GB" with the decimals a month's figure needs: none from 100 GB up, one below. */
void ml_put_month_gb(GString *s, double gb)
{
    ml_put_fixed(s, gb, gb >= 100 || gb == 0 ? 0 : 1);
    g_string_append(s, " GB");
}

void ml_put_money(GString *s, double v, const char *currency)
{
    ml_put_fixed(s, v, 2);
    g_string_append_c(s, ' ');
    ml_put_text(s, currency);
}

void ml_put_month_cells(GString *s, const struct ml_month *m, const char *currency)
{
    ml_put_month_gb(s, m->in_gb);
    g_string_append(s, " | ");
    ml_put_month_gb(s, m->out_gb);
    g_string_append(s, " | ");
    ml_put_month_gb(s, m->overage_gb);
    g_string_append(s, " | ");
    if (isfinite(m->cost))
        ml_put_money(s, m->cost, currency);
    else
        g_string_append(s, ML_DASH);
}

void ml_put_workload(GString *s, const struct ml_workload *wl)
{
    ml_put_month_gb(s, wl->traffic_gb);
    g_string_append(s, " of client payload a month, ");
    ml_put_fixed(s, wl->relayed_share * 100, 0);
    g_string_append(s, " % of it relayed where a mesh relays, ");
    ml_put_month_gb(s, wl->included_tb * 1000);
    g_string_append(s, " included, ");
    if (wl->egress_price_per_gb >= 0) {
        ml_put_money(s, wl->egress_price_per_gb, wl->currency);
        g_string_append(s, " a GB sent beyond it");
    } else {
        g_string_append(s, "no egress price");
    }
}

/* One path's month as a sentence, every figure from m (results/month.c). */
static void month_sentence(GString *s, const struct ml_month *m, const char *currency, bool kvm)
{
    if (m->why == ML_SHARE_NONE) {
        g_string_append(s, "a direct path: the hub carries none of the payload, so the "
                           "workload costs the VPS only its control traffic.\n");
        return;
    }
    g_string_append(s, "the hub carries ");
    if (m->why == ML_SHARE_ALL || m->why == ML_SHARE_ALL_UNKNOWN) {
        g_string_append(s, "all ");
        ml_put_month_gb(s, m->payload_gb);
        g_string_append(s, m->why == ML_SHARE_ALL
                               ? " of the payload (a hub path: every packet crosses it)"
                               : " of the payload (this results.json records no path policy "
                                 "to tell a relay from a hub path by, so all of it is counted)");
    } else {
        ml_put_fixed(s, m->share * 100, 0);
        g_string_append(s, " % of the payload, ");
        ml_put_month_gb(s, m->payload_gb);
        g_string_append(s, " (the relayed share given)");
    }
    g_string_append(s, "; its NIC receives ");
    ml_put_month_gb(s, m->in_gb);
    g_string_append(s, " and sends ");
    ml_put_month_gb(s, m->out_gb);
    g_string_append(s, " a month. ");
    if (m->fits) {
        g_string_append(s, "What it sends fits the ");
        ml_put_month_gb(s, m->included_gb);
        g_string_append(s, " included.");
    } else {
        g_string_append(s, "What it sends is ");
        ml_put_month_gb(s, m->overage_gb);
        g_string_append(s, " beyond the ");
        ml_put_month_gb(s, m->included_gb);
        g_string_append(s, " included");
        if (isfinite(m->cost)) {
            g_string_append(s, ", which costs ");
            ml_put_money(s, m->cost, currency);
        } else {
            g_string_append(s, " (no egress price given: nothing priced)");
        }
        g_string_append(s, ".");
    }
    if (isfinite(m->peak_bits_per_second)) {
        g_string_append(s, " At the peak the hub relays ");
        ml_put_significant(s, m->peak_bits_per_second / 1e6, 3);
        g_string_append(s, " Mbit/s of payload: ");
        if (!kvm || !m->vcpus_meaningful)
            g_string_append(s, "the vCPUs that needs cannot be had from this run, whose hub ran "
                               "under emulation (TCG), not KVM.");
        else if (isfinite(m->vcpus)) {
            ml_put_fixed(s, m->vcpus, 0);
            g_string_append(s, m->vcpus == 1 ? " vCPU." : " vCPUs.");
        } else
            g_string_append(s, "no relay rate was measured to size its vCPUs by.");
    }
    g_string_append(s, "\n");
}

/* A month of results.json's vps_workload on each measured path: a table, and a sentence a
 * path. */
static void month_section(struct ml_render *c)
{
    struct json_object *w = ml_j_obj(c->r, "vps_workload");
    struct ml_workload wl;
    ml_workload_from_json(&wl, w);
    if (!wl.present || !(wl.traffic_gb > 0))
        return;
    GString *s = c->s;
    bool kvm = is_kvm(c);
    const char *currency = wl.currency;
    g_string_append(s, "### A month of the workload\n\n");
    g_string_append(s, ml_j_bool(w, "given_to_report")
                           ? "The workload given to `meshlab report` (not the run's own "
                             "`vps_workload`): "
                           : "The workload given (`vps_workload`): ");
    ml_put_workload(s, &wl);
    if (wl.peak_mbit > 0) {
        g_string_append(s, ", a peak of ");
        ml_put_significant(s, wl.peak_mbit, 3);
        g_string_append(s, " Mbit/s");
    }
    g_string_append(s, ". Each path's GB are its payload through the hub times "
                       "`vps.hub_gb_in_per_tb_payload` and `vps.hub_gb_out_per_tb_payload` "
                       "(above); most providers bill only what the hub sends. A hub path carries "
                       "all of the payload, a relay a policy forced carries the relayed share "
                       "(`paths[].policy`), a direct path none. The vCPUs at the peak come from "
                       "`vps.hub_vcpu_relay_bits_per_second`, on KVM only.\n\n");
    g_string_append(s, "| Path | Payload through the hub | Hub in | Hub out | Beyond the "
                       "included | Cost |\n|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct ml_month m;
        if (c->st[i] != ML_PATH_MEASURED || !ml_month_of(&wl, path_at(c, i), &m))
            continue;
        g_string_append(s, "| ");
        ml_put_text(s, ml_j_str(path_at(c, i), "name"));
        g_string_append(s, " | ");
        ml_put_month_gb(s, m.payload_gb);
        g_string_append(s, " | ");
        ml_put_month_cells(s, &m, currency);
        g_string_append(s, " |\n");
    }
    g_string_append(s, "\n");
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct ml_month m;
        if (c->st[i] != ML_PATH_MEASURED)
            continue;
        g_string_append(s, "- **");
        ml_put_text(s, ml_j_str(path_at(c, i), "name"));
        g_string_append(s, "**: ");
        if (!ml_month_of(&wl, path_at(c, i), &m)) {
            g_string_append(s, "no month: its hub figures (`vps.hub_gb_in_per_tb_payload`, "
                               "`vps.hub_gb_out_per_tb_payload`) are missing.\n");
            continue;
        }
        month_sentence(s, &m, currency, kvm);
    }
    g_string_append(s, "\n");
}

void ml_section_vps(struct ml_render *c)
{
    GString *s = c->s;
    bool kvm = is_kvm(c);
    g_string_append(s, "## What it means for the VPS\n\n");
    g_string_append(s, "For a hub rented as a VPS: the traffic it receives and sends per TB of "
                       "client payload (most\nproviders bill only what it sends), the rate one "
                       "of its vCPUs relays at 100 %, from the full-speed\ncell, and the memory "
                       "its daemons hold. Each answer names the figures of results.json it comes "
                       "from.\n");
    if (!kvm)
        g_string_append(s, "The relayed rate is measured CPU time, and so meaningful only on "
                           "KVM; this run's is not.\n");
    g_string_append(s, "\n");
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        if (c->st[i] != ML_PATH_MEASURED)
            continue;
        struct json_object *p = path_at(c, i);
        struct json_object *v = ml_j_obj(p, "vps");
        g_string_append(s, "- **");
        ml_put_text(s, ml_j_str(p, "name"));
        g_string_append(s, "**: ");
        if (!v || quiet(p)) {
            g_string_append(s, "the hub carries none of its traffic (hub bytes per payload "
                               "byte ");
            ml_put_sig(s, p, "hub_bytes_per_payload_byte", 2);
            g_string_append(s, ", from `hub_bytes_per_payload_byte`); only its control "
                               "traffic costs the VPS anything.\n");
            continue;
        }
        const char *head = ml_j_str_or(p, "headline_cell", "headline");
        if (ml_j_get(v, "hub_gb_out_per_tb_payload")) {
            g_string_append(s, "per TB of client payload the hub receives ");
            put_gb(s, v, "hub_gb_in_per_tb_payload");
            g_string_append(s, " and sends ");
            put_gb(s, v, "hub_gb_out_per_tb_payload");
            g_string_append(s, ", ");
            put_gb(s, v, "hub_gb_per_tb_payload");
            g_string_append(s, " in all (from `vps.hub_gb_in_per_tb_payload` and "
                               "`vps.hub_gb_out_per_tb_payload`: the ");
            ml_put_text(s, head);
            g_string_append(s, " cell's passes, the latency probe's own bytes left out). ");
        } else {
            g_string_append(s, "per TB of client payload the hub moves ");
            put_gb(s, v, "hub_gb_per_tb_payload");
            g_string_append(s, ", in and out together (from `vps.hub_gb_per_tb_payload`: this "
                               "results.json predates the split and counts the latency probe's "
                               "bytes too). ");
        }
        double vcpu, bps, busy;
        if (ml_j_str(v, "relay_cell") && ml_j_num(v, "hub_vcpu_relay_bits_per_second", &vcpu)) {
            g_string_append(s, "One hub vCPU at 100 % relays about ");
            ml_put_significant(s, vcpu / 1e6, 3);
            g_string_append(s, " Mbit/s (`vps.hub_vcpu_relay_bits_per_second`: the ");
            ml_put_text(s, ml_j_str(v, "relay_cell"));
            g_string_append(s, " cell relayed ");
            if (ml_j_num(v, "relay_cell_bits_per_second", &bps))
                ml_put_significant(s, bps / 1e6, 3);
            else
                g_string_append(s, ML_DASH);
            g_string_append(s, " Mbit/s with the hub ");
            if (ml_j_num(v, "relay_cell_hub_busy_percent", &busy))
                ml_put_fixed(s, busy, 0);
            else
                g_string_append(s, ML_DASH);
            g_string_append(s, " % busy)");
            if (!ml_j_bool(v, "meaningful")) {
                g_autofree char *up = g_ascii_strup(
                    ml_j_str_or(ml_j_obj(c->r, "environment"), "accelerator", "?"), -1);
                g_string_append(s, ", **not meaningful here**: measured under ");
                ml_put_text(s, up);
                g_string_append(s, ", not KVM");
            }
            g_string_append(s, ".");
        } else {
            g_string_append(s, "No relay rate from a full-speed cell: this results.json "
                               "predates it (its fixed-rate figure sizes nothing).");
        }
        g_string_append(s, " Daemons' memory (from `vps.daemons_rss_kib`): ");
        put_rss(s, ml_j_obj(v, "daemons_rss_kib"));
        g_string_append(s, ".\n");
    }
    g_string_append(s, "\n");
    month_section(c);
}
