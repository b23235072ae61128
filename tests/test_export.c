/* meshlab export: keys made here, each path's verdict, the hub's firewall from the run's saved
 * ruleset, the QR codes, the hub's user-data, and a whole export of a recorded run: what is
 * exported for a passed path and nothing for a failed one, modes, checksums, and keys that
 * agree between the hub's file and each client's.
 *
 * Real tools where this host has them, each named when absent: `wg pubkey` and `wg-quick
 * strip` (wireguard-tools), `nft -c` (nftables, as root), `zbarimg` (zbar-tools) to read the QR
 * codes back, nebula-cert and `nebula -test` (Debian's nebula 1.6.1, the guests' own version).
 * The nebula config keys the export writes and the lab does not (local_allow_list's interfaces,
 * a remote_allow_list of deny rules only) are nebula 1.6.1's examples/config.yml, as
 * /usr/share/doc/nebula/examples/config.yml ships it; `nebula -test` checks each config. */
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ca_check.h"
#include "check.h"
#include "fixtures.h"
#include "cache/pins.h"
#include "core/keys.h"
#include "core/spawn.h"
#include "core/util.h"
#include "dataplanes/bundle.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/openvpn.h"
#include "dataplanes/tailscale.h"
#include "dataplanes/wireguard.h"
#include "export/export.h"
#include "export/hubinit.h"
#include "export/place.h"
#include "export/qr.h"
#include "results/json.h"
#include "topology/topology.h"
#include "virt/cloudinit.h"

static bool have(const char *tool)
{
    g_autofree char *p = g_find_program_in_path(tool);
    if (!p)
        printf("note: %s is not installed here; the checks that need it did not run\n", tool);
    return p != NULL;
}

static char *run_out(const char *const *argv, const char *input)
{
    g_autofree char *dir = g_dir_make_tmp("test-export-XXXXXX", NULL);
    g_autofree char *in = g_build_filename(dir, "in", NULL);
    g_file_set_contents(in, input ? input : "", -1, NULL);
    GString *cmd = g_string_new(NULL);
    for (const char *const *a = argv; *a; a++) {
        g_autofree char *q = g_shell_quote(*a);
        g_string_append_printf(cmd, "%s ", q);
    }
    g_autofree char *qin = g_shell_quote(in);
    g_string_append_printf(cmd, "< %s 2>/dev/null", qin);
    const char *sh[] = {"sh", "-c", cmd->str, NULL};
    char *out = NULL;
    if (!ml_spawn(sh, &out, NULL))
        g_clear_pointer(&out, g_free);
    g_string_free(cmd, TRUE);
    g_unlink(in);
    g_rmdir(dir);
    return out ? g_strstrip(out) : NULL;
}

static void test_keys(void)
{
    struct ml_wg_keypair a, b;
    CHECK(ml_wg_keypair_new(&a, NULL));
    CHECK(ml_wg_keypair_new(&b, NULL));
    CHECK(ml_wg_key_valid(a.private_key) && ml_wg_key_valid(a.public_key));
    CHECK(strcmp(a.private_key, b.private_key) != 0);
    /* Clamped as wg genkey clamps: the low 3 bits of byte 0 clear, bit 254 set, 255 clear. */
    gsize len = 0;
    g_autofree guchar *raw = g_base64_decode(a.private_key, &len);
    CHECK(len == 32 && (raw[0] & 7) == 0 && (raw[31] & 0xc0) == 0x40);
    char pub[ML_WG_KEY_LEN + 1];
    CHECK(ml_wg_public_of(a.private_key, pub));
    CHECK_STR(pub, a.public_key);
    CHECK(!ml_wg_public_of("not a key", pub));
    if (have("wg")) {
        const char *argv[] = {"wg", "pubkey", NULL};
        g_autofree char *wg = run_out(argv, a.private_key);
        CHECK_STR(wg, a.public_key);
    }
    /* RFC 7748 section 6.1's X25519 test vector: Alice's private key and public key. */
    const unsigned char alice[32] = {0x77, 0x07, 0x6d, 0x0a, 0x73, 0x18, 0xa5, 0x7d,
                                     0x3c, 0x16, 0xc1, 0x72, 0x51, 0xb2, 0x66, 0x45,
                                     0xdf, 0x4c, 0x2f, 0x87, 0xeb, 0xc0, 0x99, 0x2a,
                                     0xb1, 0x77, 0xfb, 0xa5, 0x1d, 0xb9, 0x2c, 0x2a};
    g_autofree char *alice_b64 = g_base64_encode(alice, 32);
    CHECK(ml_wg_public_of(alice_b64, pub));
    g_autofree char *want = NULL;
    const unsigned char alice_pub[32] = {0x85, 0x20, 0xf0, 0x09, 0x89, 0x30, 0xa7, 0x54,
                                         0x74, 0x8b, 0x7d, 0xdc, 0xb4, 0x3e, 0xf7, 0x5a,
                                         0x0d, 0xbf, 0x3a, 0x0d, 0x26, 0x38, 0x1a, 0xf4,
                                         0xeb, 0xa4, 0xa9, 0x8e, 0xaa, 0x9b, 0x4e, 0x6a};
    want = g_base64_encode(alice_pub, 32);
    CHECK_STR(pub, want);
    ml_wg_keypair_clear(&a);
    CHECK(a.private_key[0] == 0);
}

static void test_verdict(void)
{
    struct json_object *r = fixture_json("results-v2-matrix.json");
    CHECK_STR(ml_export_verdict(fixture_path(r, "wireguard-hub")), "passed");
    CHECK_STR(ml_export_verdict(fixture_path(r, "tailscale-direct")), "not-run");
    struct json_object *checks = ml_j_array(fixture_path(r, "nebula-relay"), "checks");
    json_object_object_add(json_object_array_get_idx(checks, 1), "ok",
                           json_object_new_boolean(false));
    CHECK_STR(ml_export_verdict(fixture_path(r, "nebula-relay")), "failed");
    json_object_object_add(fixture_path(r, "plain"), "checks", json_object_new_array());
    CHECK_STR(ml_export_verdict(fixture_path(r, "plain")), "failed");
    json_object_object_add(fixture_path(r, "wireguard-hub"), "status",
                           json_object_new_string("failed"));
    CHECK_STR(ml_export_verdict(fixture_path(r, "wireguard-hub")), "failed");
    json_object_put(r);
}

static void test_firewall(void)
{
    g_autofree char *ruleset = NULL;
    CHECK(g_file_get_contents("tests/data/ruleset-hub.nft", &ruleset, NULL, NULL));
    g_autoptr(GError) e = NULL;
    g_autofree char *fw = ml_export_firewall(ruleset, "ens3", "test", &e);
    CHECK(fw != NULL);
    if (!fw)
        return;
    CHECK(strstr(fw, "table inet meshlab_fw\ndelete table inet meshlab_fw\ntable inet "
                     "meshlab_fw {\n") != NULL);
    CHECK(strstr(fw, "wgmasq") == NULL);     /* wg-quick's PostUp makes that table */
    CHECK(strstr(fw, "packets 12") == NULL); /* counters zeroed */
    CHECK(strstr(fw, "counter drop") != NULL);
    CHECK(strstr(fw, "\"eth0\"") == NULL && strstr(fw, "iifname != \"ens3\" jump transport"));
    CHECK(strstr(fw, "udp dport 51820 accept") && strstr(fw, "udp dport 4242 accept"));
    CHECK(g_str_has_suffix(fw, "}\n"));
    g_autofree char *none = ml_export_firewall("table ip wgmasq {\n}\n", "eth0", "t", NULL);
    CHECK(none == NULL);
    if (geteuid() == 0 && have("nft")) {
        CHECK(ml_export_nft_check(fw, NULL));
        g_autofree char *broken = g_strconcat(fw, "table inet x { chain y { nonsense } }\n", NULL);
        g_autoptr(GError) e2 = NULL;
        CHECK(!ml_export_nft_check(broken, &e2));
        CHECK(e2 && strstr(e2->message, "nft -c"));
    } else {
        printf("note: not root or no nft: the nft -c checks did not run\n");
    }
}

static void test_qr(void)
{
    const char *text = "[Interface]\nPrivateKey = x\n";
    unsigned w;
    g_autoptr(GByteArray) m = NULL;
    CHECK(ml_qr_encode(text, &w, &m, NULL));
    CHECK(w >= 21 && (w - 21) % 4 == 0 && m->len == w * w);
    /* A finder pattern's corner module is dark, and the one inside its white ring light. */
    CHECK(m->data[0] == 1 && m->data[1 * w + 1] == 0 && m->data[2 * w + 2] == 1);
    g_autoptr(GByteArray) png = ml_qr_png(text, 3, NULL);
    CHECK(png && png->len > 33 && !memcmp(png->data, "\x89PNG\r\n\x1a\n", 8));
    if (png) {
        unsigned side = ((unsigned)png->data[16] << 24 | png->data[17] << 16 | png->data[18] << 8 |
                         png->data[19]);
        CHECK(side == (w + 8) * 3);
    }
    g_autofree char *t = ml_qr_text(text, NULL);
    g_auto(GStrv) rows = g_strsplit(t, "\n", -1);
    CHECK(g_strv_length(rows) == (w + 8 + 1) / 2 + 1);
    CHECK(g_utf8_strlen(rows[0], -1) == (glong)(w + 8));
    g_autofree char *big = g_strnfill(3000, 'x');
    g_autoptr(GError) e = NULL;
    g_autoptr(GByteArray) none = NULL;
    CHECK(!ml_qr_encode(big, &w, &none, &e));
    g_autofree char *bare = ml_export_without_comments("# a\n[Interface]\n# b\nX = 1\n\n[Peer]\n");
    CHECK_STR(bare, "[Interface]\nX = 1\n\n[Peer]\n");
}

static void test_hubinit(struct ml_topology *topo)
{
    g_autoptr(MlBundle) b = ml_bundle_new(topo, "203.0.113.10", "eth0", "test");
    ml_bundle_hub_file(b, "/etc/a.conf", "[A]\n\tTab = 1\n\nafter empty\n", 0600);
    ml_bundle_hub_file(b, "/etc/b.conf", " leading space, no newline", 0644);
    ml_bundle_hub_file(b, "/etc/c.conf", "ends in two\n\n", 0644);
    ml_bundle_hub_package(b, "wg", "wireguard-tools");
    ml_bundle_hub_package(b, "wg", "wireguard-tools");
    ml_bundle_hub_sysctl(b, "net.ipv4.ip_forward", "1");
    ml_bundle_hub_command(b, "systemctl enable --now wg-quick@wg0");
    const char *fw = "table inet meshlab_fw\ndelete table inet meshlab_fw\n";
    g_autofree char *ud = ml_hubinit_render(b, fw);
    g_autoptr(GError) e = NULL;
    CHECK(ml_hubinit_check(b, fw, ud, &e));
    CHECK(g_str_has_prefix(ud, "#cloud-config\n"));
    CHECK(strstr(ud, "encoding: b64") != NULL); /* the two a literal block cannot keep */
    CHECK(strstr(ud, "permissions: '0600'") && strstr(ud, "permissions: '0700'"));
    CHECK(strstr(ud, "missing=\"$missing wireguard-tools\"") != NULL);
    CHECK(strstr(strstr(ud, "wireguard-tools") + 1, "missing=\"$missing wireguard-tools\"") ==
          NULL);
    CHECK(strstr(ud, "sysctl -q -p " ML_HUBINIT_SYSCTL) != NULL);
    CHECK(strstr(ud, "runcmd:\n  - [sh, -c, '" ML_HUBINIT_SCRIPT) != NULL);
    /* A byte changed in a file, or a file missing, is caught. */
    GString *bad = g_string_new(ud);
    g_string_replace(bad, "Tab = 1", "Tab = 2", 1);
    g_autoptr(GError) e2 = NULL;
    CHECK(!ml_hubinit_check(b, fw, bad->str, &e2));
    CHECK(e2 && strstr(e2->message, "/etc/a.conf"));
    g_string_free(bad, TRUE);
    g_autoptr(GError) e3 = NULL;
    CHECK(!ml_hubinit_check(b, NULL, ud, &e3));
}

/* export --verify's hub seed: the exported user-data byte for byte as the first MIME part, the
 * lab's after it with the merge that appends to the exported lists (cloud-init's documented
 * merge_how: list append, dict no_replace and recurse_list), one boundary that neither holds. */
static void test_multipart(void)
{
    const char *first = "#cloud-config\nwrite_files:\n  - path: /etc/x\n    content: |\n      a\n";
    const char *lab = "#cloud-config\nhostname: hub\nwrite_files:\n  - path: /etc/meshlab/guest\n";
    g_autofree char *m = ml_seed_multipart(first, lab);
    CHECK(g_str_has_prefix(m, "Content-Type: multipart/mixed; boundary=\""));
    const char *b0 = strchr(m, '"') + 1;
    g_autofree char *boundary = g_strndup(b0, strcspn(b0, "\""));
    g_autofree char *sep = g_strdup_printf("\n--%s\n", boundary);
    g_autofree char *end = g_strdup_printf("\n--%s--\n", boundary);
    g_auto(GStrv) parts = g_strsplit(m, sep, -1);
    CHECK(g_strv_length(parts) == 3);
    CHECK(g_str_has_suffix(m, end));
    if (g_strv_length(parts) == 3) {
        const char *body1 = strstr(parts[1], "\n\n");
        CHECK(body1 && !strcmp(body1 + 2, first));
        CHECK(strstr(parts[1], "Content-Type: text/cloud-config") != NULL);
        const char *body2 = strstr(parts[2], "\n\n");
        CHECK(body2 && g_str_has_prefix(body2 + 2, lab));
        CHECK(strstr(body2, "merge_how:\n  - name: list\n    settings: [append]\n  - name: dict\n"
                            "    settings: [no_replace, recurse_list]\n") != NULL);
    }
}

/* ---- a whole export of a recorded run ---- */

static void rm_rf(const char *path)
{
    const char *argv[] = {"rm", "-rf", path, NULL};
    ml_spawn(argv, NULL, NULL);
}

static char *read_rel(const char *dir, const char *rel)
{
    g_autofree char *p = g_build_filename(dir, rel, NULL);
    char *t = NULL;
    g_file_get_contents(p, &t, NULL, NULL);
    return t;
}

/* Every file 0600, every directory 0700, and each file's SHA-256 as the manifest says. */
static void check_files(const char *to, struct json_object *manifest)
{
    struct stat st;
    CHECK(stat(to, &st) == 0 && (st.st_mode & 07777) == 0700);
    struct json_object *files = ml_j_array(manifest, "files");
    CHECK(ml_j_len(files) > 5);
    for (size_t i = 0; i < ml_j_len(files); i++) {
        struct json_object *f = json_object_array_get_idx(files, i);
        g_autofree char *p = g_build_filename(to, ml_j_str(f, "path"), NULL);
        CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0600);
        g_autofree char *dir = g_path_get_dirname(p);
        CHECK(stat(dir, &st) == 0 && (st.st_mode & 07777) == 0700);
        g_autofree char *data = NULL;
        gsize len = 0;
        CHECK(g_file_get_contents(p, &data, &len, NULL));
        g_autofree char *sha =
            g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)data, len);
        CHECK_STR(sha, ml_j_str(f, "sha256"));
    }
    g_autofree char *mp = g_build_filename(to, "manifest.json", NULL);
    CHECK(stat(mp, &st) == 0 && (st.st_mode & 07777) == 0600);
}

/* "Key = VALUE" of a wg-quick file's first such line after from. */
static char *wg_value(const char *conf, const char *from, const char *key)
{
    const char *at = from ? strstr(conf, from) : conf;
    g_autofree char *k = g_strdup_printf("\n%s = ", key);
    at = at ? strstr(at, k) : NULL;
    if (!at)
        return NULL;
    at += strlen(k);
    return g_strndup(at, strcspn(at, "\n"));
}

/* The hub's file and client-a's agree: each peer's key is the other's private key's. */
static void check_peers_agree(const char *hub, const char *client)
{
    char pub[ML_WG_KEY_LEN + 1];
    g_autofree char *hub_priv = wg_value(hub, NULL, "PrivateKey");
    g_autofree char *a_priv = wg_value(client, NULL, "PrivateKey");
    g_autofree char *a_peer = wg_value(client, "[Peer]", "PublicKey");
    g_autofree char *hub_peer_a = wg_value(hub, "# client-a", "PublicKey");
    CHECK(ml_wg_public_of(hub_priv, pub) && a_peer && !strcmp(pub, a_peer));
    CHECK(ml_wg_public_of(a_priv, pub) && hub_peer_a && !strcmp(pub, hub_peer_a));
}

static void test_export_run(struct ml_topology *topo)
{
    struct json_object *r = fixture_json("results-v2-matrix.json");
    /* nebula-relay failed its checks in this run: nothing of nebula may be exported. */
    struct json_object *checks = ml_j_array(fixture_path(r, "nebula-relay"), "checks");
    json_object_object_add(json_object_array_get_idx(checks, 0), "ok",
                           json_object_new_boolean(false));
    /* wireguard-go-hub passed as wireguard-hub did. */
    struct json_object *go = NULL;
    json_object_deep_copy(fixture_path(r, "wireguard-hub"), &go, NULL);
    json_object_object_add(go, "name", json_object_new_string("wireguard-go-hub"));
    json_object_array_add(ml_j_array(r, "paths"), go);
    g_autofree char *run = fixture_export_run(r, topo);
    g_autofree char *to = g_build_filename(run, "export", NULL);
    struct ml_export_opts o = {
        .run_dir = run, .hub_address = "vpn.example.net", .hub_interface = "ens3", .to = to};
    struct json_object *m = NULL;
    g_autoptr(GError) e = NULL;
    bool nft_ok = geteuid() == 0 && have("nft");
    bool ok = ml_export_write(&o, r, topo, &m, &e);
    if (!nft_ok) {
        printf("note: not root or no nft: the whole export (which checks its firewall with nft "
               "-c) was refused as it must be\n");
        CHECK(!ok && e && strstr(e->message, "nft"));
        json_object_put(r);
        rm_rf(run);
        return;
    }
    CHECK(ok);
    if (!ok) {
        fprintf(stderr, "export: %s\n", e->message);
        json_object_put(r);
        return;
    }
    check_files(to, m);
    CHECK_STR(ml_j_str(m, "schema"), ML_EXPORT_SCHEMA);
    CHECK_STR(ml_j_str(m, "run_id"), ml_j_str(r, "run_id"));
    struct json_object *wg = ml_j_path_named(m, "wireguard-hub");
    struct json_object *neb = ml_j_path_named(m, "nebula-relay");
    struct json_object *ts = ml_j_path_named(m, "tailscale-direct");
    CHECK(ml_j_bool(wg, "exported") && !ml_j_bool(neb, "exported") && !ml_j_bool(ts, "exported"));
    CHECK_STR(ml_j_str(neb, "verdict"), "failed");
    CHECK_STR(ml_j_str(ts, "verdict"), "not-run");
    g_autofree char *nebdir = g_build_filename(to, "nebula", NULL);
    CHECK(!g_file_test(nebdir, G_FILE_TEST_EXISTS));

    /* The hub's file and each client's agree: each peer's key is the other's private key's. */
    g_autofree char *hub = read_rel(to, "wireguard/hub/wg0.conf");
    g_autofree char *ca = read_rel(to, "wireguard/client-a/wg0.conf");
    g_autofree char *cb = read_rel(to, "wireguard/client-b/wg0.conf");
    CHECK(hub && ca && cb);
    if (!hub || !ca || !cb)
        return;
    check_peers_agree(hub, ca);
    g_autofree char *hub_priv = wg_value(hub, NULL, "PrivateKey");
    g_autofree char *a_priv = wg_value(ca, NULL, "PrivateKey");
    g_autofree char *endpoint = wg_value(ca, "[Peer]", "Endpoint");
    g_autofree char *want_ep = g_strdup_printf("vpn.example.net:%u", topo->wireguard.listen_port);
    CHECK_STR(endpoint, want_ep);
    g_autofree char *mtu = wg_value(ca, NULL, "MTU");
    CHECK_STR(mtu, "1420");
    g_autofree char *ka = wg_value(ca, "[Peer]", "PersistentKeepalive");
    g_autofree char *want_ka = g_strdup_printf("%u", topo->wireguard.persistent_keepalive);
    CHECK_STR(ka, want_ka);
    CHECK(strstr(hub, "oifname \"ens3\" masquerade") != NULL);
    /* wg-quick strip accepts every WireGuard file, and the manifest says it checked. */
    if (have("wg-quick")) {
        const char *files[] = {"wireguard/hub/wg0.conf", "wireguard/client-a/wg0.conf",
                               "wireguard/client-b/wg0.conf"};
        for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
            g_autofree char *p = g_build_filename(to, files[i], NULL);
            const char *argv[] = {"wg-quick", "strip", p, NULL};
            g_autofree char *out = run_out(argv, NULL);
            CHECK(out && strstr(out, "PrivateKey = ") && !strstr(out, "Address"));
        }
        g_autofree char *mt = read_rel(to, "manifest.json");
        CHECK(strstr(mt, "\"wg-quick strip\"") && !strstr(mt, "not run: wg-quick"));
    }
    /* The QR code carries the client's config without its comments. */
    if (have("zbarimg")) {
        g_autofree char *png = g_build_filename(to, "wireguard/client-a/wg0.qr.png", NULL);
        const char *argv[] = {"zbarimg", "-q", "--raw", png, NULL};
        g_autofree char *read = run_out(argv, NULL);
        g_autofree char *bare = ml_export_without_comments(ca);
        g_strstrip(bare);
        CHECK_STR(read, bare);
    }
    /* wireguard-go-hub: the clients' wg-quick files on its own network and port, the hub's in
     * wg(8)'s format (no wg-quick key: wg setconf refuses Address), its script and unit. */
    g_autofree char *go_hub = read_rel(to, "wireguard-go/hub/wgo0.conf");
    g_autofree char *go_a = read_rel(to, "wireguard-go/client-a/wgo0.conf");
    CHECK(go_hub && go_a && ml_j_bool(ml_j_path_named(m, "wireguard-go-hub"), "exported"));
    if (go_hub && go_a) {
        g_autofree char *go_port = g_strdup_printf("%u", topo->wireguard.listen_port + 2);
        g_autofree char *lp = wg_value(go_hub, NULL, "ListenPort");
        CHECK_STR(lp, go_port);
        CHECK(!strstr(go_hub, "Address") && !strstr(go_hub, "PostUp") && !strstr(go_hub, "MTU"));
        check_peers_agree(go_hub, go_a);
        g_autofree char *go_hub_priv = wg_value(go_hub, NULL, "PrivateKey");
        g_autofree char *go_a_priv = wg_value(go_a, NULL, "PrivateKey");
        CHECK(strcmp(go_hub_priv, hub_priv) != 0); /* its own keys, not wireguard-hub's */
        g_autofree char *go_ep = wg_value(go_a, "[Peer]", "Endpoint");
        g_autofree char *want_go_ep = g_strdup_printf("vpn.example.net:%s", go_port);
        CHECK_STR(go_ep, want_go_ep);
        g_autofree char *go_addr = wg_value(go_a, NULL, "Address");
        CHECK_STR(go_addr, "10.10.0.2/32");
        g_autofree char *go_allowed = wg_value(go_a, "[Peer]", "AllowedIPs");
        CHECK_STR(go_allowed, "10.10.0.0/24");
        g_autofree char *go_ud = read_rel(to, "hub/user-data");
        CHECK(go_ud && strstr(go_ud, go_hub_priv) && !strstr(go_ud, go_a_priv));
        CHECK(strstr(go_ud, "path: /usr/local/sbin/meshlab-wgo0\n") &&
              strstr(go_ud, "permissions: '0755'") &&
              strstr(go_ud, "systemctl enable --now meshlab-wgo0.service"));
        g_autofree char *script = read_rel(to, "wireguard-go/hub/meshlab-wgo0");
        CHECK(script && strstr(script, "wireguard-go wgo0\n") &&
              strstr(script, "wg setconf wgo0 /etc/wireguard/wgo0.conf\n") &&
              strstr(script, "ip addr add 10.10.0.1/24 dev wgo0\n"));
        if (script && have("sh")) {
            g_autofree char *sp = g_build_filename(to, "wireguard-go/hub/meshlab-wgo0", NULL);
            const char *argv[] = {"sh", "-n", sp, NULL};
            CHECK(ml_spawn(argv, NULL, NULL));
        }
        if (have("wg-quick")) {
            const char *files[] = {"wireguard-go/hub/wgo0.conf", "wireguard-go/client-a/wgo0.conf"};
            for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
                g_autofree char *p = g_build_filename(to, files[i], NULL);
                const char *argv[] = {"wg-quick", "strip", p, NULL};
                g_autofree char *out = run_out(argv, NULL);
                CHECK(out && strstr(out, "PrivateKey = ") && !strstr(out, "Address"));
            }
        }
    }
    /* The hub's user-data writes the hub's wg0.conf as it is in the export. */
    g_autofree char *ud = read_rel(to, "hub/user-data");
    CHECK(ud && strstr(ud, "/etc/wireguard/wg0.conf") && strstr(ud, hub_priv));
    CHECK(strstr(ud, a_priv) == NULL); /* a client's key never goes to the hub */
    g_autofree char *fw = read_rel(to, "hub/firewall.nft");
    CHECK(fw && strstr(fw, "\"ens3\""));
    g_autofree char *sizing = read_rel(to, "SIZING.md");
    CHECK(sizing && g_str_has_prefix(sizing, "# Sizing the hub VPS: three-guest"));
    CHECK(strstr(sizing, "## What it means for the VPS") != NULL);

    /* A second export is refused over the first, and makes other keys elsewhere. */
    g_autoptr(GError) e2 = NULL;
    CHECK(!ml_export_write(&o, r, topo, NULL, &e2));
    CHECK(e2 && strstr(e2->message, "already exists"));
    g_autofree char *to2 = g_build_filename(run, "export2", NULL);
    o.to = to2;
    CHECK(ml_export_write(&o, r, topo, NULL, NULL));
    g_autofree char *hub2 = read_rel(to2, "wireguard/hub/wg0.conf");
    g_autofree char *hub2_priv = hub2 ? wg_value(hub2, NULL, "PrivateKey") : NULL;
    CHECK(hub2_priv && strcmp(hub2_priv, hub_priv) != 0);

    /* With nebula passed: its CA, certificates and configs, checked by nebula -test. */
    json_object_object_add(json_object_array_get_idx(checks, 0), "ok",
                           json_object_new_boolean(true));
    g_autofree char *to3 = g_build_filename(run, "export3", NULL);
    o.to = to3;
    json_object_put(m);
    m = NULL;
    g_autoptr(GError) e3 = NULL;
    CHECK(ml_export_write(&o, r, topo, &m, &e3));
    bool nebula = have("nebula-cert") && have("nebula");
    CHECK(ml_j_bool(ml_j_path_named(m, "nebula-relay"), "exported") == nebula);
    if (nebula) {
        check_files(to3, m);
        g_autofree char *mt3 = read_rel(to3, "manifest.json");
        CHECK(strstr(mt3, "\"nebula/hub/config.yml\"") != NULL);
        CHECK(strstr(mt3, "nebula -test, with its certificate and key") != NULL);
        g_autofree char *conf = read_rel(to3, "nebula/client-a/config.yml");
        CHECK(conf && strstr(conf, "[\"vpn.example.net:4242\"]") && !strstr(conf, "sshd"));
        g_autofree char *crt = g_build_filename(to3, "nebula/client-a/host.crt", NULL);
        const char *argv[] = {"nebula-cert", "print", "-json", "-path", crt, NULL};
        g_autofree char *printed = run_out(argv, NULL);
        CHECK(printed && strstr(printed, "\"name\":\"client-a\"") &&
              strstr(printed, "10.42.0.2/24"));
        g_autofree char *ud3 = read_rel(to3, "hub/user-data");
        g_autofree char *hubkey = read_rel(to3, "nebula/hub/host.key");
        g_autofree char *cakey = read_rel(to3, "nebula/ca.key");
        g_auto(GStrv) keylines = g_strsplit(hubkey, "\n", -1);
        CHECK(strstr(ud3, keylines[1]) != NULL);
        g_auto(GStrv) calines = g_strsplit(cakey, "\n", -1);
        CHECK(strstr(ud3, calines[1]) == NULL); /* the CA key never goes to the VPS */
    } else {
        CHECK(strstr(ml_j_str(ml_j_path_named(m, "nebula-relay"), "why_not"), "apt install "
                                                                              "nebula"));
    }
    /* tailscale-direct passed: exported with and without --verify (export --verify installs the
     * cached binaries where a VPS downloads them, path_tailscale.c verify_install). A passed
     * tailscale-peer-relay is not exported, with its reason: the export configures no peer
     * relay, and the manifest must not call it exported. */
    struct json_object *tsd = fixture_path(r, "tailscale-direct");
    json_object_object_add(tsd, "status", json_object_new_string("measured"));
    struct json_object *tchecks = json_object_new_array(), *tc = json_object_new_object();
    json_object_object_add(tc, "ok", json_object_new_boolean(true));
    json_object_array_add(tchecks, tc);
    json_object_object_add(tsd, "checks", tchecks);
    struct json_object *tpr = NULL;
    CHECK(json_object_deep_copy(tsd, &tpr, NULL) == 0);
    json_object_object_add(tpr, "name", json_object_new_string("tailscale-peer-relay"));
    json_object_array_add(ml_j_array(r, "paths"), tpr);
    if (have("openssl")) {
        g_autofree char *to4 = g_build_filename(run, "export4", NULL);
        o.to = to4;
        json_object_put(m);
        m = NULL;
        CHECK(ml_export_write(&o, r, topo, &m, NULL));
        CHECK(ml_j_bool(ml_j_path_named(m, "tailscale-direct"), "exported"));
        g_autofree char *hs = read_rel(to4, "headscale/hub/config.yaml");
        CHECK(hs && strstr(hs, "server_url: https://vpn.example.net:443\n"));
        g_autofree char *to5 = g_build_filename(run, "export5", NULL);
        o.to = to5;
        json_object_put(m);
        m = NULL;
        CHECK(ml_export_write(&o, r, topo, &m, NULL));
        CHECK(ml_j_bool(ml_j_path_named(m, "tailscale-direct"), "exported"));
        struct json_object *t5 = ml_j_path_named(m, "tailscale-peer-relay");
        CHECK(t5 && ml_j_bool(t5, "exported") == false &&
              strstr(ml_j_str_or(t5, "why_not", ""), "does not yet configure a peer relay"));
        CHECK(ml_j_bool(ml_j_path_named(m, "wireguard-hub"), "exported"));
        g_autofree char *key = read_rel(to5, "headscale/hub/meshlab-headscale-authkey");
        CHECK(key && strstr(key, ML_TS_EXPORT_AUTHKEY_FILE));
    }
    json_object_put(m);
    json_object_put(r);
    rm_rf(run);
}

static bool has_line(GPtrArray *lines, const char *want)
{
    for (guint i = 0; lines && i < lines->len; i++)
        if (!strcmp(g_ptr_array_index(lines, i), want))
            return true;
    return false;
}

/* The export's Headscale CA (finding 4 of the 2026-12-04 audit), asked of the real openssl: it
 * vouches for the hub's address (k: 0 a DNS name, 1 IPv4, 2 IPv6) and nothing else, so its key
 * cannot make a certificate for www.bank.example or another address that a client would take,
 * and it lasts a year, not ten. */
static void check_export_ca(const char *dir, const char *ca_pem, const char *key_pem, size_t k)
{
    g_autofree char *pa = g_build_filename(dir, "ca.crt", NULL);
    g_autofree char *pk = g_build_filename(dir, "ca.key", NULL);
    CHECK(g_file_set_contents(pa, ca_pem, -1, NULL) && g_file_set_contents(pk, key_pem, -1, NULL));
    g_autofree char *nc = cert_name_constraints(pa);
    const char *want[] = {"DNS:vpn.example.net", "IP:203.0.113.10/255.255.255.255",
                          "IP:2001:DB8:0:0:0:0:0:10/FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF"};
    CHECK(nc && strstr(nc, "critical") && strstr(nc, "Permitted:") && strstr(nc, want[k]));
    if (nc && !strstr(nc, want[k]))
        fprintf(stderr, "the export's CA for case %zu: %s\n", k, nc);
    CHECK(!ca_vouches_for(dir, "DNS:www.bank.example", "-verify_hostname", "www.bank.example"));
    CHECK(!ca_vouches_for(dir, "IP:198.51.100.7", "-verify_ip", "198.51.100.7"));
    CHECK(!ca_vouches_for(dir, "IP:2001:db8::66", "-verify_ip", "2001:db8::66"));
    if (k == 0)
        CHECK(ca_vouches_for(dir, "DNS:vpn.example.net", "-verify_hostname", "vpn.example.net"));
    else
        CHECK(ca_vouches_for(dir, k == 1 ? "IP:203.0.113.10" : "IP:2001:db8::10", "-verify_ip",
                             k == 1 ? "203.0.113.10" : "2001:db8::10"));
    CHECK(cert_lasts_days(pa, ML_EXPORT_CA_DAYS - 1) &&
          !cert_lasts_days(pa, ML_EXPORT_CA_DAYS + 1));
}

/* The Tailscale export: Headscale on the hub VPS, tailscale up on the clients.
 *
 * Not run here: this machine has no headscale, tailscale or tailscaled and no internet, so no
 * file below was loaded by them, and `export --verify` leaves this export out (its verify lab
 * has no internet either). What they rely on is the lab's own, checked against upstream in
 * tests/test_tailscale.c: the config's keys (headscale v0.29.x config-example.yaml; derp.server
 * ipv4 is optional there: "it is possible to optionally add the public IPv4 ... to the
 * Derp-Map"), `headscale configtest` and -c (cmd/headscale/cli/configtest.go, root.go), `users
 * create`, `users list -o json` ("id" a number or a string), `preauthkeys create --user ID
 * --reusable --expiration -o json` ("key"), and `tailscale up --login-server= --auth-key=file:
 * --hostname= --accept-dns=false` (tailscale cmd/tailscale/cli/up.go). The release file names
 * are the ones `meshlab fetch` downloads (src/cache/artifacts.c): goreleaser's checksums.txt
 * lines are "HASH  FILE", which `sha256sum -c` reads. The certificate is checked here with
 * openssl, as the export checks it. */
static void test_tailscale_export(struct ml_topology *topo)
{
    if (!have("openssl")) {
        printf("note: no openssl here: the Tailscale export (its certificate is made with "
               "openssl) was not tried\n");
        return;
    }
    const char *addrs[] = {"vpn.example.net", "203.0.113.10", "2001:db8::10"};
    for (size_t k = 0; k < G_N_ELEMENTS(addrs); k++) {
        g_autoptr(MlBundle) b = ml_bundle_new(topo, addrs[k], "eth0", "test label");
        g_autoptr(GError) e = NULL;
        CHECK(ml_tailscale_export(b, &e));
        if (e) {
            fprintf(stderr, "tailscale export: %s\n", e->message);
            continue;
        }
        g_autofree char *url = ml_headscale_export_url(addrs[k]);
        const char *want_url[] = {"https://vpn.example.net:443", "https://203.0.113.10:443",
                                  "https://[2001:db8::10]:443"};
        CHECK_STR(url, want_url[k]);
        const struct ml_bundle_file *conf = ml_bundle_find(b, "headscale/hub/config.yaml");
        g_autofree char *server_url = g_strdup_printf("\nserver_url: %s\n", url);
        CHECK(conf && strstr(conf->content, server_url) && strstr(conf->content, "  urls: []\n") &&
              strstr(conf->content, "tls_cert_path: /etc/headscale/tls/server.crt\n"));
        /* The DERP map names the hub's IPv4 address only where the address is one. */
        CHECK(conf && (strstr(conf->content, "    ipv4: 203.0.113.10\n") != NULL) == (k == 1));
        CHECK(conf && (k == 1 || !strstr(conf->content, "ipv4:")));
        /* The certificate names the address and verifies against the export's CA. */
        const struct ml_bundle_file *crt = ml_bundle_find(b, "headscale/hub/server.crt");
        const struct ml_bundle_file *key = ml_bundle_find(b, "headscale/hub/server.key");
        const struct ml_bundle_file *ca = ml_bundle_find(b, "headscale/ca.crt");
        const struct ml_bundle_file *cakey = ml_bundle_find(b, "headscale/ca.key");
        CHECK(crt && key && ca && cakey && (key->flags & ML_BUNDLE_SECRET) &&
              (cakey->flags & ML_BUNDLE_SECRET) && cakey->install == NULL);
        if (crt && ca) {
            g_autofree char *dir = g_dir_make_tmp("test-ts-tls-XXXXXX", NULL);
            g_autofree char *pc = g_build_filename(dir, "server.crt", NULL);
            g_autofree char *pa = g_build_filename(dir, "ca.crt", NULL);
            g_file_set_contents(pc, crt->content, -1, NULL);
            g_file_set_contents(pa, ca->content, -1, NULL);
            const char *v[] = {
                "openssl", "verify", "-CAfile", pa, k == 0 ? "-verify_hostname" : "-verify_ip",
                addrs[k],  pc,       NULL};
            CHECK(ml_spawn(v, NULL, NULL));
            const char *wrong[] = {"openssl",           "verify", "-CAfile", pa, "-verify_hostname",
                                   "other.example.net", pc,       NULL};
            CHECK(!ml_spawn(wrong, NULL, NULL));
            check_export_ca(dir, ca->content, cakey->content, k);
            rm_rf(dir);
        }
        /* The VPS gets the server key, never the CA's; the hub's scripts are shell. */
        GString *ud = g_string_new(NULL);
        for (guint i = 0; i < b->hub_files->len; i++) {
            const struct ml_bundle_hub_file *h = g_ptr_array_index(b->hub_files, i);
            g_string_append_printf(ud, "%s\n%s\n", h->path, h->content);
        }
        CHECK(key && cakey && strstr(ud->str, key->content) && !strstr(ud->str, cakey->content));
        g_string_free(ud, TRUE);
        const char *scripts[] = {"headscale/hub/meshlab-headscale-install",
                                 "headscale/hub/meshlab-headscale-authkey"};
        for (size_t i = 0; i < G_N_ELEMENTS(scripts); i++) {
            const struct ml_bundle_file *f = ml_bundle_find(b, scripts[i]);
            CHECK(f != NULL);
            if (!f)
                continue;
            CHECK(fixture_sh_syntax_ok(f->content));
        }
        const struct ml_bundle_file *inst = ml_bundle_find(b, scripts[0]);
        CHECK(inst &&
              strstr(inst->content, "https://github.com/juanfont/headscale/releases/"
                                    "download/v" ML_HEADSCALE_VERSION
                                    "/headscale_" ML_HEADSCALE_VERSION "_linux_amd64'") &&
              strstr(inst->content, "/checksums.txt'") &&
              strstr(inst->content, "grep '  headscale_" ML_HEADSCALE_VERSION
                                    "_linux_amd64$' checksums.txt | sha256sum -c -"));
        /* An installed binary is kept when `headscale version` names the release. Upstream
         * prints it two ways (cmd/headscale/cli/version.go): types.Version alone ("v0.29.3"),
         * or, where it prints types.GetVersionInfo().String() (hscontrol/types/version.go),
         * "headscale version v0.29.3" then commit, build time and Go lines (as the build from
         * images/go printed them). Both match the script's grep; another release does not. */
        CHECK(inst && strstr(inst->content, "/usr/local/bin/headscale version 2>/dev/null |\n"
                                            "        grep -q '" ML_HEADSCALE_VERSION
                                            "'; then\n    exit 0\n"));
        const char *said[] = {"v" ML_HEADSCALE_VERSION "\n",
                              "headscale version v" ML_HEADSCALE_VERSION "\ncommit: unknown\n"
                              "build time: unknown\nbuilt with: go1.26.8 linux/amd64\n",
                              "headscale version v0.29.2\ncommit: 0123abc\n"};
        for (size_t w = 0; w < G_N_ELEMENTS(said); w++) {
            const char *argv[] = {"grep", ML_HEADSCALE_VERSION, NULL};
            g_autofree char *out = run_out(argv, said[w]); /* NULL: grep found nothing */
            CHECK((out != NULL) == (w < 2));
        }
        const struct ml_bundle_file *ak = ml_bundle_find(b, scripts[1]);
        CHECK(ak &&
              strstr(ak->content, "preauthkeys create --user \"$id\" --reusable "
                                  "--expiration 1h -o json") &&
              strstr(ak->content, "users list -o json"));
        /* No pre-auth key anywhere: the hub makes it when the user runs the script. */
        for (guint i = 0; i < b->files->len; i++) {
            const struct ml_bundle_file *f = g_ptr_array_index(b->files, i);
            CHECK(!strstr(f->content, "hskey-auth-"));
        }
        CHECK(has_line(b->hub_commands, "/usr/local/sbin/meshlab-headscale-install") &&
              has_line(b->hub_commands, "systemctl daemon-reload && systemctl enable --now "
                                        "headscale-meshlab.service"));
        /* Each client: the CA where tailscaled alone reads it (a drop-in gives tailscaled.service
         * SSL_CERT_DIR, and the system's trust store is not touched: an earlier export's copy
         * there is taken out), then its join line against the hub's URL, key from the file. */
        for (size_t n = 0; n < topo->n_nodes; n++) {
            if (n == topo->hub)
                continue;
            g_autofree char *up =
                ml_tailscale_up_command(url, topo->nodes[n].name, "/etc/meshlab/tailscale-authkey");
            CHECK(!has_line(b->client_commands[n], "update-ca-certificates") &&
                  has_line(b->client_commands[n],
                           "systemctl daemon-reload && systemctl restart tailscaled") &&
                  has_line(b->client_commands[n], up));
            g_autofree char *rel =
                g_strdup_printf("headscale/%s/meshlab-headscale-ca.crt", topo->nodes[n].name);
            const struct ml_bundle_file *cc = ml_bundle_find(b, rel);
            CHECK(cc && ca && !strcmp(cc->content, ca->content) && cc->node == n &&
                  !strcmp(cc->install, ML_HEADSCALE_CA_DIR "/meshlab-headscale-ca.crt"));
            g_autofree char *drel =
                g_strdup_printf("headscale/%s/meshlab-headscale-ca.conf", topo->nodes[n].name);
            const struct ml_bundle_file *dropin = ml_bundle_find(b, drel);
            CHECK(dropin &&
                  !strcmp(dropin->install,
                          "/etc/systemd/system/tailscaled.service.d/meshlab-headscale-ca.conf") &&
                  strstr(dropin->content,
                         "\n[Service]\nEnvironment=SSL_CERT_DIR=" ML_HEADSCALE_CA_DIR "\n"));
        }
        for (guint i = 0; i < b->files->len; i++) {
            const struct ml_bundle_file *f = g_ptr_array_index(b->files, i);
            CHECK(!f->install || !strstr(f->install, "ca-certificates"));
        }
    }
    /* An address no certificate can name is refused, not exported. */
    g_autoptr(MlBundle) bad = ml_bundle_new(topo, "vpn example", "eth0", "test label");
    g_autoptr(GError) e = NULL;
    CHECK(!ml_tailscale_export(bad, &e) && e && strstr(e->message, "neither an IP address"));
}

static const struct ml_dataplane *dataplane_named(const char *name)
{
    for (size_t k = 0; ml_dataplanes[k]; k++)
        if (!strcmp(ml_dataplanes[k]->name, name))
            return ml_dataplanes[k];
    return NULL;
}

/* "sha256 Fingerprint=..." of a PEM certificate, as openssl prints it, read back by the lab's
 * own reader. */
static bool cert_fingerprint(const char *pem, char ret[96])
{
    g_autofree char *dir = g_dir_make_tmp("test-ovpn-XXXXXX", NULL);
    g_autofree char *p = g_build_filename(dir, "c.crt", NULL);
    g_file_set_contents(p, pem, -1, NULL);
    const char *argv[] = {"openssl", "x509", "-fingerprint", "-sha256", "-noout", "-in", p, NULL};
    g_autofree char *out = run_out(argv, NULL);
    rm_rf(dir);
    return out && ml_openvpn_fingerprint_parse(out, ret);
}

/* The OpenVPN export: the lab's server and clients (tests/test_openvpn.c checks those against
 * openvpn(8) of 2.6 and runs them in network namespaces), keys made here; each side pins the
 * other's certificate by the fingerprint of the certificate the export wrote. */
static void test_openvpn_export(struct ml_topology *topo)
{
    const struct ml_dataplane *dp = dataplane_named("openvpn");
    CHECK(dp && ml_dp_exports(dp));
    if (!dp || !have("openssl"))
        return;
    g_autoptr(MlBundle) b = ml_bundle_new(topo, "vpn.example.net", "eth0", "test label");
    g_autoptr(GError) e = NULL;
    CHECK(ml_dp_export(dp, b, &e));
    const struct ml_bundle_file *server = ml_bundle_find(b, "openvpn/hub/server.conf");
    const struct ml_bundle_file *hub_crt = ml_bundle_find(b, "openvpn/hub/node.crt");
    const struct ml_bundle_file *hub_key = ml_bundle_find(b, "openvpn/hub/node.key");
    const struct ml_bundle_file *ca = ml_bundle_find(b, "openvpn/client-a/meshlab.conf");
    const struct ml_bundle_file *ccd = ml_bundle_find(b, "openvpn/hub/ccd/client-a");
    CHECK(server && hub_crt && hub_key && ca && ccd);
    if (!server || !hub_crt || !hub_key || !ca || !ccd)
        return;
    CHECK(strstr(server->content, "\ncert /etc/openvpn/meshlab/node.crt\n") &&
          strstr(server->content, "\nclient-config-dir /etc/openvpn/meshlab/ccd\n") &&
          strstr(server->content, "\nstatus /run/openvpn-meshlab/status 1\n") &&
          strstr(server->content, "\nccd-exclusive\n") && !strstr(server->content, "<key>"));
    CHECK((hub_key->flags & ML_BUNDLE_SECRET) && (ca->flags & ML_BUNDLE_SECRET) &&
          !strcmp(ca->install, "/etc/openvpn/client/meshlab.conf"));
    CHECK_STR(ccd->content, "ifconfig-push 10.17.0.2 255.255.255.0\n");
    CHECK(strstr(ca->content, "\nremote vpn.example.net 1194\n") &&
          strstr(ca->content, "\n<cert>\n-----BEGIN CERTIFICATE-----") &&
          strstr(ca->content, "</cert>\n<key>\n-----BEGIN PRIVATE KEY-----") &&
          !strstr(ca->content, "writepid"));
    /* client-a pins the hub's certificate; the hub pins client-a's, inside <peer-fingerprint>. */
    char fp[96];
    CHECK(cert_fingerprint(hub_crt->content, fp));
    g_autofree char *pin = g_strdup_printf("\npeer-fingerprint %s\n", fp);
    CHECK(strstr(ca->content, pin) != NULL);
    const char *a_crt = strstr(ca->content, "<cert>\n");
    const char *a_end = a_crt ? strstr(a_crt, "</cert>") : NULL;
    g_autofree char *a_pem = a_crt && a_end ? g_strndup(a_crt + 7, a_end - a_crt - 7) : NULL;
    CHECK(a_pem && cert_fingerprint(a_pem, fp));
    g_autofree char *listed = g_strdup_printf("\n%s\n", fp);
    const char *block = strstr(server->content, "<peer-fingerprint>");
    CHECK(block && strstr(block, listed) != NULL);
    /* The hub's user-data gets its key and the unit, never a client's key. */
    GString *ud = g_string_new(NULL);
    for (guint i = 0; i < b->hub_files->len; i++) {
        const struct ml_bundle_hub_file *h = g_ptr_array_index(b->hub_files, i);
        g_string_append_printf(ud, "%s\n%s\n", h->path, h->content);
    }
    const char *a_key = strstr(ca->content, "<key>\n");
    /* Past the 48 characters every P-256 PKCS#8 key begins with (its ASN.1 header). */
    g_autofree char *a_key_line = a_key ? g_strndup(a_key + 6 + 28 + 48, 16) : NULL;
    CHECK(strstr(ud->str, hub_key->content) != NULL);
    CHECK(a_key_line && !strstr(ud->str, a_key_line));
    CHECK(strstr(ud->str, "/etc/systemd/system/meshlab-openvpn.service\n") != NULL);
    g_string_free(ud, TRUE);
    CHECK(has_line(b->client_commands[1], "systemctl enable --now openvpn-client@meshlab"));
    /* The lab verified IPv4 (proto udp4): an IPv6 hub is refused, not exported wrong. */
    g_autoptr(MlBundle) b6 = ml_bundle_new(topo, "2001:db8::10", "eth0", "test label");
    g_autoptr(GError) e6 = NULL;
    CHECK(!ml_dp_export(dp, b6, &e6) && e6 && strstr(e6->message, "proto udp4"));
}

/* What an export killed before it could clean up left beside its target (it may hold private
 * keys) is removed by the next export to that target, once its process is gone; a live
 * process's stage and anything else are left alone. */
/* wireguard-direct: nothing without both clients' addresses (the error names the flags); with
 * them, each client's wg1.conf dials the other's address at the path's port, the keys agree
 * crosswise, and the hub holds nothing of it. */
static void test_wireguard_direct_export(struct ml_topology *topo)
{
    const struct ml_dataplane *dp = dataplane_named("wireguard-direct");
    CHECK(dp && ml_dp_exports(dp));
    if (!dp)
        return;
    g_autoptr(MlBundle) none = ml_bundle_new(topo, "vpn.example.net", "eth0", "test label");
    none->client_address[1] = "198.51.100.11";
    g_autoptr(GError) e = NULL;
    CHECK(!ml_dp_export(dp, none, &e) && e &&
          strstr(e->message, "--client-address client-a=ADDR --client-address client-b=ADDR "
                             "(client-b missing)"));
    CHECK(none->files->len == 0);
    g_autoptr(MlBundle) b = ml_bundle_new(topo, "vpn.example.net", "eth0", "test label");
    b->client_address[1] = "198.51.100.11";
    b->client_address[2] = "2001:db8::12";
    CHECK(ml_dp_export(dp, b, NULL));
    const struct ml_bundle_file *a = ml_bundle_find(b, "wireguard-direct/client-a/wg1.conf"),
                                *bf = ml_bundle_find(b, "wireguard-direct/client-b/wg1.conf");
    CHECK(a && bf && b->files->len == 2 && b->hub_files->len == 0 && b->hub_commands->len == 0);
    if (!a || !bf)
        return;
    unsigned port = topo->wireguard.listen_port + 1;
    g_autofree char *ep_a = wg_value(a->content, "[Peer]", "Endpoint");
    g_autofree char *ep_b = wg_value(bf->content, "[Peer]", "Endpoint");
    g_autofree char *want_a = g_strdup_printf("[2001:db8::12]:%u", port);
    g_autofree char *want_b = g_strdup_printf("198.51.100.11:%u", port);
    CHECK_STR(ep_a, want_a);
    CHECK_STR(ep_b, want_b);
    g_autofree char *lp = wg_value(a->content, NULL, "ListenPort");
    g_autofree char *want_lp = g_strdup_printf("%u", port);
    CHECK_STR(lp, want_lp);
    g_autofree char *addr_a = wg_value(a->content, NULL, "Address");
    g_autofree char *allowed_a = wg_value(a->content, "[Peer]", "AllowedIPs");
    CHECK_STR(addr_a, "10.9.0.2/24");
    CHECK_STR(allowed_a, "10.9.0.3/32");
    char pub[ML_WG_KEY_LEN + 1];
    g_autofree char *priv_a = wg_value(a->content, NULL, "PrivateKey");
    g_autofree char *priv_b = wg_value(bf->content, NULL, "PrivateKey");
    g_autofree char *peer_a = wg_value(a->content, "[Peer]", "PublicKey");
    g_autofree char *peer_b = wg_value(bf->content, "[Peer]", "PublicKey");
    CHECK(ml_wg_public_of(priv_b, pub) && peer_a && !strcmp(pub, peer_a));
    CHECK(ml_wg_public_of(priv_a, pub) && peer_b && !strcmp(pub, peer_b));
    CHECK(a->node == 1 && !strcmp(a->install, "/etc/wireguard/wg1.conf") &&
          a->flags == (ML_BUNDLE_SECRET | ML_BUNDLE_QR | ML_BUNDLE_WG_QUICK));
    CHECK(b->client_commands[1]->len == 1 && !strcmp(g_ptr_array_index(b->client_commands[1], 0),
                                                     "systemctl enable --now wg-quick@wg1"));
    if (have("wg-quick")) {
        g_autofree char *dir = g_dir_make_tmp("test-export-wgd-XXXXXX", NULL);
        g_autofree char *p = g_build_filename(dir, "wg1.conf", NULL);
        g_file_set_contents(p, a->content, -1, NULL);
        const char *argv[] = {"wg-quick", "strip", p, NULL};
        g_autofree char *out = run_out(argv, NULL);
        CHECK(out && strstr(out, "ListenPort = ") && !strstr(out, "Address"));
        g_unlink(p);
        g_rmdir(dir);
    } else {
        printf("note: no wg-quick here: wireguard-direct's files were not stripped\n");
    }
}

static void test_stale_stages(void)
{
    g_autofree char *parent = g_dir_make_tmp("test-export-stale-XXXXXX", NULL);
    g_autofree char *to = g_build_filename(parent, "out", NULL);
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    CHECK(child > 0 && waitpid(child, NULL, 0) == child); /* a pid that no longer runs */
    g_autofree char *dead_v = g_strdup_printf("%s/.out.unverified-%d", parent, (int)child);
    g_autofree char *dead_p = g_strdup_printf("%s/.out.partial-%d", parent, (int)child);
    g_autofree char *dead_vp =
        g_strdup_printf("%s/..out.unverified-%d.partial-%d", parent, (int)child, (int)child);
    g_autofree char *live = g_strdup_printf("%s/.out.unverified-%d", parent, (int)getpid());
    g_autofree char *other = g_strdup_printf("%s/.other.partial-%d", parent, (int)child);
    g_autofree char *odd = g_strdup_printf("%s/.out.partial-%dx", parent, (int)child);
    const char *dirs[] = {dead_v, dead_p, dead_vp, live, other, odd};
    for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
        g_autofree char *key = g_build_filename(dirs[i], "wg0.conf", NULL);
        CHECK(g_mkdir(dirs[i], 0700) == 0 &&
              g_file_set_contents(key, "PrivateKey = x\n", -1, NULL));
    }
    struct ml_export_place place;
    CHECK(ml_export_place_open(to, "partial", &place, NULL));
    CHECK(!g_file_test(dead_v, G_FILE_TEST_EXISTS) && !g_file_test(dead_p, G_FILE_TEST_EXISTS) &&
          !g_file_test(dead_vp, G_FILE_TEST_EXISTS));
    CHECK(g_file_test(live, G_FILE_TEST_IS_DIR) && g_file_test(other, G_FILE_TEST_IS_DIR) &&
          g_file_test(odd, G_FILE_TEST_IS_DIR));
    /* Its own stage, beside the target, named for this process; gone when given up. */
    g_autofree char *own = g_strdup_printf("%s/.out.partial-%d", parent, (int)getpid());
    struct stat st;
    CHECK(stat(own, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700);
    ml_export_place_close(&place);
    CHECK(!g_file_test(own, G_FILE_TEST_EXISTS) && !g_file_test(to, G_FILE_TEST_EXISTS));
    rm_rf(parent);
}

int main(void)
{
    ml_log_init();
    ml_log_set_quiet(true);
    g_autoptr(GError) e = NULL;
    g_autoptr(MlTopology) topo = ml_topology_load("topologies/three-guest.yaml", &e);
    if (!topo) {
        fprintf(stderr, "%s\n", e->message);
        return 1;
    }
    test_keys();
    test_verdict();
    test_firewall();
    test_qr();
    test_hubinit(topo);
    test_multipart();
    test_export_run(topo);
    test_stale_stages();
    test_tailscale_export(topo);
    test_openvpn_export(topo);
    test_wireguard_direct_export(topo);
    return check_finish();
}
