#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <libvirt/virterror.h>

#include "cli/commands.h"
#include "core/controller.h"
#include "cli/print.h"
#include "virt/lab.h"
#include "topology/plan.h"
#include "core/util.h"
#include "results/columns.h"
#include "results/json.h"
#include "virt/virt.h"

static const char status_usage[] =
    "Usage: meshlab status [--connect URI] [--json]\n\n"
    "Lists the labs that have objects on the libvirt host (found by their tags, not by\n"
    "any file), with each guest's state and the lab's run id and run directory; then\n"
    "the labs this machine brought up on other libvirt hosts, and where. A lab of that\n"
    "name whose objects another controller made (another machine or state directory\n"
    "sharing the host) says whose they are: 'meshlab down' leaves those.\n\n"
    "  --connect URI  the libvirt host to list (default: MESHLAB_URI, or qemu:///system)\n"
    "  -j, --json  print one JSON object instead: {\"uri\", \"controller\": {\"id\", \"by\"},\n"
    "              \"labs\": [{\"name\", \"run_id\",\n"
    "              \"run_dir\", \"domains\": [{\"name\", \"state\"}], \"network\": {\"name\",\n"
    "              \"active\"}, \"pool\": {\"name\", \"volumes\"}, \"hosts\": [{\"name\", "
    "\"uri\",\n"
    "              \"nodes\"}] (a lab over several hosts only), \"foreign\": [\"what: whose\"]\n"
    "              (another controller's objects only)}], \"elsewhere\": [{\"name\",\n"
    "              \"uri\"}]}; a missing object is null\n";

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

/* One description per line of `meshlab status`: each column names its member of the JSON
 * document, how that member is made from libvirt's object (get) and how it is written in the
 * text (label, width), so --json and the text come from the same table. */

struct domain_src {
    virDomainPtr dom;
    int state;
};

static struct json_object *domain_name(const void *src)
{
    return json_object_new_string(virDomainGetName(((const struct domain_src *)src)->dom));
}

static struct json_object *domain_state(const void *src)
{
    return json_object_new_string(state_name(((const struct domain_src *)src)->state));
}

static const struct ml_column domain_columns[] = {
    {.label = "domain ", .key = "name", .width = 32, .get = domain_name},
    {.key = "state", .get = domain_state},
};

/* A network or a pool: its name, then what libvirt says of it. */
struct named_src {
    const char *name;
    virNetworkPtr net; /* a network's */
    int volumes;       /* a pool's */
};

static struct json_object *named_name(const void *src)
{
    return json_object_new_string(((const struct named_src *)src)->name);
}

static struct json_object *network_active(const void *src)
{
    return json_object_new_boolean(virNetworkIsActive(((const struct named_src *)src)->net) == 1);
}

static void put_active(GString *s, struct json_object *o, const struct ml_column *col, void *ctx)
{
    g_string_append(s, ml_j_bool(o, col->key) ? "active" : "inactive");
}

static const struct ml_column network_columns[] = {
    {.label = "network", .key = "name", .width = 32, .get = named_name},
    {.key = "active", .get = network_active, .put = put_active},
};

static struct json_object *pool_volumes(const void *src)
{
    int n = ((const struct named_src *)src)->volumes;
    return json_object_new_int(n < 0 ? 0 : n);
}

static void put_volumes(GString *s, struct json_object *o, const struct ml_column *col, void *ctx)
{
    g_string_append_printf(s, "%d volumes", (int)ml_j_int(o, col->key));
}

static const struct ml_column pool_columns[] = {
    {.label = "pool   ", .key = "name", .width = 32, .get = named_name},
    {.key = "volumes", .get = pool_volumes, .put = put_volumes},
};

/* A lab found by its tags, with what its state file says. */
struct lab_src {
    virConnectPtr conn;
    const char *name;
    struct json_object *state; /* NULL: no state file */
};

static struct json_object *lab_name(const void *src)
{
    return json_object_new_string(((const struct lab_src *)src)->name);
}

static struct json_object *state_string(struct json_object *state, const char *key)
{
    const char *v = ml_j_str(state, key);
    return v ? json_object_new_string(v) : NULL;
}

static struct json_object *lab_run_id(const void *src)
{
    return state_string(((const struct lab_src *)src)->state, "run_id");
}

static struct json_object *lab_run_dir(const void *src)
{
    return state_string(((const struct lab_src *)src)->state, "run_dir");
}

static struct json_object *lab_domains(const void *src)
{
    const struct lab_src *lab = src;
    struct json_object *list = json_object_new_array();
    virDomainPtr *doms = NULL;
    int n = virConnectListAllDomains(lab->conn, &doms, 0);
    for (int d = 0; d < n; d++) {
        g_autofree char *tag = NULL;
        g_autofree char *run = NULL;
        if (ml_virt_domain_tag(doms[d], &tag, &run) && !strcmp(tag, lab->name)) {
            struct domain_src dom = {doms[d], 0};
            int reason = 0;
            virDomainGetState(doms[d], &dom.state, &reason, 0);
            json_object_array_add(
                list, ml_columns_object(domain_columns, G_N_ELEMENTS(domain_columns), &dom));
        }
        virDomainFree(doms[d]);
    }
    free(doms);
    return list;
}

/* The name of the lab's network (pool) on this host: meshlab-LAB, or the meshlab-LAB.HOST of a
 * lab over several hosts (the first, where two "hosts" are this one libvirt); NULL: none. */
static char *own_object(const struct lab_src *lab, bool pool)
{
    g_autoptr(GPtrArray) names = ml_virt_lab_objects(lab->conn, lab->name, pool);
    return names->len ? g_strdup(g_ptr_array_index(names, 0)) : NULL;
}

static struct json_object *lab_network(const void *src)
{
    g_autofree char *name = own_object(src, false);
    if (!name)
        return NULL;
    struct named_src net = {
        .name = name, .net = virNetworkLookupByName(((const struct lab_src *)src)->conn, name)};
    if (!net.net)
        return NULL;
    struct json_object *o = ml_columns_object(network_columns, G_N_ELEMENTS(network_columns), &net);
    virNetworkFree(net.net);
    return o;
}

static struct json_object *lab_pool(const void *src)
{
    g_autofree char *name = own_object(src, true);
    if (!name)
        return NULL;
    virStoragePoolPtr p = virStoragePoolLookupByName(((const struct lab_src *)src)->conn, name);
    if (!p)
        return NULL;
    virStoragePoolRefresh(p, 0);
    struct named_src pool = {.name = name, .volumes = virStoragePoolNumOfVolumes(p)};
    virStoragePoolFree(p);
    return ml_columns_object(pool_columns, G_N_ELEMENTS(pool_columns), &pool);
}

/* A lab over several hosts: each host its state records, where, and its nodes. */
static struct json_object *host_nodes(const void *src)
{
    struct json_object *nodes = ml_j_array((struct json_object *)src, "nodes");
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < ml_j_len(nodes); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "",
                               json_object_get_string(json_object_array_get_idx(nodes, i)));
    g_autofree char *text = g_string_free(s, FALSE);
    return json_object_new_string(text);
}

static struct json_object *host_name(const void *src)
{
    return state_string((struct json_object *)src, "name");
}

static struct json_object *host_uri(const void *src)
{
    g_autofree char *shown = ml_uri_public(ml_j_str((struct json_object *)src, "uri"));
    return json_object_new_string(shown ? shown : "");
}

static const struct ml_column host_columns[] = {
    {.label = "host   ", .key = "name", .width = 12, .get = host_name},
    {.key = "uri", .width = 44, .get = host_uri},
    {.key = "nodes", .get = host_nodes},
};

static struct json_object *lab_hosts(const void *src)
{
    struct json_object *hosts = ml_j_array(((const struct lab_src *)src)->state, "hosts");
    if (!ml_j_len(hosts))
        return NULL;
    struct json_object *list = json_object_new_array();
    for (size_t i = 0; i < ml_j_len(hosts); i++)
        json_object_array_add(list, ml_columns_object(host_columns, G_N_ELEMENTS(host_columns),
                                                      json_object_array_get_idx(hosts, i)));
    return list;
}

/* What a lab holds: each member's value is an object, or an array of them, written as lines of
 * their own by the description in arg. */
struct lab_part {
    const struct ml_column *cols;
    size_t n;
};
static const struct lab_part domain_part = {domain_columns, G_N_ELEMENTS(domain_columns)};
static const struct lab_part network_part = {network_columns, G_N_ELEMENTS(network_columns)};
static const struct lab_part pool_part = {pool_columns, G_N_ELEMENTS(pool_columns)};
static const struct lab_part host_part = {host_columns, G_N_ELEMENTS(host_columns)};

static const struct ml_column lab_columns[] = {
    {.label = "lab", .key = "name", .get = lab_name},
    {.label = "run", .key = "run_id", .optional = true, .get = lab_run_id},
    {.label = "dir", .key = "run_dir", .optional = true, .get = lab_run_dir},
};

static const struct ml_column lab_parts[] = {
    {.key = "domains", .get = lab_domains, .arg = &domain_part},
    {.key = "network", .get = lab_network, .arg = &network_part},
    {.key = "pool", .get = lab_pool, .arg = &pool_part},
    {.key = "hosts", .optional = true, .get = lab_hosts, .arg = &host_part},
};

/* The host a lab's state records, when it is not this connection's; NULL when it is, or the
 * state records none. */
static const char *recorded_elsewhere(struct json_object *state, const char *here)
{
    const char *recorded = ml_j_str(state, "uri");
    return recorded && *recorded && !ml_uri_same(recorded, here) ? recorded : NULL;
}

/* A lab's state file, when it records the lab on this connection (or records no host). */
static struct json_object *state_here(const char *name, const char *here)
{
    struct json_object *state = ml_lab_state_read(name);
    if (recorded_elsewhere(state, here)) {
        json_object_put(state);
        return NULL;
    }
    return state;
}

/* The labs this machine's state files place on another libvirt host, with that host. */
static struct json_object *labs_elsewhere(const char *here)
{
    struct json_object *list = json_object_new_array();
    g_autoptr(GPtrArray) names = ml_lab_state_names();
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        struct json_object *state = ml_lab_state_read(name);
        const char *recorded = recorded_elsewhere(state, here);
        if (recorded) {
            struct json_object *o = json_object_new_object();
            g_autofree char *shown = ml_uri_public(recorded);
            json_object_object_add(o, "name", json_object_new_string(name));
            json_object_object_add(o, "uri", json_object_new_string(shown));
            json_object_array_add(list, o);
        }
        json_object_put(state);
    }
    return list;
}

struct json_object *cmd_status_collect(virConnectPtr conn, const char *uri)
{
    struct json_object *doc = json_object_new_object();
    g_autofree char *here = ml_virt_conn_uri(conn, uri);
    g_autofree char *shown = ml_uri_public(here);
    json_object_object_add(doc, "uri", json_object_new_string(shown));
    struct json_object *list = json_object_new_array();
    g_autoptr(GPtrArray) labs = ml_virt_list_labs(conn);
    for (guint i = 0; i < labs->len; i++) {
        struct lab_src src = {conn, g_ptr_array_index(labs, i), NULL};
        src.state = state_here(src.name, here);
        struct json_object *lab = ml_columns_object(lab_columns, G_N_ELEMENTS(lab_columns), &src);
        ml_columns_add(lab, lab_parts, G_N_ELEMENTS(lab_parts), &src);
        /* A lab of that name that another controller made here: down leaves it, and says so. */
        g_autoptr(GPtrArray) foreign = ml_virt_lab_foreign(conn, src.name);
        if (foreign->len) {
            struct json_object *f = json_object_new_array();
            for (guint k = 0; k < foreign->len; k++)
                json_object_array_add(f, json_object_new_string(g_ptr_array_index(foreign, k)));
            json_object_object_add(lab, "foreign", f);
        }
        json_object_put(src.state);
        json_object_array_add(list, lab);
    }
    struct json_object *me = json_object_new_object();
    json_object_object_add(me, "id", json_object_new_string(ml_controller_id()));
    json_object_object_add(me, "by", json_object_new_string(ml_controller_words()));
    json_object_object_add(doc, "controller", me);
    json_object_object_add(doc, "labs", list);
    json_object_object_add(doc, "elsewhere", labs_elsewhere(here));
    virResetLastError();
    return doc;
}

static void put_part(GString *s, const struct lab_part *part, struct json_object *o)
{
    g_string_append(s, "  ");
    ml_columns_line(s, part->cols, part->n, " ", o, NULL);
}

void cmd_status_text(FILE *f, struct json_object *doc)
{
    struct json_object *labs = ml_j_array(doc, "labs");
    if (ml_j_len(labs) == 0)
        fprintf(f, "no meshlab labs on %s\n", ml_j_str(doc, "uri"));
    g_autoptr(GString) s = g_string_new(NULL);
    for (size_t i = 0; i < ml_j_len(labs); i++) {
        struct json_object *lab = json_object_array_get_idx(labs, i);
        ml_columns_line(s, lab_columns, G_N_ELEMENTS(lab_columns), "  ", lab, NULL);
        for (size_t k = 0; k < G_N_ELEMENTS(lab_parts); k++) {
            struct json_object *v = ml_j_get(lab, lab_parts[k].key);
            if (json_object_is_type(v, json_type_object))
                put_part(s, lab_parts[k].arg, v);
            for (size_t d = 0; d < ml_j_len(v); d++)
                put_part(s, lab_parts[k].arg, json_object_array_get_idx(v, d));
        }
        struct json_object *foreign = ml_j_array(lab, "foreign");
        for (size_t d = 0; d < ml_j_len(foreign); d++)
            g_string_append_printf(s, "  not this controller's: %s\n",
                                   json_object_get_string(json_object_array_get_idx(foreign, d)));
    }
    struct json_object *away = ml_j_array(doc, "elsewhere");
    for (size_t i = 0; i < ml_j_len(away); i++) {
        struct json_object *o = json_object_array_get_idx(away, i);
        g_string_append_printf(s,
                               "lab %s is on %s: 'meshlab down %s' and 'meshlab exec %s ...' "
                               "reach it there; 'meshlab status --connect URI', with the URI "
                               "its up was given, lists it\n",
                               ml_j_str(o, "name"), ml_j_str(o, "uri"), ml_j_str(o, "name"),
                               ml_j_str(o, "name"));
    }
    fputs(s->str, f);
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
