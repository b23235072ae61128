/* The controller (core/controller.h): its id, the UUIDs that carry it, and a teardown that removes
 * only its own objects on libvirt's test:///default (audit round 4, finding 5). A second
 * controller is this machine with another state directory: its objects are made by the same code
 * with MESHLAB_STATE_DIR pointing elsewhere. */
#include "check.h"
#include "fixtures.h"

#include <libvirt/libvirt.h>
#include <stdlib.h>

#include "core/controller.h"
#include "core/util.h"
#include "topology/plan.h"
#include "topology/topology.h"
#include "virt/virt.h"
#include "virt/virt_xml.h"

static void test_ids(void)
{
    setenv("MESHLAB_STATE_DIR", "/var/lib/meshlab", 1);
    g_autofree char *a = g_strdup(ml_controller_id());
    CHECK(strlen(a) == ML_CONTROLLER_ID_LEN && strspn(a, "0123456789abcdef") == strlen(a));
    CHECK_STR(ml_controller_id(), a);
    /* The same directory spelt another way is the same controller. */
    setenv("MESHLAB_STATE_DIR", "/var/lib/../lib/meshlab/", 1);
    CHECK_STR(ml_controller_id(), a);
    setenv("MESHLAB_STATE_DIR", "/srv/other-meshlab", 1);
    CHECK(strcmp(ml_controller_id(), a) != 0);
    CHECK(strstr(ml_controller_words(), "state directory /srv/other-meshlab") != NULL);

    char u1[37], u2[37], u3[37];
    ml_controller_uuid("meshlab network meshlab-x", u1);
    ml_controller_uuid("meshlab network meshlab-x", u2);
    ml_controller_uuid("meshlab network meshlab-y", u3);
    CHECK_STR(u1, u2);
    CHECK(strcmp(u1, u3) != 0);
    CHECK(u1[14] == '8' && strchr("89ab", u1[19]));
    CHECK(ml_controller_owns(u1) && ml_controller_owns(u3));
    char id[ML_CONTROLLER_ID_LEN + 1];
    CHECK(ml_controller_of_uuid(u1, id) && !strcmp(id, ml_controller_id()));
    /* libvirt accepts it as a UUID. */
    unsigned char raw[VIR_UUID_BUFLEN];
    virConnectPtr conn = virConnectOpen("test:///default");
    g_autofree char *xml = g_strdup_printf("<network><name>u</name><uuid>%s</uuid></network>", u1);
    virNetworkPtr n = conn ? virNetworkDefineXML(conn, xml) : NULL;
    CHECK(n && virNetworkGetUUID(n, raw) == 0);
    if (n)
        virNetworkFree(n);
    if (conn)
        virConnectClose(conn);
    setenv("MESHLAB_STATE_DIR", "/var/lib/meshlab", 1);
    CHECK(!ml_controller_owns(u1));
    /* A UUID of no controller: random (version 4), or made by hand. */
    CHECK(!ml_controller_of_uuid("ea86ac56-4985-40ac-8655-543ed8137a9f", id));
    CHECK(!ml_controller_of_uuid("not-a-uuid", id));
    CHECK(!ml_controller_of_uuid(NULL, id));
}

/* The lab's network, pool and guests on conn, made as up makes them, by the controller of state
 * directory state. The pool's directory is this controller's (as on a shared remote host, where
 * every controller's meshlab puts it in one place). */
static void make_lab(virConnectPtr conn, const struct ml_plan *plan, const char *state,
                     const char *pool_dir)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *mine = g_strdup(ml_state_dir());
    setenv("MESHLAB_STATE_DIR", state, 1);
    struct ml_plan_host h = plan->hosts[0];
    h.pool_dir = (char *)pool_dir;
    CHECK(ml_virt_define_network(conn, &h, 0, &err));
    CHECK(ml_virt_define_pool(conn, &h, &err));
    for (size_t k = 0; k < plan->n_guests; k++) {
        g_autofree char *xml = fixture_test_domain_xml(plan, k);
        virDomainPtr d = ml_virt_define_domain(conn, plan->guests[k].domain, xml, &err);
        CHECK(d != NULL);
        if (d)
            virDomainFree(d);
    }
    setenv("MESHLAB_STATE_DIR", mine, 1);
}

static void collect(const char *what, void *opaque)
{
    g_ptr_array_add(opaque, g_strdup(what));
}

static void test_teardown_own_only(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_load("topologies/three-guest.yaml", &err);
    CHECK(topo != NULL);
    if (!topo)
        return;
    g_autofree char *dir = g_dir_make_tmp("meshlab-test-controller-XXXXXX", NULL);
    g_autofree char *state = g_build_filename(dir, "state", NULL);
    g_autofree char *other = g_build_filename(dir, "other-state", NULL);
    setenv("MESHLAB_STATE_DIR", state, 1);
    g_autoptr(MlPlan) plan = ml_plan_new(topo, "20261204-120000-aaaaaa");
    g_autofree char *pool_dir = ml_lab_pool_dir(topo->name);
    virConnectPtr conn = ml_virt_connect("test:///default", &err);
    CHECK(conn != NULL);
    if (!conn)
        return;

    /* Another controller's lab of the same name: listed as foreign, whose words and run said,
     * and left by teardown, which says so; nothing of it goes. */
    make_lab(conn, plan, other, pool_dir);
    g_autoptr(GPtrArray) foreign = ml_virt_lab_foreign(conn, topo->name);
    CHECK(foreign->len == 5); /* three domains, the network, the pool */
    g_autofree char *other_words = NULL;
    {
        setenv("MESHLAB_STATE_DIR", other, 1);
        other_words = g_strdup(ml_controller_words());
        setenv("MESHLAB_STATE_DIR", state, 1);
    }
    bool named = foreign->len > 0;
    for (guint i = 0; i < foreign->len; i++) {
        const char *line = g_ptr_array_index(foreign, i);
        if (g_str_has_prefix(line, "domain "))
            named &= strstr(line, other_words) && strstr(line, "run 20261204-120000-aaaaaa");
    }
    CHECK(named);
    g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
    CHECK(ml_virt_teardown(conn, topo->name, collect, lines, &err) < 0);
    CHECK(lines->len == 0);
    CHECK(err && strstr(err->message, "not this controller's") &&
          strstr(err->message, "down --foreign three-guest"));
    g_clear_error(&err);
    virDomainPtr still = virDomainLookupByName(conn, plan->guests[0].domain);
    virNetworkPtr still_net = virNetworkLookupByName(conn, plan->hosts[0].network);
    virStoragePoolPtr still_pool = virStoragePoolLookupByName(conn, plan->hosts[0].pool);
    CHECK(still && still_net && still_pool);
    if (still)
        virDomainFree(still);
    if (still_net)
        virNetworkFree(still_net);
    if (still_pool)
        virStoragePoolFree(still_pool);

    /* --foreign removes it all. */
    CHECK(ml_virt_teardown_foreign(conn, topo->name, collect, lines, &err) == 5);
    CHECK(lines->len == 5);

    /* This controller's own lab: nothing foreign, and teardown removes it. */
    make_lab(conn, plan, state, pool_dir);
    g_autoptr(GPtrArray) none = ml_virt_lab_foreign(conn, topo->name);
    CHECK(none->len == 0);
    CHECK(ml_virt_teardown(conn, topo->name, NULL, NULL, &err) == 5);
    virConnectClose(conn);
    g_rmdir(dir);
}

int main(void)
{
    test_ids();
    test_teardown_own_only();
    return check_finish();
}
