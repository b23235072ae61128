#include "measure/metrics.h"

#include "dataplanes/path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "measure/parse_iperf.h"
#include "measure/parse_ping.h"
#include "virt/agent.h"
#include "virt/virt.h"

/* ---- collectors: what runs on a path ---- */

static bool collect_ping(struct ml_collect_ctx *c, const struct ml_collector *self,
                         struct json_object **ret, GError **err)
{
    const struct ml_profile *prof = c->profile;
    ml_progress("measure", "%s: ping %s, %u packets", c->path, c->target, prof->ping_count);
    g_autofree char *cmd =
        g_strdup_printf("ping -n -c %u -i 0.2 -W 1 %s%s%s", prof->ping_count,
                        self->options ? self->options : "", self->options ? " " : "", c->target);
    struct ml_exec ex = {0};
    if (!ml_agent_exec(c->client, cmd, NULL, prof->ping_count * 0.2 + 30, &ex, err))
        return false;
    struct ml_ping_result p = {0};
    bool parsed = ml_ping_parse(ex.out, &p, err);
    ml_exec_clear(&ex);
    if (!parsed)
        return false;
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "target", json_object_new_string(c->target));
    json_object_object_add(o, "count", json_object_new_int((int)prof->ping_count));
    json_object_object_add(o, "transmitted", json_object_new_int((int)p.transmitted));
    json_object_object_add(o, "received", json_object_new_int((int)p.received));
    json_object_object_add(o, "errors", json_object_new_int((int)p.errors));
    json_object_object_add(o, "duplicates", json_object_new_int((int)p.duplicates));
    json_object_object_add(o, "min_ms", p.have_rtt ? json_object_new_double(p.min_ms) : NULL);
    json_object_object_add(o, "avg_ms", p.have_rtt ? json_object_new_double(p.avg_ms) : NULL);
    json_object_object_add(o, "max_ms", p.have_rtt ? json_object_new_double(p.max_ms) : NULL);
    json_object_object_add(o, "mdev_ms",
                           p.have_rtt && p.mdev_ms >= 0 ? json_object_new_double(p.mdev_ms) : NULL);
    *ret = o;
    return true;
}

static bool iperf(struct ml_collect_ctx *c, const struct ml_collector *self, unsigned seconds,
                  struct ml_iperf_result *ret, GError **err)
{
    g_autofree char *cmd =
        g_strdup_printf("iperf3 -J -c %s -t %u%s%s", c->target, seconds, self->options ? " " : "",
                        self->options ? self->options : "");
    struct ml_exec ex = {0};
    if (!ml_agent_exec(c->client, cmd, NULL, seconds + 60.0, &ex, err))
        return false;
    bool ok = ml_iperf_parse(ex.out, ret, err);
    ml_exec_clear(&ex);
    return ok;
}

static bool collect_transfer(struct ml_collect_ctx *c, const struct ml_collector *self,
                             struct json_object **ret, GError **err)
{
    unsigned seconds = c->profile->pass_s;
    ml_progress("measure", "%s: %u s transfer with the hub's NIC counters", c->path, seconds);
    long long rx0, tx0, rx1, tx1;
    struct ml_iperf_result tr;
    if (!ml_virt_nic_bytes(c->hub, c->hub_tap, &rx0, &tx0, err) ||
        !iperf(c, self, seconds, &tr, err) ||
        !ml_virt_nic_bytes(c->hub, c->hub_tap, &rx1, &tx1, err))
        return false;
    struct json_object *t = json_object_new_object();
    json_object_object_add(t, "seconds", json_object_new_double(tr.seconds));
    json_object_object_add(t, "payload_bytes", json_object_new_int64((int64_t)tr.bytes_received));
    json_object_object_add(t, "hub_rx_bytes", json_object_new_int64(rx1 - rx0));
    json_object_object_add(t, "hub_tx_bytes", json_object_new_int64(tx1 - tx0));
    json_object_object_add(t, "bits_per_second",
                           json_object_new_double(tr.bits_per_second_received));
    ml_progress("measure", "%s: %llu payload bytes, hub %lld in / %lld out", c->path,
                (unsigned long long)tr.bytes_received, rx1 - rx0, tx1 - tx0);
    *ret = t;
    return true;
}

static bool collect_passes(struct ml_collect_ctx *c, const struct ml_collector *self,
                           struct json_object **ret, GError **err)
{
    const struct ml_profile *prof = c->profile;
    struct json_object *passes = json_object_new_array();
    for (unsigned i = 0; i < prof->passes; i++) {
        ml_progress("measure", "%s: pass %u of %u, %u s", c->path, i + 1, prof->passes,
                    prof->pass_s);
        struct ml_iperf_result r;
        if (!iperf(c, self, prof->pass_s, &r, err)) {
            json_object_put(passes);
            return false;
        }
        struct json_object *p = json_object_new_object();
        json_object_object_add(p, "seconds", json_object_new_double(r.seconds));
        json_object_object_add(p, "bytes", json_object_new_int64((int64_t)r.bytes_received));
        json_object_object_add(p, "bits_per_second",
                               json_object_new_double(r.bits_per_second_received));
        json_object_object_add(p, "retransmits",
                               r.retransmits >= 0 ? json_object_new_int64(r.retransmits) : NULL);
        json_object_array_add(passes, p);
        ml_progress("measure", "%s: pass %u: %.1f Mbit/s, %lld retransmits", c->path, i + 1,
                    r.bits_per_second_received / 1e6, (long long)r.retransmits);
    }
    *ret = passes;
    return true;
}

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
    if (!dp)
        return true;
    for (size_t k = 0; ml_paths[k]; k++)
        if (ml_paths[k]->dataplane == dp) {
            if (ml_paths[k] != ops)
                return true;
            break;
        }
    struct json_object *extra = NULL;
    if (json_object_object_get_ex(ml_dataplane_state(c->lab, dp), "observed", &extra))
        *ret = json_object_get(extra);
    return true;
}

static const struct ml_collector ping = {
    .key = "ping", .collect = collect_ping, .withheld = ML_WITHHELD_NULL};
static const struct ml_collector transfer = {
    .key = "transfer", .collect = collect_transfer, .withheld = ML_WITHHELD_NULL};
static const struct ml_collector passes = {
    .key = "passes", .collect = collect_passes, .withheld = ML_WITHHELD_EMPTY_ARRAY};
static const struct ml_collector observed = {
    .key = "observed", .collect = collect_observed, .withheld = ML_WITHHELD_ABSENT};

/* ---- summaries ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double ml_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static struct json_object *num_or_null(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

static bool number(struct json_object *v, double *ret)
{
    if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
        return false;
    *ret = json_object_get_double(v);
    return isfinite(*ret);
}

static bool number_at(struct json_object *o, const char *key, double *ret)
{
    g_autoptr(GPtrArray) v = ml_metric_values(o, key, NULL);
    return v->len == 1 && number(g_ptr_array_index(v, 0), ret);
}

struct json_object *ml_summary_median(struct json_object *path, const struct ml_metric *m)
{
    g_autoptr(GPtrArray) v = ml_metric_values(path, m->of, NULL);
    g_autofree double *x = g_new(double, v->len + 1);
    size_t n = 0;
    for (guint i = 0; i < v->len; i++)
        if (number(g_ptr_array_index(v, i), &x[n]))
            n++;
    return num_or_null(ml_median(x, n));
}

struct json_object *ml_summary_loss(struct json_object *path, const struct ml_metric *m)
{
    g_autofree char *sent = g_strconcat(m->of, ".transmitted", NULL);
    g_autofree char *got = g_strconcat(m->of, ".received", NULL);
    double tx, rx;
    if (!number_at(path, sent, &tx) || !number_at(path, got, &rx) || tx <= 0)
        return NULL;
    return json_object_new_double(100.0 * (tx - rx) / tx);
}

struct json_object *ml_summary_hub_factor(struct json_object *path, const struct ml_metric *m)
{
    g_autofree char *payload = g_strconcat(m->of, ".payload_bytes", NULL);
    g_autofree char *in = g_strconcat(m->of, ".hub_rx_bytes", NULL);
    g_autofree char *out = g_strconcat(m->of, ".hub_tx_bytes", NULL);
    double p, rx, tx;
    if (!number_at(path, payload, &p) || !number_at(path, in, &rx) || !number_at(path, out, &tx) ||
        p <= 0)
        return NULL;
    return json_object_new_double((rx + tx) / p);
}

/* ---- the table ---- */

const struct ml_report_table ml_table_comparison = {
    .title = "Comparison",
    .place = 10,
    .intro = "Payload bytes are what iperf3 delivered during the transfer (sum_received.bytes); "
             "hub bytes\nare the hub NIC's counters over the same transfer, as the hub guest sees "
             "them.",
    .check_column = true,
};

const struct ml_report_table ml_table_passes = {
    .title = "Throughput passes",
    .place = 20,
    .intro = "iperf3, TCP, one stream, passes of {profile.pass_s} s; each number is "
             "sum_received.bits_per_second.",
};

const struct ml_report_table ml_table_ping = {
    .title = "Ping",
    .place = 30,
    .target_column = true,
};

/* A figure that its collector records; one that a summary computes from the records. */
#define RECORDED(key, u, col) .name = key, .unit = u, .collector = &col
#define SUMMARY(key, u, col, fn, from)                                                             \
    .name = key, .unit = u, .collector = &col, .summarise = fn, .of = from
#define SHOWN(...) .shown_in = {__VA_ARGS__}

const struct ml_metric ml_metrics[] = {
    /* ping: round-trip times and loss, once the path is up */
    {RECORDED("ping.transmitted", "packet", ping), SHOWN(&ml_table_ping), .header = "Sent"},
    {RECORDED("ping.received", "packet", ping), SHOWN(&ml_table_ping), .header = "Received"},
    {SUMMARY("ping.loss_percent", "%", ping, ml_summary_loss, "ping"), SHOWN(&ml_table_ping),
     .header = "Loss %", .decimals = 1},
    {RECORDED("ping.duplicates", "packet", ping), SHOWN(&ml_table_ping), .header = "Duplicates"},
    {RECORDED("ping.errors", "packet", ping), SHOWN(&ml_table_ping), .header = "Errors"},
    {RECORDED("ping.min_ms", "ms", ping), SHOWN(&ml_table_ping), .header = "min / avg / max ms",
     .decimals = 3},
    {RECORDED("ping.avg_ms", "ms", ping), SHOWN(&ml_table_ping), .header = "min / avg / max ms",
     .decimals = 3},
    {RECORDED("ping.max_ms", "ms", ping), SHOWN(&ml_table_ping), .header = "min / avg / max ms",
     .decimals = 3},
    {RECORDED("ping.mdev_ms", "ms", ping)},
    /* the transfer: what crosses the hub for each byte of payload */
    {RECORDED("transfer.payload_bytes", "byte", transfer), SHOWN(&ml_table_comparison),
     .header = "Payload bytes (transfer)"},
    {RECORDED("transfer.hub_rx_bytes", "byte", transfer), SHOWN(&ml_table_comparison),
     .header = "Hub bytes in"},
    {RECORDED("transfer.hub_tx_bytes", "byte", transfer), SHOWN(&ml_table_comparison),
     .header = "Hub bytes out"},
    {SUMMARY("transfer.hub_bytes_per_payload_byte", "byte/byte", transfer, ml_summary_hub_factor,
             "transfer"),
     SHOWN(&ml_table_comparison), .header = "Hub bytes per payload byte", .decimals = 2},
    {RECORDED("transfer.seconds", "s", transfer)},
    {RECORDED("transfer.bits_per_second", "bit/s", transfer)},
    /* the throughput passes and their median */
    {RECORDED("passes.bits_per_second", "bit/s", passes), SHOWN(&ml_table_passes),
     .header = "Passes, Mbit/s", .scale = 1e-6, .decimals = 1},
    {SUMMARY("median_bits_per_second", "bit/s", passes, ml_summary_median,
             "passes.bits_per_second"),
     SHOWN(&ml_table_comparison, &ml_table_passes), .header = "Median Mbit/s", .scale = 1e-6,
     .decimals = 1},
    {RECORDED("passes.retransmits", "packet", passes), SHOWN(&ml_table_passes),
     .header = "Retransmits"},
    {RECORDED("passes.seconds", "s", passes)},
    {RECORDED("passes.bytes", "byte", passes)},
    /* what the seed recorded beside the Tailscale direct numbers: the daemons' memory (KiB in
     * the *_rss_kb keys, MiB in memory_used_mib) */
    {RECORDED("observed", "KiB, MiB", observed)},
};

const size_t ml_metrics_count = G_N_ELEMENTS(ml_metrics);

/* ---- the loops ---- */

/* Writes v at a dotted key, into the object its parent key names. */
static void put_at(struct json_object *o, const char *key, struct json_object *v)
{
    const char *dot = strrchr(key, '.');
    if (dot) {
        g_autofree char *parent = g_strndup(key, (size_t)(dot - key));
        g_autoptr(GPtrArray) p = ml_metric_values(o, parent, NULL);
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
    if (number(v, &x))
        ml_progress("measure", "%s: %s %.4g %s", path, m->name, x, m->unit);
    else
        ml_progress("measure", "%s: %s not obtained", path, m->name);
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

struct json_object *ml_metrics_collect(const struct ml_metric *table, size_t n,
                                       struct ml_collect_ctx *c, GError **err)
{
    struct json_object *figures = json_object_new_object();
    for (size_t i = 0; i < n; i++) {
        const struct ml_collector *col = table[i].collector;
        if (!col || collected_before(table, i))
            continue;
        struct json_object *record = NULL;
        if (!col->collect(c, col, &record, err)) {
            json_object_put(figures);
            return NULL;
        }
        if (record)
            json_object_object_add(figures, col->key, record);
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
                                   w == ML_WITHHELD_EMPTY_ARRAY ? json_object_new_array() : NULL);
    }
}
