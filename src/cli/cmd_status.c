#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <libvirt/virterror.h>

#include "cli/commands.h"
#include "virt/lab.h"
#include "topology/plan.h"
#include "core/util.h"
#include "virt/virt.h"

static const char status_usage[] =
    "Usage: meshlab status\n\n"
    "Lists the labs that have objects on this host (found by their tags, not by any\n"
    "file), with each guest's state and the lab's run id and run directory.\n";

static const char *state_name(int st)
{
    switch (st) {
    case VIR_DOMAIN_RUNNING:
        return "running";
    case VIR_DOMAIN_PAUSED:
        return "paused";
    case VIR_DOMAIN_SHUTOFF:
        return "shut off";
    case VIR_DOMAIN_CRASHED:
        return "crashed";
    default:
        return "other";
    }
}

int cmd_status_main(int argc, char **argv)
{
    int status;
    if (!cmd_simple_args(argc, argv, status_usage, 0, &status))
        return status;
    g_autoptr(GError) err = NULL;
    virConnectPtr conn = ml_virt_connect(ml_virt_uri(), &err);
    if (!conn)
        return cmd_fail(err);
    g_autoptr(GPtrArray) labs = ml_virt_list_labs(conn);
    if (labs->len == 0)
        printf("no meshlab labs on %s\n", ml_virt_uri());
    for (guint i = 0; i < labs->len; i++) {
        const char *lab = g_ptr_array_index(labs, i);
        struct json_object *state = ml_lab_state_read(lab);
        struct json_object *v = NULL;
        printf("lab %s", lab);
        if (state && json_object_object_get_ex(state, "run_id", &v))
            printf("  run %s", json_object_get_string(v));
        if (state && json_object_object_get_ex(state, "run_dir", &v))
            printf("  dir %s", json_object_get_string(v));
        printf("\n");
        json_object_put(state);
        g_autofree char *prefix = ml_plan_domain_prefix(lab);
        virDomainPtr *doms = NULL;
        int n = virConnectListAllDomains(conn, &doms, 0);
        for (int d = 0; d < n; d++) {
            g_autofree char *tag = NULL;
            g_autofree char *run = NULL;
            if (ml_virt_domain_tag(doms[d], &tag, &run) && !strcmp(tag, lab)) {
                int st = 0, reason = 0;
                virDomainGetState(doms[d], &st, &reason, 0);
                printf("  domain  %-32s %s\n", virDomainGetName(doms[d]), state_name(st));
            }
            virDomainFree(doms[d]);
        }
        free(doms);
        g_autofree char *net = ml_plan_network_name(lab);
        virNetworkPtr nw = virNetworkLookupByName(conn, net);
        if (nw) {
            printf("  network %-32s %s\n", net,
                   virNetworkIsActive(nw) == 1 ? "active" : "inactive");
            virNetworkFree(nw);
        }
        g_autofree char *pool = ml_plan_pool_name(lab);
        virStoragePoolPtr p = virStoragePoolLookupByName(conn, pool);
        if (p) {
            virStoragePoolRefresh(p, 0);
            int nv = virStoragePoolNumOfVolumes(p);
            printf("  pool    %-32s %d volumes\n", pool, nv < 0 ? 0 : nv);
            virStoragePoolFree(p);
        }
    }
    virResetLastError();
    virConnectClose(conn);
    return ML_EXIT_OK;
}
