/* Loading a topology (ml_topology_load, declared with the model in topology.h): YAML (the reader
 * is topology/yaml.c) -> its sections parsed here (the profiles in topology/profile.c) ->
 * checked against each other (topology/validate.c). */
#include "topology/topology.h"
#include "topology/load_ctx.h"
#include "topology/uri.h"
#include "topology/ports.h"
#include "topology/profile.h"
#include "topology/validate.h"
#include "topology/yaml.h"
#include "core/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE_BYTES (1024 * 1024)

bool ml_topology_has_path(const struct ml_topology *topo, const char *path)
{
    for (size_t i = 0; i < topo->measure.n_paths; i++)
        if (!strcmp(topo->measure.paths[i].name, path))
            return true;
    return false;
}

bool ml_topology_crosses(const struct ml_topology *topo, size_t a, size_t b)
{
    return topo->nodes[a].host != topo->nodes[b].host;
}

int ml_topology_find_node(const struct ml_topology *topo, const char *name)
{
    for (size_t i = 0; i < topo->n_nodes; i++)
        if (strcmp(topo->nodes[i].name, name) == 0)
            return (int)i;
    return -1;
}

void ml_topology_free(struct ml_topology *topo)
{
    if (!topo)
        return;
    g_free(topo->path);
    g_free(topo->text);
    for (size_t i = 0; i < topo->measure.n_paths; i++)
        g_free(topo->measure.paths[i].name);
    for (size_t i = 0; i < topo->nat_matrix.n_dataplanes; i++)
        g_free(topo->nat_matrix.dataplanes[i].name);
    for (size_t i = 0; i < topo->n_hosts; i++)
        g_free(topo->hosts[i].uri);
    g_free(topo);
}

static bool parse_image(struct ml_load_ctx *c, yaml_node_t *n)
{
    static const struct ml_yaml_key keys[] = {{"use", true}, {"fallback", false}, {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};
    struct ml_topology *t = c->topo;

    if (!ml_yaml_read_mapping(&c->y, n, "image", keys, v) ||
        !ml_yaml_get_name(&c->y, v[0], "image.use", true, t->image))
        return false;
    if (v[1]) {
        if (!ml_yaml_get_name(&c->y, v[1], "image.fallback", true, t->image_fallback))
            return false;
        if (strcmp(t->image, t->image_fallback) == 0)
            return ml_yaml_fail(&c->y, v[1], "image.fallback '%s' is the same as image.use",
                                t->image);
    }
    return true;
}

static bool parse_bridge(struct ml_load_ctx *c, yaml_node_t *n)
{
    static const struct ml_yaml_key keys[] = {{"subnet", true}, {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};

    if (!ml_yaml_read_mapping(&c->y, n, "bridge", keys, v) ||
        !ml_yaml_get_subnet(&c->y, v[0], "bridge.subnet", &c->topo->lab_subnet))
        return false;
    c->lab_subnet_at = v[0];
    return true;
}

static bool parse_defaults(struct ml_load_ctx *c, yaml_node_t *n, unsigned *vcpus,
                           unsigned *memory_mib)
{
    static const struct ml_yaml_key keys[] = {
        {"vcpus", false}, {"memory_mib", false}, {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};

    if (!ml_yaml_read_mapping(&c->y, n, "defaults", keys, v))
        return false;
    if (v[0] && !ml_yaml_get_uint(&c->y, v[0], "defaults.vcpus", 1, 16, vcpus))
        return false;
    if (v[1] && !ml_yaml_get_uint(&c->y, v[1], "defaults.memory_mib", 256, 65536, memory_mib))
        return false;
    return true;
}

/* How messages name a node: by its name when it has one that can be shown. */
static const char *node_label(struct ml_load_ctx *c, yaml_node_t *n, size_t index)
{
    if (n->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = yaml_document_get_node(c->y.doc, p->key);
            yaml_node_t *v = yaml_document_get_node(c->y.doc, p->value);
            if (k->type == YAML_SCALAR_NODE && strcmp(ml_yaml_value(k), "name") == 0 &&
                v->type == YAML_SCALAR_NODE && !ml_yaml_is_null(v))
                return ml_yaml_fmt(&c->y, "node '%s'", ml_yaml_shown(&c->y, ml_yaml_value(v)));
        }
    }
    return ml_yaml_fmt(&c->y, "node %zu", index + 1);
}

static const char *nat_type_list(struct ml_load_ctx *c)
{
    GString *s = g_string_new(NULL);
    for (unsigned i = 0; i < ML_NAT_TYPES; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", ml_nat_type_name((enum ml_nat_type)i));
    return ml_yaml_keep(&c->y, g_string_free(s, FALSE));
}

static bool get_nat_type(struct ml_load_ctx *c, yaml_node_t *n, const char *what,
                         enum ml_nat_type *ret)
{
    const char *s;
    if (!ml_yaml_get_string(&c->y, n, what, &s))
        return false;
    if (!ml_nat_type_parse(s, ret))
        return ml_yaml_fail(&c->y, n, "%s '%s' is not a NAT type; the types are %s", what,
                            ml_yaml_shown(&c->y, s), nat_type_list(c));
    return true;
}

const struct ml_wan_profile *ml_topology_wan_find(const struct ml_topology *topo, const char *name)
{
    for (size_t i = 0; name && i < topo->n_wan_profiles; i++)
        if (!strcmp(topo->wan_profiles[i].name, name))
            return &topo->wan_profiles[i];
    return ml_wan_shipped_find(name);
}

/* One of wan_profiles: {delay_ms, jitter_ms, loss_percent, rate_mbit}, every key optional. */
static bool parse_wan_profile(struct ml_yaml *y, yaml_node_t *n, const char *name,
                              struct ml_wan_profile *p)
{
    static const char *const names[] = {"delay_ms", "jitter_ms", "loss_percent", "rate_mbit"};
    static const struct ml_yaml_key keys[] = {{"delay_ms", false},
                                              {"jitter_ms", false},
                                              {"loss_percent", false},
                                              {"rate_mbit", false},
                                              {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};
    const char *what = ml_yaml_fmt(y, "wan_profiles.%s", name);
    *p = (struct ml_wan_profile){0};
    g_strlcpy(p->name, name, sizeof(p->name));
    if (!ml_yaml_read_mapping(y, n, what, keys, v))
        return false;
    double *field[] = {&p->delay_ms, &p->jitter_ms, &p->loss_percent, &p->rate_mbit};
    for (size_t k = 0; k < G_N_ELEMENTS(field); k++)
        if (v[k] &&
            !ml_yaml_get_decimal(y, v[k], ml_yaml_fmt(y, "%s.%s", what, names[k]), field[k]))
            return false;
    const char *why = ml_wan_out_of_bounds(p);
    if (why) {
        /* At the key the rule names, else at the profile. */
        yaml_node_t *at = n;
        for (size_t k = 0; k < G_N_ELEMENTS(names); k++)
            if (v[k] && g_str_has_prefix(why, names[k]))
                at = v[k];
        return ml_yaml_fail(y, at, "%s: %s", what, why);
    }
    return true;
}

/* wan_profiles: the topology's own WAN profiles, by name; a shipped name is not redefined. */
static bool parse_wan_profiles(struct ml_load_ctx *c, yaml_node_t *n)
{
    static const struct ml_yaml_shape shape = {YAML_MAPPING_NODE, "profiles by name", "profiles",
                                               ML_WAN_PROFILES_MAX, NULL};
    struct ml_topology *t = c->topo;
    size_t count;
    if (!ml_yaml_collection(&c->y, n, "wan_profiles", &shape, &count))
        return false;
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *k = ml_yaml_pair_key(&c->y, n, i);
        char name[ML_NAME_MAX];
        if (k->type != YAML_SCALAR_NODE)
            return ml_yaml_fail(&c->y, k, "wan_profiles: a profile's name must be a name, not %s",
                                ml_yaml_found(&c->y, k));
        if (!ml_yaml_get_name(&c->y, k, "wan_profiles: profile name", false, name))
            return false;
        if (ml_wan_shipped_find(name))
            return ml_yaml_fail(&c->y, k,
                                "wan_profiles: '%s' is a shipped profile (%s); give yours "
                                "another name",
                                name, ml_wan_shipped_names());
        for (size_t j = 0; j < i; j++)
            if (!strcmp(t->wan_profiles[j].name, name))
                return ml_yaml_fail(&c->y, k,
                                    "wan_profiles: profile '%s' is given twice (first at line %d)",
                                    name, ml_yaml_line(ml_yaml_pair_key(&c->y, n, j)));
        if (!parse_wan_profile(&c->y, ml_yaml_pair_value(&c->y, n, i), name, &t->wan_profiles[i]))
            return false;
        t->n_wan_profiles = i + 1;
    }
    return true;
}

/* A node's `wan: NAME`: a profile of wan_profiles or a shipped one. */
static bool get_wan(struct ml_load_ctx *c, yaml_node_t *n, const char *what,
                    struct ml_wan_profile *ret)
{
    const char *name = NULL;
    if (!ml_yaml_get_string(&c->y, n, what, &name))
        return false;
    const struct ml_wan_profile *p = ml_topology_wan_find(c->topo, name);
    if (!p) {
        GString *known = g_string_new(ml_wan_shipped_names());
        for (size_t i = 0; i < c->topo->n_wan_profiles; i++)
            g_string_append_printf(known, ", %s", c->topo->wan_profiles[i].name);
        return ml_yaml_fail(&c->y, n,
                            "%s: '%s' is no WAN profile; give one of %s, or define it under "
                            "wan_profiles",
                            what, ml_yaml_shown(&c->y, name),
                            ml_yaml_keep(&c->y, g_string_free(known, false)));
    }
    *ret = *p;
    return true;
}

/* A node's index by name, or -1. */
static int node_index(const struct ml_topology *t, const char *name)
{
    for (size_t i = 0; i < t->n_nodes; i++)
        if (!strcmp(t->nodes[i].name, name))
            return (int)i;
    return -1;
}

/* One step of wan_sweep: a profile's name (the hub's; every other node keeps its own) or a
 * mapping of node names to profiles' (nodes not named keep their own). */
static bool parse_wan_step(struct ml_load_ctx *c, yaml_node_t *n, size_t index,
                           struct ml_wan_step *step)
{
    struct ml_topology *t = c->topo;
    const char *what = ml_yaml_fmt(&c->y, "wan_sweep[%zu]", index);
    for (size_t i = 0; i < t->n_nodes; i++)
        step->wan[i] = t->nodes[i].wan;
    step->line = ml_yaml_line(n);
    step->column = ml_yaml_column(n);
    if (n->type == YAML_SCALAR_NODE) {
        /* The hub as written; validation refuses a name that is no node's. */
        int hub = c->hub ? node_index(t, c->hub) : -1;
        struct ml_wan_profile p;
        if (!get_wan(c, n, what, &p))
            return false;
        if (hub >= 0)
            step->wan[hub] = p;
        g_strlcpy(step->label, p.name, sizeof(step->label));
        return true;
    }
    static const struct ml_yaml_shape shape = {
        YAML_MAPPING_NODE, "node names to profiles", "nodes", ML_MAX_NODES,
        "give a profile's name for the hub, or {NODE: PROFILE, ...}"};
    size_t count;
    if (n->type != YAML_MAPPING_NODE)
        return ml_yaml_fail(&c->y, n,
                            "%s must be a profile's name (the hub's) or a mapping of node names "
                            "to profiles, not %s",
                            what, ml_yaml_found(&c->y, n));
    if (!ml_yaml_collection(&c->y, n, what, &shape, &count))
        return false;
    GString *label = g_string_new(NULL);
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *k = ml_yaml_pair_key(&c->y, n, i);
        const char *name = k->type == YAML_SCALAR_NODE ? ml_yaml_value(k) : "";
        int node = node_index(t, name);
        if (node < 0) {
            g_string_free(label, true);
            return ml_yaml_fail(&c->y, k, "%s: '%s' is no node of this lab", what,
                                ml_yaml_shown(&c->y, name));
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(ml_yaml_value(ml_yaml_pair_key(&c->y, n, j)), name)) {
                g_string_free(label, true);
                return ml_yaml_fail(&c->y, k, "%s: node '%s' is given twice", what, name);
            }
        if (!get_wan(c, ml_yaml_pair_value(&c->y, n, i), ml_yaml_fmt(&c->y, "%s.%s", what, name),
                     &step->wan[node])) {
            g_string_free(label, true);
            return false;
        }
        g_string_append_printf(label, "%s%s=%s", i ? " " : "", name, step->wan[node].name);
    }
    if (label->len >= sizeof(step->label)) {
        g_string_free(label, true);
        return ml_yaml_fail(&c->y, n, "%s names too much to label it; name fewer nodes", what);
    }
    g_strlcpy(step->label, label->str, sizeof(step->label));
    g_string_free(label, true);
    return true;
}

/* Whether two steps put the same profile on every node. */
static bool same_step(const struct ml_topology *t, const struct ml_wan_step *a,
                      const struct ml_wan_step *b)
{
    for (size_t i = 0; i < t->n_nodes; i++)
        if (strcmp(a->wan[i].name, b->wan[i].name))
            return false;
    return true;
}

/* wan_sweep: 2 to ML_WAN_SWEEP_MAX steps, each different. Read after the nodes and the hub. */
static bool parse_wan_sweep(struct ml_load_ctx *c, yaml_node_t *n)
{
    static const struct ml_yaml_shape shape = {
        YAML_SEQUENCE_NODE, "steps (a profile's name, or {NODE: PROFILE, ...})", "steps",
        ML_WAN_SWEEP_MAX, "list 2 or more steps, like [lan, vps-near, vps-far]"};
    struct ml_topology *t = c->topo;
    size_t count;
    if (!ml_yaml_collection(&c->y, n, "wan_sweep", &shape, &count))
        return false;
    if (count < 2)
        return ml_yaml_fail(&c->y, n,
                            "wan_sweep lists 1 step; a sweep compares 2 or more, like [lan, "
                            "vps-far] (for one, give the nodes' wan instead)");
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = ml_yaml_item(&c->y, n, i);
        if (!parse_wan_step(c, item, i, &t->wan_sweep[i]))
            return false;
        for (size_t j = 0; j < i; j++)
            if (same_step(t, &t->wan_sweep[j], &t->wan_sweep[i]))
                return ml_yaml_fail(&c->y, item,
                                    "wan_sweep: step '%s' puts the same profiles in force as "
                                    "step '%s' (line %d)",
                                    t->wan_sweep[i].label, t->wan_sweep[j].label,
                                    t->wan_sweep[j].line);
        t->n_wan_sweep = i + 1;
    }
    return true;
}

/* A host's libvirt URI, or an alias of libvirt.conf's uri_aliases: read as libvirt reads it
 * (topology/uri.h), and only what a lab needs (ml_uri_topology_refusal). A topology file is data:
 * nothing in it may name a program that libvirt or meshlab would run, or loosen how the host is
 * checked; a URI that needs more goes in uri_aliases, and the topology names the alias. */
static bool get_host_uri(struct ml_load_ctx *c, yaml_node_t *n, const char *what, char **ret)
{
    const char *uri = NULL;
    if (!ml_yaml_get_string(&c->y, n, what, &uri))
        return false;
    if (!*uri)
        return ml_yaml_fail(&c->y, n,
                            "%s: the URI is empty; give the host's libvirt URI "
                            "(qemu:///system, qemu+ssh://root@server/system)",
                            what);
    for (const char *p = uri; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            return ml_yaml_fail(&c->y, n,
                                "%s: a libvirt URI is one word without spaces or control "
                                "characters",
                                what);
    g_autofree char *why = ml_uri_topology_refusal(uri);
    if (why)
        return ml_yaml_fail(&c->y, n,
                            "%s: %s; a topology's URI is qemu:///system, "
                            "qemu+ssh://USER@HOST[:PORT]/system with keyfile= and no_tty= at most, "
                            "or qemu+tls://HOST/system with pkipath=; a URI that needs more goes "
                            "in libvirt.conf's uri_aliases, and the topology names the alias",
                            what, why);
    *ret = g_strdup(uri);
    return true;
}

/* One of hosts: its URI alone, or {uri, underlay}. */
static bool parse_host(struct ml_load_ctx *c, yaml_node_t *n, size_t index)
{
    enum { URI, UNDERLAY };
    static const struct ml_yaml_key keys[] = {
        [URI] = {"uri", true}, [UNDERLAY] = {"underlay", false}, {NULL, false}};
    struct ml_host *h = &c->topo->hosts[index];
    const char *what = ml_yaml_fmt(&c->y, "hosts.%s", h->name);
    if (n->type == YAML_SCALAR_NODE)
        return get_host_uri(c, n, what, &h->uri);
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};
    if (!ml_yaml_read_mapping(&c->y, n, what, keys, v) ||
        !get_host_uri(c, v[URI], ml_yaml_fmt(&c->y, "%s.uri", what), &h->uri))
        return false;
    c->host_at[index].underlay = v[UNDERLAY];
    return !v[UNDERLAY] ||
           ml_yaml_get_address(&c->y, v[UNDERLAY], ml_yaml_fmt(&c->y, "%s.underlay", what),
                               &h->underlay);
}

/* hosts: {NAME: URI | {uri, underlay}}: the libvirt hosts the nodes are placed on. */
static bool parse_hosts(struct ml_load_ctx *c, yaml_node_t *n)
{
    static const struct ml_yaml_shape shape = {YAML_MAPPING_NODE, "hosts by name", "hosts",
                                               ML_HOSTS_MAX, NULL};
    struct ml_topology *t = c->topo;
    size_t count;
    if (!ml_yaml_collection(&c->y, n, "hosts", &shape, &count))
        return false;
    c->hosts_at = n;
    if (count == 0)
        return ml_yaml_fail(&c->y, n,
                            "hosts is empty; name at least one host, or leave hosts "
                            "out for a lab on the one host --connect names");
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *k = ml_yaml_pair_key(&c->y, n, i);
        struct ml_host *h = &t->hosts[i];
        if (k->type != YAML_SCALAR_NODE)
            return ml_yaml_fail(&c->y, k, "hosts: a host's name must be a name, not %s",
                                ml_yaml_found(&c->y, k));
        if (!ml_yaml_get_name(&c->y, k, "hosts: host name", false, h->name))
            return false;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(t->hosts[j].name, h->name))
                return ml_yaml_fail(&c->y, k, "hosts: host '%s' is given twice (first at line %d)",
                                    h->name, t->hosts[j].line);
        h->line = ml_yaml_line(k);
        h->column = ml_yaml_column(k);
        c->host_at[i].name = k;
        t->n_hosts = i + 1;
        if (!parse_host(c, ml_yaml_pair_value(&c->y, n, i), i))
            return false;
    }
    return true;
}

/* A node's `host: NAME`: one of hosts. */
static bool get_host(struct ml_load_ctx *c, yaml_node_t *n, const char *what, size_t *ret)
{
    const char *name = NULL;
    if (!ml_yaml_get_string(&c->y, n, what, &name))
        return false;
    const struct ml_topology *t = c->topo;
    if (t->n_hosts == 0)
        return ml_yaml_fail(&c->y, n,
                            "%s: no hosts are named; add hosts: {%s: {uri: URI, underlay: "
                            "ADDRESS}, ...} at the top, or remove host:",
                            what, ml_yaml_shown(&c->y, name));
    GString *known = g_string_new(NULL);
    for (size_t i = 0; i < t->n_hosts; i++) {
        if (!strcmp(t->hosts[i].name, name)) {
            g_string_free(known, TRUE);
            *ret = i;
            return true;
        }
        g_string_append_printf(known, "%s%s", i ? ", " : "", t->hosts[i].name);
    }
    return ml_yaml_fail(&c->y, n, "%s: '%s' is none of hosts (%s)", what,
                        ml_yaml_shown(&c->y, name),
                        ml_yaml_keep(&c->y, g_string_free(known, false)));
}

static bool parse_node(struct ml_load_ctx *c, yaml_node_t *n, size_t index, unsigned vcpus,
                       unsigned memory_mib)
{
    enum { NAME, ADDRESS, TUNNEL_ADDRESS, VCPUS, MEMORY_MIB, NAT, SECOND_ADDRESS, WAN, HOST };
    static const struct ml_yaml_key keys[] = {[NAME] = {"name", true},
                                              [ADDRESS] = {"address", true},
                                              [TUNNEL_ADDRESS] = {"tunnel_address", true},
                                              [VCPUS] = {"vcpus", false},
                                              [MEMORY_MIB] = {"memory_mib", false},
                                              [NAT] = {"nat", false},
                                              [SECOND_ADDRESS] = {"second_address", false},
                                              [WAN] = {"wan", false},
                                              [HOST] = {"host", false},
                                              {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};
    struct ml_node *node = &c->topo->nodes[index];
    const char *label = node_label(c, n, index);

    if (!ml_yaml_read_mapping(&c->y, n, label, keys, v) ||
        !ml_yaml_get_name(&c->y, v[NAME], "node name", false, node->name) ||
        !ml_yaml_get_address(&c->y, v[ADDRESS], ml_yaml_fmt(&c->y, "%s: address", label),
                             &node->address) ||
        !ml_yaml_get_address(&c->y, v[TUNNEL_ADDRESS],
                             ml_yaml_fmt(&c->y, "%s: tunnel_address", label),
                             &node->tunnel_address))
        return false;
    node->vcpus = vcpus;
    node->memory_mib = memory_mib;
    if (v[VCPUS] && !ml_yaml_get_uint(&c->y, v[VCPUS], ml_yaml_fmt(&c->y, "%s: vcpus", label), 1,
                                      16, &node->vcpus))
        return false;
    if (v[MEMORY_MIB] &&
        !ml_yaml_get_uint(&c->y, v[MEMORY_MIB], ml_yaml_fmt(&c->y, "%s: memory_mib", label), 256,
                          65536, &node->memory_mib))
        return false;
    node->nat = ML_NAT_NONE;
    if (v[NAT] && !get_nat_type(c, v[NAT], ml_yaml_fmt(&c->y, "%s: nat", label), &node->nat))
        return false;
    if (v[SECOND_ADDRESS] && !ml_yaml_get_address(&c->y, v[SECOND_ADDRESS],
                                                  ml_yaml_fmt(&c->y, "%s: second_address", label),
                                                  &node->second_address))
        return false;
    node->wan = *ml_wan_shipped_find("lan");
    if (v[WAN] && !get_wan(c, v[WAN], ml_yaml_fmt(&c->y, "%s: wan", label), &node->wan))
        return false;
    node->host = 0;
    if (v[HOST] && !get_host(c, v[HOST], ml_yaml_fmt(&c->y, "%s: host", label), &node->host))
        return false;
    node->line = (int)n->start_mark.line + 1;
    node->column = (int)n->start_mark.column + 1;
    node->tunnel_line = (int)v[TUNNEL_ADDRESS]->start_mark.line + 1;
    node->tunnel_column = (int)v[TUNNEL_ADDRESS]->start_mark.column + 1;
    c->at[index].node = n;
    c->at[index].name = v[NAME];
    c->at[index].address = v[ADDRESS];
    c->at[index].tunnel_address = v[TUNNEL_ADDRESS];
    c->at[index].nat_key = v[NAT] ? ml_yaml_find_key(&c->y, n, "nat") : NULL;
    c->at[index].nat = v[NAT];
    c->at[index].second_address = v[SECOND_ADDRESS];
    c->at[index].host = v[HOST];
    return true;
}

static bool parse_nodes(struct ml_load_ctx *c, yaml_node_t *n, unsigned vcpus, unsigned memory_mib)
{
    static const struct ml_yaml_shape shape = {YAML_SEQUENCE_NODE, "nodes", "nodes", 0, NULL};
    size_t count;

    if (!ml_yaml_collection(&c->y, n, "nodes", &shape, &count))
        return false;
    if (count < 2)
        return ml_yaml_fail(&c->y, n, "nodes lists %zu node%s; a lab needs at least 2", count,
                            count == 1 ? "" : "s");
    if (count > ML_MAX_NODES) {
        /* At the first node too many, which is where the file has to be cut. */
        return ml_yaml_fail(
            &c->y, ml_yaml_item(&c->y, n, ML_MAX_NODES),
            "nodes lists %zu nodes; a lab has one hub and at most %d clients (%d nodes), "
            "since every guest is emulated (TCG, no KVM) on the host's 2 cores and more "
            "would slow every boot past its waits; remove this node and those after it",
            count, ML_MAX_CLIENTS, ML_MAX_NODES);
    }
    for (size_t i = 0; i < count; i++) {
        if (!parse_node(c, ml_yaml_item(&c->y, n, i), i, vcpus, memory_mib))
            return false;
        c->topo->n_nodes = i + 1;
    }
    return true;
}

static bool parse_wireguard(struct ml_load_ctx *c, yaml_node_t *n)
{
    static const struct ml_yaml_key keys[] = {{"subnet", true},
                                              {"hub", false},
                                              {"listen_port", false},
                                              {"persistent_keepalive", false},
                                              {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};
    struct ml_topology *t = c->topo;

    t->wireguard.listen_port = ML_PORT_WIREGUARD_DEFAULT;
    t->wireguard.persistent_keepalive = 25;
    if (!ml_yaml_read_mapping(&c->y, n, "wireguard", keys, v) ||
        !ml_yaml_get_subnet(&c->y, v[0], "wireguard.subnet", &t->wireguard.subnet))
        return false;
    if (v[1] && !ml_yaml_get_string(&c->y, v[1], "wireguard.hub", &c->old_hub))
        return false;
    if (v[2] && !ml_yaml_get_uint(&c->y, v[2], "wireguard.listen_port", 1, 65535,
                                  &t->wireguard.listen_port))
        return false;
    /* The ports made from it (its own, +1, +2) are checked against every other port once the
     * dataplanes are known (ml_paths_resolve), and reported here. */
    t->wireguard.listen_port_line = (int)(v[2] ? v[2] : n)->start_mark.line + 1;
    t->wireguard.listen_port_column = (int)(v[2] ? v[2] : n)->start_mark.column + 1;
    if (v[3] && !ml_yaml_get_uint(&c->y, v[3], "wireguard.persistent_keepalive", 0, 65535,
                                  &t->wireguard.persistent_keepalive))
        return false;
    c->wg_subnet_at = v[0];
    c->old_hub_at = v[1];
    return true;
}

/* The hub: `hub: NAME` at the top level (at), or wireguard.hub as files before it had it, with
 * a warning; both naming different nodes is an error. Read after wireguard. */
static bool parse_hub(struct ml_load_ctx *c, yaml_node_t *root, yaml_node_t *at)
{
    struct ml_topology *t = c->topo;

    if (at && !ml_yaml_get_string(&c->y, at, "hub", &c->hub))
        return false;
    /* Both naming different nodes is an error, and its message says what to do: no warning. */
    if (at && c->old_hub_at && strcmp(c->hub, c->old_hub) != 0)
        return ml_yaml_fail(&c->y, c->old_hub_at,
                            "wireguard.hub '%s' is not the hub '%s' given at line %d; remove "
                            "wireguard.hub, which `hub:` replaces",
                            ml_yaml_shown(&c->y, c->old_hub), ml_yaml_shown(&c->y, c->hub),
                            ml_yaml_line(at));
    if (!at && !c->old_hub_at)
        return ml_yaml_fail(&c->y, root,
                            "missing required key 'hub', the node that relays between the "
                            "clients; write `hub: NAME` at the top level");
    c->hub_at = at ? at : c->old_hub_at;
    c->hub = at ? c->hub : c->old_hub;
    c->hub_key = at ? "hub" : "wireguard.hub";
    t->hub_line = ml_yaml_line(c->hub_at);
    t->hub_column = ml_yaml_column(c->hub_at);
    return true;
}

static bool parse_paths(struct ml_load_ctx *c, yaml_node_t *n)
{
    static const struct ml_yaml_shape shape = {YAML_SEQUENCE_NODE, "path names", "paths",
                                               ML_PATHS_MAX, NULL};
    struct ml_topology *t = c->topo;
    size_t count;

    t->measure.paths_line = ml_yaml_line(n);
    t->measure.paths_column = ml_yaml_column(n);
    if (!ml_yaml_collection(&c->y, n, "measure.paths", &shape, &count))
        return false;
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = ml_yaml_item(&c->y, n, i);
        const char *s;

        if (!ml_yaml_get_string(&c->y, item, "a measure.paths entry", &s))
            return false;
        if (ml_topology_has_path(t, s))
            return ml_yaml_fail(&c->y, item, "measure.paths: '%s' is listed twice",
                                ml_yaml_shown(&c->y, s));
        t->measure.paths[t->measure.n_paths++] = (struct ml_path_ref){
            .name = g_strdup(s),
            .line = (int)item->start_mark.line + 1,
            .column = (int)item->start_mark.column + 1,
        };
    }
    return true;
}

static bool parse_measure(struct ml_load_ctx *c, yaml_node_t *n)
{
    static const struct ml_yaml_key keys[] = {
        {"client", true}, {"server", true}, {"paths", true}, {"profiles", false}, {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};
    struct ml_topology *t = c->topo;

    if (!ml_yaml_read_mapping(&c->y, n, "measure", keys, v) ||
        !ml_yaml_get_string(&c->y, v[0], "measure.client", &c->client) ||
        !ml_yaml_get_string(&c->y, v[1], "measure.server", &c->server) || !parse_paths(c, v[2]))
        return false;
    c->client_at = v[0];
    c->server_at = v[1];
    if (v[3])
        return ml_profiles_parse(&c->y, v[3], t);
    ml_profiles_default(t);
    return true;
}

/* nat_matrix.types: 1..6 NAT types, none twice. */
static bool parse_nat_types(struct ml_load_ctx *c, yaml_node_t *n)
{
    struct ml_yaml_shape shape = {YAML_SEQUENCE_NODE, "NAT types like [none, symmetric]", "types",
                                  0,
                                  ml_yaml_fmt(&c->y, "list at least one of %s", nat_type_list(c))};
    struct ml_topology *t = c->topo;
    yaml_node_t *at[ML_NAT_TYPES];
    size_t count;

    if (!ml_yaml_collection(&c->y, n, "nat_matrix.types", &shape, &count))
        return false;
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = ml_yaml_item(&c->y, n, i);
        enum ml_nat_type type;

        if (!get_nat_type(c, item, "nat_matrix.types: type", &type))
            return false;
        for (size_t j = 0; j < t->nat_matrix.n_types; j++)
            if (t->nat_matrix.types[j] == type)
                return ml_yaml_fail(&c->y, item,
                                    "nat_matrix.types: '%s' is listed twice (first at line %zu)",
                                    ml_nat_type_name(type), (size_t)at[j]->start_mark.line + 1);
        /* Six types listed once each fill the array; a seventh entry is a repeat. */
        g_assert(t->nat_matrix.n_types < ML_NAT_TYPES);
        at[t->nat_matrix.n_types] = item;
        t->nat_matrix.types[t->nat_matrix.n_types++] = type;
    }
    return true;
}

/* nat_matrix.dataplanes: 1..ML_NAT_DATAPLANES_MAX names, none twice; what they mean is the
 * dataplanes' registry's business (resolved after loading). */
static bool parse_nat_dataplanes(struct ml_load_ctx *c, yaml_node_t *n)
{
    static const struct ml_yaml_shape shape = {
        YAML_SEQUENCE_NODE, "dataplane names like [nebula, tailscale]", "dataplanes",
        ML_NAT_DATAPLANES_MAX, "list at least one, like [nebula]"};
    struct ml_topology *t = c->topo;
    size_t count;

    if (!ml_yaml_collection(&c->y, n, "nat_matrix.dataplanes", &shape, &count))
        return false;
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = ml_yaml_item(&c->y, n, i);
        char name[ML_NAME_MAX];

        if (!ml_yaml_get_name(&c->y, item, "nat_matrix.dataplanes: dataplane", false, name))
            return false;
        for (size_t j = 0; j < t->nat_matrix.n_dataplanes; j++)
            if (strcmp(t->nat_matrix.dataplanes[j].name, name) == 0)
                return ml_yaml_fail(
                    &c->y, item, "nat_matrix.dataplanes: '%s' is listed twice (first at line %d)",
                    name, t->nat_matrix.dataplanes[j].line);
        t->nat_matrix.dataplanes[t->nat_matrix.n_dataplanes++] = (struct ml_path_ref){
            .name = g_strdup(name),
            .line = (int)item->start_mark.line + 1,
            .column = (int)item->start_mark.column + 1,
        };
    }
    return true;
}

static bool parse_nat_matrix(struct ml_load_ctx *c, yaml_node_t *key, yaml_node_t *n)
{
    enum { TYPES, DATAPLANES, REPEATS, WINDOW_S };
    static const struct ml_yaml_key keys[] = {[TYPES] = {"types", true},
                                              [DATAPLANES] = {"dataplanes", true},
                                              [REPEATS] = {"repeats", false},
                                              [WINDOW_S] = {"window_s", false},
                                              {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};
    struct ml_topology *t = c->topo;

    t->nat_matrix.present = true;
    t->nat_matrix.repeats = 3;
    t->nat_matrix.window_s = 20;
    t->nat_matrix.line = (int)key->start_mark.line + 1;
    t->nat_matrix.column = (int)key->start_mark.column + 1;
    c->nat_matrix_at = key;
    if (!ml_yaml_read_mapping(&c->y, n, "nat_matrix", keys, v) || !parse_nat_types(c, v[TYPES]) ||
        !parse_nat_dataplanes(c, v[DATAPLANES]))
        return false;
    if (v[REPEATS] &&
        !ml_yaml_get_uint(&c->y, v[REPEATS], "nat_matrix.repeats", 1, 20, &t->nat_matrix.repeats))
        return false;
    if (v[WINDOW_S] && !ml_yaml_get_uint(&c->y, v[WINDOW_S], "nat_matrix.window_s", 5, 300,
                                         &t->nat_matrix.window_s))
        return false;
    return true;
}

/* vps: the workload a VPS hub is rehearsed for (topology/workload.h). */
static bool parse_vps(struct ml_yaml *y, yaml_node_t *n, struct ml_workload *w)
{
    enum { TRAFFIC, SHARE, PRICE, INCLUDED, PEAK, CURRENCY };
    static const struct ml_yaml_key keys[] = {[TRAFFIC] = {"traffic_gb", true},
                                              [SHARE] = {"relayed_share", false},
                                              [PRICE] = {"egress_price_per_gb", false},
                                              [INCLUDED] = {"included_tb", false},
                                              [PEAK] = {"peak_mbit", false},
                                              [CURRENCY] = {"currency", false},
                                              {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};
    ml_workload_init(w);
    if (!ml_yaml_read_mapping(y, n, "vps", keys, v) ||
        !ml_yaml_get_decimal(y, v[TRAFFIC], "vps.traffic_gb", &w->traffic_gb))
        return false;
    if (!(w->traffic_gb > 0))
        return ml_yaml_fail(y, v[TRAFFIC],
                            "vps.traffic_gb must be above 0: the clients' payload a month, in GB");
    if (v[SHARE] && !ml_yaml_get_decimal(y, v[SHARE], "vps.relayed_share", &w->relayed_share))
        return false;
    if (w->relayed_share > 1)
        return ml_yaml_fail(y, v[SHARE],
                            "vps.relayed_share must be 0 to 1: the share of the payload a mesh's "
                            "relay carries (0.2 for a fifth)");
    if (v[PRICE] &&
        !ml_yaml_get_decimal(y, v[PRICE], "vps.egress_price_per_gb", &w->egress_price_per_gb))
        return false;
    if (v[INCLUDED] && !ml_yaml_get_decimal(y, v[INCLUDED], "vps.included_tb", &w->included_tb))
        return false;
    if (v[PEAK] && !ml_yaml_get_decimal(y, v[PEAK], "vps.peak_mbit", &w->peak_mbit))
        return false;
    if (v[PEAK] && !(w->peak_mbit > 0))
        return ml_yaml_fail(y, v[PEAK], "vps.peak_mbit must be above 0 (Mbit/s)");
    const char *cur = NULL;
    if (v[CURRENCY]) {
        if (!ml_yaml_get_string(y, v[CURRENCY], "vps.currency", &cur))
            return false;
        if (!ml_workload_currency_ok(cur))
            return ml_yaml_fail(y, v[CURRENCY],
                                "vps.currency must be a code of capital letters like USD or EUR, "
                                "not '%s'",
                                ml_yaml_shown(y, cur));
        g_strlcpy(w->currency, cur, sizeof(w->currency));
    }
    w->present = true;
    return true;
}

static bool parse_root(struct ml_load_ctx *c, yaml_node_t *root)
{
    enum {
        NAME,
        DESCRIPTION,
        IMAGE,
        BRIDGE,
        DEFAULTS,
        NODES,
        HUB,
        WIREGUARD,
        MEASURE,
        NAT_MATRIX,
        VPS,
        WAN_PROFILES,
        WAN_SWEEP,
        HOSTS
    };
    static const struct ml_yaml_key keys[] = {[NAME] = {"name", true},
                                              [DESCRIPTION] = {"description", false},
                                              [IMAGE] = {"image", true},
                                              [BRIDGE] = {"bridge", true},
                                              [DEFAULTS] = {"defaults", false},
                                              [NODES] = {"nodes", true},
                                              [HUB] = {"hub", false}, /* or wireguard.hub */
                                              [WIREGUARD] = {"wireguard", true},
                                              [MEASURE] = {"measure", true},
                                              [NAT_MATRIX] = {"nat_matrix", false},
                                              [VPS] = {"vps", false},
                                              [WAN_PROFILES] = {"wan_profiles", false},
                                              [WAN_SWEEP] = {"wan_sweep", false},
                                              [HOSTS] = {"hosts", false},
                                              {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};
    struct ml_topology *t = c->topo;
    unsigned vcpus = 1, memory_mib = 1024;
    const char *description;

    if (!ml_yaml_read_mapping(&c->y, root, NULL, keys, v) ||
        !ml_yaml_get_name(&c->y, v[NAME], "lab name", false, t->name))
        return false;
    if (v[DESCRIPTION] && !ml_yaml_get_string(&c->y, v[DESCRIPTION], "description", &description))
        return false;
    if (!parse_image(c, v[IMAGE]) || !parse_bridge(c, v[BRIDGE]))
        return false;
    if (v[DEFAULTS] && !parse_defaults(c, v[DEFAULTS], &vcpus, &memory_mib))
        return false;
    /* Before the nodes, which name them. */
    if (v[WAN_PROFILES] && !parse_wan_profiles(c, v[WAN_PROFILES]))
        return false;
    if (v[HOSTS] && !parse_hosts(c, v[HOSTS]))
        return false;
    if (!parse_nodes(c, v[NODES], vcpus, memory_mib) || !parse_wireguard(c, v[WIREGUARD]) ||
        !parse_hub(c, root, v[HUB]) || !parse_measure(c, v[MEASURE]))
        return false;
    if (v[NAT_MATRIX] &&
        !parse_nat_matrix(c, ml_yaml_find_key(&c->y, root, "nat_matrix"), v[NAT_MATRIX]))
        return false;
    ml_workload_init(&t->vps);
    if (v[VPS] && !parse_vps(&c->y, v[VPS], &t->vps))
        return false;
    if (v[WAN_SWEEP] && !parse_wan_sweep(c, v[WAN_SWEEP]))
        return false;
    return true;
}

static struct ml_topology *parse(const char *name, const char *text, size_t len, bool data,
                                 GError **err)
{
    g_autoptr(MlTopology) topo = NULL;
    yaml_document_t doc;
    yaml_node_t *root;
    struct ml_load_ctx c = {.y = {.file = name, .doc = &doc, .err = err, .data = data}};
    bool ok;

    if (len > MAX_FILE_BYTES) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s: the file is larger than 1 MiB, the limit for a topology", name);
        return NULL;
    }
    if (!ml_yaml_load(name, text, len, &doc, err))
        return NULL;
    root = yaml_document_get_root_node(&doc);
    if (!root) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:1:1: the file is empty; a topology is a mapping with the keys name, "
                    "image, bridge, nodes, hub, wireguard and measure",
                    name);
        yaml_document_delete(&doc);
        return NULL;
    }
    topo = g_new0(struct ml_topology, 1);
    topo->path = g_strdup(name);
    topo->text = g_strndup(text, len);
    topo->text_len = len;
    c.topo = topo;
    c.y.scratch = g_ptr_array_new_with_free_func(g_free);
    ok = parse_root(&c, root) && ml_topology_validate(&c);
    /* Said only of a file that is taken: a refused one gets its error alone, on one line. */
    if (ok && c.old_hub_at)
        ml_warn("%s:%d:%d: wireguard.hub is deprecated; write `hub: %s` at the top level",
                c.y.file, ml_yaml_line(c.old_hub_at), ml_yaml_column(c.old_hub_at),
                ml_yaml_shown(&c.y, c.old_hub));
    ml_yaml_clear(&c.y);
    yaml_document_delete(&doc);
    return ok ? g_steal_pointer(&topo) : NULL;
}

struct ml_topology *ml_topology_parse(const char *name, const char *text, size_t len, GError **err)
{
    return parse(name, text, len, false, err);
}

struct ml_topology *ml_topology_parse_data(const char *name, const char *text, size_t len,
                                          GError **err)
{
    return parse(name, text, len, true, err);
}

/* What a file that is not a regular one is, for the message that refuses it. */
static const char *file_kind(mode_t mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISDIR(mode)  ? "a directory"
           : S_ISSOCK(mode) ? "a socket"
                            : "a special file";
}

struct ml_topology *ml_topology_load(const char *path, GError **err)
{
    g_autofree char *text = g_malloc(MAX_FILE_BYTES + 1);
    struct stat st;
    size_t len;
    int saved;

    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer, and a terminal for
     * carrier; the file's kind is known only once it is open. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        saved = errno;
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s: cannot open the topology file: %s", path,
                    g_strerror(saved));
        return NULL;
    }
    if (fstat(fd, &st) != 0) {
        saved = errno;
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s: cannot stat the topology file: %s", path,
                    g_strerror(saved));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s: the topology is %s, not a regular file; give the path of a topology file",
                    path, file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    FILE *f = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        saved = errno;
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s: cannot read the topology file: %s", path,
                    g_strerror(saved));
        close(fd);
        return NULL;
    }
    len = fread(text, 1, MAX_FILE_BYTES + 1, f);
    saved = errno;
    if (ferror(f)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s: cannot read the topology file: %s", path,
                    g_strerror(saved));
        fclose(f);
        return NULL;
    }
    fclose(f);
    return ml_topology_parse(path, text, len, err);
}

static const char *const nat_names[ML_NAT_TYPES] = {
    [ML_NAT_NONE] = "none",
    [ML_NAT_ONE_TO_ONE] = "one-to-one",
    [ML_NAT_FULL_CONE] = "full-cone",
    [ML_NAT_RESTRICTED_CONE] = "restricted-cone",
    [ML_NAT_PORT_RESTRICTED_CONE] = "port-restricted-cone",
    [ML_NAT_SYMMETRIC] = "symmetric",
};

const char *ml_nat_type_name(enum ml_nat_type t)
{
    return (unsigned)t < ML_NAT_TYPES ? nat_names[t] : NULL;
}

bool ml_nat_type_parse(const char *name, enum ml_nat_type *ret)
{
    for (unsigned i = 0; name && i < ML_NAT_TYPES; i++)
        if (!strcmp(name, nat_names[i])) {
            *ret = (enum ml_nat_type)i;
            return true;
        }
    return false;
}

bool ml_topology_has_nat(const struct ml_topology *topo)
{
    for (size_t i = 0; i < topo->n_nodes; i++)
        if (topo->nodes[i].nat != ML_NAT_NONE)
            return true;
    return false;
}

struct in_addr ml_nat_inside_net(const struct ml_topology *topo, size_t node)
{
    uint32_t last = ntohl(topo->nodes[node].address.s_addr) & 0xff;
    struct in_addr a = {htonl((172u << 24) | (16u << 16) | (last << 8))};
    return a;
}
