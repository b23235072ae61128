/* Validation of a parsed topology (topology/validate.h): the rules across its sections, each
 * reported at the value that breaks it. */
#include "topology/validate.h"
#include "topology/uri.h"
#include "topology/yaml.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

/* libvirt objects are named "meshlab-<lab>-<node>"; keep them short enough to be safe as
 * domain, volume and file names everywhere. */
#define DOMAIN_NAME_MAX 64

static bool subnets_overlap(const struct ml_subnet *a, const struct ml_subnet *b)
{
    uint32_t mask = ml_prefix_mask(MIN(a->prefix, b->prefix));
    return (ntohl(a->net.s_addr) & mask) == (ntohl(b->net.s_addr) & mask);
}

/* An address must be a host of its subnet, and no other node may have it. */
static bool check_address(struct ml_load_ctx *c, size_t index, bool tunnel)
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

static bool check_nodes(struct ml_load_ctx *c)
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

static const char *node_names(struct ml_load_ctx *c)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < c->topo->n_nodes; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", c->topo->nodes[i].name);
    return ml_yaml_keep(&c->y, g_string_free(s, FALSE));
}

static bool find_role(struct ml_load_ctx *c, yaml_node_t *at, const char *what, const char *name,
                      size_t *ret)
{
    int i = ml_topology_find_node(c->topo, name);
    if (i < 0)
        return ml_yaml_fail(&c->y, at, "%s '%s' is not a node; the nodes are %s", what,
                            ml_yaml_shown(&c->y, name), node_names(c));
    *ret = (size_t)i;
    return true;
}

static bool check_roles(struct ml_load_ctx *c)
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

/* A pairs-K cell runs its K flows around the ring of the hub's clients (ml_pass_ring: each
 * client sends to the next), so it needs K clients besides the hub, and K >= 2 a client that is
 * neither measure.client nor measure.server only from K = 3. */
static bool check_pairs(struct ml_load_ctx *c)
{
    const struct ml_topology *t = c->topo;
    size_t clients = t->n_nodes - 1;
    for (size_t i = 0; i < t->measure.n_profiles; i++) {
        const struct ml_profile *p = &t->measure.profiles[i];
        for (size_t k = 0; k < p->n_cells; k++) {
            const struct ml_cell *cell = &p->cells[k];
            if (cell->kind != ML_CELL_PAIRS || cell->pairs <= clients)
                continue;
            yaml_node_t at = {.start_mark = {.line = cell->line0, .column = cell->column0}};
            return ml_yaml_fail(
                &c->y, &at,
                "measure.profiles.%s.matrix: cell '%s' runs %u flows at once, each from one of "
                "the hub's clients to the next, and this lab has %zu client%s besides the hub "
                "'%s'; add nodes or use pairs-%zu",
                p->name, cell->name, cell->pairs, clients, clients == 1 ? "" : "s",
                t->nodes[t->hub].name, clients);
        }
    }
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
static const char *suggest_second_address(struct ml_load_ctx *c)
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
static bool check_second_address(struct ml_load_ctx *c)
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
static bool check_inside_nets(struct ml_load_ctx *c, const char *cause)
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
static bool check_nat(struct ml_load_ctx *c)
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

/* hosts: every node on one of them, every host carrying a node, each host another libvirt,
 * and, for a lab over several, each with an underlay address of its own. */
static bool check_hosts(struct ml_load_ctx *c)
{
    const struct ml_topology *t = c->topo;
    if (t->n_hosts == 0)
        return true;
    for (size_t i = 0; i < t->n_nodes; i++)
        if (!c->at[i].host)
            return ml_yaml_fail(&c->y, c->at[i].node,
                                "node '%s': the topology names hosts, so every node says which "
                                "one it runs on; add host: %s (or another of hosts)",
                                t->nodes[i].name, t->hosts[0].name);
    for (size_t h = 0; h < t->n_hosts; h++) {
        const struct ml_host *host = &t->hosts[h];
        size_t carried = 0;
        for (size_t i = 0; i < t->n_nodes; i++)
            carried += t->nodes[i].host == h;
        if (!carried)
            return ml_yaml_fail(&c->y, c->host_at[h].name,
                                "host '%s' carries no node; put a node on it (host: %s) or remove "
                                "it from hosts",
                                host->name, host->name);
        for (size_t j = 0; j < h; j++)
            if (ml_uri_same(t->hosts[j].uri, host->uri))
                return ml_yaml_fail(&c->y, c->host_at[h].name,
                                    "host '%s' has the URI of host '%s' (line %d): a host is one "
                                    "libvirt; put the nodes of both on one host",
                                    host->name, t->hosts[j].name, t->hosts[j].line);
        if (t->n_hosts == 1)
            continue;
        uint32_t a = ntohl(host->underlay.s_addr);
        yaml_node_t *at = c->host_at[h].underlay ? c->host_at[h].underlay : c->host_at[h].name;
        if (!c->host_at[h].underlay)
            return ml_yaml_fail(&c->y, at,
                                "host '%s': a lab over several hosts stitches their bridges by "
                                "VXLAN between their underlay addresses; give hosts.%s.underlay, "
                                "the address the other hosts reach it at",
                                host->name, host->name);
        if (a == 0 || a == 0xffffffffu || (a >> 28) == 0xe)
            return ml_yaml_fail(&c->y, at,
                                "host '%s': underlay %s is no unicast address; give the address "
                                "the other hosts reach it at",
                                host->name, ml_yaml_ip_str(&c->y, host->underlay));
        for (size_t j = 0; j < h; j++)
            if (t->hosts[j].underlay.s_addr == host->underlay.s_addr)
                return ml_yaml_fail(&c->y, at, "host '%s': underlay %s is host '%s''s (line %d)",
                                    host->name, ml_yaml_ip_str(&c->y, host->underlay),
                                    t->hosts[j].name, t->hosts[j].line);
    }
    return true;
}

bool ml_topology_validate(struct ml_load_ctx *c)
{
    const struct ml_topology *t = c->topo;

    if (subnets_overlap(&t->lab_subnet, &t->wireguard.subnet))
        return ml_yaml_fail(&c->y, c->wg_subnet_at,
                            "wireguard.subnet %s overlaps the lab subnet %s",
                            ml_yaml_subnet_str(&c->y, &t->wireguard.subnet),
                            ml_yaml_subnet_str(&c->y, &t->lab_subnet));
    return check_nodes(c) && check_roles(c) && check_pairs(c) && check_nat(c) && check_hosts(c);
}
