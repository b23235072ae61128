#include "measure/measure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "virt/agent.h"
#include "virt/host.h"
#include "measure/metrics.h"
#include "measure/parse_ping.h"
#include "dataplanes/path.h"
#include "core/util.h"
#include "virt/virt.h"

#define PROBE_COUNT 20
#define PROBE_SIZE 1000
#define IPERF_PIDFILE "/run/meshlab-iperf3.pid"

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
    ml_progress("check", "%s %s: %s — %s", ops->name, when, *ret_ok ? "ok" : "FAILED", ev->str);
    g_string_free(ev, TRUE);
    return o;
}

static struct ml_collect_ctx collect_ctx(struct ctx *c, const struct ml_path_ops *ops,
                                         const char *target, const struct ml_profile *prof)
{
    return (struct ml_collect_ctx){
        .lab = c->lab,
        .client = c->client,
        .hub = c->hub,
        .hub_tap = c->hub_tap,
        .path = ops->name,
        .target = target,
        .profile = prof,
    };
}

/* Check, measure, check. Returns false with err set when a step could not run;
 * *ret_failure names a check that ran and failed. *ret_figures holds what was measured. */
static bool run_path(struct ctx *c, const struct ml_path_ops *ops, const struct ml_profile *prof,
                     struct json_object *checks, struct json_object **ret_figures,
                     char **ret_failure, GError **err)
{
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
    struct ml_collect_ctx cc = collect_ctx(c, ops, target, prof);
    *ret_figures = ml_metrics_collect(ml_metrics, ml_metrics_count, &cc, err);
    if (!*ret_figures)
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
    ml_metrics_withhold(ml_metrics, ml_metrics_count, o);
    json_object_object_add(o, "setup_s", NULL);
}

/* Measures one path into obj. Returns false only when interrupted (err set);
 * a failed check or step marks the path failed and returns true. */
static bool measure_path(struct ctx *c, const struct ml_path_ops *ops,
                         const struct ml_profile *prof, struct json_object *obj, GError **err)
{
    struct json_object *checks = json_object_new_array();
    json_object_object_add(obj, "checks", checks);
    struct json_object *figures = NULL;
    g_autofree char *failure = NULL;
    g_autoptr(GError) step = NULL;
    if (!run_path(c, ops, prof, checks, &figures, &failure, &step)) {
        if (step && step->code == ML_ERR_INTERRUPTED) {
            json_object_put(figures);
            g_propagate_error(err, g_steal_pointer(&step));
            return false;
        }
        failure = g_strdup_printf("a measurement step failed: %s",
                                  step ? step->message : "unknown error");
    }
    if (failure) {
        /* A number from a path that was not verified is not a result. */
        ml_progress("measure", "%s: FAILED, no numbers reported: %s", ops->name, failure);
        json_object_put(figures);
        mark_unmeasured(obj, "failed", failure);
        return true;
    }
    json_object_object_add(obj, "status", json_object_new_string("measured"));
    json_object_object_add(obj, "reason", NULL);
    json_object_object_foreach(figures, key, value)
    {
        json_object_object_add(obj, key, json_object_get(value));
    }
    json_object_put(figures);
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

/* One iperf3 server for the whole matrix, on every address of the server guest. */
static char *start_iperf_server(struct ctx *c, GError **err)
{
    return ml_agent_run(c->server,
                        "[ -f " IPERF_PIDFILE " ] && kill -0 $(cat " IPERF_PIDFILE
                        ") 2>/dev/null || "
                        "iperf3 -s -D --pidfile " IPERF_PIDFILE,
                        NULL, 30, err);
}

/* How long the path's dataplane took to come up, to 0.1 s, as the dataplane
 * recorded it in its state; null for one without a tunnel. */
static void record_setup_time(struct ml_lab *lab, const struct ml_path_ops *ops,
                              struct json_object *o)
{
    struct json_object *state = ops->dataplane ? ml_dataplane_state(lab, ops->dataplane) : NULL;
    struct json_object *v = NULL;
    double setup =
        state && json_object_object_get_ex(state, "setup_s", &v) ? json_object_get_double(v) : 0;
    json_object_object_add(o, "setup_s",
                           setup > 0 ? json_object_new_double(round(setup * 10) / 10) : NULL);
}

/* Whatever stands between the path and its measurement: the lab broke earlier, no iperf3
 * server, artifacts missing, its dataplane failed to set up, its policy could not be put in
 * force. Returns false and marks the path when it is not to be measured; *ret_broken when
 * the run was interrupted (err set). */
static bool ready_to_measure(struct ctx *c, const struct ml_path_ops *ops, struct json_object *o,
                             const char *no_server, bool *ret_broken, GError **err)
{
    struct ml_lab *lab = c->lab;
    if (*ret_broken) {
        mark_unmeasured(o, "not-run",
                        "not run: the run was interrupted or the lab broke before it");
        return false;
    }
    if (no_server) {
        mark_unmeasured(o, "not-run", no_server);
        return false;
    }
    const struct ml_dataplane *dp = ops->dataplane;
    g_autofree char *why_not = NULL;
    if (dp && dp->available && !dp->available(lab, &why_not)) {
        ml_progress("measure", "path %s: not run: %s", ops->name, why_not);
        mark_unmeasured(o, "not-run", why_not);
        return false;
    }
    ml_progress("measure", "path %s: %s", ops->name,
                json_object_get_string(json_object_object_get(o, "description")));
    struct json_object *state = dp ? ml_dataplane_state(lab, dp) : NULL, *v = NULL;
    if (state && json_object_object_get_ex(state, "setup_failed", &v)) {
        g_autofree char *why =
            g_strdup_printf("its dataplane could not be set up: %s", json_object_get_string(v));
        mark_unmeasured(o, "failed", why);
        return false;
    }
    g_autoptr(GError) perr = NULL;
    if (ml_policy_enter(lab, ops, &perr))
        return true;
    if (perr->code == ML_ERR_INTERRUPTED) {
        g_propagate_error(err, g_steal_pointer(&perr));
        *ret_broken = true;
        mark_unmeasured(o, "not-run", "interrupted while switching the path policy");
        return false;
    }
    g_autofree char *why = g_strdup_printf("the path could not be prepared: %s", perr->message);
    mark_unmeasured(o, "failed", why);
    return false;
}

struct json_object *ml_measure_paths(struct ml_lab *lab, const struct ml_profile *profile,
                                     GError **err)
{
    const struct ml_topology *t = lab->topo;
    struct ctx c = ctx_for(lab);
    struct json_object *paths = json_object_new_array();
    g_autoptr(GError) no_server = NULL;
    g_autofree char *srv = start_iperf_server(&c, &no_server);
    bool broken = false;
    for (size_t k = 0; ml_paths[k]; k++) {
        const struct ml_path_ops *ops = ml_paths[k];
        if (!ml_path_wanted(t, ops))
            continue;
        struct json_object *o = path_skeleton(lab, ops);
        json_object_array_add(paths, o);
        if (!ready_to_measure(&c, ops, o, srv ? NULL : no_server->message, &broken, err))
            continue;
        record_setup_time(lab, ops, o);
        if (!measure_path(&c, ops, profile, o, err)) {
            broken = true;
            mark_unmeasured(o, "not-run", "interrupted while measuring");
        }
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
