/* Every generated file, compared with its golden copy in tests/golden/:
 * libvirt XML, cloud-init seeds and WireGuard configurations. */
#include "check.h"

#include <arpa/inet.h>

#include "virt/cloudinit.h"
#include "cache/image.h"
#include "dataplanes/nebula.h"
#include "guestnet/nft.h"
#include "dataplanes/dataplane.h"
#include "topology/plan.h"
#include "topology/topology.h"
#include "core/controller.h"
#include "core/util.h"
#include "virt/virt_xml.h"
#include "dataplanes/wireguard.h"

/* The XML of an object with what varies by controller (core/controller.h: this machine and its
 * state directory) in words: the golden files are every machine's. Each UUID must carry this
 * controller, and the domain's metadata must name it. */
static char *controller_neutral(const char *xml)
{
    const char *u = strstr(xml, "<uuid>");
    CHECK(u != NULL);
    if (!u)
        return g_strdup(xml);
    g_autofree char *uuid = g_strndup(u + strlen("<uuid>"), 36);
    CHECK(ml_controller_owns(uuid));
    g_auto(GStrv) a = g_strsplit(xml, uuid, -1);
    g_autofree char *b = g_strjoinv("CONTROLLER-UUID", a);
    g_auto(GStrv) c = g_strsplit(b, ml_controller_words(), -1);
    g_autofree char *d = g_strjoinv("CONTROLLER-WORDS", c);
    g_auto(GStrv) e = g_strsplit(d, ml_controller_id(), -1);
    return g_strjoinv("CONTROLLER-ID", e);
}

static const char *const keys[] = {
    "HUBhubHUBhubHUBhubHUBhubHUBhubHUBhubHUBhub0=",
    "AAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaaAAA=",
    "BBBBbbbbBBBBbbbbBBBBbbbbBBBBbbbbBBBBbbbbBBA=",
};

int main(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_load("topologies/three-guest.yaml", &err);
    CHECK(topo != NULL);
    if (!topo)
        return check_finish();
    g_autoptr(MlPlan) plan = ml_plan_new(topo, "20261129-120000-abcdef");

    /* Names derive from the lab name alone, so down can find them without the file. */
    CHECK(plan->n_hosts == 1 && plan->hosts[0].host == NULL);
    CHECK_STR(plan->hosts[0].network, "meshlab-three-guest");
    CHECK_STR(plan->hosts[0].pool, "meshlab-three-guest");
    CHECK_STR(plan->guests[0].domain, "meshlab-three-guest.hub");
    CHECK(strlen(plan->hosts[0].bridge) <= 15 && strlen(plan->guests[2].tap) <= 15);
    CHECK(strcmp(plan->guests[0].mac, plan->guests[1].mac) != 0);

    g_autofree char *net = ml_xml_network(&plan->hosts[0], 0);
    g_autofree char *net_golden = controller_neutral(net);
    check_golden("network.xml", net_golden);
    /* The isolation the lab depends on: no host address, no forwarding. */
    CHECK(strstr(net, "<ip") == NULL);
    CHECK(strstr(net, "<forward") == NULL);

    g_autofree char *pool = ml_xml_pool(&plan->hosts[0], 64055, 64055, 0700);
    CHECK(strstr(pool, "<name>meshlab-three-guest</name>") != NULL);
    g_autofree char *pool_neutral = controller_neutral(pool);
    CHECK(strstr(pool_neutral, "<uuid>CONTROLLER-UUID</uuid>") != NULL);
    /* The pool directory holds the guests' secrets: QEMU's user alone may enter it. */
    CHECK(strstr(pool, "<mode>0700</mode><owner>64055</owner><group>64055</group>") != NULL);
    g_autofree char *pool_root = ml_xml_pool(&plan->hosts[0], -1, -1, 0700);
    CHECK(strstr(pool_root, "<mode>0700</mode></permissions>") != NULL);
    /* On another host: root's, which QEMU's user may pass through and not list or write. */
    g_autofree char *pool_remote = ml_xml_pool(&plan->hosts[0], 0, 0, 0711);
    CHECK(strstr(pool_remote, "<mode>0711</mode><owner>0</owner><group>0</group>") != NULL);

    g_autofree char *vol = ml_xml_overlay_volume("hub.qcow2", "/cache/base.qcow2", 2147483648ULL);
    check_golden("overlay-volume.xml", vol);

    struct ml_image img = {
        .name = "debian-12",
        .base = "/cache/debian-12-0123/base.qcow2",
        .kernel = "/cache/debian-12-0123/vmlinuz",
        .initrd = "/cache/debian-12-0123/initrd.img",
        .cmdline = "root=/dev/vda rw console=ttyS0",
    };
    struct ml_domain_paths paths = {"/pools/three-guest/hub.qcow2",
                                    "/pools/three-guest/hub-seed.iso",
                                    "/pools/three-guest/hub-console.log", NULL};
    g_autofree char *dom = ml_xml_domain(plan, 0, &img, false, &paths);
    g_autofree char *dom_golden = controller_neutral(dom);
    check_golden("domain-hub-tcg.xml", dom_golden);
    CHECK(strstr(dom, "<meshlab:controller>") && strstr(dom_golden, "CONTROLLER-WORDS"));
    /* With KVM, a disk-booted image and the artifacts CD after the other devices. */
    struct ml_image disk_img = {.name = "ubuntu-24.04", .base = "/cache/ubuntu/base.qcow2"};
    struct ml_domain_paths with_cd = {
        "/pools/three-guest/client-a.qcow2", "/pools/three-guest/client-a-seed.iso",
        "/pools/three-guest/client-a-console.log", "/pools/three-guest/client-a-artifacts.iso"};
    g_autofree char *dom_cd = ml_xml_domain(plan, 1, &disk_img, true, &with_cd);
    g_autofree char *dom_cd_golden = controller_neutral(dom_cd);
    check_golden("domain-client-kvm-artifacts.xml", dom_cd_golden);
    CHECK(strstr(dom, "<domain type='qemu'>") != NULL);
    g_autofree char *domk = ml_xml_domain(plan, 0, &img, true, &paths);
    CHECK(strstr(domk, "<domain type='kvm'>") != NULL);
    CHECK(strstr(domk, "host-passthrough") != NULL);
    /* Under TCG qemu64, named: no model falls back to another. */
    CHECK(strstr(dom, "<model fallback='forbid'>qemu64</model>") != NULL);
    /* results.json's guest_cpu.model is read back from the XML a domain was given. */
    g_autofree char *model_tcg = ml_xml_domain_cpu_model(dom);
    g_autofree char *model_kvm = ml_xml_domain_cpu_model(domk);
    CHECK(model_tcg && !strcmp(model_tcg, "qemu64"));
    CHECK(model_kvm && !strcmp(model_kvm, "host-passthrough"));
    /* As libvirt gives a named model back: the model and what it requires, not what it
     * disables or leaves optional, nor the <cpu> of a capabilities block deeper in. */
    g_autofree char *model_named = ml_xml_domain_cpu_model(
        "<domain type='qemu'><name>x</name><cpu mode='custom' match='exact' check='none'>\n"
        "  <model fallback='forbid'> qemu64 </model>\n"
        "  <feature policy='require' name='aes'/><feature policy='disable' name='svm'/>\n"
        "  <feature policy='optional' name='avx'/><feature name='pclmuldq'/>\n"
        "</cpu><devices><x><cpu mode='maximum'/></x></devices></domain>");
    CHECK(model_named && !strcmp(model_named, "qemu64+aes+pclmuldq"));
    /* A mode that names its model in the live XML (host-model) is the mode. */
    g_autofree char *model_host = ml_xml_domain_cpu_model(
        "<domain><cpu mode='host-model' check='partial'><model>EPYC</model></cpu></domain>");
    CHECK(model_host && !strcmp(model_host, "host-model"));
    CHECK(ml_xml_domain_cpu_model("<domain><name>x</name></domain>") == NULL);
    CHECK(ml_xml_domain_cpu_model("<domain><cpu mode='maximum'>") == NULL);
    CHECK(ml_xml_domain_cpu_model(NULL) == NULL);
    img.kernel = NULL;
    g_autofree char *domdisk = ml_xml_domain(plan, 1, &img, false, &paths);
    CHECK(strstr(domdisk, "<kernel>") == NULL && strstr(domdisk, "<boot dev='hd'/>") != NULL);

    struct ml_seed seed = {0};
    CHECK(ml_seed_render(plan, 1, &seed, &err));
    if (seed.user_data) {
        check_golden("client-a-user-data", seed.user_data);
        check_golden("client-a-meta-data", seed.meta_data);
        check_golden("client-a-network-config", seed.network_config);
        CHECK(strstr(seed.user_data, "{{") == NULL);
    }
    ml_seed_clear(&seed);

    /* The hub's second address (for the NAT probes) is a second entry on eth0; without one the
     * hub has its own address alone, as every node had before. */
    CHECK(ml_seed_render(plan, 0, &seed, &err));
    CHECK(seed.network_config &&
          g_str_has_suffix(seed.network_config, "    addresses:\n      - 192.0.2.10/24\n"));
    ml_seed_clear(&seed);
    CHECK(inet_pton(AF_INET, "192.0.2.20", &topo->nodes[0].second_address) == 1);
    CHECK(ml_seed_render(plan, 0, &seed, &err));
    if (seed.network_config)
        check_golden("hub-second-address-network-config", seed.network_config);
    ml_seed_clear(&seed);
    topo->nodes[0].second_address.s_addr = 0;

    const char *vars[] = {"a", "1", NULL};
    g_autofree char *ok = ml_template_expand("x{{a}}y", vars, NULL);
    CHECK_STR(ok, "x1y");
    g_autoptr(GError) terr = NULL;
    g_autofree char *bad = ml_template_expand("x{{b}}y", vars, &terr);
    CHECK(bad == NULL && terr && strstr(terr->message, "'b'"));

    g_autofree char *hub = ml_wg_render_hub(topo, keys);
    check_golden("wg0-hub.conf", hub);
    g_autofree char *client = ml_wg_render_client(topo, 1, keys[0]);
    check_golden("wg0-client-a.conf", client);
    /* The configurations the host writes carry no private key, only a path to the guest's own. */
    CHECK(strstr(hub, "PrivateKey") == NULL && strstr(client, "PrivateKey") == NULL);
    CHECK(strstr(client, "PersistentKeepalive = 25") != NULL);
    CHECK(strstr(client, "Endpoint = 192.0.2.10:51820") != NULL);
    CHECK(strstr(hub, "masquerade") != NULL && strstr(hub, "ip_forward=1") != NULL);

    /* The guest firewall and the path policies. */
    struct ml_port ports[ML_PORTS_MAX];
    size_t n_ports = ml_dataplane_ports(topo, ports);
    g_autofree char *fw = ml_nft_firewall(ports, n_ports);
    check_golden("nft-firewall.nft", fw);
    CHECK(strstr(fw, "policy drop;") != NULL);
    /* Every dataplane's transport is kept off the tunnels, on the way in and through. */
    CHECK(
        strstr(fw,
               "udp dport { 51820, 4242, 3478, 41641, 40000, 51821, 51822, 500, 4500, 1194, 655 } "
               "counter drop") != NULL);
    CHECK(
        strstr(fw,
               "udp sport { 51820, 4242, 3478, 41641, 40000, 51821, 51822, 500, 4500, 1194, 655 } "
               "counter drop") != NULL);
    CHECK(strstr(fw, "tcp dport { 443, 655 } counter drop") != NULL);
    CHECK(strstr(fw, "iifname != \"eth0\" jump transport") != NULL);
    CHECK(strstr(fw, "oifname != \"eth0\" jump transport") != NULL);
    /* iperf3 measures through the tunnels: it is no transport. */
    CHECK(strstr(fw, "5201 counter drop") == NULL && strstr(fw, "5201,") == NULL);
    /* tailscaled's port is not opened: peers punch their way in, as in the seed. */
    CHECK(strstr(fw, "udp dport 41641 accept") == NULL);
    /* The policies in force while each path is measured, node by node. */
    const struct ml_path_ops *ops;
    ML_FOR_EACH_PATH(k, ops)
    {
        GString *all = g_string_new(NULL);
        for (size_t i = 0; i < topo->n_nodes; i++) {
            g_autofree char *p = ml_nft_policy(topo, i, ops->policy, ports, n_ports);
            g_string_append(all, p);
        }
        g_autofree char *name = g_strdup_printf("nft-path-%s.nft", ops->name);
        check_golden(name, all->str);
        g_string_free(all, TRUE);
    }
    g_autofree char *relay_a = ml_nft_policy(topo, 1, ML_POLICY_RELAY, ports, n_ports);
    check_golden("nft-relay-client-a.nft", relay_a);
    CHECK(strstr(relay_a, "ip saddr != 192.0.2.10 meta l4proto udp counter drop") != NULL);
    /* No drop on output: tailscaled rebinds and re-STUNs on EPERM. */
    CHECK(strstr(relay_a, "hook output") == NULL && strstr(relay_a, "daddr") == NULL);
    /* The hub is the relay: under the relay policy it drops nothing but what reaches its own
     * peer relay (the topology measures tailscale-peer-relay), which leaves the clients DERP;
     * the peer-relay policy leaves them the hub's tailscaled. */
    g_autofree char *relay_hub = ml_nft_policy(topo, 0, ML_POLICY_RELAY, ports, n_ports);
    CHECK(strstr(relay_hub, "iifname \"eth0\" udp dport 40000 counter drop") != NULL);
    CHECK(strstr(relay_hub, "drop") == g_strrstr(relay_hub, "drop"));
    g_autofree char *hub_peer = ml_nft_policy(topo, 0, ML_POLICY_PEER_RELAY, ports, n_ports);
    CHECK(strstr(hub_peer, "drop") == NULL);
    g_autofree char *a_peer = ml_nft_policy(topo, 1, ML_POLICY_PEER_RELAY, ports, n_ports);
    CHECK(strstr(a_peer, "ip saddr != 192.0.2.10 meta l4proto udp counter drop") != NULL);
    CHECK(strstr(relay_a, "40000") == NULL);
    /* A lab that does not measure the peer relay has no such port: its hub drops nothing. */
    {
        g_autofree char *text = NULL;
        CHECK(g_file_get_contents("topologies/dataplanes.yaml", &text, NULL, NULL));
        GString *yaml = g_string_new(text);
        CHECK(g_string_replace(yaml, " tailscale-peer-relay,", "", 1) == 1);
        g_autoptr(GError) e = NULL;
        g_autoptr(MlTopology) plain = ml_topology_parse("plain.yaml", yaml->str, yaml->len, &e);
        g_string_free(yaml, TRUE);
        CHECK(plain != NULL);
        if (plain) {
            struct ml_port pports[ML_PORTS_MAX];
            size_t n_pports = ml_dataplane_ports(plain, pports);
            g_autofree char *h = ml_nft_policy(plain, 0, ML_POLICY_RELAY, pports, n_pports);
            CHECK(strstr(h, "drop") == NULL);
            g_autofree char *pfw = ml_nft_firewall(pports, n_pports);
            CHECK(strstr(pfw, "40000") == NULL);
        }
    }
    g_autofree char *direct_a = ml_nft_policy(topo, 1, ML_POLICY_DIRECT, ports, n_ports);
    CHECK(strstr(direct_a, "delete table inet meshlab_path") != NULL &&
          strstr(direct_a, "drop") == NULL);

    /* WireGuard's port is the topology's, everywhere it appears. */
    {
        g_autofree char *text = NULL;
        CHECK(g_file_get_contents("topologies/three-guest.yaml", &text, NULL, NULL));
        GString *yaml = g_string_new(text);
        CHECK(g_string_replace(yaml, "listen_port: 51820", "listen_port: 51999", 1) == 1);
        g_autoptr(GError) e = NULL;
        g_autoptr(MlTopology) other = ml_topology_parse("other.yaml", yaml->str, yaml->len, &e);
        g_string_free(yaml, TRUE);
        CHECK(other != NULL);
        if (other) {
            struct ml_port oports[ML_PORTS_MAX];
            size_t n_oports = ml_dataplane_ports(other, oports);
            g_autofree char *ofw = ml_nft_firewall(oports, n_oports);
            CHECK(strstr(ofw, "udp dport 51999 accept") != NULL);
            CHECK(
                strstr(ofw,
                       "{ 51999, 4242, 3478, 41641, 40000, 52000, 52001, 500, 4500, 1194, 655 }") !=
                NULL);
            CHECK(strstr(ofw, "51820") == NULL);
            g_autofree char *summary = ml_nft_firewall_summary(oports, n_oports);
            CHECK(strstr(summary, "udp 51999") != NULL && strstr(summary, "51820") == NULL);
            g_autofree char *ohub = ml_wg_render_hub(other, keys);
            CHECK(strstr(ohub, "ListenPort = 51999") != NULL);
            g_autofree char *oclient = ml_wg_render_client(other, 1, keys[0]);
            CHECK(strstr(oclient, "Endpoint = 192.0.2.10:51999") != NULL);
        }
    }

    /* Nebula: the hub is lighthouse and relay, clients use it as both. */
    char na[16];
    CHECK_STR(ml_ip_str(ml_nebula_address(topo, 0), na), "10.42.0.1");
    CHECK_STR(ml_ip_str(ml_nebula_address(topo, 2), na), "10.42.0.3");
    g_autofree char *nhub = ml_nebula_config(topo, 0, "ssh-ed25519 AAAAhub meshlab");
    check_golden("nebula-hub.yml", nhub);
    CHECK(strstr(nhub, "am_lighthouse: true") && strstr(nhub, "am_relay: true"));
    g_autofree char *nclient = ml_nebula_config(topo, 1, "ssh-ed25519 AAAAclient meshlab");
    check_golden("nebula-client-a.yml", nclient);
    CHECK(strstr(nclient, "use_relays: true") && strstr(nclient, "relays: [\"10.42.0.1\"]"));
    CHECK(strstr(nclient, "\"10.42.0.1\": [\"192.0.2.10:4242\"]") != NULL);

    /* nebula's own view of a tunnel, on real print-tunnel output. */
    const char *const samples[] = {"tests/data/samples/nebula/print-tunnel-direct.json",
                                   "tests/data/samples/nebula/print-tunnel-relayed.json",
                                   "tests/data/samples/nebula/print-tunnel-none.txt"};
    struct ml_nebula_tunnel tun[3];
    for (size_t i = 0; i < 3; i++) {
        g_autofree char *text = NULL;
        CHECK(g_file_get_contents(samples[i], &text, NULL, NULL));
        CHECK(ml_nebula_tunnel_parse(text, &tun[i], NULL));
    }
    CHECK(tun[0].found && !tun[0].relayed);
    CHECK_STR(tun[0].remote, "192.0.2.12:4242");
    CHECK(tun[1].found && tun[1].relayed && tun[1].remote[0] == '\0');
    CHECK_STR(tun[1].relay, "10.42.0.1");
    struct ml_nebula_tunnel odd;
    CHECK(ml_nebula_tunnel_parse("{\"vpnIp\":\"10.42.0.3\"}", &odd, NULL));
    CHECK(!odd.found && !odd.relayed); /* no currentRemote: neither path is claimed */
    CHECK(!tun[2].found);
    struct ml_nebula_tunnel junk;
    g_autoptr(GError) jerr = NULL;
    CHECK(!ml_nebula_tunnel_parse("{not json", &junk, &jerr) && jerr);

    CHECK(ml_wg_key_valid(keys[1]));
    CHECK(!ml_wg_key_valid("not a key"));
    CHECK(!ml_wg_key_valid("AAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaaAAAAaaaa!AA="));
    return check_finish();
}
