/* wireguard-go-hub: the seed's hub topology with wireguard-go (userspace,
 * Debian's package) on the hub in place of the kernel module, the clients on
 * kernel WireGuard: what a VPS without the module gets, and what userspace
 * costs. Its own interface, subnet and port, so it runs beside wireguard-hub.
 *
 * Debian 12's wireguard-go 0.0.20220316 runs beside the kernel module: main.go
 * only prints a warning when not in the foreground (the refusal gated by
 * WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD went in wireguard-go commit
 * 84b5a4d, "main: simplify warnings", first released in 0.0.20190908).
 * `wireguard-go wgo0` opens /dev/net/tun (IFF_TUN), re-executes itself with
 * WG_PROCESS_FOREGROUND=1 and its stdio on /dev/null, and the first process
 * exits: the daemon outlives the guest agent's command. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "dataplanes/bundle.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "dataplanes/wireguard.h"
#include "topology/plan.h"
#include "virt/agent.h"

#define DEV "wgo0"
#define KEY_FILE "/etc/wireguard/" DEV ".key"
#define SUBNET "10.10.0." /* /24: each node keeps the last octet of its tunnel_address */
#define HANDSHAKE_MAX_AGE_S 180

extern const struct ml_dataplane ml_dataplane_wireguard_go_hub;

/* wireguard.listen_port + 2, on the hub. */
static unsigned port(const struct ml_topology *t)
{
    return t->wireguard.listen_port + 2;
}

static char *address(const struct ml_topology *t, size_t node, char buf[16])
{
    return ml_wg_overlay_address(t, node, SUBNET, buf);
}

static size_t ports(const struct ml_topology *t, struct ml_port *ret, size_t max)
{
    if (max < 1)
        return 0;
    ret[0] = (struct ml_port){.what = "WireGuard on wireguard-go",
                              .proto = ML_PROTO_UDP,
                              .port = port(t),
                              .open = true,
                              .dataplane = ml_dataplane_wireguard_go_hub.name};
    return 1;
}

/* The hub: a wg(8) configuration (no wg-quick: it would pick the kernel module),
 * then the userspace daemon, the key from the guest's own file, the address. */
static char *render_hub(const struct ml_topology *t, char *const *pub)
{
    char addr[16];
    GString *c = g_string_new(NULL);
    g_string_append_printf(c, "[Interface]\nListenPort = %u\n", port(t));
    for (size_t i = 0; i < t->n_nodes; i++)
        if (i != t->hub)
            g_string_append_printf(c, "\n[Peer]\n# %s\nPublicKey = %s\nAllowedIPs = %s/32\n",
                                   t->nodes[i].name, pub[i], address(t, i, addr));
    return g_string_free(c, FALSE);
}

/* The hub forwards from wgo0 back out of wgo0, and a TUN device keeps send_redirects on, so the
 * kernel answers the first forwarded packets with ICMP redirects through the tunnel: about ten
 * (its token bucket, ip_rt_redirect_number 9 and one more), each carrying 548 bytes of the
 * packet. The seed lab's probe check found them, 6.5 kB over its pings' frames (2.33 times
 * the probe's bytes where the frames give 2.167). Kernel WireGuard turns redirects off on its
 * own device and on all in wg_open (drivers/net/wireguard/device.c); wireguard-go cannot, so
 * the hub does it for wgo0. */
static char *hub_command(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("set -e; umask 077; cat > /etc/wireguard/" DEV ".conf; "
                           "ip link del " DEV " 2>/dev/null || true; wireguard-go " DEV "; "
                           "wg setconf " DEV " /etc/wireguard/" DEV ".conf; "
                           "wg set " DEV " private-key " KEY_FILE "; "
                           "ip addr add %s/24 dev " DEV "; ip link set " DEV " up; "
                           "sysctl -q -w net.ipv4.ip_forward=1 net.ipv4.conf.all.send_redirects=0 "
                           "net.ipv4.conf." DEV ".send_redirects=0",
                           address(t, t->hub, addr));
}

/* A client: kernel WireGuard through wg-quick, as wireguard-hub's clients. */
static char *render_client(const struct ml_topology *t, size_t node, const char *hub_pub)
{
    char addr[16], endpoint[16];
    const struct ml_node *hub = &t->nodes[t->hub];
    GString *c = g_string_new(NULL);
    g_string_append_printf(c,
                           "# meshlab lab %s: %s, through wireguard-go on %s\n"
                           "[Interface]\n"
                           "Address = %s/32\n"
                           "PostUp = wg set %%i private-key " KEY_FILE "\n"
                           "\n[Peer]\n"
                           "# %s\n"
                           "PublicKey = %s\n"
                           "Endpoint = %s:%u\n"
                           "AllowedIPs = " SUBNET "0/24\n",
                           t->name, t->nodes[node].name, hub->name, address(t, node, addr),
                           hub->name, hub_pub, ml_ip_str(hub->address, endpoint), port(t));
    if (t->wireguard.persistent_keepalive)
        g_string_append_printf(c, "PersistentKeepalive = %u\n", t->wireguard.persistent_keepalive);
    return g_string_free(c, FALSE);
}

/* The hub first, so the clients' first handshakes find it listening. */
static bool configure(struct ml_lab *lab, char **pub, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t hub = t->hub;
    g_autofree char *conf = render_hub(t, pub);
    g_autofree char *cmd = hub_command(t);
    g_autofree char *out = ml_agent_run(lab->dom[hub], cmd, conf, 60, err);
    if (!out)
        return false;
    ml_progress("wireguard-go", "hub %s: wireguard-go " DEV " listening on %u", t->nodes[hub].name,
                port(t));
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        if (i == hub)
            continue;
        g_autofree char *cconf = render_client(t, i, pub[hub]);
        g_autofree char *cout =
            ml_agent_run(lab->dom[i],
                         "set -e; umask 077; cat > /etc/wireguard/" DEV ".conf; "
                         "wg-quick down " DEV " >/dev/null 2>&1 || true; wg-quick up " DEV " 2>&1",
                         cconf, 60, err);
        if (!cout)
            return false;
    }
    return true;
}

static bool setup(struct ml_lab *lab, struct json_object *state, GError **err)
{
    char *pub[ML_MAX_NODES] = {0};
    double t0 = ml_now();
    bool ok = ml_wg_keys(lab, NULL, KEY_FILE, pub, err) && configure(lab, pub, err);
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_free(pub[i]);
    char target[16];
    address(lab->topo, lab->topo->measure.server, target);
    struct in_addr to;
    inet_aton(target, &to);
    if (!ok || !ml_lab_wait_ping(lab, to, 120, "wireguard-go on the hub", err))
        return false;
    double setup_s = ml_now() - t0;
    json_object_object_add(state, "setup_s", json_object_new_double(setup_s));
    ml_progress("wireguard-go", "%s answered through the hub %.1f s after the first key", target,
                setup_s);
    return true;
}

/* ---- export: the same network for a VPS without the module ---- */

/* What the lab's hub_command does, as a script a unit runs: wireguard-go forks its daemon and
 * returns, so a oneshot unit that remains active holds it (and stopping the unit kills it). */
static char *export_script(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf(
        "#!/bin/sh\n"
        "# meshlab export: WireGuard on wireguard-go (userspace) as " DEV ", as the lab ran it.\n"
        "set -e\n"
        "case \"$1\" in\n"
        "up)\n"
        "    ip link del " DEV " 2>/dev/null || true\n"
        "    wireguard-go " DEV "\n"
        "    wg setconf " DEV " /etc/wireguard/" DEV ".conf\n"
        "    ip addr add %s/24 dev " DEV "\n"
        "    ip link set " DEV " up\n"
        "    sysctl -q -w net.ipv4.ip_forward=1 net.ipv4.conf.all.send_redirects=0 "
        "net.ipv4.conf." DEV ".send_redirects=0\n"
        "    ;;\n"
        "down)\n"
        "    ip link del " DEV " 2>/dev/null || true\n"
        "    ;;\n"
        "*)\n"
        "    echo \"usage: $0 up|down\" >&2\n"
        "    exit 2\n"
        "    ;;\n"
        "esac\n",
        address(t, t->hub, addr));
}

#define EXPORT_SCRIPT_PATH "/usr/local/sbin/meshlab-" DEV
#define EXPORT_UNIT_PATH "/etc/systemd/system/meshlab-" DEV ".service"
static const char export_unit[] =
    "[Unit]\n"
    "Description=WireGuard on wireguard-go, " DEV " (meshlab export)\n"
    "Wants=network-online.target\n"
    "After=network-online.target\n"
    "\n"
    "[Service]\n"
    "Type=oneshot\n"
    "RemainAfterExit=yes\n"
    "ExecStart=" EXPORT_SCRIPT_PATH " up\n"
    "ExecStop=" EXPORT_SCRIPT_PATH " down\n"
    "\n"
    "[Install]\n"
    "WantedBy=multi-user.target\n";

/* The export hook: the clients' wg-quick files as wireguard-hub's (kernel WireGuard, this
 * network's port and addresses), and for the hub its wg(8) file (no wg-quick: it would take the
 * kernel module where there is one), the script that brings wireguard-go up and the unit that
 * runs it. */
static bool export_go(struct ml_bundle *b, GError **err)
{
    const struct ml_topology *t = b->topo;
    struct ml_wg_keypair keys[ML_MAX_NODES];
    if (!ml_wg_export_keys(t, keys, err))
        return false;
    const struct ml_wg_export_net n = {.dir = "wireguard-go",
                                       .dev = DEV,
                                       .kind = "WireGuard through wireguard-go on the hub "
                                               "(wireguard-go-hub)",
                                       .overlay = SUBNET,
                                       .port = port(t),
                                       .allowed = SUBNET "0/24"};
    size_t hub = t->hub;
    g_autofree char *label = ml_comment_text(b->label);
    GString *h = g_string_new(NULL);
    g_string_append_printf(h,
                           "# %s: WireGuard for wireguard-go on %s, the hub; wg(8)'s format "
                           "(wg setconf), read by " EXPORT_SCRIPT_PATH ".\n"
                           "# Made by meshlab export with keys of its own.\n"
                           "[Interface]\n"
                           "PrivateKey = %s\n"
                           "ListenPort = %u\n",
                           label, t->nodes[hub].name, keys[hub].private_key, port(t));
    ml_wg_export_clients(b, &n, keys, h);
    g_autofree char *script = export_script(t);
    g_autofree char *dir = g_strdup_printf("wireguard-go/%s/", t->nodes[hub].name);
    g_autofree char *rel_conf = g_strconcat(dir, DEV ".conf", NULL);
    g_autofree char *rel_script = g_strconcat(dir, "meshlab-" DEV, NULL);
    g_autofree char *rel_unit = g_strconcat(dir, "meshlab-" DEV ".service", NULL);
    ml_bundle_hub_file(b, "/etc/wireguard/" DEV ".conf", h->str, 0600);
    ml_bundle_hub_file(b, EXPORT_SCRIPT_PATH, script, 0755);
    ml_bundle_hub_file(b, EXPORT_UNIT_PATH, export_unit, 0644);
    ml_bundle_add(b, rel_conf, g_string_free(h, FALSE), ML_BUNDLE_SECRET | ML_BUNDLE_WG_QUICK, hub,
                  "/etc/wireguard/" DEV ".conf",
                  "the hub's wg(8) file for wireguard-go (holds its private key)");
    ml_bundle_add(b, rel_script, g_strdup(script), 0, hub, EXPORT_SCRIPT_PATH,
                  "brings wireguard-go up on " DEV " with that file, its address and forwarding");
    ml_bundle_add(b, rel_unit, g_strdup(export_unit), 0, hub, EXPORT_UNIT_PATH,
                  "the systemd unit that runs the script at boot");
    ml_bundle_hub_package(b, "wg", "wireguard-tools");
    ml_bundle_hub_package(b, "wireguard-go", "wireguard-go");
    ml_bundle_hub_sysctl(b, "net.ipv4.ip_forward", "1");
    ml_bundle_hub_command(b, "systemctl daemon-reload && systemctl enable --now meshlab-" DEV
                             ".service");
    for (size_t i = 0; i < t->n_nodes; i++)
        ml_wg_keypair_clear(&keys[i]);
    return true;
}

/* The path's two ends as the hub's peers: the client and the server, by their wgo0 address. */
static void path_ends(const struct ml_topology *t, struct ml_wg_end ret[2])
{
    ret[0] = (struct ml_wg_end){t->nodes[t->measure.client].name,
                                ml_wg_overlay_target(t, t->measure.client, SUBNET)};
    ret[1] = (struct ml_wg_end){t->nodes[t->measure.server].name,
                                ml_wg_overlay_target(t, t->measure.server, SUBNET)};
}

/* The hub's own view, in one agent call: handshakes, its interface's kind, the daemon's pid,
 * which peer holds which tunnel address, each peer's bytes. */
static void observe(struct ml_lab *lab, struct ml_evidence *ev)
{
    g_autoptr(GError) e = NULL;
    virDomainPtr hub = ml_lab_dom(lab, lab->topo->hub);
    const char *cmds[] = {"date +%s; wg show " DEV " latest-handshakes", "ip -d -o link show " DEV,
                          "pgrep -x wireguard-go || true", "wg show " DEV " allowed-ips",
                          ML_UPTIME_COMMAND "; wg show " DEV " transfer"};
    if (!ml_agent_run_each(hub, cmds, G_N_ELEMENTS(cmds), 15, ev->own, &e))
        ev->own_error =
            g_strdup_printf("cannot read the hub's " DEV ": %s", ml_agent_error_text(e));
}

static char *describe(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("WireGuard, %s to %s through wireguard-go (userspace) on the hub "
                           "(%s); the clients on the kernel module",
                           t->nodes[t->measure.client].name, address(t, t->measure.server, addr),
                           t->nodes[t->hub].name);
}

static struct in_addr target_of(const struct ml_lab *lab, size_t node)
{
    return ml_wg_overlay_target(lab->topo, node, SUBNET);
}

static struct in_addr target(const struct ml_lab *lab)
{
    return target_of(lab, lab->topo->measure.server);
}

/* The hub's wgo0 is a tun device (iproute2 prints the link kind "tun" and
 * "type tun"; a kernel WireGuard link says "wireguard"), a wireguard-go
 * process runs, the hub's peers for the client and the server shook hands
 * recently, and the client's route enters wgo0. */
static bool verify(const struct ml_topology *t, const struct ml_evidence *ev, GString *sentence)
{
    struct ml_wg_end ends[2];
    path_ends(t, ends);
    bool fresh = ml_wg_path_fresh(ev->own_error, ev->own[0], ev->own[3], "hub", ends,
                                  G_N_ELEMENTS(ends), HANDSHAKE_MAX_AGE_S, sentence);
    if (!ev->own[1] || !ev->own[2])
        return false;
    bool tun = strstr(ev->own[1], " tun type tun ") && !strstr(ev->own[1], "wireguard");
    g_autofree char *pids = g_strstrip(g_strdup(ev->own[2]));
    g_strdelimit(pids, "\n", ' ');
    bool daemon = *pids && g_ascii_isdigit(*pids);
    g_string_append_printf(sentence, "hub " DEV " is %s; wireguard-go %s%s%s; ",
                           tun ? "a tun device" : "not a tun device",
                           daemon ? "runs (pid " : "does not run", daemon ? pids : "",
                           daemon ? ")" : "");
    return ml_route_enters(&ev->rt, DEV, sentence) && fresh && tun && daemon;
}

/* wireguard-go keeps the same per-peer counters (its UAPI's rx_bytes/tx_bytes, which `wg show`
 * reads): the hub's peers for the client and the server. */
static size_t tunnel_counts(const struct ml_topology *t, const struct ml_evidence *ev,
                            struct ml_tunnel_count *ret, double *ret_at)
{
    *ret_at = ml_uptime_head(ev->own[4]);
    struct ml_wg_end ends[2];
    path_ends(t, ends);
    return ev->own_error ? 0
                         : ml_wg_tunnel_counts(ev->own[4], ev->own[3], "the hub's", ends,
                                               G_N_ELEMENTS(ends), ret);
}

static char *conflict(const struct ml_topology *t, int *ret_line, int *ret_column)
{
    return ml_wg_overlay_conflict(t, "wireguard-go-hub", SUBNET, NULL, ret_line, ret_column);
}

extern const struct ml_path_ops ml_path_wireguard_go_hub;

const struct ml_dataplane ml_dataplane_wireguard_go_hub = {
    .conflict = conflict,
    .name = "wireguard-go-hub",
    .daemons = {{"wireguard-go", "wireguard-go --version"}},
    .paths = {&ml_path_wireguard_go_hub},
    .ports = ports,
    .setup = setup,
    .observe = observe,
    .export = export_go,
};

const struct ml_path_ops ml_path_wireguard_go_hub = {
    .name = "wireguard-go-hub",
    .dataplane = &ml_dataplane_wireguard_go_hub,
    .policy = ML_POLICY_DIRECT,
    .hub = ML_HUB_CARRIES,
    .encap = &ml_encap_wireguard,
    .describe = describe,
    .target = target,
    .target_of = target_of,
    .verify = verify,
    .tunnel_counts = tunnel_counts,
};
