/* Loading a topology (ml_topology_load, declared with the model in topology.h): its sections read
 * (the YAML reader is topology/yaml.c, the profiles topology/profile.c), then checked against each
 * other. */
#include "topology/topology.h"
#include "topology/ports.h"
#include "topology/profile.h"
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
/* libvirt objects are named "meshlab-<lab>-<node>"; keep them short enough to be safe as
 * domain, volume and file names everywhere. */
#define DOMAIN_NAME_MAX 64

bool ml_topology_has_path(const struct ml_topology *topo, const char *path)
{
    for (size_t i = 0; i < topo->measure.n_paths; i++)
        if (!strcmp(topo->measure.paths[i].name, path))
            return true;
    return false;
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
    for (size_t i = 0; i < topo->measure.n_paths; i++)
        g_free(topo->measure.paths[i].name);
    for (size_t i = 0; i < topo->nat_matrix.n_dataplanes; i++)
        g_free(topo->nat_matrix.dataplanes[i].name);
    g_free(topo);
}

struct ctx {
    struct ml_yaml y;
    struct ml_topology *topo;
    /* Where things were written, for messages about how they relate to each other. */
    struct {
        yaml_node_t *node, *name, *address, *tunnel_address, *nat_key, *nat, *second_address;
    } at[ML_MAX_NODES];
    yaml_node_t *lab_subnet_at, *wg_subnet_at, *hub_at, *client_at, *server_at, *nat_matrix_at;
    yaml_node_t *old_hub_at; /* wireguard.hub, deprecated */
    const char *hub, *client, *server, *old_hub;
    const char *hub_key; /* how messages name the key the hub came from */
};

static bool parse_image(struct ctx *c, yaml_node_t *n)
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

static bool parse_bridge(struct ctx *c, yaml_node_t *n)
{
    static const struct ml_yaml_key keys[] = {{"subnet", true}, {NULL, false}};
    yaml_node_t *v[ML_YAML_MAX_KEYS] = {0};

    if (!ml_yaml_read_mapping(&c->y, n, "bridge", keys, v) ||
        !ml_yaml_get_subnet(&c->y, v[0], "bridge.subnet", &c->topo->lab_subnet))
        return false;
    c->lab_subnet_at = v[0];
    return true;
}

static bool parse_defaults(struct ctx *c, yaml_node_t *n, unsigned *vcpus, unsigned *memory_mib)
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
static const char *node_label(struct ctx *c, yaml_node_t *n, size_t index)
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

static const char *nat_type_list(struct ctx *c)
{
    GString *s = g_string_new(NULL);
    for (unsigned i = 0; i < ML_NAT_TYPES; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", ml_nat_type_name((enum ml_nat_type)i));
    return ml_yaml_keep(&c->y, g_string_free(s, FALSE));
}

static bool get_nat_type(struct ctx *c, yaml_node_t *n, const char *what, enum ml_nat_type *ret)
{
    const char *s;
    if (!ml_yaml_get_string(&c->y, n, what, &s))
        return false;
    if (!ml_nat_type_parse(s, ret))
        return ml_yaml_fail(&c->y, n, "%s '%s' is not a NAT type; the types are %s", what,
                            ml_yaml_shown(&c->y, s), nat_type_list(c));
    return true;
}

static bool parse_node(struct ctx *c, yaml_node_t *n, size_t index, unsigned vcpus,
                       unsigned memory_mib)
{
    enum { NAME, ADDRESS, TUNNEL_ADDRESS, VCPUS, MEMORY_MIB, NAT, SECOND_ADDRESS };
    static const struct ml_yaml_key keys[] = {[NAME] = {"name", true},
                                              [ADDRESS] = {"address", true},
                                              [TUNNEL_ADDRESS] = {"tunnel_address", true},
                                              [VCPUS] = {"vcpus", false},
                                              [MEMORY_MIB] = {"memory_mib", false},
                                              [NAT] = {"nat", false},
                                              [SECOND_ADDRESS] = {"second_address", false},
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
    return true;
}

static bool parse_nodes(struct ctx *c, yaml_node_t *n, unsigned vcpus, unsigned memory_mib)
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

static bool parse_wireguard(struct ctx *c, yaml_node_t *n)
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
static bool parse_hub(struct ctx *c, yaml_node_t *root, yaml_node_t *at)
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
    if (c->old_hub_at)
        ml_warn("%s:%d:%d: wireguard.hub is deprecated; write `hub: %s` at the top level",
                c->y.file, ml_yaml_line(c->old_hub_at), ml_yaml_column(c->old_hub_at),
                ml_yaml_shown(&c->y, c->old_hub));
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

static bool parse_paths(struct ctx *c, yaml_node_t *n)
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

static bool parse_measure(struct ctx *c, yaml_node_t *n)
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

static bool subnets_overlap(const struct ml_subnet *a, const struct ml_subnet *b)
{
    uint32_t mask = ml_prefix_mask(MIN(a->prefix, b->prefix));
    return (ntohl(a->net.s_addr) & mask) == (ntohl(b->net.s_addr) & mask);
}

/* An address must be a host of its subnet, and no other node may have it. */
static bool check_address(struct ctx *c, size_t index, bool tunnel)
{
    const struct ml_topology *t = c->topo;
    const struct ml_node *node = &t->nodes[index];
    const struct ml_subnet *net = tunnel ? &t->wireguard.subnet : &t->lab_subnet;
    const char *key = tunnel ? "tunnel_address" : "address";
    const char *net_name = tunnel ? "wireguard subnet" : "lab subnet";
    struct in_addr a = tunnel ? node->tunnel_address : node->address;
    yaml_node_t *at = tunnel ? c->at[index].tunnel_address : c->at[index].address;
    uint32_t host = ntohl(a.s_addr), mask = ml_prefix_mask(net->prefix);

    if ((host & mask) != ntohl(net->net.s_addr))
        return ml_yaml_fail(&c->y, at, "node '%s': %s %s is outside the %s %s", node->name, key,
                            ml_yaml_ip_str(&c->y, a), net_name, ml_yaml_subnet_str(&c->y, net));
    if ((host & ~mask) == 0 || (host & ~mask) == ~mask)
        return ml_yaml_fail(&c->y, at, "node '%s': %s %s is the %s address of the %s %s",
                            node->name, key, ml_yaml_ip_str(&c->y, a),
                            (host & ~mask) ? "broadcast" : "network", net_name,
                            ml_yaml_subnet_str(&c->y, net));
    for (size_t j = 0; j < index; j++) {
        struct in_addr b = tunnel ? t->nodes[j].tunnel_address : t->nodes[j].address;
        if (a.s_addr == b.s_addr)
            return ml_yaml_fail(
                &c->y, at, "node '%s': %s %s is already used by node '%s' (line %d)", node->name,
                key, ml_yaml_ip_str(&c->y, a), t->nodes[j].name, t->nodes[j].line);
    }
    return true;
}

static bool check_nodes(struct ctx *c)
{
    const struct ml_topology *t = c->topo;

    for (size_t i = 0; i < t->n_nodes; i++) {
        const struct ml_node *node = &t->nodes[i];
        size_t domain_len = strlen("meshlab-.") + strlen(t->name) + strlen(node->name);

        for (size_t j = 0; j < i; j++)
            if (strcmp(node->name, t->nodes[j].name) == 0)
                return ml_yaml_fail(&c->y, c->at[i].name,
                                    "node name '%s' is already used by the node at line %d",
                                    node->name, t->nodes[j].line);
        if (domain_len > DOMAIN_NAME_MAX)
            return ml_yaml_fail(&c->y, c->at[i].name,
                                "node name '%s' makes the libvirt domain name 'meshlab-%s.%s' %zu "
                                "characters long; the limit is %d, so shorten the lab or node name",
                                node->name, t->name, node->name, domain_len, DOMAIN_NAME_MAX);
        if (!check_address(c, i, false) || !check_address(c, i, true))
            return false;
    }
    return true;
}

static const char *node_names(struct ctx *c)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < c->topo->n_nodes; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", c->topo->nodes[i].name);
    return ml_yaml_keep(&c->y, g_string_free(s, FALSE));
}

static bool find_role(struct ctx *c, yaml_node_t *at, const char *what, const char *name,
                      size_t *ret)
{
    int i = ml_topology_find_node(c->topo, name);
    if (i < 0)
        return ml_yaml_fail(&c->y, at, "%s '%s' is not a node; the nodes are %s", what,
                            ml_yaml_shown(&c->y, name), node_names(c));
    *ret = (size_t)i;
    return true;
}

static bool check_roles(struct ctx *c)
{
    struct ml_topology *t = c->topo;

    if (!find_role(c, c->hub_at, c->hub_key, c->hub, &t->hub) ||
        !find_role(c, c->client_at, "measure.client", c->client, &t->measure.client) ||
        !find_role(c, c->server_at, "measure.server", c->server, &t->measure.server))
        return false;
    if (t->measure.server == t->measure.client)
        return ml_yaml_fail(
            &c->y, c->server_at,
            "measure.server '%s' is the same node as measure.client; they must differ", c->server);
    if (t->hub == t->measure.client || t->hub == t->measure.server)
        return ml_yaml_fail(&c->y, c->hub_at,
                            "%s '%s' is also measure.%s; the hub must be a third node that "
                            "relays between client and server",
                            c->hub_key, c->hub, t->hub == t->measure.client ? "client" : "server");
    return true;
}

/* nat_matrix.types: 1..6 NAT types, none twice. */
static bool parse_nat_types(struct ctx *c, yaml_node_t *n)
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
static bool parse_nat_dataplanes(struct ctx *c, yaml_node_t *n)
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

static bool parse_nat_matrix(struct ctx *c, yaml_node_t *key, yaml_node_t *n)
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

/* Whether node i may be put behind a NAT: its own nat:, or as one of the matrix's two clients
 * when the matrix has a type other than none. */
static bool may_be_natted(const struct ml_topology *t, size_t i)
{
    if (t->nodes[i].nat != ML_NAT_NONE)
        return true;
    if (!t->nat_matrix.present || (i != t->measure.client && i != t->measure.server))
        return false;
    for (size_t k = 0; k < t->nat_matrix.n_types; k++)
        if (t->nat_matrix.types[k] != ML_NAT_NONE)
            return true;
    return false;
}

/* Whether a is a host of the lab subnet that no node has as its address. */
static bool free_lab_host(const struct ml_topology *t, uint32_t a)
{
    uint32_t mask = ml_prefix_mask(t->lab_subnet.prefix);
    if ((a & mask) != ntohl(t->lab_subnet.net.s_addr) || !(a & ~mask) || (a & ~mask) == ~mask)
        return false;
    for (size_t i = 0; i < t->n_nodes; i++)
        if (ntohl(t->nodes[i].address.s_addr) == a)
            return false;
    return true;
}

/* An address to suggest for the hub's second_address: its address + 10, or else the first free
 * host above it, or else the first free host of the subnet; NULL when every host is taken. */
static const char *suggest_second_address(struct ctx *c)
{
    const struct ml_topology *t = c->topo;
    uint32_t hub = ntohl(t->nodes[t->hub].address.s_addr);
    uint32_t net = ntohl(t->lab_subnet.net.s_addr), size = ~ml_prefix_mask(t->lab_subnet.prefix);
    uint32_t candidate = hub + 10;

    for (uint32_t k = 0; !free_lab_host(t, candidate) && k <= size; k++)
        candidate = net + ((hub - net + 1 + k) & size);
    return free_lab_host(t, candidate) ? ml_yaml_ip_str(&c->y, (struct in_addr){htonl(candidate)})
                                       : NULL;
}

/* The hub's second address: a free host of the lab subnet. */
static bool check_second_address(struct ctx *c)
{
    const struct ml_topology *t = c->topo;
    const struct ml_node *hub = &t->nodes[t->hub];
    const struct ml_subnet *net = &t->lab_subnet;
    yaml_node_t *at = c->at[t->hub].second_address;
    uint32_t a = ntohl(hub->second_address.s_addr), mask = ml_prefix_mask(net->prefix);

    if ((a & mask) != ntohl(net->net.s_addr))
        return ml_yaml_fail(&c->y, at, "node '%s': second_address %s is outside the lab subnet %s",
                            hub->name, ml_yaml_ip_str(&c->y, hub->second_address),
                            ml_yaml_subnet_str(&c->y, net));
    if ((a & ~mask) == 0 || (a & ~mask) == ~mask)
        return ml_yaml_fail(&c->y, at,
                            "node '%s': second_address %s is the %s address of the lab subnet %s",
                            hub->name, ml_yaml_ip_str(&c->y, hub->second_address),
                            (a & ~mask) ? "broadcast" : "network", ml_yaml_subnet_str(&c->y, net));
    for (size_t j = 0; j < t->n_nodes; j++)
        if (t->nodes[j].address.s_addr == hub->second_address.s_addr)
            return ml_yaml_fail(
                &c->y, at,
                "node '%s': second_address %s is already the address of node '%s' "
                "(line %d); %s",
                hub->name, ml_yaml_ip_str(&c->y, hub->second_address), t->nodes[j].name,
                t->nodes[j].line,
                suggest_second_address(c)
                    ? ml_yaml_fmt(&c->y, "choose a free address such as %s",
                                  suggest_second_address(c))
                    : ml_yaml_fmt(&c->y, "the lab subnet %s has no free address left; widen it",
                                  ml_yaml_subnet_str(&c->y, net)));
    return true;
}

/* 172.16.0.0/16 holds every NATed client's inside network (ml_nat_inside_net). */
static bool check_inside_nets(struct ctx *c, const char *cause)
{
    const struct ml_topology *t = c->topo;
    const struct ml_subnet inside = {.net.s_addr = htonl(0xac100000u), .prefix = 16};
    const struct {
        const struct ml_subnet *net;
        yaml_node_t *at;
        const char *key;
    } nets[] = {{&t->lab_subnet, c->lab_subnet_at, "bridge.subnet"},
                {&t->wireguard.subnet, c->wg_subnet_at, "wireguard.subnet"}};

    for (size_t k = 0; k < G_N_ELEMENTS(nets); k++)
        if (subnets_overlap(nets[k].net, &inside))
            return ml_yaml_fail(
                &c->y, nets[k].at,
                "%s %s overlaps 172.16.0.0/16, where %s puts each NATed client's inside "
                "network (172.16.<last octet of its address>.0/24); move %s elsewhere",
                nets[k].key, ml_yaml_subnet_str(&c->y, nets[k].net), cause, nets[k].key);
    for (size_t i = 0; i < t->n_nodes; i++)
        for (size_t j = 0; j < i && may_be_natted(t, i); j++)
            if (may_be_natted(t, j) &&
                ml_nat_inside_net(t, i).s_addr == ml_nat_inside_net(t, j).s_addr)
                return ml_yaml_fail(
                    &c->y, c->at[i].address,
                    "node '%s': address %s ends in the same number as node '%s''s %s, so "
                    "their NATs' inside networks would both be %s/24; a NATed client's "
                    "address needs its own last octet",
                    t->nodes[i].name, ml_yaml_ip_str(&c->y, t->nodes[i].address), t->nodes[j].name,
                    ml_yaml_ip_str(&c->y, t->nodes[j].address),
                    ml_yaml_ip_str(&c->y, ml_nat_inside_net(t, i)));
    return true;
}

/* nat and second_address on the nodes, against the roles: only clients sit behind a NAT, only
 * the hub has a second address, and a lab with a NAT needs it. */
static bool check_nat(struct ctx *c)
{
    const struct ml_topology *t = c->topo;
    const size_t hub = t->hub;
    yaml_node_t *cause_at = NULL;
    const char *cause = NULL; /* what asks for a NAT, as a message names it */

    for (size_t i = 0; i < t->n_nodes; i++) {
        const struct ml_node *node = &t->nodes[i];
        if (i == hub && node->nat != ML_NAT_NONE)
            return ml_yaml_fail(&c->y, c->at[i].nat,
                                "node '%s': nat %s on the hub: the hub is the public server; "
                                "only clients sit behind a NAT (remove nat or set it to none)",
                                node->name, ml_nat_type_name(node->nat));
        if (i != hub && c->at[i].second_address)
            return ml_yaml_fail(&c->y, c->at[i].second_address,
                                "node '%s': second_address is only for the hub '%s' (the NAT "
                                "probes' second destination); remove it here",
                                node->name, t->nodes[hub].name);
        if (node->nat != ML_NAT_NONE && !cause) {
            cause_at = c->at[i].nat_key;
            cause = ml_yaml_fmt(&c->y, "the nat of node '%s'", node->name);
        }
    }
    if (!cause && t->nat_matrix.present) {
        cause_at = c->nat_matrix_at;
        cause = "nat_matrix";
    }
    if (c->at[hub].second_address && !check_second_address(c))
        return false;
    if (!cause)
        return true;
    if (!c->at[hub].second_address && !suggest_second_address(c))
        return ml_yaml_fail(
            &c->y, cause_at,
            "%s needs a second lab address on the hub for the NAT probes and a second "
            "STUN destination, but the lab subnet %s has no free address left; widen "
            "bridge.subnet and add `second_address:` to node '%s' (line %d)",
            cause, ml_yaml_subnet_str(&c->y, &t->lab_subnet), t->nodes[hub].name,
            t->nodes[hub].line);
    if (!c->at[hub].second_address)
        return ml_yaml_fail(
            &c->y, cause_at,
            "%s needs a second lab address on the hub for the NAT probes and a second "
            "STUN destination; add `second_address: %s` to node '%s' (line %d), a free "
            "address in %s",
            cause, suggest_second_address(c), t->nodes[hub].name, t->nodes[hub].line,
            ml_yaml_subnet_str(&c->y, &t->lab_subnet));
    return check_inside_nets(
        c, ml_yaml_fmt(&c->y, "%s (line %zu)", cause, (size_t)cause_at->start_mark.line + 1));
}

static bool parse_root(struct ctx *c, yaml_node_t *root)
{
    enum { NAME, DESCRIPTION, IMAGE, BRIDGE, DEFAULTS, NODES, HUB, WIREGUARD, MEASURE, NAT_MATRIX };
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
    if (!parse_nodes(c, v[NODES], vcpus, memory_mib) || !parse_wireguard(c, v[WIREGUARD]) ||
        !parse_hub(c, root, v[HUB]) || !parse_measure(c, v[MEASURE]))
        return false;
    if (v[NAT_MATRIX] &&
        !parse_nat_matrix(c, ml_yaml_find_key(&c->y, root, "nat_matrix"), v[NAT_MATRIX]))
        return false;
    if (subnets_overlap(&t->lab_subnet, &t->wireguard.subnet))
        return ml_yaml_fail(&c->y, c->wg_subnet_at,
                            "wireguard.subnet %s overlaps the lab subnet %s",
                            ml_yaml_subnet_str(&c->y, &t->wireguard.subnet),
                            ml_yaml_subnet_str(&c->y, &t->lab_subnet));
    return check_nodes(c) && check_roles(c) && check_nat(c);
}

struct ml_topology *ml_topology_parse(const char *name, const char *text, size_t len, GError **err)
{
    g_autoptr(MlTopology) topo = NULL;
    yaml_document_t doc;
    yaml_node_t *root;
    struct ctx c = {.y = {.file = name, .doc = &doc, .err = err}};
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
    c.topo = topo;
    c.y.scratch = g_ptr_array_new_with_free_func(g_free);
    ok = parse_root(&c, root);
    ml_yaml_clear(&c.y);
    yaml_document_delete(&doc);
    return ok ? g_steal_pointer(&topo) : NULL;
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
