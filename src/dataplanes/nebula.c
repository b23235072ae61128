#include "dataplanes/nebula.h"

#include <arpa/inet.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>

#include "core/leftovers.h"
#include "core/rundir.h"
#include "core/spawn.h"
#include "virt/agent.h"
#include "virt/daemon.h"
#include "virt/guest_value.h"
#include "core/util.h"

#define NEBULA_SUBNET "10.42.0.0"
#define NEBULA_PREFIX 24
#define CA_DIR "/etc/nebula/ca"

struct in_addr ml_nebula_address(const struct ml_topology *topo, size_t node)
{
    (void)topo;
    struct in_addr a;
    inet_pton(AF_INET, NEBULA_SUBNET, &a);
    a.s_addr = htonl(ntohl(a.s_addr) + (uint32_t)node + 1);
    return a;
}

/* How a config.yml differs between the lab and an export. */
struct config_opts {
    const char *head;       /* its first line, a comment */
    const char *lighthouse; /* the hub as the clients dial it, "ADDRESS:PORT" */
    bool lab_underlay;      /* only the lab bridge is an underlay (the lab's own) */
    const char *admin_key;  /* the admin console's key; NULL: no console */
};

static char *render_config(const struct ml_topology *topo, size_t node, const struct config_opts *o)
{
    size_t hub = topo->hub;
    bool is_hub = node == hub;
    char hub_overlay[16];
    ml_ip_str(ml_nebula_address(topo, hub), hub_overlay);
    g_autofree char *head = ml_comment_text(o->head);
    GString *c = g_string_new(NULL);
    g_string_append_printf(c,
                           "# %s\n"
                           "pki:\n"
                           "  ca: /etc/nebula/ca.crt\n"
                           "  cert: /etc/nebula/host.crt\n"
                           "  key: /etc/nebula/host.key\n"
                           "static_host_map:\n"
                           "  \"%s\": [\"%s\"]\n"
                           "lighthouse:\n"
                           "  am_lighthouse: %s\n"
                           "  interval: 60\n",
                           head, hub_overlay, o->lighthouse, is_hub ? "true" : "false");
    if (is_hub)
        g_string_append(c, "  hosts: []\n");
    else
        g_string_append_printf(c, "  hosts: [\"%s\"]\n", hub_overlay);
    if (o->lab_underlay) {
        /* Only the lab bridge is an underlay. Without this, nebula happily learns a
         * peer's WireGuard address and "goes direct" through the hub's tunnel: the
         * relay check caught exactly that. */
        char lab_net[16];
        ml_ip_str(topo->lab_subnet.net, lab_net);
        g_string_append_printf(c,
                               "  local_allow_list:\n"
                               "    \"0.0.0.0/0\": false\n"
                               "    \"::/0\": false\n"
                               "    \"%s/%u\": true\n"
                               "  remote_allow_list:\n"
                               "    \"0.0.0.0/0\": false\n"
                               "    \"::/0\": false\n"
                               "    \"%s/%u\": true\n",
                               lab_net, topo->lab_subnet.prefix, lab_net, topo->lab_subnet.prefix);
    } else {
        /* The same lesson for a deployment, where the underlay is the Internet: never an
         * address inside the WireGuard overlay beside it, nor a WireGuard interface (only
         * "deny" rules, so everything else is allowed: nebula 1.6.1 examples/config.yml). */
        char wg_net[16];
        ml_ip_str(topo->wireguard.subnet.net, wg_net);
        g_string_append_printf(c,
                               "  local_allow_list:\n"
                               "    interfaces:\n"
                               "      'wg.*': false\n"
                               "  remote_allow_list:\n"
                               "    \"%s/%u\": false\n",
                               wg_net, topo->wireguard.subnet.prefix);
    }
    g_string_append_printf(c,
                           "listen:\n"
                           "  host: 0.0.0.0\n"
                           "  port: %d\n"
                           "punchy:\n"
                           "  punch: true\n"
                           "  respond: true\n"
                           "relay:\n",
                           ML_NEBULA_PORT);
    if (is_hub)
        g_string_append(c, "  am_relay: true\n  use_relays: false\n");
    else
        g_string_append_printf(c, "  am_relay: false\n  use_relays: true\n  relays: [\"%s\"]\n",
                               hub_overlay);
    g_string_append(c, "tun:\n"
                       "  dev: " ML_NEBULA_DEV "\n"
                       "  mtu: 1300\n"
                       "logging:\n"
                       "  level: info\n");
    if (o->admin_key)
        g_string_append_printf(c,
                               "sshd:\n"
                               "  enabled: true\n"
                               "  listen: " ML_NEBULA_ADMIN "\n"
                               "  host_key: /etc/nebula/ssh_host_ed25519_key\n"
                               "  authorized_users:\n"
                               "    - user: meshlab\n"
                               "      keys: [\"%s\"]\n",
                               o->admin_key);
    g_string_append(c, "firewall:\n"
                       "  outbound:\n"
                       "    - {port: any, proto: any, host: any}\n"
                       "  inbound:\n"
                       "    - {port: any, proto: any, host: any}\n");
    return g_string_free(c, FALSE);
}

char *ml_nebula_config(const struct ml_topology *topo, size_t node, const char *admin_pubkey)
{
    char hub_lab[16];
    ml_ip_str(topo->nodes[topo->hub].address, hub_lab);
    g_autofree char *head =
        g_strdup_printf("meshlab lab %s: nebula on %s", topo->name, topo->nodes[node].name);
    g_autofree char *lighthouse = g_strdup_printf("%s:%d", hub_lab, ML_NEBULA_PORT);
    struct config_opts o = {
        .head = head, .lighthouse = lighthouse, .lab_underlay = true, .admin_key = admin_pubkey};
    return render_config(topo, node, &o);
}

char *ml_nebula_export_config(const struct ml_bundle *b, size_t node)
{
    g_autofree char *head = g_strdup_printf("%s: nebula (nebula-direct, nebula-relay) on %s, "
                                            "made by meshlab export",
                                            b->label, b->topo->nodes[node].name);
    g_autofree char *lighthouse = ml_bundle_endpoint(b, ML_NEBULA_PORT);
    struct config_opts o = {.head = head, .lighthouse = lighthouse};
    return render_config(b->topo, node, &o);
}

/* Banners as nebula's cert package writes them (slackhq/nebula cert/cert.go: CertBanner
 * "NEBULA CERTIFICATE", X25519PublicKeyBanner "NEBULA X25519 PUBLIC KEY", 32-byte keys). */
bool ml_nebula_pubkey_valid(const char *pem)
{
    return ml_guest_pem(pem, "NEBULA X25519 PUBLIC KEY", 32);
}

bool ml_nebula_cert_valid(const char *pem)
{
    return ml_guest_pem(pem, "NEBULA CERTIFICATE", 0);
}

bool ml_nebula_tunnel_parse(const char *text, struct ml_nebula_tunnel *ret, GError **err)
{
    memset(ret, 0, sizeof(*ret));
    const char *brace = text ? strchr(text, '{') : NULL;
    if (!brace) {
        /* nebula answers "Unable to find tunnel for vpn ip: …" when there is none. */
        return true;
    }
    struct json_object *o = json_tokener_parse(brace);
    if (!o) {
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "nebula print-tunnel returned no JSON: %.80s",
                    text);
        return false;
    }
    ret->found = true;
    struct json_object *cur = NULL, *relays = NULL;
    if (!json_object_object_get_ex(o, "currentRemote", &cur)) {
        /* Not the print-tunnel this parser knows: claim neither path. */
        ret->found = false;
    } else if (cur && json_object_get_type(cur) != json_type_null) {
        const char *s = json_object_get_string(cur);
        struct json_object *ip = NULL, *port = NULL;
        if (json_object_get_type(cur) == json_type_object &&
            json_object_object_get_ex(cur, "ip", &ip)) {
            json_object_object_get_ex(cur, "port", &port);
            const char *addr = json_object_get_string(ip); /* NULL for a null "ip" */
            snprintf(ret->remote, sizeof(ret->remote), "%s:%d", addr ? addr : "",
                     port ? json_object_get_int(port) : 0);
        } else {
            g_strlcpy(ret->remote, s, sizeof(ret->remote));
        }
    } else if (json_object_object_get_ex(o, "currentRelaysToMe", &relays) &&
               json_object_get_type(relays) == json_type_array &&
               json_object_array_length(relays) > 0) {
        ret->relayed = true;
        const char *relay = json_object_get_string(json_object_array_get_idx(relays, 0));
        g_strlcpy(ret->relay, relay ? relay : "", sizeof(ret->relay));
    }
    json_object_put(o);
    return true;
}

static void free_all(char **v)
{
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_clear_pointer(&v[i], g_free);
}

/* nebula logs to stderr, which systemd-run hands to the journal under the unit's name; it makes
 * its tun device before it serves. */
static const struct ml_daemon nebula_daemon = {
    .name = "nebula",
    .unit = "meshlab-nebula",
    .prepare = "umask 077; cat > /etc/nebula/config.yml && nebula -test -config "
               "/etc/nebula/config.yml",
    .command = "$(command -v nebula) -config /etc/nebula/config.yml",
    .ready = "ip link show " ML_NEBULA_DEV " >/dev/null 2>&1",
    .timeout_s = 30,
};

/* nebula on node, where node's daemons run now (behind its NAT, in the namespace, or not);
 * without prepare when the config is already in place (a restart). */
static struct ml_daemon daemon_on(const struct ml_lab *lab, size_t node, bool prepare)
{
    struct ml_daemon d = nebula_daemon;
    if (lab->nat_now[node] != ML_NAT_NONE)
        d.netns = ML_PLAN_NETNS;
    if (!prepare)
        d.prepare = NULL;
    return d;
}

/* Tries (of about a second each) for the overlay to answer after a restart, and again after
 * the server's nebula is restarted alone. */
#define WAIT_OVERLAY_FIRST 30
#define WAIT_OVERLAY_AGAIN 60

/* The client reaching the server through the overlay; when it does not, a nebula that stopped
 * on the way (client, server or the hub) is the reason, with its log. */
static bool wait_overlay(struct ml_lab *lab, GError **err)
{
    const struct ml_topology *t = lab->topo;
    struct in_addr server = ml_nebula_address(t, t->measure.server);
    g_autoptr(GError) first = NULL;
    if (ml_lab_wait_ping(lab, server, WAIT_OVERLAY_FIRST, "nebula", &first))
        return true;
    if (first->code == ML_ERR_INTERRUPTED) {
        g_propagate_error(err, g_steal_pointer(&first));
        return false;
    }
    /* Both clients restarted at once may each open the tunnel through the relay at the same
     * moment and neither take the other's: in the seed lab with every path (issue 37's run),
     * the two journals showed "Send handshake via relay" to each other for 100 s, the hub
     * handling a relay request from each side, and no answer in 90 tries. The server's nebula
     * restarted alone leaves one handshake to answer. */
    ml_progress("nebula",
                "no answer through nebula to %s in %u tries; restarting it on %s alone, so "
                "the two clients do not open the tunnel to each other at once",
                t->nodes[t->measure.server].name, WAIT_OVERLAY_FIRST,
                t->nodes[t->measure.server].name);
    bool server_only[ML_MAX_NODES] = {0};
    server_only[t->measure.server] = true;
    if (!ml_nebula_restart(lab, false, server_only, err))
        return false;
    if (ml_lab_wait_ping(lab, server, WAIT_OVERLAY_AGAIN, "nebula", err))
        return true;
    if (err && *err && (*err)->code == ML_ERR_INTERRUPTED)
        return false;
    size_t nodes[] = {t->measure.client, t->measure.server, t->hub};
    for (size_t k = 0; k < G_N_ELEMENTS(nodes); k++)
        if (!ml_daemon_alive(lab, nodes[k], &nebula_daemon, err))
            break;
    return false;
}

/* Each node makes its own keys; only public halves leave the guest: pub[i] is
 * node i's nebula public key, then "@@", then its ssh admin public key. */
static bool generate_keys(struct ml_lab *lab, const bool *all, char **pub, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t n = lab->plan->n_guests;
    const char *cmds[ML_MAX_NODES] = {0};
    ml_progress("nebula", "generating host and admin keys inside each guest");
    for (size_t i = 0; i < n; i++)
        cmds[i] = "set -e; umask 077; mkdir -p /etc/nebula; cd /etc/nebula; "
                  "rm -f host.key host.pub admin_key admin_key.pub ssh_host_ed25519_key*; "
                  "nebula-cert keygen -out-key host.key -out-pub host.pub; "
                  "ssh-keygen -q -t ed25519 -N '' -f admin_key; "
                  "ssh-keygen -q -t ed25519 -N '' -f ssh_host_ed25519_key; "
                  "cat host.pub; echo '@@'; cat admin_key.pub";
    if (!ml_lab_run_parallel(lab, all, cmds, NULL, 60, pub, "nebula setup", err))
        return false;
    /* The public keys travel to the hub's signing script and the admin key into a config:
     * each must be exactly one key of its kind (nothing that could shift awk's count of keys
     * and get a node signed for another's key). */
    for (size_t i = 0; i < n; i++) {
        char *sep = strstr(pub[i], "@@");
        if (sep)
            *sep = '\0';
        if (!sep || !ml_nebula_pubkey_valid(pub[i]) || !ml_guest_ssh_ed25519(sep + 2)) {
            g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                        "%s returned something that is not one nebula public key and one ssh "
                        "ed25519 admin key",
                        t->nodes[i].name);
            return false;
        }
    }
    return true;
}

/* The hub's script: the CA once, then each node's public key (all on one stdin,
 * in node order, split by awk) signed for its overlay address. */
static char *signing_script(const struct ml_topology *t, size_t n)
{
    char addr[16];
    GString *script = g_string_new("set -e; umask 077; mkdir -p " CA_DIR "/signed; cd " CA_DIR
                                   "; rm -rf signed/* keys; [ -f ca.key ] || nebula-cert ca "
                                   "-name meshlab -out-crt ca.crt -out-key ca.key; "
                                   "cat > keys; ");
    for (size_t i = 0; i < n; i++)
        g_string_append_printf(
            script,
            "awk '/BEGIN NEBULA/{k++} k==%zu' keys > %s.pub; nebula-cert sign -ca-crt ca.crt "
            "-ca-key ca.key -name %s -ip %s/%d -in-pub %s.pub -out-crt signed/%s.crt; ",
            i + 1, t->nodes[i].name, t->nodes[i].name, ml_ip_str(ml_nebula_address(t, i), addr),
            NEBULA_PREFIX, t->nodes[i].name, t->nodes[i].name);
    g_string_append(script, "cat ca.crt; for f in");
    for (size_t i = 0; i < n; i++)
        g_string_append_printf(script, " %s", t->nodes[i].name);
    g_string_append(script, "; do echo '@@'; cat signed/$f.crt; done");
    return g_string_free(script, FALSE);
}

/* The hub holds the CA and signs every node's key: crt[i] is the CA
 * certificate, "@@", node i's certificate. */
static bool sign_on_hub(struct ml_lab *lab, char **pub, char **crt, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t n = lab->plan->n_guests;
    g_autoptr(GString) pubs = g_string_new(NULL);
    for (size_t i = 0; i < n; i++) {
        g_autofree char *hostpub = g_strstrip(g_strdup(pub[i]));
        g_string_append_printf(pubs, "%s\n", hostpub);
    }
    g_autofree char *script = signing_script(t, n);
    g_autofree char *signed_out = ml_agent_run(lab->dom[t->hub], script, pubs->str, 60, err);
    if (!signed_out)
        return false;
    g_auto(GStrv) parts = g_strsplit(signed_out, "@@", -1);
    if (g_strv_length(parts) != n + 1) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the hub returned %u certificates for %zu nodes",
                    g_strv_length(parts) - 1, n);
        return false;
    }
    for (size_t i = 0; i < n + 1; i++) {
        if (!ml_nebula_cert_valid(parts[i])) {
            g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                        "the hub returned something that is not one nebula certificate as %s",
                        i == 0 ? "the CA certificate" : t->nodes[i - 1].name);
            return false;
        }
    }
    for (size_t i = 0; i < n; i++)
        crt[i] = g_strdup_printf("%s\n@@\n%s", g_strstrip(parts[0]), g_strstrip(parts[i + 1]));
    return true;
}

/* Certificates and the CA certificate go to every node. */
static bool install_certs(struct ml_lab *lab, const bool *all, char **crt, GError **err)
{
    const char *cmds[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        cmds[i] = "set -e; umask 077; cd /etc/nebula; cat > certs; "
                  "awk '/@@/{p=1;next} !p' certs > ca.crt; "
                  "awk '/@@/{p=1;next} p' certs > host.crt; rm certs; "
                  "nebula-cert print -path host.crt >/dev/null";
    return ml_lab_run_parallel(lab, all, cmds, (const char *const *)crt, 60, NULL, "nebula setup",
                               err);
}

/* Configs start the daemons: the lighthouse first, then the others. */
static bool start_daemons(struct ml_lab *lab, char **pub, char **conf, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t hub = t->hub;
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        g_autofree char *admin = g_strstrip(g_strdup(pub[i] + strlen(pub[i]) + 2));
        conf[i] = ml_nebula_config(t, i, admin);
    }
    struct ml_daemon d = daemon_on(lab, hub, true);
    bool ok = ml_daemon_start(lab, hub, &d, conf[hub], err);
    for (size_t i = 0; ok && i < lab->plan->n_guests; i++)
        if (i != hub) {
            d = daemon_on(lab, i, true);
            ok = ml_daemon_start(lab, i, &d, conf[i], err);
        }
    return ok;
}

bool ml_nebula_setup(struct ml_lab *lab, struct json_object *state, GError **err)
{
    bool all[ML_MAX_NODES] = {0};
    char *pub[ML_MAX_NODES] = {0}, *crt[ML_MAX_NODES] = {0}, *conf[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        all[i] = true;
    double t0 = ml_now();
    bool ok = generate_keys(lab, all, pub, err) && sign_on_hub(lab, pub, crt, err) &&
              install_certs(lab, all, crt, err) && start_daemons(lab, pub, conf, err) &&
              wait_overlay(lab, err);
    free_all(pub);
    free_all(crt);
    free_all(conf);
    if (!ok)
        return false;
    double setup_s = ml_now() - t0;
    json_object_object_add(state, "setup_s", json_object_new_double(setup_s));
    ml_progress("nebula", "overlay up, %.1f s after the first key", setup_s);
    return true;
}

bool ml_nebula_restart_clients(struct ml_lab *lab, GError **err)
{
    size_t n = lab->plan->n_guests, hub = lab->topo->hub;
    bool clients[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < n; i++)
        clients[i] = i != hub;
    return ml_nebula_restart(lab, false, clients, err) && wait_overlay(lab, err);
}

bool ml_nebula_restart(struct ml_lab *lab, bool hub_too, const bool *which, GError **err)
{
    size_t n = lab->plan->n_guests, hub = lab->topo->hub;
    /* The lighthouse first, so it learns each client's address from the client's own
     * handshake, not from a mapping of the NAT before. */
    if (hub_too) {
        struct ml_daemon d = daemon_on(lab, hub, false);
        if (!ml_daemon_start(lab, hub, &d, NULL, err))
            return false;
    }
    /* A transient unit keeps the namespace it was started in: `systemctl restart` would keep
     * it behind the NAT it no longer sits behind, so every start is a new unit. */
    for (size_t i = 0; i < n; i++) {
        if (i == hub || (which && !which[i]))
            continue;
        struct ml_daemon d = daemon_on(lab, i, false);
        if (!ml_daemon_start(lab, i, &d, NULL, err))
            return false;
    }
    return true;
}

bool ml_nebula_stop(struct ml_lab *lab, const bool *which, GError **err)
{
    g_autofree char *stop = ml_daemon_stop_cmd(&nebula_daemon);
    const char *cmds[ML_MAX_NODES];
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        cmds[i] = stop;
    return ml_lab_run_parallel(lab, which, cmds, NULL, 60, NULL, "nebula stop", err);
}

char *ml_nebula_view_cmd(const struct ml_lab *lab)
{
    const struct ml_topology *t = lab->topo;
    char target[16];
    ml_ip_str(ml_nebula_address(t, t->measure.server), target);
    /* The admin console listens on the loopback of the namespace nebula runs in. */
    return g_strdup_printf(
        "%sssh -q -p %s -i /etc/nebula/admin_key -o StrictHostKeyChecking=no "
        "-o UserKnownHostsFile=/dev/null -o BatchMode=yes meshlab@127.0.0.1 print-tunnel %s",
        ml_lab_netns_prefix(lab, t->measure.client), strchr(ML_NEBULA_ADMIN, ':') + 1, target);
}

char *ml_nebula_view(struct ml_lab *lab, GError **err)
{
    g_autofree char *cmd = ml_nebula_view_cmd(lab);
    return ml_agent_run(lab->dom[lab->topo->measure.client], cmd, NULL, 30, err);
}

/* The unit the export installs, on the hub and the clients: the package's own nebula@.service
 * is Debian's; this one needs only /usr/bin/nebula. nebula reads every .yml of /etc/nebula/
 * (nebula 1.6.1 config.Load of a directory merges them): config.yml, and any drop-in. */
static const char export_unit[] = "[Unit]\n"
                                  "Description=nebula overlay (meshlab export)\n"
                                  "Wants=network-online.target\n"
                                  "After=network-online.target\n"
                                  "\n"
                                  "[Service]\n"
                                  "ExecStart=/usr/bin/nebula -config /etc/nebula/\n"
                                  "Restart=always\n"
                                  "\n"
                                  "[Install]\n"
                                  "WantedBy=multi-user.target\n";
#define EXPORT_UNIT_PATH "/etc/systemd/system/nebula-meshlab.service"
#define EXPORT_START "systemctl daemon-reload && systemctl enable --now nebula-meshlab.service"

/* nebula-cert's arguments that sign node i's certificate into dir (NULL-terminated). */
static GStrv sign_argv(const struct ml_topology *t, size_t i, const char *dir)
{
    char addr[16];
    GPtrArray *v = g_ptr_array_new();
    const char *fixed[] = {"nebula-cert", "sign", "-ca-crt"};
    for (size_t k = 0; k < G_N_ELEMENTS(fixed); k++)
        g_ptr_array_add(v, g_strdup(fixed[k]));
    g_ptr_array_add(v, g_build_filename(dir, "ca.crt", NULL));
    g_ptr_array_add(v, g_strdup("-ca-key"));
    g_ptr_array_add(v, g_build_filename(dir, "ca.key", NULL));
    g_ptr_array_add(v, g_strdup("-name"));
    g_ptr_array_add(v, g_strdup(t->nodes[i].name));
    g_ptr_array_add(v, g_strdup("-ip"));
    g_ptr_array_add(
        v, g_strdup_printf("%s/%d", ml_ip_str(ml_nebula_address(t, i), addr), NEBULA_PREFIX));
    g_ptr_array_add(v, g_strdup("-out-crt"));
    g_ptr_array_add(v, g_strdup_printf("%s/%s.crt", dir, t->nodes[i].name));
    g_ptr_array_add(v, g_strdup("-out-key"));
    g_ptr_array_add(v, g_strdup_printf("%s/%s.key", dir, t->nodes[i].name));
    g_ptr_array_add(v, NULL);
    return (GStrv)g_ptr_array_free(v, FALSE);
}

static char *read_made(const char *dir, const char *name, GError **err)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, err))
        return NULL;
    return text;
}

/* `nebula -test` of node i's config with its pki pointed at the files just made, and the
 * lighthouse's address (which nebula resolves as it loads: a DNS query that must not leave this
 * host) replaced by the loopback's. */
static bool test_config(const char *dir, const char *node, const char *config,
                        const char *lighthouse, GError **err)
{
    g_autofree char *ca = g_build_filename(dir, "ca.crt", NULL);
    g_autofree char *crt = g_strdup_printf("%s/%s.crt", dir, node);
    g_autofree char *key = g_strdup_printf("%s/%s.key", dir, node);
    g_autofree char *path = g_strdup_printf("%s/%s.yml", dir, node);
    g_autofree char *ca_line = g_strdup_printf("ca: %s", ca);
    g_autofree char *crt_line = g_strdup_printf("cert: %s", crt);
    g_autofree char *key_line = g_strdup_printf("key: %s", key);
    g_autofree char *quoted = g_strdup_printf("[\"%s\"]", lighthouse);
    g_autofree char *loopback = g_strdup_printf("[\"127.0.0.1:%d\"]", ML_NEBULA_PORT);
    GString *t = g_string_new(config);
    g_string_replace(t, "ca: /etc/nebula/ca.crt", ca_line, 1);
    g_string_replace(t, "cert: /etc/nebula/host.crt", crt_line, 1);
    g_string_replace(t, "key: /etc/nebula/host.key", key_line, 1);
    g_string_replace(t, quoted, loopback, 1);
    g_autofree char *final = g_string_free(t, FALSE);
    if (!g_file_set_contents_full(path, final, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600, err))
        return false;
    const char *argv[] = {"nebula", "-test", "-config", path, NULL};
    g_autoptr(GError) e = NULL;
    bool ok = ml_spawn_timeout(argv, 60, NULL, &e);
    g_unlink(path);
    if (!ok)
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "nebula -test refused the exported config of %s (a meshlab bug; nothing was "
                    "exported for nebula): %s",
                    node, e->message);
    return ok;
}

bool ml_nebula_export(struct ml_bundle *b, GError **err)
{
    const struct ml_topology *t = b->topo;
    g_autofree char *cert_tool = g_find_program_in_path("nebula-cert");
    g_autofree char *daemon = g_find_program_in_path("nebula");
    if (!cert_tool || !daemon) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "nebula's certificates are made fresh for an export by nebula-cert on this "
                    "host, and its configs checked by `nebula -test`: neither is installed here "
                    "(Debian: apt install nebula)");
        return false;
    }
    g_autofree char *tmpl = ml_leftover_template("export", "");
    g_autofree char *dir = g_dir_make_tmp(tmpl, err);
    if (!dir)
        return false;
    g_autofree char *ca_name = g_strdup_printf("meshlab export %s", t->name);
    g_autofree char *lighthouse = ml_bundle_endpoint(b, ML_NEBULA_PORT);
    g_autofree char *ca_crt = g_build_filename(dir, "ca.crt", NULL);
    g_autofree char *ca_key = g_build_filename(dir, "ca.key", NULL);
    const char *ca_argv[] = {"nebula-cert", "ca",       "-name", ca_name, "-out-crt",
                             ca_crt,        "-out-key", ca_key,  NULL};
    bool ok = ml_spawn_timeout(ca_argv, 60, NULL, err);
    g_autofree char *label = ml_comment_text(b->label);
    g_autofree char *ca_name_q = g_shell_quote(ca_name);
    GString *script = g_string_new(NULL);
    g_string_append_printf(script,
                           "#!/bin/sh\n"
                           "# %s: the commands that made nebula's CA and certificates for this "
                           "export\n"
                           "# (nebula-cert 1.6.1). Run in an empty directory to make another "
                           "set; keep ca.key\n"
                           "# offline, and sign a new node with the last line's form.\n"
                           "set -eu\n"
                           "umask 077\n"
                           "nebula-cert ca -name %s -out-crt ca.crt -out-key ca.key\n",
                           label, ca_name_q);
    for (size_t i = 0; i < t->n_nodes && ok; i++) {
        g_auto(GStrv) argv = sign_argv(t, i, dir);
        ok = ml_spawn_timeout((const char *const *)argv, 60, NULL, err);
        char addr[16];
        g_string_append_printf(script,
                               "mkdir -p %s && nebula-cert sign -ca-crt ca.crt -ca-key ca.key "
                               "-name %s -ip %s/%d -out-crt %s/host.crt -out-key %s/host.key\n",
                               t->nodes[i].name, t->nodes[i].name,
                               ml_ip_str(ml_nebula_address(t, i), addr), NEBULA_PREFIX,
                               t->nodes[i].name, t->nodes[i].name);
    }
    g_autofree char *ca = ok ? read_made(dir, "ca.crt", err) : NULL;
    g_autofree char *cakey = ca ? read_made(dir, "ca.key", err) : NULL;
    ok = ok && cakey;
    char *crt[ML_MAX_NODES] = {0}, *key[ML_MAX_NODES] = {0}, *conf[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < t->n_nodes && ok; i++) {
        g_autofree char *c = g_strdup_printf("%s.crt", t->nodes[i].name);
        g_autofree char *k = g_strdup_printf("%s.key", t->nodes[i].name);
        crt[i] = read_made(dir, c, err);
        key[i] = crt[i] ? read_made(dir, k, err) : NULL;
        conf[i] = ml_nebula_export_config(b, i);
        ok = key[i] && test_config(dir, t->nodes[i].name, conf[i], lighthouse, err);
    }
    ml_rundir_remove(dir);
    if (ok) {
        ml_bundle_add(b, "nebula/ca.crt", g_strdup(ca), 0, SIZE_MAX, NULL,
                      "nebula's CA certificate (every node holds it)");
        ml_bundle_add(b, "nebula/ca.key", g_strdup(cakey), ML_BUNDLE_SECRET, SIZE_MAX, NULL,
                      "nebula's CA key: signs new nodes; keep it offline, never on the VPS");
        ml_bundle_add(b, "nebula/make-certs.sh", g_string_free(script, FALSE), 0, SIZE_MAX, NULL,
                      "the nebula-cert commands that made the CA and the certificates");
        script = NULL;
        for (size_t i = 0; i < t->n_nodes; i++) {
            const char *n = t->nodes[i].name;
            g_autofree char *rc = g_strdup_printf("nebula/%s/config.yml", n);
            g_autofree char *rcrt = g_strdup_printf("nebula/%s/host.crt", n);
            g_autofree char *rkey = g_strdup_printf("nebula/%s/host.key", n);
            g_autofree char *rca = g_strdup_printf("nebula/%s/ca.crt", n);
            g_autofree char *ru = g_strdup_printf("nebula/%s/nebula-meshlab.service", n);
            ml_bundle_checked(b, rc, "nebula -test, with its certificate and key");
            ml_bundle_add(b, rc, g_strdup(conf[i]), 0, i, "/etc/nebula/config.yml",
                          "nebula's config");
            ml_bundle_add(b, rcrt, g_strdup(crt[i]), 0, i, "/etc/nebula/host.crt",
                          "its nebula certificate");
            ml_bundle_add(b, rkey, g_strdup(key[i]), ML_BUNDLE_SECRET, i, "/etc/nebula/host.key",
                          "its nebula private key");
            ml_bundle_add(b, rca, g_strdup(ca), 0, i, "/etc/nebula/ca.crt",
                          "the CA certificate it trusts");
            ml_bundle_add(b, ru, g_strdup(export_unit), 0, i, EXPORT_UNIT_PATH,
                          "the systemd unit that runs nebula");
            if (i != t->hub)
                ml_bundle_client_command(b, i, EXPORT_START);
        }
        ml_bundle_hub_file(b, "/etc/nebula/config.yml", conf[t->hub], 0600);
        ml_bundle_hub_file(b, "/etc/nebula/host.crt", crt[t->hub], 0600);
        ml_bundle_hub_file(b, "/etc/nebula/host.key", key[t->hub], 0600);
        ml_bundle_hub_file(b, "/etc/nebula/ca.crt", ca, 0644);
        ml_bundle_hub_file(b, EXPORT_UNIT_PATH, export_unit, 0644);
        ml_bundle_hub_package(b, "nebula", "nebula");
        ml_bundle_hub_command(b, EXPORT_START);
    }
    if (script)
        g_string_free(script, TRUE);
    if (cakey)
        explicit_bzero(cakey, strlen(cakey));
    ml_bundle_keys_free(key, crt);
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_free(conf[i]);
    return ok;
}

/* What export --verify adds on a client beside the exported files: the admin console the lab
 * reads nebula's view through (ml_nebula_view_cmd), with keys made there, as a drop-in that the
 * exported unit's `-config /etc/nebula/` merges with config.yml. */
static const char verify_console[] =
    "set -e; umask 077; cd /etc/nebula; "
    "rm -f admin_key admin_key.pub ssh_host_ed25519_key ssh_host_ed25519_key.pub; "
    "ssh-keygen -q -t ed25519 -N '' -f admin_key; "
    "ssh-keygen -q -t ed25519 -N '' -f ssh_host_ed25519_key; "
    "printf 'sshd:\\n  enabled: true\\n  listen: " ML_NEBULA_ADMIN "\\n"
    "  host_key: /etc/nebula/ssh_host_ed25519_key\\n  authorized_users:\\n"
    "    - user: meshlab\\n      keys: [\"%s\"]\\n' \"$(cat admin_key.pub)\" "
    "> zz-meshlab-admin.yml";

bool ml_nebula_verify_settle(struct ml_lab *lab, GError **err)
{
    const struct ml_topology *t = lab->topo;
    bool clients[ML_MAX_NODES] = {0};
    const char *cmds[ML_MAX_NODES] = {0};
    g_autofree char *cmd = g_strdup_printf("[ -f /etc/nebula/zz-meshlab-admin.yml ] || { %s; }; "
                                           "systemctl restart nebula-meshlab.service",
                                           verify_console);
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        clients[i] = i != t->hub;
        cmds[i] = clients[i] ? cmd : NULL;
    }
    ml_progress("nebula", "restarting the exported nebula on the clients, the lab's admin console "
                          "beside its config");
    if (!ml_lab_run_parallel(lab, clients, cmds, NULL, 60, NULL, "restarting the exported nebula",
                             err))
        return false;
    return ml_lab_wait_ping(lab, ml_nebula_address(t, t->measure.server), 90, "nebula", err);
}
