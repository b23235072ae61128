/* tinc-direct, tinc-relay and tinc-auto (src/dataplanes/tinc.c), included here so its rendered
 * files and commands are tested as they are, and driven for real by tests/tinc_netns.sh:
 * `test_tinc render DIR` writes what the guests would receive for the dataplanes topology on
 * 10.231.0.0/24, from the public keys the script's nodes made in DIR/keys/NODE.pub; `test_tinc
 * export DIR` writes what `meshlab export` hands over for tinc (export_tinc, keys made by
 * libcrypto, the hub at 10.231.0.10) as DIR/NODE/FILE below /etc/tinc/meshlab, and DIR/unit.
 *
 * Formats checked against tinc 1.0.36 (git tag release-1.0.36 of gsliepen/tinc, the version of
 * Debian 12's package): dump_nodes in src/node.c, dump_edges in src/edge.c; the key block of
 * hosts/NAME from `tincd -K` (src/conf.c, PEM_write_RSAPublicKey: "-----BEGIN RSA PUBLIC
 * KEY-----"); tinc.conf(5) for Name, AddressFamily, Interface, Mode, ConnectTo, Address, Port,
 * Subnet, Cipher, Digest, MACLength; tincd(8) for -n, -K, -D, --kill=USR2 ("Dump all known
 * nodes, edges and subnets to syslog"; to stderr under -D). The samples under
 * tests/data/samples/tinc/ were recorded by tests/tinc_netns.sh on Debian 12, tinc 1.0.36-2+b2. */
#include "dataplanes/tinc.c"

#include <glib/gstdio.h>

#include <math.h>

#include "check.h"
#include "measure/physics.h"
#include "topology/topology.h"

static struct ml_topology *load(void)
{
    g_autofree char *text = NULL;
    g_autoptr(GError) err = NULL;
    if (!g_file_get_contents("topologies/dataplanes.yaml", &text, NULL, &err)) {
        fprintf(stderr, "%s\n", err->message);
        exit(1);
    }
    g_autoptr(GString) yaml = g_string_new(text);
    g_string_replace(yaml, "192.0.2.", "10.231.0.", 0);
    g_string_replace(yaml, "wireguard-direct, wireguard-go-hub]",
                     "wireguard-direct, wireguard-go-hub, tinc-direct, tinc-relay]", 1);
    struct ml_topology *t = ml_topology_parse("netns.yaml", yaml->str, yaml->len, &err);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        exit(1);
    }
    return t;
}

static void put(const char *dir, const char *name, const char *text)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autoptr(GError) err = NULL;
    if (!g_file_set_contents(path, text, -1, &err)) {
        fprintf(stderr, "%s\n", err->message);
        exit(1);
    }
}

/* What tests/tinc_netns.sh runs: per node its key command, its stdin for the daemon's prepare
 * and its tinc name; once the prepare script, the daemon's command and ready check, and the
 * view's two ends (the journal read between them is the script's log file). */
static int render_mode(const char *dir)
{
    struct ml_topology *t = load();
    char *pub[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < t->n_nodes; i++) {
        g_autofree char *path = g_strdup_printf("%s/keys/%s.pub", dir, t->nodes[i].name);
        if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
            g_autofree char *cmd = key_cmd(t, i);
            g_autofree char *name = g_strdup_printf("keycmd.%s", t->nodes[i].name);
            put(dir, name, cmd);
            continue;
        }
        if (!g_file_get_contents(path, &pub[i], NULL, NULL) ||
            !ml_guest_pem(pub[i], KEY_BANNER, 0)) {
            fprintf(stderr, "%s is not one RSA public key block\n", path);
            return 1;
        }
    }
    for (size_t i = 0; pub[0] && i < t->n_nodes; i++) {
        g_autofree char *bundle = render(t, i, pub);
        g_autofree char *name = g_strdup_printf("bundle.%s", t->nodes[i].name);
        g_autofree char *tn = tinc_name(t, i);
        g_autofree char *tname = g_strdup_printf("name.%s", t->nodes[i].name);
        put(dir, name, bundle);
        put(dir, tname, tn);
    }
    put(dir, "prepare", tinc_daemon.prepare);
    put(dir, "command", tinc_daemon.command);
    put(dir, "ready", tinc_daemon.ready);
    put(dir, "view_kill", VIEW_KILL);
    put(dir, "view_filter", VIEW_FILTER);
    put(dir, "direct_re", tinc_auto.direct_re);
    free_all(pub);
    ml_topology_free(t);
    return 0;
}

/* What tests/tinc_netns.sh installs in its nodes' /etc/tinc/meshlab for its last phase: the
 * export's files of each node, by their install paths, and the unit whose ExecStart it runs. */
static int export_mode(const char *dir)
{
    struct ml_topology *t = load();
    struct ml_bundle *b = ml_bundle_new(t, "10.231.0.10", "eth0", "test_tinc export");
    g_autoptr(GError) err = NULL;
    if (!export_tinc(b, &err)) {
        fprintf(stderr, "%s\n", err->message);
        return 1;
    }
    for (guint k = 0; k < b->files->len; k++) {
        const struct ml_bundle_file *f = g_ptr_array_index(b->files, k);
        if (f->node == SIZE_MAX || !f->install)
            continue;
        const char *n = t->nodes[f->node].name;
        if (!strcmp(f->install, EXPORT_UNIT_PATH)) {
            put(dir, "unit", f->content);
            continue;
        }
        if (!g_str_has_prefix(f->install, CONF_DIR "/"))
            continue;
        g_autofree char *rel = g_build_filename(n, f->install + strlen(CONF_DIR "/"), NULL);
        g_autofree char *path = g_build_filename(dir, rel, NULL);
        g_autofree char *parent = g_path_get_dirname(path);
        g_mkdir_with_parents(parent, 0700);
        put(dir, rel, f->content);
    }
    ml_bundle_free(b);
    ml_topology_free(t);
    return 0;
}

/* The export: each node's files as the lab's but for the hub's address the clients dial, key
 * pairs made here in the PKCS#1 PEM tincd -K writes (each hosts/ block the public half of that
 * node's rsa_key.priv, which openssl derives again), the private keys secret and the hub's in
 * its user-data alone; tinc-up executable where the hub installs it and chmod'ed on a client. */
static void test_export(struct ml_topology *t)
{
    g_autoptr(MlBundle) b = ml_bundle_new(t, "vpn.example.net", "eth0", "test label");
    g_autoptr(GError) err = NULL;
    CHECK(export_tinc(b, &err));
    const struct ml_bundle_file *conf_hub = NULL, *conf_a = NULL, *hub_of_a = NULL, *key_a = NULL,
                                *a_of_a = NULL, *a_of_hub = NULL, *key_hub = NULL;
    for (guint k = 0; k < b->files->len; k++) {
        const struct ml_bundle_file *f = g_ptr_array_index(b->files, k);
        const char *r = f->rel;
        conf_hub = !strcmp(r, "tinc/hub/tinc.conf") ? f : conf_hub;
        conf_a = !strcmp(r, "tinc/client-a/tinc.conf") ? f : conf_a;
        hub_of_a = !strcmp(r, "tinc/client-a/hosts/hub") ? f : hub_of_a;
        a_of_a = !strcmp(r, "tinc/client-a/hosts/client_a") ? f : a_of_a;
        a_of_hub = !strcmp(r, "tinc/hub/hosts/client_a") ? f : a_of_hub;
        key_a = !strcmp(r, "tinc/client-a/rsa_key.priv") ? f : key_a;
        key_hub = !strcmp(r, "tinc/hub/rsa_key.priv") ? f : key_hub;
    }
    CHECK(conf_hub && conf_a && hub_of_a && a_of_a && a_of_hub && key_a && key_hub);
    if (!conf_hub || !conf_a || !hub_of_a || !a_of_a || !a_of_hub || !key_a || !key_hub)
        return;
    CHECK(g_str_has_prefix(conf_hub->content, "# test label: tinc on hub\nName = hub\n") &&
          !strstr(conf_hub->content, "ConnectTo"));
    CHECK(strstr(conf_a->content, "\nConnectTo = hub\n") && conf_a->node == 1 &&
          !strcmp(conf_a->install, "/etc/tinc/meshlab/tinc.conf"));
    CHECK(g_str_has_prefix(hub_of_a->content, "Address = vpn.example.net\nPort = 655\n"));
    CHECK(g_str_has_prefix(a_of_a->content, "Port = 655\nSubnet = 10.44.0.2/32\n"));
    CHECK_STR(a_of_a->content, a_of_hub->content);
    CHECK((key_a->flags & ML_BUNDLE_SECRET) && !(a_of_a->flags & ML_BUNDLE_SECRET));
    CHECK(g_str_has_prefix(key_a->content, "-----BEGIN RSA PRIVATE KEY-----\n"));
    CHECK(strcmp(key_a->content, key_hub->content) != 0);
    /* The hosts/ block is the public half of the node's own private key. */
    g_autofree char *dir = g_dir_make_tmp("test-tinc-XXXXXX", NULL);
    g_autofree char *kp = g_build_filename(dir, "k", NULL);
    CHECK(g_file_set_contents_full(kp, key_a->content, -1, G_FILE_SET_CONTENTS_NONE, 0600, NULL));
    const char *argv[] = {"openssl", "rsa", "-in", kp, "-RSAPublicKey_out", NULL};
    g_autofree char *derived = NULL;
    CHECK(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL,
                       NULL, NULL, &derived, NULL, NULL, NULL));
    g_unlink(kp);
    g_rmdir(dir);
    CHECK(derived && g_str_has_prefix(derived, "-----BEGIN RSA PUBLIC KEY-----\n") &&
          strstr(a_of_a->content, derived) != NULL);
    /* The hub's user-data: its key, its executable tinc-up, never a client's key. */
    bool hub_key = false, up_755 = false, a_key = false;
    for (guint k = 0; k < b->hub_files->len; k++) {
        const struct ml_bundle_hub_file *h = g_ptr_array_index(b->hub_files, k);
        hub_key |= !strcmp(h->path, "/etc/tinc/meshlab/rsa_key.priv") && h->mode == 0600 &&
                   !strcmp(h->content, key_hub->content);
        up_755 |= !strcmp(h->path, "/etc/tinc/meshlab/tinc-up") && h->mode == 0755;
        a_key |= strstr(h->content, key_a->content + 40) != NULL;
    }
    CHECK(hub_key && up_755 && !a_key);
    GPtrArray *cc = b->client_commands[1];
    CHECK(cc && cc->len == 2 &&
          !strcmp(g_ptr_array_index(cc, 0), "chmod 755 /etc/tinc/meshlab/tinc-up") &&
          !strcmp(g_ptr_array_index(cc, 1), EXPORT_START));
}

#define CHECK_NEAR(a, b, tol) CHECK(fabs((a) - (b)) < (tol))
#define SAMPLES "tests/data/samples/tinc/"
#define ROUTE "10.44.0.3 dev tinc0 src 10.44.0.2 uid 0"

static char *sample(const char *name)
{
    g_autofree char *path = g_strconcat(SAMPLES, name, NULL);
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    return text;
}

/* A stand-in key: the rendered files only carry it. */
static const char fake_key[] = "-----BEGIN RSA PUBLIC KEY-----\n"
                               "MIIBCgKCAQEAwIvnVJxYxLXur+tDuZxU5irLEmsvnMkWx0XDLNp92wyQDhYltwKx\n"
                               "-----END RSA PUBLIC KEY-----\n";

/* Each node's files: tinc.conf names it and, on a client only, ConnectTo the hub; only the
 * hub's host file has an Address (the clients' are learned from the hub's edges); every host
 * file its /32 and the cipher; the whole of client-a's as tests/golden/tinc-client-a.bundle. */
static void test_render(struct ml_topology *t)
{
    char *pub[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < t->n_nodes; i++)
        pub[i] = (char *)fake_key;
    g_autofree char *hub = render(t, 0, pub);
    g_autofree char *a = render(t, 1, pub);
    CHECK(strstr(hub, "Name = hub\n") && !strstr(hub, "ConnectTo"));
    CHECK(strstr(a, "Name = client_a\n") && strstr(a, "ConnectTo = hub\n"));
    CHECK(strstr(a, "@@ hosts/hub\nAddress = 10.231.0.10\n"));
    CHECK(strstr(a, "@@ hosts/client_b\nPort = 655\nSubnet = 10.44.0.3/32\n"));
    CHECK(strstr(a, "ip addr add 10.44.0.2/24 dev $INTERFACE\n"));
    CHECK(!strstr(a, "PRIVATE"));
    g_autofree char *golden = NULL;
    CHECK(g_file_get_contents("tests/golden/tinc-client-a.bundle", &golden, NULL, NULL));
    CHECK_STR(a, golden);
    /* The key command prints only the public block tincd -K appended to hosts/NAME. */
    g_autofree char *k = key_cmd(t, 2);
    CHECK(strstr(k, "printf 'Name = client_b\\n' > tinc.conf; tincd -n meshlab -K2048 "));
    CHECK(g_str_has_suffix(k, "/^-----END RSA PUBLIC KEY-----$/' hosts/client_b"));
    CHECK(!strstr(k, "rsa_key.priv;") && !strstr(k, "cat rsa_key"));
}

static void test_ports_conflict(struct ml_topology *t)
{
    struct ml_port p[2];
    CHECK(ports(t, p, 2) == 2);
    CHECK(p[0].proto == ML_PROTO_TCP && p[0].port == 655 && p[0].open);
    CHECK(p[1].proto == ML_PROTO_UDP && p[1].port == 655 && p[1].open);
    CHECK(!strcmp(p[1].dataplane, "tinc"));
    int line = 0, column = 0;
    g_autofree char *none = conflict(t, &line, &column);
    CHECK(none == NULL);
    /* the lab on 10.44.0.0/16 overlaps the overlay */
    g_autofree char *text = NULL;
    CHECK(g_file_get_contents("topologies/dataplanes.yaml", &text, NULL, NULL));
    g_autoptr(GString) yaml = g_string_new(text);
    g_string_replace(yaml, "subnet: 192.0.2.0/24", "subnet: 10.44.0.0/16", 1);
    g_string_replace(yaml, "192.0.2.", "10.44.1.", 0);
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) u = ml_topology_parse("c.yaml", yaml->str, yaml->len, &err);
    CHECK(u != NULL);
    g_autofree char *rule = u ? conflict(u, &line, &column) : NULL;
    CHECK(rule && strstr(rule, "the tinc paths use the overlay 10.44.0.0/24"));
}

static bool check(const struct ml_path_ops *ops, const struct ml_topology *t, const char *view,
                  const char *route)
{
    struct ml_evidence ev = {0};
    ev.own[0] = g_strdup(view);
    ev.route = g_strdup(route);
    ml_route_parse(ev.route, &ev.rt);
    g_autoptr(GString) s = g_string_new(NULL);
    bool ok = ops->verify(t, &ev, s);
    ml_evidence_clear(&ev);
    return ok;
}

/* verify on the recorded dumps: each path on its own and never on the other's; a route that
 * leaves the overlay, a dump cut before "End of nodes.", an unreachable server, the server at
 * an address that is not its own, a missing view: each fails. */
static void test_verify(struct ml_topology *t)
{
    g_autofree char *direct = sample("direct.txt");
    g_autofree char *relay = sample("relay.txt");
    struct ml_found_view v;
    CHECK(view_parse(t, direct, &v) && v.found == ML_FOUND_DIRECT);
    CHECK_STR(v.remote, "10.231.0.12:655");
    CHECK(view_parse(t, relay, &v) && v.found == ML_FOUND_RELAY);
    CHECK_STR(v.relay, "hub");
    CHECK(probed(t, 0, direct) && probed(t, 0, relay));
    CHECK(!probed(t, 2, relay)); /* the server: no probe answered */

    CHECK(check(&ml_path_tinc_direct, t, direct, ROUTE));
    CHECK(!check(&ml_path_tinc_direct, t, relay, ROUTE));
    CHECK(check(&ml_path_tinc_relay, t, relay, ROUTE));
    CHECK(!check(&ml_path_tinc_relay, t, direct, ROUTE));
    CHECK(check(&ml_path_tinc_auto, t, direct, ROUTE));
    CHECK(check(&ml_path_tinc_auto, t, relay, ROUTE));
    CHECK(!check(&ml_path_tinc_direct, t, direct,
                 "10.44.0.3 via 10.231.0.1 dev eth0 src "
                 "10.231.0.11 uid 0"));

    g_autoptr(GString) cut = g_string_new(direct);
    g_string_replace(cut, "End of nodes.", "", 0);
    CHECK(!view_parse(t, cut->str, &v));
    CHECK(!check(&ml_path_tinc_direct, t, cut->str, ROUTE));

    g_autoptr(GString) down = g_string_new(relay);
    CHECK(g_string_replace(down, "status 001a nexthop hub via client_b",
                           "status 000a nexthop hub via client_b", 0) == 1);
    CHECK(view_parse(t, down->str, &v) && v.found == ML_FOUND_NONE);
    CHECK(!check(&ml_path_tinc_relay, t, down->str, ROUTE));

    g_autoptr(GString) elsewhere = g_string_new(direct);
    CHECK(g_string_replace(elsewhere, " client_b at 10.231.0.12 port 655",
                           " client_b at 10.231.0.99 port 655", 0) == 1);
    CHECK(!check(&ml_path_tinc_direct, t, elsewhere->str, ROUTE));
    /* auto: direct to the hub's own address is not a client's */
    g_autoptr(GString) at_hub = g_string_new(direct);
    g_string_replace(at_hub, " client_b at 10.231.0.12 port 655",
                     " client_b at 10.231.0.10 port 655", 0);
    CHECK(!check(&ml_path_tinc_auto, t, at_hub->str, ROUTE));
    /* auto: direct to another dataplane's overlay address is no direct path of this lab */
    g_autoptr(GString) overlay = g_string_new(direct);
    CHECK(g_string_replace(overlay, " client_b at 10.231.0.12 port 655",
                           " client_b at 10.42.0.3 port 655", 0) == 1);
    CHECK(!check(&ml_path_tinc_auto, t, overlay->str, ROUTE));

    /* a server still probed: via itself, no probe answered yet, nexthop the hub: relay */
    g_autoptr(GRegex) server_mtu =
        g_regex_new("(?m)^( client_b at .* pmtu )\\d+ \\(min [1-9]\\d* max \\d+\\)$", 0, 0, NULL);
    g_autofree char *early_text =
        g_regex_replace(server_mtu, direct, -1, 0, "\\g<1>1518 (min 0 max 1518)", 0, NULL);
    g_autoptr(GString) early = g_string_new(early_text);
    CHECK(strcmp(early->str, direct) != 0);
    CHECK(view_parse(t, early->str, &v) && v.found == ML_FOUND_RELAY);
    CHECK(!check(&ml_path_tinc_direct, t, early->str, ROUTE));
    CHECK(!probed(t, 0,
                  "Nodes:\n hub at 10.231.0.10 port 655 cipher 427 digest 672 maclength 16 "
                  "compression 0 options c status 001a nexthop hub via hub pmtu 1456 "
                  "(min 1425 max 1456)\nEnd of nodes.\n"));

    struct ml_evidence none = {.own_error = g_strdup("cannot read tinc's view on the client")};
    g_autoptr(GString) s = g_string_new(NULL);
    CHECK(!ml_path_tinc_relay.verify(t, &none, s));
    ml_evidence_clear(&none);
}

/* The NAT matrix's early end: the regular expression (Python's re; GRegex's PCRE reads it alike)
 * matches the direct dump and not the relayed one. */
static void test_direct_re(void)
{
    g_autofree char *direct = sample("direct.txt");
    g_autofree char *relay = sample("relay.txt");
    CHECK(g_regex_match_simple(tinc_auto.direct_re, direct, 0, 0));
    CHECK(!g_regex_match_simple(tinc_auto.direct_re, relay, 0, 0));
}

/* One tinc 1.0 UDP packet on the hub's wire for n inner bytes (send_udppacket):
 * 14 Ethernet + 20 IP + 8 UDP + CBC(4 seqno + 14 Ethernet + n, PKCS#7 to 16) + 16 MAC. */
static unsigned wire(unsigned n)
{
    return 14 + 20 + 8 + (4 + 14 + n + 16) / 16 * 16 + 16;
}

/* The hub factor of a full-size TCP segment and of the verification ping, relayed: every byte
 * crosses the hub's NIC twice (in from the client, out to the server). */
static void test_encap(void)
{
    const struct ml_encap *e = ml_path_tinc_relay.encap;
    CHECK(e && ml_path_tinc_auto.encap == e && !ml_path_tinc_direct.encap);
    struct ml_physics p;
    struct ml_physics_counts n = {.payload_bytes = 1e9};
    CHECK(ml_physics_expected(e, &n, &p));
    CHECK(p.inner_mtu_bytes == 1437); /* PMTU 1451 to the hub (samples: "pmtu 1451") less 14 */
    CHECK(p.mss_bytes == 1385);       /* 1437 - 20 IP - 20 TCP - 12 timestamps */
    CHECK(p.data_frame_bytes == 1514 && wire(1437) == 1514);
    CHECK_NEAR(2.0 * p.data_frame_bytes / p.mss_bytes, 2.1863, 0.0001);
    CHECK_NEAR(p.hub_bytes_per_payload_byte, 2.1863, 0.0001);
    /* an ACK: 138 on the wire, 141 in the model (n % 16 = 4: three bytes high) */
    CHECK(wire(52) == 138 && p.ack_frame_bytes == 141);
    /* the probe's ping (measure.c: 1000 bytes, 1028 inner): 4 legs for 2 x 1028 probe bytes */
    CHECK(wire(1028) == 1114 && ml_physics_frame_bytes(e, 1028) == 1117);
    CHECK_NEAR(4.0 * wire(1028) / (2 * 1028), 2.167, 0.001);
    /* ping's default 56 bytes (84 inner): 170 each leg, the model 173 */
    CHECK(wire(84) == 170 && ml_physics_frame_bytes(e, 84) == 173);
    CHECK_NEAR(2.0 * wire(84) / 84, 4.048, 0.001);

    /* The relayed TCP stream recorded on the hub's link: full segments are 1514-byte frames,
     * ACKs 138, as wire() says. */
    g_autofree char *dump = sample("relay-tcpdump.txt");
    unsigned data = 0, acks = 0, other = 0;
    g_auto(GStrv) lines = g_strsplit(dump, "\n", -1);
    for (char **l = lines; *l; l++) {
        const char *len = strstr(*l, ", length ");
        if (!len || **l == '#')
            continue;
        unsigned f = (unsigned)strtoul(len + 9, NULL, 10);
        data += f == wire(1437);
        acks += f == wire(52);
        other += f != wire(1437) && f != wire(52);
    }
    CHECK(data > 40 && acks > 10 && other <= 4);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "render"))
        return render_mode(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "export"))
        return export_mode(argv[2]);
    struct ml_topology *t = load();
    test_render(t);
    test_export(t);
    test_ports_conflict(t);
    test_verify(t);
    test_direct_re();
    test_encap();
    ml_topology_free(t);
    return check_finish();
}
