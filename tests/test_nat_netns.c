/* The NAT types on a real kernel, without guests: tests/nat_netns.sh builds a hub, a NATed
 * client's root namespace and its inside namespace as network namespaces on this host, loads
 * the guest firewall and each type's ruleset there, runs the probe's two python3 halves as the
 * guests would, and the classifier must find what ml_nat_expected says for every type. Skips
 * (77) only without root or network namespaces. */
#include "check.h"

#include <arpa/inet.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dataplanes/dataplane.h"
#include "guestnet/nat.h"
#include "guestnet/nft.h"
#include "topology/topology.h"

#define HUB_A2 "192.0.2.20"

static struct ml_nat_behaviour parse_ok(const char *output, GString *seen)
{
    struct ml_nat_behaviour b = {ML_NAT_DEPENDENCE_UNKNOWN, ML_NAT_DEPENDENCE_UNKNOWN, false};
    g_autoptr(GError) err = NULL;
    bool ok = ml_nat_probe_parse(output, &b, seen, &err);
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "parse failed: %s\n", err->message);
    return b;
}

static bool same_behaviour(struct ml_nat_behaviour a, struct ml_nat_behaviour b)
{
    return a.mapping == b.mapping && a.filtering == b.filtering &&
           a.port_preserved == b.port_preserved;
}

static bool write_file(const char *dir, const char *name, const char *text)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    return g_file_set_contents(path, text, -1, NULL);
}

static char *read_file(const char *dir, const char *name)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    char *text = NULL;
    g_file_get_contents(path, &text, NULL, NULL);
    return text;
}

/* 0 when run, 77 when skipped. */
static int check_netns(const struct ml_topology *topo)
{
    g_autofree char *dir = g_dir_make_tmp("meshlab-nat-XXXXXX", NULL);
    CHECK(dir != NULL);
    if (!dir)
        return 0;
    struct ml_port ports[ML_PORTS_MAX];
    size_t n_ports = ml_dataplane_ports(topo, ports);
    g_autofree char *fw = ml_nft_firewall(ports, n_ports);
    g_autofree char *id = g_strdup_printf("%d", (int)getpid());
    g_autofree char *inside_ns = g_strdup_printf("mlt-in-%s", id);
    g_autofree char *setup = ml_nat_setup_script_in(topo, 1, inside_ns);
    CHECK(write_file(dir, "fw.nft", fw) && write_file(dir, "setup.sh", setup) &&
          write_file(dir, "hub.py", ml_nat_probe_hub_script()) &&
          write_file(dir, "client.py", ml_nat_probe_client_script()));
    GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
    const char *fixed[] = {"bash", "tests/nat_netns.sh", dir, id, "192.0.2.10",
                           HUB_A2, "192.0.2.11"};
    for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
        g_ptr_array_add(argv, g_strdup(fixed[i]));
    for (int t = ML_NAT_NONE; t < ML_NAT_TYPES; t++) {
        g_autofree char *rules = ml_nat_ruleset(topo, 1, t);
        g_autofree char *name = g_strdup_printf("%s.nft", ml_nat_type_name(t));
        CHECK(write_file(dir, name, rules));
        g_ptr_array_add(argv, g_strdup(ml_nat_type_name(t)));
    }
    g_ptr_array_add(argv, NULL);
    int status = -1;
    g_autoptr(GError) err = NULL;
    CHECK(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
                       NULL, &status, &err));
    g_ptr_array_free(argv, TRUE);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    int ret = 0;
    if (rc == 77) {
        ret = 77;
    } else {
        CHECK(rc == 0);
        for (int t = ML_NAT_NONE; t < ML_NAT_TYPES; t++) {
            g_autofree char *name = g_strdup_printf("%s.out", ml_nat_type_name(t));
            g_autofree char *out = read_file(dir, name);
            g_autoptr(GString) seen = g_string_new(NULL);
            struct ml_nat_behaviour b = parse_ok(out, seen);
            struct ml_nat_behaviour want = ml_nat_expected(t);
            bool as_configured = same_behaviour(b, want);
            CHECK(as_configured);
            if (!as_configured)
                fprintf(stderr, "%s behaves as mapping %s, filtering %s, port %s: %s\n",
                        ml_nat_type_name(t), ml_nat_dependence_name(b.mapping),
                        ml_nat_dependence_name(b.filtering),
                        b.port_preserved ? "preserved" : "not preserved", seen->str);
        }
        /* The dataplanes' transports get through the firewall's forward chain. */
        g_autofree char *transport = read_file(dir, "transport.out");
        g_autoptr(GString) seen = g_string_new(NULL);
        struct ml_nat_behaviour b = parse_ok(transport, seen);
        CHECK(same_behaviour(b, ml_nat_expected(ML_NAT_PORT_RESTRICTED_CONE)));
        CHECK(strstr(seen->str, "mapped 172.16.11.2:4242 to 192.0.2.11:4242") != NULL);
    }
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
    CHECK(system(rm) == 0);
    return ret;
}

int main(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_load("topologies/dataplanes.yaml", &err);
    CHECK(topo != NULL);
    if (!topo)
        return check_finish();
    inet_pton(AF_INET, HUB_A2, &topo->nodes[topo->hub].second_address);
    if (check_netns(topo) == 77 && check_failed == 0) {
        printf("skip: the NAT types on a real kernel need root and network namespaces\n");
        return 77;
    }
    return check_finish();
}
