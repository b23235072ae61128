/* The report's section on the seed's own experiment (shared/seeds: Tailscale direct and through
 * Headscale's DERP relay, measured by hand on KVM): the run's figures of its Tailscale paths beside
 * the seed's, and the peer relay's, which the seed's lab did not run. The run's come from
 * results.json (paths[].hub_bytes_per_payload_byte, .expected, .setup_s, .observed); the seed's are
 * the seed's own numbers, named as such. Absent when neither Tailscale path was measured. */
#include <stdlib.h>
#include <string.h>

#include "report/render.h"
#include "report/seed.h"

static struct json_object *measured_path(struct ml_render *c, const char *name)
{
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *p = json_object_array_get_idx(c->paths, i);
        if (!g_strcmp0(ml_j_str(p, "name"), name) && c->st[i] == ML_PATH_MEASURED)
            return p;
    }
    return NULL;
}

/* tailscale0's MTU from the observed "mtu 1280 mtu 68 mtu 65535 tun" (ip -d: the MTU, then its
 * minimum and maximum): the first. */
static void put_mtu(GString *s, const char *link)
{
    const char *m = link ? strstr(link, "mtu ") : NULL;
    if (m)
        g_string_append_printf(s, "%ld", strtol(m + 4, NULL, 10));
    else
        g_string_append(s, ML_DASH);
}

/* "| NAME: hub bytes per payload byte | F (its physics E) | ": the row up to the seed's cell. */
static void put_relay_factor(GString *s, struct json_object *p)
{
    double e;
    g_string_append(s, "| ");
    ml_put_text(s, ml_j_str_or(p, "name", ML_DASH));
    g_string_append(s, ": hub bytes per payload byte | ");
    ml_put_sig(s, p, "hub_bytes_per_payload_byte", 3);
    if (ml_j_num(ml_j_obj(p, "expected"), "hub_bytes_per_payload_byte", &e)) {
        g_string_append(s, " (its physics ");
        ml_put_significant(s, e, 3);
        g_string_append(s, ")");
    }
    g_string_append(s, " | ");
}

void ml_section_seed(struct ml_render *c)
{
    struct json_object *direct = measured_path(c, "tailscale-direct");
    struct json_object *relay = measured_path(c, "tailscale-relay");
    if (!direct && !relay)
        return;
    GString *s = c->s;
    struct json_object *any = direct ? direct : relay;
    bool tcg = !g_strcmp0(ml_j_str(ml_j_obj(c->r, "environment"), "accelerator"), "tcg");
    g_string_append(s, "## The seed's experiment\n\n"
                       "The seed measured these by hand, with Tailscale 1.104.4 and Headscale "
                       "0.29.7 on one-vCPU guests under KVM; this run's figures beside them.");
    if (tcg)
        g_string_append(s, " Throughput is not set beside the seed's: this run's guests ran under "
                           "TCG, and theirs is the emulator's.");
    g_string_append(s, "\n\n| Figure | This run | The seed's |\n|---|---|---|\n");
    static const struct {
        const char *name;
        double seed;
    } speeds[] = {{"tailscale-direct", SEED_DIRECT_MBIT}, {"tailscale-relay", SEED_RELAY_MBIT}};
    for (size_t i = 0; !tcg && i < G_N_ELEMENTS(speeds); i++) {
        struct json_object *p = measured_path(c, speeds[i].name);
        double bps;
        if (!p || !ml_j_num(p, "median_bits_per_second", &bps))
            continue;
        g_string_append_printf(s, "| %s: Mbit/s, median | ", speeds[i].name);
        ml_put_significant(s, bps / 1e6, 3);
        g_string_append(s, " | ");
        ml_put_significant(s, speeds[i].seed, 4);
        g_string_append(s, " |\n");
    }
    if (direct) {
        g_string_append(s, "| tailscale-direct: hub bytes per payload byte | ");
        ml_put_sig(s, direct, "hub_bytes_per_payload_byte", 3);
        g_string_append(s, " | ");
        ml_put_significant(s, SEED_DIRECT_HUB / SEED_DIRECT_PAYLOAD, 3);
        g_string_append(s, " (one 66-byte packet each way for 1,033,240,576 bytes) |\n");
    }
    if (relay) {
        put_relay_factor(s, relay);
        ml_put_significant(s, SEED_RELAY_HUB / SEED_RELAY_PAYLOAD, 3);
        g_string_append(s, " (211,231,726 in and 205,567,209 out for 170,655,744) |\n");
    }
    /* The seed's Tailscale had peer relays, but its lab ran none: nothing of its to set beside. */
    struct json_object *peer = measured_path(c, "tailscale-peer-relay");
    if (peer) {
        put_relay_factor(s, peer);
        g_string_append(s, ML_DASH " (not in the seed's lab) |\n");
    }
    g_string_append(s, "| Both clients up, from the first install step | ");
    double setup;
    if (ml_j_num(any, "setup_s", &setup)) {
        ml_put_significant(s, setup, 3);
        g_string_append(s, " s");
    } else {
        g_string_append(s, ML_DASH);
    }
    g_string_append_printf(s, " | %.1f s |\n", SEED_JOIN_S);
    struct json_object *obs = ml_j_obj(direct, "observed");
    if (obs) {
        struct json_object *hub = ml_j_obj(obs, ml_j_str(direct, "hub"));
        struct json_object *from = ml_j_obj(obs, ml_j_str(direct, "from"));
        struct json_object *to = ml_j_obj(obs, ml_j_str(direct, "to"));
        g_string_append(s, "| Headscale's idle RSS | ");
        ml_put_sig(s, hub, "headscale_rss_kib", 5);
        g_string_append(s, " KiB | " SEED_HEADSCALE_KIB " kB |\n");
        g_string_append(s, "| tailscaled's idle RSS, ");
        ml_put_text(s, ml_j_str_or(direct, "from", ML_DASH));
        g_string_append(s, " and ");
        ml_put_text(s, ml_j_str_or(direct, "to", ML_DASH));
        g_string_append(s, " | ");
        ml_put_sig(s, from, "tailscaled_rss_kib", 5);
        g_string_append(s, " and ");
        ml_put_sig(s, to, "tailscaled_rss_kib", 5);
        g_string_append(s, " KiB | " SEED_TAILSCALED_KIB " kB |\n| tailscale0's MTU | ");
        put_mtu(s, ml_j_str(from, "tailscale0"));
        g_string_append_printf(s, " | %d |\n", SEED_MTU);
    }
    g_string_append(s, "\n");
}
