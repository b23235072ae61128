/* ipsec-hub: strongSwan 5.9.8 (Debian 12's charon-systemd, configured with swanctl) on all
 * three guests, the kernel's xfrm doing ESP, forced into UDP 4500 (`encap = yes`), AES-256-GCM.
 * Each client has one IKEv2 SA and one CHILD_SA with the hub; the hub forwards between them.
 *
 * Route-based, with an XFRM interface (ipsec0, if_id 1) on every node: the overlay /24 is a
 * connected route on ipsec0, so the client's `ip route get` names the tunnel the way the
 * WireGuard paths' does, and the hub forwards by its routing table: a packet from client-a
 * comes in on ipsec0 and goes out on ipsec0, where the out policy of client-b's CHILD_SA (the
 * /24 to client-b's /32) takes it. Policy-based would need no interface, but its routes are
 * strongSwan's table 220 via eth0, and a packet that missed the policy would leave in clear on
 * the same route; with if_id only what enters ipsec0 is encrypted, and nothing else can be.
 * strongSwan installs no routes (install_routes = no): ipsec0's route is the only one.
 *
 * Keys: each node makes an ECDSA P-256 key with `pki --gen` into /etc/swanctl/private/ (swanctl
 * --load-all loads it); only `pki --pub` comes to the host, and goes to the peers as raw public
 * keys (swanctl.conf `pubkeys`, files in /etc/swanctl/pubkey/). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "core/keys.h"
#include "core/util.h"
#include "dataplanes/bundle.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "dataplanes/wireguard.h"
#include "topology/plan.h"
#include "virt/agent.h"

#define DEV "ipsec0"
#define IF_ID "1"
#define SUBNET "10.46.0." /* /24: each node keeps the last octet of its tunnel_address */
#define KEY_FILE "/etc/swanctl/private/meshlab.pem"
#define CONF_FILE "/etc/swanctl/conf.d/meshlab.conf"
#define DAEMON_CONF_FILE "/etc/strongswan.d/meshlab.conf"
#define PORT_IKE 500
#define PORT_NATT 4500
/* The lab NIC's 1500 less ESP in UDP with AES-GCM (esp4.c esp_init_state and
 * xfrm_state_mtu): ((1500 - 44 header_len - 16 ICV) & ~3) - 2 = 1438. */
#define INNER_MTU "1438"
/* How long ago a CHILD_SA's last packet in each direction may be, as the hub sees it. */
#define USE_MAX_AGE_S 60
#define ML_IPSEC_LOAD_COMMAND "swanctl --load-all --noprompt 2>&1"

extern const struct ml_dataplane ml_dataplane_ipsec;

static char *address(const struct ml_topology *t, size_t node, char buf[16])
{
    return ml_wg_overlay_address(t, node, SUBNET, buf);
}

static size_t ports(const struct ml_topology *t, struct ml_port *ret, size_t max)
{
    if (max < 2)
        return 0;
    ret[0] = (struct ml_port){.what = "IKE",
                              .proto = ML_PROTO_UDP,
                              .port = PORT_IKE,
                              .open = true,
                              .dataplane = ml_dataplane_ipsec.name};
    ret[1] = (struct ml_port){.what = "IKE and ESP in UDP",
                              .proto = ML_PROTO_UDP,
                              .port = PORT_NATT,
                              .open = true,
                              .dataplane = ml_dataplane_ipsec.name};
    return 2;
}

/* One IKEv2 connection with one CHILD_SA, named after the peer: the hub has one per client,
 * a client one to the hub; between local_addrs and remote_addrs (swanctl.conf's syntax). */
static void render_connection(GString *c, const struct ml_topology *t, size_t self, size_t peer,
                              const char *local, const char *remote, const char *local_ts,
                              const char *remote_ts, bool initiator)
{
    const char *me = t->nodes[self].name, *them = t->nodes[peer].name;
    g_string_append_printf(c,
                           "    %s {\n"
                           "        version = 2\n"
                           "        local_addrs = %s\n"
                           "        remote_addrs = %s\n"
                           "        encap = yes\n"
                           "        proposals = aes256gcm16-prfsha256-ecp256\n"
                           "        if_id_in = " IF_ID "\n"
                           "        if_id_out = " IF_ID "\n"
                           "        dpd_delay = 30s\n",
                           them, local, remote);
    if (initiator)
        g_string_append(c, "        keyingtries = 0\n");
    g_string_append_printf(c,
                           "        local {\n"
                           "            auth = pubkey\n"
                           "            id = %s\n"
                           "            pubkeys = %s.pem\n"
                           "        }\n"
                           "        remote {\n"
                           "            auth = pubkey\n"
                           "            id = %s\n"
                           "            pubkeys = %s.pem\n"
                           "        }\n"
                           "        children {\n"
                           "            %s {\n"
                           "                local_ts = %s\n"
                           "                remote_ts = %s\n"
                           "                esp_proposals = aes256gcm16\n"
                           "                mode = tunnel\n"
                           "                dpd_action = %s\n"
                           "                start_action = %s\n"
                           "            }\n"
                           "        }\n"
                           "    }\n",
                           me, me, them, them, them, local_ts, remote_ts,
                           initiator ? "restart" : "clear", initiator ? "start" : "none");
}

/* swanctl.conf of node under a first line title: the hub answers each client, a client starts
 * its SA with the hub. In the lab every end is its lab address; an export's (hub_address not
 * NULL) hub answers any address, a client at home being behind its NAT, and a client dials
 * hub_address from any address of its own. */
static char *render_conf_for(const struct ml_topology *t, size_t node, const char *title,
                             const char *hub_address)
{
    size_t hub = t->hub;
    char addr[16], me[16], them[16];
    g_autofree char *net = g_strdup_printf(SUBNET "0/24");
    g_autofree char *head = ml_comment_text(title);
    GString *c = g_string_new(NULL);
    g_string_append_printf(c, "# %s: %s, ipsec-hub\nconnections {\n", head, t->nodes[node].name);
    const char *local = hub_address ? "%any" : ml_ip_str(t->nodes[node].address, me);
    if (node == hub) {
        for (size_t i = 0; i < t->n_nodes; i++) {
            if (i == hub)
                continue;
            g_autofree char *ts = g_strdup_printf("%s/32", address(t, i, addr));
            const char *remote = hub_address ? "%any" : ml_ip_str(t->nodes[i].address, them);
            render_connection(c, t, hub, i, local, remote, net, ts, false);
        }
    } else {
        g_autofree char *ts = g_strdup_printf("%s/32", address(t, node, addr));
        const char *remote = hub_address ? hub_address : ml_ip_str(t->nodes[hub].address, them);
        render_connection(c, t, node, hub, local, remote, ts, net, true);
    }
    g_string_append(c, "}\n");
    return g_string_free(c, FALSE);
}

char *ml_ipsec_render_conf(const struct ml_topology *t, size_t node)
{
    g_autofree char *title = g_strdup_printf("meshlab lab %s", t->name);
    return render_conf_for(t, node, title, NULL);
}

/* True for what `pki --pub --outform pem` prints: one PEM public key, base64 between its
 * lines, nothing a shell here-document could end early on. */
bool ml_ipsec_pubkey_valid(const char *pem)
{
    static const char begin[] = "-----BEGIN PUBLIC KEY-----\n",
                      end[] = "-----END PUBLIC KEY-----\n";
    if (!pem || !g_str_has_prefix(pem, begin) || !g_str_has_suffix(pem, end))
        return false;
    size_t n = strlen(pem) - strlen(end);
    size_t body = 0;
    for (size_t i = strlen(begin); i < n; i++) {
        char ch = pem[i];
        if (!(g_ascii_isalnum(ch) || ch == '+' || ch == '/' || ch == '=' || ch == '\n'))
            return false;
        body += ch != '\n';
    }
    return body >= 64 && body <= 1024;
}

/* The script node runs (sh -e, from stdin): the peers' and its own public keys, swanctl.conf,
 * the daemon's one setting, ipsec0 with the overlay address, forwarding on the hub. It starts
 * nothing: ml_ipsec_start_command does. pub[i] is node i's PEM public key. */
char *ml_ipsec_render_setup(const struct ml_topology *t, size_t node, char *const *pub)
{
    char addr[16];
    size_t hub = t->hub;
    g_autofree char *conf = ml_ipsec_render_conf(t, node);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "# meshlab lab %s: %s, ipsec-hub; public keys only\n"
                           "umask 022\n"
                           "mkdir -p /etc/swanctl/pubkey /etc/swanctl/conf.d\n",
                           t->name, t->nodes[node].name);
    for (size_t i = 0; i < t->n_nodes; i++)
        if (i == node || i == hub || node == hub)
            g_string_append_printf(s, "cat > /etc/swanctl/pubkey/%s.pem <<'EOF'\n%sEOF\n",
                                   t->nodes[i].name, pub[i]);
    g_string_append_printf(s,
                           "cat > " CONF_FILE " <<'EOF'\n%sEOF\n"
                           "cat > " DAEMON_CONF_FILE " <<'EOF'\n"
                           "# meshlab ipsec-hub: ipsec0's connected route is the only route\n"
                           "charon {\n    install_routes = no\n}\nEOF\n"
                           "ip link del " DEV " 2>/dev/null || true\n"
                           "ip link add " DEV " mtu " INNER_MTU " type xfrm dev " ML_LAB_NIC
                           " if_id " IF_ID "\n"
                           "ip addr add %s/24 dev " DEV "\n"
                           "ip link set " DEV " up\n",
                           conf, address(t, node, addr));
    if (node == hub)
        g_string_append(s, "sysctl -q -w net.ipv4.ip_forward=1\n");
    return g_string_free(s, FALSE);
}

/* The daemon afresh (it reads strongswan.d at start), then the configuration: Debian's
 * strongswan.service runs `swanctl --load-all` after start too; once more here so a failure
 * to load says why. */
static const char start_command[] =
    "set -e; systemctl restart strongswan.service; " ML_IPSEC_LOAD_COMMAND;

/* Each node's key, made in it; prints only the public key. (The netns test runs these commands
 * as they are: tests/ipsec_netns.sh.) */
const char ml_ipsec_key_command[] =
    "set -e; umask 077; mkdir -p /etc/swanctl/private; "
    "pki --gen --type ecdsa --size 256 --outform pem > " KEY_FILE ".new; "
    "mv " KEY_FILE ".new " KEY_FILE "; pki --pub --in " KEY_FILE " --outform pem";

static bool keys(struct ml_lab *lab, char **pub, GError **err)
{
    const struct ml_topology *t = lab->topo;
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        g_autofree char *out = ml_agent_run(lab->dom[i], ml_ipsec_key_command, NULL, 60, err);
        if (!out)
            return false;
        if (!ml_ipsec_pubkey_valid(out)) {
            g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                        "%s: `pki --pub --outform pem` printed no PEM public key (%zu bytes); "
                        "is strongswan-pki installed in the image (images/debian-12/packages)?",
                        t->nodes[i].name, strlen(out));
            return false;
        }
        pub[i] = g_steal_pointer(&out);
    }
    return true;
}

/* The hub first, so the clients' first IKE_SA_INIT finds it listening. */
static bool configure(struct ml_lab *lab, char *const *pub, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t hub = t->hub;
    for (size_t k = 0; k < lab->plan->n_guests; k++) {
        size_t i = k == 0 ? hub : (k <= hub ? k - 1 : k);
        g_autofree char *script = ml_ipsec_render_setup(t, i, pub);
        g_autofree char *out = ml_agent_run(lab->dom[i], "sh -e", script, 60, err);
        if (!out)
            return false;
        g_autofree char *loaded = ml_agent_run(lab->dom[i], start_command, NULL, 60, err);
        if (!loaded)
            return false;
        ml_progress("ipsec", "%s: charon-systemd up, ipsec0 with %s", t->nodes[i].name,
                    address(t, i, (char[16]){0}));
    }
    return true;
}

static bool setup(struct ml_lab *lab, struct json_object *state, GError **err)
{
    char *pub[ML_MAX_NODES] = {0};
    double t0 = ml_now();
    bool ok = keys(lab, pub, err) && configure(lab, pub, err);
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_free(pub[i]);
    struct in_addr to = ml_wg_overlay_target(lab->topo, lab->topo->measure.server, SUBNET);
    if (!ok || !ml_lab_wait_ping(lab, to, 120, "strongSwan through the hub", err))
        return false;
    double setup_s = ml_now() - t0;
    json_object_object_add(state, "setup_s", json_object_new_double(setup_s));
    char target[16];
    ml_progress("ipsec", "%s answered through the hub %.1f s after the first key",
                ml_ip_str(to, target), setup_s);
    return true;
}

/* The hub's own view, in one agent call: its SAs as charon sees them, the kernel's SAs with their
 * byte counters (each key replaced before it leaves the guest), the daemon's pid. */
const char ml_ipsec_xfrm_view_command[] =
    "ip -s xfrm state | sed -E 's/^([[:space:]]*(aead|enc|auth|auth-trunc|comp) [^ ]+) "
    "[^ ]+/\\1 (key withheld)/'";

static void observe(struct ml_lab *lab, struct ml_evidence *ev)
{
    g_autoptr(GError) e = NULL;
    virDomainPtr hub = ml_lab_dom(lab, lab->topo->hub);
    /* The kernel's SAs after the guest's uptime: when their counters were read. */
    g_autofree char *xfrm = g_strconcat(ML_UPTIME_COMMAND "; ", ml_ipsec_xfrm_view_command, NULL);
    const char *cmds[] = {"swanctl --list-sas --noblock", xfrm, "pidof charon-systemd || true"};
    if (!ml_agent_run_each(hub, cmds, G_N_ELEMENTS(cmds), 15, ev->own, &e))
        ev->own_error = g_strdup_printf("cannot read the hub's SAs: %s", ml_agent_error_text(e));
}

/* What `swanctl --list-sas` shows of the CHILD_SA whose remote traffic selector is one
 * client's /32 (swanctl's list_sas.c: the CHILD_SA line, its "in"/"out" lines, "remote TS"). */
struct child_view {
    bool found, installed, udp, gcm256;
    long long in_bytes, out_bytes, in_age, out_age; /* -1: not shown */
};

static long long field_before(const char *line, const char *word)
{
    const char *p = strstr(line, word);
    if (!p)
        return -1;
    while (p > line && p[-1] == ' ')
        p--;
    while (p > line && g_ascii_isdigit(p[-1]))
        p--;
    return g_ascii_isdigit(*p) ? g_ascii_strtoll(p, NULL, 10) : -1;
}

/* The seconds before "s ago" on an in/out line. swanctl prints now - last use as an unsigned
 * 64-bit number (list_sas.c), and the kernel's last-use time can be a moment after charon's
 * clock (seen under TCG in the middle of a pass: "18446744073709551615s ago"), which wraps: a
 * value above INT64_MAX is a use just now, 0. -1 when the line shows no age. */
static long long age_before(const char *line)
{
    const char *p = strstr(line, "s ago");
    if (!p)
        return -1;
    const char *end = p;
    while (p > line && g_ascii_isdigit(p[-1]))
        p--;
    if (p == end)
        return -1;
    guint64 v = g_ascii_strtoull(p, NULL, 10);
    return v > G_MAXINT64 ? 0 : (long long)v;
}

static struct child_view child_for(const char *sas, const char *ts)
{
    struct child_view best = {0};
    g_auto(GStrv) lines = g_strsplit(sas ? sas : "", "\n", -1);
    struct child_view cur = {0};
    bool in_child = false;
    for (char **l = lines; *l; l++) {
        const char *s = *l;
        size_t indent = strspn(s, " ");
        if (strstr(s, ", reqid ") && indent == 2) {
            cur = (struct child_view){.in_bytes = -1, .out_bytes = -1, .in_age = -1, .out_age = -1};
            cur.installed = strstr(s, ", INSTALLED, ") != NULL;
            cur.udp = strstr(s, "-in-UDP, ") != NULL;
            cur.gcm256 = strstr(s, "ESP:AES_GCM_16-256") != NULL;
            in_child = true;
            continue;
        }
        if (indent < 4)
            in_child = false;
        if (!in_child)
            continue;
        const char *w = s + indent;
        if (g_str_has_prefix(w, "in ") || g_str_has_prefix(w, "out ")) {
            bool in = w[0] == 'i';
            long long bytes = field_before(w, " bytes");
            long long age = age_before(w);
            *(in ? &cur.in_bytes : &cur.out_bytes) = bytes;
            *(in ? &cur.in_age : &cur.out_age) = age;
        } else if (g_str_has_prefix(w, "remote ")) {
            g_auto(GStrv) tss = g_strsplit_set(w + strlen("remote "), " ", -1);
            for (char **x = tss; *x; x++)
                if (!strcmp(*x, ts)) {
                    cur.found = true;
                    best = cur;
                }
        }
    }
    return best;
}

/* The kernel's SA from src to dst in `ip -s xfrm state`: whether it is ESP in UDP with
 * rfc4106(gcm(aes)) (ip/xfrm_state.c, xfrm_xfrma_print and xfrm_lifetime_print), and its bytes
 * ("N(bytes), M(packets)" under "lifetime current:"); -1 when there is no such SA. The
 * largest, if several (a rekey leaves the old one a while). */
static long long xfrm_bytes_of(const char *states, const char *src, const char *dst, bool *ret_ok,
                               bool sum)
{
    g_autofree char *head = g_strdup_printf("src %s dst %s", src, dst);
    g_auto(GStrv) lines = g_strsplit(states ? states : "", "\n", -1);
    long long best = -1;
    bool in = false, esp = false, udp = false, gcm = false, current = false;
    *ret_ok = false;
    for (char **l = lines; *l; l++) {
        const char *s = *l;
        if (g_str_has_prefix(s, "src ")) {
            in = g_str_has_prefix(s, head) && (!s[strlen(head)] || s[strlen(head)] == ' ');
            esp = udp = gcm = current = false;
            continue;
        }
        if (!in)
            continue;
        const char *w = s + strspn(s, " \t");
        if (g_str_has_prefix(w, "proto esp "))
            esp = true;
        else if (g_str_has_prefix(w, "encap type espinudp "))
            udp = true;
        else if (g_str_has_prefix(w, "aead rfc4106(gcm(aes)) "))
            gcm = true;
        else if (g_str_has_prefix(w, "lifetime current:"))
            current = true;
        else if (current && strstr(w, "(bytes)")) {
            long long b = g_ascii_strtoll(w, NULL, 10);
            current = false;
            if (esp && udp && gcm && (sum || b > best)) {
                best = sum ? MAX(best, 0) + b : b;
                *ret_ok = true;
            }
        }
    }
    return best;
}

static long long xfrm_bytes(const char *states, const char *src, const char *dst, bool *ret_ok)
{
    return xfrm_bytes_of(states, src, dst, ret_ok, false);
}

/* The hub's kernel SAs to and from the client and the server, each end's in + out summed over
 * its SAs: through a rekey the old SA's bytes stay while the new one's grow, so the sum only
 * falls when the old SA goes (a fall is not judged: ml_tunnel_judge). */
static size_t tunnel_counts(const struct ml_topology *t, const struct ml_evidence *ev,
                            struct ml_tunnel_count *ret, double *ret_at)
{
    *ret_at = ml_uptime_head(ev->own[1]);
    if (ev->own_error || !ev->own[1])
        return 0;
    size_t ends[] = {t->measure.client, t->measure.server}, n = 0;
    char hub[16];
    ml_ip_str(t->nodes[t->hub].address, hub);
    for (; n < G_N_ELEMENTS(ends); n++) {
        char under[16];
        ml_ip_str(t->nodes[ends[n]].address, under);
        bool in_ok = false, out_ok = false;
        long long in = xfrm_bytes_of(ev->own[1], under, hub, &in_ok, true);
        long long out = xfrm_bytes_of(ev->own[1], hub, under, &out_ok, true);
        if (!in_ok || !out_ok)
            break;
        g_snprintf(ret[n].who, sizeof(ret[n].who), "the hub's SAs with %s", t->nodes[ends[n]].name);
        ret[n].bytes = (double)(in + out);
    }
    return n;
}

/* One client's SA as the hub sees it; appends what it saw to sentence. */
static bool end_carries(const struct ml_topology *t, const struct ml_evidence *ev, size_t node,
                        GString *sentence)
{
    char addr[16], under[16], hub[16];
    g_autofree char *ts = g_strdup_printf("%s/32", address(t, node, addr));
    const char *name = t->nodes[node].name;
    struct child_view c = child_for(ev->own[0], ts);
    ml_ip_str(t->nodes[node].address, under);
    ml_ip_str(t->nodes[t->hub].address, hub);
    bool in_ok = false, out_ok = false;
    long long in = xfrm_bytes(ev->own[1], under, hub, &in_ok);
    long long out = xfrm_bytes(ev->own[1], hub, under, &out_ok);
    if (!c.found) {
        g_string_append_printf(sentence, "the hub has no CHILD_SA to %s (%s); ", name, ts);
        return false;
    }
    bool used = c.in_bytes > 0 && c.out_bytes > 0 && c.in_age >= 0 && c.out_age >= 0 &&
                c.in_age <= USE_MAX_AGE_S && c.out_age <= USE_MAX_AGE_S;
    bool kernel = in_ok && out_ok && in > 0 && out > 0;
    g_string_append_printf(
        sentence,
        "hub's CHILD_SA to %s %s, %s, %s, %lld bytes in and %lld out (last %llds and %llds "
        "ago); kernel SAs %s %lld and %lld bytes; ",
        name, c.installed ? "INSTALLED" : "not installed", c.udp ? "ESP in UDP" : "not in UDP",
        c.gcm256 ? "AES-GCM-256" : "not AES-GCM-256", c.in_bytes, c.out_bytes, c.in_age, c.out_age,
        in_ok && out_ok ? "ESP in UDP, rfc4106(gcm(aes))," : "missing or other,", in, out);
    return c.installed && c.udp && c.gcm256 && used && kernel;
}

/* The hub's CHILD_SAs to the client and to the server are installed, ESP in UDP with
 * AES-GCM-256, both used recently in both directions; the kernel's SAs to and from each
 * carried bytes; charon-systemd runs; the client's route enters ipsec0. */
static bool verify(const struct ml_topology *t, const struct ml_evidence *ev, GString *sentence)
{
    if (ev->own_error || !ev->own[0] || !ev->own[1] || !ev->own[2]) {
        g_string_append_printf(sentence, "the hub's view is missing: %s; ",
                               ev->own_error ? ev->own_error : "no output");
        return false;
    }
    bool client = end_carries(t, ev, t->measure.client, sentence);
    bool server = end_carries(t, ev, t->measure.server, sentence);
    g_autofree char *pids = g_strstrip(g_strdup(ev->own[2]));
    bool daemon = *pids && g_ascii_isdigit(*pids);
    g_string_append_printf(sentence, "charon-systemd %s%s%s; ",
                           daemon ? "runs (pid " : "does not run", daemon ? pids : "",
                           daemon ? ")" : "");
    return ml_route_enters(&ev->rt, DEV, sentence) && client && server && daemon;
}

static char *conflict(const struct ml_topology *t, int *ret_line, int *ret_column)
{
    return ml_wg_overlay_conflict(t, "ipsec-hub", SUBNET, NULL, ret_line, ret_column);
}

static char *describe(const struct ml_topology *t)
{
    char addr[16];
    return g_strdup_printf("IPsec (strongSwan, kernel ESP in UDP, AES-256-GCM), %s to %s "
                           "through the hub (%s), which forwards between the two SAs",
                           t->nodes[t->measure.client].name, address(t, t->measure.server, addr),
                           t->nodes[t->hub].name);
}

static struct in_addr target(const struct ml_lab *lab)
{
    return ml_wg_overlay_target(lab->topo, lab->topo->measure.server, SUBNET);
}

/* ESP in UDP in tunnel mode with AES-GCM-256 (RFC 4106: 8-byte IV, 16-byte ICV; RFC 3948: UDP
 * 4500 with no non-ESP marker on ESP packets): the inner packet and ESP's 2-byte trailer (pad
 * length, next header) padded to 4 (RFC 4303 2.4; the kernel's esp4.c aligns to
 * ALIGN(blocksize 1, 4)), inside IPv4 20 + UDP 8 + SPI 4 + sequence 4 + IV 8, then the ICV. */
static const struct ml_encap encap = {
    .name = "ESP in UDP, AES-256-GCM",
    .inner_mtu = 1438,
    .overhead = 20 + 8 + 4 + 4 + 8 + 16,
    .pad_to = 4,
    .trailer = 2,
    .how = "ESP in UDP, AES-256-GCM: 20 IP + 8 UDP + 4 SPI + 4 sequence + 8 IV + 16 ICV = 60 "
           "bytes, the inner packet and the 2-byte trailer padded to 4",
};

/* ---- export ---- */

#define EXPORT_IF_SCRIPT "/usr/local/sbin/meshlab-ipsec0"
#define EXPORT_IF_UNIT "/etc/systemd/system/meshlab-ipsec0.service"
#define EXPORT_START                                                                               \
    "systemctl daemon-reload && systemctl enable --now meshlab-ipsec0.service && systemctl "       \
    "restart strongswan.service && " ML_IPSEC_LOAD_COMMAND

/* ipsec0 at boot, before strongSwan, as the lab's setup script makes it. */
static const char export_if_unit[] = "[Unit]\n"
                                     "Description=ipsec0, the XFRM interface of ipsec-hub "
                                     "(meshlab export)\n"
                                     "Wants=network-online.target\n"
                                     "After=network-online.target\n"
                                     "Before=strongswan.service\n"
                                     "\n"
                                     "[Service]\n"
                                     "Type=oneshot\n"
                                     "RemainAfterExit=yes\n"
                                     "ExecStart=" EXPORT_IF_SCRIPT "\n"
                                     "ExecStop=/sbin/ip link del " DEV "\n"
                                     "\n"
                                     "[Install]\n"
                                     "WantedBy=multi-user.target\n";

/* Node's ipsec0 script: the lab's interface (if_id 1, the lab link's inner MTU, the overlay
 * address). Its underlying device is the hub's public NIC as given; on a client, the device of
 * its route to the hub (iproute2 leaves `dev` out when there is none yet: it is optional for
 * `type xfrm`, ip-link(8)). */
static char *export_if_script(const struct ml_bundle *b, size_t node)
{
    const struct ml_topology *t = b->topo;
    char addr[16];
    g_autofree char *q = g_shell_quote(b->hub_address);
    g_autofree char *label = ml_comment_text(b->label);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "#!/bin/sh\n"
                           "# %s: %s's " DEV ", the XFRM interface ipsec-hub's SAs (if_id " IF_ID
                           ") carry the overlay on\n"
                           "set -e\n",
                           label, t->nodes[node].name);
    if (node == t->hub) {
        g_autofree char *dev = g_shell_quote(b->hub_interface);
        g_string_append_printf(s, "dev=%s\n", dev);
    } else {
        g_string_append_printf(s,
                               "hub=$(getent ahostsv4 %s | awk 'NR == 1 {print $1}')\n"
                               "dev=$(ip -4 route get \"${hub:-%s}\" 2>/dev/null | "
                               "sed -n 's/.* dev \\([^ ]*\\).*/\\1/p')\n",
                               q, b->hub_address);
    }
    g_string_append_printf(s,
                           "ip link del " DEV " 2>/dev/null || true\n"
                           "ip link add " DEV " mtu " INNER_MTU " type xfrm ${dev:+dev \"$dev\"} "
                           "if_id " IF_ID "\n"
                           "ip addr add %s/24 dev " DEV "\n"
                           "ip link set " DEV " up\n",
                           address(t, node, addr));
    return g_string_free(s, FALSE);
}

/* Adds one of node's files, ipsec/NODE/name in the export, to the export and, when it is the
 * hub's, to its user-data. */
static void export_file(struct ml_bundle *b, size_t node, const char *name, const char *install,
                        const char *content, unsigned flags, unsigned mode, const char *what)
{
    g_autofree char *rel = g_strdup_printf("ipsec/%s/%s", b->topo->nodes[node].name, name);
    if (node == b->topo->hub)
        ml_bundle_hub_file(b, install, content, mode);
    ml_bundle_add(b, rel, g_strdup(content), flags, node, install, what);
}

/* The export hook: each node's ECDSA key made here by libcrypto, as `pki` makes the lab's; the
 * lab's swanctl.conf with the ends an Internet hub needs (the hub answers any client address, a
 * client dials --hub-address); each node holds its own key and the public keys of the peers it
 * talks to; ipsec0 from a unit at boot; the hub forwards between the SAs. */
static bool export_ipsec(struct ml_bundle *b, GError **err)
{
    const struct ml_topology *t = b->topo;
    size_t hub = t->hub;
    char *priv[ML_MAX_NODES] = {0}, *pub[ML_MAX_NODES] = {0};
    bool ok = true;
    for (size_t i = 0; i < t->n_nodes && ok; i++) {
        ok = ml_ec_keypair_new(&priv[i], &pub[i], err);
        if (ok && !ml_ipsec_pubkey_valid(pub[i])) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST,
                        "libcrypto's public key is not the PEM `pki --pub` prints (a meshlab "
                        "bug; nothing was exported for ipsec)");
            ok = false;
        }
    }
    for (size_t i = 0; i < t->n_nodes && ok; i++) {
        g_autofree char *conf = render_conf_for(t, i, b->label, b->hub_address);
        g_autofree char *script = export_if_script(b, i);
        export_file(b, i, "swanctl.conf", CONF_FILE, conf, 0, 0644,
                    "strongSwan's connections (swanctl.conf): IKEv2, ESP in UDP, AES-256-GCM, "
                    "raw public keys");
        export_file(b, i, "meshlab.pem", KEY_FILE, priv[i], ML_BUNDLE_SECRET, 0600,
                    "its ECDSA private key");
        for (size_t j = 0; j < t->n_nodes; j++) {
            if (!(j == i || j == hub || i == hub))
                continue;
            g_autofree char *path = g_strdup_printf("/etc/swanctl/pubkey/%s.pem", t->nodes[j].name);
            g_autofree char *what = g_strdup_printf("%s's public key", t->nodes[j].name);
            g_autofree char *rel =
                g_strdup_printf("ipsec/%s/pubkey/%s.pem", t->nodes[i].name, t->nodes[j].name);
            if (i == hub)
                ml_bundle_hub_file(b, path, pub[j], 0644);
            ml_bundle_add(b, rel, g_strdup(pub[j]), 0, i, path, what);
        }
        export_file(b, i, "strongswan.d/meshlab.conf", DAEMON_CONF_FILE,
                    "# meshlab ipsec-hub: ipsec0's connected route is the only route\n"
                    "charon {\n    install_routes = no\n}\n",
                    0, 0644, "charon installs no routes: ipsec0's is the overlay's");
        export_file(b, i, "meshlab-ipsec0", EXPORT_IF_SCRIPT, script, 0, 0755,
                    "makes ipsec0 with the node's overlay address (mode 0755 where installed)");
        export_file(b, i, "meshlab-ipsec0.service", EXPORT_IF_UNIT, export_if_unit, 0, 0644,
                    "the systemd unit that runs it at boot, before strongSwan");
        if (i != hub) {
            ml_bundle_client_command(b, i, "chmod 755 " EXPORT_IF_SCRIPT);
            ml_bundle_client_command(b, i, EXPORT_START);
        }
    }
    if (ok) {
        ml_bundle_hub_package(b, "charon-systemd", "charon-systemd");
        ml_bundle_hub_package(b, "swanctl", "strongswan-swanctl");
        ml_bundle_hub_sysctl(b, "net.ipv4.ip_forward", "1");
        /* Routing back out of ipsec0, the kernel would send ICMP redirects into the tunnel. */
        ml_bundle_hub_sysctl(b, "net.ipv4.conf.all.send_redirects", "0");
        ml_bundle_hub_sysctl(b, "net.ipv4.conf.default.send_redirects", "0");
        ml_bundle_hub_command(b, EXPORT_START);
    }
    ml_bundle_keys_free(priv, pub);
    return ok;
}

extern const struct ml_path_ops ml_path_ipsec_hub;

const struct ml_dataplane ml_dataplane_ipsec = {
    .name = "ipsec",
    .paths = {&ml_path_ipsec_hub},
    /* charon-systemd runs IKE only (ESP is the kernel's, counted in the guest's softirq);
     * it has no --version of its own, swanctl asks the daemon (tests/data/samples/ipsec). */
    .daemons = {{"charon-systemd", "swanctl --version --daemon"}},
    .conflict = conflict,
    .ports = ports,
    .setup = setup,
    .observe = observe,
    .export = export_ipsec,
};

const struct ml_path_ops ml_path_ipsec_hub = {
    .name = "ipsec-hub",
    .dataplane = &ml_dataplane_ipsec,
    .policy = ML_POLICY_DIRECT,
    .hub = ML_HUB_CARRIES,
    .encap = &encap,
    .describe = describe,
    .target = target,
    .verify = verify,
    .tunnel_counts = tunnel_counts,
};
