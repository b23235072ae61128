/* nftables inside the guests: the seed's guest firewall, and the path
 * policies that force traffic onto the direct path or the hub's relay. */
#pragma once

#include <glib.h>

#include "topology/ports.h"
#include "topology/topology.h"

enum ml_policy {
    ML_POLICY_DIRECT,     /* the firewall alone: peers may talk UDP to each other */
    ML_POLICY_RELAY,      /* clients drop UDP arriving on the lab NIC except from the hub, and the
                           * hub drops what reaches its UDP relay servers (ml_port.relay_server) */
    ML_POLICY_PEER_RELAY, /* clients as under RELAY; the hub's UDP relay servers reachable */
};
const char *ml_policy_name(enum ml_policy p);

/* The guest firewall, table inet meshlab_fw, for every guest, from the n ports of the port
 * table the caller hands down (the fixed ports of ports.h and each dataplane's own): policy
 * drop on the lab NIC, then established traffic, ICMP echo and each open port (ssh,
 * WireGuard's listen_port, Headscale's HTTPS and STUN, iperf3, nebula). Tunnel interfaces are
 * trusted, except that no dataplane's transport may arrive or be forwarded through anything
 * but the lab NIC: chain transport drops them, from the input and forward hooks. */
char *ml_nft_firewall(const struct ml_port *ports, size_t n);
/* One line for the progress output: what the firewall built from the same ports lets in. */
char *ml_nft_firewall_summary(const struct ml_port *ports, size_t n);

/* The path policy for node i, table inet meshlab_path, replacing any earlier one: a script for
 * `nft -f -`. For DIRECT it only clears; for the hub too, but under RELAY, which drops every UDP
 * relay server of the n ports (the lab's port table) there. */
char *ml_nft_policy(const struct ml_topology *topo, size_t node, enum ml_policy policy,
                    const struct ml_port *ports, size_t n);
