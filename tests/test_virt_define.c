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

    CHECK(ml_virt_define_network(conn, plan, &err));
    CHECK(ml_virt_define_pool(conn, plan, &err));
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
    virDomainPtr foreign = virDomainDefineXML(
        conn, "<domain type='test'><name>meshlab-three-guest.impostor</name>"
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
    CHECK(n == 5);  /* three domains, the network, the pool */
    CHECK(removed == n);
    CHECK(virDomainLookupByName(conn, plan->guests[0].domain) == NULL);
    CHECK(virNetworkLookupByName(conn, plan->network) == NULL);
    CHECK(virStoragePoolLookupByName(conn, plan->pool) == NULL);
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
        conn, "<pool type='dir'><name>meshlab-other</name><target><path>/srv/images</path>"
              "</target></pool>", 0);
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
    virConnectClose(conn);
    rmdir(state);
    return check_finish();
}
