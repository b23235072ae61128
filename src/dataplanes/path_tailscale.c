/* tailscale-direct and tailscale-relay: tailscaled on the clients, Headscale
 * with its embedded DERP server on the hub, the relay policy forcing DERP.
 * The binaries come from the host's verified cache on each guest's artifacts
 * CD; the guests never download anything. */
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "virt/agent.h"
#include "cache/artifacts.h"
#include "virt/daemon.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "topology/plan.h"
#include "topology/ports.h"
#include "dataplanes/tailscale.h"
#include "core/util.h"

#define AUTHKEY_GUEST "/run/meshlab/authkey"
#define TS_SOCKET "/run/tailscale/tailscaled.sock"
#define HS_SOCKET "/var/run/headscale/headscale.sock"
#define HS "headscale -c " ML_HEADSCALE_CONFIG_PATH

/* Both daemons log to stderr, which systemd-run hands to the journal under the unit's name.
 * `headscale configtest` loads the config as serve would and exits non-zero with the reason
 * (headscale cmd/headscale/cli/configtest.go; -c is the root command's --config flag). */
static const struct ml_daemon headscale_daemon = {
    .name = "headscale",
    .unit = "meshlab-headscale",
    .prepare = "mkdir -p /var/run/headscale && " HS " configtest",
    .command = "/usr/local/bin/headscale serve -c " ML_HEADSCALE_CONFIG_PATH,
    .ready = "[ -S " HS_SOCKET " ] && " HS " users list >/dev/null 2>&1",
    .timeout_s = 60,
};

/* --no-logs-no-support: tailscaled uploads its logs unless told not to (tailscale
 * cmd/tailscaled/tailscaled.go:225 defines the flag, :321-322 sets envknob NoLogsNoSupport;
 * logpolicy/logpolicy.go:718 disables logging on it; the same lines at v1.102.3 and de9ec7e).
 * Without it logtail retries log.tailscale.com and, failing, fetches bootstrap DNS over HTTPS
 * from the DERP server (logpolicy.go:846-851), the hub: bytes on the hub's NIC during a check
 * that wants it quiet. SSL_CERT_DIR: tailscaled, and no other program of the guest, trusts the
 * lab's CA (tailscale.h, ML_HEADSCALE_CA_DIR).
 * TS_DEBUG_OMIT_LOCAL_ADDRS: tailscaled offers its peers every address of every interface
 * (net/netmon/state.go LocalAddresses; only zt* and wt0 are skipped), and in a lab with the
 * other dataplanes those are their tunnels': client-b logged "endpoints changed:
 * 192.0.2.12:41641 (stun), 10.8.0.3:41641 (local), 10.9.0.3:41641 (local), ..." when nebula
 * stopped on it. Each tunnel that came or went (nebula and tinc restart at every policy
 * change) sent new endpoints through Headscale to every node, and disco pings into the other
 * tunnels, several of them through the hub: 9 to 10 kB on the hub within a check's three
 * seconds, where its ceiling allows 4,096 bytes of chatter (issue 37's run of the seed lab with
 * every path: tailscale-relay and tailscale-peer-relay failed their checks by that much). The
 * knob (wgengine/magicsock/magicsock.go:1325) drops the interface addresses from the endpoints;
 * the one a STUN to the hub's DERP finds (192.0.2.12:41641, the bridge address, or the NAT's
 * mapping) stays, so the direct path is the one the seed's guests, with eth0 alone, had. */
static const struct ml_daemon tailscaled_daemon = {
    .name = "tailscaled",
    .unit = "meshlab-tailscaled",
    .prepare = "mkdir -p /var/lib/tailscale",
    .command =
        "/usr/bin/env SSL_CERT_DIR=" ML_HEADSCALE_CA_DIR " TS_DEBUG_OMIT_LOCAL_ADDRS=1 "
        "/usr/local/sbin/tailscaled "
        "--state=/var/lib/tailscale/tailscaled.state "
        "--socket=" TS_SOCKET " --port=" G_STRINGIFY(ML_PORT_TAILSCALED) " --no-logs-no-support",
    .ready = "[ -S " TS_SOCKET " ]",
    .timeout_s = 60,
};

static char *describe_direct(const struct ml_topology *t)
{
    return g_strdup_printf("tailscaled, %s to %s directly (Headscale on %s)",
                           t->nodes[t->measure.client].name, t->nodes[t->measure.server].name,
                           t->nodes[t->hub].name);
}

static char *describe_relay(const struct ml_topology *t)
{
    return g_strdup_printf("tailscaled, %s to %s through Headscale's DERP relay on %s (UDP "
                           "between the clients dropped)",
                           t->nodes[t->measure.client].name, t->nodes[t->measure.server].name,
                           t->nodes[t->hub].name);
}

static char *describe_peer_relay(const struct ml_topology *t)
{
    return g_strdup_printf("tailscaled, %s to %s through %s's tailscaled as a peer relay (UDP %d; "
                           "UDP between the clients dropped)",
                           t->nodes[t->measure.client].name, t->nodes[t->measure.server].name,
                           t->nodes[t->hub].name, ML_PORT_PEER_RELAY);
}

extern const struct ml_dataplane ml_dataplane_tailscale;

/* The address Headscale gave node, from the dataplane's state ("" before it joined):
 * {"addresses": {NODE: IP}}. */
static const char *ts_ip(const struct ml_lab *lab, size_t node)
{
    struct json_object *state = NULL, *addrs = NULL, *ip = NULL;
    if (lab->dataplanes &&
        json_object_object_get_ex(lab->dataplanes, ml_dataplane_tailscale.name, &state) &&
        json_object_object_get_ex(state, "addresses", &addrs) &&
        json_object_object_get_ex(addrs, lab->topo->nodes[node].name, &ip) &&
        json_object_is_type(ip, json_type_string))
        return json_object_get_string(ip);
    return "";
}

/* Headscale assigns the addresses when the nodes join. */
static struct in_addr target(const struct ml_lab *lab)
{
    struct in_addr a = {0};
    inet_pton(AF_INET, ts_ip(lab, lab->topo->measure.server), &a);
    return a;
}

static bool available(const struct ml_lab *lab, char **ret_reason)
{
    (void)lab;
    g_autoptr(GString) missing = g_string_new(NULL);
    if (!ml_artifacts_missing(ml_cache_dir(), missing))
        return true;
    g_strchomp(missing->str);
    g_auto(GStrv) files = g_strsplit(missing->str, "\n", -1);
    g_autofree char *list = g_strjoinv(", ", files);
    *ret_reason = g_strdup_printf("artifacts missing: Tailscale " ML_TAILSCALE_VERSION
                                  " and Headscale " ML_HEADSCALE_VERSION " need %s; 'meshlab "
                                  "fetch tailscale headscale' downloads them, or builds them "
                                  "from their Go modules where the publishers cannot be reached "
                                  "(docs/tailscale.md)",
                                  list);
    return false;
}

/* A lab that measures tailscale-peer-relay runs tailscaled on the hub too, as the clients' peer
 * relay; every other lab's hub runs Headscale alone, as in the seed. */
static bool wants_peer_relay(const struct ml_topology *t)
{
    return ml_topology_has_path(t, "tailscale-peer-relay");
}

static void artifacts(const struct ml_lab *lab, size_t node, GPtrArray *files)
{
    const char *cache = ml_cache_dir();
    if (node == lab->topo->hub) {
        g_ptr_array_add(files, ml_artifact_path(cache, "headscale"));
        if (!wants_peer_relay(lab->topo))
            return;
    }
    g_autofree char *dir = ml_artifact_path(cache, "tailscale");
    g_ptr_array_add(files, g_build_filename(dir, "tailscale", NULL));
    g_ptr_array_add(files, g_build_filename(dir, "tailscaled", NULL));
}

/* Copies the binaries from the artifacts CD into the guest. */
static const char install_cmd[] =
    "set -e; mkdir -p /mnt/meshlab; mountpoint -q /mnt/meshlab || "
    "mount -o ro LABEL=MESHLAB /mnt/meshlab; for f in /mnt/meshlab/*; do "
    "case \"$(basename \"$f\")\" in headscale*) install -m 0755 \"$f\" /usr/local/bin/headscale;; "
    "tailscaled) install -m 0755 \"$f\" /usr/local/sbin/tailscaled;; "
    "tailscale) install -m 0755 \"$f\" /usr/local/bin/tailscale;; esac; done; "
    "umount /mnt/meshlab";

static bool run_on(struct ml_lab *lab, size_t node, const char *cmd, const char *input,
                   double timeout, char **ret_out, GError **err)
{
    char *out = ml_agent_run(lab->dom[node], cmd, input, timeout, err);
    if (!out)
        return false;
    if (ret_out)
        *ret_out = out;
    else
        g_free(out);
    return true;
}

/* Headscale on the hub: the lab CA and certificate, config, policy, the daemon,
 * the user and a pre-auth key. The key goes to *ret_key only. */
static bool start_headscale(struct ml_lab *lab, char **ret_ca, char **ret_key, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t hub = t->hub;
    char hub_ip[16];
    ml_ip_str(t->nodes[hub].address, hub_ip);
    g_autofree char *ca_script = ml_lab_ca_hub_script(ML_HEADSCALE_HOSTNAME, hub_ip);
    g_autofree char *config = ml_headscale_config(hub_ip, ML_HEADSCALE_URL);
    g_autofree char *policy = ml_headscale_policy();
    if (!run_on(lab, hub, install_cmd, NULL, 60, NULL, err) ||
        !run_on(lab, hub, "sh -s", ca_script, 60, ret_ca, err) ||
        !run_on(lab, hub,
                "set -e; umask 022; mkdir -p /etc/headscale /var/lib/headscale; "
                "cat > " ML_HEADSCALE_CONFIG_PATH,
                config, 30, NULL, err) ||
        !run_on(lab, hub, "umask 022; cat > " ML_HEADSCALE_POLICY_PATH, policy, 30, NULL, err) ||
        !ml_daemon_start(lab, hub, &headscale_daemon, NULL, err))
        return false;
    ml_progress("tailscale", "headscale %s serving %s on the hub", ML_HEADSCALE_VERSION,
                ML_HEADSCALE_URL);
    g_autofree char *users = NULL;
    if (!run_on(lab, hub, HS " users create lab >/dev/null 2>&1; " HS " users list -o json", NULL,
                60, &users, err)) {
        ml_daemon_alive(lab, hub, &headscale_daemon, err);
        return false;
    }
    long id = 0;
    if (!ml_headscale_user_id(users, "lab", &id, err))
        return false;
    g_autofree char *cmd = g_strdup_printf("headscale -c " ML_HEADSCALE_CONFIG_PATH
                                           " preauthkeys create --user %ld --reusable "
                                           "--expiration 2h -o json",
                                           id);
    /* The reply carries the key: it is parsed here and never logged. */
    struct ml_exec ex = {0};
    if (!ml_agent_exec(lab->dom[hub], cmd, NULL, 30, &ex, err))
        return false;
    if (ex.exit_code != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "headscale could not create a pre-auth key "
                    "(status %d)",
                    ex.exit_code);
        ml_exec_clear(&ex);
        return false;
    }
    *ret_key = ml_headscale_preauthkey_parse(ex.out, err);
    ml_exec_clear(&ex);
    return *ret_key != NULL;
}

/* Headscale's own list of nodes (headscale nodes list -o json: the CLI marshals the gRPC
 * ListNodes reply with its snake_case json tags, name, given_name, ip_addresses) must hold every
 * client with the address the client reported. */
static bool check_nodes(struct ml_lab *lab, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t hub = t->hub;
    g_autofree char *json = NULL;
    GPtrArray *nodes = NULL;
    if (!run_on(lab, hub, HS " nodes list -o json", NULL, 30, &json, err) ||
        !ml_headscale_nodes_parse(json, &nodes, err))
        return false;
    bool ok = true;
    for (size_t i = 0; ok && i < lab->plan->n_guests; i++)
        if (i != hub)
            ok = ml_headscale_nodes_check(nodes, t->nodes[i].name, ts_ip(lab, i), err);
    if (ok)
        ml_progress("tailscale", "headscale lists %u nodes, each with the address it reported",
                    nodes->len);
    g_ptr_array_unref(nodes);
    return ok;
}

/* The guests that join: every node but the hub. */
static void clients_of(const struct ml_lab *lab, bool which[ML_MAX_NODES])
{
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        which[i] = i != lab->topo->hub;
}

/* One step of the join on every client at once: cmd, with input on its stdin; their outputs in
 * out (may be NULL). The seconds it took go into times under key. */
static bool join_step(struct ml_lab *lab, const char *cmd, const char *input, double timeout,
                      char **out, const char *what, struct json_object *times, double *ret_s,
                      GError **err)
{
    bool which[ML_MAX_NODES];
    clients_of(lab, which);
    const char *cmds[ML_MAX_NODES], *inputs[ML_MAX_NODES];
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        cmds[i] = cmd;
        inputs[i] = input;
    }
    double t0 = ml_now();
    bool ok = ml_lab_run_parallel(lab, which, cmds, inputs, timeout, out, what, err);
    *ret_s = ml_now() - t0;
    json_object_object_add(times, what, json_object_new_double(*ret_s));
    return ok;
}

/* Every client at once (the seed joined one after the other, 55 s apart under TCG): the binaries,
 * the lab CA for tailscaled, tailscaled, the key, `tailscale up`, the address. Where the seconds
 * went is kept in the state's join_s. */
static bool join_clients(struct ml_lab *lab, struct json_object *state, const char *ca,
                         const char *key, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t hub = t->hub;
    char hub_ip[16];
    ml_ip_str(t->nodes[hub].address, hub_ip);
    g_autofree char *trust = ml_lab_ca_client_script(ca, ML_HEADSCALE_HOSTNAME, hub_ip);
    if (!trust) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the hub returned no usable lab CA certificate");
        return false;
    }
    struct json_object *times = json_object_new_object();
    json_object_object_add(state, "join_s", times);
    double install_s = 0, trust_s = 0, start_s = 0, key_s = 0, up_s = 0, ip_s = 0;
    if (!join_step(lab, install_cmd, NULL, 60, NULL, "install", times, &install_s, err) ||
        !join_step(lab, "sh -s", trust, 60, NULL, "trust the lab CA", times, &trust_s, err))
        return false;
    double t0 = ml_now();
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        struct ml_daemon tailscaled_ts = ml_tailscaled_on(lab, i);
        if (i != hub && !ml_daemon_start(lab, i, &tailscaled_ts, NULL, err))
            return false;
    }
    start_s = ml_now() - t0;
    json_object_object_add(times, "start tailscaled", json_object_new_double(start_s));
    /* The key is written only once tailscaled is up, and goes whatever tailscale up does. */
    if (!join_step(lab, "set -e; umask 077; mkdir -p /run/meshlab; cat > " AUTHKEY_GUEST, key, 30,
                   NULL, "the key", times, &key_s, err))
        return false;
    bool which[ML_MAX_NODES];
    clients_of(lab, which);
    const char *cmds[ML_MAX_NODES] = {0};
    g_autofree char *joins[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        if (!which[i])
            continue;
        g_autofree char *up = ml_tailscale_up_command(ML_HEADSCALE_URL, t->nodes[i].name,
                                                      AUTHKEY_GUEST);
        joins[i] = g_strdup_printf("trap 'rm -f " AUTHKEY_GUEST "' EXIT; set -e; %s --timeout=60s",
                                   up);
        cmds[i] = joins[i];
    }
    t0 = ml_now();
    if (!ml_lab_run_parallel(lab, which, cmds, NULL, 120, NULL, "tailscale up", err)) {
        for (size_t i = 0; i < lab->plan->n_guests; i++)
            if (which[i] && !ml_daemon_alive(lab, i, &tailscaled_daemon, err))
                break;
        return false;
    }
    up_s = ml_now() - t0;
    json_object_object_add(times, "tailscale up", json_object_new_double(up_s));
    char *ips[ML_MAX_NODES] = {0};
    bool ok = join_step(lab, "tailscale ip -4", NULL, 30, ips, "tailscale ip", times, &ip_s, err);
    struct json_object *addrs = json_object_new_object();
    json_object_object_add(state, "addresses", addrs);
    for (size_t i = 0; ok && i < lab->plan->n_guests; i++) {
        if (!which[i])
            continue;
        /* The address goes into commands on the other client: only a checked one. */
        char checked[INET_ADDRSTRLEN];
        ok = ml_tailscale_ip_parse(ips[i], checked, err);
        if (!ok) {
            g_prefix_error(err, "%s: ", t->nodes[i].name);
            break;
        }
        json_object_object_add(addrs, t->nodes[i].name, json_object_new_string(checked));
        ml_progress("tailscale", "%s joined as %s", t->nodes[i].name, checked);
    }
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_free(ips[i]);
    if (!ok)
        return false;
    ml_progress("tailscale",
                "the clients joined at once: the binaries installed in %.1f s, the lab CA in "
                "%.1f s, tailscaled started in %.1f s, the key in %.1f s, tailscale up to the "
                "first netmap (up waits for it) in %.1f s, the addresses read in %.1f s",
                install_s, trust_s, start_s, key_s, up_s, ip_s);
    return check_nodes(lab, err);
}

char *ml_tailscale_observe_cmd(const struct ml_lab *lab, size_t node)
{
    if (node == lab->topo->hub)
        return g_strdup("ps -o rss= -C headscale | head -1; free -m | awk '/^Mem:/{print $3}'");
    /* tailscale0 is where tailscaled runs: behind a NAT, in its namespace. The CLI reaches
     * the daemon through its socket from anywhere. */
    return g_strdup_printf("ps -o rss= -C tailscaled | head -1; free -m | awk '/^Mem:/{print $3}'; "
                           "%sip -d -o link show tailscale0 | grep -o 'mtu [0-9]*\\|tun' | "
                           "tr '\\n' ' '; echo; tailscale ip | tr '\\n' ' '",
                           ml_lab_netns_prefix(lab, node));
}

/* What the seed recorded beside the numbers: idle RSS, memory, the tun link, addresses. Every
 * guest at once, since it runs inside the first direct settle, whose seconds count as the policy
 * switch's; a guest that does not answer is recorded without them. */
static struct json_object *observe(struct ml_lab *lab)
{
    const struct ml_topology *t = lab->topo;
    struct json_object *o = json_object_new_object();
    long long pids[ML_MAX_NODES];
    bool spawned[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        g_autofree char *cmd = ml_tailscale_observe_cmd(lab, i);
        spawned[i] = ml_agent_spawn(lab->dom[i], cmd, NULL, &pids[i], NULL);
    }
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        bool hub = i == t->hub;
        struct ml_exec ex = {0};
        bool ran =
            spawned[i] && ml_agent_wait(lab->dom[i], pids[i], 30, &ex, NULL) && ex.exit_code == 0;
        struct json_object *g = json_object_new_object();
        g_auto(GStrv) lines = g_strsplit(ran && ex.out ? ex.out : "", "\n", -1);
        ml_exec_clear(&ex);
        guint nl = g_strv_length(lines);
        if (nl > 0 && *g_strstrip(lines[0]))
            json_object_object_add(g, hub ? "headscale_rss_kib" : "tailscaled_rss_kib",
                                   json_object_new_int64(g_ascii_strtoll(lines[0], NULL, 10)));
        if (nl > 1 && *g_strstrip(lines[1]))
            json_object_object_add(g, "memory_used_mib",
                                   json_object_new_int64(g_ascii_strtoll(lines[1], NULL, 10)));
        if (!hub && nl > 2)
            json_object_object_add(g, "tailscale0", json_object_new_string(g_strstrip(lines[2])));
        if (!hub && nl > 3)
            json_object_object_add(g, "addresses", json_object_new_string(g_strstrip(lines[3])));
        json_object_object_add(o, t->nodes[i].name, g);
    }
    return o;
}

static bool relay_grant(struct ml_lab *lab, bool grant, GError **err);

/* The hub's tailscaled, joined after the clients (so they keep the addresses a lab without it
 * gives them) and serving as a peer relay on ML_PORT_PEER_RELAY; then Headscale's policy in the
 * form relay_grant switches, by the addresses just given, without the grant for now. */
static bool join_hub_relay(struct ml_lab *lab, struct json_object *state, const char *ca,
                           const char *key, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t hub = t->hub;
    const char *name = t->nodes[hub].name;
    char hub_ip[16];
    ml_ip_str(t->nodes[hub].address, hub_ip);
    g_autofree char *trust = ml_lab_ca_client_script(ca, ML_HEADSCALE_HOSTNAME, hub_ip);
    struct ml_daemon d = ml_tailscaled_on(lab, hub);
    g_autofree char *up = ml_tailscale_up_command(ML_HEADSCALE_URL, name, AUTHKEY_GUEST);
    g_autofree char *join =
        g_strdup_printf("trap 'rm -f " AUTHKEY_GUEST "' EXIT; set -e; %s --timeout=60s", up);
    g_autofree char *ip = NULL;
    double t0 = ml_now();
    if (!trust) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the hub returned no usable lab CA certificate");
        return false;
    }
    if (!run_on(lab, hub, "sh -s", trust, 60, NULL, err) ||
        !ml_daemon_start(lab, hub, &d, NULL, err) ||
        !run_on(lab, hub, "set -e; umask 077; mkdir -p /run/meshlab; cat > " AUTHKEY_GUEST, key, 30,
                NULL, err))
        return false;
    if (!run_on(lab, hub, join, NULL, 120, NULL, err)) {
        ml_daemon_alive(lab, hub, &tailscaled_daemon, err);
        return false;
    }
    if (!run_on(lab, hub, "tailscale set --relay-server-port=" G_STRINGIFY(ML_PORT_PEER_RELAY),
                NULL, 30, NULL, err) ||
        !run_on(lab, hub, "tailscale ip -4", NULL, 30, &ip, err))
        return false;
    char checked[INET_ADDRSTRLEN];
    if (!ml_tailscale_ip_parse(ip, checked, err)) {
        g_prefix_error(err, "%s: ", name);
        return false;
    }
    struct json_object *addrs = NULL;
    if (!json_object_object_get_ex(state, "addresses", &addrs)) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST, "the clients' addresses were not kept");
        return false;
    }
    json_object_object_add(addrs, name, json_object_new_string(checked));
    ml_progress("tailscale",
                "%s joined as %s and serves as a peer relay on UDP %d (%.1f s); Headscale "
                "grants the clients tailscale.com/cap/relay to it while a path that may use "
                "it is measured",
                name, checked, ML_PORT_PEER_RELAY, ml_now() - t0);
    return relay_grant(lab, false, err);
}

/* Whether the clients may use the hub's peer relay: Headscale's policy with or without the
 * grant of tailscale.com/cap/relay (relay_grant_send: *ret_changed when it was not in force),
 * and each client's candidate relays (`tailscale debug peer-relay-servers`) showing the hub, or
 * not (relay_grant_wait), before the path's passes. A client with a
 * candidate relay discovers a relay path whenever its direct address is no longer trusted
 * (idle 6.5 s) and 30 s passed since the last discovery (tailscale wgengine/magicsock
 * endpoint.go:905-940 wantUDPRelayPathDiscoveryLocked, magicsock.go:4032-4044 at v1.102.5), so
 * every direct flow that starts after a pause would pay the relay for it: in CI's seed lab with
 * every dataplane, 9.7 to 15.2 kB on the hub in a direct pass's first second, 1.3 % of a 4 s
 * fixed-rate pass. Without candidates the clients never start it (endpoint.go:909). The seed's
 * two paths have no peer relay, and their passes do not pay for one: the grant is there for
 * tailscale-peer-relay only. tailscale-auto goes without it too: it is measured in the direct
 * policy's group, beside tailscale-direct and settled after it, and its view knows direct and
 * DERP (verify_auto). Nothing is done in a lab whose hub is no relay, nor where the policy last
 * in force already says what is wanted (one call on the hub compares it). */
/* Headscale's policy with or without the grant, by the addresses the clients and the hub were
 * given; NULL in a lab whose hub is no relay (join_hub_relay gave it none). */
static char *relay_policy(struct ml_lab *lab, bool grant)
{
    const struct ml_topology *t = lab->topo;
    struct json_object *state = ml_dataplane_state(lab, &ml_dataplane_tailscale);
    struct json_object *relay = NULL, *addrs = NULL;
    if (!json_object_object_get_ex(state, "addresses", &addrs) ||
        !json_object_object_get_ex(addrs, t->nodes[t->hub].name, &relay))
        return NULL;
    const char *relay_ip = json_object_get_string(relay);
    const char *from[ML_MAX_NODES];
    size_t n = 0;
    for (size_t i = 0; i < t->n_nodes && n < ML_MAX_NODES; i++) {
        struct json_object *a = NULL;
        if (i != t->hub && json_object_object_get_ex(addrs, t->nodes[i].name, &a))
            from[n++] = json_object_get_string(a);
    }
    return ml_headscale_policy_relay(relay_ip, from, n, grant);
}

/* On the hub, the policy on stdin: compared with the policy last seen in force (.applied,
 * written once the clients agreed), not with the file, so that a reload or a wait that failed is
 * done again at the next call; where it differs, written and Headscale reloaded, and "changed"
 * printed. */
static const char relay_send_cmd[] =
    "set -e; umask 022; cat > " ML_HEADSCALE_POLICY_PATH ".new; "
    "if cmp -s " ML_HEADSCALE_POLICY_PATH ".new " ML_HEADSCALE_POLICY_PATH ".applied; "
    "then rm -f " ML_HEADSCALE_POLICY_PATH ".new; else rm -f " ML_HEADSCALE_POLICY_PATH
    ".applied; mv " ML_HEADSCALE_POLICY_PATH ".new " ML_HEADSCALE_POLICY_PATH "; "
    "systemctl kill --signal=SIGHUP meshlab-headscale.service; echo changed; fi";

static bool relay_grant_send(struct ml_lab *lab, bool grant, bool *ret_changed, GError **err)
{
    g_autofree char *policy = relay_policy(lab, grant);
    g_autofree char *changed = NULL;
    *ret_changed = false;
    if (!policy)
        return true;
    if (!run_on(lab, lab->topo->hub, relay_send_cmd, policy, 30, &changed, err))
        return false;
    *ret_changed = strstr(changed, "changed") != NULL;
    return true;
}

/* After relay_grant_send changed the policy: until every client's candidate relays say what it
 * wants (60 s at most), then the policy is kept as the one in force. */
static bool relay_grant_wait(struct ml_lab *lab, bool grant, double since, GError **err)
{
    const struct ml_topology *t = lab->topo;
    struct json_object *state = ml_dataplane_state(lab, &ml_dataplane_tailscale);
    struct json_object *addrs = json_object_object_get(state, "addresses");
    const char *relay_ip =
        json_object_get_string(json_object_object_get(addrs, t->nodes[t->hub].name));
    /* relay_ip is a checked dotted quad (join_hub_relay): nothing in it for the shell. Until the
     * CLI answers and its list says what is wanted: a CLI that fails is no answer either way.
     * The list is a JSON array of the candidate relays' addresses, sorted, each quoted
     * (tailscale ipn/localapi/debug.go:225-232 encodes magicsock PeerRelays(), printed by
     * cmd/tailscale/cli/debug.go:1433-1445, at v1.102.5). */
    g_autofree char *wait =
        grant ? g_strdup_printf("timeout 60 sh -c 'until tailscale debug peer-relay-servers | "
                                "grep -q \"\\\"%s\\\"\"; do sleep 0.2; done'",
                                relay_ip)
              : g_strdup_printf("timeout 60 sh -c 'until o=$(tailscale debug peer-relay-servers) "
                                "&& ! printf %%s \"$o\" | grep -q \"\\\"%s\\\"\"; do sleep 0.2; "
                                "done'",
                                relay_ip);
    /* Every client at once: each list is its own, from the same netmap push. */
    bool which[ML_MAX_NODES] = {0};
    const char *cmds[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        which[i] = i != t->hub;
        cmds[i] = wait;
    }
    if (!ml_lab_run_parallel(lab, which, cmds, NULL, 90, NULL,
                             "waiting for `tailscale debug peer-relay-servers` to show it", err)) {
        g_prefix_error(err,
                       "Headscale's policy %s the peer relay %s, and the clients did not agree "
                       "within 60 s (see headscale's log on %s: journalctl -u "
                       "meshlab-headscale): ",
                       grant ? "grants" : "no longer grants", relay_ip, t->nodes[t->hub].name);
        return false;
    }
    ml_progress(
        "tailscale", "the clients %s the hub's peer relay (seen %.1f s after the policy %s it)",
        grant ? "may use" : "no longer know", ml_now() - since, grant ? "granted" : "withdrew");
    /* Kept as the policy in force, and Headscale still running, in one call; where it is not,
     * ml_daemon_alive says why from its journal. */
    struct ml_exec ex = {0};
    if (!ml_agent_exec(lab->dom[t->hub],
                       "cp " ML_HEADSCALE_POLICY_PATH " " ML_HEADSCALE_POLICY_PATH ".applied && "
                       "echo kept; systemctl is-active --quiet meshlab-headscale",
                       NULL, 30, &ex, err))
        return false;
    bool kept = ex.out && strstr(ex.out, "kept"), alive = ex.exit_code == 0;
    ml_exec_clear(&ex);
    if (!alive)
        return ml_daemon_alive(lab, t->hub, &headscale_daemon, err);
    if (!kept)
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "%s: Headscale's policy could not be kept as the one in force (%s.applied)",
                    t->nodes[t->hub].name, ML_HEADSCALE_POLICY_PATH);
    return kept;
}

static bool relay_grant(struct ml_lab *lab, bool grant, GError **err)
{
    bool changed = false;
    double t0 = ml_now();
    return relay_grant_send(lab, grant, &changed, err) &&
           (!changed || relay_grant_wait(lab, grant, t0, err));
}

static bool setup(struct ml_lab *lab, struct json_object *state, GError **err)
{
    double t0 = ml_now();
    g_autofree char *ca = NULL;
    g_autofree char *key = NULL;
    /* The key lives in this process's memory only: nothing on the host reads it
     * back, so no host file ever holds it. */
    bool ok = start_headscale(lab, &ca, &key, err) && join_clients(lab, state, ca, key, err);
    double setup_s = ml_now() - t0;
    ok = ok && (!wants_peer_relay(lab->topo) || join_hub_relay(lab, state, ca, key, err));
    if (key)
        memset(key, 0, strlen(key));
    if (!ok)
        return false;
    /* The seed's figure: both clients up, not the hub's relay after them. */
    json_object_object_add(state, "setup_s", json_object_new_double(setup_s));
    ml_progress("tailscale", "both clients up %.1f s after the installs began", setup_s);
    return true;
}

/* The client's per-path counters, its status, then its tailscale ping: own[2], own[0], own[1];
 * and its status again (own[3]) where the ping ponged by a direct address or a peer relay while
 * the first status trusted none.
 * The counters in a call of their own, first, timed (ev->counted_from, counted_to), with the
 * guest's uptime printed after them: the CLI is a Go program that took 1 to 3 s to start on a
 * loaded one-vCPU TCG guest, and reads the counters at its end, so an uptime printed before it
 * placed the reading seconds early (two direct passes of a sweep failed for it, the counters
 * 0.61 and 0.30 of a window's payload they had not yet been read for). After it, only the CLI's
 * last print and exit lie between the two. The status before the ping: it is the
 * view the probe's path is judged by (the hub's role of tailscale-auto, ml_path_role), and a
 * CLI ping changes the path, pinging every candidate address at once (tailscale
 * wgengine/magicsock/endpoint.go:983-1036 discoPing, de9ec7e) where the probe's traffic may
 * have gone by DERP. */
static void observe_path(struct ml_lab *lab, struct ml_evidence *ev)
{
    const struct ml_topology *t = lab->topo;
    virDomainPtr client = lab->dom[t->measure.client];
    g_autofree char *cmd =
        g_strdup_printf("tailscale ping -c 5 %s 2>&1", ts_ip(lab, t->measure.server));
    struct ml_exec ex = {0};
    g_autoptr(GError) e = NULL;
    double t0 = ml_now();
    ev->own[2] = ml_agent_run(client, "tailscale metrics print; " ML_UPTIME_COMMAND, NULL, 30, &e);
    if (ev->own[2]) {
        ev->counted_from = t0;
        ev->counted_to = ml_now();
    }
    g_clear_error(&e);
    ev->own[0] = ml_agent_run(client, "tailscale status --json", NULL, 30, &e);
    if (ev->own[0] && ml_agent_exec(client, cmd, NULL, 60, &ex, &e))
        ev->own[1] = g_strdup(ex.out ? ex.out : "");
    ml_exec_clear(&ex);
    if (!ev->own[1]) {
        ev->own_error = g_strdup_printf("cannot read tailscale's view: %s", e ? e->message : "?");
        return;
    }
    /* A status read while no address was trusted, the last pong on it over 6.5 s old
     * (magicsock endpoint.go:583-600 addrForSendLocked, populatePeerStatus at :2029-2050,
     * v1.102.5): the heartbeat pings every 3 s, and one pong lost or late under a loaded TCG guest
     * lapses it for a moment (CI at 84697bd: a direct pass's end view, CurAddr "" with the ping
     * after it direct). The ping's pong trusts the address again (handlePongConnLocked), and
     * the status after it says which; the counters say where the window's data went. */
    struct ml_ts_peer peer = {0};
    struct ml_ts_ping ping = {0};
    g_clear_error(&e);
    if (ml_tailscale_status_parse(ev->own[0], t->nodes[t->measure.server].name, &peer, NULL) &&
        !peer.direct && !*peer.peer_relay && ml_tailscale_ping_parse(ev->own[1], &ping, NULL) &&
        (ping.direct || *ping.peer_relay))
        ev->own[3] = ml_agent_run(client, "tailscale status --json", NULL, 30, &e);
}

/* The recorded ping and status of the server's peer entry, as a sentence; false
 * when they cannot be read or the client's route does not enter tailscale0. */
static bool view(const struct ml_topology *t, const struct ml_evidence *ev, struct ml_ts_ping *ping,
                 struct ml_ts_peer *peer, GString *sentence)
{
    g_autoptr(GError) e = NULL;
    if (ev->own_error || !ev->own[0] || !ev->own[1]) {
        g_string_append_printf(sentence, "%s; ", ev->own_error ? ev->own_error : "no view");
        return false;
    }
    if (!ml_tailscale_status_parse(ev->own[0], t->nodes[t->measure.server].name, peer, &e) ||
        !ml_tailscale_ping_parse(ev->own[1], ping, &e)) {
        g_string_append_printf(sentence, "cannot read tailscale's view: %s; ", e->message);
        return false;
    }
    struct ml_ts_peer before = *peer;
    if (ev->own[3] &&
        !ml_tailscale_status_parse(ev->own[3], t->nodes[t->measure.server].name, peer, &e)) {
        g_string_append_printf(sentence, "cannot read tailscale's status after the ping: %s; ",
                               e->message);
        return false;
    }
    if (ping->direct)
        g_string_append_printf(sentence, "tailscale ping: pong via %s in %.1f ms; ", ping->endpoint,
                               ping->latency_ms);
    else if (*ping->peer_relay)
        g_string_append_printf(sentence, "tailscale ping: pong via peer-relay(%s) in %.1f ms; ",
                               ping->peer_relay, ping->latency_ms);
    else if (ping->answered)
        g_string_append_printf(sentence, "tailscale ping: pong via DERP(%s) in %.1f ms; ",
                               ping->derp_region, ping->latency_ms);
    else
        g_string_append(sentence, "tailscale ping: no pong; ");
    if (ev->own[3])
        g_string_append_printf(sentence,
                               "tailscale status before the ping: CurAddr \"%s\", relay \"%s\" "
                               "(no address trusted: its last pong over 6.5 s old); after it: ",
                               before.cur_addr, before.relay);
    else
        g_string_append(sentence, "tailscale status: ");
    g_string_append_printf(sentence, "CurAddr \"%s\", relay \"%s\"%s%s%s; ", peer->cur_addr,
                           peer->relay, *peer->peer_relay ? ", PeerRelay \"" : "", peer->peer_relay,
                           *peer->peer_relay ? "\"" : "");
    /* tailscaled routes the tailnet through its own table 52, into tailscale0. */
    return ml_route_enters(&ev->rt, "tailscale0", sentence);
}

/* The client's tailscaled counters (own[2]): the path's own way must carry the payload, and no
 * other way may carry it as well (a direct path whose trust lapsed sends by DERP too: magicsock
 * endpoint.go addrForSendLocked, 6.5 s after the last pong). */
static size_t counts_for(const struct ml_topology *t, const struct ml_evidence *ev,
                         enum ml_ts_path want, struct ml_tunnel_count *ret, double *ret_at)
{
    *ret_at = NAN;
    if (ev->own_error || !ev->own[2])
        return 0;
    G_STATIC_ASSERT(ML_TS_PATHS <= ML_TUNNEL_COUNTS_MAX);
    return ml_tailscale_tunnel_counts(ev->own[2], t->nodes[t->measure.client].name, want, ret,
                                      ret_at);
}

static size_t counts_direct(const struct ml_topology *t, const struct ml_evidence *ev,
                            struct ml_tunnel_count *ret, double *ret_at)
{
    return counts_for(t, ev, ML_TS_DIRECT, ret, ret_at);
}

static size_t counts_relay(const struct ml_topology *t, const struct ml_evidence *ev,
                           struct ml_tunnel_count *ret, double *ret_at)
{
    return counts_for(t, ev, ML_TS_DERP, ret, ret_at);
}

static size_t counts_peer_relay(const struct ml_topology *t, const struct ml_evidence *ev,
                                struct ml_tunnel_count *ret, double *ret_at)
{
    return counts_for(t, ev, ML_TS_PEER_RELAY, ret, ret_at);
}

static bool verify_direct(const struct ml_topology *t, const struct ml_evidence *ev,
                          GString *sentence)
{
    struct ml_ts_ping ping = {0};
    struct ml_ts_peer peer = {0};
    bool seen = view(t, ev, &ping, &peer, sentence);
    char server[16];
    ml_ip_str(t->nodes[t->measure.server].address, server);
    return seen && ping.direct && g_str_has_prefix(ping.endpoint, server) &&
           ping.endpoint[strlen(server)] == ':' && peer.direct;
}

static bool verify_relay(const struct ml_topology *t, const struct ml_evidence *ev,
                         GString *sentence)
{
    struct ml_ts_ping ping = {0};
    struct ml_ts_peer peer = {0};
    bool seen = view(t, ev, &ping, &peer, sentence);
    return seen && ping.answered && !ping.direct &&
           !strcmp(ping.derp_region, ML_HEADSCALE_DERP_REGION) && !peer.direct &&
           !*peer.peer_relay && !strcmp(peer.relay, ML_HEADSCALE_DERP_REGION);
}

/* Whether a peer relay address ("IP:PORT:vni:N") is the hub's relay server. */
static bool hub_relay(const struct ml_topology *t, const char *addr)
{
    char hub[16];
    ml_ip_str(t->nodes[t->hub].address, hub);
    g_autofree char *want = g_strdup_printf("%s:%d:", hub, ML_PORT_PEER_RELAY);
    return g_str_has_prefix(addr, want);
}

/* The pong and the status both name the hub's relay server, and no direct address is in use. */
static bool verify_peer_relay(const struct ml_topology *t, const struct ml_evidence *ev,
                              GString *sentence)
{
    struct ml_ts_ping ping = {0};
    struct ml_ts_peer peer = {0};
    bool seen = view(t, ev, &ping, &peer, sentence);
    return seen && ping.answered && !ping.direct && hub_relay(t, ping.peer_relay) && !peer.direct &&
           hub_relay(t, peer.peer_relay);
}

/* A guest's tailscale pings to node `to`, twice a second, until a pong comes the way wanted or
 * timeout_s passed: a command that always succeeds and prints "reached" in the first case,
 * followed by what `then` prints (NULL: nothing). The
 * CLI sleeps a second after a pong that is not direct before it exits, even with -c 1
 * (cmd/tailscale/cli/ping.go:178-181 at v1.102.5), so each ping's first line is read from a
 * FIFO and the CLI stopped then: 0.5 to 0.7 s a ping by the peer relay on the seed lab's
 * client, against 1.3 s. */
static char *ping_command(const struct ml_lab *lab, size_t to, enum ml_ts_path want,
                          unsigned timeout_s, const char *then)
{
    const char *pat = want == ML_TS_DIRECT ? "\"pong from \"*\" via \"[0-9]*"
                      : want == ML_TS_DERP ? "*\"via DERP(\"*"
                                           : "*\"via peer-relay(\"*";
    /* Bounded inside the guest too, so no ping outlives this step into a measurement; the
     * FIFO's folder is removed on every way out. */
    return g_strdup_printf(
        "timeout %u sh -c 'd=$(mktemp -d); trap \"rm -rf $d\" EXIT; trap \"exit 1\" INT TERM; "
        "mkfifo $d/p; until tailscale ping -c 1 --timeout=2s %s >$d/p 2>&1 & read -r l <$d/p; "
        "kill $! 2>/dev/null; case \"$l\" in %s) true;; *) false;; esac; do sleep 0.5; done' "
        "&& { echo reached; %s; } || true",
        timeout_s, ts_ip(lab, to), pat, then ? then : "true");
}

/* The client's counters over a probe through tailscale0 (PROBE_PINGS pings of PROBE_BYTES to the
 * server): what tailscaled sent by each path meanwhile. probe_command prints them, probe_parse
 * reads them into *ret. */
#define PROBE_PINGS 10
#define PROBE_BYTES 1000
#define PROBE_MARK "--- meshlab probe ---"

static char *probe_command(const struct ml_lab *lab)
{
    const struct ml_topology *t = lab->topo;
    return g_strdup_printf("tailscale metrics print; echo '" PROBE_MARK
                           "'; %sping -q -n -c %d -i 0.02 -s %d -W 1 %s "
                           ">/dev/null 2>&1; echo '" PROBE_MARK "'; tailscale metrics print",
                           ml_lab_netns_prefix(lab, t->measure.client), PROBE_PINGS, PROBE_BYTES,
                           ts_ip(lab, t->measure.server));
}

static bool probe_parse(const char *out, struct ml_ts_path_bytes *ret, GError **err)
{
    g_auto(GStrv) parts = g_strsplit(out, PROBE_MARK "\n", 3);
    struct ml_ts_path_bytes before, after;
    if (g_strv_length(parts) != 3 || !ml_tailscale_metrics_parse(parts[0], &before, err) ||
        !ml_tailscale_metrics_parse(parts[2], &after, err)) {
        if (err && !*err)
            g_set_error(err, ML_ERROR, ML_ERR_MEASURE, "the probe's counters were not printed");
        return false;
    }
    for (int k = 0; k < ML_TS_PATHS; k++) {
        ret->out[k] = after.out[k] - before.out[k];
        ret->in[k] = after.in[k] - before.in[k];
    }
    return true;
}

static bool probe_paths(struct ml_lab *lab, struct ml_ts_path_bytes *ret, GError **err)
{
    g_autofree char *cmd = probe_command(lab);
    g_autofree char *out = ml_agent_run(lab->dom[lab->topo->measure.client], cmd, NULL, 60, err);
    return out && probe_parse(out, ret, err);
}

/* Both ends' pings at once, each to the other, until their pongs come the way wanted: the
 * client's for up to 90 s (*ret_reached: it got there), the server's for up to 30 s
 * (*ret_server). Each end looks for its own path: a side that never pinged a new peer relay
 * discovers it the first time its path's trust lapses, mid-pass (endpoint.go:905-940,
 * lastUDPRelayPathDiscovery zero; one reverse pass after a new grant ended with its relay path
 * silent for 5 s), and the data back to the client goes the server's way (probe_took). The
 * server's pings, once after the client's, took 1.6 and 1.7 s of the seed lab's peer relay
 * entries; beside them, none. The client's call probes the path (probe_command) once its pongs
 * came: *ret_probed where that probe's counters were read into *ret_probe. */
static bool ping_ends(struct ml_lab *lab, enum ml_ts_path want, bool *ret_reached, bool *ret_server,
                      struct ml_ts_path_bytes *ret_probe, bool *ret_probed, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t client = t->measure.client, server = t->measure.server;
    bool which[ML_MAX_NODES] = {0};
    const char *cmds[ML_MAX_NODES] = {0};
    char *out[ML_MAX_NODES] = {0};
    g_autofree char *probe = probe_command(lab);
    g_autofree char *to_server = ping_command(lab, server, want, 90, probe);
    g_autofree char *to_client = ping_command(lab, client, want, 30, NULL);
    which[client] = which[server] = true;
    cmds[client] = to_server;
    cmds[server] = to_client;
    bool ok = ml_lab_run_parallel(lab, which, cmds, NULL, 150, out, "tailscale ping", err);
    const char *reached = ok && out[client] ? strstr(out[client], "reached\n") : NULL;
    *ret_reached = reached != NULL;
    *ret_server = ok && out[server] && strstr(out[server], "reached");
    /* The client's first probe, right after its pings, in the same call; a probe that printed
     * no counters is run again by itself. */
    *ret_probed = reached && probe_parse(reached + strlen("reached\n"), ret_probe, NULL);
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_free(out[i]);
    return ok;
}

/* The client's pings alone (ping_command), for up to timeout_s. */
static bool ping_until(struct ml_lab *lab, enum ml_ts_path want, unsigned timeout_s,
                       bool *ret_reached, GError **err)
{
    const struct ml_topology *t = lab->topo;
    g_autofree char *cmd = ping_command(lab, t->measure.server, want, timeout_s, NULL);
    g_autofree char *out =
        ml_agent_run(lab->dom[t->measure.client], cmd, NULL, timeout_s + 30.0, err);
    if (!out)
        return false;
    *ret_reached = strstr(out, "reached") != NULL;
    return true;
}

/* What the seed recorded beside the numbers, once: the results show it with the first
 * measured path of the dataplane. */
static void observe_once(struct ml_lab *lab)
{
    struct json_object *state = ml_dataplane_state(lab, &ml_dataplane_tailscale);
    if (!json_object_object_get_ex(state, "observed", NULL))
        json_object_object_add(state, "observed", observe(lab));
}

/* Whether one direction of a probe went by path: nearly all of it (a stray packet of the switch
 * aside, 95 %), and at least what the probe itself carried. */
static bool way_took(const long long bytes[ML_TS_PATHS], enum ml_ts_path path)
{
    long long all = 0;
    for (int k = 0; k < ML_TS_PATHS; k++)
        all += bytes[k];
    return bytes[path] >= (long long)PROBE_PINGS * PROBE_BYTES && bytes[path] * 20 >= all * 19;
}

/* Whether a probe went by path both ways: what the client sent, and what came back to it (the
 * server's own choice of path: its ACKs by DERP while the client sent direct were 93 kB on the
 * hub in a direct pass's first second). */
static bool probe_took(const struct ml_ts_path_bytes *b, enum ml_ts_path path)
{
    return way_took(b->out, path) && way_took(b->in, path);
}

/* After a policy change, both ends forget the path they trusted (`tailscale debug rebind`:
 * magicsock's Rebind re-binds its sockets on their ports and resets every peer's best address,
 * wgengine/magicsock/magicsock.go:3840-3872 and endpoint.go:1671-1680 at v1.102.5), so that each
 * looks for the new one at once: pings to every candidate, and a peer relay path where one is
 * granted (endpoint.go:905-940). Without it an end goes on sending the old way until its trust
 * lapses (trustUDPAddrDuration, 6.5 s after the last pong) or its next full ping (5 s): the
 * seed lab's quickstart entered DERP 6.3 and 6.8 s after the grant's withdrawal, and the peer
 * relay 10.7, 5.1, 8.4 and 10.2 s after its grant. Before the grant changes, never after: a
 * client out of DERP finds the relay path as soon as its grant arrives, and a rebind then threw
 * that path away while the discovery that found it kept the next one 30 s off
 * (discoverUDPRelayPathsInterval, endpoint.go:921): the server's pings took 30.2 s. With
 * hub_cmd (its standard input hub_input, its output in *ret_hub_out) the hub runs it in the same
 * call, where the hub is neither end. */
static bool forget_paths(struct ml_lab *lab, const char *hub_cmd, const char *hub_input,
                         char **ret_hub_out, GError **err)
{
    const struct ml_topology *t = lab->topo;
    bool which[ML_MAX_NODES] = {0};
    const char *cmds[ML_MAX_NODES] = {0};
    const char *inputs[ML_MAX_NODES] = {0};
    char *out[ML_MAX_NODES] = {0};
    which[t->measure.client] = which[t->measure.server] = true;
    for (size_t i = 0; i < lab->plan->n_guests; i++)
        cmds[i] = "tailscale debug rebind";
    if (hub_cmd) {
        which[t->hub] = true;
        cmds[t->hub] = hub_cmd;
        inputs[t->hub] = hub_input;
    }
    bool ok = ml_lab_run_parallel(
        lab, which, cmds, inputs, 30, ret_hub_out ? out : NULL,
        hub_cmd ? "tailscale debug rebind, and Headscale's policy" : "tailscale debug rebind", err);
    if (ret_hub_out)
        *ret_hub_out = g_steal_pointer(&out[t->hub]);
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_free(out[i]);
    return ok;
}

/* forget_paths on the ends and relay_grant_send on the hub in one call, where the hub is neither
 * end: the rebind takes 0.3 s of a client under TCG, Headscale's push of a changed policy 1.3 s
 * and more (the seed lab's), so the ends have forgotten their paths before it arrives, as
 * forget_paths wants. */
static bool forget_and_send(struct ml_lab *lab, bool grant, bool *ret_changed, GError **err)
{
    const struct ml_topology *t = lab->topo;
    size_t hub = t->hub;
    g_autofree char *policy = relay_policy(lab, grant);
    *ret_changed = false;
    if (!policy || hub == t->measure.client || hub == t->measure.server)
        return forget_paths(lab, NULL, NULL, NULL, err) &&
               relay_grant_send(lab, grant, ret_changed, err);
    g_autofree char *out = NULL;
    bool ok = forget_paths(lab, relay_send_cmd, policy, &out, err);
    *ret_changed = ok && out && strstr(out, "changed");
    return ok;
}

/* After a policy change tailscale finds its new path by itself. Its ping answering the new way
 * is not enough: the data may go on by the old path for seconds after a disco pong (a direct
 * pass after a relay one measured DERP for 3 s). So the switch is done when, over a probe, the
 * client's own per-path counters say the data took the path wanted; probes repeat for up to 60 s
 * after the ping, and how long it took is said. Beyond that the check decides. */
static bool settle_on(struct ml_lab *lab, enum ml_ts_path path, GError **err)
{
    double t0 = ml_now();
    bool want_direct = path == ML_TS_DIRECT;
    const char *way = want_direct ? "direct" : path == ML_TS_DERP ? "DERP" : "peer relay";
    const char *cname = lab->topo->nodes[lab->topo->measure.client].name;
    const char *sname = lab->topo->nodes[lab->topo->measure.server].name;
    bool reached = false, server = false;
    bool changed = false;
    /* The grant is sent, not waited for: the pings wait for the peer relay to answer anyway,
     * and the relay policy drops the hub's relay port (ml_nft_policy), so no path but DERP
     * forms while a withdrawn grant is on its way, nor a relay path while a direct one answers.
     * Waited for before the seed lab's peer relay entries, it took 1.3 to 2.7 s, and as long
     * again for the withdrawal, of settles of 3.6 to 8.0 s; it is seen to have arrived after
     * the probe, before any pass. */
    double t_grant = ml_now();
    if (!forget_and_send(lab, path == ML_TS_PEER_RELAY, &changed, err))
        return false;
    double t_ping = ml_now();
    struct ml_ts_path_bytes b = {0};
    bool probed = false;
    if (!ping_ends(lab, path, &reached, &server, &b, &probed, err))
        return false;
    if (!reached)
        ml_progress("tailscale", "still not on the %s path after 90 s; the check decides", way);
    else
        ml_progress("tailscale",
                    "%s's pongs came by the %s path and its probe ran in %.1f s, %s's pongs %s",
                    cname, way, ml_now() - t_ping, sname,
                    server ? "too" : "not within 30 s (the probe decides)");
    double deadline = ml_now() + 60;
    bool took = probed && probe_took(&b, path);
    while (reached && !took && ml_now() < deadline) {
        g_usleep(G_USEC_PER_SEC / 2);
        if (!probe_paths(lab, &b, err))
            return false;
        took = probe_took(&b, path);
    }
    if (reached)
        ml_progress("tailscale",
                    "%s: the data %s %.1f s after the policy (%s's counters over a probe of %d "
                    "B each way: out %lld B direct, %lld B by DERP, %lld B by a peer relay; in "
                    "%lld, %lld, %lld B)",
                    want_direct          ? "direct"
                    : path == ML_TS_DERP ? "relay"
                                         : "peer relay",
                    took ? (want_direct          ? "left the relays both ways"
                            : path == ML_TS_DERP ? "took DERP both ways"
                                                 : "took the peer relay both ways")
                         : "was still not on that path both ways, and the check decides,",
                    ml_now() - t0, lab->topo->nodes[lab->topo->measure.client].name,
                    PROBE_PINGS * PROBE_BYTES, b.out[ML_TS_DIRECT], b.out[ML_TS_DERP],
                    b.out[ML_TS_PEER_RELAY], b.in[ML_TS_DIRECT], b.in[ML_TS_DERP],
                    b.in[ML_TS_PEER_RELAY]);
    if (changed && !relay_grant_wait(lab, path == ML_TS_PEER_RELAY, t_grant, err))
        return false;
    if (want_direct)
        observe_once(lab);
    return true;
}

/* tailscale-auto after another path's policy (the relay policy drops the clients' UDP):
 * tailscaled may still send by DERP, its direct address no longer trusted
 * (wgengine/magicsock/endpoint.go:577-594 addrForSendLocked, de9ec7e). Each CLI ping pings every
 * candidate address at once (endpoint.go:983-1036 discoPing), so a direct path that exists
 * answers within seconds; behind NATs that allow none, DERP is what it finds, and the wait
 * costs 30 s. */
static bool settle_auto(struct ml_lab *lab, GError **err)
{
    bool reached = false;
    if (!relay_grant(lab, false, err) || !ping_until(lab, ML_TS_DIRECT, 30, &reached, err))
        return false;
    if (!reached)
        ml_progress("tailscale", "tailscale-auto: no direct path within 30 s; it is measured on "
                                 "the path it found (the check says which)");
    observe_once(lab);
    return true;
}

static bool settle_direct(struct ml_lab *lab, GError **err)
{
    return settle_on(lab, ML_TS_DIRECT, err);
}

static bool settle_relay(struct ml_lab *lab, GError **err)
{
    return settle_on(lab, ML_TS_DERP, err);
}

static bool settle_peer_relay(struct ml_lab *lab, GError **err)
{
    return settle_on(lab, ML_TS_PEER_RELAY, err);
}

/* ---- export --verify: the exported files on a fresh lab ---------------------------------- */

/* What a real VPS downloads, from the lab's cache: the headscale binary of the version the
 * export's install script wants, where that script keeps a binary of its version instead of
 * fetching the release (tailscale.c export_install_script). Nothing else of the hub is touched:
 * its config, certificate, unit and key script are the exported user-data's. */
static const char verify_hub_cmd[] =
    "set -e; mkdir -p /mnt/meshlab; mountpoint -q /mnt/meshlab || "
    "mount -o ro LABEL=MESHLAB /mnt/meshlab; for f in /mnt/meshlab/headscale*; do "
    "install -m 0755 \"$f\" /usr/local/bin/headscale; done; umount /mnt/meshlab; "
    "/usr/local/bin/headscale version | head -1";

/* Tailscale as its Debian package installs it, from the lab's cache: the two binaries at the
 * package's paths, its unit and its /etc/default/tailscaled, then tailscaled started. The unit is
 * the package's (tailscale cmd/tailscaled/tailscaled.service and tailscaled.defaults at
 * v1.102.5: the same ExecStart, state and socket, directories and Type=notify), so the export's
 * drop-in and its `systemctl restart tailscaled` act on it as on a client where the user
 * installed the package. The unit comes on standard input.
 * /etc/default/tailscaled is the package's (PORT and FLAGS) with the lab's two settings of
 * tailscaled_daemon above, for the reasons given there: --no-logs-no-support and
 * TS_DEBUG_OMIT_LOCAL_ADDRS. They belong to the lab, not to the export (a VPS client has no other
 * dataplane's tunnel to offer as an endpoint): the verify lab runs every exported dataplane at
 * once, as the run did. The seed lab's export with every path, verified without them: the hub's
 * NIC never went quiet (under 2,056 bytes in each of 3 seconds) in the 60 s before
 * tailscale-relay's check, nor before tinc-relay's, whose checks then counted 5,004 and 5,152
 * idle bytes. With them, the same export: quiet in the first 3 s before every check, 991 and 816
 * idle bytes, and the verify took 368 s instead of 530. */
static const char verify_client_cmd[] =
    "set -e; mkdir -p /mnt/meshlab; mountpoint -q /mnt/meshlab || "
    "mount -o ro LABEL=MESHLAB /mnt/meshlab; install -m 0755 /mnt/meshlab/tailscaled "
    "/usr/sbin/tailscaled; install -m 0755 /mnt/meshlab/tailscale /usr/bin/tailscale; "
    "umount /mnt/meshlab; umask 022; cat > /lib/systemd/system/tailscaled.service; "
    "printf 'PORT=\"41641\"\\nFLAGS=\"--no-logs-no-support\"\\n"
    "TS_DEBUG_OMIT_LOCAL_ADDRS=1\\n' > /etc/default/tailscaled; "
    "systemctl daemon-reload; systemctl enable --now tailscaled.service >/dev/null 2>&1; "
    "tailscale version | head -1";

static const char verify_client_unit[] =
    "[Unit]\n"
    "Description=Tailscale node agent (as its Debian package installs it; meshlab export "
    "--verify)\n"
    "Wants=network-pre.target\n"
    "After=network-pre.target\n"
    "\n"
    "[Service]\n"
    "EnvironmentFile=/etc/default/tailscaled\n"
    "ExecStart=/usr/sbin/tailscaled --state=/var/lib/tailscale/tailscaled.state "
    "--socket=/run/tailscale/tailscaled.sock --port=${PORT} $FLAGS\n"
    "ExecStopPost=/usr/sbin/tailscaled --cleanup\n"
    "Restart=on-failure\n"
    "RuntimeDirectory=tailscale\n"
    "RuntimeDirectoryMode=0755\n"
    "StateDirectory=tailscale\n"
    "StateDirectoryMode=0700\n"
    "CacheDirectory=tailscale\n"
    "CacheDirectoryMode=0750\n"
    "Type=notify\n"
    "\n"
    "[Install]\n"
    "WantedBy=multi-user.target\n";

/* The hub first (the exported user-data's install script then keeps the cached headscale), then
 * each client: the package, and the pre-auth key the export's README has the user make on the hub
 * with the exported script and put on the client, made and put the same way. The key passes
 * through this process's memory only (never a file on the host, a log or the progress), and is
 * wiped there. */
static bool verify_install(struct ml_lab *lab, size_t node, GError **err)
{
    const struct ml_topology *t = lab->topo;
    const char *name = t->nodes[node].name;
    g_autofree char *out = NULL, *why = NULL;
    if (!available(lab, &why)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "export --verify puts the cached Headscale and Tailscale where a VPS "
                    "downloads them, and the cache has none: %s",
                    why);
        return false;
    }
    if (node == t->hub) {
        if (!run_on(lab, node, verify_hub_cmd, NULL, 60, &out, err))
            return false;
        ml_progress("verify",
                    "%s: %s from the lab's cache where a VPS downloads the release (the exported "
                    "install script keeps a binary of its version)",
                    name, g_strchomp(out));
        return true;
    }
    if (!run_on(lab, node, verify_client_cmd, verify_client_unit, 120, &out, err))
        return false;
    g_autofree char *version = g_strdup(g_strchomp(out));
    /* As a user would: once Headscale answers on the hub (its unit was started by the
     * user-data moments ago, and under TCG it takes seconds to serve). */
    char *key = NULL;
    if (!run_on(lab, t->hub,
                "i=0; until " HS " users list >/dev/null 2>&1; do i=$((i + 1)); "
                "[ $i -lt 90 ] || break; sleep 1; done; exec " ML_TS_EXPORT_AUTHKEY_SCRIPT,
                NULL, 150, &key, err)) {
        g_prefix_error(err, "%s: the exported " ML_TS_EXPORT_AUTHKEY_SCRIPT ": ", t->nodes[t->hub].name);
        return false;
    }
    g_strstrip(key);
    bool ok = *key && !strchr(key, '\n') &&
              run_on(lab, node,
                     "set -e; umask 077; mkdir -p \"$(dirname " ML_TS_EXPORT_AUTHKEY_FILE
                     ")\"; cat > " ML_TS_EXPORT_AUTHKEY_FILE,
                     key, 30, NULL, err);
    if (!*key || strchr(key, '\n'))
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "the exported " ML_TS_EXPORT_AUTHKEY_SCRIPT " on %s printed no key alone on "
                    "its line",
                    t->nodes[t->hub].name);
    explicit_bzero(key, strlen(key));
    g_free(key);
    if (ok)
        ml_progress("verify",
                    "%s: Tailscale %s as its package installs it, from the lab's cache; a "
                    "pre-auth key from the hub's " ML_TS_EXPORT_AUTHKEY_SCRIPT " in "
                    ML_TS_EXPORT_AUTHKEY_FILE,
                    name, version);
    return ok;
}

/* The clients joined Headscale by their exported commands, so the lab's state has none of their
 * addresses (no setup ran): read once, checked as setup checks them, for the paths' targets. */
static bool verify_addresses(struct ml_lab *lab, GError **err)
{
    const struct ml_topology *t = lab->topo;
    struct json_object *addrs = json_object_new_object();
    json_object_object_add(ml_dataplane_state(lab, &ml_dataplane_tailscale), "addresses", addrs);
    for (size_t i = 0; i < t->n_nodes; i++) {
        if (i == t->hub)
            continue;
        g_autofree char *ip = NULL;
        char checked[INET_ADDRSTRLEN];
        if (!run_on(lab, i, "tailscale ip -4", NULL, 30, &ip, err) ||
            !ml_tailscale_ip_parse(ip, checked, err)) {
            g_prefix_error(err, "%s: ", t->nodes[i].name);
            return false;
        }
        json_object_object_add(addrs, t->nodes[i].name, json_object_new_string(checked));
        ml_progress("verify", "%s joined Headscale as %s by its exported commands",
                    t->nodes[i].name, checked);
    }
    return true;
}

/* Once the policy is in force, the path is settled as in a run: its own settle waits for the
 * client's counters to show the data on it. */
static bool verify_settle(struct ml_lab *lab, const struct ml_path_ops *ops, GError **err)
{
    if (!*ts_ip(lab, lab->topo->measure.server) && !verify_addresses(lab, err))
        return false;
    return !ops->settle || ops->settle(lab, err);
}

struct ml_daemon ml_tailscaled_on(const struct ml_lab *lab, size_t node)
{
    struct ml_daemon d = tailscaled_daemon;
    if (lab->nat_now[node] != ML_NAT_NONE)
        d.netns = ML_PLAN_NETNS;
    return d;
}

static char *describe_auto(const struct ml_topology *t)
{
    return g_strdup_printf("Tailscale, %s to %s by whatever way tailscaled finds (nothing forced: "
                           "disco through the NATs, or DERP on %s)",
                           t->nodes[t->measure.client].name, t->nodes[t->measure.server].name,
                           t->nodes[t->hub].name);
}

static char *auto_view_cmd(const struct ml_lab *lab)
{
    (void)lab;
    return g_strdup("tailscale --socket=" TS_SOCKET " status --json");
}

/* tailscale status --json: the server's peer entry has CurAddr while a direct path is in use,
 * its home DERP region as Relay otherwise (tailscale ipn/ipnstate PeerStatus). */
static bool auto_view_parse(const struct ml_topology *t, const char *text,
                            struct ml_found_view *ret)
{
    memset(ret, 0, sizeof(*ret));
    struct ml_ts_peer peer = {0};
    g_autoptr(GError) e = NULL;
    if (!ml_tailscale_status_parse(text, t->nodes[t->measure.server].name, &peer, &e))
        return false;
    if (peer.direct) {
        ret->found = ML_FOUND_DIRECT;
        g_strlcpy(ret->remote, peer.cur_addr, sizeof(ret->remote));
    } else if (peer.relay[0] && peer.online) {
        ret->found = ML_FOUND_RELAY;
        g_strlcpy(ret->relay, peer.relay, sizeof(ret->relay));
    }
    return true;
}

static bool verify_auto(const struct ml_topology *t, const struct ml_evidence *ev,
                        GString *sentence)
{
    struct ml_ts_ping ping = {0};
    struct ml_ts_peer peer = {0};
    bool seen = view(t, ev, &ping, &peer, sentence);
    if (!seen || !ping.answered)
        return false;
    /* Direct to the server's address or its NAT's mapping on the bridge, both as the ping
     * ponged and as the status trusts: tailscaled tries every endpoint the peer advertised, and
     * one inside another dataplane's tunnel (nebula's 10.42.0.3:41641 in the NAT lesson) rides
     * that dataplane's relay. */
    if (ping.direct)
        return peer.direct && ml_peer_on_underlay(t, ping.endpoint, sentence) &&
               ml_peer_on_underlay(t, peer.cur_addr, sentence);
    return !strcmp(ping.derp_region, ML_HEADSCALE_DERP_REGION) && !peer.direct;
}

static bool ts_clients(struct ml_lab *lab, bool start, GError **err)
{
    g_autofree char *stop = ml_daemon_stop_cmd(&tailscaled_daemon);
    for (size_t i = 0; i < lab->plan->n_guests; i++) {
        if (i == lab->topo->hub)
            continue;
        if (start) {
            struct ml_daemon d = ml_tailscaled_on(lab, i);
            if (!ml_daemon_start(lab, i, &d, NULL, err))
                return false;
        } else if (!run_on(lab, i, stop, NULL, 60, NULL, err)) {
            return false;
        }
    }
    return true;
}

static bool auto_stop(struct ml_lab *lab, GError **err)
{
    return ts_clients(lab, false, err);
}

/* How long a NAT repeat waits, after tailscaled started, for each client's netmap to hold the
 * other's endpoints. */
#define TS_ENDPOINTS_WAIT_S 40.0

/* True when node's netmap lists the peer named peer with at least one endpoint. */
static bool peer_has_endpoints(struct ml_lab *lab, size_t node, const char *peer)
{
    g_autoptr(GError) e = NULL;
    g_autofree char *out = NULL;
    unsigned n = 0;
    return run_on(lab, node, "tailscale --socket=" TS_SOCKET " debug netmap", NULL, 30, &out, &e) &&
           ml_tailscale_netmap_endpoints(out, peer, &n, &e) && n > 0;
}

/* tailscaled keeps its node key in its state file: started again it rejoins by itself. Then the
 * repeat waits until each client's netmap lists the other's endpoints (Endpoints), so that its
 * watch times NAT traversal and not the control plane: CI's e2e_nat saw both clients STUN
 * within 4 s of the start and neither send a disco ping to the other's address for the next
 * 30 s, the data on DERP, until their periodic re-STUN some 25 s on (tailscale issue 1806, an
 * endpoint update lost at startup, which the periodic update repairs). The wait is said in the
 * progress; a netmap that never gets them is left to the repeat's own outcome. */
static bool auto_start(struct ml_lab *lab, GError **err)
{
    if (!ts_clients(lab, true, err))
        return false;
    const struct ml_topology *t = lab->topo;
    size_t a = t->measure.client, b = t->measure.server;
    double t0 = ml_now();
    bool ab = false, ba = false;
    while (!(ab && ba) && ml_now() - t0 < TS_ENDPOINTS_WAIT_S) {
        ab = ab || peer_has_endpoints(lab, a, t->nodes[b].name);
        ba = ba || peer_has_endpoints(lab, b, t->nodes[a].name);
        if (!(ab && ba))
            g_usleep(500 * 1000);
    }
    if (ab && ba)
        ml_progress("tailscale",
                    "each client's netmap lists the other's endpoints %.1f s after "
                    "tailscaled started",
                    ml_now() - t0);
    else
        ml_progress("tailscale",
                    "after %.0f s %s's netmap still lists no endpoint of %s: the repeat goes on "
                    "over DERP until one comes",
                    TS_ENDPOINTS_WAIT_S, t->nodes[ab ? b : a].name, t->nodes[ab ? a : b].name);
    return true;
}

static bool auto_wait(struct ml_lab *lab, GError **err)
{
    return settle_on(lab, ML_TS_DIRECT, err);
}

static struct in_addr auto_address(const struct ml_lab *lab, size_t node)
{
    struct in_addr a = {0};
    const char *ip = ts_ip(lab, node);
    if (ip)
        inet_pton(AF_INET, ip, &a);
    return a;
}

static const struct ml_auto_ops tailscale_auto = {
    .address = auto_address,
    .view_cmd = auto_view_cmd,
    .view_parse = auto_view_parse,
    .view_own = 0,
    .direct_re = "\"CurAddr\":\\s*\"[0-9]",
    .peer_port = ML_PORT_TAILSCALED,
    .stop = auto_stop,
    .start = auto_start,
    .wait = auto_wait,
};

extern const struct ml_path_ops ml_path_tailscale_direct, ml_path_tailscale_relay,
    ml_path_tailscale_peer_relay, ml_path_tailscale_auto;

/* Headscale's HTTPS (control and DERP) and STUN on the hub, tailscaled's port everywhere. That
 * port is not opened, as in the seed: peers reach it through the holes their own packets punch. */
static size_t ports(const struct ml_topology *t, struct ml_port *ret, size_t max)
{
    static const struct ml_port mine[] = {
        {.what = "Headscale and its DERP relay",
         .proto = ML_PROTO_TCP,
         .port = ML_PORT_HTTPS,
         .open = true,
         .dataplane = "tailscale"},
        {.what = "Headscale's STUN",
         .proto = ML_PROTO_UDP,
         .port = ML_PORT_STUN,
         .open = true,
         .dataplane = "tailscale"},
        {.what = "tailscaled",
         .proto = ML_PROTO_UDP,
         .port = ML_PORT_TAILSCALED,
         .open = false,
         .dataplane = "tailscale"},
        /* the hub's tailscaled as the clients' peer relay, in a lab that measures it: open,
         * since the clients' first packets to it are new connections */
        {.what = "tailscaled's peer relay",
         .proto = ML_PROTO_UDP,
         .port = ML_PORT_PEER_RELAY,
         .open = true,
         .dataplane = "tailscale",
         .relay_server = true},
    };
    size_t n = MIN(max, G_N_ELEMENTS(mine) - (wants_peer_relay(t) ? 0 : 1));
    for (size_t i = 0; i < n; i++)
        ret[i] = mine[i];
    return n;
}

/* tailscaled's 41641 is not opened (the seed's firewall), so with no NAT only replies get in, as
 * through a port-restricted cone; disco keeps pinging from both sides, so nothing races. */
static const struct ml_nat_traits nat = {
    .none_open = false,
    .races = false,
    .relay_word = "relay (DERP)",
    .capture_filter = "udp.port == 41641 || udp.port == 3478",
    .capture_what = "disco and STUN",
};

static const char *const fetched[] = {"tailscale", "headscale", NULL};

const struct ml_dataplane ml_dataplane_tailscale = {
    .nat = &nat,
    .fetched = fetched,
    .name = "tailscale",
    .conflict = ml_tailscale_conflict,
    .daemons = {{"tailscaled", "tailscaled --version"}, {"headscale", "headscale version"}},
    .paths = {&ml_path_tailscale_direct, &ml_path_tailscale_relay, &ml_path_tailscale_peer_relay,
              &ml_path_tailscale_auto},
    .ports = ports,
    .available = available,
    .artifacts = artifacts,
    .setup = setup,
    .observe = observe_path,
    .autop = &tailscale_auto,
    .export = ml_tailscale_export,
    .verify_install = verify_install,
    .verify_settle = verify_settle,
};

const struct ml_path_ops ml_path_tailscale_direct = {
    .name = "tailscale-direct",
    .dataplane = &ml_dataplane_tailscale,
    .policy = ML_POLICY_DIRECT,
    .hub = ML_HUB_QUIET,
    .describe = describe_direct,
    .target = target,
    .settle = settle_direct,
    .verify = verify_direct,
    .tunnel_counts = counts_direct,
};

/* tailscale0's MTU 1280; WireGuard's 32 bytes and padding to 16, then DERP's
 * frame (5-byte header, 32-byte key) inside TLS records (up to 22 bytes each)
 * inside TCP on the hub's 1500-byte NIC. TCP cuts that stream where it likes,
 * so the IP and TCP headers (52 per 1448-byte segment) count as a share, about
 * 49 bytes per full packet: an average, not a per-packet count. */
static const struct ml_encap encap_derp = {
    .name = "DERP",
    .inner_mtu = 1280,
    .overhead = 32 + 37 + 22 + 49,
    .pad_to = 16,
    .approximate = true,
    .how = "DERP over TLS over TCP: 32 WireGuard + 37 DERP frame + up to 22 TLS "
           "record + ~49 share of the outer TCP/IP headers = ~140 bytes; TLS records and TCP "
           "segments do not follow packets, and the outer TCP's own ACKs are not modelled",
};

const struct ml_path_ops ml_path_tailscale_relay = {
    .name = "tailscale-relay",
    .dataplane = &ml_dataplane_tailscale,
    .policy = ML_POLICY_RELAY,
    .hub = ML_HUB_CARRIES,
    .encap = &encap_derp,
    .describe = describe_relay,
    .target = target,
    .settle = settle_relay,
    .verify = verify_relay,
    .tunnel_counts = counts_relay,
};

/* A peer relay forwards each packet whole, as the client sent it (tailscale net/udprelay
 * server.go handleDataPacket at v1.102.5): WireGuard's 32 bytes and its padding to 16 inside a
 * Geneve header of 8 (net/packet/geneve.go GeneveFixedHeaderLength) that carries the session's
 * VNI, in UDP and IPv4, on both legs. One datagram per packet, so the frames are exact. */
static const struct ml_encap encap_peer_relay = {
    .name = "peer relay",
    .inner_mtu = 1280,
    .overhead = 20 + 8 + 8 + 32,
    .pad_to = 16,
    .how = "a tailscaled peer relay: 20 IP + 8 UDP + 8 Geneve + 32 WireGuard = 68 bytes, the "
           "packet padded to 16",
};

const struct ml_path_ops ml_path_tailscale_peer_relay = {
    .name = "tailscale-peer-relay",
    .dataplane = &ml_dataplane_tailscale,
    .policy = ML_POLICY_PEER_RELAY,
    .hub = ML_HUB_CARRIES,
    .encap = &encap_peer_relay,
    .describe = describe_peer_relay,
    .target = target,
    .settle = settle_peer_relay,
    .settle_changes_state = true,
    .verify = verify_peer_relay,
    .tunnel_counts = counts_peer_relay,
    .not_exported = "the export does not yet configure a peer relay (the hub's tailscaled with "
                    "a relay port, and Headscale's tailscale.com/cap/relay grant to it)",
};

const struct ml_path_ops ml_path_tailscale_auto = {
    .name = "tailscale-auto",
    .dataplane = &ml_dataplane_tailscale,
    .policy = ML_POLICY_DIRECT,
    .hub = ML_HUB_FOUND,
    .encap = &encap_derp,
    .describe = describe_auto,
    .target = target,
    .settle = settle_auto,
    .verify = verify_auto,
};
