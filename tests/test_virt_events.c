/* The libvirt connection's guards against a hung daemon: the event loop that keepalives need,
 * started once for the process, and a connection that still opens on a driver with no
 * keepalive (test:///default); the agent's response bound accepted where there is no agent. */
#include "check.h"

#include <libvirt/virterror.h>

#include "core/util.h"
#include "virt/agent.h"
#include "virt/virt.h"

int main(void)
{
    g_autoptr(GError) err = NULL;
    CHECK(ml_virt_closed_why() == NULL);
    virConnectPtr conn = ml_virt_connect("test:///default", &err);
    CHECK(conn != NULL && err == NULL);
    /* The loop was registered before the connection: registering again would be too late. */
    CHECK(ml_virt_events_start(NULL));
    virConnectPtr again = ml_virt_connect("test:///default", &err);
    CHECK(again != NULL && err == NULL);
    if (conn) {
        virDomainPtr dom = virDomainLookupByName(conn, "test");
        CHECK(dom != NULL);
        /* test:///default has no agent, so nothing to bound; a real driver gets 10 s. */
        CHECK(dom && ml_agent_bound(dom, &err) && err == NULL);
        if (dom)
            virDomainFree(dom);
        virConnectClose(conn);
    }
    if (again)
        virConnectClose(again);
    /* Closing them on purpose is no hung daemon. */
    CHECK(ml_virt_closed_why() == NULL);
    return check_finish();
}
