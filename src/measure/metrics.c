#include "measure/metrics.h"
#include "topology/plan.h"

#include "results/json.h"
#include "results/tables.h"

#include "dataplanes/dataplane.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "measure/pass.h"
#include "measure/physics.h"
#include "measure/stats.h"
#include "virt/agent.h"
#include "virt/virt.h"

/* ---- collectors: what runs on a path ---- */

/* What a dataplane observed beside its numbers (Tailscale's daemons' memory, tailscale0, the
 * addresses), recorded in its state once it came up, and reported with its first path in the
 * registry (tailscale-direct). */
static bool collect_observed(struct ml_collect_ctx *c, const struct ml_collector *self,
                             struct json_object **ret, GError **err)
{
    (void)self;
    (void)err;
    *ret = NULL;
    const struct ml_path_ops *ops = c->lab ? ml_path_find(c->path) : NULL;
    const struct ml_dataplane *dp = ops ? ops->dataplane : NULL;
    if (!dp || dp->paths[0] != ops)
        return true;
    struct json_object *extra = NULL;
    if (json_object_object_get_ex(ml_dataplane_state(c->lab, dp), "observed", &extra))
        *ret = json_object_get(extra);
    return true;
}

/* The idle baseline and the passes are run by the sweeps (measure.c: they interleave the
 * passes of several paths); the cells are summarised from the passes. */
static const struct ml_collector idle_col = {.key = "idle", .withheld = ML_WITHHELD_NULL};
static const struct ml_collector idle_fixed_col = {.key = "idle_fixed",
                                                   .withheld = ML_WITHHELD_NULL};
static const struct ml_collector passes_col = {.key = "passes",
                                               .withheld = ML_WITHHELD_EMPTY_ARRAY};
static const struct ml_collector cells_col = {.key = "cells", .withheld = ML_WITHHELD_EMPTY_OBJECT};
static const struct ml_collector observed = {
    .key = "observed", .collect = collect_observed, .withheld = ML_WITHHELD_ABSENT};

/* ---- summaries ---- */

static struct json_object *num_or_null(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

static bool pass_ok(struct json_object *pass)
{
    return !g_strcmp0(ml_j_str(pass, "status"), "ok");
}

/* The path's passes array into *ret and its length; 0 when it has none. */
static size_t passes_of(struct json_object *path, struct json_object **ret)
{
    *ret = json_object_object_get(path, "passes");
    return json_object_is_type(*ret, json_type_array) ? json_object_array_length(*ret) : 0;
}

/* The passes of one cell that passed their checks. */
static GPtrArray *ok_passes(struct json_object *path, const char *cell)
{
    GPtrArray *a = g_ptr_array_new();
    struct json_object *passes = NULL;
    size_t n_pass = passes_of(path, &passes);
    for (size_t i = 0; i < n_pass; i++) {
        struct json_object *p = json_object_array_get_idx(passes, i);
        if (pass_ok(p) && !g_strcmp0(ml_j_str(p, "cell"), cell))
            g_ptr_array_add(a, p);
    }
    return a;
}

/* Every cell's name, in the order its first pass ran. */
static GPtrArray *cell_names(struct json_object *path)
{
    GPtrArray *a = g_ptr_array_new();
    struct json_object *passes = NULL;
    size_t n_pass = passes_of(path, &passes);
    for (size_t i = 0; i < n_pass; i++) {
        const char *c = ml_j_str(json_object_array_get_idx(passes, i), "cell");
        bool seen = false;
        for (guint j = 0; c && j < a->len; j++)
            seen |= !strcmp(g_ptr_array_index(a, j), c);
        if (c && !seen)
            g_ptr_array_add(a, (gpointer)c);
    }
    return a;
}

size_t ml_cell_pass_values(struct json_object *path, const char *cell, const char *key,
                           double **ret)
{
    g_autoptr(GPtrArray) ps = ok_passes(path, cell);
    *ret = g_new(double, ps->len + 1);
    size_t n = 0;
    for (guint i = 0; i < ps->len; i++)
        if (ml_j_num_at(g_ptr_array_index(ps, i), key, &(*ret)[n]))
            n++;
    return n;
}

typedef double (*reduce_fn)(double *v, size_t n);

static struct json_object *per_cell(struct json_object *path, const char *key, reduce_fn f)
{
    struct json_object *o = json_object_new_object();
    g_autoptr(GPtrArray) names = cell_names(path);
    for (guint i = 0; i < names->len; i++) {
        g_autofree double *v = NULL;
        size_t n = ml_cell_pass_values(path, g_ptr_array_index(names, i), key, &v);
        json_object_object_add(o, g_ptr_array_index(names, i), num_or_null(f(v, n)));
    }
    return o;
}

static double cv(double *v, size_t n)
{
    return ml_cv_percent(v, n);
}

struct json_object *ml_summary_cell_median(struct json_object *path, const struct ml_metric *m)
{
    return per_cell(path, m->of, ml_median);
}

struct json_object *ml_summary_cell_cv(struct json_object *path, const struct ml_metric *m)
{
    return per_cell(path, m->of, cv);
}

/* The interval as results.json holds it (ml_log_interval95): the passes' mean and sd, the
 * interval on a log scale about their geometric mean, and their range; null for no values. low
 * and high are null with one pass, where a value is not positive, and where censored passes
 * (a percentile that landed on a lost ping, only a lower bound) are among them: an interval of
 * bounds is no interval. */
static struct json_object *interval_json(const double *v, size_t n, size_t censored)
{
    if (n == 0)
        return NULL;
    struct ml_interval ci = ml_interval95(v, n);
    struct ml_log_interval li = ml_log_interval95(v, n);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "n", json_object_new_int((int)ci.n));
    json_object_object_add(o, "mean", num_or_null(ci.mean));
    json_object_object_add(o, "sd", num_or_null(ci.sd));
    json_object_object_add(o, "scale", json_object_new_string("log"));
    json_object_object_add(o, "geometric_mean", num_or_null(li.geomean));
    json_object_object_add(o, "low", censored ? NULL : num_or_null(li.low));
    json_object_object_add(o, "high", censored ? NULL : num_or_null(li.high));
    json_object_object_add(o, "min", num_or_null(li.min));
    json_object_object_add(o, "max", num_or_null(li.max));
    json_object_object_add(o, "censored", json_object_new_int((int)censored));
    return o;
}

/* How many of a cell's passes that passed have the percentile at `of` ("rtt_loaded.p99_ms")
 * flagged as a lower bound ("rtt_loaded.p99_at_least"); 0 for a figure without such a flag. */
static size_t cell_censored(struct json_object *path, const char *cell, const char *of)
{
    if (!g_str_has_prefix(of, "rtt_loaded.p") || !g_str_has_suffix(of, "_ms"))
        return 0;
    g_autofree char *stem = g_strndup(of, strlen(of) - strlen("_ms"));
    g_autofree char *flag = g_strconcat(stem, "_at_least", NULL);
    g_autoptr(GPtrArray) ps = ok_passes(path, cell);
    size_t k = 0;
    for (guint i = 0; i < ps->len; i++) {
        g_autoptr(GPtrArray) b = ml_j_values(g_ptr_array_index(ps, i), flag, NULL);
        k += b->len == 1 && json_object_get_boolean(g_ptr_array_index(b, 0));
    }
    return k;
}

struct json_object *ml_summary_cell_ci95(struct json_object *path, const struct ml_metric *m)
{
    struct json_object *o = json_object_new_object();
    g_autoptr(GPtrArray) names = cell_names(path);
    for (guint i = 0; i < names->len; i++) {
        const char *cell = g_ptr_array_index(names, i);
        g_autofree double *v = NULL;
        size_t n = ml_cell_pass_values(path, cell, m->of, &v);
        json_object_object_add(o, cell, interval_json(v, n, cell_censored(path, cell, m->of)));
    }
    return o;
}

/* A pooled percentile as results.json keeps it: the value (null where it is a lost ping, which
 * *_lost says) and its 95 % order-statistic interval. */
static void add_pooled(struct json_object *o, const char *key, const struct ml_quantile *q)
{
    g_autofree char *ms = g_strdup_printf("%s_ms", key);
    g_autofree char *lost = g_strdup_printf("%s_lost", key);
    g_autofree char *ci = g_strdup_printf("%s_ci95", key);
    json_object_object_add(o, ms, isfinite(q->value) ? json_object_new_double(q->value) : NULL);
    json_object_object_add(o, lost, json_object_new_boolean(isinf(q->value)));
    struct json_object *c = json_object_new_object();
    json_object_object_add(c, "low", isfinite(q->low) ? json_object_new_double(q->low) : NULL);
    json_object_object_add(c, "high", isfinite(q->high) ? json_object_new_double(q->high) : NULL);
    json_object_object_add(c, "rank_low",
                           q->rank_low ? json_object_new_int64((int64_t)q->rank_low) : NULL);
    json_object_object_add(c, "rank_high",
                           q->rank_high ? json_object_new_int64((int64_t)q->rank_high) : NULL);
    json_object_object_add(c, "high_censored", json_object_new_boolean(isinf(q->high)));
    json_object_object_add(o, ci, c);
}

/* Each cell's round trips under load with every ping of its passes that passed pooled, the lost
 * ones above every reply: p50 and p99 by nearest rank, each with its 95 % interval from order
 * statistics (stats.h ml_pooled_quantile; none where the pings are too few for one). Null for a
 * cell without such passes, or one of whose passes kept no replies (results before they were
 * recorded). */
struct json_object *ml_summary_cell_pooled_rtt(struct json_object *path, const struct ml_metric *m)
{
    (void)m;
    struct json_object *o = json_object_new_object();
    struct json_object *passes = NULL;
    size_t n_pass = passes_of(path, &passes);
    g_autoptr(GPtrArray) names = cell_names(path);
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(double));
        size_t lost = 0, used = 0;
        bool whole = true;
        for (size_t k = 0; k < n_pass && whole; k++) {
            struct json_object *p = json_object_array_get_idx(passes, k);
            if (g_strcmp0(ml_j_str(p, "cell"), name) || !pass_ok(p))
                continue;
            struct json_object *rtt = ml_j_obj(p, "rtt_loaded");
            struct json_object *replies = ml_j_array(rtt, "replies_ms");
            double l = 0;
            if (!replies || !ml_j_num(rtt, "lost", &l)) {
                whole = false;
                break;
            }
            for (size_t j = 0; j < ml_j_len(replies); j++) {
                double x = json_object_get_double(json_object_array_get_idx(replies, j));
                g_array_append_val(all, x);
            }
            lost += (size_t)MAX(0.0, l);
            used++;
        }
        if (!whole || !used || all->len + lost == 0) {
            json_object_object_add(o, name, NULL);
            continue;
        }
        struct json_object *c = json_object_new_object();
        json_object_object_add(c, "passes", json_object_new_int64((int64_t)used));
        json_object_object_add(c, "n", json_object_new_int64((int64_t)(all->len + lost)));
        json_object_object_add(c, "lost", json_object_new_int64((int64_t)lost));
        static const struct {
            const char *key;
            double p;
        } ps[] = {{"p50", 50}, {"p99", 99}};
        for (size_t k = 0; k < G_N_ELEMENTS(ps); k++) {
            struct ml_quantile q =
                ml_pooled_quantile((double *)(void *)all->data, all->len, lost, ps[k].p);
            add_pooled(c, ps[k].key, &q);
        }
        json_object_object_add(o, name, c);
    }
    return o;
}

/* The cells object: each cell's direction, streams, rate, and how many passes passed. */
struct json_object *ml_summary_cells(struct json_object *path, const struct ml_metric *m)
{
    (void)m;
    struct json_object *o = json_object_new_object();
    struct json_object *passes = NULL;
    size_t n_pass = passes_of(path, &passes);
    g_autoptr(GPtrArray) names = cell_names(path);
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        struct json_object *c = json_object_new_object();
        int ok = 0, failed = 0, repeated = 0;
        for (size_t k = 0; k < n_pass; k++) {
            struct json_object *p = json_object_array_get_idx(passes, k);
            if (g_strcmp0(ml_j_str(p, "cell"), name))
                continue;
            if (!json_object_object_get_ex(c, "direction", NULL)) {
                json_object_object_add(c, "direction",
                                       json_object_get(json_object_object_get(p, "direction")));
                json_object_object_add(c, "streams",
                                       json_object_get(json_object_object_get(p, "streams")));
                json_object_object_add(c, "rate",
                                       json_object_get(json_object_object_get(p, "rate")));
            }
            if (!g_strcmp0(ml_j_str(p, "status"), "repeated"))
                repeated++;
            else
                pass_ok(p) ? ok++ : failed++;
        }
        json_object_object_add(c, "passes_ok", json_object_new_int(ok));
        json_object_object_add(c, "passes_failed", json_object_new_int(failed));
        if (repeated)
            json_object_object_add(c, "passes_repeated", json_object_new_int(repeated));
        json_object_object_add(o, name, c);
    }
    return o;
}

/* CPU seconds per GB of payload of every guest (m->of: "cpu") or daemon ("daemons_cpu_s", and
 * above its idle rate "daemons_cpu_above_idle_s"), over a cell's passes that passed: the sums of
 * both, so a short pass weighs less. */
struct json_object *ml_summary_cell_cpu_per_gb(struct json_object *path, const struct ml_metric *m)
{
    struct json_object *o = json_object_new_object();
    g_autoptr(GPtrArray) names = cell_names(path);
    bool daemons = g_str_has_prefix(m->of, "daemons_");
    bool daemons_above_idle = !strcmp(m->of, "daemons_cpu_above_idle_s");
    for (guint i = 0; i < names->len; i++) {
        g_autoptr(GPtrArray) ps = ok_passes(path, g_ptr_array_index(names, i));
        double gb = 0;
        for (guint k = 0; k < ps->len; k++) {
            double b = 0;
            if (ml_j_num_at(g_ptr_array_index(ps, k), "payload_bytes", &b))
                gb += b / 1e9;
        }
        struct json_object *cell = json_object_new_object();
        json_object_object_add(o, g_ptr_array_index(names, i), cell);
        if (ps->len == 0 || gb <= 0)
            continue;
        /* The first pass names the guests and their keys; every pass has the same. */
        struct json_object *first = json_object_object_get(g_ptr_array_index(ps, 0), m->of);
        if (!json_object_is_type(first, json_type_object))
            continue;
        json_object_object_foreach(first, node, keys)
        {
            if (!json_object_is_type(keys, json_type_object))
                continue;
            struct json_object *g = json_object_new_object();
            json_object_object_foreach(keys, key, unused)
            {
                (void)unused;
                double sum = 0;
                bool all = true;
                for (guint k = 0; k < ps->len; k++) {
                    g_autofree char *at = g_strdup_printf("%s.%s.%s", m->of, node, key);
                    double v = 0;
                    all &= ml_j_num_at(g_ptr_array_index(ps, k), at, &v);
                    sum += v;
                }
                g_autofree char *out = daemons ? g_strdup(key) : g_strdup_printf("%s_per_gb", key);
                /* What the payload cost above idle is a figure only where it stands out of the
                 * idle work: at a low rate (a TCG lab's fixed rate) it is noise, even negative. */
                if (all &&
                    (daemons_above_idle || (!daemons && !strcmp(key, "busy_above_idle_s")))) {
                    double busy = 0, v = 0;
                    for (guint k = 0; k < ps->len; k++) {
                        g_autofree char *at =
                            daemons_above_idle ? g_strdup_printf("daemons_cpu_s.%s.%s", node, key)
                                               : g_strdup_printf("%s.%s.busy_s", m->of, node);
                        if (ml_j_num_at(g_ptr_array_index(ps, k), at, &v))
                            busy += v;
                    }
                    all = sum > 0 && sum >= ML_CPU_ABOVE_IDLE_MIN_SHARE * busy;
                }
                json_object_object_add(g, out, all ? json_object_new_double(sum / gb) : NULL);
            }
            json_object_object_add(cell, node, g);
        }
    }
    return o;
}

/* The cell of the first pass at `rate` ("full", "fixed"); NULL when none. */
static const char *first_cell_at(struct json_object *path, const char *rate)
{
    struct json_object *passes = NULL;
    size_t n = passes_of(path, &passes);
    for (size_t i = 0; i < n; i++) {
        struct json_object *p = json_object_array_get_idx(passes, i);
        if (!g_strcmp0(ml_j_str(p, "rate"), rate))
            return ml_j_str(p, "cell");
    }
    return NULL;
}

/* The cell the headline figures come from: that of the first full-speed pass. */
static const char *headline_cell(struct json_object *path)
{
    return first_cell_at(path, "full");
}

double ml_headline_median(struct json_object *path, const char *key)
{
    const char *cell = headline_cell(path);
    if (!cell)
        return NAN;
    g_autofree double *v = NULL;
    size_t n = ml_cell_pass_values(path, cell, key, &v);
    return ml_median(v, n);
}

struct json_object *ml_summary_headline_cell(struct json_object *path, const struct ml_metric *m)
{
    (void)m;
    const char *c = headline_cell(path);
    return c ? json_object_new_string(c) : NULL;
}

/* A headline figure: the headline cell's value at `of` ("median_bits_per_second"). */
struct json_object *ml_summary_headline(struct json_object *path, const struct ml_metric *m)
{
    const char *c = headline_cell(path);
    g_autofree char *key = g_strdup_printf("cells.%s.%s", c ? c : "", m->of);
    double v;
    return c && ml_j_num_at(path, key, &v) ? json_object_new_double(v) : NULL;
}

struct json_object *ml_summary_headline_ci95(struct json_object *path, const struct ml_metric *m)
{
    const char *c = headline_cell(path);
    g_autofree char *key = g_strdup_printf("cells.%s.%s", c ? c : "", m->of);
    g_autoptr(GPtrArray) v = ml_j_values(path, key, NULL);
    struct json_object *x = v->len == 1 ? g_ptr_array_index(v, 0) : NULL;
    struct json_object *copy = NULL;
    if (c && json_object_is_type(x, json_type_object) && json_object_deep_copy(x, &copy, NULL))
        copy = NULL;
    return copy;
}

struct json_object *ml_summary_hub_cpu_ci95(struct json_object *path, const struct ml_metric *m)
{
    (void)m;
    const char *c = headline_cell(path), *hub = ml_j_str(path, "hub");
    if (!c || !hub)
        return NULL;
    g_autoptr(GPtrArray) ps = ok_passes(path, c);
    g_autofree double *v = g_new(double, ps->len + 1);
    g_autofree char *busy_key = g_strdup_printf("cpu.%s.busy_above_idle_s", hub);
    size_t n = 0;
    for (guint i = 0; i < ps->len; i++) {
        double busy, payload;
        if (ml_j_num_at(g_ptr_array_index(ps, i), busy_key, &busy) &&
            ml_j_num_at(g_ptr_array_index(ps, i), "payload_bytes", &payload) && payload > 0)
            v[n++] = busy / (payload / 1e9);
    }
    return interval_json(v, n, 0);
}

/* The hub's busy CPU seconds per GB of payload in the headline cell, the cell the comparison
 * names (the CPU section shows the fixed rate's beside it). */
struct json_object *ml_summary_hub_cpu(struct json_object *path, const struct ml_metric *m)
{
    const char *c = headline_cell(path), *hub = ml_j_str(path, "hub");
    g_autofree char *key =
        g_strdup_printf("cells.%s.cpu_s_per_gb.%s.%s", c ? c : "", hub ? hub : "", m->of);
    double v;
    return c && hub && ml_j_num_at(path, key, &v) ? json_object_new_double(v) : NULL;
}

/* A value of the path's own records ("idle.rtt.p99_ms"). */
struct json_object *ml_summary_copy(struct json_object *path, const struct ml_metric *m)
{
    double v;
    return ml_j_num_at(path, m->of, &v) ? json_object_new_double(v) : NULL;
}

/* The median of `key` over the headline cell's passes that passed. */
static double headline_pass_median(struct json_object *path, const char *key)
{
    const char *cell = headline_cell(path);
    if (!cell)
        return NAN;
    g_autofree double *v = NULL;
    size_t n = ml_cell_pass_values(path, cell, key, &v);
    return ml_median(v, n);
}

/* What one hub vCPU relays at 100 %, from the full-speed cell: its throughput divided by the
 * share of the time the hub was busy, i.e. the payload's bits per busy second of the hub, over
 * the cell's passes that passed. Sets the cell's pooled throughput and the hub's busy %. */
static double vcpu_relay_bps(struct json_object *path, double *ret_bps, double *ret_busy_percent)
{
    const char *cell = headline_cell(path), *hub = ml_j_str(path, "hub");
    *ret_bps = *ret_busy_percent = NAN;
    if (!cell || !hub)
        return NAN;
    g_autoptr(GPtrArray) ps = ok_passes(path, cell);
    g_autofree char *busy_key = g_strdup_printf("cpu.%s.busy_s", hub);
    double bits = 0, busy = 0, seconds = 0;
    for (guint i = 0; i < ps->len; i++) {
        struct json_object *x = g_ptr_array_index(ps, i);
        double p, b, d;
        if (ml_j_num_at(x, "payload_bytes", &p) && ml_j_num_at(x, busy_key, &b) &&
            ml_j_num_at(x, "duration_s", &d) && d > 0) {
            bits += 8 * p;
            busy += b;
            seconds += d;
        }
    }
    if (!(seconds > 0) || !(busy > 0))
        return NAN;
    *ret_bps = bits / seconds;
    *ret_busy_percent = 100 * busy / seconds;
    return bits / busy;
}

/* What a VPS buyer asks, from the figures above. */
struct json_object *ml_summary_vps(struct json_object *path, const struct ml_metric *m)
{
    (void)m;
    struct json_object *o = json_object_new_object();
    double f = NAN;
    bool have_f = ml_j_num_at(path, "hub_bytes_per_payload_byte", &f);
    /* The hub's traffic per TB of payload, in GB: hub bytes per payload byte x 1000, in and out
     * apart (most providers bill only what leaves the VPS), the probe's own bytes taken out. */
    json_object_object_add(o, "hub_gb_per_tb_payload",
                           have_f ? json_object_new_double(f * 1000) : NULL);
    json_object_object_add(
        o, "hub_gb_in_per_tb_payload",
        num_or_null(headline_pass_median(path, "hub_rx_bytes_per_payload_byte") * 1000));
    json_object_object_add(
        o, "hub_gb_out_per_tb_payload",
        num_or_null(headline_pass_median(path, "hub_tx_bytes_per_payload_byte") * 1000));
    /* Only a hub that relays is sized by its relay rate; the fixed rate says nothing of it (the
     * hub idles most of the time there). */
    double bps = NAN, busy = NAN;
    double vcpu = vcpu_relay_bps(path, &bps, &busy);
    bool relays = !g_strcmp0(ml_j_str(path, "hub_role"), "carries");
    json_object_object_add(o, "hub_vcpu_relay_bits_per_second", relays ? num_or_null(vcpu) : NULL);
    json_object_object_add(o, "relay_cell",
                           relays && isfinite(vcpu) ? json_object_new_string(headline_cell(path))
                                                    : NULL);
    json_object_object_add(o, "relay_cell_bits_per_second", relays ? num_or_null(bps) : NULL);
    json_object_object_add(o, "relay_cell_hub_busy_percent", relays ? num_or_null(busy) : NULL);
    struct json_object *from = json_object_new_array();
    json_object_array_add(from, json_object_new_string("hub_bytes_per_payload_byte"));
    json_object_array_add(from, json_object_new_string("passes.hub_rx_bytes_per_payload_byte"));
    json_object_array_add(from, json_object_new_string("passes.hub_tx_bytes_per_payload_byte"));
    json_object_array_add(from, json_object_new_string("passes.cpu"));
    json_object_array_add(from, json_object_new_string("passes.daemons_rss_kib"));
    json_object_object_add(o, "from", from);
    /* The daemons' memory: the largest any pass saw. */
    struct json_object *rss = json_object_new_object();
    struct json_object *passes = NULL;
    size_t n_pass = passes_of(path, &passes);
    for (size_t i = 0; i < n_pass; i++) {
        struct json_object *p =
            json_object_object_get(json_object_array_get_idx(passes, i), "daemons_rss_kib");
        json_object_object_foreach(p, node, ds)
        {
            struct json_object *g = json_object_object_get(rss, node);
            if (!g) {
                g = json_object_new_object();
                json_object_object_add(rss, node, g);
            }
            json_object_object_foreach(ds, d, v)
            {
                int64_t now = json_object_get_int64(v);
                if (now > json_object_get_int64(json_object_object_get(g, d)))
                    json_object_object_add(g, d, json_object_new_int64(now));
            }
        }
    }
    json_object_object_add(o, "daemons_rss_kib", rss);
    return o;
}

/* How many of cell `name`'s passes lost their path and were run again (measure.c). */
static unsigned cell_passes_run_again(struct json_object *path, const char *name)
{
    struct json_object *passes = NULL;
    size_t n = passes_of(path, &passes);
    unsigned again = 0;
    for (size_t k = 0; k < n; k++) {
        struct json_object *p = json_object_array_get_idx(passes, k);
        again += !g_strcmp0(ml_j_str(p, "cell"), name) && ml_j_bool(p, "path_lost") &&
                 json_object_object_get_ex(p, "run_again_as", NULL);
    }
    return again;
}

/* What a reader must not miss: a CV above 10 %, failed passes, a busy host. */
struct json_object *ml_summary_warnings(struct json_object *path, const struct ml_metric *m)
{
    (void)m;
    struct json_object *a = json_object_new_array();
    struct json_object *cs = json_object_object_get(path, "cells");
    json_object_object_foreach(cs, name, c)
    {
        static const char *const keys[] = {"cv_bits_per_second_percent",
                                           "cv_hub_bytes_per_payload_byte_percent"};
        bool high = false;
        for (size_t k = 0; k < G_N_ELEMENTS(keys); k++) {
            double v;
            if (ml_j_num_at(c, keys[k], &v) && v > ML_CV_WARN_PERCENT) {
                high = true;
                g_autofree char *w = g_strdup_printf("%s: %s is %.1f %% (above %.0f %%): the "
                                                     "passes disagree",
                                                     name, keys[k], v, ML_CV_WARN_PERCENT);
                json_object_array_add(a, json_object_new_string(w));
            }
        }
        json_object_object_add(c, "cv_warning", json_object_new_boolean(high));
        double loss = 0, below = 0;
        if (ml_j_num_at(c, "rtt_loaded_loss_percent", &loss) && loss > ML_LOSS_WARN_PERCENT) {
            g_autofree char *w = g_strdup_printf("%s: %.1f %% of the pings under load got no "
                                                 "reply (above %.0f %%): its p99 is a lower bound",
                                                 name, loss, ML_LOSS_WARN_PERCENT);
            json_object_array_add(a, json_object_new_string(w));
        }
        if (ml_j_num_at(c, "passes_below_offered_rate", &below) && below > 0) {
            g_autofree char *w = g_strdup_printf(
                "%s: %.0f pass(es) carried less than %.0f %% of the offered rate: not the rate "
                "the paths are compared at",
                name, below, ML_PASS_CARRIED_MIN_PERCENT);
            json_object_array_add(a, json_object_new_string(w));
        }
        double failed = 0;
        if (ml_j_num_at(c, "passes_failed", &failed) && failed > 0) {
            unsigned again = cell_passes_run_again(path, name);
            g_autofree char *more =
                again ? g_strdup_printf("; %u of them lost the path (its views or its own "
                                        "counters said so) and %s run again after it settled",
                                        again, again == 1 ? "was" : "were")
                      : g_strdup("");
            g_autofree char *w = g_strdup_printf("%s: %.0f pass(es) failed their per-second "
                                                 "checks and are left out of every figure%s",
                                                 name, failed, more);
            json_object_array_add(a, json_object_new_string(w));
        }
    }
    struct json_object *passes = NULL;
    size_t n_pass = passes_of(path, &passes);
    /* A busy pass that was run again is in no figure; a repeat that was busy too is kept and
     * judged by its cell's other passes in the report's notice. */
    unsigned busy = 0, repeated = 0;
    for (size_t i = 0; i < n_pass; i++) {
        struct json_object *p = json_object_array_get_idx(passes, i);
        if (!ml_j_bool(ml_j_obj(p, "host"), "busy"))
            continue;
        if (json_object_object_get_ex(p, "run_again_as", NULL))
            repeated++;
        else
            busy += pass_ok(p);
    }
    if (repeated) {
        g_autofree char *w = g_strdup_printf(
            "%u pass(es) ran while the host was busy with something else and %s run again: "
            "the repeat%s in the figures in %s place",
            repeated, repeated == 1 ? "was" : "were", repeated == 1 ? " is" : "s are",
            repeated == 1 ? "its" : "their");
        json_object_array_add(a, json_object_new_string(w));
    }
    if (busy) {
        g_autofree char *w = g_strdup_printf(
            "%u pass(es) in the figures ran while the host was busy with something else, each "
            "already a repeat: judged by their cell's other passes in the report's notice",
            busy);
        json_object_array_add(a, json_object_new_string(w));
    }
    return a;
}

/* What the path's encapsulation predicts for one cell's hub factor from its passes' payload,
 * the probe's packets, the retransmits, the sender's and the receiver's taps where every pass
 * kept them (else the hub's packets), beside the measured factor (the hub's bytes less the
 * probe's, over the payload), flagged above 5 %: NULL for a path that does not cross the hub. */
static struct json_object *cell_expected(struct json_object *path, const char *cell)
{
    const struct ml_path_ops *ops = ml_path_find(ml_j_str(path, "name"));
    if (!ops || !cell)
        return NULL;
    /* A path its dataplane found direct does not cross the hub: nothing to expect. */
    const struct ml_encap *encap =
        g_strcmp0(ml_j_str(path, "hub_role"), "quiet") ? ops->encap : NULL;
    g_autoptr(GPtrArray) ps = ok_passes(path, cell);
    struct ml_physics_counts n = {0};
    double hub = 0, under = 0, under_payload = 0;
    bool sender_known = ps->len > 0, receiver_known = ps->len > 0;
    for (guint i = 0; i < ps->len; i++) {
        double p = 0, k = 0, rx = 0, tx = 0, probe = 0, probe_k = 0, retr = 0, sent = 0, u = 0;
        struct json_object *x = g_ptr_array_index(ps, i);
        if (ml_j_num_at(x, "payload_bytes", &p) && ml_j_num_at(x, "hub_rx_packets", &k) &&
            ml_j_num_at(x, "hub_rx_bytes", &rx) && ml_j_num_at(x, "hub_tx_bytes", &tx)) {
            /* a lab over several hosts: what the underlay carried, pooled like the hub's */
            if (ml_j_num_at(x, "underlay_bytes_per_payload_byte", &u)) {
                under += u * p;
                under_payload += p;
            }
            /* results of before the probe's bytes were counted have none to take out */
            ml_j_num_at(x, "probe_hub_bytes", &probe);
            ml_j_num_at(x, "probe_hub_rx_packets", &probe_k);
            ml_j_num_at(x, "retransmits", &retr);
            /* over the whole transfer; results of before it was recorded had no warm-up */
            double unreceived = 0;
            if (ml_j_num_at(x, "unreceived_bytes", &unreceived))
                n.unreceived_bytes += unreceived;
            else if (ml_j_num_at(x, "sent_bytes", &sent) && sent > p)
                n.unreceived_bytes += sent - p;
            /* the sender's wire and the receiver's, each known only when every pass kept it */
            double sender = 0, receiver = 0;
            if (ml_j_num_at(x, "sender_tx_bytes", &sender) && sender > 0)
                n.sender_tx_bytes += sender;
            else
                sender_known = false;
            if (ml_j_num_at(x, "receiver_tx_packets", &receiver) && receiver > 0)
                n.receiver_tx_packets += receiver;
            else
                receiver_known = false;
            n.payload_bytes += p;
            n.hub_rx_packets += k;
            n.probe_rx_packets += probe_k;
            n.retransmits += retr;
            hub += rx + tx - probe;
        }
    }
    if (!sender_known)
        n.sender_tx_bytes = 0;
    if (!receiver_known)
        n.receiver_tx_packets = 0;
    struct ml_physics ph;
    if (!ml_physics_expected(encap, &n, &ph))
        return NULL;
    ml_physics_compare(&ph, hub / n.payload_bytes);
    struct json_object *o = ml_physics_json(&ph);
    if (under_payload > 0) {
        /* Every frame at the hub crossed the underlay, VXLAN's bytes on each (hostlink.h). */
        double want = ml_physics_underlay(&ph, ML_VXLAN_OVERHEAD);
        json_object_object_add(o, "underlay_bytes_per_payload_byte",
                               json_object_new_double(round(want * 1e4) / 1e4));
        json_object_object_add(o, "measured_underlay_bytes_per_payload_byte",
                               json_object_new_double(round(under / under_payload * 1e4) / 1e4));
    }
    return o;
}

struct json_object *ml_summary_cell_expected(struct json_object *path, const struct ml_metric *m)
{
    (void)m;
    struct json_object *o = json_object_new_object();
    g_autoptr(GPtrArray) names = cell_names(path);
    for (guint i = 0; i < names->len; i++)
        json_object_object_add(o, g_ptr_array_index(names, i),
                               cell_expected(path, g_ptr_array_index(names, i)));
    return o;
}

/* The headline cell's physics. */
struct json_object *ml_summary_expected(struct json_object *path, const struct ml_metric *m)
{
    (void)m;
    return cell_expected(path, headline_cell(path));
}

/* ---- loss under load ---- */

/* The share of the pings of a cell's passes that passed that got no reply, in %: all of them
 * pooled, as each pass counts its own (pass.c rtt_json): the pings its deadline cut off before a
 * reply could come (rtt_loaded.cut_off) are neither sent nor lost. Counted as lost, they read
 * 5.9 % for a cell whose passes read 1.0, 0.7 and 0.7 (the 2026-12-04 review). */
static double cell_loss(struct json_object *path, const char *cell)
{
    g_autoptr(GPtrArray) ps = ok_passes(path, cell);
    double sent = 0, got = 0;
    for (guint i = 0; i < ps->len; i++) {
        double t, r, cut = 0;
        struct json_object *x = g_ptr_array_index(ps, i);
        if (ml_j_num_at(x, "rtt_loaded.transmitted", &t) &&
            ml_j_num_at(x, "rtt_loaded.received", &r)) {
            ml_j_num_at(x, "rtt_loaded.cut_off", &cut);
            sent += MAX(0, t - cut);
            got += MIN(r, MAX(0, t - cut));
        }
    }
    return sent > 0 ? 100 * (sent - got) / sent : NAN;
}

/* Whether any pass that passed of a cell has `key` true (a p99 that is only a lower bound makes
 * the cell's median one too). */
static bool cell_any(struct json_object *path, const char *cell, const char *key)
{
    g_autoptr(GPtrArray) ps = ok_passes(path, cell);
    bool any = false;
    for (guint i = 0; i < ps->len; i++) {
        g_autoptr(GPtrArray) v = ml_j_values(g_ptr_array_index(ps, i), key, NULL);
        any |= v->len == 1 && json_object_get_boolean(g_ptr_array_index(v, 0));
    }
    return any;
}

/* How many of a fixed-rate cell's passes that passed carried less than 95 % of the offered
 * rate; null for a full-speed cell. */
static struct json_object *cell_below_offered(struct json_object *path, const char *cell)
{
    g_autoptr(GPtrArray) ps = ok_passes(path, cell);
    int below = 0;
    bool fixed = false;
    for (guint i = 0; i < ps->len; i++) {
        struct json_object *x = g_ptr_array_index(ps, i);
        fixed |= !g_strcmp0(ml_j_str(x, "rate"), "fixed");
        below += json_object_get_boolean(json_object_object_get(x, "below_offered_rate"));
    }
    return fixed ? json_object_new_int(below) : NULL;
}

struct json_object *ml_summary_cell_loss(struct json_object *path, const struct ml_metric *m)
{
    struct json_object *o = json_object_new_object();
    g_autoptr(GPtrArray) names = cell_names(path);
    for (guint i = 0; i < names->len; i++) {
        const char *c = g_ptr_array_index(names, i);
        struct json_object *v = !strcmp(m->of, "loss_percent") ? num_or_null(cell_loss(path, c))
                                : !strcmp(m->of, "below_offered_rate")
                                    ? cell_below_offered(path, c)
                                    : json_object_new_boolean(cell_any(path, c, m->of));
        json_object_object_add(o, c, v);
    }
    return o;
}

/* A headline flag: the headline cell's value of `of` ("rtt_loaded_p99_at_least"). */
struct json_object *ml_summary_headline_flag(struct json_object *path, const struct ml_metric *m)
{
    const char *c = headline_cell(path);
    g_autofree char *key = g_strdup_printf("cells.%s.%s", c ? c : "", m->of);
    g_autoptr(GPtrArray) v = ml_j_values(path, key, NULL);
    struct json_object *x = v->len == 1 ? g_ptr_array_index(v, 0) : NULL;
    return c && json_object_is_type(x, json_type_boolean)
               ? json_object_new_boolean(json_object_get_boolean(x))
               : NULL;
}

/* A flag of the path's own records ("idle.rtt.p99_at_least"). */
struct json_object *ml_summary_copy_flag(struct json_object *path, const struct ml_metric *m)
{
    g_autoptr(GPtrArray) v = ml_j_values(path, m->of, NULL);
    struct json_object *x = v->len == 1 ? g_ptr_array_index(v, 0) : NULL;
    return json_object_is_type(x, json_type_boolean)
               ? json_object_new_boolean(json_object_get_boolean(x))
               : NULL;
}

/* ---- the table ---- */

/* A figure that its collector records; one that a summary computes from the records. */
/* Per cell: whether the hub's vCPU was saturated over a pairs cell's passes (their median busy
 * share at ML_PAIRS_HUB_SATURATED_PERCENT or more); null for a cell without the share. */
static struct json_object *summary_cell_saturated(struct json_object *path,
                                                  const struct ml_metric *m)
{
    (void)m;
    struct json_object *o = json_object_new_object();
    g_autoptr(GPtrArray) names = cell_names(path);
    for (guint i = 0; i < names->len; i++) {
        g_autofree double *v = NULL;
        size_t n =
            ml_cell_pass_values(path, g_ptr_array_index(names, i), "hub_cpu_busy_percent", &v);
        double med = ml_median(v, n);
        json_object_object_add(o, g_ptr_array_index(names, i),
                               n && isfinite(med)
                                   ? json_object_new_boolean(med >= ML_PAIRS_HUB_SATURATED_PERCENT)
                                   : NULL);
    }
    return o;
}

/* The fewest flows (pairs-K's K) at which the hub's vCPU was saturated; null when no pairs cell
 * saturated it. */
static struct json_object *summary_pairs_saturated(struct json_object *path,
                                                   const struct ml_metric *m)
{
    (void)m;
    g_autoptr(GPtrArray) names = cell_names(path);
    long long fewest = 0;
    for (guint i = 0; i < names->len; i++) {
        g_autofree double *v = NULL, *k = NULL;
        size_t n =
            ml_cell_pass_values(path, g_ptr_array_index(names, i), "hub_cpu_busy_percent", &v);
        size_t nk = ml_cell_pass_values(path, g_ptr_array_index(names, i), "pairs", &k);
        double med = ml_median(v, n);
        if (n && nk && isfinite(med) && med >= ML_PAIRS_HUB_SATURATED_PERCENT &&
            (fewest == 0 || (long long)k[0] < fewest))
            fewest = (long long)k[0];
    }
    return fewest ? json_object_new_int64(fewest) : NULL;
}

#define RECORDED(key, u, col) .name = key, .unit = u, .collector = &col
#define SUMMARY(key, u, col, fn, from)                                                             \
    .name = key, .unit = u, .collector = &col, .summarise = fn, .of = from
#define SHOWN(...) .shown_in = {__VA_ARGS__}
/* A figure's 95 % interval over its passes: the summary that computes it, named after the
 * figure, and the field that shows it beside the figure. */
#define CI95(key, u, fn, from)                                                                     \
    {                                                                                              \
        SUMMARY(key "_ci95", u, cells_col, fn, from)                                               \
    }
#define WITH_CI95(key) .interval = key "_ci95"

const struct ml_metric ml_metrics[] = {
    /* idle: the hub's baseline and the round-trip times before any load (20 Hz) */
    {RECORDED("idle.hub_bytes_per_s", "byte/s", idle_col)},
    {RECORDED("idle.rtt.p50_ms", "ms", idle_col), SHOWN(&ml_table_latency),
     .header = "RTT idle p50 / p90 / p99 / max ms", .significant = 3,
     .at_least = "idle.rtt.p50_at_least", .lost = "idle.rtt.loss_percent", .lost_over = 50},
    {RECORDED("idle.rtt.p90_ms", "ms", idle_col), SHOWN(&ml_table_latency),
     .header = "RTT idle p50 / p90 / p99 / max ms", .significant = 3,
     .at_least = "idle.rtt.p90_at_least", .lost = "idle.rtt.loss_percent", .lost_over = 10},
    {RECORDED("idle.rtt.p99_ms", "ms", idle_col), SHOWN(&ml_table_latency),
     .header = "RTT idle p50 / p90 / p99 / max ms", .significant = 3,
     .at_least = "idle.rtt.p99_at_least", .lost = "idle.rtt.loss_percent", .lost_over = 1},
    {RECORDED("idle.rtt.max_ms", "ms", idle_col), SHOWN(&ml_table_latency),
     .header = "RTT idle p50 / p90 / p99 / max ms", .significant = 3},
    {RECORDED("idle.rtt.loss_percent", "%", idle_col), SHOWN(&ml_table_latency),
     .header = "Idle loss %", .decimals = 1},
    /* the baseline again before the fixed-rate passes, the same pings running */
    {RECORDED("idle_fixed.hub_bytes_per_s", "byte/s", idle_fixed_col)},
    /* every pass: what iperf3 delivered, what crossed the hub, each second, the latency
     * under load, the CPU of every guest and daemon, the host */
    {RECORDED("passes.seq", "pass", passes_col), SHOWN(&ml_table_passes), .header = "Seq"},
    {RECORDED("passes.bits_per_second", "bit/s", passes_col), SHOWN(&ml_table_passes),
     .header = "Mbit/s", .scale = 1e-6, .significant = 3},
    {RECORDED("passes.payload_bytes", "byte", passes_col), SHOWN(&ml_table_passes),
     .header = "Payload bytes"},
    {RECORDED("passes.hub_bytes_per_payload_byte", "byte/byte", passes_col),
     SHOWN(&ml_table_passes), .header = "Hub bytes per payload byte", .significant = 3},
    {RECORDED("passes.retransmits", "packet", passes_col), SHOWN(&ml_table_passes),
     .header = "Retransmits"},
    {RECORDED("passes.rtt_loaded.p99_ms", "ms", passes_col), SHOWN(&ml_table_passes),
     .header = "RTT loaded p99 ms", .significant = 3, .at_least = "passes.rtt_loaded.p99_at_least",
     .lost = "passes.rtt_loaded.loss_percent", .lost_over = 1},
    {RECORDED("passes.rtt_loaded.loss_percent", "%", passes_col), SHOWN(&ml_table_passes),
     .header = "Loaded loss %", .decimals = 1},
    {RECORDED("passes.carried_percent_of_offered", "%", passes_col), SHOWN(&ml_table_passes),
     .header = "% of the offered rate", .decimals = 1},
    {RECORDED("passes.below_offered_rate", "yes/no", passes_col)},
    {RECORDED("passes.hub_bytes_per_payload_byte_raw", "byte/byte", passes_col)},
    {RECORDED("passes.hub_rx_bytes_per_payload_byte", "byte/byte", passes_col)},
    {RECORDED("passes.hub_tx_bytes_per_payload_byte", "byte/byte", passes_col)},
    {RECORDED("passes.probe_hub_bytes", "byte", passes_col)},
    {RECORDED("passes.probe_hub_rx_packets", "packet", passes_col)},
    {RECORDED("passes.probe_frame_bytes", "byte", passes_col)},
    {RECORDED("passes.hub_rx_bytes", "byte", passes_col)},
    {RECORDED("passes.hub_tx_bytes", "byte", passes_col)},
    {RECORDED("passes.hub_rx_packets", "packet", passes_col)},
    {RECORDED("passes.hub_tx_packets", "packet", passes_col)},
    {RECORDED("passes.hub_rx_dropped_frames", "frame", passes_col)},
    {RECORDED("passes.series", "byte per second", passes_col)},
    {RECORDED("passes.cpu", "s", passes_col)},
    {RECORDED("passes.daemons_cpu_s", "s", passes_col)},
    {RECORDED("passes.daemons_s", "s", passes_col)},
    {RECORDED("passes.daemons_cpu_above_idle_s", "s", passes_col)},
    {RECORDED("passes.daemons_rss_kib", "KiB", passes_col)},
    {RECORDED("passes.host", "%", passes_col)},
    /* pairs-K: the flows at once, each flow's figures, the hub's busy CPU over the transfer */
    {RECORDED("passes.pairs", "flow", passes_col)},
    {RECORDED("passes.flows", "object", passes_col)},
    {RECORDED("passes.per_flow_bits_per_second", "bit/s", passes_col)},
    {RECORDED("passes.hub_cpu_busy_percent", "%", passes_col)},
    /* the cells of the matrix: each (direction, streams, rate) over its passes that passed */
    {SUMMARY("cells", "object", cells_col, ml_summary_cells, NULL)},
    {RECORDED("cells.*.passes_ok", "pass", cells_col), SHOWN(&ml_table_cells),
     .header = "Passes ok / failed"},
    {RECORDED("cells.*.passes_failed", "pass", cells_col), SHOWN(&ml_table_cells),
     .header = "Passes ok / failed"},
    {SUMMARY("cells.*.pairs", "flow", cells_col, ml_summary_cell_median, "pairs"),
     SHOWN(&ml_table_pairs), .header = "Flows"},
    CI95("cells.*.median_bits_per_second", "bit/s", ml_summary_cell_ci95, "bits_per_second"),
    {SUMMARY("cells.*.median_bits_per_second", "bit/s", cells_col, ml_summary_cell_median,
             "bits_per_second"),
     SHOWN(&ml_table_cells, &ml_table_pairs), .header = "Median Mbit/s", .scale = 1e-6,
     .significant = 3, WITH_CI95("cells.*.median_bits_per_second")},
    {SUMMARY("cells.*.median_per_flow_bits_per_second", "bit/s", cells_col, ml_summary_cell_median,
             "per_flow_bits_per_second"),
     SHOWN(&ml_table_pairs), .header = "Per flow Mbit/s", .scale = 1e-6, .significant = 3},
    {SUMMARY("cells.*.cv_bits_per_second_percent", "%", cells_col, ml_summary_cell_cv,
             "bits_per_second"),
     SHOWN(&ml_table_cells), .header = "CV %", .decimals = 1},
    CI95("cells.*.median_hub_bytes_per_payload_byte", "byte/byte", ml_summary_cell_ci95,
         "hub_bytes_per_payload_byte"),
    {SUMMARY("cells.*.median_hub_bytes_per_payload_byte", "byte/byte", cells_col,
             ml_summary_cell_median, "hub_bytes_per_payload_byte"),
     SHOWN(&ml_table_cells, &ml_table_pairs), .header = "Hub bytes per payload byte",
     .significant = 3, WITH_CI95("cells.*.median_hub_bytes_per_payload_byte")},
    {SUMMARY("cells.*.median_hub_cpu_busy_percent", "%", cells_col, ml_summary_cell_median,
             "hub_cpu_busy_percent"),
     SHOWN(&ml_table_pairs), .header = "Hub CPU busy %", .decimals = 0},
    {SUMMARY("cells.*.median_hub_rx_dropped_frames", "frame", cells_col, ml_summary_cell_median,
             "hub_rx_dropped_frames"),
     SHOWN(&ml_table_pairs), .header = "Frames dropped at the hub's door", .decimals = 0},
    {SUMMARY("cells.*.hub_saturated", "yes/no", cells_col, summary_cell_saturated, NULL),
     SHOWN(&ml_table_pairs), .header = "Hub vCPU saturated"},
    {SUMMARY("hub_saturated_at_pairs", "flow", cells_col, summary_pairs_saturated, NULL)},
    {SUMMARY("cells.*.cv_hub_bytes_per_payload_byte_percent", "%", cells_col, ml_summary_cell_cv,
             "hub_bytes_per_payload_byte")},
    {SUMMARY("cells.*.rtt_loaded_pooled", "ms", cells_col, ml_summary_cell_pooled_rtt,
             "rtt_loaded")},
    CI95("cells.*.rtt_loaded_p50_ms", "ms", ml_summary_cell_ci95, "rtt_loaded.p50_ms"),
    {SUMMARY("cells.*.rtt_loaded_p50_ms", "ms", cells_col, ml_summary_cell_median,
             "rtt_loaded.p50_ms"),
     SHOWN(&ml_table_cells), .header = "RTT loaded p50 / p99 ms", .significant = 3,
     WITH_CI95("cells.*.rtt_loaded_p50_ms")},
    CI95("cells.*.rtt_loaded_p90_ms", "ms", ml_summary_cell_ci95, "rtt_loaded.p90_ms"),
    {SUMMARY("cells.*.rtt_loaded_p90_ms", "ms", cells_col, ml_summary_cell_median,
             "rtt_loaded.p90_ms"),
     WITH_CI95("cells.*.rtt_loaded_p90_ms")},
    {SUMMARY("cells.*.rtt_loaded_p99_at_least", "yes/no", cells_col, ml_summary_cell_loss,
             "rtt_loaded.p99_at_least")},
    CI95("cells.*.rtt_loaded_p99_ms", "ms", ml_summary_cell_ci95, "rtt_loaded.p99_ms"),
    {SUMMARY("cells.*.rtt_loaded_p99_ms", "ms", cells_col, ml_summary_cell_median,
             "rtt_loaded.p99_ms"),
     SHOWN(&ml_table_cells), .header = "RTT loaded p50 / p99 ms", .significant = 3,
     .at_least = "cells.*.rtt_loaded_p99_at_least", .lost = "cells.*.rtt_loaded_loss_percent",
     .lost_over = 1, WITH_CI95("cells.*.rtt_loaded_p99_ms")},
    {SUMMARY("cells.*.rtt_loaded_loss_percent", "%", cells_col, ml_summary_cell_loss,
             "loss_percent"),
     SHOWN(&ml_table_cells), .header = "Loaded loss %", .decimals = 1},
    {SUMMARY("cells.*.passes_below_offered_rate", "pass", cells_col, ml_summary_cell_loss,
             "below_offered_rate"),
     SHOWN(&ml_table_cells), .header = "Passes under 95 % of the offered rate"},
    {SUMMARY("cells.*.expected", "byte/byte", cells_col, ml_summary_cell_expected, NULL)},
    CI95("cells.*.rtt_loaded_max_ms", "ms", ml_summary_cell_ci95, "rtt_loaded.max_ms"),
    {SUMMARY("cells.*.rtt_loaded_max_ms", "ms", cells_col, ml_summary_cell_median,
             "rtt_loaded.max_ms"),
     WITH_CI95("cells.*.rtt_loaded_max_ms")},
    {SUMMARY("cells.*.cpu_s_per_gb", "s/GB", cells_col, ml_summary_cell_cpu_per_gb, "cpu")},
    {SUMMARY("cells.*.daemons_cpu_s_per_gb", "s/GB", cells_col, ml_summary_cell_cpu_per_gb,
             "daemons_cpu_s")},
    {SUMMARY("cells.*.daemons_cpu_above_idle_s_per_gb", "s/GB", cells_col,
             ml_summary_cell_cpu_per_gb, "daemons_cpu_above_idle_s")},
    /* the headline: the first full-speed cell's figures, the hub's CPU included */
    {SUMMARY("headline_cell", "name", cells_col, ml_summary_headline_cell, NULL)},
    CI95("median_bits_per_second", "bit/s", ml_summary_headline_ci95,
         "median_bits_per_second_ci95"),
    {SUMMARY("median_bits_per_second", "bit/s", cells_col, ml_summary_headline,
             "median_bits_per_second"),
     SHOWN(&ml_table_comparison), .header = "Median Mbit/s", .scale = 1e-6, .significant = 3,
     WITH_CI95("median_bits_per_second")},
    {SUMMARY("cv_bits_per_second_percent", "%", cells_col, ml_summary_headline,
             "cv_bits_per_second_percent"),
     SHOWN(&ml_table_comparison), .header = "CV %", .decimals = 1},
    CI95("hub_bytes_per_payload_byte", "byte/byte", ml_summary_headline_ci95,
         "median_hub_bytes_per_payload_byte_ci95"),
    {SUMMARY("hub_bytes_per_payload_byte", "byte/byte", cells_col, ml_summary_headline,
             "median_hub_bytes_per_payload_byte"),
     SHOWN(&ml_table_comparison), .header = "Hub bytes per payload byte", .significant = 3,
     WITH_CI95("hub_bytes_per_payload_byte")},
    {SUMMARY("rtt_idle_p99_at_least", "yes/no", idle_col, ml_summary_copy_flag,
             "idle.rtt.p99_at_least")},
    {SUMMARY("rtt_loaded_p99_at_least", "yes/no", cells_col, ml_summary_headline_flag,
             "rtt_loaded_p99_at_least")},
    {SUMMARY("rtt_idle_p99_ms", "ms", idle_col, ml_summary_copy, "idle.rtt.p99_ms"),
     SHOWN(&ml_table_comparison), .header = "RTT p99 idle / loaded ms", .significant = 3,
     .at_least = "rtt_idle_p99_at_least", .lost = "idle.rtt.loss_percent", .lost_over = 1},
    CI95("rtt_loaded_p99_ms", "ms", ml_summary_headline_ci95, "rtt_loaded_p99_ms_ci95"),
    {SUMMARY("rtt_loaded_p99_ms", "ms", cells_col, ml_summary_headline, "rtt_loaded_p99_ms"),
     SHOWN(&ml_table_comparison), .header = "RTT p99 idle / loaded ms", .significant = 3,
     .at_least = "rtt_loaded_p99_at_least", .lost = "rtt_loaded_loss_percent", .lost_over = 1,
     WITH_CI95("rtt_loaded_p99_ms")},
    {SUMMARY("rtt_loaded_loss_percent", "%", cells_col, ml_summary_headline,
             "rtt_loaded_loss_percent"),
     SHOWN(&ml_table_latency), .header = "Loaded loss %", .decimals = 1},
    CI95("hub_cpu_s_per_gb", "s/GB", ml_summary_hub_cpu_ci95, NULL),
    {SUMMARY("hub_cpu_s_per_gb", "s/GB", cells_col, ml_summary_hub_cpu, "busy_above_idle_s_per_gb"),
     SHOWN(&ml_table_comparison), .header = "Hub CPU s/GB", .significant = 3,
     WITH_CI95("hub_cpu_s_per_gb")},
    {SUMMARY("expected", "byte/byte", cells_col, ml_summary_expected, NULL)},
    {SUMMARY("vps", "object", cells_col, ml_summary_vps, NULL)},
    {SUMMARY("warnings", "sentence", cells_col, ml_summary_warnings, NULL)},
    /* what the seed recorded beside the Tailscale direct numbers: the daemons' memory (KiB in
     * the *_rss_kib keys, MiB in memory_used_mib) */
    {RECORDED("observed", "KiB, MiB", observed)},
};

const size_t ml_metrics_count = G_N_ELEMENTS(ml_metrics);

/* ---- the loops ---- */

/* Writes v at a dotted key, into the object its parent key names. A key "a.*.b" takes v as an
 * object of member names to values: each goes to a.MEMBER.b. */
static void put_at(struct json_object *o, const char *key, struct json_object *v)
{
    const char *star = strstr(key, ".*.");
    if (star) {
        g_autofree char *parent = g_strndup(key, (size_t)(star - key));
        g_autoptr(GPtrArray) p = ml_j_values(o, parent, NULL);
        struct json_object *into = p->len == 1 ? g_ptr_array_index(p, 0) : NULL;
        if (!json_object_is_type(into, json_type_object)) {
            into = json_object_new_object();
            put_at(o, parent, into);
        }
        json_object_object_foreach(v, member, value)
        {
            struct json_object *m = json_object_object_get(into, member);
            if (!json_object_is_type(m, json_type_object)) {
                m = json_object_new_object();
                json_object_object_add(into, member, m);
            }
            json_object_object_add(m, star + 3, json_object_get(value));
        }
        json_object_put(v);
        return;
    }
    const char *dot = strrchr(key, '.');
    if (dot) {
        g_autofree char *parent = g_strndup(key, (size_t)(dot - key));
        g_autoptr(GPtrArray) p = ml_j_values(o, parent, NULL);
        o = p->len == 1 ? g_ptr_array_index(p, 0) : NULL;
        key = dot + 1;
    }
    if (json_object_is_type(o, json_type_object))
        json_object_object_add(o, key, v);
    else
        json_object_put(v);
}

static bool collected_before(const struct ml_metric *table, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (table[j].collector == table[i].collector)
            return true;
    return false;
}

static void progress_summary(const char *path, const struct ml_metric *m, struct json_object *v)
{
    double x;
    if (ml_j_value_num(v, &x))
        ml_progress("measure", "%s: %s %.4g %s", path, m->name, x, m->unit);
}

void ml_metrics_summarise(const struct ml_metric *table, size_t n, const char *path,
                          struct json_object *figures)
{
    for (size_t i = 0; i < n; i++) {
        const struct ml_metric *m = &table[i];
        if (!m->summarise)
            continue;
        struct json_object *v = m->summarise(figures, m);
        progress_summary(path, m, v);
        put_at(figures, m->name, v);
    }
}

bool ml_metrics_run_collectors(const struct ml_metric *table, size_t n, struct ml_collect_ctx *c,
                               struct json_object *into, GError **err)
{
    for (size_t i = 0; i < n; i++) {
        const struct ml_collector *col = table[i].collector;
        if (!col || !col->collect || collected_before(table, i))
            continue;
        struct json_object *record = NULL;
        if (!col->collect(c, col, &record, err))
            return false;
        if (record)
            json_object_object_add(into, col->key, record);
    }
    return true;
}

struct json_object *ml_metrics_collect(const struct ml_metric *table, size_t n,
                                       struct ml_collect_ctx *c, GError **err)
{
    struct json_object *figures = json_object_new_object();
    if (!ml_metrics_run_collectors(table, n, c, figures, err)) {
        json_object_put(figures);
        return NULL;
    }
    ml_metrics_summarise(table, n, c->path, figures);
    return figures;
}

void ml_metrics_withhold(const struct ml_metric *table, size_t n, struct json_object *path)
{
    for (size_t i = 0; i < n; i++) {
        const struct ml_metric *m = &table[i];
        g_autofree char *top = g_strndup(m->name, strcspn(m->name, "."));
        const struct ml_collector *col = m->collector;
        enum ml_withheld w = col && strcmp(col->key, top) == 0 ? col->withheld : ML_WITHHELD_NULL;
        if (w == ML_WITHHELD_ABSENT)
            json_object_object_del(path, top);
        else
            json_object_object_add(path, top,
                                   w == ML_WITHHELD_EMPTY_ARRAY    ? json_object_new_array()
                                   : w == ML_WITHHELD_EMPTY_OBJECT ? json_object_new_object()
                                                                   : NULL);
    }
}
