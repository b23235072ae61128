/* Validation of a parsed topology: the rules about how its sections relate (addresses in their
 * subnets and unique, node names unique and short enough for libvirt, the hub, client and
 * server distinct nodes, NAT and second_address against the roles, subnets apart). Each
 * section's own shape and ranges are the parser's (topology/load.c); the ports the dataplanes
 * derive from wireguard.listen_port are checked once the registry is known
 * (ml_paths_resolve in dataplanes/registry.c, the one port check). */
#pragma once

#include <stdbool.h>

#include "topology/load_ctx.h"

/* Checks c->topo, parsed from c->y's document, and resolves hub, measure.client and
 * measure.server to node indices; false with c->y.err set to "FILE:LINE:COL: rule" at the
 * first value that breaks a rule. */
bool ml_topology_validate(struct ml_load_ctx *c);
