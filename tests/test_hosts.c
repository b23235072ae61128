/* A lab over several hosts (issue 20, item 2): the topology's hosts and each node's host, the
 * plan's names on each host, the network's MTU, and the VXLAN stitching. The stitching scripts
 * run for real here (as root): two bridges, each with a network namespace on it, stitched over
 * loopback by the very scripts a lab runs on its hosts, must carry a ping from one namespace to
 * the other, and the unstitch script must remove both devices. Without root that part skips and
 * says so. */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "core/controller.h"
#include "core/spawn.h"
#include "core/util.h"
#include "topology/plan.h"
#include "topology/topology.h"
#include "virt/underlay.h"
#include "virt/virt_xml.h"

static const char head[] = "name: two-host\n"
                           "image: {use: debian-12}\n"
                           "bridge: {subnet: 192.0.2.0/24}\n";
static const char tail[] = "hub: hub\n"
                           "wireguard: {subnet: 10.8.0.0/24, listen_port: 51820}\n"
                           "measure:\n"
                           "  client: client-a\n"
                           "  server: client-b\n"
                           "  paths: [plain]\n";

static char *topo_text(const char *hosts, const char *hub_host, const char *client_host)
{
    return g_strdup_printf("%s%s"
                           "nodes:\n"
                           "  - {name: hub, address: 192.0.2.10, tunnel_address: 10.8.0.1%s%s}\n"
                           "  - {name: client-a, address: 192.0.2.11, tunnel_address: 10.8.0.2"
                           "%s%s}\n"
                           "  - {name: client-b, address: 192.0.2.12, tunnel_address: 10.8.0.3"
                           "%s%s}\n"
                           "%s",
                           head, hosts, hub_host ? ", host: " : "", hub_host ? hub_host : "",
                           client_host ? ", host: " : "", client_host ? client_host : "",
                           client_host ? ", host: " : "", client_host ? client_host : "", tail);
}

static struct ml_topology *parse(const char *hosts, const char *hub_host, const char *client_host,
                                 GError **err)
{
    g_autofree char *text = topo_text(hosts, hub_host, client_host);
    return ml_topology_parse("t.yaml", text, strlen(text), err);
}

static const char two_hosts[] = "hosts:\n"
                                "  here: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
                                "  there: {uri: 'qemu+ssh://root@127.0.0.1:2222/system', "
                                "underlay: 127.0.0.2}\n";

/* The error of a topology that must be refused, with where it points. */
static void check_refused(const char *hosts, const char *hub_host, const char *client_host,
                          const char *where, const char *words)
{
    g_autoptr(GError) err = NULL;
    struct ml_topology *t = parse(hosts, hub_host, client_host, &err);
    CHECK(t == NULL && err);
    if (!err) {
        ml_topology_free(t);
        return;
    }
    if (!g_str_has_prefix(err->message, where) || !strstr(err->message, words))
        fprintf(stderr, "for %s / %s got: %s\n", where, words, err->message);
    CHECK(g_str_has_prefix(err->message, where));
    CHECK(strstr(err->message, words) != NULL);
}

static void test_topology(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = parse(two_hosts, "here", "there", &err);
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return;
    }
    CHECK(t->n_hosts == 2);
    CHECK_STR(t->hosts[1].name, "there");
    CHECK_STR(t->hosts[1].uri, "qemu+ssh://root@127.0.0.1:2222/system");
    CHECK(t->hosts[1].underlay.s_addr == htonl(0x7f000002));
    /* What SSH authenticates and checks the host with is taken. */
    g_autoptr(MlTopology) keyed =
        parse("hosts:\n  here: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
              "  there: {uri: 'qemu+ssh://root@h:22/system?keyfile=/k&no_tty=1', "
              "underlay: 127.0.0.2}\n",
              "here", "there", &err);
    CHECK(keyed != NULL);
    CHECK(t->nodes[0].host == 0 && t->nodes[1].host == 1 && t->nodes[2].host == 1);
    CHECK(ml_topology_crosses(t, 0, 1) && !ml_topology_crosses(t, 1, 2));

    /* Without hosts: one host, every node on it, no path crossing. */
    g_autoptr(MlTopology) one = parse("", NULL, NULL, &err);
    CHECK(one && one->n_hosts == 0 && !ml_topology_crosses(one, 0, 1));

    /* Each refusal at the value that breaks the rule. */
    check_refused(two_hosts, "here", "elsewhere",
                  "t.yaml:9:75:", "'elsewhere' is none of hosts (here, there)");
    check_refused("", "here", NULL, "t.yaml:5:", "no hosts are named");
    check_refused(two_hosts, "here", NULL, "t.yaml:9:5:", "every node says which one it runs on");
    check_refused(two_hosts, "here", "here", "t.yaml:6:3:", "host 'there' carries no node");
    check_refused("hosts:\n  here: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
                  "  there: 'qemu+ssh://root@h/system'\n",
                  "here", "there", "t.yaml:6:", "give hosts.there.underlay");
    check_refused("hosts:\n  here: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
                  "  there: {uri: 'qemu:///system', underlay: 127.0.0.2}\n",
                  "here", "there", "t.yaml:6:", "has the URI of host 'here'");
    check_refused("hosts:\n  here: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
                  "  there: {uri: 'qemu+ssh://h/system', underlay: 127.0.0.1}\n",
                  "here", "there", "t.yaml:6:", "underlay 127.0.0.1 is host 'here''s");
    check_refused("hosts:\n  here: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
                  "  there: {uri: 'qemu+ssh://h/system', underlay: 224.0.0.1}\n",
                  "here", "there", "t.yaml:6:", "is no unicast address");
    check_refused("hosts:\n  here: {uri: 'qemu :///system'}\n", "here", "here",
                  "t.yaml:5:", "one word without spaces");
    check_refused("hosts: {}\n", NULL, NULL, "t.yaml:4:", "hosts is empty");
    /* A topology is data: a URI that would make libvirt or meshlab run a program is refused. */
    check_refused("hosts:\n  here: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
                  "  there: {uri: 'qemu+ssh://h/system?keyfile=/k&command=/tmp/x', "
                  "underlay: 127.0.0.2}\n",
                  "here", "there",
                  "t.yaml:6:16:", "hosts.there.uri: the query's 'command' names the program");
    /* libvirt splits at ';' where no '&' is left (audit round 4, finding 1), and takes names in
     * any case: the topology is read so too. */
    check_refused("hosts:\n  here: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
                  "  there: {uri: 'qemu+ssh://h/system?no_tty=1;Command=/bin/bash', "
                  "underlay: 127.0.0.2}\n",
                  "here", "there", "t.yaml:6:16:", "the query's 'Command' names the program");
    check_refused("hosts:\n  here: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
                  "  there: {uri: 'qemu+ssh://h/system?keyfile=/k&no_verify=1', "
                  "underlay: 127.0.0.2}\n",
                  "here", "there", "t.yaml:6:16:", "'no_verify' turns off the check");
    check_refused("hosts:\n  here: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
                  "  there: {uri: 'qemu+ssh://h/system?socket=%27%3Bid%3B%27', "
                  "underlay: 127.0.0.2}\n",
                  "here", "there", "t.yaml:6:16:", "no percent escape");
    check_refused("hosts:\n  here: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
                  "  there: {uri: 'qemu+ssh://h/system?netcat=nc', underlay: 127.0.0.2}\n",
                  "here", "there", "t.yaml:6:", "uri_aliases");
    check_refused("hosts:\n  here: {uri: 'qemu:///system', mtu: 9000}\n", "here", "here",
                  "t.yaml:5:", "mtu");

    /* A lone host needs no underlay: it is the one-host lab, by the one-host names. */
    g_autoptr(MlTopology) lone = parse("hosts:\n  here: 'qemu:///system'\n", "here", "here", &err);
    CHECK(lone && lone->n_hosts == 1);
    if (lone) {
        g_autoptr(MlPlan) plan = ml_plan_new(lone, "20261204-120000-abcdef");
        CHECK(plan->n_hosts == 1 && plan->hosts[0].host == NULL);
        CHECK_STR(plan->hosts[0].network, "meshlab-two-host");
    }
}

static void test_plan(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = parse(two_hosts, "here", "there", &err);
    if (!t)
        return;
    g_autoptr(MlPlan) plan = ml_plan_new(t, "20261204-120000-abcdef");
    CHECK(plan->n_hosts == 2);
    /* Per host: its own network, pool, bridge and VXLAN device, all carrying the lab's name or
     * hash, so that two "hosts" that are one libvirt and one kernel do not collide. */
    CHECK_STR(plan->hosts[0].network, "meshlab-two-host.here");
    CHECK_STR(plan->hosts[1].pool, "meshlab-two-host.there");
    CHECK(g_str_has_suffix(plan->hosts[1].pool_dir, "/pools/two-host.there"));
    char want[16];
    snprintf(want, sizeof(want), "mlb%s1", plan->hash);
    CHECK_STR(plan->hosts[1].bridge, want);
    snprintf(want, sizeof(want), "mlx%s0", plan->hash);
    CHECK_STR(plan->hosts[0].vxlan, want);
    char prefix[12];
    ml_plan_vxlan_prefix("two-host", prefix);
    CHECK(g_str_has_prefix(plan->hosts[1].vxlan, prefix));
    CHECK(strlen(plan->hosts[1].vxlan) <= 15 && strlen(plan->hosts[1].bridge) <= 15);
    CHECK(plan->hosts[0].vxlan_port == 4789 && plan->hosts[1].vxlan_port == 4790);
    CHECK(plan->vni > 0 && plan->vni < (1u << 24));
    CHECK(plan->guests[0].host == 0 && plan->guests[1].host == 1);
    CHECK(ml_plan_guest_host(plan, 2) == &plan->hosts[1]);

    /* The guest's interface is on its host's network; that network carries the lab's MTU. */
    g_autofree char *net = ml_xml_network(&plan->hosts[1], 1450);
    CHECK(strstr(net, "<name>meshlab-two-host.there</name>") != NULL);
    CHECK(strstr(net, "<mtu size='1450'/>") != NULL);
    CHECK(strstr(net, "<ip") == NULL && strstr(net, "<forward") == NULL);
    g_autofree char *plain = ml_xml_network(&plan->hosts[0], 0);
    CHECK(strstr(plain, "<mtu") == NULL);

    /* VXLAN's 50 bytes come off the lab's MTU only where the underlay can't carry 1550. */
    CHECK(ml_underlay_lab_mtu(65536) == 1500);
    CHECK(ml_underlay_lab_mtu(1550) == 1500);
    CHECK(ml_underlay_lab_mtu(1500) == 1450);
    CHECK(ml_underlay_lab_mtu(9000) == 1500);
    CHECK(ml_underlay_lab_mtu(600) == 0);

    struct ml_underlay_route r = {0};
    CHECK(ml_underlay_route_parse("dev lo mtu 65536\n", "here", &r, &err));
    CHECK_STR(r.dev, "lo");
    CHECK(r.mtu == 65536);
    g_clear_error(&err);
    CHECK(!ml_underlay_route_parse("garbage", "there", &r, &err));
    CHECK(err && strstr(err->message, "host there"));
}

/* Runs a shell line as root, quietly; its success. */
static bool sh(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static bool sh(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *line = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    const char *argv[] = {"sh", "-c", line, NULL};
    struct ml_proc p = {0};
    bool ok = ml_proc_run(argv, 30, &p, NULL) && WIFEXITED(p.status) && WEXITSTATUS(p.status) == 0;
    if (!ok)
        fprintf(stderr, "failed: %s\n%s%s", line, p.out ? p.out : "", p.err ? p.err : "");
    ml_proc_clear(&p);
    return ok;
}

/* The scripts for real: two bridges stitched over loopback (127.0.0.1 and 127.0.0.2, the
 * e2e's "hosts"), a namespace on each, a ping across. */
static void test_stitch_for_real(void)
{
    if (geteuid() != 0 || !sh("command -v ip && command -v bridge && ip netns list")) {
        printf("SKIP stitching for real: needs root, ip and bridge (iproute2)\n");
        return;
    }
    g_autoptr(GError) err = NULL;
    g_autofree char *hosts =
        g_strdup_printf("hosts:\n  a: {uri: 'qemu:///system', underlay: 127.0.0.1}\n"
                        "  b: {uri: 'qemu+ssh://root@127.0.0.1/system', underlay: 127.0.0.2}\n");
    g_autoptr(MlTopology) t = parse(hosts, "a", "b", &err);
    if (!t)
        return;
    /* A lab name of this test's own, so that its devices are no real lab's. */
    g_strlcpy(t->name, "test-stitch", sizeof(t->name));
    g_autoptr(MlPlan) plan = ml_plan_new(t, "20261204-120000-abcdef");
    const char *ns[2] = {"mltest-st-a", "mltest-st-b"};
    const char *addr[2] = {"10.99.0.1", "10.99.0.2"};
    g_autofree char *unstitch = ml_underlay_unstitch_script(t->name, false);
    g_autofree char *unstitch_all = ml_underlay_unstitch_script(t->name, true);
    sh("%s >/dev/null; ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null; "
       "ip link del %s 2>/dev/null; ip link del %s 2>/dev/null; true",
       unstitch_all, ns[0], ns[1], plan->hosts[0].bridge, plan->hosts[1].bridge);
    bool ok = true;
    for (size_t k = 0; ok && k < 2; k++)
        ok = sh("ip link add %s type bridge && ip link set %s up && ip netns add %s && "
                "ip link add mltv%zu type veth peer name eth0 netns %s && "
                "ip link set mltv%zu master %s up && ip -n %s addr add %s/24 dev eth0 && "
                "ip -n %s link set eth0 up",
                plan->hosts[k].bridge, plan->hosts[k].bridge, ns[k], k, ns[k], k,
                plan->hosts[k].bridge, ns[k], addr[k], ns[k]);
    CHECK(ok);
    /* Each host's route to the other, as the lab reads it before it makes anything. */
    for (size_t k = 0; ok && k < 2; k++) {
        g_autofree char *script =
            ml_underlay_route_script(t->hosts[k].underlay, t->hosts[1 - k].underlay);
        g_autofree char *out = NULL;
        struct ml_underlay_route r = {0};
        CHECK(ml_underlay_run("qemu:///system", t->hosts[k].name, script, 30, &out, &err));
        CHECK(ml_underlay_route_parse(out, t->hosts[k].name, &r, &err));
        CHECK_STR(r.dev, "lo");
        CHECK(r.mtu == 65536);
    }
    /* An underlay that is not the host's is refused, by name. */
    struct in_addr stranger = {htonl(0xc0000263)}; /* 192.0.2.99: not this machine's */
    g_autofree char *bad = ml_underlay_route_script(stranger, t->hosts[0].underlay);
    g_clear_error(&err);
    CHECK(!ml_underlay_run("qemu:///system", "a", bad, 30, NULL, &err));
    CHECK(err && strstr(err->message, "host a: underlay 192.0.2.99 is no address of this host"));
    g_clear_error(&err);

    for (size_t k = 0; ok && k < 2; k++) {
        g_autofree char *script = ml_underlay_stitch_script(plan, k, 1500);
        CHECK(ml_underlay_run("qemu:///system", t->hosts[k].name, script, 30, NULL, &err));
        if (err)
            fprintf(stderr, "%s\n", err->message);
        g_clear_error(&err);
    }
    /* A frame crosses from one bridge to the other only through the two VXLAN devices. */
    CHECK(ok && sh("ip netns exec %s ping -n -c 3 -i 0.2 -W 2 %s >/dev/null", ns[0], addr[1]));
    CHECK(sh("bridge fdb show dev %s | grep -q 'dst 127.0.0.2 .*port 4790'", plan->hosts[0].vxlan));
    CHECK(sh("ip -d link show %s | grep -q 'vxlan id %u local 127.0.0.2.*dstport 4790'",
             plan->hosts[1].vxlan, plan->vni));
    /* Stitching again replaces the device: a host's earlier, crashed stitching is no error. */
    g_autofree char *again = ml_underlay_stitch_script(plan, 0, 1500);
    CHECK(ml_underlay_run("qemu:///system", "a", again, 30, NULL, &err));
    g_clear_error(&err);

    /* Each device carries the controller that stitched it; one of another controller (its
     * alias rewritten as another's stitching would have left it) is left, and named. */
    CHECK(sh("ip -d link show %s | grep -q 'alias meshlab controller %s'", plan->hosts[0].vxlan,
             ml_controller_id()));
    CHECK(sh("ip link set %s alias 'meshlab controller 000000000000'", plan->hosts[1].vxlan));
    g_autofree char *out = NULL;
    CHECK(ml_underlay_run("qemu:///system", "a", unstitch, 30, &out, &err));
    g_autofree char *removed0 = g_strdup_printf("removed %s", plan->hosts[0].vxlan);
    g_autofree char *foreign1 = g_strdup_printf("foreign %s", plan->hosts[1].vxlan);
    CHECK(out && strstr(out, removed0) && strstr(out, foreign1));
    CHECK(sh("ip link show %s >/dev/null 2>&1", plan->hosts[1].vxlan));
    g_free(out);
    out = NULL;
    /* down --foreign's script removes it too; both are gone, and the bridges are apart. */
    CHECK(ml_underlay_run("qemu:///system", "a", unstitch_all, 30, &out, &err));
    CHECK(out && strstr(out, plan->hosts[1].vxlan) && !strstr(out, "foreign"));
    CHECK(!sh("ip link show %s 2>/dev/null", plan->hosts[0].vxlan));
    CHECK(!sh("ip link show %s 2>/dev/null", plan->hosts[1].vxlan));
    CHECK(!sh("ip netns exec %s ping -n -c 1 -W 1 %s >/dev/null", ns[0], addr[1]));
    g_free(out);
    out = NULL;
    CHECK(ml_underlay_run("qemu:///system", "a", unstitch, 30, &out, &err));
    CHECK(out && !strstr(out, "removed"));
    sh("ip netns del %s; ip netns del %s; ip link del %s; ip link del %s; ip link del mltv0; "
       "ip link del mltv1; true",
       ns[0], ns[1], plan->hosts[0].bridge, plan->hosts[1].bridge);
}

int main(void)
{
    test_topology();
    test_plan();
    test_stitch_for_real();
    return check_finish();
}
