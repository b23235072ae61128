/* openvpn-hub without guests: the status-file parser and verify() on status files
 * recorded in network namespaces (tests/data/samples/openvpn/README), the
 * configurations it renders, and its encapsulation's hub factor.
 *
 * `test_openvpn --render TOPOLOGY DIR` writes what the dataplane would send each
 * guest (DIR/NODE/keygen.sh, start.sh; the configurations once the fingerprints
 * are in DIR/NODE/fp) for tests/openvpn_netns.sh, which runs them for real. */
#include "check.h"
#include "core/util.h"
#include "dataplanes/openvpn.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "measure/physics.h"

#define OPENVPN_HUB ml_path_find("openvpn-hub")
#define LIVE_ROUTE "10.17.0.3 dev ovpn0 src 10.17.0.2 uid 0 cache"

/* Sources each checked item comes from, for Debian 12's OpenVPN 2.6.14:
 * - the status file: openvpn(8) --status/--status-version; multi.c multi_print_status() in
 *   OpenVPN 2.6 writes TITLE, TIME (date, time_t), HEADER rows, CLIENT_LIST (CN, Real Address,
 *   Virtual Address, Virtual IPv6 Address, Bytes Received, Bytes Sent, Connected Since,
 *   Connected Since (time_t), Username, Client ID, Peer ID, Data Channel Cipher),
 *   ROUTING_TABLE, GLOBAL_STATS (dco_enabled since 2.6) and END; the samples are that output.
 * - peer-fingerprint with self-signed certificates and several clients: openvpn(8)
 *   --peer-fingerprint ("specifying a CA ... is optional") and openvpn-examples(5), "Small
 *   OpenVPN setup with peer-fingerprint" (a server listing every client's fingerprint, dh none).
 * - client-config-dir, ccd-exclusive, ifconfig-push, topology subnet, keepalive, disable-dco,
 *   data-ciphers, mssfix's default "1492 mtu": openvpn(8) of 2.6.14 (man openvpn here).
 * - the fingerprint line: OpenSSL 3.0's `openssl x509 -fingerprint -sha256 -noout`. */

static struct ml_topology *topo;

static char *sample(const char *name)
{
    g_autofree char *path = g_build_filename("tests/data/samples/openvpn", name, NULL);
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    return text;
}

static char *replaced(const char *text, const char *from, const char *to)
{
    GString *s = g_string_new(text);
    g_string_replace(s, from, to, 0);
    return g_string_free(s, FALSE);
}

static void test_status_parse(void)
{
    g_autofree char *one = sample("status-1.txt");
    g_autofree char *two = sample("status-2.txt");
    struct ml_openvpn_status a, b;
    CHECK(ml_openvpn_status_parse(one, &a));
    CHECK(ml_openvpn_status_parse(two, &b));
    CHECK(a.n_clients == 2 && b.n_clients == 2);
    CHECK(a.dco == 0 && b.dco == 0);
    CHECK(b.time > a.time && a.time > 1700000000);
    const struct ml_openvpn_client *x = ml_openvpn_status_client(&a, "client-a");
    const struct ml_openvpn_client *y = ml_openvpn_status_client(&b, "client-a");
    CHECK(x && y);
    if (x && y) {
        CHECK_STR(x->virt, "10.17.0.2");
        CHECK(g_str_has_prefix(x->real, "10.231.7.11:"));
        CHECK_STR(x->cipher, "AES-256-GCM");
        CHECK(y->bytes_received > x->bytes_received && x->bytes_received > 20000);
        CHECK(x->bytes_sent > 20000 && x->since > 1700000000);
    }
    CHECK(ml_openvpn_status_client(&a, "client-b") != NULL);
    CHECK(ml_openvpn_status_client(&a, "hub") == NULL);

    /* status-version 3 is the same rows with tabs. */
    g_autofree char *tabs = g_strdup(one);
    for (char *p = tabs; *p; p++)
        if (*p == ',')
            *p = '\t';
    struct ml_openvpn_status t;
    CHECK(ml_openvpn_status_parse(tabs, &t) && t.n_clients == 2 && t.time == a.time);

    /* Lines ending in "\r\n" read the same. */
    g_autofree char *crlf = replaced(one, "\n", "\r\n");
    CHECK(ml_openvpn_status_parse(crlf, &t) && t.n_clients == 2 && t.time == a.time &&
          !strcmp(t.clients[0].cipher, "AES-256-GCM"));

    /* Read while the server rewrote it: every strict prefix lacks END. */
    size_t n = strlen(one);
    bool any = false;
    for (size_t i = 0; i + 4 < n; i++) {
        g_autofree char *cut = g_strndup(one, i);
        any |= ml_openvpn_status_parse(cut, &t);
    }
    CHECK(!any);
    CHECK(t.n_clients == 0 && t.time == -1);

    static const struct {
        const char *from, *to;
    } bad[] = {
        {"TITLE,", "TITLE "},                 /* not a status file */
        {",10.17.0.2,,", ",10.17.0.2,,x"},    /* a number that is not one */
        {"UNDEF,0,0,AES-256-GCM", "UNDEF,0"}, /* a row of another shape */
        {"GLOBAL_STATS,dco_enabled,0", "GLOBAL_STATS,dco_enabled,2"},
        {"END", "END\nCLIENT_LIST,x,y,z,,1,1,d,1,U,0,0,c"}, /* rows after END */
        {"HEADER,ROUTING", "SOMETHING,ROUTING"},            /* a record this does not know */
        {"\nHEADER,ROUTING", "\n\nHEADER,ROUTING"},         /* an empty line (found by fuzzing) */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *text = replaced(one, bad[i].from, bad[i].to);
        CHECK(strcmp(text, one) != 0);
        bool parsed = ml_openvpn_status_parse(text, &t);
        CHECK(!parsed);
        if (parsed && strcmp(text, one) != 0)
            fprintf(stderr, "parsed with %s -> %s\n", bad[i].from, bad[i].to);
    }
    CHECK(!ml_openvpn_status_parse("", &t) && !ml_openvpn_status_parse(NULL, &t));

    /* More clients than fit. */
    GString *many = g_string_new("TITLE,x\nTIME,d,1\n");
    for (int i = 0; i <= ML_OPENVPN_CLIENTS_MAX; i++)
        g_string_append_printf(many, "CLIENT_LIST,c%d,r,v,,1,1,d,1,U,0,0,AES-256-GCM\n", i);
    g_string_append(many, "END\n");
    CHECK(!ml_openvpn_status_parse(many->str, &t));
    g_string_free(many, TRUE);
}

static void test_fingerprint(void)
{
    char fp[96];
    const char *real = "sha256 Fingerprint=AC:2D:79:02:00:D6:D7:DE:18:C7:4C:18:E3:5E:6B:76:50:CF:"
                       "19:4E:F0:3D:8F:07:04:37:0D:20:59:8E:ED:A2\n";
    CHECK(ml_openvpn_fingerprint_parse(real, fp));
    CHECK_STR(fp, "AC:2D:79:02:00:D6:D7:DE:18:C7:4C:18:E3:5E:6B:76:50:CF:19:4E:F0:3D:8F:07:04:37:"
                  "0D:20:59:8E:ED:A2");
    /* OpenSSL 1.1 spelled it "SHA256 Fingerprint=". */
    g_autofree char *upper = replaced(real, "sha256", "SHA256");
    CHECK(ml_openvpn_fingerprint_parse(upper, fp));
    g_autofree char *sha1 = replaced(real, "sha256", "sha1");
    CHECK(!ml_openvpn_fingerprint_parse(sha1, fp));
    g_autofree char *short_ = replaced(real, ":A2\n", "\n");
    CHECK(!ml_openvpn_fingerprint_parse(short_, fp));
    g_autofree char *notx = replaced(real, "AC:", "AG:");
    CHECK(!ml_openvpn_fingerprint_parse(notx, fp));
    CHECK(!ml_openvpn_fingerprint_parse("-----BEGIN PRIVATE KEY-----\n", fp));
    CHECK(!ml_openvpn_fingerprint_parse(NULL, fp));
}

#define PROBE_BYTES 41120 /* 20 answered pings of 1000 bytes, both ways */
/* What the hub moves for them: each ping and its reply in and out as a frame of 1,028 IP bytes,
 * 52 of OpenVPN (no padding), 14 of Ethernet: 2.128 times the probe's bytes. */
#define RELAYED (20 * 4 * (1028 + 52 + 14))

/* A check as observe() records it: the two samples, a pid, the client's route. */
static struct ml_evidence evidence(const char *one, const char *two, const char *pids,
                                   const char *route, long long hub_bytes)
{
    struct ml_evidence ev = {.hub_bytes = hub_bytes,
                             .probe_bytes = PROBE_BYTES,
                             .transmitted = 20,
                             .received = 20,
                             .route = g_strdup(route)};
    ev.own[0] = g_strdup(one);
    ev.own[1] = g_strdup(two);
    ev.own[2] = g_strdup(pids);
    return ev;
}

static bool verdict(struct ml_evidence *ev, const char *want)
{
    g_autoptr(GString) s = g_string_new(NULL);
    bool ok = ml_path_verdict(OPENVPN_HUB, topo, ev, s);
    if (want && !strstr(s->str, want)) {
        fprintf(stderr, "evidence lacks \"%s\": %s\n", want, s->str);
        ok = !ok; /* a verdict for the wrong reason fails the CHECK either way */
    }
    ml_evidence_clear(ev);
    return ok;
}

static void test_verify(void)
{
    g_autofree char *one = sample("status-1.txt");
    g_autofree char *two = sample("status-2.txt");
    struct ml_evidence ev = evidence(one, two, "4242\n", LIVE_ROUTE, RELAYED);
    CHECK(verdict(&ev, "client-a connected as 10.17.0.2, cipher AES-256-GCM, 80 bytes in; "
                       "client-b connected as 10.17.0.3, cipher AES-256-GCM, 80 bytes in; "
                       "data channel offload off (userspace); openvpn runs (pid 4242)"));

    /* The same file twice: not rewritten, nothing grew. */
    ev = evidence(two, two, "4242\n", LIVE_ROUTE, RELAYED);
    CHECK(!verdict(&ev, "was not rewritten between the reads"));
    /* The second read edited: each edit is a path that is not the one claimed. */
    static const struct {
        const char *from, *to, *want;
    } edits[] = {
        /* client-b gone from the second read */
        {"CLIENT_LIST,client-b,", "ROUTING_TABLE,client-b,",
         "client-b is not connected to the hub's server"},
        /* client-b holds another address than the one measured */
        {",10.17.0.3,,", ",10.17.0.9,,", "client-b connected as 10.17.0.9 not 10.17.0.3"},
        {"AES-256-GCM", "AES-128-GCM", "cipher AES-128-GCM"},
        /* the kernel's data channel offload, not userspace */
        {"dco_enabled,0", "dco_enabled,1", "data channel offload ON"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(edits); i++) {
        g_autofree char *edited = replaced(two, edits[i].from, edits[i].to);
        CHECK(strcmp(edited, two) != 0);
        ev = evidence(one, edited, "4242\n", LIVE_ROUTE, RELAYED);
        CHECK(!verdict(&ev, edits[i].want));
    }
    /* The file rewritten, but nothing arrived from the clients: the first read's rows
     * under the second read's TIME. */
    struct ml_openvpn_status a, b;
    CHECK(ml_openvpn_status_parse(one, &a) && ml_openvpn_status_parse(two, &b));
    g_autofree char *t1 = g_strdup_printf(",%lld\n", a.time);
    g_autofree char *t2 = g_strdup_printf(",%lld\n", b.time);
    g_autofree char *stale = replaced(one, t1, t2);
    CHECK(strcmp(stale, one) != 0);
    ev = evidence(one, stale, "4242\n", LIVE_ROUTE, RELAYED);
    CHECK(!verdict(&ev, "client-a connected as 10.17.0.2, cipher AES-256-GCM, 0 bytes in"));
    /* No openvpn on the hub. */
    ev = evidence(one, two, "", LIVE_ROUTE, RELAYED);
    CHECK(!verdict(&ev, "openvpn does not run on the hub"));
    /* The client's route takes kernel WireGuard's wg0. */
    ev = evidence(one, two, "4242\n", "10.8.0.3 dev wg0 src 10.8.0.2 uid 0 cache", RELAYED);
    CHECK(!verdict(&ev, NULL));
    /* The hub's NIC stayed quiet (a direct path), or moved twice what the frames give (a
     * loop), or 5 % more than they give. */
    ev = evidence(one, two, "4242\n", LIVE_ROUTE, 200);
    CHECK(!verdict(&ev,
                   "must be 2.128 times, within 5%: at least 83144 moved, at most 108280 above "
                   "idle"));
    ev = evidence(one, two, "4242\n", LIVE_ROUTE, PROBE_BYTES * 4);
    CHECK(!verdict(&ev, "must be 2.128 times"));
    ev = evidence(one, two, "4242\n", LIVE_ROUTE, 91897 + ML_PROBE_CHATTER_BYTES);
    CHECK(!verdict(&ev, NULL));
    /* val17's OpenVPN check before its passes: 87,504 above idle, 0.02 % off. */
    ev = evidence(one, two, "4242\n", LIVE_ROUTE, 87996);
    ev.hub_idle_bytes = 492;
    CHECK(verdict(&ev, "is 87504 for 41120 probe bytes"));
    /* A file cut short; and a view that could not be read. */
    g_autofree char *cut = g_strndup(two, strlen(two) / 2);
    ev = evidence(one, cut, "4242\n", LIVE_ROUTE, RELAYED);
    CHECK(!verdict(&ev, "not one this reads"));
    ev = evidence(one, two, "4242\n", LIVE_ROUTE, RELAYED);
    ev.own_error = g_strdup("cannot read the hub's OpenVPN status: cat: No such file");
    CHECK(!verdict(&ev, "No such file"));
}

/* What each guest is sent, for topologies/dataplanes.yaml, with made-up fingerprints. */
static void test_render(void)
{
    char *fp[ML_MAX_NODES] = {NULL,
                              "11:"
                              "22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:"
                              "44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00",
                              "AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:"
                              "00:11:22:33:44:55:66:77:88:99"};
    const char *hub_fp = "99:88:77:66:55:44:33:22:11:00:FF:EE:DD:CC:BB:AA:99:88:77:66:55:44:33:"
                         "22:11:00:FF:EE:DD:CC:BB:AA";
    g_autofree char *server = ml_openvpn_render_server(topo, "/run/openvpn-meshlab", fp);
    g_autofree char *client = ml_openvpn_render_client(topo, 1, "/run/openvpn-meshlab", hub_fp);
    g_autofree char *keygen = ml_openvpn_keygen_command(topo, 1, "/run/openvpn-meshlab");
    g_autofree char *start_hub = ml_openvpn_start_command(topo, 0, "/run/openvpn-meshlab");
    g_autofree char *start_client = ml_openvpn_start_command(topo, 1, "/run/openvpn-meshlab");
    check_golden("openvpn-server.conf", server);
    check_golden("openvpn-client-a.conf", client);
    GString *cmds = g_string_new(NULL);
    g_string_append_printf(cmds,
                           "# keygen on client-a\n%s\n# start on the hub\n%s\n"
                           "# start on client-a\n%s\n",
                           keygen, start_hub, start_client);
    check_golden("openvpn-commands.txt", cmds->str);
    g_string_free(cmds, TRUE);
    /* What the brief's claims rest on, whatever the golden says. */
    CHECK(strstr(server, "data-ciphers AES-256-GCM\n") && !strstr(server, "client-to-client"));
    CHECK(strstr(server, "topology subnet\n") && strstr(server, fp[1]) && strstr(server, fp[2]));
    CHECK(strstr(client, hub_fp) && strstr(client, "remote 192.0.2.10 1194\n"));
    CHECK(strstr(start_hub, "ifconfig-push 10.17.0.3 255.255.255.0") &&
          strstr(start_hub, "net.ipv4.ip_forward=1"));
    CHECK(!strstr(start_client, "ifconfig-push") && strstr(start_client, "--daemon"));
    /* The key stays in the guest: keygen prints only the fingerprint. */
    CHECK(strstr(keygen, "-nodes") && g_str_has_suffix(keygen, "-noout -in \"$d/node.crt\""));
}

/* P_DATA_V2 + AES-256-GCM over UDP/IPv4: 52 bytes a packet, no padding; a full TCP
 * segment is the 1440-byte inner packet tests/openvpn_netns.sh saw as a 1506-byte frame. */
static void test_encap(void)
{
    const struct ml_encap *e = OPENVPN_HUB->encap;
    CHECK(e && e->overhead == 52 && e->pad_to == 0 && e->inner_mtu == 1440 && !e->approximate);
    unsigned full = ml_physics_frame_bytes(e, e->inner_mtu);
    CHECK(full == 1506);
    /* Hub factor of a full segment: both hops of 1506 bytes for 1388 bytes of TCP payload
     * (1440 - 20 IP - 20 TCP - 12 timestamps). */
    double segment = 2.0 * full / (e->inner_mtu - 20 - 20 - 12);
    CHECK(segment > 2.170 && segment < 2.171);
    /* A ping: 84 inner bytes, each hop a 150-byte frame. */
    unsigned ping = ml_physics_frame_bytes(e, ML_PING_INNER_BYTES);
    CHECK(ping == 84 + 52 + 14);
    double ping_factor = 2.0 * ping / ML_PING_INNER_BYTES;
    CHECK(ping_factor > 3.571 && ping_factor < 3.572);
    /* Larger than wireguard-go-hub's per packet (60 + padding), not a byte stream. */
    CHECK(full > ml_physics_frame_bytes(ml_path_find("wireguard-go-hub")->encap, 1420));
}

static void test_registry(void)
{
    CHECK(OPENVPN_HUB->hub == ML_HUB_CARRIES && OPENVPN_HUB->policy == ML_POLICY_DIRECT);
    CHECK(ml_path_runs_daemon(OPENVPN_HUB, "openvpn"));
    CHECK(!ml_path_runs_daemon(OPENVPN_HUB, "wireguard-go"));
    struct ml_port ports[ML_PORTS_MAX];
    size_t n = ml_dataplane_ports(topo, ports);
    bool found = false;
    for (size_t i = 0; i < n; i++)
        found |= ports[i].port == 1194 && ports[i].proto == ML_PROTO_UDP && ports[i].open &&
                 ports[i].dataplane && !strcmp(ports[i].dataplane, "openvpn");
    CHECK(found);
    char addr[16];
    CHECK_STR(ml_openvpn_address(topo, topo->measure.server, addr), "10.17.0.3");
    g_autofree char *d = OPENVPN_HUB->describe(topo);
    CHECK(strstr(d, "client-a to 10.17.0.3") && strstr(d, "userspace"));
}

/* Its overlay against the topology's subnets. */
static void test_conflict(void)
{
    g_autofree char *yaml = NULL;
    CHECK(g_file_get_contents("topologies/dataplanes.yaml", &yaml, NULL, NULL));
    GString *s = g_string_new(yaml);
    g_string_replace(s, "10.8.0.", "10.17.0.", 0);
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = ml_topology_parse("c.yaml", s->str, s->len, &err);
    g_string_free(s, TRUE);
    CHECK(t != NULL);
    if (!t)
        return;
    int line = 1, column = 1;
    g_autofree char *rule = OPENVPN_HUB->dataplane->conflict(t, &line, &column);
    CHECK(rule && strstr(rule, "the openvpn-hub path uses the overlay 10.17.0.0/24"));
    CHECK(line > 1);
    line = column = 1;
    g_autofree char *none = OPENVPN_HUB->dataplane->conflict(topo, &line, &column);
    CHECK(none == NULL && line == 1 && column == 1);
}

static int render(const char *topology, const char *dir)
{
    g_autoptr(GError) err = NULL;
    struct ml_topology *t = ml_topology_load(topology, &err);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return 1;
    }
    char *fp[ML_MAX_NODES] = {0};
    bool have_fp = true;
    for (size_t i = 0; i < t->n_nodes; i++) {
        g_autofree char *d = g_build_filename(dir, t->nodes[i].name, NULL);
        g_autofree char *f = g_build_filename(d, "fp", NULL);
        g_autofree char *text = NULL;
        fp[i] = g_malloc0(96);
        if (!g_file_get_contents(f, &text, NULL, NULL) ||
            !ml_openvpn_fingerprint_parse(text, fp[i]))
            have_fp = false;
    }
    for (size_t i = 0; i < t->n_nodes; i++) {
        g_autofree char *d = g_build_filename(dir, t->nodes[i].name, NULL);
        g_autofree char *run = g_build_filename(d, "run", NULL);
        g_autofree char *keygen = ml_openvpn_keygen_command(t, i, run);
        g_autofree char *start = ml_openvpn_start_command(t, i, run);
        g_autofree char *k = g_build_filename(d, "keygen.sh", NULL);
        g_autofree char *s = g_build_filename(d, "start.sh", NULL);
        g_mkdir_with_parents(d, 0700);
        g_file_set_contents(k, keygen, -1, NULL);
        g_file_set_contents(s, start, -1, NULL);
        if (have_fp) {
            g_autofree char *conf = i == t->hub ? ml_openvpn_render_server(t, run, fp)
                                                : ml_openvpn_render_client(t, i, run, fp[t->hub]);
            g_autofree char *c = g_build_filename(d, "openvpn.conf", NULL);
            g_file_set_contents(c, conf, -1, NULL);
        }
    }
    for (size_t i = 0; i < t->n_nodes; i++)
        g_free(fp[i]);
    ml_topology_free(t);
    return 0;
}

/* verify() on two status files read from a live server, as observe() reads them. */
static int status(const char *first, const char *second)
{
    g_autoptr(GError) err = NULL;
    struct ml_topology *t = ml_topology_load("topologies/dataplanes.yaml", &err);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return 1;
    }
    struct ml_evidence ev = {0};
    if (!g_file_get_contents(first, &ev.own[0], NULL, NULL) ||
        !g_file_get_contents(second, &ev.own[1], NULL, NULL)) {
        fprintf(stderr, "cannot read %s or %s\n", first, second);
        return 1;
    }
    ev.own[2] = g_strdup("1\n");
    ml_route_parse(LIVE_ROUTE, &ev.rt);
    g_autoptr(GString) s = g_string_new(NULL);
    bool ok = OPENVPN_HUB->verify(t, &ev, s);
    printf("verify: %s: %s\n", ok ? "ok" : "FAILED", s->str);
    ml_evidence_clear(&ev);
    ml_topology_free(t);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--render"))
        return render(argv[2], argv[3]);
    if (argc == 4 && !strcmp(argv[1], "--status"))
        return status(argv[2], argv[3]);
    CHECK(OPENVPN_HUB != NULL);
    if (!OPENVPN_HUB)
        return check_finish();
    g_autoptr(GError) err = NULL;
    topo = ml_topology_load("topologies/dataplanes.yaml", &err);
    if (!topo) {
        fprintf(stderr, "%s\n", err->message);
        return 1;
    }
    test_status_parse();
    test_fingerprint();
    test_verify();
    test_render();
    test_encap();
    test_registry();
    test_conflict();
    ml_topology_free(topo);
    return check_finish();
}
