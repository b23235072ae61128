/* wireguard-hub: kernel WireGuard, client -> hub -> server inside the tunnel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "virt/agent.h"
#include "dataplanes/path.h"
#include "dataplanes/wireguard.h"

/* WireGuard rekeys every 2 minutes while traffic flows; 180 s is "recent". */
#define HANDSHAKE_MAX_AGE_S 180

static char *describe(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("kernel WireGuard, %s to %s through the hub (%s)",
                           t->nodes[t->measure.client].name,
                           ml_ip_str(t->nodes[t->measure.server].tunnel_address, addr),
                           t->nodes[t->wireguard.hub].name);
}

static struct in_addr target(const struct ml_lab *lab)
{
    const struct ml_topology *t = lab->topo;
    return t->nodes[t->measure.server].tunnel_address;
}

/* Oldest handshake age across the hub's peers, or -1 if any peer never shook hands. */
static long long oldest_handshake(struct ml_lab *lab, GString *ev)
{
    g_autoptr(GError) e = NULL;
    g_autofree char *out = ml_agent_run(ml_lab_dom(lab, lab->topo->wireguard.hub),
                                        "date +%s; wg show wg0 latest-handshakes", NULL, 15, &e);
    if (!out) {
        g_string_append_printf(ev, "cannot read the hub's handshakes: %s; ", e->message);
        return -1;
    }
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    long long now = lines[0] ? atoll(lines[0]) : 0;
    long long oldest = 0;
    unsigned peers = 0;
    for (char **l = lines + (lines[0] ? 1 : 0); *l; l++) {
        char *tab = strchr(*l, '\t');
        if (!tab)
            continue;
        long long t = atoll(tab + 1);
        peers++;
        if (t == 0)
            oldest = -1;
        else if (oldest >= 0 && now - t > oldest)
            oldest = now - t;
    }
    if (peers == 0)
        oldest = -1;
    if (oldest < 0)
        g_string_append_printf(ev, "hub has %u peers, oldest handshake never; ", peers);
    else
        g_string_append_printf(ev, "hub has %u peers, oldest handshake %lld s ago; ", peers,
                               oldest);
    return oldest;
}

/* Every payload byte crosses the hub's NIC twice (in from the client, out to
 * the server), each time inside a larger WireGuard packet. */
static bool verify(struct ml_lab *lab, const struct ml_probe *p, GString *ev)
{
    long long age = oldest_handshake(lab, ev);
    bool tunnel = p->route && strstr(p->route, "dev wg0");
    bool answered = p->received > 0;
    bool hub_carried = p->hub_bytes * 2 >= p->probe_bytes * 3;
    g_string_append_printf(ev, "route: %s; %u/%u probe pings answered; hub NIC moved %lld bytes "
                           "for %lld probe bytes (must be at least 1.5 times)",
                           p->route ? p->route : "?", p->received, p->transmitted, p->hub_bytes,
                           p->probe_bytes);
    return age >= 0 && age <= HANDSHAKE_MAX_AGE_S && tunnel && answered && hub_carried;
}

const struct ml_path_ops ml_path_wireguard_hub = {
    .kind = ML_PATH_WIREGUARD_HUB,
    .describe = describe,
    .target = target,
    .setup = ml_wg_setup,
    .verify = verify,
};
