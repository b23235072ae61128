/* wireguard-hub: kernel WireGuard, client -> hub -> server inside the tunnel. */
#include <stdio.h>
#include <string.h>

#include "virt/agent.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "dataplanes/wireguard.h"

/* WireGuard rekeys every 2 minutes while traffic flows; 180 s is "recent". */
#define HANDSHAKE_MAX_AGE_S 180

static char *describe(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf(
        "kernel WireGuard, %s to %s through the hub (%s)", t->nodes[t->measure.client].name,
        ml_ip_str(t->nodes[t->measure.server].tunnel_address, addr), t->nodes[t->hub].name);
}

static struct in_addr target_of(const struct ml_lab *lab, size_t node)
{
    return lab->topo->nodes[node].tunnel_address;
}

static struct in_addr target(const struct ml_lab *lab)
{
    return target_of(lab, lab->topo->measure.server);
}

/* The path's two ends as the hub's peers: the client and the server, by tunnel address. */
static void path_ends(const struct ml_topology *t, struct ml_wg_end ret[2])
{
    ret[0] = (struct ml_wg_end){t->nodes[t->measure.client].name,
                                t->nodes[t->measure.client].tunnel_address};
    ret[1] = (struct ml_wg_end){t->nodes[t->measure.server].name,
                                t->nodes[t->measure.server].tunnel_address};
}

/* The hub's own view, in one agent call: its clock, then one line per peer, "PUBKEY\tEPOCH";
 * which peer holds which tunnel address, "PUBKEY\tA.B.C.D/32"; each peer's bytes,
 * "PUBKEY\tRX\tTX". Not `wg show dump`: its first line is the hub's private key. */
static void observe(struct ml_lab *lab, struct ml_evidence *ev)
{
    g_autoptr(GError) e = NULL;
    virDomainPtr hub = ml_lab_dom(lab, lab->topo->hub);
    const char *cmds[] = {"date +%s; wg show wg0 latest-handshakes", "wg show wg0 allowed-ips",
                          ML_UPTIME_COMMAND "; wg show wg0 transfer"};
    if (!ml_agent_run_each(hub, cmds, G_N_ELEMENTS(cmds), 15, ev->own, &e))
        ev->own_error =
            g_strdup_printf("cannot read the hub's handshakes: %s", ml_agent_error_text(e));
}

/* The hub's peers for the client and the server, as the hub counts them. */
static size_t tunnel_counts(const struct ml_topology *t, const struct ml_evidence *ev,
                            struct ml_tunnel_count *ret, double *ret_at)
{
    *ret_at = ml_uptime_head(ev->own[2]);
    struct ml_wg_end ends[2];
    path_ends(t, ends);
    return ev->own_error ? 0
                         : ml_wg_tunnel_counts(ev->own[2], ev->own[1], "the hub's", ends,
                                               G_N_ELEMENTS(ends), ret);
}

/* Every payload byte crosses the hub's NIC twice (in from the client, out to
 * the server), each time inside a larger WireGuard packet. The hub's peers for
 * the client and the server must both hold a fresh handshake (other clients
 * of the hub do not matter), and the client's route must enter wg0. */
static size_t ports(const struct ml_topology *t, struct ml_port *ret, size_t max)
{
    if (max < 1)
        return 0;
    ret[0] = (struct ml_port){.what = "WireGuard",
                              .proto = ML_PROTO_UDP,
                              .port = t->wireguard.listen_port,
                              .open = true,
                              .dataplane = "wireguard"};
    return 1;
}

static bool verify(const struct ml_topology *t, const struct ml_evidence *ev, GString *sentence)
{
    struct ml_wg_end ends[2];
    path_ends(t, ends);
    bool fresh = ml_wg_path_fresh(ev->own_error, ev->own[0], ev->own[1], "hub", ends,
                                  G_N_ELEMENTS(ends), HANDSHAKE_MAX_AGE_S, sentence);
    return ml_route_enters(&ev->rt, "wg0", sentence) && fresh;
}

extern const struct ml_path_ops ml_path_wireguard_hub;

const struct ml_dataplane ml_dataplane_wireguard = {
    .name = "wireguard",
    .paths = {&ml_path_wireguard_hub},
    .ports = ports,
    .setup = ml_wg_setup,
    .observe = observe,
    .export = ml_wg_export,
};

/* The wg-quick files (wireguard.c) set no MTU: wg-quick takes eth0's 1500 less
 * 80 (the IPv6 worst case), 1420, as wireguard-go's DefaultMTU. Plaintext is padded
 * to 16, capped at the MTU (kernel send.c, wireguard-go calculatePaddingSize). */
const struct ml_encap ml_encap_wireguard = {
    .name = "WireGuard",
    .inner_mtu = 1420,
    .overhead = 20 + 8 + 16 + 16,
    .pad_to = 16,
    .how = "WireGuard: 20 IP + 8 UDP + 16 header + 16 tag = 60 bytes, padding to 16",
};

const struct ml_path_ops ml_path_wireguard_hub = {
    .name = "wireguard-hub",
    .dataplane = &ml_dataplane_wireguard,
    .hub = ML_HUB_CARRIES,
    .encap = &ml_encap_wireguard,
    .describe = describe,
    .target = target,
    .target_of = target_of,
    .verify = verify,
    .tunnel_counts = tunnel_counts,
};
