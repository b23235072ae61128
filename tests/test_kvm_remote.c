/* The remote KVM probe's domain (virt/kvm_remote.h): KVM on the host's CPU, the kernel by the
 * host's path with panic=-1, no disk and no network, its console logged into the lab's pool,
 * ended by the host on the panic's reboot, and tagged with the lab so that down finds a
 * leftover; libvirt's parser in the test driver accepts it. */
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <string.h>

#include "check.h"
#include "topology/name.h"
#include "topology/plan.h"
#include "topology/topology.h"
#include "virt/kvm_remote.h"
#include "virt/virt.h"

static void quiet(void *opaque, virErrorPtr e)
{
    (void)opaque;
    (void)e;
}

int main(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_load("topologies/three-guest.yaml", &err);
    CHECK(topo != NULL);
    if (!topo)
        return check_finish();
    g_autoptr(MlPlan) plan = ml_plan_new(topo, "20261204-120000-abcdef");
    g_autofree char *name = ml_kvm_probe_domain(topo->name);
    CHECK_STR(name, "meshlab-three-guest.kvm-probe");
    g_autofree char *xml =
        ml_kvm_probe_xml(plan, "/var/lib/libvirt/images/meshlab.images/kernel-0123",
                         "/var/lib/libvirt/images/meshlab-three-guest/" ML_KVM_PROBE_LOG);
    CHECK(strstr(xml, "<domain type='kvm'>") != NULL);
    CHECK(strstr(xml, "<kernel>/var/lib/libvirt/images/meshlab.images/kernel-0123</kernel>"));
    CHECK(strstr(xml, "panic=-1") && strstr(xml, "<on_reboot>destroy</on_reboot>") &&
          strstr(xml, "<on_crash>destroy</on_crash>"));
    CHECK(strstr(xml, "<cpu mode='host-passthrough'/>") != NULL);
    CHECK(!strstr(xml, "<disk") && !strstr(xml, "<interface"));
    CHECK(strstr(xml, "<log file='/var/lib/libvirt/images/meshlab-three-guest/"
                      "kvm-probe-console.log' append='off'/>"));
    /* The log is a pool file, so that down removes one a killed up left. */
    CHECK(ml_name_is_pool_file(ML_KVM_PROBE_LOG));

    /* libvirt reads it, and meshlab's tag is found on it. */
    virSetErrorFunc(NULL, quiet);
    virConnectPtr conn = virConnectOpen("test:///default");
    CHECK(conn != NULL);
    if (conn) {
        /* The test driver's own domain type, as fixture_test_domain_xml makes it. */
        g_autoptr(GString) test_xml = g_string_new(xml);
        g_string_replace(test_xml, "<domain type='kvm'>", "<domain type='test'>", 1);
        virDomainPtr dom = virDomainDefineXML(conn, test_xml->str);
        CHECK(dom != NULL);
        g_autofree char *lab = NULL, *run = NULL;
        CHECK(dom && ml_virt_domain_tag(dom, &lab, &run));
        CHECK_STR(lab, "three-guest");
        CHECK_STR(run, "20261204-120000-abcdef");
        if (dom) {
            virDomainUndefine(dom);
            virDomainFree(dom);
        }
        virConnectClose(conn);
    }
    return check_finish();
}
