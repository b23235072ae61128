/* Define and teardown against libvirt's test:///default driver: objects carry
 * their tag, teardown finds them by it, leaves foreign objects alone, and is
 * idempotent. */
#include "check.h"
#include "fixtures.h"

#include <libvirt/libvirt.h>
#include <unistd.h>

#include "topology/plan.h"
#include "topology/topology.h"
#include "core/util.h"
#include "virt/virt.h"
#include "virt/virt_xml.h"

static void count(const char *what, void *opaque)
{
    (void)what;
    (*(int *)opaque)++;
}

static void collect(const char *what, void *opaque)
{
    g_ptr_array_add(opaque, g_strdup(what));
}

/* One hub and 8 clients, defined in reverse and running: teardown stops all of them at once
 * and reports every domain, in the order of their names, before the network and the pool. */
static void test_nine_guests(virConnectPtr conn)
{
    GString *yaml =
        g_string_new("name: wide\nimage:\n  use: debian-12\nbridge:\n"
                     "  subnet: 192.0.2.0/24\nnodes:\n"
                     "  - {name: hub, address: 192.0.2.10, tunnel_address: 10.8.0.1}\n");
    for (unsigned i = 1; i <= 8; i++)
        g_string_append_printf(yaml,
                               "  - {name: c%u, address: 192.0.2.%u, tunnel_address: 10.8.0.%u}\n",
                               i, 10 + i, 1 + i);
    g_string_append(yaml, "wireguard: {subnet: 10.8.0.0/24, hub: hub}\n"
                          "measure: {client: c1, server: c2, paths: [plain]}\n");
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_parse("wide.yaml", yaml->str, yaml->len, &err);
    g_string_free(yaml, TRUE);
    CHECK(topo != NULL && topo->n_nodes == 9);
    if (!topo)
        return;
    g_autoptr(MlPlan) plan = ml_plan_new(topo, "20261130-120000-abcdef");
    CHECK(ml_virt_define_network(conn, &plan->hosts[0], 0, &err));
    CHECK(ml_virt_define_pool(conn, &plan->hosts[0], &err));
    for (size_t k = plan->n_guests; k-- > 0;) {
        g_autofree char *xml = fixture_test_domain_xml(plan, k);
        virDomainPtr d = ml_virt_define_domain(conn, plan->guests[k].domain, xml, &err);
        CHECK(d != NULL);
        if (d) {
            if (virDomainIsActive(d) != 1)
                CHECK(virDomainCreate(d) == 0);
            virDomainFree(d);
        }
    }
    g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
    int n = ml_virt_teardown(conn, "wide", collect, lines, &err);
    if (n != 11)
        fprintf(stderr, "teardown: %d, %s\n", n, err ? err->message : "");
    CHECK(n == 11); /* nine domains, the network, the pool */
    static const char *const want[] = {
        "domain meshlab-wide.c1", "domain meshlab-wide.c2",   "domain meshlab-wide.c3",
        "domain meshlab-wide.c4", "domain meshlab-wide.c5",   "domain meshlab-wide.c6",
        "domain meshlab-wide.c7", "domain meshlab-wide.c8",   "domain meshlab-wide.hub",
        "network meshlab-wide",   "storage pool meshlab-wide"};
    CHECK(lines->len == G_N_ELEMENTS(want));
    for (guint i = 0; i < lines->len && i < G_N_ELEMENTS(want); i++)
        CHECK_STR(g_ptr_array_index(lines, i), want[i]);
    for (size_t i = 0; i < plan->n_guests; i++) {
        virDomainPtr gone = virDomainLookupByName(conn, plan->guests[i].domain);
        CHECK(gone == NULL);
        if (gone)
            virDomainFree(gone);
    }
}

int main(void)
{
    /* Names and pool paths derive from the state directory: keep it away from the host's. */
    g_autofree char *state = g_dir_make_tmp("meshlab-test-state-XXXXXX", NULL);
    g_setenv("MESHLAB_STATE_DIR", state, TRUE);
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_load("topologies/three-guest.yaml", &err);
    CHECK(topo != NULL);
    if (!topo)
        return check_finish();
    g_autoptr(MlPlan) plan = ml_plan_new(topo, "20261129-120000-abcdef");
    virConnectPtr conn = ml_virt_connect("test:///default", &err);
    CHECK(conn != NULL);
    if (!conn)
        return check_finish();

    CHECK(ml_virt_define_network(conn, &plan->hosts[0], 0, &err));
    CHECK(ml_virt_define_pool(conn, &plan->hosts[0], &err));
    for (size_t i = 0; i < plan->n_guests; i++) {
        g_autofree char *xml = fixture_test_domain_xml(plan, i);
        virDomainPtr d = ml_virt_define_domain(conn, plan->guests[i].domain, xml, &err);
        CHECK(d != NULL);
        if (d) {
            g_autofree char *lab = NULL, *run = NULL;
            CHECK(ml_virt_domain_tag(d, &lab, &run));
            CHECK_STR(lab, "three-guest");
            CHECK_STR(run, "20261129-120000-abcdef");
            virDomainFree(d);
        }
    }
    /* A domain named like the lab's but without its tag is not the lab's. */
    virDomainPtr foreign =
        virDomainDefineXML(conn, "<domain type='test'><name>meshlab-three-guest.impostor</name>"
                                 "<memory>1024</memory><os><type>hvm</type></os></domain>");
    CHECK(foreign != NULL);

    g_autoptr(GPtrArray) labs = ml_virt_list_labs(conn);
    bool found = false;
    for (guint i = 0; i < labs->len; i++)
        found |= !strcmp(g_ptr_array_index(labs, i), "three-guest");
    CHECK(found);

    int removed = 0;
    int n = ml_virt_teardown(conn, "three-guest", count, &removed, &err);
    if (n != 5)
        fprintf(stderr, "teardown: %d, %s\n", n, err ? err->message : "");
    CHECK(n == 5); /* three domains, the network, the pool */
    CHECK(removed == n);
    CHECK(virDomainLookupByName(conn, plan->guests[0].domain) == NULL);
    CHECK(virNetworkLookupByName(conn, plan->hosts[0].network) == NULL);
    CHECK(virStoragePoolLookupByName(conn, plan->hosts[0].pool) == NULL);
    virDomainPtr still = virDomainLookupByName(conn, "meshlab-three-guest.impostor");
    CHECK(still != NULL);
    if (still)
        virDomainFree(still);
    virNetworkPtr def = virNetworkLookupByName(conn, "default");
    CHECK(def != NULL);
    if (def)
        virNetworkFree(def);

    removed = 0;
    CHECK(ml_virt_teardown(conn, "three-guest", count, &removed, &err) == 0);
    CHECK(removed == 0);
    /* A network or pool merely named like a lab's is not the lab's: down leaves it alone. */
    virNetworkPtr fnet = virNetworkDefineXML(
        conn, "<network><name>meshlab-other</name><bridge name='virbr9'/></network>");
    virStoragePoolPtr fpool = virStoragePoolDefineXML(
        conn,
        "<pool type='dir'><name>meshlab-other</name><target><path>/srv/images</path>"
        "</target></pool>",
        0);
    CHECK(fnet && fpool);
    g_clear_error(&err);
    CHECK(ml_virt_teardown(conn, "other", NULL, NULL, &err) < 0);
    CHECK(err && strstr(err->message, "not meshlab's"));
    virNetworkPtr still_net = virNetworkLookupByName(conn, "meshlab-other");
    virStoragePoolPtr still_pool = virStoragePoolLookupByName(conn, "meshlab-other");
    CHECK(still_net && still_pool);
    if (still_net)
        virNetworkFree(still_net);
    if (still_pool)
        virStoragePoolFree(still_pool);
    if (fnet) {
        virNetworkUndefine(fnet);
        virNetworkFree(fnet);
    }
    if (fpool) {
        virStoragePoolUndefine(fpool);
        virStoragePoolFree(fpool);
    }

    if (foreign) {
        virDomainUndefine(foreign);
        virDomainFree(foreign);
    }
    test_nine_guests(conn);
    virConnectClose(conn);
    rmdir(state);
    return check_finish();
}
