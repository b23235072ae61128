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
 * profiles add 40 ms, and it grew by 40.1 (within ±4)", and under TCG how much later it may
 * come (wan.rtt[].late_ms). */
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
        double late = 0;
        ml_j_num(x, "late_ms", &late);
        /* The run's own verdict (ml_wan_rtt_within), not the rule again. */
        g_string_append(s, ml_j_bool(x, "within") ? "within" : "**outside**");
        g_string_append(s, " ±");
        ml_put_significant(s, tol, 2);
        g_string_append(s, " ms");
        if (late > 0) {
            g_string_append(s, " and ");
            ml_put_significant(s, late, 2);
            g_string_append(s, " ms more late (the guests' timers under TCG)");
        }
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
                           "path that finds its own way counts as it was found, direct or "
                           "relayed.\n\n");
}

static bool step_measured(struct json_object *p)
{
    return !g_strcmp0(ml_j_str(p, "status"), "measured");
}

/* One table of the sweep: a row per path, a column per step, the figure key scaled. */
static void sweep_table(GString *s, struct json_object *sweep, const char *what, const char *key,
                        double scale, int digits)
{
    size_t steps = ml_j_len(sweep);
    struct json_object *first = ml_j_array(json_object_array_get_idx(sweep, 0), "paths");
    g_string_append_printf(s, "| %s |", what);
    for (size_t k = 0; k < steps; k++) {
        g_string_append_c(s, ' ');
        ml_put_text(s, ml_j_str_or(json_object_array_get_idx(sweep, k), "step", ML_DASH));
        g_string_append(s, " |");
    }
    g_string_append(s, "\n|---|");
    for (size_t k = 0; k < steps; k++)
        g_string_append(s, "---:|");
    g_string_append_c(s, '\n');
    for (size_t i = 0; i < ml_j_len(first); i++) {
        const char *name = ml_j_str(json_object_array_get_idx(first, i), "name");
        g_string_append(s, "| ");
        ml_put_text(s, name);
        g_string_append(s, " |");
        for (size_t k = 0; k < steps; k++) {
            struct json_object *p = ml_j_path_named(json_object_array_get_idx(sweep, k), name);
            double v;
            g_string_append_c(s, ' ');
            if (step_measured(p) && ml_j_num(p, key, &v))
                ml_put_significant(s, v * scale, digits);
            else if (p && !step_measured(p))
                ml_put_text(s, ml_j_str_or(p, "status", ML_DASH));
            else
                g_string_append(s, ML_DASH);
            g_string_append(s, " |");
        }
        g_string_append_c(s, '\n');
    }
    g_string_append_c(s, '\n');
}

/* "wireguard-hub: from lan to vps-far, its median throughput went from 104 to 20.8 Mbit/s (−80
 * %) and its idle round trip's median from 6.20 to 88.2 ms, 82.0 ms more; the profiles add 80.0
 * ms more." */
static void sweep_sentence(GString *s, const char *name, struct json_object *a,
                           struct json_object *b, const char *from, const char *to)
{
    double ta, tb, ra, rb, wa, wb;
    if (!ml_j_num(a, "median_bits_per_second", &ta) || !ml_j_num(b, "median_bits_per_second", &tb))
        return;
    g_string_append(s, "- **");
    ml_put_text(s, name);
    g_string_append(s, "**: from ");
    ml_put_text(s, from);
    g_string_append(s, " to ");
    ml_put_text(s, to);
    g_string_append(s, ", its median throughput went from ");
    ml_put_significant(s, ta / 1e6, 3);
    g_string_append(s, " to ");
    ml_put_significant(s, tb / 1e6, 3);
    g_string_append(s, " Mbit/s (");
    if (ta > 0) {
        g_string_append(s, tb >= ta ? "+" : "−");
        ml_put_fixed(s, fabs(tb - ta) / ta * 100, 0);
        g_string_append(s, " %");
    } else {
        g_string_append(s, ML_DASH);
    }
    g_string_append(s, ")");
    if (ml_j_num(a, "rtt_idle_p50_ms", &ra) && ml_j_num(b, "rtt_idle_p50_ms", &rb)) {
        g_string_append(s, " and its idle round trip's median from ");
        ml_put_significant(s, ra, 3);
        g_string_append(s, " to ");
        ml_put_significant(s, rb, 3);
        g_string_append(s, " ms, ");
        ml_put_significant(s, fabs(rb - ra), 3);
        g_string_append(s, rb >= ra ? " ms more" : " ms less");
        if (ml_j_num(a, "rtt_wan_added_ms", &wa) && ml_j_num(b, "rtt_wan_added_ms", &wb)) {
            g_string_append(s, "; the profiles add ");
            ml_put_significant(s, fabs(wb - wa), 3);
            g_string_append(s, wb >= wa ? " ms more" : " ms less");
        }
    }
    g_string_append(s, ".\n");
}

void ml_section_wan_sweep(struct ml_render *c)
{
    struct json_object *sweep = ml_j_array(c->r, "wan_sweep");
    size_t steps = ml_j_len(sweep);
    if (steps < 2)
        return;
    GString *s = c->s;
    g_string_append(s, "## Distance sweep\n\nThe paths were measured once at each step of the "
                       "topology's `wan_sweep`, in this order: ");
    for (size_t k = 0; k < steps; k++) {
        if (k)
            g_string_append(s, k + 1 == steps ? " and " : ", ");
        ml_put_text(s, ml_j_str_or(json_object_array_get_idx(sweep, k), "step", ML_DASH));
    }
    g_string_append(s, ". Every table above is the first step's; each step's profiles were put "
                       "in force and proven as above before its paths were measured (`wan_sweep[]."
                       "wan`). A path not measured at a step shows its status.\n\n");
    sweep_table(s, sweep, "median throughput, Mbit/s", "median_bits_per_second", 1e-6, 3);
    sweep_table(s, sweep, "idle round trip, median, ms", "rtt_idle_p50_ms", 1, 3);
    sweep_table(s, sweep, "the profiles add, ms", "rtt_wan_added_ms", 1, 3);
    sweep_table(s, sweep, "hub bytes per payload byte", "hub_bytes_per_payload_byte", 1, 3);
    const struct ml_plot *pic = ml_plots_sweep_of(c->plots);
    if (pic)
        ml_put_picture(s, pic);
    struct json_object *a = json_object_array_get_idx(sweep, 0);
    struct json_object *b = json_object_array_get_idx(sweep, steps - 1);
    struct json_object *first = ml_j_array(a, "paths");
    GString *said = g_string_new(NULL);
    for (size_t i = 0; i < ml_j_len(first); i++) {
        const char *name = ml_j_str(json_object_array_get_idx(first, i), "name");
        struct json_object *pa = ml_j_path_named(a, name), *pb = ml_j_path_named(b, name);
        if (step_measured(pa) && step_measured(pb))
            sweep_sentence(said, name, pa, pb, ml_j_str_or(a, "step", ML_DASH),
                           ml_j_str_or(b, "step", ML_DASH));
    }
    if (said->len)
        g_string_append_printf(s, "From the first step to the last (`wan_sweep[].paths`):\n\n%s\n",
                               said->str);
    g_string_free(said, true);
}
