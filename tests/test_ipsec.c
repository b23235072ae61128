/* ipsec-hub (src/dataplanes/ipsec.c) without guests: its configurations against golden copies,
 * its encapsulation's frame sizes and hub factor, and its verify on the hub's view as recorded
 * in network namespaces (tests/ipsec_netns.sh, tests/data/samples/ipsec/README).
 *
 * Sources for every key and format, Debian 12's strongSwan 5.9.8 and iproute2 6.1:
 * swanctl.conf(5): connections.<conn>.encap, if_id_in/if_id_out, local/remote pubkeys ("a
 * relative path from the swanctl pubkey directory"), children.<child>.esp_proposals,
 * start_action, dpd_action; keyingtries 0 = forever; strongswan.conf(5) charon.install_routes.
 * swanctl list_sas.c prints "NAME: #N, reqid N, INSTALLED, TUNNEL-in-UDP, ESP:AES_GCM_16-256",
 * "in  SPI, N bytes, N packets, Ns ago" and "remote TS". iproute2 ip/xfrm_state.c prints
 * "encap type espinudp", "aead rfc4106(gcm(aes)) KEY ICVBITS" and, with -s, "lifetime
 * current:" then "N(bytes), N(packets)". The kernel's esp4.c: header_len 8 ESP + 8 IV + 20 IP
 * (tunnel) + 8 UDP (encap), xfrm_state_mtu = ((mtu - header_len - ICV) & ~3) - 2.
 *
 * As a driver for the netns test: `test_ipsec key-command`, `view-command`, `setup NODE KEYDIR`
 * (node's setup script for the netns lab, the public keys read from KEYDIR/NAME.pem) and
 * `verify DIR` (verify on DIR's recorded view) print what ipsec.c renders and decides. */
#include <arpa/inet.h>
#include <glib/gstdio.h>
#include <math.h>

#include "check.h"
#include "fixtures.h"
#include "core/spawn.h"
#include "dataplanes/bundle.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "measure/physics.h"
#include "topology/plan.h"
#include "topology/topology.h"

/* ipsec.c's own, kept in that one file (no header for a single path); these are its exports. */
extern const char ml_ipsec_key_command[];
extern const char ml_ipsec_xfrm_view_command[];
char *ml_ipsec_render_conf(const struct ml_topology *t, size_t node);
char *ml_ipsec_render_setup(const struct ml_topology *t, size_t node, char *const *pub);
bool ml_ipsec_pubkey_valid(const char *pem);

#define IPSEC ml_path_find("ipsec-hub")
#define CHECK_NEAR(a, b, tol) CHECK(fabs((a) - (b)) < (tol))

static const char fake_pub[] = "-----BEGIN PUBLIC KEY-----\n"
                               "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"
                               "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n"
                               "-----END PUBLIC KEY-----\n";

/* topologies/dataplanes.yaml; with netns, its lab addresses moved to the netns lab's
 * 10.231.17.10 + i, as tests/ipsec_netns.sh builds it. */
static struct ml_topology *load(bool netns)
{
    g_autoptr(GError) err = NULL;
    struct ml_topology *t = ml_topology_load("topologies/dataplanes.yaml", &err);
    if (!t) {
        fprintf(stderr, "cannot load topologies/dataplanes.yaml: %s\n", err->message);
        exit(1);
    }
    for (size_t i = 0; netns && i < t->n_nodes; i++)
        t->nodes[i].address.s_addr = htonl((10u << 24) | (231u << 16) | (17u << 8) | (10 + i));
    return t;
}

static char *sample(const char *dir, const char *name)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        fprintf(stderr, "cannot read %s\n", path);
    return text;
}

/* The hub's view as observe() records it, from DIR's files. */
static struct ml_evidence recorded(const char *dir)
{
    struct ml_evidence ev = {0};
    ev.route = g_strstrip(sample(dir, "route-client-a.txt"));
    ev.own[0] = sample(dir, "list-sas-hub.txt");
    ev.own[1] = sample(dir, "xfrm-state-hub.txt");
    ev.own[2] = sample(dir, "pidof-hub.txt");
    ml_route_parse(ev.route, &ev.rt);
    return ev;
}

static bool verified(const struct ml_topology *t, struct ml_evidence *ev, const char *needle)
{
    g_autoptr(GString) s = g_string_new(NULL);
    bool ok = IPSEC->verify(t, ev, s);
    bool said = !needle || strstr(s->str, needle);
    if (!said)
        fprintf(stderr, "sentence lacks \"%s\": %s\n", needle, s->str);
    CHECK(said);
    ml_evidence_clear(ev);
    return ok;
}

static void replace(char **text, const char *from, const char *to)
{
    GString *s = g_string_new(*text);
    CHECK(g_string_replace(s, from, to, 0) > 0);
    g_free(*text);
    *text = g_string_free(s, FALSE);
}

#define SAMPLES "tests/data/samples/ipsec"

/* The hub's kernel SAs' bytes (tests/data/samples/ipsec: 20 probe pings each way, 20,560 bytes
 * an SA): each end's in + out, summed over its SAs, so that a rekey's new SA adds to the old
 * one's frozen count instead of hiding behind it. */
static void test_tunnel_counts(void)
{
    struct ml_topology *t = load(true);
    struct ml_evidence ev = recorded(SAMPLES);
    struct ml_tunnel_count c[ML_TUNNEL_COUNTS_MAX];
    double up = 0;
    CHECK(IPSEC->tunnel_counts(t, &ev, c, &up) == 2 && isnan(up));
    CHECK_STR(c[0].who, "the hub's SAs with client-a");
    CHECK(c[0].bytes == 2 * 20560);
    CHECK_STR(c[1].who, "the hub's SAs with client-b");
    CHECK(c[1].bytes == 2 * 20560);
    /* A rekey: a second SA from client-a to the hub, new and counting. */
    g_autofree char *first = g_strdup(ev.own[1]);
    const char *at = strstr(first, "src 10.231.17.11 dst 10.231.17.10");
    CHECK(at != NULL);
    if (at) {
        GString *g = g_string_new(at);
        g_string_replace(g, "20560(bytes)", "1000(bytes)", 1);
        g_free(ev.own[1]);
        ev.own[1] = g_strconcat(first, g->str, NULL);
        g_string_free(g, TRUE);
        CHECK(IPSEC->tunnel_counts(t, &ev, c, &up) == 2);
        CHECK(c[0].bytes == 2 * 20560 + 1000);
        CHECK(c[1].bytes == 2 * 20560);
    }
    /* The uptime the observe prints before the SAs. */
    g_autofree char *sas = g_strdup(ev.own[1]);
    g_free(ev.own[1]);
    ev.own[1] = g_strconcat("812.07\n", sas, NULL);
    CHECK(IPSEC->tunnel_counts(t, &ev, c, &up) == 2 && up == 812.07);
    CHECK(c[0].bytes == 2 * 20560 + 1000);
    /* No SAs, no counts. */
    g_free(ev.own[1]);
    ev.own[1] = g_strdup("");
    CHECK(IPSEC->tunnel_counts(t, &ev, c, &up) == 0);
    ml_evidence_clear(&ev);
    ml_topology_free(t);
}

static void test_verify(void)
{
    struct ml_topology *t = load(true);
    struct ml_evidence ev = recorded(SAMPLES);
    CHECK(verified(t, &ev, "hub's CHILD_SA to client-b INSTALLED, ESP in UDP, AES-GCM-256"));

    /* The client's route leaves by eth0: its packets would miss the if_id policies. */
    ev = recorded(SAMPLES);
    replace(&ev.route, "dev ipsec0", "dev eth0");
    ml_route_parse(ev.route, &ev.rt);
    CHECK(!verified(t, &ev, NULL));
    /* ESP not in UDP: charon's CHILD_SA says TUNNEL, the kernel's SA has no encap line. */
    ev = recorded(SAMPLES);
    replace(&ev.own[0], "TUNNEL-in-UDP", "TUNNEL");
    CHECK(!verified(t, &ev, "not in UDP"));
    ev = recorded(SAMPLES);
    replace(&ev.own[1], "encap type espinudp", "encap type none");
    CHECK(!verified(t, &ev, "kernel SAs missing or other"));
    /* Another cipher. */
    ev = recorded(SAMPLES);
    replace(&ev.own[0], "ESP:AES_GCM_16-256", "ESP:AES_CBC-256/HMAC_SHA2_256_128");
    CHECK(!verified(t, &ev, "not AES-GCM-256"));
    /* The server's SA is not the hub's: client-b's /32 is nowhere in the hub's view. */
    ev = recorded(SAMPLES);
    replace(&ev.own[0], "10.46.0.3/32", "10.46.0.9/32");
    CHECK(!verified(t, &ev, "the hub has no CHILD_SA to client-b"));
    /* The hub's SA to client-b carried nothing (its packets did not cross the hub). */
    ev = recorded(SAMPLES);
    replace(&ev.own[1], "src 10.231.17.10 dst 10.231.17.12", "src 10.231.17.10 dst 10.231.17.99");
    CHECK(!verified(t, &ev, "kernel SAs missing or other"));
    /* Both SAs set up, but not used in the last minute: the probe went elsewhere. */
    ev = recorded(SAMPLES);
    replace(&ev.own[0], "     0s ago", "   900s ago");
    CHECK(!verified(t, &ev, "last 900s and 900s ago"));
    /* The kernel's last use a moment after charon's clock: swanctl's unsigned difference
     * wraps (recorded in a real guest under TCG, the start view of a forward-8 pass); that is
     * a use just now, not a stale SA. */
    ev = recorded(SAMPLES);
    replace(&ev.own[0], "     0s ago", "18446744073709551615s ago");
    CHECK(verified(t, &ev, "last 0s and 0s ago"));
    /* The daemon is gone. */
    ev = recorded(SAMPLES);
    g_free(ev.own[2]);
    ev.own[2] = g_strdup("\n");
    CHECK(!verified(t, &ev, "charon-systemd does not run"));
    /* The view could not be read. */
    ev = recorded(SAMPLES);
    ev.own_error = g_strdup("cannot read the hub's SAs: guest agent timed out");
    CHECK(!verified(t, &ev, "guest agent timed out"));
    /* Nothing in the recorded view is a key: observe's sed withheld them. */
    g_autofree char *xfrm = sample(SAMPLES, "xfrm-state-hub.txt");
    CHECK(xfrm && strstr(xfrm, "aead rfc4106(gcm(aes)) (key withheld) (288 bits) 128"));
    CHECK(xfrm && !g_regex_match_simple("0x[0-9a-f]{16}", xfrm, 0, 0));
    ml_topology_free(t);
}

/* ESP in UDP, AES-GCM-256, on a 1500-byte lab NIC. */
static void test_encap(void)
{
    const struct ml_encap *e = IPSEC->encap;
    CHECK(e && e->inner_mtu == 1438 && e->overhead == 60 && e->pad_to == 4 && e->trailer == 2);
    /* A full segment: 1438 + 2 = 1440, already a multiple of 4; + 60 = 1500, the NIC's MTU. */
    CHECK(ml_physics_frame_bytes(e, 1438) == 1500 + 14);
    /* ping without -s: 84 + 2 padded to 88, + 60 + 14 Ethernet. */
    CHECK(ml_physics_frame_bytes(e, ML_PING_INNER_BYTES) == 162);
    /* an ACK with timestamps: 52 + 2 padded to 56. */
    CHECK(ml_physics_frame_bytes(e, 52) == 130);
    struct ml_physics p;
    struct ml_physics_counts n = {.payload_bytes = 1080164352.0};
    CHECK(ml_physics_expected(e, &n, &p));
    CHECK(p.mss_bytes == 1386 && p.data_frame_bytes == 1514);
    /* Each segment crosses the hub twice: 2 x 1514 / 1386 with no ACK. */
    CHECK_NEAR(p.hub_bytes_per_payload_byte, 2.0 * 1514 / 1386, 0.0005);
    CHECK_NEAR(p.hub_bytes_per_payload_byte, 2.1847, 0.0005);
    /* A ping through the hub: in and out once each, 2 x 162 / 84. */
    CHECK_NEAR(2.0 * ml_physics_frame_bytes(e, ML_PING_INNER_BYTES) / ML_PING_INNER_BYTES, 3.857,
               0.001);
    /* WireGuard's frames are unchanged by the trailer field (0 there). */
    CHECK(ml_physics_frame_bytes(ml_path_find("wireguard-hub")->encap, 1420) == 1494);
}

static void test_render(void)
{
    struct ml_topology *t = load(false);
    char *pub[] = {(char *)fake_pub, (char *)fake_pub, (char *)fake_pub};
    g_autofree char *hub = ml_ipsec_render_conf(t, 0);
    check_golden("ipsec-hub.conf", hub);
    g_autofree char *client = ml_ipsec_render_conf(t, 1);
    check_golden("ipsec-client-a.conf", client);
    g_autofree char *setup = ml_ipsec_render_setup(t, 1, pub);
    check_golden("ipsec-setup-client-a.sh", setup);
    g_autofree char *hub_setup = ml_ipsec_render_setup(t, 0, pub);
    CHECK(strstr(hub_setup, "net.ipv4.ip_forward=1") && !strstr(setup, "ip_forward"));
    CHECK(strstr(hub, "encap = yes") && strstr(client, "encap = yes"));
    CHECK(strstr(hub, "remote_ts = 10.46.0.2/32") && strstr(hub, "remote_ts = 10.46.0.3/32"));
    /* Public keys only: nothing private reaches a guest from the host. */
    CHECK(!strstr(setup, "PRIVATE") && !strstr(hub_setup, "PRIVATE") && !strstr(hub, "secret"));

    CHECK(ml_ipsec_pubkey_valid(fake_pub));
    CHECK(!ml_ipsec_pubkey_valid("-----BEGIN PUBLIC KEY-----\nEOF\nrm -rf /\n"
                                 "-----END PUBLIC KEY-----\n"));
    CHECK(!ml_ipsec_pubkey_valid("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"));
    CHECK(!ml_ipsec_pubkey_valid(NULL) && !ml_ipsec_pubkey_valid(""));

    struct ml_port ports[ML_PORTS_MAX];
    size_t np = IPSEC->dataplane->ports(t, ports, ML_PORTS_MAX);
    CHECK(np == 2 && ports[0].port == 500 && ports[1].port == 4500 &&
          ports[0].proto == ML_PROTO_UDP && ports[1].proto == ML_PROTO_UDP && ports[0].open &&
          ports[1].open && !strcmp(ports[1].dataplane, "ipsec"));
    int line = 0, col = 0;
    g_autofree char *none = IPSEC->dataplane->conflict(t, &line, &col);
    CHECK(none == NULL);
    ml_topology_free(t);
}

/* What `openssl` prints for a PEM key on stdin (argv after the key's file), or NULL. */
static char *openssl_of(const char *pem, const char *const *args)
{
    g_autofree char *dir = g_dir_make_tmp("test-ipsec-XXXXXX", NULL);
    g_autofree char *p = g_build_filename(dir, "k.pem", NULL);
    g_file_set_contents(p, pem, -1, NULL);
    GPtrArray *v = g_ptr_array_new();
    g_ptr_array_add(v, "openssl");
    for (size_t i = 0; args[i]; i++)
        g_ptr_array_add(v, strcmp(args[i], "KEY") ? (char *)args[i] : p);
    g_ptr_array_add(v, NULL);
    char *out = NULL;
    if (!ml_spawn((const char *const *)v->pdata, &out, NULL))
        g_clear_pointer(&out, g_free);
    g_ptr_array_free(v, TRUE);
    g_unlink(p);
    g_rmdir(dir);
    return out;
}

/* The export: each node's swanctl.conf is the lab's, title aside, but for its ends (the hub
 * answers %any, a client dials --hub-address from %any); keys made here as `pki` makes them, the
 * pubkey files the public halves of the nodes' own private keys (openssl derives them again),
 * each node with the public keys of its peers only; ipsec0 from a script and a unit, on the
 * hub's NIC as given; the hub forwards; nothing of a client's private key in the hub's
 * user-data. */
static void test_export(void)
{
    struct ml_topology *t = load(false);
    g_autoptr(MlBundle) b = ml_bundle_new(t, "vpn.example.net", "ens3", "test label");
    g_autoptr(GError) err = NULL;
    CHECK(ml_dp_export(IPSEC->dataplane, b, &err));
    const struct ml_bundle_file *hc = ml_bundle_find(b, "ipsec/hub/swanctl.conf"),
                                *ac = ml_bundle_find(b, "ipsec/client-a/swanctl.conf"),
                                *ak = ml_bundle_find(b, "ipsec/client-a/meshlab.pem"),
                                *apa = ml_bundle_find(b, "ipsec/client-a/pubkey/client-a.pem"),
                                *hpa = ml_bundle_find(b, "ipsec/hub/pubkey/client-a.pem"),
                                *hs = ml_bundle_find(b, "ipsec/hub/meshlab-ipsec0"),
                                *as = ml_bundle_find(b, "ipsec/client-a/meshlab-ipsec0");
    CHECK(hc && ac && ak && apa && hpa && hs && as);
    CHECK(!ml_bundle_find(b, "ipsec/client-a/pubkey/client-b.pem"));
    if (!hc || !ac || !ak || !apa || !hpa || !hs || !as) {
        ml_topology_free(t);
        return;
    }
    g_autofree char *lab_hub = ml_ipsec_render_conf(t, 0);
    g_autofree char *lab_a = ml_ipsec_render_conf(t, 1);
    replace(&lab_hub, "meshlab lab dataplanes", "test label");
    replace(&lab_hub, "local_addrs = 192.0.2.10", "local_addrs = %any");
    replace(&lab_hub, "remote_addrs = 192.0.2.11", "remote_addrs = %any");
    replace(&lab_hub, "remote_addrs = 192.0.2.12", "remote_addrs = %any");
    CHECK_STR(hc->content, lab_hub);
    replace(&lab_a, "meshlab lab dataplanes", "test label");
    replace(&lab_a, "local_addrs = 192.0.2.11", "local_addrs = %any");
    replace(&lab_a, "remote_addrs = 192.0.2.10", "remote_addrs = vpn.example.net");
    CHECK_STR(ac->content, lab_a);
    CHECK(!strcmp(ac->install, "/etc/swanctl/conf.d/meshlab.conf") && ac->node == 1);
    CHECK((ak->flags & ML_BUNDLE_SECRET) && !(apa->flags & ML_BUNDLE_SECRET));
    CHECK(g_str_has_prefix(ak->content, "-----BEGIN EC PRIVATE KEY-----\n") &&
          !strcmp(ak->install, "/etc/swanctl/private/meshlab.pem"));
    CHECK(ml_ipsec_pubkey_valid(apa->content) && !strcmp(apa->content, hpa->content));
    g_autofree char *openssl = g_find_program_in_path("openssl");
    if (openssl) {
        const char *pubout[] = {"ec", "-in", "KEY", "-pubout", NULL};
        g_autofree char *derived = openssl_of(ak->content, pubout);
        CHECK_STR(derived, apa->content);
        const char *check[] = {"ec", "-in", "KEY", "-check", "-noout", NULL};
        g_autofree char *ok = openssl_of(ak->content, check);
        CHECK(ok != NULL);
    } else {
        printf("note: no openssl here: the exported keys' halves were not compared\n");
    }
    CHECK(strstr(hs->content, "\ndev='ens3'\n") &&
          strstr(hs->content, "ip link add ipsec0 mtu 1438 type xfrm ${dev:+dev \"$dev\"} if_id 1\n"
                              "ip addr add 10.46.0.1/24 dev ipsec0\n"));
    CHECK(strstr(as->content,
                 "hub=$(getent ahostsv4 'vpn.example.net' | awk 'NR == 1 {print $1}')\n") &&
          strstr(as->content, "ip addr add 10.46.0.2/24 dev ipsec0\n"));
    CHECK(fixture_sh_syntax_ok(hs->content) && fixture_sh_syntax_ok(as->content));
    bool hub_key = false, script_755 = false, a_key = false;
    for (guint k = 0; k < b->hub_files->len; k++) {
        const struct ml_bundle_hub_file *h = g_ptr_array_index(b->hub_files, k);
        hub_key |= !strcmp(h->path, "/etc/swanctl/private/meshlab.pem") && h->mode == 0600;
        script_755 |= !strcmp(h->path, "/usr/local/sbin/meshlab-ipsec0") && h->mode == 0755;
        a_key |= strstr(h->content, ak->content + 40) != NULL;
    }
    CHECK(hub_key && script_755 && !a_key);
    GPtrArray *cc = b->client_commands[1];
    CHECK(cc && cc->len == 2 &&
          !strcmp(g_ptr_array_index(cc, 0), "chmod 755 /usr/local/sbin/meshlab-ipsec0") &&
          g_str_has_suffix(g_ptr_array_index(cc, 1), "swanctl --load-all --noprompt 2>&1"));
    bool fwd = false;
    for (guint k = 0; k < b->hub_sysctls->len; k++)
        fwd |= !strcmp(g_ptr_array_index(b->hub_sysctls, k), "net.ipv4.ip_forward = 1");
    CHECK(fwd);
    ml_topology_free(t);
}

static int driver(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "key-command"))
        return printf("%s\n", ml_ipsec_key_command) < 0;
    if (argc == 2 && !strcmp(argv[1], "view-command"))
        return printf("%s\n", ml_ipsec_xfrm_view_command) < 0;
    struct ml_topology *t = load(true);
    int rc = 2;
    if (argc == 4 && !strcmp(argv[1], "setup")) {
        size_t node = (size_t)g_ascii_strtoull(argv[2], NULL, 10);
        char *pub[ML_MAX_NODES] = {0};
        for (size_t i = 0; i < t->n_nodes; i++) {
            g_autofree char *f = g_strdup_printf("%s.pem", t->nodes[i].name);
            pub[i] = sample(argv[3], f);
        }
        g_autofree char *s = node < t->n_nodes ? ml_ipsec_render_setup(t, node, pub) : NULL;
        rc = s ? printf("%s", s) < 0 : 2;
        for (size_t i = 0; i < ML_MAX_NODES; i++)
            g_free(pub[i]);
    } else if (argc == 3 && !strcmp(argv[1], "verify")) {
        struct ml_evidence ev = recorded(argv[2]);
        g_autoptr(GString) s = g_string_new(NULL);
        rc = IPSEC->verify(t, &ev, s) ? 0 : 1;
        printf("%s: %s\n", rc ? "not verified" : "verified", s->str);
        ml_evidence_clear(&ev);
    }
    ml_topology_free(t);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return driver(argc, argv);
    test_encap();
    test_render();
    test_export();
    test_verify();
    test_tunnel_counts();
    return check_finish();
}
