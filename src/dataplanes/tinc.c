/* tinc-direct, tinc-relay and tinc-auto: tinc 1.0.36 (Debian 12's `tinc`) in router mode, one
 * network "meshlab" on every guest, the hub the one node both clients ConnectTo.
 *
 * One network under two policies, as nebula-direct and nebula-relay, not two networks: tinc 1.0
 * chooses per packet. send_udppacket (src/net_packet.c, 1.0.36) sends a packet whose length is
 * above the peer's minmtu to the peer's nexthop instead ("Packet for %s (%s) larger than minimum
 * MTU, forwarding via %s"), and minmtu stays 0 until one of tinc's UDP MTU probes to the peer is
 * answered (send_mtu_probe: "No response to MTU probes" keeps it 0 and retries every
 * PingInterval). With the clients dropping UDP from each other (ML_POLICY_RELAY) every packet to
 * the server therefore goes to the nexthop, the hub, over UDP (send_packet -> send_udppacket to
 * the hub, whose probes are answered). A packet longer than the hub's PMTU goes once by the TCP
 * meta connection, and the hub's route.c answers it (DF set) with ICMP "fragmentation needed" for
 * the PMTU to the server less 14, so a TCP stream's later segments fit in UDP. The hub decrypts,
 * routes by Subnet and encrypts again for the server. Answer to "what does 1.0 do when UDP to
 * the peer never answers": it falls back to the nexthop (the hub) by UDP, never gives up on it
 * (a burst of probes every PingInterval), and uses TCP only for what exceeds the hub's PMTU.
 * IndirectData = yes would give the same wire format but must be in the hosts/ files when tincd
 * starts: a second network (second tincd, interface, port, keys) whose daemons would run beside
 * the first during every measurement under the same process name, so one network it is; settle
 * restarts the clients' tincd so the PMTU state of the last policy is forgotten.
 *
 * Cipher: aes-256-cbc with HMAC-SHA256 truncated to 16 bytes (Cipher, Digest, MACLength host
 * variables, tinc.conf(5)), not 1.0's blowfish-cbc/sha1/4: a 64-bit block cipher and a 32-bit MAC
 * are not what anyone compares with WireGuard or IPsec today. PingInterval = 3600: after its
 * first 30 s of PMTU discovery tinc repeats a burst of probes (up to 1518 bytes, to and from the
 * hub) every PingInterval; at the default 60 one landed in the quiet hub's probe in netns. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/keys.h"
#include "core/util.h"
#include "dataplanes/bundle.h"
#include "virt/daemon.h"
#include "virt/guest_value.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "topology/plan.h"
#include "virt/agent.h"

#define NET "meshlab"
#define CONF_DIR "/etc/tinc/" NET
#define DEV "tinc0"
#define SUBNET "10.44.0.0"
#define PREFIX 24
#define PORT 655 /* tinc's own number, TCP for the meta connection and UDP for packets */
#define KEY_BANNER "RSA PUBLIC KEY"

extern const struct ml_dataplane ml_dataplane_tinc;

/* 10.44.0.(node + 1). */
static struct in_addr address(const struct ml_topology *t, size_t node)
{
    (void)t;
    struct in_addr a;
    inet_pton(AF_INET, SUBNET, &a);
    a.s_addr = htonl(ntohl(a.s_addr) + (uint32_t)node + 1);
    return a;
}

/* tinc names are [A-Za-z0-9_] (check_id in 1.0's utils.c); meshlab's node names are lowercase
 * letters, digits and '-', so '-' becomes '_' and no two nodes collide. */
static char *tinc_name(const struct ml_topology *t, size_t node)
{
    char *n = g_strdup(t->nodes[node].name);
    g_strdelimit(n, "-", '_');
    return n;
}

static size_t ports(const struct ml_topology *t, struct ml_port *ret, size_t max)
{
    (void)t;
    if (max < 2)
        return 0;
    ret[0] = (struct ml_port){.what = "tinc meta connection",
                              .proto = ML_PROTO_TCP,
                              .port = PORT,
                              .open = true,
                              .dataplane = ml_dataplane_tinc.name};
    ret[1] = (struct ml_port){.what = "tinc packets",
                              .proto = ML_PROTO_UDP,
                              .port = PORT,
                              .open = true,
                              .dataplane = ml_dataplane_tinc.name};
    return 2;
}

static char *conflict(const struct ml_topology *t, int *ret_line, int *ret_column)
{
    return ml_subnet_conflict(t, "the tinc paths use", SUBNET, PREFIX, ret_line, ret_column);
}

/* Node's tinc.conf, under a first line title ("meshlab lab NAME", or the export's label). */
static char *conf_text(const struct ml_topology *t, size_t node, const char *title)
{
    g_autofree char *name = tinc_name(t, node);
    g_autofree char *hub_name = tinc_name(t, t->hub);
    g_autofree char *head = ml_comment_text(title);
    GString *c = g_string_new(NULL);
    g_string_append_printf(c,
                           "# %s: tinc on %s\n"
                           "Name = %s\n"
                           "AddressFamily = ipv4\n"
                           "Interface = " DEV "\n"
                           "Mode = router\n"
                           "PingInterval = 3600\n",
                           head, t->nodes[node].name, name);
    if (node != t->hub)
        g_string_append_printf(c, "ConnectTo = %s\n", hub_name);
    return g_string_free(c, FALSE);
}

/* Node's tinc-up: its address on the interface once tincd has opened it. */
static char *up_text(const struct ml_topology *t, size_t node)
{
    char addr[16];
    return g_strdup_printf("#!/bin/sh\n"
                           "ip addr add %s/%d dev $INTERFACE\n"
                           "ip link set $INTERFACE up\n",
                           ml_ip_str(address(t, node), addr), PREFIX);
}

/* Node j's hosts/ file, as every node holds it: the hub's with the address the clients dial
 * (hub_address; NULL: its lab address), every one with its subnet, the cipher and pub, its
 * public key block. */
static char *host_text(const struct ml_topology *t, size_t j, const char *pub,
                       const char *hub_address)
{
    char addr[16];
    g_autofree char *key = g_strstrip(g_strdup(pub));
    GString *c = g_string_new(NULL);
    if (j == t->hub)
        g_string_append_printf(c, "Address = %s\n",
                               hub_address ? hub_address : ml_ip_str(t->nodes[j].address, addr));
    g_string_append_printf(c,
                           "Port = %d\n"
                           "Subnet = %s/32\n"
                           "Cipher = aes-256-cbc\n"
                           "Digest = sha256\n"
                           "MACLength = 16\n"
                           "%s\n",
                           PORT, ml_ip_str(address(t, j), addr), key);
    return g_string_free(c, FALSE);
}

/* What node i receives on stdin: its tinc.conf, tinc-up and every node's hosts/ file, each
 * after a line "@@ FILE" (FILE relative to CONF_DIR). pub[j] is node j's public key block, as
 * checked by ml_guest_pem: it has no line that starts with "@@". */
static char *render(const struct ml_topology *t, size_t node, char *const *pub)
{
    g_autofree char *title = g_strdup_printf("meshlab lab %s", t->name);
    g_autofree char *conf = conf_text(t, node, title);
    g_autofree char *up = up_text(t, node);
    GString *c = g_string_new(NULL);
    g_string_append_printf(c, "@@ tinc.conf\n%s@@ tinc-up\n%s", conf, up);
    for (size_t j = 0; j < t->n_nodes; j++) {
        g_autofree char *jn = tinc_name(t, j);
        g_autofree char *host = host_text(t, j, pub[j], NULL);
        g_string_append_printf(c, "@@ hosts/%s\n%s", jn, host);
    }
    return g_string_free(c, FALSE);
}

/* tincd -D stays in the foreground and logs to stderr (1.0's detach(): LOGMODE_STDERR without
 * --logfile), which systemd-run hands to the journal under the unit; it still writes
 * /run/tinc.NET.pid, which `tincd -n NET --kill` reads. tinc-up gives the interface its
 * address once the device is open. */
static const struct ml_daemon tinc_daemon = {
    .name = "tincd",
    .unit = "meshlab-tinc",
    .prepare = "set -e; umask 077; mkdir -p " CONF_DIR "/hosts; cd " CONF_DIR "; "
               "rm -f hosts/* tinc.conf tinc-up; awk '/^@@ /{f=$2; next} {print > f}'; "
               "chmod 755 tinc-up; test -s rsa_key.priv",
    .command = "$(command -v tincd) -n " NET " -D",
    .ready = "ip -o -4 addr show dev " DEV " 2>/dev/null | grep -q inet",
    .timeout_s = 30,
};

static struct ml_daemon daemon_on(const struct ml_lab *lab, size_t node, bool prepare)
{
    struct ml_daemon d = tinc_daemon;
    if (lab->nat_now[node] != ML_NAT_NONE)
        d.netns = ML_PLAN_NETNS;
    if (!prepare)
        d.prepare = NULL;
    return d;
}

static void free_all(char **v)
{
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_clear_pointer(&v[i], g_free);
}

/* Each node makes its RSA key pair inside itself (tincd -K writes rsa_key.priv and appends the
 * public half to hosts/NAME, tincd(8)); only the public block comes back. */
/* Node's key command: its own Name first, which -K needs to name hosts/NAME. */
static char *key_cmd(const struct ml_topology *t, size_t node)
{
    g_autofree char *name = tinc_name(t, node);
    return g_strdup_printf("set -e; umask 077; mkdir -p " CONF_DIR "/hosts; cd " CONF_DIR "; "
                           "rm -f rsa_key.priv hosts/*; printf 'Name = %s\\n' > tinc.conf; "
                           "tincd -n " NET " -K2048 </dev/null >/dev/null 2>&1; "
                           "awk '/^-----BEGIN " KEY_BANNER "-----$/,/^-----END " KEY_BANNER
                           "-----$/' hosts/%s",
                           name, name);
}

static bool generate_keys(struct ml_lab *lab, char **pub, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t n = lab->plan->n_guests;
    char *cmds[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < n; i++)
        cmds[i] = key_cmd(t, i);
    ml_progress("tinc", "generating an RSA key inside each guest");
    bool ok = ml_lab_run_parallel(lab, NULL, (const char *const *)cmds, NULL, 120, pub,
                                  "tinc key generation", err);
    free_all(cmds);
    for (size_t i = 0; ok && i < n; i++)
        if (!ml_guest_pem(pub[i], KEY_BANNER, 0)) {
            g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                        "%s returned something that is not one tinc RSA public key from " CONF_DIR
                        "/hosts; run `tincd -n " NET " -K2048` there to see why",
                        t->nodes[i].name);
            ok = false;
        }
    return ok;
}

/* The hub first, so the clients' ConnectTo finds it listening. */
static bool start_all(struct ml_lab *lab, bool prepare, char *const *conf, const bool *which,
                      GError **err)
{
    size_t hub = lab->topo->hub;
    if (!which || which[hub]) {
        struct ml_daemon d = daemon_on(lab, hub, prepare);
        if (!ml_daemon_start(lab, hub, &d, conf ? conf[hub] : NULL, err))
            return false;
    }
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        if (i == hub || (which && !which[i]))
            continue;
        struct ml_daemon d = daemon_on(lab, i, prepare);
        if (!ml_daemon_start(lab, i, &d, conf ? conf[i] : NULL, err))
            return false;
    }
    return true;
}

static bool wait_overlay(struct ml_lab *lab, GError **err)
{
    const struct ml_topology *t = lab->topo;
    if (ml_lab_wait_ping(lab, address(t, t->measure.server), 90, "tinc", err))
        return true;
    if (err && *err && (*err)->code == ML_ERR_INTERRUPTED)
        return false;
    size_t nodes[] = {t->measure.client, t->measure.server, t->hub};
    for (size_t k = 0; k < G_N_ELEMENTS(nodes); k++)
        if (!ml_daemon_alive(lab, nodes[k], &tinc_daemon, err))
            break;
    return false;
}

static bool setup(struct ml_lab *lab, struct json_object *state, GError **err)
{
    char *pub[ML_MAX_NODES] = {0}, *conf[ML_MAX_NODES] = {0};
    double t0 = ml_now();
    bool ok = generate_keys(lab, pub, err);
    for (size_t i = 0; ok && i < lab->plan->n_guests; i++)
        conf[i] = render(lab->topo, i, pub);
    ok = ok && start_all(lab, true, conf, NULL, err) && wait_overlay(lab, err);
    free_all(pub);
    free_all(conf);
    if (!ok)
        return false;
    double setup_s = ml_now() - t0;
    json_object_object_add(state, "setup_s", json_object_new_double(setup_s));
    ml_progress("tinc", "overlay up, %.1f s after the first key", setup_s);
    return true;
}

/* The dump tincd writes on SIGUSR2 (1.0's dump_connections, dump_nodes, dump_edges,
 * dump_subnets), from the unit's journal: the last complete one is the view. */
#define VIEW_KILL "tincd -n " NET " --kill=USR2 >/dev/null 2>&1 && sleep 1"
#define VIEW_READ "journalctl -u meshlab-tinc -o cat --no-pager -n 400"
#define VIEW_FILTER                                                                                \
    "awk '/^Nodes:$/{b=\"\"; on=1} on{b=b $0 \"\\n\"} "                                            \
    "/^End of nodes\\.$/{if (on) last=b; on=0} END{printf \"%s\", last}'"

static char *view_cmd(const struct ml_lab *lab)
{
    (void)lab;
    return g_strdup(VIEW_KILL " && " VIEW_READ " | " VIEW_FILTER);
}

/* One line of 1.0.36's dump_nodes (src/node.c):
 * " %s at %s cipher %d digest %d maclength %d compression %d options %x status %04x nexthop %s
 * via %s pmtu %d (min %d max %d)", the second %s being sockaddr2hostname's "ADDR port PORT". */
struct tinc_node {
    char name[64], host[64], nexthop[64], via[64];
    int cipher, digest, maclength, pmtu, minmtu, maxmtu;
    unsigned status;
};

/* node_status_t in 1.0.36's node.h, bit 0 first: unused_active, validkey, unused_waitingforkey,
 * visited, reachable, indirect. */
#define STATUS_VALIDKEY 0x02u
#define STATUS_REACHABLE 0x10u

static bool node_line(const char *line, struct tinc_node *ret)
{
    memset(ret, 0, sizeof(*ret));
    const char *at = strstr(line, " at ");
    const char *cipher = at ? strstr(at, " cipher ") : NULL;
    if (line[0] != ' ' || !at || !cipher || at == line + 1 || (size_t)(at - line - 1) >= 64 ||
        (size_t)(cipher - at - 4) >= 64)
        return false;
    memcpy(ret->name, line + 1, (size_t)(at - line - 1));
    memcpy(ret->host, at + 4, (size_t)(cipher - at - 4));
    int compression, end = 0;
    unsigned options;
    int n =
        sscanf(cipher,
               " cipher %d digest %d maclength %d compression %d options %x status %x "
               "nexthop %63s via %63s pmtu %d (min %d max %d)%n",
               &ret->cipher, &ret->digest, &ret->maclength, &compression, &options, &ret->status,
               ret->nexthop, ret->via, &ret->pmtu, &ret->minmtu, &ret->maxmtu, &end);
    return n == 11 && end > 0 && cipher[end] == '\0';
}

/* Pure: the server's line in the last complete "Nodes:" ... "End of nodes." block of text. */
static bool view_node(const struct ml_topology *t, size_t node, const char *text,
                      struct tinc_node *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (!text)
        return false;
    g_autofree char *name = tinc_name(t, node);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    bool in = false, found = false, complete = false;
    struct tinc_node cur = {0}, got = {0};
    for (char **l = lines; *l; l++) {
        g_strchomp(*l);
        if (!strcmp(*l, "Nodes:")) {
            in = true;
            found = false;
        } else if (in && !strcmp(*l, "End of nodes.")) {
            in = false;
            complete = found;
            if (found)
                *ret = got;
        } else if (in && node_line(*l, &cur) && !strcmp(cur.name, name)) {
            got = cur;
            found = true;
        }
    }
    return complete;
}

/* What the view shows of the client's tunnel to the server. Direct: the server is its own via
 * and answered tinc's UDP MTU probes (minmtu above 0), at the address tinc sends to. Relay: the
 * hub is its via (IndirectData) or its nexthop while no probe was ever answered, so
 * send_udppacket hands every packet to the hub. */
static bool found(const struct ml_topology *t, const char *text, struct ml_found_view *ret,
                  struct tinc_node *node)
{
    memset(ret, 0, sizeof(*ret));
    if (!view_node(t, t->measure.server, text, node))
        return false;
    g_autofree char *server = tinc_name(t, t->measure.server);
    g_autofree char *hub = tinc_name(t, t->hub);
    unsigned need = STATUS_VALIDKEY | STATUS_REACHABLE;
    if ((node->status & need) != need)
        return true;
    if (!strcmp(node->via, server) && node->minmtu > 0) {
        ret->found = ML_FOUND_DIRECT;
        char host[46];
        unsigned short port = 0;
        if (sscanf(node->host, "%45s port %hu", host, &port) == 2)
            snprintf(ret->remote, sizeof(ret->remote), "%s:%u", host, port);
    } else if (!strcmp(node->via, hub) || (!strcmp(node->nexthop, hub) && node->minmtu == 0)) {
        ret->found = ML_FOUND_RELAY;
        g_strlcpy(ret->relay, hub, sizeof(ret->relay));
    }
    return true;
}

static bool view_parse(const struct ml_topology *t, const char *text, struct ml_found_view *ret)
{
    struct tinc_node n;
    return found(t, text, ret, &n);
}

static void observe(struct ml_lab *lab, struct ml_evidence *ev)
{
    g_autoptr(GError) e = NULL;
    g_autofree char *cmd = view_cmd(lab);
    ev->own[0] = ml_agent_run(lab->dom[lab->topo->measure.client], cmd, NULL, 30, &e);
    if (!ev->own[0])
        ev->own_error =
            g_strdup_printf("cannot read tinc's view on the client: %s", ml_agent_error_text(e));
}

/* tinc's view as a sentence; what it found in *ret, false when it cannot be read. */
static bool view(const struct ml_topology *t, const struct ml_evidence *ev,
                 struct ml_found_view *ret, GString *sentence)
{
    struct tinc_node n;
    if (ev->own_error || !ev->own[0]) {
        g_string_append_printf(sentence, "%s; ", ev->own_error ? ev->own_error : "no tinc view");
        return false;
    }
    if (!found(t, ev->own[0], ret, &n)) {
        g_string_append(sentence, "tinc's dump (SIGUSR2) on the client lists no node for the "
                                  "server; ");
        return false;
    }
    g_string_append_printf(sentence,
                           "tinc on the client: %s at %s status %04x nexthop %s via %s pmtu %d "
                           "(min %d) is %s; ",
                           n.name, n.host, n.status, n.nexthop, n.via, n.pmtu, n.minmtu,
                           ml_found_name(ret->found));
    return ml_route_enters(&ev->rt, DEV, sentence);
}

static bool verify_direct(const struct ml_topology *t, const struct ml_evidence *ev,
                          GString *sentence)
{
    struct ml_found_view v;
    bool seen = view(t, ev, &v, sentence);
    char server[16];
    ml_ip_str(t->nodes[t->measure.server].address, server);
    g_autofree char *want = g_strdup_printf("%s:%d", server, PORT);
    return seen && v.found == ML_FOUND_DIRECT && !strcmp(v.remote, want);
}

static bool verify_relay(const struct ml_topology *t, const struct ml_evidence *ev,
                         GString *sentence)
{
    struct ml_found_view v;
    bool seen = view(t, ev, &v, sentence);
    return seen && v.found == ML_FOUND_RELAY;
}

/* Direct to an address on the lab bridge other than the hub's (the server's own or its NAT's
 * mapping), or relayed by the hub. */
static bool verify_auto(const struct ml_topology *t, const struct ml_evidence *ev,
                        GString *sentence)
{
    struct ml_found_view v;
    if (!view(t, ev, &v, sentence) || v.found == ML_FOUND_NONE)
        return false;
    if (v.found == ML_FOUND_RELAY)
        return true;
    return ml_peer_on_underlay(t, v.remote, sentence);
}

static bool restart_clients(struct ml_lab *lab, GError **err)
{
    bool clients[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        clients[i] = i != lab->topo->hub;
    return start_all(lab, false, NULL, clients, err);
}

/* Whether a node's view shows tinc's PMTU discovery with node finished (send_mtu_probe fixes
 * mtu = minmtu = maxmtu once min reaches max, or at the 30th probe). */
static bool probed(const struct ml_topology *t, size_t node, const char *text)
{
    struct tinc_node n;
    return view_node(t, node, text, &n) && n.minmtu > 0 && n.minmtu == n.maxmtu &&
           n.pmtu == n.minmtu;
}

/* Until discovery ends, every node sends each node it holds a key for a burst of probes of up
 * to 1518 bytes a second, and the hub's link carries those with the hub at either end: the
 * hub's idle bytes and the probe would count them. So: the client and the server each done
 * with the hub, the hub done with both. */
static bool hub_links_probed(struct ml_lab *lab, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t client = t->measure.client, server = t->measure.server, hub = t->hub;
    g_autofree char *cmd = view_cmd(lab);
    size_t who[] = {client, server, hub};
    for (size_t k = 0; k < G_N_ELEMENTS(who); k++) {
        g_autofree char *out = ml_agent_run(lab->dom[who[k]], cmd, NULL, 30, err);
        if (!out)
            return false;
        bool done =
            who[k] == hub ? probed(t, client, out) && probed(t, server, out) : probed(t, hub, out);
        if (!done)
            return false;
    }
    return true;
}

/* A fresh tincd forgets the PMTU it learned under the last policy; then discovery on the hub's
 * links is let finish and, for direct, the server's probes answered (until then tinc sends
 * through the hub). PingInterval (tinc.conf) keeps the next bursts an hour away. */
static bool settle_until(struct ml_lab *lab, bool direct,
                         bool (*restart)(struct ml_lab *lab, GError **err), GError **err)
{
    ml_progress("tinc", "restarting tincd on the clients so they probe the path afresh");
    if (!restart(lab, err) || !wait_overlay(lab, err))
        return false;
    const struct ml_topology *t = lab->topo;
    g_autofree char *cmd = view_cmd(lab);
    for (unsigned i = 0; i < 30; i++) {
        g_autoptr(GError) e = NULL;
        struct ml_found_view v;
        g_autofree char *out = ml_agent_run(lab->dom[t->measure.client], cmd, NULL, 30, err);
        if (!out)
            return false;
        if ((!direct || (view_parse(t, out, &v) && v.found == ML_FOUND_DIRECT)) &&
            hub_links_probed(lab, &e))
            return true;
        g_usleep(G_USEC_PER_SEC);
    }
    ml_progress("tinc", "PMTU discovery has not settled after 60 s; measuring anyway");
    return true; /* verify says what the view shows */
}

/* A tincd that did not settle is stopped on the clients, so its probes and reconnections do not
 * cross the bridge while the other paths are measured; its next path restarts it. */
static bool settle_or_stop(struct ml_lab *lab, bool direct, GError **err)
{
    if (settle_until(lab, direct, restart_clients, err))
        return true;
    ml_dp_stop_unsettled(&ml_dataplane_tinc, lab, err);
    return false;
}

static bool settle(struct ml_lab *lab, GError **err)
{
    return settle_or_stop(lab, false, err);
}

static bool settle_direct(struct ml_lab *lab, GError **err)
{
    return settle_or_stop(lab, true, err);
}

static char *describe_direct(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("tinc 1.0, %s to %s directly over UDP (both ConnectTo %s, which "
                           "tells them each other's address)",
                           t->nodes[t->measure.client].name,
                           ml_ip_str(address(t, t->measure.server), addr), t->nodes[t->hub].name);
}

static char *describe_relay(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("tinc 1.0, %s to %s through tincd on %s (UDP between the clients "
                           "dropped: tinc forwards to its nexthop)",
                           t->nodes[t->measure.client].name,
                           ml_ip_str(address(t, t->measure.server), addr), t->nodes[t->hub].name);
}

static char *describe_auto(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("tinc 1.0, %s to %s by whatever way tinc finds (direct UDP when its MTU "
                           "probes are answered, else through %s)",
                           t->nodes[t->measure.client].name,
                           ml_ip_str(address(t, t->measure.server), addr), t->nodes[t->hub].name);
}

static struct in_addr target(const struct ml_lab *lab)
{
    return address(lab->topo, lab->topo->measure.server);
}

static struct in_addr auto_address(const struct ml_lab *lab, size_t node)
{
    return address(lab->topo, node);
}

static bool auto_stop(struct ml_lab *lab, GError **err)
{
    g_autofree char *stop = ml_daemon_stop_cmd(&tinc_daemon);
    const char *cmds[ML_MAX_NODES];
    bool clients[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        cmds[i] = stop;
        clients[i] = i != lab->topo->hub;
    }
    return ml_lab_run_parallel(lab, clients, cmds, NULL, 60, NULL, "tinc stop", err);
}

static bool auto_start(struct ml_lab *lab, GError **err)
{
    return start_all(lab, false, NULL, NULL, err);
}

static bool auto_wait(struct ml_lab *lab, GError **err)
{
    return ml_lab_wait_ping(lab, address(lab->topo, lab->topo->measure.server), 90, "tinc", err);
}

/* The server's dump_nodes line when direct: its own via, a nexthop that is another node (the
 * hub; the hub's and the client's own lines have themselves as nexthop), an answered probe. */
static const struct ml_auto_ops tinc_auto = {
    .address = auto_address,
    .view_cmd = view_cmd,
    .view_parse = view_parse,
    .view_own = 0,
    .direct_re = "(?m)^ (\\S+) at .* nexthop (?!\\1 )\\S+ via \\1 pmtu \\d+ \\(min [1-9]",
    .peer_port = PORT,
    .stop = auto_stop,
    .start = auto_start,
    .wait = auto_wait,
};

extern const struct ml_path_ops ml_path_tinc_direct, ml_path_tinc_relay, ml_path_tinc_auto;

/* The guest firewall opens 655, so with no NAT the other side's first packet gets in; tinc 1.0
 * sends through the hub until its UDP probes to the peer are answered (send_udppacket), so a
 * packet that can reach the peer directly does, with no race against a relay set-up. */
static const struct ml_nat_traits nat = {
    .none_open = true,
    .races = false,
    .relay_word = "relay",
    .capture_filter = "udp.port == 655",
};

/* ---- export ---- */

/* The unit the export installs on the hub and the clients, named as the lab's transient one so
 * that the lab's view (VIEW_READ) reads the exported daemon's dump too; tincd -D writes
 * /run/tinc.meshlab.pid as in the lab, which `tincd -n meshlab --kill` reads. */
static const char export_unit[] = "[Unit]\n"
                                  "Description=tinc network " NET " (meshlab export)\n"
                                  "Wants=network-online.target\n"
                                  "After=network-online.target\n"
                                  "\n"
                                  "[Service]\n"
                                  "ExecStart=/usr/sbin/tincd -n " NET " -D\n"
                                  "ExecReload=/usr/sbin/tincd -n " NET " --kill=HUP\n"
                                  "Restart=on-failure\n"
                                  "\n"
                                  "[Install]\n"
                                  "WantedBy=multi-user.target\n";
#define EXPORT_UNIT_PATH "/etc/systemd/system/meshlab-tinc.service"
#define EXPORT_START "systemctl daemon-reload && systemctl enable --now meshlab-tinc.service"
#define EXPORT_KEY_BITS 2048 /* as the lab's tincd -K2048 */

/* One node's files, to the export directory and, for the hub, to its user-data: its tinc.conf,
 * tinc-up, private key and every node's hosts/ file, with the hub's Address the one the clients
 * dial; then the unit. */
static void export_node(struct ml_bundle *b, size_t i, char *const *priv, char *const *pub)
{
    const struct ml_topology *t = b->topo;
    const char *n = t->nodes[i].name;
    bool hub = i == t->hub;
    struct {
        char file[80];
        char *content;
        unsigned flags, mode;
        const char *what;
    } f[3 + ML_MAX_NODES] = {
        {"tinc.conf", conf_text(t, i, b->label), 0, 0644, "tinc's configuration"},
        {"tinc-up", up_text(t, i), 0, 0755,
         "the script tincd runs to address the interface (mode 0755 where installed)"},
        {"rsa_key.priv", g_strdup(priv[i]), ML_BUNDLE_SECRET, 0600, "its tinc private key"},
    };
    size_t k = 3;
    for (size_t j = 0; j < t->n_nodes; j++, k++) {
        g_autofree char *jn = tinc_name(t, j);
        g_snprintf(f[k].file, sizeof(f[k].file), "hosts/%s", jn);
        f[k].content = host_text(t, j, pub[j], b->hub_address);
        f[k].mode = 0644;
        f[k].what = j == t->hub ? "the hub's host file: its address, subnet, cipher and key"
                                : "a node's host file: its subnet, cipher and public key";
    }
    for (size_t x = 0; x < k; x++) {
        g_autofree char *rel = g_strdup_printf("tinc/%s/%s", n, f[x].file);
        g_autofree char *install = g_strdup_printf(CONF_DIR "/%s", f[x].file);
        if (hub)
            ml_bundle_hub_file(b, install, f[x].content, f[x].mode);
        ml_bundle_add(b, rel, f[x].content, f[x].flags, i, install, f[x].what);
    }
    g_autofree char *ru = g_strdup_printf("tinc/%s/meshlab-tinc.service", n);
    ml_bundle_add(b, ru, g_strdup(export_unit), 0, i, EXPORT_UNIT_PATH,
                  "the systemd unit that runs tincd");
    if (hub) {
        ml_bundle_hub_file(b, EXPORT_UNIT_PATH, export_unit, 0644);
    } else {
        ml_bundle_client_command(b, i, "chmod 755 " CONF_DIR "/tinc-up");
        ml_bundle_client_command(b, i, EXPORT_START);
    }
}

/* The export hook: a key pair per node made here by libcrypto (the lab's never leave its
 * guests), each node's files as the lab rendered them but for the hub's address, the clients'
 * ConnectTo the hub. tinc relays inside tincd, so the hub needs no forwarding. */
static bool export_tinc(struct ml_bundle *b, GError **err)
{
    const struct ml_topology *t = b->topo;
    char *priv[ML_MAX_NODES] = {0}, *pub[ML_MAX_NODES] = {0};
    bool ok = true;
    for (size_t i = 0; i < t->n_nodes && ok; i++)
        ok = ml_rsa_keypair_new(EXPORT_KEY_BITS, &priv[i], &pub[i], err);
    for (size_t i = 0; i < t->n_nodes && ok; i++)
        export_node(b, i, priv, pub);
    if (ok) {
        ml_bundle_hub_package(b, "tincd", "tinc");
        ml_bundle_hub_command(b, EXPORT_START);
    }
    ml_bundle_keys_free(priv, pub);
    return ok;
}

static bool restart_exported(struct ml_lab *lab, GError **err)
{
    bool clients[ML_MAX_NODES] = {0};
    const char *cmds[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        clients[i] = i != lab->topo->hub;
        cmds[i] = clients[i] ? "systemctl restart meshlab-tinc.service" : NULL;
    }
    return ml_lab_run_parallel(lab, clients, cmds, NULL, 60, NULL, "restarting the exported tincd",
                               err);
}

/* export --verify: the exported tincd restarted on the clients under the path's policy, then
 * settled as a run settles the lab's. */
static bool verify_settle(struct ml_lab *lab, const struct ml_path_ops *ops, GError **err)
{
    return settle_until(lab, ops->hub == ML_HUB_QUIET, restart_exported, err);
}

const struct ml_dataplane ml_dataplane_tinc = {
    .nat = &nat,
    .name = "tinc",
    .paths = {&ml_path_tinc_direct, &ml_path_tinc_relay, &ml_path_tinc_auto},
    .daemons = {{"tincd", "tincd --version"}},
    .ports = ports,
    .conflict = conflict,
    .setup = setup,
    .observe = observe,
    .autop = &tinc_auto,
    .export = export_tinc,
    .verify_settle = verify_settle,
};

/* One tinc 1.0.36 UDP packet (send_udppacket, src/net_packet.c): the inner IP packet behind the
 * 14-byte Ethernet header tinc keeps even in router mode (route.c reads packet->data from offset
 * 14), the 4-byte seqno in front, both encrypted in aes-256-cbc with PKCS#7 padding (at least
 * one byte, to a 16-byte block), then MACLength 16 bytes of HMAC-SHA256, in UDP 8 and IPv4 20.
 * For n inner bytes: 28 + roundup(n + 19, 16) + 16 = roundup(n + 3, 16) + 60. The physics
 * pads n alone and caps at inner_mtu, so overhead 63 makes the full segment exact (1437 + 63 =
 * 1500: roundup(1440, 16) = 1440) and every n with n % 16 in 1..13 three bytes high (a ping's
 * 84: 159 for 156).
 *
 * inner_mtu 1437: tinc's PMTU discovery on a 1500-byte lab link ends at the largest frame
 * whose packet fits, roundup(len + 5, 16) + 16 <= 1472, len = 1451; route.c clamps the MSS to
 * that less 14 + 20 + 20 (clamp_mss) and answers longer DF packets with "fragmentation needed"
 * for 1451 - 14 = 1437. Both legs (client to hub, hub to server) carry the same format. */
static const struct ml_encap encap_tinc = {
    .name = "tinc 1.0 UDP",
    .inner_mtu = 1437,
    .overhead = 63,
    .pad_to = 16,
    .how = "tinc 1.0 (aes-256-cbc, HMAC-SHA256/16): 20 IP + 8 UDP + 4 seqno + 14 Ethernet + "
           "PKCS#7 padding of (4 + 14 + n) to 16 + 16 MAC = roundup(n + 3, 16) + 60; as overhead "
           "63 over n padded to 16, exact for a full 1437-byte segment",
};

const struct ml_path_ops ml_path_tinc_direct = {
    .name = "tinc-direct",
    .dataplane = &ml_dataplane_tinc,
    .policy = ML_POLICY_DIRECT,
    .hub = ML_HUB_QUIET,
    .describe = describe_direct,
    .target = target,
    .settle = settle_direct,
    .settle_changes_state = true,
    .verify = verify_direct,
};

const struct ml_path_ops ml_path_tinc_relay = {
    .name = "tinc-relay",
    .dataplane = &ml_dataplane_tinc,
    .policy = ML_POLICY_RELAY,
    .hub = ML_HUB_CARRIES,
    .encap = &encap_tinc,
    .describe = describe_relay,
    .target = target,
    .settle = settle,
    .settle_changes_state = true,
    .verify = verify_relay,
};

const struct ml_path_ops ml_path_tinc_auto = {
    .name = "tinc-auto",
    .dataplane = &ml_dataplane_tinc,
    .policy = ML_POLICY_DIRECT,
    .hub = ML_HUB_FOUND,
    .encap = &encap_tinc,
    .describe = describe_auto,
    .target = target,
    .settle = settle,
    .settle_changes_state = true,
    .verify = verify_auto,
};
