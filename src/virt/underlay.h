/* A lab over several hosts: the hosts' bridges stitched into one by unicast VXLAN between their
 * underlay addresses, made and removed by each host's shell (hostshell.h: sh here, the URI's own
 * SSH there), since libvirt's API has no VXLAN. Each host has one VXLAN device, mlx<hash><k>,
 * bound to its underlay address at UDP port ML_VXLAN_PORT_BASE + k, without learning, with one
 * all-zeros forwarding entry per peer (head-end replication: what the bridge floods reaches every
 * peer, and unicast too, which a lab of a few guests can afford). Every device carries the lab's
 * hash in its name, so that down finds it on each host without the topology.
 *
 * What one machine cannot show: two "hosts" that are one kernel stitch over loopback, whose MTU
 * is 65536 and whose "wire" is memory; a real underlay adds a NIC, a switch and its MTU. */
#pragma once

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>

#include "topology/plan.h"

/* What a host says of its way to a peer: the device the route leaves by, and its MTU. */
struct ml_underlay_route {
    char dev[32];
    unsigned mtu;
};

/* Pure: the script that checks that self is one of the host's addresses, that ip(8) and
 * bridge(8) are there, and prints the route from self to peer as "dev DEV mtu MTU". */
char *ml_underlay_route_script(struct in_addr self, struct in_addr peer);
/* Pure: reads that line; false with err (naming host) otherwise. */
bool ml_underlay_route_parse(const char *out, const char *host, struct ml_underlay_route *ret,
                             GError **err);
/* Pure: the lab's MTU over an underlay of mtu: 1500, or less by VXLAN's 50 bytes where the
 * underlay cannot carry 1550. 0 when even 576 does not fit. */
unsigned ml_underlay_lab_mtu(unsigned underlay_mtu);

/* Pure: the script that stitches host k's bridge to every other host's (replacing a device of
 * its name left before), its VXLAN device at mtu. */
char *ml_underlay_stitch_script(const struct ml_plan *plan, size_t k, unsigned mtu);
/* Pure: the script that removes every VXLAN device of lab on a host, printing "removed DEV" for
 * each. */
char *ml_underlay_unstitch_script(const char *lab, bool foreign);

/* Runs script on uri's host (hostshell.h) within timeout_s; its stdout into *ret_out (may be
 * NULL). The error names the host (shown: its name in the topology) and what the script said. */
bool ml_underlay_run(const char *uri, const char *shown, const char *script, double timeout_s,
                     char **ret_out, GError **err);
