#include "measure/measure.h"

#include <libvirt/virterror.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "virt/agent.h"
#include "virt/capture.h"
#include "virt/host.h"
#include "measure/metrics.h"
#include "measure/parse_ping.h"
#include "measure/guestcpu.h"
#include "measure/hostinfo.h"
#include "measure/pass.h"
#include "measure/stats.h"
#include "dataplanes/policy.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "cache/artifacts.h"
#include "core/util.h"
#include "virt/virt.h"
#include "virt/virt_xml.h"

#define PROBE_COUNT 20
#define PROBE_SIZE 1000

struct ctx {
    struct ml_lab *lab;
    virDomainPtr client, server, hub;
    const char *hub_tap, *client_tap;
    const char *client_ns;                /* where its daemons run now (ml_lab_netns_prefix) */
    struct ml_guest_cpu_reading last_cpu; /* the last pass's end reading */
};

static struct ctx ctx_for(struct ml_lab *lab)
{
    const struct ml_topology *t = lab->topo;
    return (struct ctx){
        .lab = lab,
        .client = lab->dom[t->measure.client],
        .server = lab->dom[t->measure.server],
        .hub = lab->dom[t->hub],
        .hub_tap = lab->plan->guests[t->hub].tap,
        .client_tap = lab->plan->guests[t->measure.client].tap,
        .client_ns = ml_lab_netns_prefix(lab, t->measure.client),
    };
}

/* The hub's bytes per second over `seconds` while nothing is sent (beside an optional ping);
 * ret_guest_rates (or NULL): every guest's tap's, read in the same instants (the pass's other
 * sides, ml_pass_path.idle_bytes_per_s). */
static bool idle_rate(struct ctx *c, double seconds, const char *ping_cmd, char **ret_ping,
                      double *ret_rate, double *ret_guest_rates, GError **err)
{
    struct ml_nic_stats a, b, ga[ML_MAX_NODES], gb[ML_MAX_NODES];
    size_t n = ret_guest_rates ? c->lab->plan->n_guests : 0;
    double t0 = ml_now();
    if (!ml_virt_nic_stats(c->hub, c->hub_tap, &a, err))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!ml_virt_nic_stats(c->lab->dom[i], c->lab->plan->guests[i].tap, &ga[i], err))
            return false;
    if (ping_cmd) {
        struct ml_exec ex = {0};
        if (!ml_agent_exec(c->client, ping_cmd, NULL, seconds + 30, &ex, err)) {
            ml_exec_clear(&ex);
            return false;
        }
        *ret_ping = g_strdup(ex.out ? ex.out : "");
        ml_exec_clear(&ex);
    }
    double left = t0 + seconds - ml_now();
    if (left > 0)
        g_usleep((gulong)(left * 1e6));
    if (!ml_virt_nic_stats(c->hub, c->hub_tap, &b, err))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!ml_virt_nic_stats(c->lab->dom[i], c->lab->plan->guests[i].tap, &gb[i], err))
            return false;
    double dt = MAX(ml_now() - t0, 0.1);
    *ret_rate = (double)((b.rx_bytes - a.rx_bytes) + (b.tx_bytes - a.tx_bytes)) / dt;
    for (size_t i = 0; i < n; i++)
        ret_guest_rates[i] =
            (double)((gb[i].rx_bytes - ga[i].rx_bytes) + (gb[i].tx_bytes - ga[i].tx_bytes)) / dt;
    return true;
}

/* The probe: PROBE_COUNT pings of PROBE_SIZE, one after another, each waiting up to
 * PROBE_WAIT_S for its own reply. One `ping -c 20 -i 0.05` would stop waiting two of its
 * slowest round trips after its last request, and call a reply that took longer lost, though
 * the hub's counters show it crossed (a tinc relay's after-check in CI: 15/20 answered for the
 * hub bytes of 20). PROBE_GIVE_UP pings with no reply (more where the WAN profiles lose some,
 * ml_probe_misses_allowed) end it: a dead path fails in seconds. */
#define PROBE_WAIT_S 3
#define PROBE_GIVE_UP 3

/* The chance the nodes' WAN profiles lose one of the probe's round trips on ops's path; a path
 * that finds its own way is counted as relayed, the lossier. */
static double path_probe_loss(const struct ml_lab *lab, const struct ml_path_ops *ops)
{
    const struct ml_topology *topo = lab->topo;
    const struct ml_wan_profile *w = lab->wan_now;
    return ml_probe_loss(&w[topo->measure.client], &w[topo->measure.server],
                         ops->hub == ML_HUB_QUIET ? NULL : &w[topo->hub]);
}

/* How long a probe ping waits for its reply: PROBE_WAIT_S beyond the most the nodes' WAN
 * profiles may add to the path's round trip (each delay and its jitter, a relay's twice). */
static unsigned path_probe_wait_s(const struct ml_lab *lab, const struct ml_path_ops *ops)
{
    const struct ml_topology *topo = lab->topo;
    const struct ml_wan_profile *w = lab->wan_now;
    double ms = ml_wan_rtt_max_ms(&w[topo->measure.client], &w[topo->measure.server],
                                  ops->hub == ML_HUB_QUIET ? NULL : &w[topo->hub]);
    return PROBE_WAIT_S + (unsigned)ceil(ms / 1000);
}

static bool probe(struct ctx *c, const char *target, double loss, unsigned wait_s,
                  struct ml_evidence *ret, GError **err)
{
    memset(ret, 0, sizeof(*ret));
    ret->probe_loss = loss;
    /* The misses the profiles' loss allows do not end the probe early. */
    unsigned give_up = PROBE_GIVE_UP + ml_probe_misses_allowed(PROBE_COUNT, loss);
    ret->route = ml_pass_route(c->client, c->client_ns, target, err);
    if (!ret->route)
        return false;
    /* The hub's idle rate over about as long as the probe takes, just before it: what any path
     * moves through the hub with nothing sent (keepalives, DERP, ARP) is not the probe's. */
    double burst_s = PROBE_COUNT * 0.05 + 0.5, idle = 0;
    struct ml_nic_stats a, b;
    g_autofree char *cmd = g_strdup_printf(
        "f=0; for i in $(seq %d); do %sping -n -q -c 1 -W %d -s %d %s || f=$((f+1)); "
        "[ $f -lt %d ] || break; done",
        PROBE_COUNT, c->client_ns, wait_s, PROBE_SIZE, target, give_up);
    struct ml_exec ex = {0};
    if (!idle_rate(c, burst_s, NULL, NULL, &idle, NULL, err) ||
        !ml_virt_nic_stats(c->hub, c->hub_tap, &a, err))
        return false;
    double t0 = ml_now();
    if (!ml_agent_exec(c->client, cmd, NULL, 60 + PROBE_COUNT * wait_s, &ex, err) ||
        !ml_virt_nic_stats(c->hub, c->hub_tap, &b, err)) {
        ml_exec_clear(&ex);
        return false;
    }
    /* Idle bytes over the window the two readings really spanned. */
    ret->hub_idle_bytes = (long long)llround(idle * (ml_now() - t0));
    struct ml_ping_result pr = {0};
    g_autoptr(GError) perr = NULL;
    if (ml_ping_parse_runs(ex.out ? ex.out : "", &pr, &perr)) {
        ret->transmitted = pr.transmitted;
        ret->received = pr.received;
        ret->probe_max_ms = pr.have_rtt ? pr.max_ms : -1;
    }
    ml_exec_clear(&ex);
    ret->hub_bytes = (b.rx_bytes - a.rx_bytes) + (b.tx_bytes - a.tx_bytes);
    /* Each answered ping is an IPv4 packet of 20 + 8 + size bytes each way. */
    ret->probe_bytes = (long long)ret->received * 2 * (20 + 8 + PROBE_SIZE);
    return true;
}

static struct json_object *check(struct ctx *c, const struct ml_path_ops *ops, const char *when,
                                 const char *target, bool *ret_ok, GError **err)
{
    struct ml_evidence p;
    /* --capture: the probe's packets on the hub's and the clients' taps. */
    struct ml_capture caps[ML_CAPTURE_TAPS] = {0};
    struct json_object *files = NULL;
    if (c->lab->capture && strcmp(when, "nat cell") != 0) {
        files = json_object_new_array();
        g_autofree char *dir = g_strdup_printf("captures/paths/%s-%s", ops->name, when);
        if (!ml_capture_lab_start(c->lab, caps, dir, files, err)) {
            json_object_put(files);
            return NULL;
        }
    }
    bool probed =
        probe(c, target, path_probe_loss(c->lab, ops), path_probe_wait_s(c->lab, ops), &p, err);
    ml_capture_lab_stop(c->lab, caps);
    if (!probed) {
        json_object_put(files);
        ml_evidence_clear(&p);
        return NULL;
    }
    memcpy(p.mapped_from, c->lab->mapped_from, sizeof(p.mapped_from));
    ml_dp_observe(ops->dataplane, c->lab, &p);
    GString *ev = g_string_new(NULL);
    *ret_ok = ml_path_verdict(ops, c->lab->topo, &p, ev);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "when", json_object_new_string(when));
    json_object_object_add(o, "ok", json_object_new_boolean(*ret_ok));
    if (ops->hub == ML_HUB_FOUND) {
        enum ml_hub_role role = ml_path_role(ops, c->lab->topo, &p);
        json_object_object_add(o, "found",
                               json_object_new_string(role == ML_HUB_QUIET     ? "direct"
                                                      : role == ML_HUB_CARRIES ? "relay"
                                                                               : "none"));
    }
    json_object_object_add(o, "evidence", json_object_new_string(ev->str));
    /* The evidence as fields too, not only the sentence. */
    json_object_object_add(o, "hub_bytes", json_object_new_int64(p.hub_bytes));
    json_object_object_add(o, "hub_idle_bytes", json_object_new_int64(p.hub_idle_bytes));
    json_object_object_add(o, "probe_bytes", json_object_new_int64(p.probe_bytes));
    json_object_object_add(o, "transmitted", json_object_new_int((int)p.transmitted));
    json_object_object_add(o, "received", json_object_new_int((int)p.received));
    struct ml_route rt = {0};
    if (p.route && ml_route_parse(p.route, &rt)) {
        struct json_object *r = json_object_new_object();
        json_object_object_add(r, "dev", rt.dev[0] ? json_object_new_string(rt.dev) : NULL);
        json_object_object_add(r, "via", rt.via[0] ? json_object_new_string(rt.via) : NULL);
        json_object_object_add(r, "src", rt.src[0] ? json_object_new_string(rt.src) : NULL);
        json_object_object_add(o, "route", r);
    } else {
        json_object_object_add(o, "route", NULL);
    }
    struct json_object *own = json_object_new_array();
    for (size_t i = 0; i < ML_EVIDENCE_OWN_MAX; i++)
        if (p.own[i])
            json_object_array_add(own, json_object_new_string(p.own[i]));
    json_object_object_add(o, "own", own);
    if (files)
        json_object_object_add(o, "captures", files);
    ml_evidence_clear(&p);
    ml_progress("check", "%s %s: %s — %s", ops->name, when, *ret_ok ? "ok" : "FAILED", ev->str);
    g_string_free(ev, TRUE);
    return o;
}

struct json_object *ml_measure_check(struct ml_lab *lab, const struct ml_path_ops *ops,
                                     const char *when, bool *ret_ok, GError **err)
{
    struct ctx c = ctx_for(lab);
    char target[16];
    ml_ip_str(ops->target(lab), target);
    return check(&c, ops, when, target, ret_ok, err);
}

long long ml_check_quiet_bytes(void)
{
    return (long long)PROBE_COUNT * 2 * (20 + 8 + PROBE_SIZE) / 20;
}

size_t ml_quiet_run_end(const long long *per_s, size_t n, size_t run, long long limit)
{
    size_t seen = 0;
    for (size_t i = 0; i < n; i++) {
        seen = per_s[i] >= 0 && per_s[i] < limit ? seen + 1 : 0;
        if (run && seen == run)
            return i + 1;
    }
    return 0;
}

bool ml_measure_wait_quiet(struct ml_lab *lab, double limit_s, double *ret_waited_s,
                           bool *ret_quiet, GError **err)
{
    struct ctx c = ctx_for(lab);
    size_t max = (size_t)MAX(limit_s, ML_QUIET_RUN_S);
    g_autofree long long *per_s = g_new0(long long, max);
    double t0 = ml_now();
    struct ml_nic_stats a, b;
    if (!ml_virt_nic_stats(c.hub, c.hub_tap, &a, err))
        return false;
    *ret_quiet = false;
    size_t n = 0;
    for (; n < max && !*ret_quiet; n++) {
        if (ml_check_interrupted(err))
            return false;
        double left = t0 + (double)(n + 1) - ml_now();
        if (left > 0)
            g_usleep((gulong)(left * 1e6));
        if (!ml_virt_nic_stats(c.hub, c.hub_tap, &b, err))
            return false;
        per_s[n] = (b.rx_bytes - a.rx_bytes) + (b.tx_bytes - a.tx_bytes);
        a = b;
        *ret_quiet = ml_quiet_run_end(per_s, n + 1, ML_QUIET_RUN_S, ml_check_quiet_bytes()) > 0;
    }
    *ret_waited_s = ml_now() - t0;
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

/* ---- one path through the sweeps ---- */

struct mpath {
    const struct ml_path_ops *ops;
    struct ml_path_ops found;   /* a path nothing forced: judged from its first check on as the
                                 * path its dataplane found there (ops points here then) */
    struct json_object *o;      /* its object in paths[] */
    struct json_object *passes; /* its passes, in the order they ran */
    char target[16];
    bool active;                   /* checked before and not failed since: still measured */
    bool failed;                   /* its status is decided: failed or not-run */
    double idle_rate;              /* the hub's bytes per second while idle, before its passes */
    double idle_tap[ML_MAX_NODES]; /* every guest's tap's, read with it */
    double idle_cpu[ML_MAX_NODES]; /* each guest's busy CPU s per s while idle; <0 unknown */
    double idle_read_cost[ML_MAX_NODES];              /* what one reading of its CPU costs it, s */
    double idle_view_cost[ML_MAX_NODES];              /* what one view of the path costs it, s */
    double idle_view_noise[ML_MAX_NODES];             /* how far that price may be off, s */
    double idle_window;                               /* the window those were read over, s */
    double idle_daemon[ML_MAX_NODES][ML_DAEMONS_MAX]; /* the same per daemon; <0 unknown */
    bool until_done[ML_CELLS_MAX];                    /* --until: the cell converged or gave up */
};

static void fail_path(struct mpath *p, const char *status, const char *why)
{
    ml_progress("measure", "%s: %s, no numbers reported: %s", p->ops->name,
                !strcmp(status, "failed") ? "FAILED" : "not run", why);
    mark_unmeasured(p->o, status, why);
    p->active = false;
    p->failed = true;
}

/* What the nodes' WAN profiles add to the path's round trip: the client's and the server's
 * delays, and the hub's twice when it relays. A path that finds its own way is judged as found
 * by then (its first check swapped in ops of the role its view showed); null only while it has
 * found none. */
static struct json_object *wan_added(const struct ml_lab *lab, const struct ml_path_ops *ops)
{
    if (ops->hub == ML_HUB_FOUND)
        return NULL;
    const struct ml_topology *topo = lab->topo;
    const struct ml_wan_profile *w = lab->wan_now;
    return json_object_new_double(ml_wan_rtt_ms(&w[topo->measure.client], &w[topo->measure.server],
                                                ops->hub == ML_HUB_CARRIES ? &w[topo->hub] : NULL));
}

/* The path as its passes see it, with what its idle baseline measured. */
static struct ml_pass_path pass_path(struct ctx *c, const struct mpath *p,
                                     const struct ml_profile *prof)
{
    struct ml_pass_path pp = {
        .lab = c->lab,
        .ops = p->ops,
        .target = p->target,
        .client = c->client,
        .hub = c->hub,
        .hub_tap = c->hub_tap,
        .client_tap = c->client_tap,
        .client_ns = c->client_ns,
        .idle_hub_bytes_per_s = p->idle_rate,
        .ping_interval_s = prof->ping_interval_s,
        .last_cpu = &c->last_cpu,
    };
    memcpy(pp.idle_cpu_s_per_s, p->idle_cpu, sizeof(pp.idle_cpu_s_per_s));
    memcpy(pp.idle_cpu_read_cost_s, p->idle_read_cost, sizeof(pp.idle_cpu_read_cost_s));
    memcpy(pp.idle_view_cost_s, p->idle_view_cost, sizeof(pp.idle_view_cost_s));
    memcpy(pp.idle_view_noise_s, p->idle_view_noise, sizeof(pp.idle_view_noise_s));
    pp.idle_cpu_window_s = p->idle_window;
    memcpy(pp.idle_bytes_per_s, p->idle_tap, sizeof(pp.idle_bytes_per_s));
    memcpy(pp.idle_daemon_s_per_s, p->idle_daemon, sizeof(pp.idle_daemon_s_per_s));
    return pp;
}

/* The longest a view's price is waited for, s: a relayed Tailscale view under TCG took 7.8 s
 * in a loaded pass; the ping beside it stops there whatever happens. */
#define VIEW_PING_MAX_S 30

/* What one view of the path (ml_pass_view_once) costs each guest, s (ml_guest_cpu_view_cost):
 * its busy time across the view, less what the guest spends idle over as long and one reading
 * of its CPU; none where that is within the ticks' noise. The passes' pings run beside it, as
 * they ran in the idle window whose rate is subtracted: without them a relayed path's idle rate
 * (its pings through the relay, 0.08 s/s on the hub) over a 5-8 s view was more than the view
 * cost, and every relayed view was priced at nothing. Measured after a path's first idle
 * window, in the state its passes find: VIEW_COST_SAMPLES views back to back, each between two
 * readings, and each guest's median. One view was once the whole price: CI at aff8f5e priced
 * tailscale-peer-relay's view on client-a at 1.63 s (a burst of the guest's beside it), charged
 * it to every pass, and put its fixed-rate pass, 2.29 busy s, 1.07 s below idle. */
#define VIEW_COST_SAMPLES 3
static bool view_cost(struct ctx *c, struct mpath *p, const struct ml_profile *prof,
                      struct json_object *ret, GError **err)
{
    struct ml_guest_cpu a[ML_MAX_NODES] = {0}, b[ML_MAX_NODES] = {0};
    struct ml_pass_path pp = pass_path(c, p, prof);
    g_autofree char *ping = ml_pass_ping_cmd(c->client_ns, prof->ping_interval_s,
                                             ml_ping_count(VIEW_PING_MAX_S, prof->ping_interval_s),
                                             VIEW_PING_MAX_S, p->target);
    /* exec: the pid the agent gives is ping's own (ip netns exec execs it too), to stop it by */
    g_autofree char *cmd = g_strdup_printf("exec %s", ping);
    long long pid = 0;
    if (!ml_agent_spawn(c->client, cmd, NULL, &pid, err))
        return false;
    g_usleep(300 * 1000); /* ping's own start is not the view's */
    double price[ML_MAX_NODES][VIEW_COST_SAMPLES], noise[ML_MAX_NODES][VIEW_COST_SAMPLES];
    bool ok = ml_guest_cpu_stat(c->lab, a, err);
    for (size_t k = 0; ok && k < VIEW_COST_SAMPLES; k++) {
        double t0 = ml_now();
        ml_pass_view_once(&pp);
        ok = ml_guest_cpu_stat(c->lab, b, err);
        double dt = ml_now() - t0;
        for (size_t i = 0; ok && i < c->lab->plan->n_guests; i++) {
            double busy = ml_guest_cpu_busy_s(&b[i]) - ml_guest_cpu_busy_s(&a[i]);
            price[i][k] = ml_guest_cpu_view_cost(busy, dt, p->idle_cpu[i], p->idle_read_cost[i],
                                                 &noise[i][k]);
        }
        memcpy(a, b, sizeof(a)); /* this reading opens the next view's */
    }
    g_autofree char *stop = g_strdup_printf("kill %lld 2>/dev/null; true", pid);
    struct ml_exec ex = {0}, out = {0};
    ml_agent_exec(c->client, stop, NULL, 10, &ex, NULL);
    ml_agent_wait(c->client, pid, 5, &out, NULL);
    ml_exec_clear(&ex);
    ml_exec_clear(&out);
    if (!ok)
        return false;
    for (size_t i = 0; i < c->lab->plan->n_guests; i++) {
        size_t m = ml_guest_cpu_view_median(price[i], VIEW_COST_SAMPLES);
        p->idle_view_cost[i] = price[i][m];
        p->idle_view_noise[i] = noise[i][m];
        json_object_object_add(
            ret, c->lab->topo->nodes[i].name,
            p->idle_view_cost[i] >= 0 ? json_object_new_double(p->idle_view_cost[i]) : NULL);
    }
    return true;
}

/* The idle record, under `key` of the path: the hub's baseline rate and every guest's CPU with the
 * pings the passes run (so that what is subtracted from a pass is what its own pings cost), and
 * the round-trip times at 20 Hz before any load. Taken again before a group's first fixed-rate
 * passes: they run in the last rounds, minutes after the first. The first takes the profile's
 * ping_count pings (the idle round trip's sample); the fixed rate's only idle_s seconds of them:
 * its rates are what the passes subtract, and the round trip has its sample already. The seed lab's
 * full profile spent 10 s on each (200 pings at 20 Hz); the second now takes its idle_s, 5 s. */
static bool measure_idle(struct ctx *c, struct mpath *p, const struct ml_profile *prof,
                         const char *key, GError **err)
{
    bool again = strcmp(key, "idle") != 0;
    unsigned count =
        again ? MAX(1u, ml_ping_count(prof->idle_s, prof->ping_interval_s)) : prof->ping_count;
    double seconds = MAX((double)prof->idle_s, count * prof->ping_interval_s);
    g_autofree char *cmd =
        ml_pass_ping_cmd(c->client_ns, prof->ping_interval_s, count, 0, p->target);
    g_autofree char *ping = NULL;
    ml_progress("measure", "%s: idle for %.0f s: the hub's baseline, %u pings at %.0f Hz",
                p->ops->name, seconds, count, 1 / prof->ping_interval_s);
    /* The daemons read around it all (ml_guest_cpu_read starts processes), the busy times
     * inside as a pass reads them (ml_guest_cpu_stat): two back to back, then the window. The
     * first pair's busy time is what one reading costs each guest, charged once to a pass, not
     * as a rate (ml_guest_cpu_idle). */
    struct ml_guest_cpu a0[ML_MAX_NODES] = {0}, a[ML_MAX_NODES] = {0}, b[ML_MAX_NODES] = {0};
    struct ml_guest_cpu b_busy[ML_MAX_NODES] = {0};
    if (!ml_guest_cpu_read(c->lab, a0, err))
        return false;
    double d0 = ml_now();
    if (!ml_guest_cpu_stat(c->lab, a0, err))
        return false;
    memcpy(a, a0, sizeof(a));
    if (!ml_guest_cpu_stat(c->lab, a, err))
        return false;
    double t0 = ml_now();
    if (!idle_rate(c, seconds, cmd, &ping, &p->idle_rate, p->idle_tap, err) ||
        !ml_guest_cpu_stat(c->lab, b_busy, err))
        return false;
    double dt = MAX(ml_now() - t0, 0.1);
    p->idle_window = dt;
    if (!ml_guest_cpu_read(c->lab, b, err))
        return false;
    /* the daemons' readings' own interval, around the busy times' */
    double daemons_dt = MAX(ml_now() - d0, 0.1);
    for (size_t i = 0; i < c->lab->plan->n_guests; i++)
        ml_guest_cpu_take_busy(&b[i], &b_busy[i]);
    struct json_object *cpu = json_object_new_object(), *daemons = json_object_new_object();
    struct json_object *cost = json_object_new_object();
    for (size_t i = 0; i < c->lab->plan->n_guests; i++) {
        ml_guest_cpu_idle(ml_guest_cpu_busy_s(&a[i]) - ml_guest_cpu_busy_s(&a0[i]),
                          ml_guest_cpu_busy_s(&b[i]) - ml_guest_cpu_busy_s(&a[i]), dt,
                          &p->idle_cpu[i], &p->idle_read_cost[i]);
        json_object_object_add(cpu, c->lab->topo->nodes[i].name,
                               json_object_new_double(p->idle_cpu[i]));
        json_object_object_add(cost, c->lab->topo->nodes[i].name,
                               json_object_new_double(p->idle_read_cost[i]));
        ml_guest_cpu_daemon_rates(&a[i], &b[i], daemons_dt, p->idle_daemon[i]);
        json_object_object_add(daemons, c->lab->topo->nodes[i].name,
                               ml_guest_daemon_rates_json(p->ops, p->idle_daemon[i]));
    }
    /* The first idle also prices the proof: VIEW_COST_SAMPLES views, in the state the passes
     * find. */
    struct json_object *views = again ? NULL : json_object_new_object();
    if (views && !view_cost(c, p, prof, views, err)) {
        json_object_put(views);
        json_object_put(cpu);
        json_object_put(daemons);
        json_object_put(cost);
        return false;
    }
    g_autofree char *rel =
        g_strdup_printf("raw/%s/%s-ping.txt", p->ops->name, again ? "idle-fixed" : "idle");
    ml_lab_write(c->lab, rel, ping, -1, NULL);
    struct json_object *idle = json_object_new_object();
    json_object_object_add(idle, "seconds", json_object_new_double(round(seconds * 100) / 100));
    json_object_object_add(idle, "hub_bytes",
                           json_object_new_int64((int64_t)llround(p->idle_rate * seconds)));
    json_object_object_add(idle, "hub_bytes_per_s", json_object_new_double(p->idle_rate));
    json_object_object_add(idle, "rtt", ml_pass_rtt_json(ping));
    json_object_object_add(idle, "rtt_wan_added_ms", wan_added(c->lab, p->ops));
    json_object_object_add(idle, "cpu_busy_s_per_s", cpu);
    json_object_object_add(idle, "cpu_read_cost_s", cost);
    if (views) {
        json_object_object_add(idle, "view_cost_s", views);
        json_object_object_add(idle, "view_cost_views", json_object_new_int(VIEW_COST_SAMPLES));
    }
    json_object_object_add(idle, "daemons_cpu_s_per_s", daemons);
    json_object_object_add(p->o, key, idle);
    size_t hub = c->lab->topo->hub;
    if (!again && p->idle_view_cost[hub] >= 0)
        ml_progress("measure",
                    "%s: idle hub %.0f bytes/s; one view of the path costs the hub %.2f s",
                    p->ops->name, p->idle_rate, p->idle_view_cost[hub]);
    else
        ml_progress("measure", "%s: idle hub %.0f bytes/s", p->ops->name, p->idle_rate);
    return true;
}

/* ---- the sweeps: the passes of every policy group interleaved in rounds ---- */

/* Where the measure phase's wall clock goes, in seconds: the passes whole (ml_pass_run), and of
 * them the transfers (iperf3's duration, warm-up included: what the phase is for); the path
 * checks; the idle baselines; the policy switches (rulesets and the dataplanes' restarts). */
struct measure_time {
    double passes, transfer, checks, idle, policy;
};

struct run {
    struct ctx *c;
    const struct ml_profile *prof;
    struct json_object *order;
    unsigned seq;
    GRand *rand;
    const struct ml_path_ops *policy_in_force; /* the path whose policy was entered last */
    struct measure_time time;
    struct mpath *paths; /* every path, for the fixed rate (fixed_rate) */
    size_t n_paths;
    double fixed_bps;              /* the fixed offered rate, once known; 0: not yet, or none */
    struct json_object *fixed_obj; /* its record (results.json's fixed_rate); NULL: none */
    bool fixed_decided;
};

/* Interrupted: err is set and the caller stops. Any other error fails the path only. */
static bool step_failed(struct mpath *p, const char *what, GError **step, GError **err)
{
    if ((*step)->code == ML_ERR_INTERRUPTED) {
        g_propagate_error(err, g_steal_pointer(step));
        return false;
    }
    g_autofree char *why = g_strdup_printf("%s: %s", what, (*step)->message);
    fail_path(p, "failed", why);
    g_clear_error(step);
    return true;
}

/* A path whose dataplane did not come onto it: the guests' journals of the last minutes go into
 * the run directory beside the reason, since its daemons' own words are in no console. */
static bool prepare_failed(struct run *run, struct mpath *p, GError **step, GError **err)
{
    if ((*step)->code != ML_ERR_INTERRUPTED) {
        struct ml_lab *lab = run->c->lab;
        g_autofree char *rel = ml_lab_save_journals(lab, p->ops->name, 300);
        if (rel)
            ml_error_append(step, "the guests' journals of the last 5 minutes are in %s/%s",
                            lab->run_dir, rel);
    }
    return step_failed(p, "the path could not be prepared", step, err);
}

/* The group's one policy loaded once, then each path's rulesets saved and its dataplane let
 * settle. */
static bool enter_group(struct run *run, struct mpath **g, size_t n, GError **err)
{
    char *in_force[ML_MAX_NODES] = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++) {
        if (!g[i]->active)
            continue;
        g_autoptr(GError) step = NULL;
        if (!ml_policy_enter(run->c->lab, g[i]->ops, in_force, &step) &&
            !prepare_failed(run, g[i], &step, err))
            ok = false;
        else if (g[i]->active)
            run->policy_in_force = g[i]->ops;
    }
    ml_policy_rulesets_clear(in_force);
    return ok;
}

/* After a good first check of a path nothing forced: from now on it is the path its dataplane
 * found, and the checks after and every pass are judged as that path. */
static void found_path(struct mpath *p, struct json_object *chk)
{
    const char *role = json_object_get_string(json_object_object_get(chk, "found"));
    p->found = *p->ops;
    p->found.hub = role && !strcmp(role, "direct") ? ML_HUB_QUIET : ML_HUB_CARRIES;
    if (p->found.hub == ML_HUB_QUIET)
        p->found.encap = NULL;
    p->ops = &p->found;
    json_object_object_add(p->o, "found", json_object_new_string(role ? role : "relay"));
    json_object_object_add(
        p->o, "hub_role",
        json_object_new_string(p->found.hub == ML_HUB_QUIET ? "quiet" : "carries"));
    ml_progress("measure", "%s: the dataplane found the %s path; measured as that", p->ops->name,
                role ? role : "relay");
}

static bool check_group(struct run *run, struct mpath **g, size_t n, const char *when, GError **err)
{
    for (size_t i = 0; i < n; i++) {
        if (!g[i]->active)
            continue;
        bool ok = false;
        g_autoptr(GError) step = NULL;
        struct json_object *checks = json_object_object_get(g[i]->o, "checks");
        struct json_object *chk = check(run->c, g[i]->ops, when, g[i]->target, &ok, &step);
        if (!chk) {
            if (!step_failed(g[i], "a path check could not run", &step, err))
                return false;
            continue;
        }
        json_object_array_add(checks, chk);
        if (ok && g[i]->ops->hub == ML_HUB_FOUND)
            found_path(g[i], chk);
        /* The evidence says which of the check's parts did not hold (the dataplane's view, the
         * probe's answers, the hub's bytes); the reason claims no more than that the path was
         * not proven, which is what any of them means. */
        if (!ok)
            fail_path(g[i], "failed",
                      !strcmp(when, "before")
                          ? "the path check before the measurement failed: the evidence did not "
                            "prove traffic on this path"
                          : "the path check after the measurement failed: the evidence no longer "
                            "proved this path, so no pass of it is reported");
    }
    return true;
}

static bool timed_checks(struct run *run, struct mpath **g, size_t n, const char *when,
                         GError **err)
{
    double t0 = ml_now();
    bool ok = check_group(run, g, n, when, err);
    run->time.checks += ml_now() - t0;
    return ok;
}

static void shuffle(GRand *r, struct mpath **a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)g_rand_int_range(r, 0, (gint32)i);
        struct mpath *t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* Whether path p's cell k takes a pass in round r: its profile's passes; under --until, until
 * its interval was narrow enough or it gave up (decided after each round, until_decide). */
static bool takes_pass(const struct ml_profile *prof, const struct mpath *p, size_t k, unsigned r)
{
    if (!p->active)
        return false;
    /* A pairs cell's flows aim at any client: only a path that can say where (target_of). */
    if (prof->cells[k].kind == ML_CELL_PAIRS && !p->ops->target_of)
        return false;
    return prof->until_percent > 0 ? !p->until_done[k] : prof->cells[k].passes >= r;
}

/* Whether cell k has round r at all (the random order is drawn only for one that has). */
static bool cell_in_round(const struct ml_profile *prof, struct mpath **g, size_t n, size_t k,
                          unsigned r)
{
    if (prof->until_percent <= 0)
        return prof->cells[k].passes >= r;
    for (size_t i = 0; i < n; i++)
        if (takes_pass(prof, g[i], k, r))
            return true;
    return false;
}

/* --until, after round r: whether p's cell k is done, by its throughput's interval over the
 * passes so far; said, and recorded in the path's "until". */
static void until_decide(const struct ml_profile *prof, struct mpath *p, size_t k, unsigned r)
{
    const struct ml_cell *cell = &prof->cells[k];
    g_autofree double *v = NULL;
    size_t n = ml_cell_pass_values(p->o, cell->name, "bits_per_second", &v);
    double half;
    enum ml_until_verdict u = ml_until_next(v, n, r, MAX(cell->passes, 2), prof->until_percent,
                                            MAX(prof->until_max, cell->passes), &half);
    if (u == ML_UNTIL_MORE)
        return;
    p->until_done[k] = true;
    bool converged = u == ML_UNTIL_CONVERGED;
    if (isfinite(half))
        ml_progress("measure", "%s %s: %s after %u passes: ±%.1f %% (target ±%g %%)", p->ops->name,
                    cell->name, converged ? "converged" : "gave up", r, half, prof->until_percent);
    else
        ml_progress("measure",
                    "%s %s: gave up after %u passes: %zu passed, too few for an "
                    "interval",
                    p->ops->name, cell->name, r, n);
    struct json_object *until = json_object_object_get(p->o, "until");
    if (!until) {
        until = json_object_new_object();
        json_object_object_add(p->o, "until", until);
    }
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "status",
                           json_object_new_string(converged ? "converged" : "gave-up"));
    json_object_object_add(o, "passes", json_object_new_int((int)r));
    json_object_object_add(o, "half_width_percent",
                           isfinite(half) ? json_object_new_double(round(half * 100) / 100) : NULL);
    json_object_object_add(until, cell->name, o);
}

/* The most rounds a cell of one kind (full speed or fixed rate) can take. */
static unsigned most_rounds(const struct ml_profile *prof, bool fixed)
{
    unsigned most = prof->until_percent > 0 ? prof->until_max : 0;
    for (size_t k = 0; k < prof->n_cells; k++)
        if (prof->cells[k].fixed_rate == fixed)
            most = MAX(most, prof->cells[k].passes);
    return most;
}

/* Whether a path of group g takes a pass of a cell of that kind in round r. */
static bool group_in_round(const struct ml_profile *prof, struct mpath **g, size_t n, bool fixed,
                           unsigned r)
{
    for (size_t k = 0; k < prof->n_cells; k++)
        for (size_t i = 0; i < n && prof->cells[k].fixed_rate == fixed; i++)
            if (takes_pass(prof, g[i], k, r))
                return true;
    return false;
}

/* Pass `pass` of path p into its passes and the run's order. */
static void record_pass(struct run *run, struct mpath *p, struct json_object *pass,
                        const struct ml_pass_spec *spec)
{
    json_object_array_add(p->passes, pass);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "seq", json_object_new_int((int)spec->seq));
    json_object_object_add(o, "round", json_object_new_int((int)spec->round));
    json_object_object_add(o, "path", json_object_new_string(p->ops->name));
    json_object_object_add(o, "cell", json_object_new_string(spec->cell->name));
    json_object_object_add(o, "pass", json_object_new_int((int)spec->index));
    json_object_array_add(run->order, o);
}

/* A failed pass whose own evidence showed the path was not in force through it (a view
 * without it, or a way the path excludes carrying payload: ml_pass_verdict.path_lost). */
static bool pass_lost_path(struct json_object *pass)
{
    return g_strcmp0(json_object_get_string(json_object_object_get(pass, "status")), "failed") ==
               0 &&
           json_object_get_boolean(json_object_object_get(pass, "path_lost"));
}

/* A pass through which other programs took the host's CPU (its host.busy: ml_host_busy). */
static bool pass_host_busy(struct json_object *pass)
{
    return json_object_get_boolean(
        json_object_object_get(json_object_object_get(pass, "host"), "busy"));
}

/* A pass of p whose host was busy is run once more, at once, in the same visit of its policy: a
 * pass that passed becomes "repeated", out of every figure, the pass run in its place
 * (run_again_as) in them; one that failed stays failed. The repeat is kept whatever its host
 * did: a second busy pass is judged by its figures against its cell's other passes (the
 * report's notice), not run a third time. */
static void repeat_busy(struct mpath *p, struct json_object *pass, const struct ml_cell *cell,
                        unsigned r)
{
    if (!g_strcmp0(json_object_get_string(json_object_object_get(pass, "status")), "ok"))
        json_object_object_add(pass, "status", json_object_new_string("repeated"));
    const char *flag = json_object_get_string(
        json_object_object_get(json_object_object_get(pass, "host"), "busy_flag"));
    ml_progress("measure", "%s: pass %u of %s ran on a busy host (%s); running it once more",
                p->ops->name, r, cell->name, flag ? flag : "steal time");
}

/* After a pass of p that lost its path: the guests' journals of the last two minutes kept
 * beside the run (the daemons' own words on why), the path settled again under the policy in
 * force, and said. The lost pass stays in the results, failed, out of every figure, naming the
 * pass run in its place (run_again_as); a second loss of the same pass is not run again. A
 * pass is not run a third time: a path that loses itself twice in a row is what the report
 * says, not what the run hides. False only when the run must stop; a settle that failed fails
 * the path (step_failed). */
static bool settle_again(struct run *run, struct mpath *p, const struct ml_cell *cell, unsigned r,
                         GError **err)
{
    struct ml_lab *lab = run->c->lab;
    g_autofree char *tag = g_strdup_printf("%s-%s-%u-lost", p->ops->name, cell->name, r);
    g_autofree char *rel = ml_lab_save_journals(lab, tag, 120);
    ml_progress("measure",
                "%s: pass %u of %s lost its path (its views or its counters say so; the guests' "
                "journals are in %s); settling the path again and running the pass once more",
                p->ops->name, r, cell->name, rel ? rel : "no file: they could not be read");
    double t0 = ml_now();
    g_autoptr(GError) step = NULL;
    bool ok = ml_path_settle(p->ops, lab, &step);
    run->time.policy += ml_now() - t0;
    return ok ||
           step_failed(p, "the path could not be settled again after a pass lost it", &step, err);
}

/* Round r of a group, its policy in force: one pass of every cell of one kind (full speed or
 * fixed rate) that still wants one, the paths in a new random order. */
static bool one_round(struct run *run, struct mpath **g, size_t n, bool fixed, double fixed_bps,
                      unsigned r, unsigned round, GError **err)
{
    const struct ml_profile *prof = run->prof;
    g_autofree struct mpath **order = g_new(struct mpath *, n + 1);
    for (size_t k = 0; k < prof->n_cells; k++) {
        const struct ml_cell *cell = &prof->cells[k];
        if (cell->fixed_rate != fixed || !cell_in_round(prof, g, n, k, r))
            continue;
        memcpy(order, g, n * sizeof(*g));
        shuffle(run->rand, order, n);
        for (size_t i = 0; i < n; i++) {
            struct mpath *p = order[i];
            if (!takes_pass(prof, p, k, r))
                continue;
            struct ml_pass_path pp = pass_path(run->c, p, prof);
            struct ml_pass_spec spec = {
                .cell = cell,
                .index = r,
                .round = round,
                .seq = ++run->seq,
                .seconds = prof->pass_s,
                .offered_bits_per_second = fixed ? fixed_bps : 0,
            };
            for (unsigned attempt = 0; attempt < 2; attempt++) {
                g_autoptr(GError) step = NULL;
                double t0 = ml_now();
                struct json_object *pass = ml_pass_run(&pp, &spec, &step);
                run->time.passes += ml_now() - t0;
                /* The measured seconds only: iperf3's omitted warm-up is not measuring. */
                if (pass)
                    run->time.transfer +=
                        json_object_get_double(json_object_object_get(pass, "measured_s"));
                if (!pass) {
                    if (!step_failed(p, "a measurement step failed", &step, err))
                        return false;
                    break;
                }
                record_pass(run, p, pass, &spec);
                bool lost = pass_lost_path(pass), busy = pass_host_busy(pass);
                if (attempt > 0 || (!lost && !busy))
                    break;
                spec.seq = ++run->seq;
                json_object_object_add(pass, "run_again_as", json_object_new_int((int)spec.seq));
                if (lost) {
                    if (!settle_again(run, p, cell, r, err))
                        return false;
                    if (!p->active)
                        break;
                } else {
                    repeat_busy(p, pass, cell, r);
                }
            }
        }
    }
    for (size_t k = 0; prof->until_percent > 0 && k < prof->n_cells; k++)
        for (size_t i = 0; i < n && prof->cells[k].fixed_rate == fixed; i++)
            if (takes_pass(prof, g[i], k, r))
                until_decide(prof, g[i], k, r);
    return true;
}

static bool has_cells(const struct ml_profile *prof, bool fixed)
{
    for (size_t k = 0; k < prof->n_cells; k++)
        if (prof->cells[k].fixed_rate == fixed)
            return true;
    return false;
}

static bool group_active(struct mpath **g, size_t n)
{
    bool any = false;
    for (size_t i = 0; i < n; i++)
        any |= g[i]->active;
    return any;
}

/* Puts group g's policy in force unless it is. */
static bool group_policy(struct run *run, struct mpath **g, size_t n, GError **err)
{
    if (run->policy_in_force && run->policy_in_force->policy == g[0]->ops->policy)
        return true;
    double t0 = ml_now();
    bool ok = enter_group(run, g, n, err);
    run->time.policy += ml_now() - t0;
    return ok;
}

/* A group before its first passes of one kind: its policy, the checks before (before its
 * first full-speed passes), the idle baseline (again before its first fixed-rate ones). */
static bool prepare_group(struct run *run, struct mpath **g, size_t n, bool fixed, GError **err)
{
    if (!group_active(g, n))
        return true;
    if (!group_policy(run, g, n, err))
        return false;
    if (!fixed && !timed_checks(run, g, n, "before", err))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!g[i]->active)
            continue;
        g_autoptr(GError) step = NULL;
        double t0 = ml_now();
        bool ok = measure_idle(run->c, g[i], run->prof, fixed ? "idle_fixed" : "idle", &step);
        run->time.idle += ml_now() - t0;
        if (!ok && !step_failed(g[i], "the idle baseline could not be measured", &step, err))
            return false;
    }
    return true;
}

void ml_sweep_visits(size_t ng, unsigned rounds, size_t first, size_t *ret)
{
    size_t start = first % MAX(ng, 1);
    for (unsigned r = 0; r < rounds; r++)
        for (size_t j = 0; j < ng; j++) {
            /* Serpentine: every other round walks back, so that it starts with the group the
             * round before ended with. */
            size_t k = r % 2 ? ng - 1 - j : j;
            ret[r * ng + j] = (start + k) % ng;
        }
}

void ml_groups_arrange(size_t ng, const size_t *costs, size_t *ret_order)
{
    /* Selection by cost, costliest first (stable), into by[]; then the costliest two at the
     * ends and the rest inside, the cheapest in the middle. */
    g_autofree size_t *by = g_new(size_t, MAX(ng, 1));
    for (size_t i = 0; i < ng; i++)
        by[i] = ret_order[i] = i;
    if (ng < 3)
        return;
    for (size_t i = 0; i < ng; i++) {
        size_t m = i;
        for (size_t j = i + 1; j < ng; j++)
            if (costs[by[j]] > costs[by[m]])
                m = j;
        /* by[m] to i, the ones between one step on: ties keep the order given */
        size_t t = by[m];
        memmove(by + i + 1, by + i, (m - i) * sizeof(*by));
        by[i] = t;
    }
    ret_order[0] = by[0];
    ret_order[ng - 1] = by[1];
    /* by[2..] from the inner edges towards the middle */
    size_t lo = 1, hi = ng - 2;
    for (size_t k = 2; k < ng; k++) {
        if ((k - 2) % 2 == 0)
            ret_order[lo++] = by[k];
        else
            ret_order[hi--] = by[k];
    }
}

/* The group whose policy is in force, or 0. */
static size_t group_in_force(struct run *run, struct mpath ***groups, size_t ng)
{
    for (size_t g = 0; run->policy_in_force && g < ng; g++)
        if (run->policy_in_force->policy == groups[g][0]->ops->policy)
            return g;
    return 0;
}

static struct json_object *fixed_rate(const struct ml_profile *prof, struct mpath *paths, size_t n,
                                      double *ret_bps);

/* What the rounds of a sweep hold: round r its full-speed passes' round r while r <= full
 * (0: none), and the fixed rate's round r - fixed_from + 1 while that is 1..fixed (fixed_from
 * 0: none). */
struct sweep_plan {
    unsigned rounds, full, fixed_from, fixed;
};

static unsigned plan_full(const struct sweep_plan *pl, unsigned r)
{
    return r <= pl->full ? r : 0;
}

static unsigned plan_fixed(const struct sweep_plan *pl, unsigned r)
{
    return pl->fixed_from && r >= pl->fixed_from && r - pl->fixed_from < pl->fixed
               ? r - pl->fixed_from + 1
               : 0;
}

void ml_sweep_plan(unsigned full, unsigned fixed, unsigned *ret_rounds, unsigned *ret_fixed_from)
{
    *ret_fixed_from = 0;
    *ret_rounds = full;
    if (!fixed)
        return;
    /* The fixed rate is the slowest path's median of the rounds before its first: one at
     * least. */
    *ret_fixed_from = full == 0 ? 1 : MAX(2u, full >= fixed ? full - fixed + 1 : 1u);
    *ret_rounds = MAX(full, *ret_fixed_from + fixed - 1);
}

/* Whether group g has a pass in round r of pl (its fixed ones only once the rate is known). */
static bool visits(const struct run *run, const struct sweep_plan *pl, struct mpath **g, size_t n,
                   unsigned r)
{
    unsigned f = plan_full(pl, r), x = plan_fixed(pl, r);
    return (f && group_in_round(run->prof, g, n, false, f)) ||
           (x && (!run->fixed_decided || run->fixed_bps > 0) &&
            group_in_round(run->prof, g, n, true, x));
}

/* The fixed offered rate, from the passes so far, once. */
static void decide_fixed(struct run *run)
{
    if (run->fixed_decided)
        return;
    run->fixed_decided = true;
    run->fixed_obj = fixed_rate(run->prof, run->paths, run->n_paths, &run->fixed_bps);
}

/* One sweep over every group of paths (the paths of one policy each), each round visiting every
 * group once, in serpentine order (ml_sweep_visits) from the group in force: a slow minute of
 * the host spreads over every policy's paths instead of landing on one group's, and a round
 * starts where the one before ended. A visit runs the group's full-speed passes of its round,
 * then its fixed-rate ones (ml_sweep_plan: the last rounds, the rate decided before the first
 * of them), under one policy switch. A group's first visit sets it up first (its checks
 * before, with its full-speed passes, and its idle baseline; that again before its first
 * fixed-rate passes); where the rounds each group takes are known ahead (not --until), its last
 * visit of the last sweep ends with its checks after. A group no round visited is set up and
 * checked at the end, starting with the group in force. The policy is switched per visit, not
 * per pass: a switch restarts daemons (nebula, tinc: 10-20 s each under TCG) or waits for
 * tailscaled to find its new path (5-13 s), and a sweep of the fixed rate of its own switched
 * once more for every group; the old order (a phase of every group's setup, the rounds in one
 * cyclic order, a phase of every group's checks after) once more for each of those phases and
 * for every round boundary. */
static bool sweep(struct run *run, struct mpath ***groups, const size_t *sizes, size_t ng,
                  const struct sweep_plan *pl, bool last, GError **err)
{
    const struct ml_profile *prof = run->prof;
    g_autofree size_t *v = g_new(size_t, MAX(1u, pl->rounds) * ng);
    ml_sweep_visits(ng, pl->rounds, group_in_force(run, groups, ng), v);
    g_autofree bool *prepared = g_new0(bool, ng);
    g_autofree bool *prepared_fixed = g_new0(bool, ng);
    g_autofree bool *checked = g_new0(bool, ng);
    g_autofree unsigned *last_round = g_new0(unsigned, ng);
    bool known = prof->until_percent <= 0;
    for (size_t g = 0; known && g < ng; g++)
        for (unsigned r = 1; r <= pl->rounds; r++)
            if (visits(run, pl, groups[g], sizes[g], r))
                last_round[g] = r;
    for (unsigned r = 1; r <= pl->rounds; r++) {
        unsigned f = plan_full(pl, r), x = plan_fixed(pl, r);
        if (x == 1)
            decide_fixed(run);
        for (size_t j = 0; j < ng; j++) {
            size_t g = v[(r - 1) * ng + j];
            /* visits(), with the rate decided by now */
            bool full_here = f && group_in_round(prof, groups[g], sizes[g], false, f);
            bool fixed_here =
                x && run->fixed_bps > 0 && group_in_round(prof, groups[g], sizes[g], true, x);
            if (!full_here && !fixed_here)
                continue;
            if (full_here && !prepared[g]) {
                prepared[g] = true;
                if (!prepare_group(run, groups[g], sizes[g], false, err))
                    return false;
            }
            if (!group_policy(run, groups[g], sizes[g], err) ||
                (full_here && !one_round(run, groups[g], sizes[g], false, 0, f, r, err)))
                return false;
            if (fixed_here && !prepared_fixed[g]) {
                prepared_fixed[g] = true;
                if (!prepare_group(run, groups[g], sizes[g], true, err))
                    return false;
            }
            if (fixed_here && !one_round(run, groups[g], sizes[g], true, run->fixed_bps, x, r, err))
                return false;
            if (last && known && r == last_round[g] && group_active(groups[g], sizes[g])) {
                checked[g] = true;
                if (!timed_checks(run, groups[g], sizes[g], "after", err))
                    return false;
            }
        }
    }
    size_t from = group_in_force(run, groups, ng);
    for (size_t k = 0; k < ng; k++) {
        size_t g = (from + k) % ng;
        if (!prepared[g] && !prepared_fixed[g]) {
            prepared[g] = true;
            if (!prepare_group(run, groups[g], sizes[g], pl->full == 0, err))
                return false;
        }
        if (last && !checked[g] && group_active(groups[g], sizes[g]) &&
            (!group_policy(run, groups[g], sizes[g], err) ||
             !timed_checks(run, groups[g], sizes[g], "after", err)))
            return false;
    }
    return true;
}

/* The offered rate every path sustains: a fraction of the slowest path's median. */
/* The paths' passes are in their objects from the start, so that the metrics' own reading of
 * the headline cell serves here too. */
static struct json_object *fixed_rate(const struct ml_profile *prof, struct mpath *paths, size_t n,
                                      double *ret_bps)
{
    *ret_bps = 0;
    double slowest = INFINITY;
    const char *who = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!paths[i].active)
            continue;
        double m = ml_headline_median(paths[i].o, "bits_per_second");
        if (isfinite(m) && m > 0 && m < slowest) {
            slowest = m;
            who = paths[i].ops->name;
        }
    }
    if (!who)
        return NULL;
    *ret_bps = floor(slowest * prof->fixed_rate_fraction / 1e5) * 1e5;
    if (*ret_bps <= 0)
        *ret_bps = slowest * prof->fixed_rate_fraction;
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "bits_per_second", json_object_new_double(*ret_bps));
    json_object_object_add(o, "fraction", json_object_new_double(prof->fixed_rate_fraction));
    json_object_object_add(o, "slowest_path", json_object_new_string(who));
    json_object_object_add(o, "slowest_median_bits_per_second", json_object_new_double(slowest));
    ml_progress("measure", "fixed offered rate %.1f Mbit/s: %.0f %% of %s's median %.1f Mbit/s",
                *ret_bps / 1e6, prof->fixed_rate_fraction * 100, who, slowest / 1e6);
    return o;
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
    json_object_object_add(o, "hub", json_object_new_string(t->nodes[t->hub].name));
    struct in_addr to = ops->target(lab);
    /* A dataplane that never came up assigned no address: say so rather than 0.0.0.0. */
    json_object_object_add(o, "target",
                           to.s_addr ? json_object_new_string(ml_ip_str(to, target)) : NULL);
    json_object_object_add(o, "hub_role",
                           json_object_new_string(ops->hub == ML_HUB_QUIET     ? "quiet"
                                                  : ops->hub == ML_HUB_CARRIES ? "carries"
                                                                               : "found"));
    /* The path policy its passes ran under: a relay it forced carries a mesh's relayed share
     * of a workload (results/month.h), a hub path all of it. */
    json_object_object_add(o, "policy", json_object_new_string(ml_policy_name(ops->policy)));
    json_object_object_add(o, "checks", json_object_new_array());
    return o;
}

/* How long the path's dataplane took to come up, to 0.1 s, as the dataplane
 * recorded it in its state; null for one without a tunnel. */
static void record_setup_time(struct ml_lab *lab, const struct ml_path_ops *ops,
                              struct json_object *o)
{
    struct json_object *state = ml_dataplane_state(lab, ops->dataplane);
    struct json_object *v = NULL;
    double setup =
        state && json_object_object_get_ex(state, "setup_s", &v) ? json_object_get_double(v) : 0;
    json_object_object_add(o, "setup_s",
                           setup > 0 ? json_object_new_double(round(setup * 10) / 10) : NULL);
}

/* Whatever stands between the path and its measurement: no iperf3 server, artifacts missing,
 * its dataplane failed to set up. Marks the path and returns false when it is not to be
 * measured. */
static bool ready_to_measure(struct ml_lab *lab, struct mpath *p, const char *no_server)
{
    if (no_server) {
        fail_path(p, "not-run", no_server);
        return false;
    }
    const struct ml_dataplane *dp = p->ops->dataplane;
    g_autofree char *why_not = NULL;
    if (!ml_dp_available(dp, lab, &why_not)) {
        fail_path(p, "not-run", why_not);
        return false;
    }
    struct json_object *state = ml_dataplane_state(lab, dp), *v = NULL;
    if (json_object_object_get_ex(state, "setup_failed", &v)) {
        g_autofree char *why =
            g_strdup_printf("its dataplane could not be set up: %s", json_object_get_string(v));
        fail_path(p, "failed", why);
        return false;
    }
    ml_progress("measure", "path %s: %s", p->ops->name,
                json_object_get_string(json_object_object_get(p->o, "description")));
    return true;
}

/* The paths in groups of one policy each, in the order the sweeps walk them
 * (ml_groups_arrange). */
static size_t group_paths(struct mpath *paths, size_t n, struct mpath ***ret_groups,
                          size_t *ret_sizes)
{
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        size_t g = 0;
        while (g < ng && ret_groups[g][0]->ops->policy != paths[i].ops->policy)
            g++;
        if (g == ng) {
            ret_groups[ng] = g_new0(struct mpath *, n + 1);
            ret_sizes[ng++] = 0;
        }
        ret_groups[g][ret_sizes[g]++] = &paths[i];
    }
    size_t costs[ML_PATHS_MAX + 8], order[ML_PATHS_MAX + 8];
    struct mpath **groups[ML_PATHS_MAX + 8];
    size_t sizes[ML_PATHS_MAX + 8];
    for (size_t g = 0; g < ng; g++) {
        costs[g] = 0;
        for (size_t i = 0; i < ret_sizes[g]; i++)
            costs[g] += 1 + ret_groups[g][i]->ops->settle_changes_state;
    }
    ml_groups_arrange(ng, costs, order);
    memcpy(groups, ret_groups, ng * sizeof(*groups));
    memcpy(sizes, ret_sizes, ng * sizeof(*sizes));
    for (size_t g = 0; g < ng; g++) {
        ret_groups[g] = groups[order[g]];
        ret_sizes[g] = sizes[order[g]];
    }
    return ng;
}

/* Puts the passes, the summaries and the status into each path's object. */
static void finish_path(struct ml_lab *lab, struct mpath *p)
{
    if (p->failed)
        return;
    json_object_object_add(p->o, "status", json_object_new_string("measured"));
    json_object_object_add(p->o, "reason", NULL);
    record_setup_time(lab, p->ops, p->o);
    struct ml_collect_ctx cc = {.lab = lab, .path = p->ops->name, .target = p->target};
    g_autoptr(GError) e = NULL;
    if (!ml_metrics_run_collectors(ml_metrics, ml_metrics_count, &cc, p->o, &e))
        ml_warn("%s: %s", p->ops->name, e->message);
    ml_metrics_summarise(ml_metrics, ml_metrics_count, p->ops->name, p->o);
    /* Per-VCPU figures mean something for a VPS only where the guest ran at full speed. */
    struct json_object *vps = json_object_object_get(p->o, "vps");
    if (vps)
        json_object_object_add(vps, "meaningful", json_object_new_boolean(lab->accel.kvm));
}

/* The measure phase's breakdown; share is transfer over the whole: the time spent measuring. */
static struct json_object *time_json(const struct measure_time *t, double whole)
{
    struct json_object *o = json_object_new_object();
    double known = t->passes + t->checks + t->idle + t->policy;
    json_object_object_add(o, "seconds", json_object_new_double(whole));
    json_object_object_add(o, "passes_s", json_object_new_double(t->passes));
    json_object_object_add(o, "transfer_s", json_object_new_double(t->transfer));
    json_object_object_add(o, "checks_s", json_object_new_double(t->checks));
    json_object_object_add(o, "idle_s", json_object_new_double(t->idle));
    json_object_object_add(o, "policy_s", json_object_new_double(t->policy));
    json_object_object_add(o, "other_s", json_object_new_double(MAX(whole - known, 0.0)));
    json_object_object_add(o, "transfer_share",
                           whole > 0 ? json_object_new_double(t->transfer / whole) : NULL);
    return o;
}

struct json_object *ml_measure_paths(struct ml_lab *lab, const struct ml_profile *profile,
                                     GError **err)
{
    const struct ml_topology *t = lab->topo;
    struct ctx c = ctx_for(lab);
    struct json_object *out = json_object_new_object();
    struct json_object *array = json_object_new_array();
    json_object_object_add(out, "paths", array);
    struct mpath paths[ML_PATHS_MAX + 8];
    size_t n = 0;
    g_autoptr(GError) no_server = NULL;
    g_autofree char *srv = ml_pass_iperf_server(lab, lab->topo->measure.server, &no_server);
    const struct ml_path_ops *ops;
    ML_FOR_EACH_PATH(k, ops)
    {
        if (n >= G_N_ELEMENTS(paths) || !ml_path_wanted(t, ops))
            continue;
        struct mpath *p = &paths[n++];
        *p = (struct mpath){.ops = ops, .passes = json_object_new_array(), .active = true};
        for (size_t i = 0; i < ML_MAX_NODES; i++) {
            p->idle_cpu[i] = p->idle_tap[i] = -1;
            p->idle_read_cost[i] = 0;
            p->idle_view_cost[i] = -1;
            p->idle_view_noise[i] = NAN;
            for (size_t d = 0; d < ML_DAEMONS_MAX; d++)
                p->idle_daemon[i][d] = -1;
        }
        p->o = path_skeleton(lab, p->ops);
        json_object_object_add(p->o, "passes", json_object_get(p->passes));
        ml_ip_str(p->ops->target(lab), p->target);
        json_object_array_add(array, p->o);
        ready_to_measure(lab, p, srv ? NULL : no_server->message);
    }
    struct mpath **groups[ML_PATHS_MAX + 8];
    size_t sizes[ML_PATHS_MAX + 8];
    size_t ng = group_paths(paths, n, groups, sizes);
    struct run run = {.c = &c, .prof = profile, .order = json_object_new_array()};
    double t_start = ml_now();
    run.rand = g_rand_new_with_seed(g_str_hash(lab->run_id));
    run.paths = paths;
    run.n_paths = n;
    bool fixed = has_cells(profile, true), ok = true;
    unsigned full_rounds = most_rounds(profile, false);
    unsigned fixed_rounds = fixed ? most_rounds(profile, true) : 0;
    if (fixed && profile->until_percent <= 0 && full_rounds > 0) {
        /* Known rounds: the fixed rate's passes in the last rounds' visits. */
        struct sweep_plan pl = {.full = full_rounds, .fixed = fixed_rounds};
        ml_sweep_plan(full_rounds, fixed_rounds, &pl.rounds, &pl.fixed_from);
        ok = sweep(&run, groups, sizes, ng, &pl, true, err);
    } else {
        /* --until: the full speed's rounds end when its cells do; the fixed rate then. */
        struct sweep_plan pl = {.rounds = full_rounds, .full = full_rounds};
        ok = sweep(&run, groups, sizes, ng, &pl, !fixed, err);
        if (ok && fixed) {
            decide_fixed(&run);
            pl = (struct sweep_plan){.rounds = run.fixed_bps > 0 ? fixed_rounds : 0,
                                     .fixed_from = 1,
                                     .fixed = fixed_rounds};
            ok = sweep(&run, groups, sizes, ng, &pl, true, err);
        }
    }
    struct json_object *rate = run.fixed_obj;
    bool busy = false;
    for (size_t i = 0; i < n; i++) {
        if (!ok && !paths[i].failed)
            fail_path(&paths[i], "not-run", "interrupted while measuring");
        finish_path(lab, &paths[i]);
        for (size_t k = 0; k < json_object_array_length(paths[i].passes); k++) {
            struct json_object *h =
                json_object_object_get(json_object_array_get_idx(paths[i].passes, k), "host");
            busy |= json_object_get_boolean(json_object_object_get(h, "busy"));
        }
        json_object_put(paths[i].passes);
    }
    for (size_t g = 0; g < ng; g++)
        g_free(groups[g]);
    g_rand_free(run.rand);
    json_object_object_add(out, "order", run.order);
    json_object_object_add(out, "measure_time", time_json(&run.time, ml_now() - t_start));
    json_object_object_add(out, "fixed_rate", rate);
    json_object_object_add(out, "host_busy", json_object_new_boolean(busy));
    if (!ok) {
        json_object_put(out);
        return NULL;
    }
    return out;
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

/* The fetched programs the lab's dataplanes ran: each one's version and how it was obtained
 * (the publisher's verified download, or a build from its Go module with every module's hash). */
static struct json_object *programs(const struct ml_lab *lab)
{
    struct json_object *o = json_object_new_object();
    for (size_t d = 0; ml_dataplanes[d]; d++) {
        const struct ml_dataplane *dp = ml_dataplanes[d];
        if (!dp->fetched || !ml_dp_needed(dp, lab->topo))
            continue;
        for (const char *const *n = dp->fetched; *n; n++) {
            struct json_object *p = ml_artifact_provenance(ml_cache_dir(), *n);
            if (p)
                json_object_object_add(o, *n, p);
        }
    }
    return o;
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
    /* Where the lab ran: the libvirt host's name and the URI, without what the controller
     * alone should know (a password, key files in the query). */
    g_autofree char *uri = ml_virt_conn_uri(lab->conn, ml_virt_uri());
    add_str(env, "libvirt_uri", ml_uri_public(uri));
    char *hostname = virConnectGetHostname(lab->conn);
    add_str(env, "libvirt_host", g_strdup(hostname));
    free(hostname);
    virResetLastError();
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
    virDomainPtr hub = lab->dom[lab->topo->hub];
    add_str(env, "guest_os", guest_line(hub, ". /etc/os-release && echo \"$PRETTY_NAME\""));
    add_str(env, "guest_kernel", guest_line(hub, "uname -r"));
    /* The guests' CPU model as the hub's domain was given it (its XML from libvirt, not the
     * condition that wrote it) and the instructions the dataplanes' ciphers use, as the hub's
     * kernel sees them: an AES-GCM figure without aes and pclmulqdq is table AES. */
    struct json_object *cpu = json_object_new_object();
    char *xml = hub ? virDomainGetXMLDesc(hub, 0) : NULL;
    if (!xml)
        virResetLastError();
    add_str(cpu, "model", ml_xml_domain_cpu_model(xml));
    free(xml);
    add_str(cpu, "flags",
            guest_line(hub,
                       "for f in $(sed -n 's/^flags[[:space:]]*: //p' /proc/cpuinfo | head -1); "
                       "do case $f in aes|pclmulqdq|avx|avx2|avx512f|sse4_1|sse4_2|ssse3|"
                       "sha_ni|vaes|vpclmulqdq) printf '%s ' $f;; esac; done"));
    json_object_object_add(env, "guest_cpu", cpu);
    struct json_object *tools = json_object_new_object();
    add_str(tools, "iperf3", guest_line(hub, "iperf3 --version"));
    add_str(tools, "wireguard-tools", guest_line(hub, "wg --version"));
    add_str(tools, "nft", guest_line(hub, "nft --version"));
    json_object_object_add(env, "tools", tools);
    struct json_object *host = ml_hostinfo_host(lab->remote ? lab->conn : NULL);
    json_object_object_foreach(host, key, value)
    {
        json_object_object_add(env, key, json_object_get(value));
    }
    json_object_put(host);
    /* Each guest's kernel, offloads, MTUs, the sysctls that matter and its daemons' versions. */
    struct json_object *hosts = json_object_new_object();
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        g_autoptr(GError) e = NULL;
        struct json_object *h = ml_hostinfo_guest(ml_lab_dom(lab, i), &e);
        if (!h)
            ml_warn("%s: its metadata could not be read: %s", lab->topo->nodes[i].name, e->message);
        json_object_object_add(hosts, lab->topo->nodes[i].name, h);
    }
    json_object_object_add(env, "hosts", hosts);
    json_object_object_add(env, "programs", programs(lab));
    return env;
}
