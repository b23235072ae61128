/* The answer a user came for, first: a month of the workload (results.json's vps_workload) on
 * each measured path, the hub's GB in and out and what is beyond the plan's included transfer,
 * with the path's hub bytes per payload byte beside the seed's own where the seed measured that
 * shape. report.md opens with it (ml_section_answer), SIZING.md too, and `meshlab run` prints it
 * as its last lines (ml_report_answer_text). Every figure is this run's (results/month.c from
 * paths[].vps) or the seed's constant (seed.h), named as such. */
#include <math.h>
#include <string.h>

#include "report/render.h"
#include "report/report.h"
#include "report/seed.h"
#include "results/month.h"

/* The seed's hub bytes per payload byte for the shape a path is, by its name; NAN where the
 * seed's lab had no such path. */
static double seed_factor(const char *path)
{
    static const struct {
        const char *name;
        double hub, payload;
    } seed[] = {
        {"wireguard-hub", SEED_WG_HUB, SEED_WG_PAYLOAD},
        {"tailscale-relay", SEED_RELAY_HUB, SEED_RELAY_PAYLOAD},
        {"tailscale-direct", SEED_DIRECT_HUB, SEED_DIRECT_PAYLOAD},
    };
    for (size_t i = 0; path && i < G_N_ELEMENTS(seed); i++)
        if (!strcmp(path, seed[i].name))
            return seed[i].hub / seed[i].payload;
    return NAN;
}

static bool measured(struct json_object *p)
{
    return !g_strcmp0(ml_j_str(p, "status"), "measured");
}

static bool tcg(struct json_object *r)
{
    return !g_strcmp0(ml_j_str(ml_j_obj(r, "environment"), "accelerator"), "tcg");
}

/* The seed's factors, each from its own counters, in one sentence; and what TCG changes. */
static void put_seed_and_tcg(GString *s, bool emulated)
{
    g_string_append(s, "The seed measured its factors by hand on one-vCPU guests under KVM: "
                       "kernel WireGuard through the hub ");
    ml_put_fixed(s, SEED_WG_HUB / SEED_WG_PAYLOAD, 2);
    g_string_append(s, ", Tailscale through Headscale's DERP ");
    ml_put_fixed(s, SEED_RELAY_HUB / SEED_RELAY_PAYLOAD, 2);
    g_string_append(s, ", Tailscale direct ");
    ml_put_significant(s, SEED_DIRECT_HUB / SEED_DIRECT_PAYLOAD, 3);
    g_string_append(s, ".");
    if (emulated)
        g_string_append(s, " This run's guests ran under TCG, QEMU's emulation: a path's factor "
                           "moves with CPU speed, through how many ACKs TCP sends per segment "
                           "(see Physics), and its throughput and CPU are the emulator's; the GB "
                           "here follow this run's factors.");
}

void ml_section_answer(struct ml_render *c)
{
    struct ml_workload wl;
    ml_workload_from_json(&wl, ml_j_obj(c->r, "vps_workload"));
    if (!wl.present || !(wl.traffic_gb > 0))
        return;
    GString *s = c->s;
    g_string_append(s, "## The answer\n\nA month of the workload");
    g_string_append(s, ml_j_bool(ml_j_obj(c->r, "vps_workload"), "given_to_report")
                           ? " given to `meshlab report`: "
                       : wl.seed ? ", the seed's, since none was given (`--traffic GB` and "
                                   "`--egress-price P` for yours): "
                                 : " (`vps_workload`): ");
    ml_put_workload(s, &wl);
    g_string_append(s, ". What the hub's NIC moves for it, and what that costs, on each path "
                       "this run measured (What it means for the VPS has how):\n\n"
                       "| Path | Hub bytes per payload byte | The seed's | Hub in | Hub out | "
                       "Beyond the included | Cost |\n"
                       "|---|---:|---:|---:|---:|---:|---:|\n");
    size_t rows = 0;
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *p = json_object_array_get_idx(c->paths, i);
        struct ml_month m;
        if (c->st[i] != ML_PATH_MEASURED || !ml_month_of(&wl, p, &m))
            continue;
        rows++;
        g_string_append(s, "| ");
        ml_put_text(s, ml_j_str_or(p, "name", ML_DASH));
        g_string_append(s, " | ");
        ml_put_sig(s, p, "hub_bytes_per_payload_byte", 3);
        g_string_append(s, " | ");
        double seed = seed_factor(ml_j_str(p, "name"));
        if (isfinite(seed))
            ml_put_significant(s, seed, 3);
        else
            g_string_append(s, ML_DASH);
        g_string_append(s, " | ");
        ml_put_month_cells(s, &m, wl.currency);
        g_string_append(s, " |\n");
    }
    if (!rows)
        g_string_append(s, "| no path measured | " ML_DASH " | " ML_DASH " | " ML_DASH
                           " | " ML_DASH " | " ML_DASH " | " ML_DASH " |\n");
    g_string_append(s, "\n");
    put_seed_and_tcg(s, tcg(c->r));
    g_string_append(s, "\n\n");
}

/* A path's name for a terminal: its own characters where they are a name's, '?' for others. */
static void put_name(GString *s, const char *name, int width)
{
    gsize from = s->len;
    for (const char *q = name ? name : "?"; *q; q++)
        g_string_append_c(s, g_ascii_isalnum(*q) || *q == '-' || *q == '_' || *q == '.' ? *q
                                                                                          : '?');
    for (int pad = width - (int)(s->len - from); pad > 0; pad--)
        g_string_append_c(s, ' ');
}

char *ml_report_answer_text(struct json_object *results)
{
    struct ml_workload wl;
    ml_workload_from_json(&wl, ml_j_obj(results, "vps_workload"));
    if (!wl.present || !(wl.traffic_gb > 0))
        return NULL;
    struct json_object *paths = ml_j_array(results, "paths");
    int width = 0;
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        const char *n = ml_j_str(p, "name");
        if (measured(p))
            width = MAX(width, n ? (int)strlen(n) : 1);
    }
    GString *s = g_string_new("\nThe answer for a month of ");
    g_string_append(s, wl.seed ? "the seed's workload (" : "the workload (");
    ml_put_workload(s, &wl);
    g_string_append(s, wl.seed ? "; none was given: --traffic GB and --egress-price P for yours):\n"
                               : "):\n");
    size_t rows = 0;
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        struct ml_month m;
        if (!measured(p) || !ml_month_of(&wl, p, &m))
            continue;
        rows++;
        g_string_append(s, "  ");
        put_name(s, ml_j_str(p, "name"), width);
        g_string_append(s, "  hub in ");
        ml_put_month_gb(s, m.in_gb);
        g_string_append(s, ", out ");
        ml_put_month_gb(s, m.out_gb);
        g_string_append(s, " (");
        ml_put_sig(s, p, "hub_bytes_per_payload_byte", 3);
        g_string_append(s, " per payload byte");
        double seed = seed_factor(ml_j_str(p, "name"));
        if (isfinite(seed)) {
            g_string_append(s, "; the seed's ");
            ml_put_significant(s, seed, 3);
        }
        g_string_append(s, "): ");
        if (m.fits) {
            g_string_append(s, "within the included");
        } else {
            ml_put_month_gb(s, m.overage_gb);
            g_string_append(s, " beyond the included");
            if (isfinite(m.cost)) {
                g_string_append(s, ", ");
                ml_put_money(s, m.cost, wl.currency);
            }
        }
        g_string_append(s, "\n");
    }
    if (!rows)
        g_string_append(s, "  no path was measured: nothing to size the hub by\n");
    if (tcg(results))
        g_string_append(s, "Under TCG (QEMU's emulation) the factors move with CPU speed: see "
                           "the report's Physics.\n");
    return g_string_free(s, false);
}
