/* nftables inside the guests: the seed's guest firewall, and the path
 * policies that force traffic onto the direct path or the hub's relay. */
#pragma once

#include <glib.h>

#include "topology.h"

/* The lab NIC inside every guest (net.ifnames=0, and set-name in the seed). */
#define ML_LAB_NIC "eth0"

enum ml_policy {
    ML_POLICY_DIRECT,  /* the firewall alone: peers may talk UDP to each other */
    ML_POLICY_RELAY,   /* clients drop UDP on the lab NIC except to and from the hub */
};
const char *ml_policy_name(enum ml_policy p);

/* The seed's guest firewall, table inet meshlab_fw, for every guest: policy
 * drop on the lab NIC, then established traffic, ICMP echo, TCP 22, UDP 51820,
 * TCP 443, UDP 3478; plus what meshlab's own measurements and the nebula
 * lighthouse need (TCP 5201 for iperf3, UDP 4242). Tunnel interfaces are
 * trusted: their traffic already passed the lab NIC as ciphertext. */
char *ml_nft_firewall(void);

/* The path policy for node i, table inet meshlab_path, replacing any earlier
 * one: a script for `nft -f -`. For the hub and for DIRECT it only clears. */
char *ml_nft_policy(const struct ml_topology *topo, size_t node, enum ml_policy policy);
