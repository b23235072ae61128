/* What the topology's parser (topology/load.c) hands its validation (topology/validate.c): the
 * topology read so far, the document it came from, and where each value was written, so that a
 * rule about how values relate is reported at the line that breaks it. Internal to topology/. */
#pragma once

#include <yaml.h>

#include "topology/topology.h"
#include "topology/yaml.h"

struct ml_load_ctx {
    struct ml_yaml y;
    struct ml_topology *topo;
    /* Where things were written, for messages about how they relate to each other. */
    struct {
        yaml_node_t *node, *name, *address, *tunnel_address, *nat_key, *nat, *second_address, *host;
    } at[ML_MAX_NODES];
    yaml_node_t *lab_subnet_at, *wg_subnet_at, *hub_at, *client_at, *server_at, *nat_matrix_at;
    yaml_node_t *old_hub_at; /* wireguard.hub, deprecated */
    yaml_node_t *hosts_at;   /* the hosts mapping */
    struct {
        yaml_node_t *name, *underlay;
    } host_at[ML_HOSTS_MAX];
    /* The roles as written; validation resolves them to node indices (topo->hub, ...). */
    const char *hub, *client, *server, *old_hub;
    const char *hub_key; /* how messages name the key the hub came from */
};
