#include "measure/measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "virt/agent.h"
#include "virt/host.h"
#include "measure/parse_iperf.h"
#include "measure/parse_ping.h"
#include "dataplanes/path.h"
#include "core/util.h"
#include "virt/virt.h"

#define PROBE_COUNT 20
#define PROBE_SIZE 1000
#define IPERF_PIDFILE "/run/meshlab-iperf3.pid"

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

struct ctx {
    struct ml_lab *lab;
    virDomainPtr client, server, hub;
    const char *hub_tap;
};

static struct ctx ctx_for(struct ml_lab *lab)
{
    const struct ml_topology *t = lab->topo;
    return (struct ctx){
        .lab = lab,
        .client = lab->dom[t->measure.client],
        .server = lab->dom[t->measure.server],
        .hub = lab->dom[t->wireguard.hub],
        .hub_tap = lab->plan->guests[t->wireguard.hub].tap,
    };
}

static bool hub_bytes(struct ctx *c, long long *rx, long long *tx, GError **err)
{
    return ml_virt_nic_bytes(c->hub, c->hub_tap, rx, tx, err);
}

static bool probe(struct ctx *c, const char *target, struct ml_evidence *ret, GError **err)
{
    memset(ret, 0, sizeof(*ret));
    g_autofree char *route_cmd = g_strdup_printf("ip -o route get %s", target);
    ret->route = ml_agent_run(c->client, route_cmd, NULL, 15, err);
    if (!ret->route)
        return false;
    g_strstrip(ret->route);
    /* ip pads its one-line output with tabs, backslashes and runs of spaces. */
    g_strdelimit(ret->route, "\t\\\n", ' ');
    g_auto(GStrv) words = g_strsplit(ret->route, " ", -1);
    GString *squashed = g_string_new(NULL);
    for (char **w = words; *w; w++)
        if (**w)
            g_string_append_printf(squashed, "%s%s", squashed->len ? " " : "", *w);
    g_free(ret->route);
    ret->route = g_string_free(squashed, FALSE);
    long long rx0, tx0, rx1, tx1;
    g_autofree char *cmd =
        g_strdup_printf("ping -n -q -c %d -i 0.05 -W 1 -s %d %s", PROBE_COUNT, PROBE_SIZE, target);
    struct ml_exec ex = {0};
    if (!hub_bytes(c, &rx0, &tx0, err) || !ml_agent_exec(c->client, cmd, NULL, 60, &ex, err) ||
        !hub_bytes(c, &rx1, &tx1, err)) {
        ml_exec_clear(&ex);
        return false;
    }
    struct ml_ping_result pr = {0};
    g_autoptr(GError) perr = NULL;
    if (ml_ping_parse(ex.out, &pr, &perr)) {
        ret->transmitted = pr.transmitted;
        ret->received = pr.received;
    }
    ml_exec_clear(&ex);
    ret->hub_bytes = (rx1 - rx0) + (tx1 - tx0);
    /* Each answered ping is an IPv4 packet of 20 + 8 + size bytes each way. */
    ret->probe_bytes = (long long)ret->received * 2 * (20 + 8 + PROBE_SIZE);
    return true;
}

static struct json_object *check(struct ctx *c, const struct ml_path_ops *ops, const char *when,
                                 const char *target, bool *ret_ok, GError **err)
{
    struct ml_evidence p;
    if (!probe(c, target, &p, err)) {
        ml_evidence_clear(&p);
        return NULL;
    }
    if (ops->dataplane && ops->dataplane->observe)
        ops->dataplane->observe(c->lab, &p);
    GString *ev = g_string_new(NULL);
    *ret_ok = ml_path_verdict(ops, c->lab->topo, &p, ev);
    ml_evidence_clear(&p);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "when", json_object_new_string(when));
    json_object_object_add(o, "ok", json_object_new_boolean(*ret_ok));
    json_object_object_add(o, "evidence", json_object_new_string(ev->str));
    ml_progress("check", "%s %s: %s — %s", ops->name, when, *ret_ok ? "ok" : "FAILED",
                ev->str);
    g_string_free(ev, TRUE);
    return o;
}

static bool iperf(struct ctx *c, const char *target, unsigned seconds, struct ml_iperf_result *ret,
                  GError **err)
{
    g_autofree char *cmd = g_strdup_printf("iperf3 -J -c %s -t %u", target, seconds);
    struct ml_exec ex = {0};
    if (!ml_agent_exec(c->client, cmd, NULL, seconds + 60.0, &ex, err))
        return false;
    bool ok = ml_iperf_parse(ex.out, ret, err);
    ml_exec_clear(&ex);
    return ok;
}

static struct json_object *num_or_null(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

static struct json_object *ping_json(const char *target, unsigned count,
                                     const struct ml_ping_result *p)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "target", json_object_new_string(target));
    json_object_object_add(o, "count", json_object_new_int((int)count));
    json_object_object_add(o, "transmitted", json_object_new_int((int)p->transmitted));
    json_object_object_add(o, "received", json_object_new_int((int)p->received));
    json_object_object_add(o, "errors", json_object_new_int((int)p->errors));
    json_object_object_add(o, "duplicates", json_object_new_int((int)p->duplicates));
    json_object_object_add(o, "min_ms", p->have_rtt ? json_object_new_double(p->min_ms) : NULL);
    json_object_object_add(o, "avg_ms", p->have_rtt ? json_object_new_double(p->avg_ms) : NULL);
    json_object_object_add(o, "max_ms", p->have_rtt ? json_object_new_double(p->max_ms) : NULL);
    json_object_object_add(
        o, "mdev_ms", p->have_rtt && p->mdev_ms >= 0 ? json_object_new_double(p->mdev_ms) : NULL);
    return o;
}

struct path_numbers {
    struct json_object *ping;
    struct json_object *transfer;
    struct json_object *passes;
    double median;
};

static void numbers_clear(struct path_numbers *n)
{
    json_object_put(n->ping);
    json_object_put(n->transfer);
    json_object_put(n->passes);
    memset(n, 0, sizeof(*n));
}

static bool measure_ping(struct ctx *c, const char *name, const char *target,
                         const struct ml_profile *prof, struct path_numbers *num, GError **err)
{
    ml_progress("measure", "%s: ping %s, %u packets", name, target, prof->ping_count);
    g_autofree char *cmd =
        g_strdup_printf("ping -n -c %u -i 0.2 -W 1 %s", prof->ping_count, target);
    struct ml_exec ex = {0};
    if (!ml_agent_exec(c->client, cmd, NULL, prof->ping_count * 0.2 + 30, &ex, err))
        return false;
    struct ml_ping_result pr = {0};
    bool parsed = ml_ping_parse(ex.out, &pr, err);
    ml_exec_clear(&ex);
    if (parsed)
        num->ping = ping_json(target, prof->ping_count, &pr);
    return parsed;
}

static bool measure_transfer(struct ctx *c, const char *name, const char *target,
                             const struct ml_profile *prof, struct path_numbers *num, GError **err)
{
    ml_progress("measure", "%s: %u s transfer with the hub's NIC counters", name, prof->transfer_s);
    long long rx0, tx0, rx1, tx1;
    struct ml_iperf_result tr;
    if (!hub_bytes(c, &rx0, &tx0, err) || !iperf(c, target, prof->transfer_s, &tr, err) ||
        !hub_bytes(c, &rx1, &tx1, err))
        return false;
    long long hub = (rx1 - rx0) + (tx1 - tx0);
    double factor = tr.bytes_received ? (double)hub / (double)tr.bytes_received : NAN;
    struct json_object *t = json_object_new_object();
    json_object_object_add(t, "seconds", json_object_new_double(tr.seconds));
    json_object_object_add(t, "payload_bytes", json_object_new_int64((int64_t)tr.bytes_received));
    json_object_object_add(t, "hub_rx_bytes", json_object_new_int64(rx1 - rx0));
    json_object_object_add(t, "hub_tx_bytes", json_object_new_int64(tx1 - tx0));
    json_object_object_add(t, "hub_bytes_per_payload_byte", num_or_null(factor));
    json_object_object_add(t, "bits_per_second",
                           json_object_new_double(tr.bits_per_second_received));
    num->transfer = t;
    ml_progress("measure", "%s: %llu payload bytes, hub %lld in / %lld out, factor %.4f", name,
                (unsigned long long)tr.bytes_received, rx1 - rx0, tx1 - tx0, factor);
    return true;
}

static bool measure_passes(struct ctx *c, const char *name, const char *target,
                           const struct ml_profile *prof, struct path_numbers *num, GError **err)
{
    double bps[32];
    num->passes = json_object_new_array();
    for (unsigned i = 0; i < prof->passes && i < G_N_ELEMENTS(bps); i++) {
        ml_progress("measure", "%s: pass %u of %u, %u s", name, i + 1, prof->passes, prof->pass_s);
        struct ml_iperf_result r;
        if (!iperf(c, target, prof->pass_s, &r, err))
            return false;
        struct json_object *p = json_object_new_object();
        json_object_object_add(p, "seconds", json_object_new_double(r.seconds));
        json_object_object_add(p, "bytes", json_object_new_int64((int64_t)r.bytes_received));
        json_object_object_add(p, "bits_per_second",
                               json_object_new_double(r.bits_per_second_received));
        json_object_object_add(p, "retransmits",
                               r.retransmits >= 0 ? json_object_new_int64(r.retransmits) : NULL);
        json_object_array_add(num->passes, p);
        bps[i] = r.bits_per_second_received;
        ml_progress("measure", "%s: pass %u: %.1f Mbit/s, %lld retransmits", name, i + 1,
                    r.bits_per_second_received / 1e6, (long long)r.retransmits);
    }
    num->median = ml_median(bps, json_object_array_length(num->passes));
    return true;
}

/* Check, measure, check. Returns false with err set when a step could not run;
 * *ret_failure names a check that ran and failed. */
static bool run_path(struct ctx *c, const struct ml_path_ops *ops, const struct ml_profile *prof,
                     struct json_object *checks, struct path_numbers *num, char **ret_failure,
                     GError **err)
{
    const char *name = ops->name;
    char target[16];
    ml_ip_str(ops->target(c->lab), target);
    bool ok = false;
    struct json_object *chk = check(c, ops, "before", target, &ok, err);
    if (!chk)
        return false;
    json_object_array_add(checks, chk);
    if (!ok) {
        *ret_failure = g_strdup("the path check before the measurement failed: traffic did not "
                                "take this path");
        return true;
    }
    if (!measure_ping(c, name, target, prof, num, err) ||
        !measure_transfer(c, name, target, prof, num, err) ||
        !measure_passes(c, name, target, prof, num, err))
        return false;
    chk = check(c, ops, "after", target, &ok, err);
    if (!chk)
        return false;
    json_object_array_add(checks, chk);
    if (!ok)
        *ret_failure = g_strdup("the path check after the measurement failed: the path changed "
                                "while it was measured");
    return true;
}

/* A path with no result: status "failed" or "not-run", the reason, and every
 * number null or empty. Checks already recorded stay: they are the evidence. */
static void mark_unmeasured(struct json_object *o, const char *status, const char *reason)
{
    json_object_object_add(o, "status", json_object_new_string(status));
    json_object_object_add(o, "reason", json_object_new_string(reason));
    if (!json_object_object_get_ex(o, "checks", NULL))
        json_object_object_add(o, "checks", json_object_new_array());
    json_object_object_add(o, "transfer", NULL);
    json_object_object_add(o, "passes", json_object_new_array());
    json_object_object_add(o, "median_bits_per_second", NULL);
    json_object_object_add(o, "ping", NULL);
    json_object_object_add(o, "setup_s", NULL);
}

/* Measures one path into obj. Returns false only when interrupted (err set);
 * a failed check or step marks the path failed and returns true. */
static bool measure_path(struct ctx *c, const struct ml_path_ops *ops,
                         const struct ml_profile *prof, struct json_object *obj, GError **err)
{
    struct json_object *checks = json_object_new_array();
    json_object_object_add(obj, "checks", checks);
    struct path_numbers num = {.median = NAN};
    g_autofree char *failure = NULL;
    g_autoptr(GError) step = NULL;
    if (!run_path(c, ops, prof, checks, &num, &failure, &step)) {
        if (step && step->code == ML_ERR_INTERRUPTED) {
            numbers_clear(&num);
            g_propagate_error(err, g_steal_pointer(&step));
            return false;
        }
        failure = g_strdup_printf("a measurement step failed: %s",
                                  step ? step->message : "unknown error");
    }
    if (failure) {
        /* A number from a path that was not verified is not a result. */
        ml_progress("measure", "%s: FAILED, no numbers reported: %s", ops->name,
                    failure);
        numbers_clear(&num);
        mark_unmeasured(obj, "failed", failure);
        return true;
    }
    json_object_object_add(obj, "status", json_object_new_string("measured"));
    json_object_object_add(obj, "reason", NULL);
    json_object_object_add(obj, "transfer", num.transfer);
    json_object_object_add(obj, "passes", num.passes);
    json_object_object_add(obj, "median_bits_per_second", num_or_null(num.median));
    json_object_object_add(obj, "ping", num.ping);
    return true;
}

static struct json_object *path_skeleton(const struct ml_lab *lab, const struct ml_path_ops *ops)
{
    const struct ml_topology *t = lab->topo;
    char target[16];
    struct json_object *o = json_object_new_object();
    g_autofree char *desc = ops->describe(t);
    json_object_object_add(o, "name", json_object_new_string(ops->name));
    json_object_object_add(o, "description", json_object_new_string(desc));
    json_object_object_add(o, "from", json_object_new_string(t->nodes[t->measure.client].name));
    json_object_object_add(o, "to", json_object_new_string(t->nodes[t->measure.server].name));
    struct in_addr to = ops->target(lab);
    /* A dataplane that never came up assigned no address: say so rather than 0.0.0.0. */
    json_object_object_add(o, "target",
                           to.s_addr ? json_object_new_string(ml_ip_str(to, target)) : NULL);
    return o;
}

struct json_object *ml_measure_paths(struct ml_lab *lab, const struct ml_profile *profile,
                                     GError **err)
{
    const struct ml_topology *t = lab->topo;
    struct ctx c = ctx_for(lab);
    struct json_object *paths = json_object_new_array();
    g_autoptr(GError) e = NULL;
    /* One iperf3 server for the whole matrix, on every address of the server guest. */
    g_autofree char *srv =
        ml_agent_run(c.server,
                     "[ -f " IPERF_PIDFILE " ] && kill -0 $(cat " IPERF_PIDFILE ") 2>/dev/null || "
                     "iperf3 -s -D --pidfile " IPERF_PIDFILE,
                     NULL, 30, &e);
    bool broken = false;
    for (size_t k = 0; ml_paths[k]; k++) {
        const struct ml_path_ops *ops = ml_paths[k];
        const struct ml_dataplane *dp = ops->dataplane;
        if (!ml_path_wanted(t, ops))
            continue;
        struct json_object *o = path_skeleton(lab, ops);
        json_object_array_add(paths, o);
        if (broken) {
            mark_unmeasured(o, "not-run",
                            "not run: the run was interrupted or the lab broke before it");
            continue;
        }
        if (!srv) {
            mark_unmeasured(o, "not-run", e->message);
            continue;
        }
        g_autofree char *why_not = NULL;
        if (dp && dp->available && !dp->available(lab, &why_not)) {
            ml_progress("measure", "path %s: not run: %s", ops->name, why_not);
            mark_unmeasured(o, "not-run", why_not);
            continue;
        }
        ml_progress("measure", "path %s: %s", ops->name,
                    json_object_get_string(json_object_object_get(o, "description")));
        struct json_object *state = dp ? ml_dataplane_state(lab, dp) : NULL, *v = NULL;
        if (state && json_object_object_get_ex(state, "setup_failed", &v)) {
            g_autofree char *why = g_strdup_printf("its dataplane could not be set up: %s",
                                                   json_object_get_string(v));
            mark_unmeasured(o, "failed", why);
            continue;
        }
        g_autoptr(GError) perr = NULL;
        if (!ml_policy_enter(lab, ops, &perr)) {
            if (perr->code == ML_ERR_INTERRUPTED) {
                g_propagate_error(err, g_steal_pointer(&perr));
                broken = true;
                mark_unmeasured(o, "not-run", "interrupted while switching the path policy");
                continue;
            }
            g_autofree char *why =
                g_strdup_printf("the path could not be prepared: %s", perr->message);
            mark_unmeasured(o, "failed", why);
            continue;
        }
        double setup = state && json_object_object_get_ex(state, "setup_s", &v)
                           ? json_object_get_double(v)
                           : 0;
        json_object_object_add(o, "setup_s",
                               setup > 0 ? json_object_new_double(round(setup * 10) / 10) : NULL);
        if (!measure_path(&c, ops, profile, o, err)) {
            broken = true;
            mark_unmeasured(o, "not-run", "interrupted while measuring");
        }
    }
    /* What a dataplane observed beside its numbers (Tailscale's daemons), once,
     * on its first measured path. */
    const struct ml_dataplane *shown[ML_PATHS_MAX] = {0};
    size_t n_shown = 0;
    for (size_t i = 0, k = 0; ml_paths[k] && i < json_object_array_length(paths); k++) {
        if (!ml_path_wanted(t, ml_paths[k]))
            continue;
        struct json_object *p = json_object_array_get_idx(paths, i++), *extra = NULL;
        const struct ml_dataplane *dp = ml_paths[k]->dataplane;
        bool done = !dp || n_shown == ML_PATHS_MAX;
        for (size_t j = 0; j < n_shown; j++)
            done |= shown[j] == dp;
        if (done || strcmp(json_object_get_string(json_object_object_get(p, "status")),
                           "measured") ||
            !json_object_object_get_ex(ml_dataplane_state(lab, dp), "observed", &extra))
            continue;
        json_object_object_add(p, "observed", json_object_get(extra));
        shown[n_shown++] = dp;
    }
    if (broken) {
        json_object_put(paths);
        return NULL;
    }
    return paths;
}

static char *guest_line(virDomainPtr dom, const char *cmd)
{
    g_autoptr(GError) e = NULL;
    char *out = ml_agent_run(dom, cmd, NULL, 20, &e);
    if (!out)
        return NULL;
    g_strstrip(out);
    char *nl = strchr(out, '\n');
    if (nl)
        *nl = '\0';
    return out;
}

static void add_str(struct json_object *o, const char *key, char *value)
{
    json_object_object_add(o, key, value ? json_object_new_string(value) : NULL);
    g_free(value);
}

struct json_object *ml_measure_environment(struct ml_lab *lab)
{
    struct json_object *env = json_object_new_object();
    add_str(env, "host_kernel", ml_host_kernel());
    unsigned long lib = 0, hv = 0;
    virConnectGetLibVersion(lab->conn, &lib);
    virConnectGetVersion(lab->conn, &hv);
    add_str(env, "libvirt",
            g_strdup_printf("%lu.%lu.%lu", lib / 1000000, lib / 1000 % 1000, lib % 1000));
    add_str(env, "qemu", g_strdup_printf("%lu.%lu.%lu", hv / 1000000, hv / 1000 % 1000, hv % 1000));
    json_object_object_add(env, "accelerator",
                           json_object_new_string(lab->accel.kvm ? "kvm" : "tcg"));
    add_str(env, "accelerator_reason", g_strdup(lab->accel.reason));
    /* Whether the verdict was probed by this run or taken from an earlier probe. */
    json_object_object_add(env, "accelerator_source",
                           json_object_new_string(ml_host_accel_source_name(lab->accel.source)));
    add_str(env, "accelerator_probed_at", g_strdup(lab->accel.probed_at));
    struct json_object *img = json_object_new_object();
    add_str(img, "name", g_strdup(lab->image.name));
    add_str(img, "requested",
            g_strdup(lab->image.requested ? lab->image.requested : lab->topo->image));
    add_str(img, "fallback_reason", g_strdup(lab->image.fallback_reason));
    add_str(img, "sha256", g_strdup(lab->image.sha256));
    json_object_object_add(env, "image", img);
    virDomainPtr hub = lab->dom[lab->topo->wireguard.hub];
    add_str(env, "guest_os", guest_line(hub, ". /etc/os-release && echo \"$PRETTY_NAME\""));
    add_str(env, "guest_kernel", guest_line(hub, "uname -r"));
    struct json_object *tools = json_object_new_object();
    add_str(tools, "iperf3", guest_line(hub, "iperf3 --version"));
    add_str(tools, "wireguard-tools", guest_line(hub, "wg --version"));
    add_str(tools, "nft", guest_line(hub, "nft --version"));
    json_object_object_add(env, "tools", tools);
    return env;
}
