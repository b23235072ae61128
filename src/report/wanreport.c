/* The report's distance section: each node's WAN profile as put in force, the proof that it is
 * (each client's round trip to the hub before and after), and what the profiles add to each
 * path's idle round trip beside what it measured; all from results.json's `wan` and each path's
 * idle record (docs/results.md). No `wan`: no section. */
#include <math.h>

#include "report/render.h"

/* "40 ms", "10 Mbit/s", "none" for a 0 that means no limit. */
static void put_ms(GString *s, struct json_object *o, const char *key)
{
    double v;
    if (!ml_j_num(o, key, &v)) {
        g_string_append(s, ML_DASH);
        return;
    }
    ml_put_significant(s, v, 3);
    g_string_append(s, " ms");
}

static void node_row(GString *s, struct json_object *n)
{
    struct json_object *p = ml_j_obj(n, "profile");
    double rate;
    g_string_append(s, "| ");
    ml_put_text(s, ml_j_str_or(n, "node", ML_DASH));
    g_string_append(s, " | ");
    ml_put_text(s, ml_j_str_or(p, "name", ML_DASH));
    g_string_append(s, " | ");
    put_ms(s, p, "delay_ms");
    g_string_append(s, " | ");
    put_ms(s, p, "jitter_ms");
    g_string_append(s, " | ");
    ml_put_num(s, p, "loss_percent", 1);
    g_string_append(s, " % | ");
    if (ml_j_num(p, "rate_mbit", &rate)) {
        ml_put_significant(s, rate, 3);
        g_string_append(s, " Mbit/s");
    } else {
        g_string_append(s, "no limit");
    }
    g_string_append(s, " | ");
    ml_put_text(s, ml_j_str_or(n, "qdisc", ML_DASH));
    g_string_append(s, ml_j_bool(n, "qdisc_matches") ? " | yes |\n" : " | **NO** |\n");
}

/* "client-a to hub: the median round trip went from 0.61 to 40.7 ms over 20 pings; the
 * profiles add 40 ms, and it grew by 40.1 (within ±4)." */
static void rtt_sentence(GString *s, struct json_object *x)
{
    double base, after, added, tol;
    g_string_append(s, "- ");
    ml_put_text(s, ml_j_str_or(x, "from", ML_DASH));
    g_string_append(s, " to ");
    ml_put_text(s, ml_j_str_or(x, "to", ML_DASH));
    g_string_append(s, ": the median round trip went from ");
    put_ms(s, x, "baseline_p50_ms");
    g_string_append(s, " to ");
    put_ms(s, x, "p50_ms");
    g_string_append(s, " over ");
    ml_put_num(s, x, "pings", 0);
    g_string_append(s, " pings each; the profiles add ");
    put_ms(s, x, "added_ms");
    if (ml_j_num(x, "baseline_p50_ms", &base) && ml_j_num(x, "p50_ms", &after) &&
        ml_j_num(x, "added_ms", &added) && ml_j_num(x, "tolerance_ms", &tol)) {
        g_string_append(s, ", and it grew by ");
        ml_put_significant(s, after - base, 3);
        g_string_append(s, " ms, ");
        g_string_append(s, fabs(after - base - added) <= tol ? "within" : "**outside**");
        g_string_append(s, " ±");
        ml_put_significant(s, tol, 2);
        g_string_append(s, " ms");
    }
    g_string_append(s, " (`wan.rtt`).\n");
}

void ml_section_wan(struct ml_render *c)
{
    struct json_object *wan = ml_j_obj(c->r, "wan");
    if (!wan)
        return;
    GString *s = c->s;
    g_string_append(s, "## Distance: the nodes' WAN profiles\n\n");
    g_string_append(s, "Each node's profile is applied at ");
    ml_put_text(s, ml_j_str_or(wan, "applied_at", ML_DASH));
    g_string_append(s, ": every packet that leaves the node is delayed, jittered, dropped and "
                       "paced by it, so a round trip adds both ends' delays and a relay's "
                       "twice (`wan.nodes`).\n\n");
    g_string_append(s, "| node | profile | delay | jitter | loss | uplink | qdisc read back | "
                       "in force |\n|---|---|---:|---:|---:|---:|---|---|\n");
    struct json_object *nodes = ml_j_array(wan, "nodes");
    for (size_t i = 0; i < ml_j_len(nodes); i++)
        node_row(s, json_object_array_get_idx(nodes, i));
    g_string_append(s, "\n");
    struct json_object *rtt = ml_j_array(wan, "rtt");
    if (ml_j_len(rtt)) {
        g_string_append(s, "Proven before the paths were measured:\n\n");
        for (size_t i = 0; i < ml_j_len(rtt); i++)
            rtt_sentence(s, json_object_array_get_idx(rtt, i));
        g_string_append(s, "\n");
    } else {
        g_string_append(s, "Every node is on a profile that adds nothing; the qdiscs read back "
                           "show no netem.\n\n");
    }
    bool head = false;
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *p = json_object_array_get_idx(c->paths, i);
        struct json_object *idle = ml_j_obj(p, "idle");
        double added;
        if (c->st[i] != ML_PATH_MEASURED || !ml_j_num(idle, "rtt_wan_added_ms", &added))
            continue;
        if (!head)
            g_string_append(s, "| path | the profiles add | idle round trip, median |\n"
                               "|---|---:|---:|\n");
        head = true;
        g_string_append(s, "| ");
        ml_put_text(s, ml_j_str_or(p, "name", ML_DASH));
        g_string_append(s, " | ");
        put_ms(s, idle, "rtt_wan_added_ms");
        g_string_append(s, " | ");
        put_ms(s, ml_j_obj(idle, "rtt"), "p50_ms");
        g_string_append(s, " |\n");
    }
    if (head)
        g_string_append(s, "\nFrom each path's `idle.rtt_wan_added_ms` and `idle.rtt.p50_ms`; a "
                           "path that finds its own way (direct or relayed) has no figure "
                           "here.\n\n");
}
