/* The ports every lab has whatever it measures (ssh, the NAT probe, iperf3), and the type of
 * the lab's port table: each dataplane adds its own transports through its ports hook
 * (dataplanes/dataplane.h, ml_dataplane_ports), and the guest firewall, the dataplanes'
 * isolation rules and the renderers read the whole table. No two entries may share a protocol
 * and port: the one check of that is ml_paths_resolve's (dataplanes/registry.c), since only the
 * registry knows every dataplane's ports; topology/validate.c cannot see them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "topology/topology.h"

#define ML_PORT_SSH 22
#define ML_PORT_NAT_PROBE 3479     /* the NAT probe on the hub (guestnet/nat.h): P1 */
#define ML_PORT_NAT_PROBE_ALT 3480 /* ... and its second port, P2 */
#define ML_PORT_IPERF3 5201        /* iperf3's default, which the measurements use */
#define ML_PORT_WIREGUARD_DEFAULT 51820 /* wireguard.listen_port unless the topology says */

#define ML_PORTS_MAX 32

enum ml_proto { ML_PROTO_UDP, ML_PROTO_TCP };
const char *ml_proto_name(enum ml_proto p); /* "udp", "tcp" */

struct ml_port {
    const char *what; /* "WireGuard", "nebula", "tailscaled", "STUN", ... */
    enum ml_proto proto;
    unsigned port;
    /* The guest firewall accepts new connections to it on the lab NIC. tailscaled's port is
     * not open, as in the seed: peers reach it through the holes their own packets punch. */
    bool open;
    /* The dataplane whose own transport this is (its tunnel packets, relay or control
     * connections), or NULL for a port that is not a transport (ssh, iperf3). A transport
     * may use the lab NIC only, never another dataplane's tunnel. */
    const char *dataplane;
    /* A relay the clients reach by UDP on the hub (tailscaled's peer relay): the relay policy
     * drops it at the hub, so that forcing a dataplane's relay forces its relay over TCP
     * (DERP), and the peer-relay policy lets it in (guestnet/nft.h). */
    bool relay_server;
};

/* The ports every lab has, in the order the firewall lists them; returns how many. */
size_t ml_ports(const struct ml_topology *topo, struct ml_port ret[ML_PORTS_MAX]);
