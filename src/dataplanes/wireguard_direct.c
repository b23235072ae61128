/* wireguard-direct: kernel WireGuard between the two clients, peer to peer, the
 * hub not involved: the encrypted ceiling that tailscale-direct is compared with.
 * Its own interface, subnet and port, so it runs beside wireguard-hub. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/keys.h"
#include "core/util.h"
#include "dataplanes/bundle.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "dataplanes/wireguard.h"
#include "topology/plan.h"
#include "virt/agent.h"

#define DEV "wg1"
#define KEY_FILE "/etc/wireguard/" DEV ".key"
#define SUBNET "10.9.0."        /* /24: each client keeps the last octet of its tunnel_address */
#define HANDSHAKE_MAX_AGE_S 180 /* rekeyed every 2 minutes while traffic flows */

extern const struct ml_dataplane ml_dataplane_wireguard_direct;

/* wireguard.listen_port + 1, on both clients. */
static unsigned port(const struct ml_topology *t)
{
    return t->wireguard.listen_port + 1;
}

static char *address(const struct ml_topology *t, size_t node, char buf[16])
{
    return ml_wg_overlay_address(t, node, SUBNET, buf);
}

static size_t ports(const struct ml_topology *t, struct ml_port *ret, size_t max)
{
    if (max < 1)
        return 0;
    ret[0] = (struct ml_port){.what = "WireGuard direct",
                              .proto = ML_PROTO_UDP,
                              .port = port(t),
                              .open = true,
                              .dataplane = ml_dataplane_wireguard_direct.name};
    return 1;
}

/* wg1.conf of node, whose only peer is other, reached at its lab address. */
static char *render(const struct ml_topology *t, size_t node, size_t other, const char *other_pub)
{
    char mine[16], theirs[16], endpoint[16];
    GString *c = g_string_new(NULL);
    g_string_append_printf(c,
                           "# meshlab lab %s: %s, direct to %s\n"
                           "[Interface]\n"
                           "Address = %s/24\n"
                           "ListenPort = %u\n"
                           "PostUp = wg set %%i private-key " KEY_FILE "\n"
                           "\n[Peer]\n"
                           "# %s\n"
                           "PublicKey = %s\n"
                           "Endpoint = %s:%u\n"
                           "AllowedIPs = %s/32\n",
                           t->name, t->nodes[node].name, t->nodes[other].name,
                           address(t, node, mine), port(t), t->nodes[other].name, other_pub,
                           ml_ip_str(t->nodes[other].address, endpoint), port(t),
                           address(t, other, theirs));
    if (t->wireguard.persistent_keepalive)
        g_string_append_printf(c, "PersistentKeepalive = %u\n", t->wireguard.persistent_keepalive);
    return g_string_free(c, FALSE);
}

/* Keys made in both clients at once (only the public keys come back), then
 * each client's wg1 up with the other as its one peer, then a first ping. */
static bool setup(struct ml_lab *lab, struct json_object *state, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t ends[2] = {t->measure.client, t->measure.server};
    bool which[ML_MAX_NODES] = {0};
    const char *cmds[ML_MAX_NODES] = {0};
    const char *inputs[ML_MAX_NODES] = {0};
    char *pub[ML_MAX_NODES] = {0}, *conf[ML_MAX_NODES] = {0};
    double t0 = ml_now();
    for (size_t e = 0; e < 2; e++)
        which[ends[e]] = true;
    bool ok = ml_wg_keys(lab, which, KEY_FILE, pub, err);
    for (size_t e = 0; ok && e < 2; e++) {
        conf[ends[e]] = render(t, ends[e], ends[1 - e], pub[ends[1 - e]]);
        inputs[ends[e]] = conf[ends[e]];
        cmds[ends[e]] = "set -e; umask 077; cat > /etc/wireguard/" DEV ".conf; "
                        "wg-quick down " DEV " >/dev/null 2>&1 || true; wg-quick up " DEV " 2>&1";
    }
    ok = ok && ml_lab_run_parallel(lab, which, cmds, inputs, 60, NULL, "bringing up " DEV, err);
    for (size_t i = 0; i < ML_MAX_NODES; i++) {
        g_free(pub[i]);
        g_free(conf[i]);
    }
    char target[16];
    address(t, t->measure.server, target);
    struct in_addr to;
    inet_aton(target, &to);
    if (!ok || !ml_lab_wait_ping(lab, to, 120, "the direct WireGuard tunnel", err))
        return false;
    double setup_s = ml_now() - t0;
    json_object_object_add(state, "setup_s", json_object_new_double(setup_s));
    ml_progress("wireguard-direct", "%s answered on " DEV " %.1f s after the first key", target,
                setup_s);
    return true;
}

/* ev->own[] beyond the client's four views: the server's listen port (export --verify). */
#define OWN_SERVER_PORT 4

/* The client's own view, in one agent call: its clock and handshakes, its peers' endpoints,
 * which peer holds which tunnel address, and each peer's bytes. */
static void observe(struct ml_lab *lab, struct ml_evidence *ev)
{
    g_autoptr(GError) e = NULL;
    virDomainPtr client = ml_lab_dom(lab, lab->topo->measure.client);
    const char *cmds[] = {"date +%s; wg show " DEV " latest-handshakes",
                          "wg show " DEV " endpoints", "wg show " DEV " allowed-ips",
                          ML_UPTIME_COMMAND "; wg show " DEV " transfer"};
    if (!ml_agent_run_each(client, cmds, G_N_ELEMENTS(cmds), 15, ev->own, &e))
        ev->own_error =
            g_strdup_printf("cannot read the client's " DEV ": %s", ml_agent_error_text(e));
    /* The server's own port, for an endpoint whose port export --verify's mapping changed. */
    const char *server_cmd[] = {"wg show " DEV " listen-port"};
    g_autoptr(GError) se = NULL;
    if (!ev->own_error && lab->mapped_from[lab->topo->measure.server].s_addr &&
        !ml_agent_run_each(ml_lab_dom(lab, lab->topo->measure.server), server_cmd, 1, 15,
                           &ev->own[OWN_SERVER_PORT], &se))
        g_clear_pointer(&ev->own[OWN_SERVER_PORT], g_free);
}

static char *describe(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("kernel WireGuard, %s to %s directly (" DEV ", UDP %u), the hub not "
                           "involved",
                           t->nodes[t->measure.client].name, address(t, t->measure.server, addr),
                           port(t));
}

static struct in_addr target(const struct ml_lab *lab)
{
    return ml_wg_overlay_target(lab->topo, lab->topo->measure.server, SUBNET);
}

/* The client's peer for the server's tunnel address shook hands recently, at
 * the server's lab address and this dataplane's port (or the public address export --verify
 * maps onto it: the sender's DNAT is undone on the replies, so the client sees that one), and
 * the route enters wg1 with no gateway. */
static bool verify(const struct ml_topology *t, const struct ml_evidence *ev, GString *sentence)
{
    size_t s = t->measure.server;
    const struct ml_wg_end server = {t->nodes[s].name, ml_wg_overlay_target(t, s, SUBNET)};
    bool fresh = ml_wg_path_fresh(ev->own_error, ev->own[0], ev->own[2], "the client", &server, 1,
                                  HANDSHAKE_MAX_AGE_S, sentence);
    char lab_addr[16], mapped[16];
    g_autofree char *want =
        g_strdup_printf("%s:%u", ml_ip_str(t->nodes[s].address, lab_addr), port(t));
    g_autofree char *also =
        ev->mapped_from[s].s_addr
            ? g_strdup_printf("%s:%u", ml_ip_str(ev->mapped_from[s], mapped), port(t))
            : NULL;
    g_autofree char *key = ml_wg_peer_for(ev->own[2], server.address);
    g_autofree char *endpoint = key ? ml_wg_field(ev->own[1], key) : NULL;
    if (key)
        g_string_append_printf(sentence, "the client's peer endpoint is %s (must be %s%s%s%s); ",
                               endpoint ? endpoint : "missing", want, also ? ", or " : "",
                               also ? also : "", also ? ", the public address mapped onto it" : "");
    bool at = endpoint && (!strcmp(endpoint, want) || (also && !strcmp(endpoint, also)));
    /* export --verify maps each client's public address onto its lab address with a DNAT in
     * the other's output path. When both clients start at once, each one's first handshake
     * can reach the other before its own goes out; the second flow then clashes with the
     * first in conntrack, and the kernel gives it another source port. That port is the lab's
     * mapping, not the export: accepted where the mapping is in force, at the server's lab
     * address, when the server's own wg1 listens on the exported port. */
    if (endpoint && !at && also) {
        g_autofree char *host = g_strndup(endpoint, strcspn(endpoint, ":"));
        const char *listen = ev->own[OWN_SERVER_PORT];
        unsigned long lp = listen ? strtoul(listen, NULL, 10) : 0;
        if (!strcmp(host, lab_addr) && lp == port(t)) {
            at = true;
            g_string_append_printf(sentence,
                                   "its port is the lab mapping's own (conntrack gave the "
                                   "server's flow another source port when both ends began at "
                                   "once); the server's " DEV " listens on %u, as exported; ",
                                   port(t));
        }
    }
    return ml_route_enters(&ev->rt, DEV, sentence) && fresh && at;
}

/* The client's peer for the server, as the client counts it: the hub is no end of this path. */
static size_t tunnel_counts(const struct ml_topology *t, const struct ml_evidence *ev,
                            struct ml_tunnel_count *ret, double *ret_at)
{
    *ret_at = ml_uptime_head(ev->own[3]);
    const struct ml_wg_end server = {t->nodes[t->measure.server].name,
                                     ml_wg_overlay_target(t, t->measure.server, SUBNET)};
    return ev->own_error
               ? 0
               : ml_wg_tunnel_counts(ev->own[3], ev->own[2], "the client's", &server, 1, ret);
}

/* Each client's wg1.conf, dialing the other at the address `--client-address` gave for it, with
 * keys made here; the hub holds nothing of this path. Two clients that dial each other need
 * both addresses, and a client at home needs its router to forward the UDP port to it
 * (docs/export.md); without the addresses nothing is exported, and the error says which. */
static bool export_direct(struct ml_bundle *b, GError **err)
{
    const struct ml_topology *t = b->topo;
    const size_t ends[2] = {t->measure.client, t->measure.server};
    if (!b->client_address[ends[0]] || !b->client_address[ends[1]]) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "its two clients dial each other, so it needs the address each is reached "
                    "at: --client-address %s=ADDR --client-address %s=ADDR (%s missing)",
                    t->nodes[ends[0]].name, t->nodes[ends[1]].name,
                    !b->client_address[ends[0]] ? t->nodes[ends[0]].name : t->nodes[ends[1]].name);
        return false;
    }
    struct ml_wg_keypair keys[2];
    if (!ml_wg_keypair_new(&keys[0], err))
        return false;
    if (!ml_wg_keypair_new(&keys[1], err)) {
        ml_wg_keypair_clear(&keys[0]);
        return false;
    }
    const struct ml_wg_export_net n = {.dir = "wireguard-direct",
                                       .dev = DEV,
                                       .kind = "kernel WireGuard (wireguard-direct)",
                                       .overlay = SUBNET,
                                       .port = port(t)};
    for (size_t e = 0; e < 2; e++) {
        size_t node = ends[e], other = ends[1 - e];
        char theirs[16];
        GString *c = g_string_new(NULL);
        ml_wg_export_interface(c, b, &n, node, 24, keys[e].private_key,
                               "a client that dials the other directly");
        g_autofree char *endpoint = ml_bundle_endpoint_of(b->client_address[other], port(t));
        g_string_append_printf(c,
                               "ListenPort = %u\n"
                               "\n[Peer]\n# %s\nPublicKey = %s\nEndpoint = %s\n"
                               "AllowedIPs = %s/32\n",
                               port(t), t->nodes[other].name, keys[1 - e].public_key, endpoint,
                               address(t, other, theirs));
        if (t->wireguard.persistent_keepalive)
            g_string_append_printf(c, "PersistentKeepalive = %u\n",
                                   t->wireguard.persistent_keepalive);
        g_autofree char *rel =
            g_strdup_printf("wireguard-direct/%s/" DEV ".conf", t->nodes[node].name);
        g_autofree char *what = g_strdup_printf(
            "%s's wg-quick file for the direct tunnel to %s at %s (holds its private key; UDP "
            "%u must reach it)",
            t->nodes[node].name, t->nodes[other].name, endpoint, port(t));
        ml_bundle_add(b, rel, g_string_free(c, FALSE),
                      ML_BUNDLE_SECRET | ML_BUNDLE_QR | ML_BUNDLE_WG_QUICK, node,
                      "/etc/wireguard/" DEV ".conf", what);
        ml_bundle_client_command(b, node, "systemctl enable --now wg-quick@" DEV);
    }
    ml_wg_keypair_clear(&keys[0]);
    ml_wg_keypair_clear(&keys[1]);
    return true;
}

/* Only the two clients take an address. */
static char *conflict(const struct ml_topology *t, int *ret_line, int *ret_column)
{
    bool which[ML_MAX_NODES] = {0};
    which[t->measure.client] = which[t->measure.server] = true;
    return ml_wg_overlay_conflict(t, "wireguard-direct", SUBNET, which, ret_line, ret_column);
}

extern const struct ml_path_ops ml_path_wireguard_direct;

const struct ml_dataplane ml_dataplane_wireguard_direct = {
    .name = "wireguard-direct",
    .paths = {&ml_path_wireguard_direct},
    .conflict = conflict,
    .ports = ports,
    .setup = setup,
    .observe = observe,
    .export = export_direct,
};

const struct ml_path_ops ml_path_wireguard_direct = {
    .name = "wireguard-direct",
    .dataplane = &ml_dataplane_wireguard_direct,
    .policy = ML_POLICY_DIRECT,
    .hub = ML_HUB_QUIET,
    .describe = describe,
    .target = target,
    .verify = verify,
    .tunnel_counts = tunnel_counts,
};
