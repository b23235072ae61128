#include "measure/wancheck.h"

#include <arpa/inet.h>
#include <math.h>
#include <string.h>

#include "core/util.h"
#include "guestnet/wan.h"
#include "measure/parse_ping.h"
#include "measure/stats.h"
#include "results/json.h"
#include "topology/plan.h"

#define APPLY_TIMEOUT_S 30.0
#define PING_TIMEOUT_S 60.0

double ml_wan_median_spread_ms(double jitter_a_ms, double jitter_b_ms, size_t n)
{
    if (n == 0)
        return 0;
    /* A delay uniform within ±j has the standard deviation j/sqrt(3); the median of n samples
     * of a near-normal spread sigma has the standard error sqrt(pi/2) sigma / sqrt(n). */
    double sigma = sqrt((jitter_a_ms * jitter_a_ms + jitter_b_ms * jitter_b_ms) / 3.0);
    return 3.0 * sqrt(G_PI / 2) * sigma / sqrt((double)n);
}

bool ml_wan_rtt_within(double baseline_ms, double added_ms, double late_ms, double spread_ms,
                       double early_ms, double measured_ms, double *ret_tolerance_ms)
{
    double tol = MAX(added_ms * ML_WAN_RTT_TOLERANCE_PERCENT / 100, ML_WAN_RTT_TOLERANCE_MIN_MS) +
                 MAX(spread_ms, 0.0);
    *ret_tolerance_ms = tol;
    double off = measured_ms - baseline_ms - added_ms;
    return isfinite(measured_ms) && isfinite(baseline_ms) &&
           off >= -tol - (isfinite(early_ms) ? MAX(early_ms, 0.0) : 0.0) &&
           off <= tol + MAX(late_ms, 0.0);
}

bool ml_wan_pings_settled(const double *rtts, size_t n, double jitter_a_ms, double jitter_b_ms)
{
    if (n < 4)
        return false;
    size_t h = n / 2;
    g_autofree double *a = g_memdup2(rtts, h * sizeof(*a));
    g_autofree double *b = g_memdup2(rtts + h, (n - h) * sizeof(*b));
    /* Two halves' medians each wander by the jitter's spread for h pings: their difference by
     * sqrt(2) times that. */
    double spread = sqrt(2.0) * ml_wan_median_spread_ms(jitter_a_ms, jitter_b_ms, h);
    return fabs(ml_median(a, h) - ml_median(b, n - h)) <= ML_WAN_SETTLED_MS + spread;
}

/* ---- on the lab ---- */

/* cmds[i] run in every guest that which selects (NULL: all) at once. */
static bool run_all(struct ml_lab *lab, const bool *which, char **cmds, double timeout_s,
                    char **out, const char *what, GError **err)
{
    return ml_lab_run_parallel(lab, which, (const char *const *)cmds, NULL, timeout_s, out, what,
                               err);
}

static void free_all(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        g_clear_pointer(&v[i], g_free);
}

/* The median round trip from every client to the hub, ML_WAN_PINGS at ML_WAN_PING_INTERVAL_S,
 * into ms[i] (NAN when none came back) and, where lo is not NULL, the fastest into lo[i]; the raw
 * text of every try into raw[i], and the tries into tries[i]: pings not settled
 * (ml_wan_pings_settled) are taken again. One client at a time: a delay that netem adds on the hub
 * is a second wake-up of the hub's vCPU for each reply, and with every client pinging at once a lab
 * of four one-vCPU guests on two host cores kept that wake-up waiting for a core, up to 2 ms on a 5
 * ms profile's median (the minima still showed the 5 ms: 1.76 to 7.31 ms). Pinged in turn, two
 * vCPUs run at once: the hub's and the pinging client's. */
static bool ping_hub(struct ml_lab *lab, const struct ml_wan_profile *set, double *ms, double *lo,
                     char **raw, int *tries, GError **err)
{
    const struct ml_topology *topo = lab->topo;
    size_t n = lab->plan->n_guests;
    char hub[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &topo->nodes[topo->hub].address, hub, sizeof(hub));
    g_autofree char *cmd = g_strdup_printf("ping -n -c %d -i %g -W 2 %s || true", ML_WAN_PINGS,
                                           ML_WAN_PING_INTERVAL_S, hub);
    for (size_t i = 0; i < n; i++) {
        if (i == topo->hub)
            continue;
        GString *all = g_string_new(NULL);
        bool settled = false;
        for (tries[i] = 0; !settled && tries[i] < ML_WAN_PING_TRIES;) {
            bool which[ML_MAX_NODES] = {0};
            char *cmds[ML_MAX_NODES] = {0};
            char *out[ML_MAX_NODES] = {0};
            which[i] = true;
            cmds[i] = cmd;
            if (!run_all(lab, which, cmds, PING_TIMEOUT_S, out, "pinging the hub", err)) {
                free_all(out, n);
                raw[i] = g_string_free(all, false);
                return false;
            }
            tries[i]++;
            g_string_append_printf(all, "%s# try %d of at most %d\n%s", all->len ? "\n" : "",
                                   tries[i], ML_WAN_PING_TRIES, out[i] ? out[i] : "");
            g_autoptr(GArray) rtts = ml_ping_rtts(out[i] ? out[i] : "");
            free_all(out, n);
            double *v = (double *)(void *)rtts->data;
            settled = ml_wan_pings_settled(v, rtts->len, set ? set[i].jitter_ms : 0,
                                           set ? set[topo->hub].jitter_ms : 0);
            ms[i] = rtts->len ? ml_median(v, rtts->len) : NAN;
            if (lo)
                lo[i] = ml_percentile(v, rtts->len, 0); /* the fastest; NAN for none */
            if (!settled && tries[i] < ML_WAN_PING_TRIES)
                ml_progress("wan",
                            "%s to %s: the round trips had not settled (median %.2f ms); "
                            "pinging again",
                            topo->nodes[i].name, topo->nodes[topo->hub].name, ms[i]);
        }
        raw[i] = g_string_free(all, false);
    }
    return true;
}

static struct json_object *num_or_null(double v)
{
    return isfinite(v) ? json_object_new_double(round(v * 1000) / 1000) : NULL;
}

/* results.json's `wan` from what was read: each node's qdisc against its profile, each client's
 * round trip to the hub against the two profiles' delays; NULL with err when any is wrong. */
static struct json_object *judge(struct ml_lab *lab, const struct ml_wan_profile *set, bool any,
                                 char **out, const double *base, const double *base_lo,
                                 const double *after, const int *base_tries, const int *tries,
                                 char **raw0, char **raw1, GError **err)
{
    const struct ml_topology *topo = lab->topo;
    size_t n = lab->plan->n_guests;
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "applied_at",
                           json_object_new_string("each guest's " ML_LAB_NIC
                                                  ", outgoing (a netem qdisc at its root)"));
    struct json_object *nodes = json_object_new_array();
    GString *wrong = g_string_new(NULL);
    for (size_t i = 0; i < n; i++) {
        const struct ml_node *node = &topo->nodes[i];
        const struct ml_wan_profile *wan = &set[i];
        g_autoptr(GString) seen = g_string_new(NULL);
        bool match = ml_wan_qdisc_matches(out[i], wan, seen);
        struct json_object *x = json_object_new_object();
        json_object_object_add(x, "node", json_object_new_string(node->name));
        json_object_object_add(x, "profile", ml_wan_profile_json(wan));
        json_object_object_add(x, "qdisc", json_object_new_string(seen->str));
        json_object_object_add(x, "qdisc_matches", json_object_new_boolean(match));
        json_object_array_add(nodes, x);
        if (!match)
            g_string_append_printf(wrong, "%s%s has %s where its profile %s asks for %s",
                                   wrong->len ? "; " : "", node->name, seen->str, wan->name,
                                   ml_wan_is_none(wan) ? "no netem" : "netem");
        g_autofree char *rel = g_strdup_printf("raw/wan/%s-qdisc.json", node->name);
        ml_lab_write(lab, rel, out[i] ? out[i] : "", -1, NULL);
    }
    json_object_object_add(o, "nodes", nodes);
    struct json_object *rtts = json_object_new_array();
    for (size_t i = 0; any && i < n; i++) {
        if (i == topo->hub)
            continue;
        const struct ml_node *node = &topo->nodes[i], *hub = &topo->nodes[topo->hub];
        const struct ml_wan_profile *wan = &set[i], *hub_wan = &set[topo->hub];
        double added = ml_wan_rtt_ms(wan, hub_wan, NULL), tol = 0;
        double late = lab->accel.kvm
                          ? 0
                          : ML_WAN_TCG_LATE_MS * ((wan->delay_ms > 0) + (hub_wan->delay_ms > 0));
        /* Jitter moves the median of ML_WAN_PINGS round trips: the baseline's (none) and this
         * one's. Mobile's ±10 ms on the hub read 3.85 ms under its 30 ms in one sweep. */
        double spread = ml_wan_median_spread_ms(wan->jitter_ms, hub_wan->jitter_ms, ML_WAN_PINGS);
        /* How far the baseline's median stood above its fastest ping; none where either is
         * missing. */
        double early = base[i] - base_lo[i];
        if (!(early > 0))
            early = 0;
        bool within = ml_wan_rtt_within(base[i], added, late, spread, early, after[i], &tol);
        struct json_object *x = json_object_new_object();
        json_object_object_add(x, "from", json_object_new_string(node->name));
        json_object_object_add(x, "to", json_object_new_string(hub->name));
        json_object_object_add(x, "pings", json_object_new_int(ML_WAN_PINGS));
        json_object_object_add(x, "baseline_p50_ms", num_or_null(base[i]));
        json_object_object_add(x, "baseline_min_ms", num_or_null(base_lo[i]));
        json_object_object_add(x, "baseline_tries", json_object_new_int(base_tries[i]));
        json_object_object_add(x, "added_ms", json_object_new_double(added));
        json_object_object_add(x, "p50_ms", num_or_null(after[i]));
        json_object_object_add(x, "tries", json_object_new_int(tries[i]));
        json_object_object_add(x, "tolerance_ms", json_object_new_double(tol));
        json_object_object_add(x, "late_ms", json_object_new_double(late));
        json_object_object_add(x, "within", json_object_new_boolean(within));
        json_object_array_add(rtts, x);
        ml_progress("wan",
                    "%s to %s: the median round trip went from %.2f to %.2f ms; %s and %s add %g",
                    node->name, hub->name, base[i], after[i], wan->name, hub_wan->name, added);
        if (!within)
            g_string_append_printf(wrong,
                                   "%s%s to %s: the median round trip went from %.2f to %.2f ms "
                                   "where the profiles %s and %s add %g ms (±%.1f, %.1f more "
                                   "late under TCG, %.2f more early: the baseline's median "
                                   "above its minimum)",
                                   wrong->len ? "; " : "", node->name, hub->name, base[i], after[i],
                                   wan->name, hub_wan->name, added, tol, late, early);
        g_autofree char *rel0 = g_strdup_printf("raw/wan/%s-ping-baseline.txt", node->name);
        g_autofree char *rel1 = g_strdup_printf("raw/wan/%s-ping.txt", node->name);
        ml_lab_write(lab, rel0, raw0[i] ? raw0[i] : "", -1, NULL);
        ml_lab_write(lab, rel1, raw1[i] ? raw1[i] : "", -1, NULL);
    }
    json_object_object_add(o, "rtt", rtts);
    json_object_object_add(o, "in_force", json_object_new_boolean(wrong->len == 0));
    if (wrong->len) {
        g_autofree char *where = ml_lab_rel(lab, "raw/wan/");
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                    "the WAN profiles are not in force: %s; the qdiscs and pings are under %s in "
                    "the run directory",
                    wrong->str, where);
        g_clear_pointer(&o, json_object_put);
    } else {
        for (size_t i = 0; i < n; i++) {
            lab->wan_now[i] = set[i];
            ml_progress("wan", "%s: %s%s", topo->nodes[i].name, set[i].name,
                        ml_wan_is_none(&set[i]) ? " (nothing added)" : "");
        }
    }
    g_string_free(wrong, true);
    return o;
}

struct json_object *ml_wan_lab_apply(struct ml_lab *lab, const struct ml_wan_profile *set,
                                     GError **err)
{
    size_t n = lab->plan->n_guests;
    const struct ml_wan_profile *lan = ml_wan_shipped_find("lan");
    bool any = false;
    for (size_t i = 0; i < n; i++)
        any = any || !ml_wan_is_none(&set[i]);
    char *cmds[ML_MAX_NODES] = {0}, *out[ML_MAX_NODES] = {0}, *raw0[ML_MAX_NODES] = {0},
         *raw1[ML_MAX_NODES] = {0};
    double base[ML_MAX_NODES], base_lo[ML_MAX_NODES], after[ML_MAX_NODES];
    int base_tries[ML_MAX_NODES] = {0}, tries[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < n; i++)
        base[i] = base_lo[i] = after[i] = NAN;
    struct json_object *o = NULL;
    bool ok = true;
    /* Whatever an earlier run left goes first, so that the baseline is the bridge's own. */
    if (any) {
        for (size_t i = 0; i < n; i++)
            cmds[i] = ml_wan_script(lan, ML_LAB_NIC);
        ok = run_all(lab, NULL, cmds, APPLY_TIMEOUT_S, NULL, "clearing the WAN profiles", err) &&
             ping_hub(lab, NULL, base, base_lo, raw0, base_tries, err);
        free_all(cmds, n);
    }
    for (size_t i = 0; ok && i < n; i++)
        cmds[i] = ml_wan_script(&set[i], ML_LAB_NIC);
    ok = ok &&
         run_all(lab, NULL, cmds, APPLY_TIMEOUT_S, NULL, "putting the WAN profiles in force", err);
    free_all(cmds, n);
    for (size_t i = 0; ok && i < n; i++)
        cmds[i] = g_strdup_printf("tc -j qdisc show dev %s", ML_LAB_NIC);
    ok = ok && run_all(lab, NULL, cmds, APPLY_TIMEOUT_S, out, "reading the WAN qdiscs", err);
    free_all(cmds, n);
    ok = ok && (!any || ping_hub(lab, set, after, NULL, raw1, tries, err));
    if (ok)
        o = judge(lab, set, any, out, base, base_lo, after, base_tries, tries, raw0, raw1, err);
    free_all(out, n);
    free_all(raw0, n);
    free_all(raw1, n);
    return o;
}
