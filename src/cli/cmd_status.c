#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <libvirt/virterror.h>

#include "cli/commands.h"
#include "cli/print.h"
#include "virt/lab.h"
#include "topology/plan.h"
#include "core/util.h"
#include "results/json.h"
#include "virt/virt.h"

static const char status_usage[] =
    "Usage: meshlab status [--json]\n\n"
    "Lists the labs that have objects on this host (found by their tags, not by any\n"
    "file), with each guest's state and the lab's run id and run directory.\n\n"
    "  -j, --json  print one JSON object instead: {\"uri\", \"labs\": [{\"name\", \"run_id\",\n"
    "              \"run_dir\", \"domains\": [{\"name\", \"state\"}], \"network\": {\"name\",\n"
    "              \"active\"}, \"pool\": {\"name\", \"volumes\"}}]}; a missing object is null\n";

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

static struct json_object *domains_of(virConnectPtr conn, const char *lab)
{
    struct json_object *list = json_object_new_array();
    virDomainPtr *doms = NULL;
    int n = virConnectListAllDomains(conn, &doms, 0);
    for (int d = 0; d < n; d++) {
        g_autofree char *tag = NULL;
        g_autofree char *run = NULL;
        if (ml_virt_domain_tag(doms[d], &tag, &run) && !strcmp(tag, lab)) {
            int st = 0, reason = 0;
            virDomainGetState(doms[d], &st, &reason, 0);
            struct json_object *dom = json_object_new_object();
            json_object_object_add(dom, "name", json_object_new_string(virDomainGetName(doms[d])));
            json_object_object_add(dom, "state", json_object_new_string(state_name(st)));
            json_object_array_add(list, dom);
        }
        virDomainFree(doms[d]);
    }
    free(doms);
    return list;
}

static struct json_object *network_of(virConnectPtr conn, const char *lab)
{
    g_autofree char *name = ml_plan_network_name(lab);
    virNetworkPtr nw = virNetworkLookupByName(conn, name);
    if (!nw)
        return NULL;
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(name));
    json_object_object_add(o, "active", json_object_new_boolean(virNetworkIsActive(nw) == 1));
    virNetworkFree(nw);
    return o;
}

static struct json_object *pool_of(virConnectPtr conn, const char *lab)
{
    g_autofree char *name = ml_plan_pool_name(lab);
    virStoragePoolPtr p = virStoragePoolLookupByName(conn, name);
    if (!p)
        return NULL;
    virStoragePoolRefresh(p, 0);
    int nv = virStoragePoolNumOfVolumes(p);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(name));
    json_object_object_add(o, "volumes", json_object_new_int(nv < 0 ? 0 : nv));
    virStoragePoolFree(p);
    return o;
}

static struct json_object *state_string(struct json_object *state, const char *key)
{
    const char *v = ml_j_str(state, key);
    return v ? json_object_new_string(v) : NULL;
}

struct json_object *cmd_status_collect(virConnectPtr conn, const char *uri)
{
    struct json_object *doc = json_object_new_object();
    json_object_object_add(doc, "uri", json_object_new_string(uri));
    struct json_object *list = json_object_new_array();
    g_autoptr(GPtrArray) labs = ml_virt_list_labs(conn);
    for (guint i = 0; i < labs->len; i++) {
        const char *name = g_ptr_array_index(labs, i);
        struct json_object *state = ml_lab_state_read(name);
        struct json_object *lab = json_object_new_object();
        json_object_object_add(lab, "name", json_object_new_string(name));
        json_object_object_add(lab, "run_id", state_string(state, "run_id"));
        json_object_object_add(lab, "run_dir", state_string(state, "run_dir"));
        json_object_put(state);
        json_object_object_add(lab, "domains", domains_of(conn, name));
        json_object_object_add(lab, "network", network_of(conn, name));
        json_object_object_add(lab, "pool", pool_of(conn, name));
        json_object_array_add(list, lab);
    }
    json_object_object_add(doc, "labs", list);
    virResetLastError();
    return doc;
}

void cmd_status_text(FILE *f, struct json_object *doc)
{
    struct json_object *labs = ml_j_get(doc, "labs");
    size_t n = labs ? json_object_array_length(labs) : 0;
    if (n == 0)
        fprintf(f, "no meshlab labs on %s\n", ml_j_str(doc, "uri"));
    for (size_t i = 0; i < n; i++) {
        struct json_object *lab = json_object_array_get_idx(labs, i);
        fprintf(f, "lab %s", ml_j_str(lab, "name"));
        if (ml_j_str(lab, "run_id"))
            fprintf(f, "  run %s", ml_j_str(lab, "run_id"));
        if (ml_j_str(lab, "run_dir"))
            fprintf(f, "  dir %s", ml_j_str(lab, "run_dir"));
        fprintf(f, "\n");
        struct json_object *doms = ml_j_get(lab, "domains");
        for (size_t d = 0; doms && d < json_object_array_length(doms); d++) {
            struct json_object *dom = json_object_array_get_idx(doms, d);
            fprintf(f, "  domain  %-32s %s\n", ml_j_str(dom, "name"), ml_j_str(dom, "state"));
        }
        struct json_object *net = ml_j_get(lab, "network");
        if (net)
            fprintf(f, "  network %-32s %s\n", ml_j_str(net, "name"),
                    ml_j_bool(net, "active") ? "active" : "inactive");
        struct json_object *pool = ml_j_get(lab, "pool");
        if (pool)
            fprintf(f, "  pool    %-32s %d volumes\n", ml_j_str(pool, "name"),
                    (int)ml_j_int(pool, "volumes"));
    }
}

int cmd_status_main(int argc, char **argv)
{
    int status;
    enum cmd_format format;
    if (!cmd_print_args(argc, argv, status_usage, 0, &format, &status))
        return status;
    g_autoptr(GError) err = NULL;
    virConnectPtr conn = ml_virt_connect(ml_virt_uri(), &err);
    if (!conn)
        return cmd_fail(err);
    struct json_object *doc = cmd_status_collect(conn, ml_virt_uri());
    virConnectClose(conn);
    cmd_print(stdout, format, doc, cmd_status_text);
    json_object_put(doc);
    return ML_EXIT_OK;
}
