/* Every ruleset meshlab loads into a guest (the firewall, each path's policy on each node, and
 * each NAT type on each client) through the real nft's check mode (`nft -c -f FILE`: parsed and
 * sent to the kernel in a transaction that is aborted), inside a throwaway network namespace so the
 * host's own ruleset is never touched. Needs root and nft (Debian package nftables); skips without
 * them. */
#include "check.h"

#include <unistd.h>

#include "guestnet/nat.h"
#include "guestnet/nft.h"
#include "dataplanes/dataplane.h"
#include "topology/topology.h"
#include "core/util.h"

static char *netns;

/* Runs argv; true when it exits 0. Its stderr goes to *ret_err. */
static bool run(const char *const *argv, char **ret_err)
{
    int status = -1;
    g_autoptr(GError) e = NULL;
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                      NULL, NULL, NULL, ret_err, &status, &e))
        return false;
    return g_spawn_check_wait_status(status, NULL);
}

static bool nft_check(const char *nft, const char *what, const char *ruleset)
{
    g_autofree char *file = NULL;
    int fd = g_file_open_tmp("meshlab-nft-XXXXXX.nft", &file, NULL);
    if (fd < 0)
        return false;
    close(fd);
    g_file_set_contents(file, ruleset, -1, NULL);
    const char *argv[] = {"ip", "netns", "exec", netns, nft, "-c", "-f", file, NULL};
    g_autofree char *err = NULL;
    bool ok = run(argv, &err);
    if (!ok && what)
        fprintf(stderr, "nft -c rejected %s:\n%s\n--- ruleset\n%s\n", what, err ? err : "",
                ruleset);
    unlink(file);
    return ok;
}

static void check_topology(const char *nft, const struct ml_topology *topo)
{
    struct ml_port ports[ML_PORTS_MAX];
    size_t n = ml_dataplane_ports(topo, ports);
    g_autofree char *fw = ml_nft_firewall(ports, n);
    CHECK(nft_check(nft, "the firewall", fw));
    const struct ml_path_ops *ops;
    ML_FOR_EACH_PATH(k, ops)
    {
        for (size_t i = 0; i < topo->n_nodes; i++) {
            g_autofree char *policy = ml_nft_policy(topo, i, ops->policy, ports, n);
            g_autofree char *both = g_strconcat(fw, policy, NULL);
            g_autofree char *what = g_strdup_printf("%s on %s", ops->name, topo->nodes[i].name);
            CHECK(nft_check(nft, what, both));
        }
    }
    /* Each NAT type on each client, loaded next to the firewall as on the guests. */
    for (size_t i = 0; i < topo->n_nodes; i++) {
        if (i == topo->hub)
            continue;
        for (int t = 0; t < ML_NAT_TYPES; t++) {
            g_autofree char *nat = ml_nat_ruleset(topo, i, t);
            g_autofree char *both = g_strconcat(fw, nat, NULL);
            g_autofree char *what =
                g_strdup_printf("the %s NAT on %s", ml_nat_type_name(t), topo->nodes[i].name);
            CHECK(nft_check(nft, what, both));
        }
    }
}

int main(void)
{
    g_autofree char *nft = g_find_program_in_path("nft");
    if (!nft && g_file_test("/usr/sbin/nft", G_FILE_TEST_IS_EXECUTABLE))
        nft = g_strdup("/usr/sbin/nft");
    if (!nft) {
        printf("skip: nft is not installed (Debian package nftables)\n");
        return 77;
    }
    if (geteuid() != 0) {
        printf("skip: nft --check needs root (a network namespace and the kernel's nftables)\n");
        return 77;
    }
    netns = g_strdup_printf("meshlab-nftcheck-%d", (int)getpid());
    const char *add[] = {"ip", "netns", "add", netns, NULL};
    if (!run(add, NULL)) {
        printf("skip: cannot create a network namespace here ('ip netns add' failed)\n");
        return 77;
    }
    /* The check is not vacuous: nft refuses a broken ruleset. */
    CHECK(!nft_check(nft, NULL, "table inet t {\n    chain c {\n        udp dport { } drop\n"));

    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_load("topologies/three-guest.yaml", &err);
    CHECK(topo != NULL);
    if (topo)
        check_topology(nft, topo);
    /* A topology with its own WireGuard port. */
    g_autofree char *text = NULL;
    CHECK(g_file_get_contents("topologies/three-guest.yaml", &text, NULL, NULL));
    GString *yaml = g_string_new(text);
    g_string_replace(yaml, "listen_port: 51820", "listen_port: 51999", 1);
    g_autoptr(MlTopology) other = ml_topology_parse("other.yaml", yaml->str, yaml->len, &err);
    g_string_free(yaml, TRUE);
    CHECK(other != NULL);
    if (other)
        check_topology(nft, other);

    const char *del[] = {"ip", "netns", "delete", netns, NULL};
    CHECK(run(del, NULL));
    g_free(netns);
    return check_finish();
}
