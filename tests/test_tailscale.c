/* The files meshlab writes for Headscale and Tailscale (against golden files), the readers of
 * what tailscale and headscale print, on real output (tests/data/samples/tailscale/README), and
 * the guest commands of the tailscale paths.
 *
 * Not run here: this machine has no internet and no tailscale, tailscaled or headscale binary,
 * so no command below ran against the real programs. Every flag and output field relied on was
 * read in upstream source instead (tailscale de9ec7e, pre-1.104, cross-checked with v1.102.3;
 * headscale v0.29.2), cited where it is checked. */
#include <math.h>

#include "ca_check.h"
#include "check.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "dataplanes/tailscale.h"
#include "core/util.h"
#include "topology/plan.h"

#define SAMPLES "tests/data/samples/tailscale/"

static char *sample(const char *name)
{
    g_autofree char *path = g_strconcat(SAMPLES, name, NULL);
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        fprintf(stderr, "cannot read %s\n", path);
        return g_strdup("");
    }
    return text;
}

static void test_renderers(void)
{
    g_autofree char *config = ml_headscale_config("192.0.2.10", ML_HEADSCALE_URL);
    check_golden("headscale-config.yaml", config);
    /* What the seed relied on, checked by name so a golden rewrite cannot drop it quietly. */
    CHECK(strstr(config, "listen_addr: 0.0.0.0:443\n"));
    CHECK(strstr(config, "  urls: []\n"));
    CHECK(strstr(config, "    region_code: \"headscale\"\n"));
    CHECK(strstr(config, "    ipv4: 192.0.2.10\n"));
    CHECK(strstr(config, "    stun_listen_addr: \"0.0.0.0:3478\"\n"));
    CHECK(strstr(config, "    path: /var/lib/headscale/db.sqlite\n"));
    CHECK(strstr(config, "  base_domain: tailnet.example.com\n"));
    /* headscale v0.29.x refuses to start when this key is present at all, even false:
     * hscontrol/types/config.go, depr.fatalWithHint("randomize_client_port", ...) ("Removed since
     * v0.29.0: moved to the ACL policy as randomizeClientPort"), and deprecator.Log() calls
     * log.Fatal() when any fatal is collected (CHANGELOG 0.29.0, PR #3251). The default, off, is
     * what the seed wants. `headscale configtest` (cmd/headscale/cli/configtest.go: runs
     * newHeadscaleServerWithConfig(), i.e. LoadServerConfig and NewHeadscale, and returns
     * "configuration error: ..."; -c/--config is a persistent flag of the root command in
     * cmd/headscale/cli/root.go) now checks the file on the hub before serve. */
    CHECK(strstr(config, "randomize_client_port") == NULL);
    CHECK(strstr(config, "randomizeClientPort") == NULL);

    g_autofree char *policy = ml_headscale_policy();
    check_golden("headscale-policy.hujson", policy);
    /* The peer relay's grant comes and goes with the paths (path_tailscale.c relay_grant): with
     * it the clients may use the hub, without it the same rule for every node and no
     * capability, so only the capability changes in the clients' netmaps. */
    const char *const clients[] = {"100.64.0.1", "100.64.0.2"};
    g_autofree char *granted = ml_headscale_policy_relay("100.64.0.3", clients, 2, true);
    g_autofree char *withdrawn = ml_headscale_policy_relay("100.64.0.3", clients, 2, false);
    const char *every = "{ \"src\": [\"*\"], \"dst\": [\"*\"], \"ip\": [\"*\"] }";
    CHECK(strstr(granted, every) != NULL);
    CHECK(strstr(withdrawn, every) != NULL);
    CHECK(strstr(granted,
                 "{ \"src\": [\"100.64.0.1\", \"100.64.0.2\"], \"dst\": "
                 "[\"100.64.0.3\"], \"app\": { \"tailscale.com/cap/relay\": [{}] } }") != NULL);
    CHECK(strstr(withdrawn, "tailscale.com/cap/relay") == NULL);
    CHECK(strstr(withdrawn, "\"acls\"") == NULL);

    g_autofree char *up =
        ml_tailscale_up_command(ML_HEADSCALE_URL, "client-a", "/run/meshlab/authkey");
    g_autofree char *up_line = g_strconcat(up, "\n", NULL);
    check_golden("tailscale-up.txt", up_line);
    /* A path with a space is quoted, never split. */
    g_autofree char *odd = ml_tailscale_up_command(ML_HEADSCALE_URL, "client-b", "/run/a b");
    CHECK_STR(odd, "tailscale up --login-server=https://headscale.lab:443 "
                   "'--auth-key=file:/run/a b' --hostname=client-b --accept-dns=false");

    g_autofree char *hub = ml_lab_ca_hub_script(ML_HEADSCALE_HOSTNAME, "192.0.2.10");
    check_golden("lab-ca-hub.sh", hub);
    CHECK(ml_lab_ca_hub_script("bad name;rm", "192.0.2.10") == NULL);
    CHECK(ml_lab_ca_hub_script(ML_HEADSCALE_HOSTNAME, "2001:db8::1") == NULL);

    /* A certificate-shaped test value (valid base64, as openssl writes it); the client script
     * only copies it. */
    const char *pem = "-----BEGIN CERTIFICATE-----\n"
                      "MIIBdzCCAR2gAwIBAgIUTESTONLYTESTONLYTESTONLYTESTONLYwCgYIKoZIzj0\n"
                      "-----END CERTIFICATE-----\n";
    g_autofree char *client = ml_lab_ca_client_script(pem, ML_HEADSCALE_HOSTNAME, "192.0.2.10");
    check_golden("lab-ca-client.sh", client);
    CHECK(ml_lab_ca_client_script("-----BEGIN CERTIFICATE-----\nMESHLAB_CA\n$(reboot)\n"
                                  "-----END CERTIFICATE-----",
                                  ML_HEADSCALE_HOSTNAME, "192.0.2.10") == NULL);
    CHECK(ml_lab_ca_client_script("", ML_HEADSCALE_HOSTNAME, "192.0.2.10") == NULL);
}

static void test_ping(void)
{
    g_autofree char *both = sample("ping-derp-then-direct-pr663.txt");
    struct ml_ts_ping p;
    g_autoptr(GError) err = NULL;
    CHECK(ml_tailscale_ping_parse(both, &p, &err));
    CHECK(p.answered);
    CHECK(p.direct);
    CHECK(p.pongs == 3);
    CHECK_STR(p.endpoint, "[2604:a880:2:d1::36:d001]:41641");
    CHECK_STR(p.derp_region, "");
    CHECK(p.latency_ms == 33.0);

    g_autofree char *derp = sample("ping-derp-only-pr663.txt");
    CHECK(ml_tailscale_ping_parse(derp, &p, NULL));
    CHECK(p.answered && !p.direct && p.pongs == 2);
    CHECK_STR(p.derp_region, "sfo");
    CHECK_STR(p.endpoint, "");
    CHECK(p.latency_ms == 252.0);

    /* The seed's two outcomes, as tailscale's ping.go formats them ("pong from %s (%s%s) via
     * %v in %v"): the lab's own addresses, not captured output. */
    CHECK(ml_tailscale_ping_parse("pong from client-b (100.64.0.2) via 192.0.2.12:41641 in 1ms\n",
                                  &p, NULL));
    CHECK(p.direct);
    CHECK_STR(p.endpoint, "192.0.2.12:41641");
    CHECK(p.latency_ms == 1.0);
    CHECK(ml_tailscale_ping_parse("pong from client-b (100.64.0.2) via DERP(headscale) in 2ms\n",
                                  &p, NULL));
    CHECK(!p.direct);
    CHECK_STR(p.derp_region, "headscale");
    CHECK(ml_tailscale_ping_parse("pong from x (100.64.0.2, 41235) via DERP(headscale) in 1.5s", &p,
                                  NULL));
    CHECK(p.latency_ms == 1500.0);
    /* A peer relay, as ping.go prints ipnstate.PingResult.PeerRelay ("{ip}:{port}:vni:{vni}");
     * the line is the one the research notes recorded from 1.102.5 with client-c the relay. */
    CHECK(ml_tailscale_ping_parse(
        "pong from client-b (100.64.0.2) via peer-relay(192.0.2.13:40000:vni:1) in 12ms\n", &p,
        NULL));
    CHECK(p.answered && !p.direct);
    CHECK_STR(p.peer_relay, "192.0.2.13:40000:vni:1");
    CHECK_STR(p.derp_region, "");
    CHECK_STR(p.endpoint, "");
    /* The last pong decides: a peer relay then direct is direct, with no relay left over. */
    CHECK(ml_tailscale_ping_parse(
        "pong from client-b (100.64.0.2) via peer-relay(192.0.2.13:40000:vni:1) in 12ms\n"
        "pong from client-b (100.64.0.2) via 192.0.2.12:41641 in 1ms\n",
        &p, NULL));
    CHECK(p.direct && !*p.peer_relay);

    /* No answer is a result; an unreadable pong is an error that quotes the line. */
    CHECK(ml_tailscale_ping_parse("ping \"100.64.0.2\" timed out\n", &p, NULL));
    CHECK(!p.answered && p.pongs == 0);
    g_autoptr(GError) bad = NULL;
    CHECK(!ml_tailscale_ping_parse("pong from x (100.64.0.2) via DERP(a) in soon\n", &p, &bad));
    CHECK(bad && bad->code == ML_ERR_MEASURE && strstr(bad->message, "soon"));
}

/* What Tailscale 1.102.5 and Headscale 0.29.3, built from images/go, printed in the seed lab:
 * the readers take them as they take the older samples. */
static void test_lab_samples(void)
{
    struct ml_ts_ping p;
    g_autofree char *ping = sample("ping-direct-1.102.5-lab.txt");
    CHECK(ml_tailscale_ping_parse(ping, &p, NULL));
    CHECK(p.direct && p.answered);
    CHECK_STR(p.endpoint, "192.0.2.12:41641");
    g_autofree char *status = sample("status-1.102.5-lab.json");
    struct ml_ts_peer peer;
    CHECK(ml_tailscale_status_parse(status, "client-b", &peer, NULL));
    CHECK_STR(peer.cur_addr, "192.0.2.12:41641");
    CHECK_STR(peer.relay, "headscale");
    CHECK_STR(peer.ipv4, "100.64.0.2");
    CHECK(peer.direct && peer.online);
    g_autofree char *users = sample("headscale-users-list-0.29.3-lab.json");
    long id = 0;
    CHECK(ml_headscale_user_id(users, "lab", &id, NULL) && id == 1);
    g_autofree char *nodes_json = sample("headscale-nodes-list-0.29.3-lab.json");
    GPtrArray *nodes = NULL;
    CHECK(ml_headscale_nodes_parse(nodes_json, &nodes, NULL));
    CHECK(nodes && ml_headscale_nodes_check(nodes, "client-a", "100.64.0.1", NULL) &&
          ml_headscale_nodes_check(nodes, "client-b", "100.64.0.2", NULL));
    if (nodes)
        g_ptr_array_unref(nodes);
}

/* tailscaled's per-path counters, as 1.102.5 printed them after a probe by DERP and two direct:
 * each path's bytes, IPv4 and IPv6 summed; what is not a per-path byte counter is skipped. */
static void test_metrics(void)
{
    g_autofree char *text = sample("metrics-print-1.102.5.txt");
    struct ml_ts_path_bytes b;
    g_autoptr(GError) err = NULL;
    CHECK(ml_tailscale_metrics_parse(text, &b, &err));
    CHECK(b.out[ML_TS_DERP] == 10868 && b.out[ML_TS_DIRECT] == 21440 &&
          b.out[ML_TS_PEER_RELAY] == 0);
    CHECK(b.in[ML_TS_DERP] == 0 && b.in[ML_TS_DIRECT] == 32252);
    CHECK(ml_tailscale_metrics_parse("tailscaled_outbound_bytes_total{path=\"direct_ipv4\"} 5\n"
                                     "tailscaled_outbound_bytes_total{path=\"direct_ipv6\"} 7\n"
                                     "tailscaled_outbound_bytes_total{path=\"other\"} 9\n",
                                     &b, NULL));
    CHECK(b.out[ML_TS_DIRECT] == 12 && b.out[ML_TS_DERP] == 0);
    g_autoptr(GError) none = NULL;
    CHECK(!ml_tailscale_metrics_parse("tailscaled_advertised_routes 0\n", &b, &none));
    CHECK(none && strstr(none->message, "no tailscaled_outbound_bytes_total"));
    g_autoptr(GError) bad = NULL;
    CHECK(!ml_tailscale_metrics_parse("tailscaled_outbound_bytes_total{path=\"derp\"} lots\n", &b,
                                      &bad));
    CHECK(bad && bad->code == ML_ERR_MEASURE);
    g_autoptr(GError) neg = NULL;
    CHECK(!ml_tailscale_metrics_parse("tailscaled_outbound_bytes_total{path=\"derp\"} -3\n", &b,
                                      &neg));
}

/* The same counters as a pass's tunnel counts (observe's own[2]: the uptime, then the metrics):
 * the label's path first and judged, every other one excluded; the uptime placed. */
static void test_tunnel_counts(void)
{
    g_autofree char *metrics = sample("metrics-print-1.102.5.txt");
    g_autofree char *text = g_strdup_printf("%s1234.56\n", metrics);
    struct ml_tunnel_count c[ML_TUNNEL_COUNTS_MAX];
    double at = 0;
    CHECK(ml_tailscale_tunnel_counts(text, "client-a", ML_TS_DIRECT, c, &at) == 3);
    CHECK(at == 1234.56);
    CHECK_STR(c[0].who, "client-a's tailscaled by direct");
    CHECK(!c[0].excluded && c[0].bytes == 21440 + 32252 && c[0].at_client && c[2].at_client);
    CHECK_STR(c[1].who, "client-a's tailscaled by derp");
    CHECK(c[1].excluded && c[1].bytes == 10868);
    CHECK_STR(c[2].who, "client-a's tailscaled by peer_relay");
    CHECK(c[2].excluded && c[2].bytes == 0);
    CHECK(ml_tailscale_tunnel_counts(text, "client-a", ML_TS_DERP, c, &at) == 3);
    CHECK_STR(c[0].who, "client-a's tailscaled by derp");
    CHECK(!c[0].excluded && c[0].bytes == 10868);
    CHECK(c[1].excluded && c[1].bytes == 21440 + 32252 && c[2].excluded);
    /* No uptime line, or one before the counters (read before the CLI started): counted, not
     * placed; no counters: none. */
    CHECK(ml_tailscale_tunnel_counts(metrics, "client-a", ML_TS_DIRECT, c, &at) == 3 && isnan(at));
    g_autofree char *before = g_strdup_printf("1234.56\n%s", metrics);
    CHECK(ml_tailscale_tunnel_counts(before, "client-a", ML_TS_DIRECT, c, &at) == 3 && isnan(at));
    CHECK(ml_tailscale_tunnel_counts("no metrics here\n1.0\n", "client-a", ML_TS_DIRECT, c, &at) ==
          0);
    CHECK(ml_tailscale_tunnel_counts(NULL, "client-a", ML_TS_DIRECT, c, &at) == 0);
}

/* `tailscale debug netmap`, in tailcfg's form: a peer's endpoints by its FQDN's first label or
 * its Hostinfo's Hostname; none when the control server has not sent them yet (Endpoints null),
 * which is what a NAT repeat waits out. */
static void test_netmap_endpoints(void)
{
    const char *nm = "{\"SelfNode\": {\"Name\": \"client-a.lab.\"}, \"Peers\": ["
                     "{\"Name\": \"hub.lab.\", \"Endpoints\": [\"192.0.2.10:41641\"]},"
                     "{\"Name\": \"client-b.lab.\", \"Hostinfo\": {\"Hostname\": \"client-b\"},"
                     " \"Endpoints\": [\"192.0.2.12:41641\", \"172.16.12.2:41641\"]}]}";
    unsigned n = 9;
    CHECK(ml_tailscale_netmap_endpoints(nm, "client-b", &n, NULL) && n == 2);
    CHECK(ml_tailscale_netmap_endpoints(nm, "HUB", &n, NULL) && n == 1);
    const char *none = "{\"Peers\": [{\"Name\": \"x.lab.\", \"Hostinfo\": {\"Hostname\": "
                       "\"client-b\"}, \"Endpoints\": null}]}";
    CHECK(ml_tailscale_netmap_endpoints(none, "client-b", &n, NULL) && n == 0);
    g_autoptr(GError) missing = NULL, bad = NULL;
    CHECK(!ml_tailscale_netmap_endpoints(nm, "client-c", &n, &missing));
    CHECK(missing && strstr(missing->message, "client-c"));
    CHECK(!ml_tailscale_netmap_endpoints("{\"Peers\": [", "client-b", &n, &bad) && bad);
}

static void test_status(void)
{
    g_autofree char *json = sample("status-1.102.4-windows.json");
    struct ml_ts_peer peer;
    g_autoptr(GError) err = NULL;
    CHECK(ml_tailscale_status_parse(json, "iphone-13", &peer, &err));
    CHECK(err == NULL);
    CHECK_STR(peer.host_name, "localhost");
    CHECK_STR(peer.dns_name, "iphone-13.tail8b25a2.ts.net.");
    CHECK_STR(peer.cur_addr, "172.16.31.147:41641");
    CHECK_STR(peer.relay, "tok");
    CHECK_STR(peer.peer_relay, "");
    CHECK_STR(peer.ipv4, "100.120.27.49");
    CHECK_STR(peer.ipv6, "fd7a:115c:a1e0::8328:1b32");
    CHECK(peer.online && peer.active && peer.direct);

    CHECK(ml_tailscale_status_parse(json, "IPAD157", &peer, NULL));
    CHECK_STR(peer.cur_addr, "");
    CHECK_STR(peer.relay, "tok");
    CHECK_STR(peer.ipv4, "100.78.141.76");
    CHECK(peer.online && !peer.active && !peer.direct);

    /* Self is not a peer; an unknown name lists what exists. */
    g_autoptr(GError) none = NULL;
    CHECK(!ml_tailscale_status_parse(json, "unagi", &peer, &none));
    CHECK(none && strstr(none->message, "'unagi'") &&
          strstr(none->message, "iphone-13.tail8b25a2.ts.net."));
    g_autoptr(GError) broken = NULL;
    CHECK(!ml_tailscale_status_parse("{\"Peer\": ", "x", &peer, &broken));
    CHECK(broken && broken->code == ML_ERR_MEASURE);
}

static void test_headscale(void)
{
    g_autofree char *users = sample("headscale-users-list-gbraad-issue3.json");
    long id = 0;
    g_autoptr(GError) err = NULL;
    CHECK(ml_headscale_user_id(users, "gbraad", &id, &err));
    CHECK(id == 1);
    /* Current releases print a list with numeric ids. */
    CHECK(ml_headscale_user_id("[{\"id\": 7, \"name\": \"lab\"}, {\"id\": 8, \"name\": \"x\"}]",
                               "x", &id, NULL));
    CHECK(id == 8);
    g_autoptr(GError) missing = NULL;
    CHECK(!ml_headscale_user_id(users, "lab", &id, &missing));
    CHECK(missing && missing->code == ML_ERR_GUEST && strstr(missing->message, "'lab'"));

    g_autofree char *created = sample("headscale-preauthkeys-create-gbraad-issue5.json");
    g_autofree char *key = ml_headscale_preauthkey_parse(created, NULL);
    CHECK_STR(key, "5f5ad19844ef66d88ff2041b638c824a13fdfb69ea3162e4");
    g_autoptr(GError) nokey = NULL;
    char *none = ml_headscale_preauthkey_parse("{\"key\": \"a b; rm -rf /\"}", &nokey);
    CHECK(none == NULL);
    CHECK(nokey && !strstr(nokey->message, "rm -rf"));

    g_autofree char *list = sample("headscale-nodes-list-constructed.json");
    GPtrArray *nodes = NULL;
    CHECK(ml_headscale_nodes_parse(list, &nodes, NULL));
    CHECK(nodes && nodes->len == 2);
    if (nodes && nodes->len == 2) {
        const struct ml_hs_node *a = g_ptr_array_index(nodes, 0);
        const struct ml_hs_node *b = g_ptr_array_index(nodes, 1);
        CHECK_STR(a->name, "client-a");
        CHECK_STR(a->given_name, "client-a");
        CHECK_STR(a->ipv4, "100.64.0.1");
        CHECK_STR(a->ipv6, "fd7a:115c:a1e0::1");
        CHECK(a->online);
        CHECK_STR(b->name, "client-b");
        CHECK_STR(b->ipv4, "100.64.0.2");
        CHECK(!b->online);
    }
    if (nodes)
        g_ptr_array_unref(nodes);
    GPtrArray *camel = NULL;
    CHECK(ml_headscale_nodes_parse("[{\"name\": \"n\", \"givenName\": \"g\", "
                                   "\"ipAddresses\": [\"fd7a:115c:a1e0::9\", \"100.64.0.9\"]}]",
                                   &camel, NULL));
    if (camel) {
        const struct ml_hs_node *n = g_ptr_array_index(camel, 0);
        CHECK_STR(n->given_name, "g");
        CHECK_STR(n->ipv4, "100.64.0.9");
        CHECK_STR(n->ipv6, "fd7a:115c:a1e0::9");
        g_ptr_array_unref(camel);
    }
    GPtrArray *empty = NULL;
    CHECK(ml_headscale_nodes_parse("null\n", &empty, NULL));
    CHECK(empty && empty->len == 0);
    if (empty)
        g_ptr_array_unref(empty);
    /* After the joins: Headscale's list must hold each client with the address it reported.
     * `headscale nodes list -o json` (v0.29.2 cmd/headscale/cli/nodes.go listNodesCmd ->
     * printListOutput -> json.MarshalIndent of the gRPC []*v1.Node) uses the protobuf json tags
     * of gen/go/headscale/v1/node.pb.go: "name", "given_name", "ip_addresses", "online"; nil
     * nodes marshal as null. `preauthkeys create` takes --user as a uint64 ID, --reusable and
     * --expiration (cli/preauthkeys.go), as start_headscale passes them. */
    GPtrArray *two = NULL;
    CHECK(ml_headscale_nodes_parse(list, &two, NULL));
    CHECK(ml_headscale_nodes_check(two, "client-a", "100.64.0.1", NULL));
    CHECK(ml_headscale_nodes_check(two, "client-b", "100.64.0.2", NULL));
    g_autoptr(GError) wrong = NULL;
    CHECK(!ml_headscale_nodes_check(two, "client-a", "100.64.0.7", &wrong));
    CHECK_STR(wrong ? wrong->message : NULL, "Headscale lists client-a with 100.64.0.1, but the "
                                             "node itself says 100.64.0.7 ('tailscale ip -4')");
    g_autoptr(GError) absent = NULL;
    CHECK(!ml_headscale_nodes_check(two, "client-c", "100.64.0.3", &absent));
    CHECK(absent && strstr(absent->message, "does not list client-c"));
    if (two)
        g_ptr_array_unref(two);
    GPtrArray *never = NULL;
    CHECK(!ml_headscale_nodes_parse("{\"nodes\": []}", &never, NULL));
    CHECK(never == NULL);
}

/* tailscaled's command line and where it runs, the footprint command, the auto path's settle,
 * and which observation the hub's role is judged by. */
static void test_paths(void)
{
    g_autoptr(GError) err = NULL;
    struct ml_topology *topo = ml_topology_load("topologies/three-guest.yaml", &err);
    CHECK(topo != NULL);
    if (!topo)
        return;
    struct ml_lab lab = {.topo = topo};
    size_t client = topo->measure.client, hub = topo->hub;

    /* --no-logs-no-support: tailscale cmd/tailscaled/tailscaled.go:225 defines it (the same
     * line at v1.102.3 and de9ec7e), :321-322 set envknob NoLogsNoSupport, and
     * logpolicy/logpolicy.go:718 turns log uploads off on it. Without it logtail retries
     * log.tailscale.com and then asks the DERP server, the hub, for bootstrap DNS over HTTPS
     * (logpolicy.go:846-851): the hub moves bytes during a check that wants it quiet. */
    struct ml_daemon d = ml_tailscaled_on(&lab, client);
    CHECK(strstr(d.command, " --no-logs-no-support") != NULL);
    CHECK(strstr(d.command, " --port=41641") != NULL);
    CHECK(d.netns == NULL);
    /* The lab's CA is tailscaled's alone: its environment names the CA's directory. */
    /* And no interface address among its endpoints: the other dataplanes' tunnels are not
     * Tailscale's paths (path_tailscale.c, tailscaled_daemon). The knob at the pin, tailscale.com
     * v1.102.5: wgengine/magicsock/debugknobs.go:27 registers TS_DEBUG_OMIT_LOCAL_ADDRS, and
     * magicsock.go:1325 drops every EndpointLocal on it, STUN's endpoint kept. */
    CHECK(g_str_has_prefix(d.command, "/usr/bin/env SSL_CERT_DIR=" ML_HEADSCALE_CA_DIR
                                      " TS_DEBUG_OMIT_LOCAL_ADDRS=1 /usr/local/sbin/tailscaled "));
    g_autofree char *script = ml_daemon_script(&d);
    CHECK(strstr(script, "--no-logs-no-support") != NULL);
    lab.nat_now[client] = ML_NAT_SYMMETRIC;
    d = ml_tailscaled_on(&lab, client);
    CHECK_STR(d.netns, ML_PLAN_NETNS);
    CHECK(strstr(d.command, " --no-logs-no-support") != NULL);

    /* tailscale0 is in the NAT's namespace while the client sits behind one. */
    g_autofree char *natted = ml_tailscale_observe_cmd(&lab, client);
    CHECK(strstr(natted, "ip netns exec " ML_PLAN_NETNS " ip -d -o link show tailscale0") != NULL);
    lab.nat_now[client] = ML_NAT_NONE;
    g_autofree char *plain = ml_tailscale_observe_cmd(&lab, client);
    CHECK(strstr(plain, "ip netns") == NULL && strstr(plain, "ip -d -o link show tailscale0"));
    g_autofree char *on_hub = ml_tailscale_observe_cmd(&lab, hub);
    CHECK(strstr(on_hub, "-C headscale") != NULL && strstr(on_hub, "tailscale0") == NULL);

    /* tailscale-auto settles like the other paths after a policy change. */
    const struct ml_path_ops *autop = ml_path_find("tailscale-auto");
    CHECK(autop && autop->settle != NULL);
    CHECK(ml_path_find("tailscale-direct")->settle && ml_path_find("tailscale-relay")->settle);

    /* The status is read before the CLI ping, which pings every candidate at once and can
     * change the path (wgengine/magicsock/endpoint.go:983-1036 discoPing): the auto path's hub
     * role comes from own[0], the status. Here the status says direct and the later ping only
     * saw DERP: the role is the status's. */
    g_autofree char *status = sample("status-1.102.4-windows.json");
    g_autoptr(GString) renamed = g_string_new(status);
    g_string_replace(renamed, "\"iphone-13.", "\"client-b.", 0);
    struct ml_evidence ev = {0};
    ev.own[0] = g_strdup(renamed->str);
    ev.own[1] = sample("ping-derp-only-pr663.txt");
    CHECK(autop->dataplane->autop->view_own == 0);
    CHECK(ml_path_role(autop, topo, &ev) == ML_HUB_QUIET);
    ml_evidence_clear(&ev);
    ml_topology_free(topo);
}

/* The lab's CA, made by the hub's script itself (its directory moved to a temporary one) with
 * this machine's openssl: it vouches for headscale.lab and the hub's address and for nothing
 * else, for 30 days; the certificate Headscale serves verifies for both. tailscaled, the one
 * program that trusts it, runs with SSL_CERT_DIR naming the client's copy (tailscale's
 * net/tlsdial/tlsdial.go verifies against x509's system pool, which Go reads from the bundle and
 * SSL_CERT_DIR's directories), and the client's script no longer touches the system store. */
static void test_lab_ca(void)
{
    g_autofree char *openssl = g_find_program_in_path("openssl");
    if (!openssl) {
        printf("note: no openssl here: the lab CA was not made\n");
        return;
    }
    g_autofree char *dir = g_dir_make_tmp("test-lab-ca-XXXXXX", NULL);
    g_autofree char *script = ml_lab_ca_hub_script(ML_HEADSCALE_HOSTNAME, "192.0.2.10");
    GString *s = g_string_new(script);
    g_string_replace(s, ML_HEADSCALE_TLS_DIR, dir, 0);
    const char *argv[] = {"sh", "-c", s->str, NULL};
    g_autofree char *printed = NULL;
    CHECK(ml_spawn(argv, &printed, NULL));
    g_string_free(s, TRUE);
    g_autofree char *ca = g_build_filename(dir, "ca.crt", NULL);
    g_autofree char *server = g_build_filename(dir, "server.crt", NULL);
    g_autofree char *ca_text = NULL;
    CHECK(g_file_get_contents(ca, &ca_text, NULL, NULL) && printed && !strcmp(printed, ca_text));
    g_autofree char *nc = cert_name_constraints(ca);
    CHECK(nc && strstr(nc, "critical") && strstr(nc, "Permitted:") &&
          strstr(nc, "DNS:headscale.lab") && strstr(nc, "IP:192.0.2.10/255.255.255.255"));
    const char *hub_dns[] = {"openssl", "verify", "-CAfile", ca, "-verify_hostname",
                             ML_HEADSCALE_HOSTNAME, server, NULL};
    const char *hub_ip[] = {"openssl", "verify", "-CAfile", ca, "-verify_ip", "192.0.2.10",
                            server, NULL};
    CHECK(ml_spawn(hub_dns, NULL, NULL) && ml_spawn(hub_ip, NULL, NULL));
    CHECK(!ca_vouches_for(dir, "DNS:www.bank.example", "-verify_hostname", "www.bank.example"));
    CHECK(!ca_vouches_for(dir, "IP:198.51.100.7", "-verify_ip", "198.51.100.7"));
    CHECK(ca_vouches_for(dir, "DNS:headscale.lab", "-verify_hostname", ML_HEADSCALE_HOSTNAME));
    CHECK(cert_lasts_days(ca, ML_LAB_CA_DAYS - 1) && !cert_lasts_days(ca, ML_LAB_CA_DAYS + 1));
    g_autofree char *client = ml_lab_ca_client_script(ca_text, ML_HEADSCALE_HOSTNAME, "192.0.2.10");
    CHECK(client && !strstr(client, "update-ca-certificates") &&
          !strstr(client, "/usr/local/share/ca-certificates") &&
          strstr(client, "cat > " ML_HEADSCALE_CA_DIR "/"));
    const char *rm[] = {"rm", "-rf", dir, NULL};
    ml_spawn(rm, NULL, NULL);
}

int main(void)
{
    test_renderers();
    test_lab_ca();
    test_ping();
    test_status();
    test_netmap_endpoints();
    test_lab_samples();
    test_metrics();
    test_tunnel_counts();
    test_headscale();
    test_paths();
    return check_finish();
}
