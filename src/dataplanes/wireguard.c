#include "dataplanes/wireguard.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "dataplanes/dataplane.h"
#include "topology/plan.h"
#include "virt/agent.h"
#include "core/keys.h"
#include "core/util.h"

static GString *interface_section(const struct ml_topology *topo, size_t node, unsigned prefix)
{
    char addr[16];
    GString *c = g_string_new(NULL);
    g_string_append_printf(c,
                           "# meshlab lab %s: %s\n"
                           "[Interface]\n"
                           "Address = %s/%u\n",
                           topo->name, topo->nodes[node].name,
                           ml_ip_str(topo->nodes[node].tunnel_address, addr), prefix);
    /* The private key stays in the guest's own file; this text carries none. */
    g_string_append(c, "PostUp = wg set %i private-key " ML_WG_KEY_FILE "\n");
    return c;
}

/* The hub listens, forwards between its peers and masquerades what leaves by nic. */
static void hub_forwarding(GString *c, unsigned port, const char *nic)
{
    g_string_append_printf(c,
                           "ListenPort = %u\n"
                           "PostUp = sysctl -q -w net.ipv4.ip_forward=1\n"
                           "PostUp = nft add table ip wgmasq\n"
                           "PostUp = nft 'add chain ip wgmasq postrouting { type nat hook "
                           "postrouting priority 100; policy accept; }'\n"
                           "PostUp = nft add rule ip wgmasq postrouting oifname \"%s\" "
                           "masquerade\n"
                           "PostDown = nft delete table ip wgmasq\n",
                           port, nic);
}

char *ml_wg_render_hub(const struct ml_topology *topo, const char *const *pubkeys)
{
    size_t hub = topo->hub;
    GString *c = interface_section(topo, hub, topo->wireguard.subnet.prefix);
    hub_forwarding(c, topo->wireguard.listen_port, ML_LAB_NIC);
    char addr[16];
    for (size_t i = 0; i < topo->n_nodes; i++) {
        if (i == hub)
            continue;
        g_string_append_printf(c,
                               "\n[Peer]\n"
                               "# %s\n"
                               "PublicKey = %s\n"
                               "AllowedIPs = %s/32\n",
                               topo->nodes[i].name, pubkeys[i],
                               ml_ip_str(topo->nodes[i].tunnel_address, addr));
    }
    return g_string_free(c, FALSE);
}

char *ml_wg_render_client(const struct ml_topology *topo, size_t node, const char *hub_pubkey)
{
    const struct ml_node *hub = &topo->nodes[topo->hub];
    GString *c = interface_section(topo, node, 32);
    char endpoint[16], net[16];
    g_string_append_printf(c,
                           "\n[Peer]\n"
                           "# %s\n"
                           "PublicKey = %s\n"
                           "Endpoint = %s:%u\n"
                           "AllowedIPs = %s/%u\n",
                           hub->name, hub_pubkey, ml_ip_str(hub->address, endpoint),
                           topo->wireguard.listen_port, ml_ip_str(topo->wireguard.subnet.net, net),
                           topo->wireguard.subnet.prefix);
    if (topo->wireguard.persistent_keepalive)
        g_string_append_printf(c, "PersistentKeepalive = %u\n",
                               topo->wireguard.persistent_keepalive);
    return g_string_free(c, FALSE);
}

/* wg-quick sets no MTU in the lab: it takes the NIC's 1500 less 80 (ml_encap_wireguard), and
 * wireguard-go's tun is 1420 too (its DefaultMTU). The export writes that figure down, so a VPS
 * whose NIC has another MTU gets the lab's. */
#define EXPORT_MTU 1420

/* Node's address inside net, "10.8.0.2": the topology's tunnel_address for wg0, net's prefix
 * plus its last octet beside it (ml_wg_overlay_address). */
static const char *net_address(const struct ml_wg_export_net *n, const struct ml_topology *t,
                               size_t node, char buf[16])
{
    return n->overlay ? ml_wg_overlay_address(t, node, n->overlay, buf)
                      : ml_ip_str(t->nodes[node].tunnel_address, buf);
}

void ml_wg_export_interface(GString *c, const struct ml_bundle *b, const struct ml_wg_export_net *n,
                            size_t node, unsigned prefix, const char *private_key, const char *role)
{
    const struct ml_topology *t = b->topo;
    char addr[16];
    g_autofree char *label = ml_comment_text(b->label);
    g_string_append_printf(c,
                           "# %s: %s for %s, %s.\n"
                           "# Made by meshlab export with keys of its own; wg-quick's format.\n"
                           "[Interface]\n"
                           "Address = %s/%u\n"
                           "PrivateKey = %s\n"
                           "MTU = %u\n",
                           label, n->kind, t->nodes[node].name, role,
                           net_address(n, t, node, addr), prefix, private_key, EXPORT_MTU);
}

void ml_wg_export_clients(struct ml_bundle *b, const struct ml_wg_export_net *n,
                          const struct ml_wg_keypair *keys, GString *hub)
{
    const struct ml_topology *t = b->topo;
    size_t h = t->hub;
    char addr[16];
    g_autofree char *endpoint = ml_bundle_endpoint(b, n->port);
    for (size_t i = 0; i < t->n_nodes; i++) {
        if (i == h)
            continue;
        g_string_append_printf(hub, "\n[Peer]\n# %s\nPublicKey = %s\nAllowedIPs = %s/32\n",
                               t->nodes[i].name, keys[i].public_key, net_address(n, t, i, addr));
        GString *c = g_string_new(NULL);
        ml_wg_export_interface(c, b, n, i, 32, keys[i].private_key, "a client");
        g_string_append_printf(c,
                               "\n[Peer]\n# %s\nPublicKey = %s\nEndpoint = %s\n"
                               "AllowedIPs = %s\n",
                               t->nodes[h].name, keys[h].public_key, endpoint, n->allowed);
        if (t->wireguard.persistent_keepalive)
            g_string_append_printf(c, "PersistentKeepalive = %u\n",
                                   t->wireguard.persistent_keepalive);
        g_autofree char *rel = g_strdup_printf("%s/%s/%s.conf", n->dir, t->nodes[i].name, n->dev);
        g_autofree char *install = g_strdup_printf("/etc/wireguard/%s.conf", n->dev);
        g_autofree char *what = g_strdup_printf(
            "%s's wg-quick file (holds its private key); the QR codes beside it carry it for "
            "WireGuard's phone apps",
            t->nodes[i].name);
        ml_bundle_add(b, rel, g_string_free(c, FALSE),
                      ML_BUNDLE_SECRET | ML_BUNDLE_QR | ML_BUNDLE_WG_QUICK, i, install, what);
        g_autofree char *start = g_strdup_printf("systemctl enable --now wg-quick@%s", n->dev);
        ml_bundle_client_command(b, i, start);
    }
}

bool ml_wg_export_keys(const struct ml_topology *t, struct ml_wg_keypair keys[ML_MAX_NODES],
                       GError **err)
{
    for (size_t i = 0; i < t->n_nodes; i++)
        if (!ml_wg_keypair_new(&keys[i], err)) {
            for (size_t j = 0; j < i; j++)
                ml_wg_keypair_clear(&keys[j]);
            return false;
        }
    return true;
}

bool ml_wg_export(struct ml_bundle *b, GError **err)
{
    const struct ml_topology *t = b->topo;
    struct ml_wg_keypair keys[ML_MAX_NODES];
    if (!ml_wg_export_keys(t, keys, err))
        return false;
    char net[16];
    g_autofree char *allowed = g_strdup_printf("%s/%u", ml_ip_str(t->wireguard.subnet.net, net),
                                               t->wireguard.subnet.prefix);
    const struct ml_wg_export_net n = {.dir = "wireguard",
                                       .dev = "wg0",
                                       .kind = "kernel WireGuard (wireguard-hub)",
                                       .port = t->wireguard.listen_port,
                                       .allowed = allowed};
    size_t hub = t->hub;
    GString *h = g_string_new(NULL);
    ml_wg_export_interface(h, b, &n, hub, t->wireguard.subnet.prefix, keys[hub].private_key,
                           "the hub");
    hub_forwarding(h, t->wireguard.listen_port, b->hub_interface);
    ml_wg_export_clients(b, &n, keys, h);
    g_autofree char *rel = g_strdup_printf("wireguard/%s/wg0.conf", t->nodes[hub].name);
    ml_bundle_hub_file(b, "/etc/wireguard/wg0.conf", h->str, 0600);
    ml_bundle_add(b, rel, g_string_free(h, FALSE), ML_BUNDLE_SECRET | ML_BUNDLE_WG_QUICK, hub,
                  "/etc/wireguard/wg0.conf", "the hub's wg-quick file (holds its private key)");
    ml_bundle_hub_package(b, "wg", "wireguard-tools");
    ml_bundle_hub_package(b, "nft", "nftables");
    ml_bundle_hub_sysctl(b, "net.ipv4.ip_forward", "1");
    ml_bundle_hub_command(b, "systemctl enable --now wg-quick@wg0");
    for (size_t i = 0; i < t->n_nodes; i++)
        ml_wg_keypair_clear(&keys[i]);
    return true;
}

bool ml_wg_key_valid(const char *key)
{
    if (!key || strlen(key) != 44 || key[43] != '=')
        return false;
    for (size_t i = 0; i < 43; i++)
        if (!g_ascii_isalnum(key[i]) && key[i] != '+' && key[i] != '/')
            return false;
    gsize len = 0;
    g_free(g_base64_decode(key, &len));
    return len == 32;
}

bool ml_wg_keys(struct ml_lab *lab, const bool *which, const char *key_file, char **pub,
                GError **err)
{
    g_autofree char *cmd = g_strdup_printf("set -e; umask 077; mkdir -p /etc/wireguard; "
                                           "wg genkey > %s; wg pubkey < %s",
                                           key_file, key_file);
    const char *cmds[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        cmds[i] = cmd;
    if (!ml_lab_run_parallel(lab, which, cmds, NULL, 60, pub, "generating a WireGuard key", err))
        return false;
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        if (which && !which[i])
            continue;
        g_strstrip(pub[i]);
        if (!ml_wg_key_valid(pub[i])) {
            g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                        "%s returned something that is not a WireGuard public key",
                        lab->topo->nodes[i].name);
            return false;
        }
    }
    return true;
}

static const char wg_up_cmd[] = "set -e; umask 077; cat > /etc/wireguard/wg0.conf; "
                                "wg-quick down wg0 >/dev/null 2>&1 || true; wg-quick up wg0 2>&1";

static bool bring_up(struct ml_lab *lab, size_t i, const char *conf, GError **err)
{
    g_autofree char *out = ml_agent_run(lab->dom[i], wg_up_cmd, conf, 60, err);
    return out != NULL;
}

static bool first_tunnel_ping(struct ml_lab *lab, GError **err)
{
    const struct ml_topology *t = lab->topo;
    return ml_lab_wait_ping(lab, t->nodes[t->measure.server].tunnel_address, 120,
                            "the WireGuard tunnel", err);
}

static bool configure(struct ml_lab *lab, char **pub, GError **err)
{
    const struct ml_topology *topo = lab->topo;
    size_t hub = topo->hub;
    char addr[16];
    /* The hub first: the clients' first handshakes then find it listening. */
    g_autofree char *hub_conf = ml_wg_render_hub(topo, (const char *const *)pub);
    if (!bring_up(lab, hub, hub_conf, err))
        return false;
    ml_progress("wireguard", "hub %s: wg0 %s/%u listening on %u", topo->nodes[hub].name,
                ml_ip_str(topo->nodes[hub].tunnel_address, addr), topo->wireguard.subnet.prefix,
                topo->wireguard.listen_port);
    /* Then every client at once: with up to 8 of them, one after another adds up. */
    bool clients[ML_MAX_NODES] = {0};
    const char *cmds[ML_MAX_NODES] = {0};
    char *confs[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        clients[i] = i != hub;
        cmds[i] = wg_up_cmd;
        confs[i] = clients[i] ? ml_wg_render_client(topo, i, pub[hub]) : NULL;
    }
    bool ok = ml_lab_run_parallel(lab, clients, cmds, (const char *const *)confs, 60, NULL,
                                  "bringing up WireGuard", err);
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        g_free(confs[i]);
        if (ok && clients[i])
            ml_progress("wireguard", "client %s: wg0 %s, endpoint %s:%u, keepalive %u",
                        topo->nodes[i].name, ml_ip_str(topo->nodes[i].tunnel_address, addr),
                        inet_ntoa(topo->nodes[hub].address), topo->wireguard.listen_port,
                        topo->wireguard.persistent_keepalive);
    }
    return ok;
}

bool ml_wg_setup(struct ml_lab *lab, struct json_object *state, GError **err)
{
    char *pub[ML_MAX_NODES] = {0};
    double t0 = ml_now();
    ml_progress("wireguard", "generating keys inside each guest");
    bool ok = ml_wg_keys(lab, NULL, ML_WG_KEY_FILE, pub, err) && configure(lab, pub, err) &&
              first_tunnel_ping(lab, err);
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_free(pub[i]);
    if (!ok)
        return false;
    double setup_s = ml_now() - t0;
    json_object_object_add(state, "setup_s", json_object_new_double(setup_s));
    char target[16];
    ml_ip_str(lab->topo->nodes[lab->topo->measure.server].tunnel_address, target);
    ml_progress("wireguard", "%s answered through the hub %.1f s after the first key", target,
                setup_s);
    return true;
}

char *ml_wg_field(const char *out, const char *key)
{
    g_auto(GStrv) lines = g_strsplit(out ? out : "", "\n", -1);
    size_t n = strlen(key);
    for (char **l = lines; *l; l++)
        if (!strncmp(*l, key, n) && (*l)[n] == '\t')
            return g_strstrip(g_strdup(*l + n + 1));
    return NULL;
}

/* Whether "A.B.C.D/P" holds addr (an IPv6 network or "(none)" never does). */
static bool network_holds(const char *net, struct in_addr addr)
{
    g_autofree char *a = g_strdup(net);
    char *slash = strchr(a, '/');
    unsigned prefix = 32;
    if (slash) {
        char *end = NULL;
        prefix = (unsigned)g_ascii_strtoull(slash + 1, &end, 10);
        if (end == slash + 1 || *end || prefix > 32)
            return false;
        *slash = '\0';
    }
    struct in_addr n;
    if (inet_pton(AF_INET, a, &n) != 1)
        return false;
    uint32_t mask = prefix ? ~0u << (32 - prefix) : 0;
    return (ntohl(n.s_addr) & mask) == (ntohl(addr.s_addr) & mask);
}

char *ml_wg_peer_for(const char *allowed, struct in_addr addr)
{
    g_auto(GStrv) lines = g_strsplit(allowed ? allowed : "", "\n", -1);
    for (char **l = lines; *l; l++) {
        char *tab = strchr(*l, '\t');
        if (!tab)
            continue;
        g_auto(GStrv) nets = g_strsplit_set(tab + 1, " \t", -1);
        for (char **n = nets; *n; n++)
            if (**n && network_holds(*n, addr))
                return g_strndup(*l, (gsize)(tab - *l));
    }
    return NULL;
}

bool ml_wg_path_fresh(const char *error, const char *handshakes, const char *allowed,
                      const char *who, const struct ml_wg_end *ends, size_t n_ends,
                      long long max_age_s, GString *sentence)
{
    if (error || !handshakes || !allowed) {
        g_string_append_printf(sentence, "%s; ", error ? error : "no handshakes recorded");
        return false;
    }
    long long now = g_ascii_strtoll(handshakes, NULL, 10);
    bool ok = now > 0;
    if (!ok)
        g_string_append_printf(sentence, "%s's clock could not be read; ", who);
    for (size_t i = 0; i < n_ends; i++) {
        char addr[16];
        ml_ip_str(ends[i].address, addr);
        g_autofree char *key = ml_wg_peer_for(allowed, ends[i].address);
        g_autofree char *at = key ? ml_wg_field(handshakes, key) : NULL;
        long long t = at ? g_ascii_strtoll(at, NULL, 10) : 0;
        g_string_append_printf(sentence, "%s: ", who);
        if (!key)
            g_string_append_printf(sentence, "no peer holds %s (%s); ", ends[i].name, addr);
        else if (t <= 0)
            g_string_append_printf(sentence, "the peer for %s (%s) never shook hands; ",
                                   ends[i].name, addr);
        else
            g_string_append_printf(sentence,
                                   "the peer for %s (%s) shook hands %lld s ago (must be at "
                                   "most %lld); ",
                                   ends[i].name, addr, now - t, max_age_s);
        ok &= key && t > 0 && now - t <= max_age_s;
    }
    return ok;
}

char *ml_wg_overlay_address(const struct ml_topology *t, size_t node, const char *prefix,
                            char buf[16])
{
    const unsigned char *b = (const unsigned char *)&t->nodes[node].tunnel_address.s_addr;
    g_snprintf(buf, 16, "%s%u", prefix, b[3]);
    return buf;
}

struct in_addr ml_wg_overlay_target(const struct ml_topology *t, size_t node, const char *prefix)
{
    char addr[16];
    struct in_addr a = {0};
    inet_aton(ml_wg_overlay_address(t, node, prefix, addr), &a);
    return a;
}

char *ml_wg_overlay_conflict(const struct ml_topology *t, const char *path, const char *prefix,
                             const bool *which, int *ret_line, int *ret_column)
{
    g_autofree char *who = g_strdup_printf("the %s path uses", path);
    g_autofree char *net = g_strdup_printf("%s0", prefix);
    char *rule = ml_subnet_conflict(t, who, net, 24, ret_line, ret_column);
    if (rule)
        return rule;
    /* Only the last octet of each tunnel_address is kept: with a wireguard.subnet wider than
     * /24, two nodes may share it, or have 0 or 255, this /24's network and broadcast. */
    for (size_t i = 0; i < t->n_nodes; i++) {
        if (which && !which[i])
            continue;
        const struct ml_node *node = &t->nodes[i];
        unsigned last = ntohl(node->tunnel_address.s_addr) & 0xff;
        char tunnel[16], mine[16], theirs[16];
        ml_ip_str(node->tunnel_address, tunnel);
        ml_wg_overlay_address(t, i, prefix, mine);
        for (size_t j = 0; j < i && (last != 0 && last != 255); j++) {
            if ((which && !which[j]) ||
                strcmp(mine, ml_wg_overlay_address(t, j, prefix, theirs)) != 0)
                continue;
            *ret_line = node->tunnel_line;
            *ret_column = node->tunnel_column;
            char other[16];
            return g_strdup_printf(
                "node '%s': tunnel_address %s ends in .%u like node '%s''s %s (line %d), and the "
                "%s path numbers its nodes %s<last octet of tunnel_address>: both would be %s; "
                "give one of them another last octet",
                node->name, tunnel, last, t->nodes[j].name,
                ml_ip_str(t->nodes[j].tunnel_address, other), t->nodes[j].tunnel_line, path, prefix,
                mine);
        }
        if (last == 0 || last == 255) {
            *ret_line = node->tunnel_line;
            *ret_column = node->tunnel_column;
            return g_strdup_printf("node '%s': tunnel_address %s ends in .%u, and the %s path "
                                   "numbers its nodes %s<last octet of tunnel_address>: %s is "
                                   "the %s address of its %s/24; choose a tunnel_address ending "
                                   "in .1 to .254",
                                   node->name, tunnel, last, path, prefix, mine,
                                   last ? "broadcast" : "network", net);
        }
    }
    return NULL;
}

size_t ml_wg_tunnel_counts(const char *transfer, const char *allowed, const char *whose,
                           const struct ml_wg_end *ends, size_t n_ends, struct ml_tunnel_count *ret)
{
    size_t n = 0;
    for (; n < n_ends && n < ML_TUNNEL_COUNTS_MAX; n++) {
        g_autofree char *key = ml_wg_peer_for(allowed, ends[n].address);
        g_autofree char *v = key ? ml_wg_field(transfer, key) : NULL;
        char *end = NULL;
        double rx = v ? g_ascii_strtod(v, &end) : NAN;
        if (!v || end == v || *end != '\t')
            break;
        const char *tx_at = end + 1;
        double tx = g_ascii_strtod(tx_at, &end);
        if (end == tx_at || !isfinite(rx) || !isfinite(tx) || rx < 0 || tx < 0)
            break;
        g_snprintf(ret[n].who, sizeof(ret[n].who), "%s peer for %s", whose, ends[n].name);
        ret[n].bytes = rx + tx;
    }
    return n;
}
