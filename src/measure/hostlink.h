/* A lab over several hosts: what its underlay is, measured between the hosts themselves before
 * the paths are (each host's shell, hostshell.h): for each pair of hosts the round trip between
 * their underlay addresses (ping), the MTU of the route, and a plain TCP ceiling across it
 * (iperf3, one stream, a few seconds), the figure no path through the lab can pass. The results'
 * "underlay" object; and, per pass of a path through a hub whose two ends are on other hosts, the
 * underlay's bytes per payload byte: every frame at the hub's NIC crossed the underlay, VXLAN's
 * 50 bytes on top (ML_VXLAN_OVERHEAD). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "virt/lab.h"

/* Pure: the underlay's bytes per payload byte of a pass through the hub, from the hub NIC's bytes
 * and frames each way (the probe's own taken out, as the hub factor does) and the payload: each
 * frame crossed the underlay once, ML_VXLAN_OVERHEAD bytes more. NAN for no payload. */
double ml_hostlink_factor(long long rx_bytes, long long tx_bytes, long long rx_packets,
                          long long tx_packets, long long probe_bytes, long long probe_packets,
                          long long payload);
/* Whether every frame at the hub's NIC of a path between the measuring client and server crosses
 * the underlay: a lab over several hosts whose client and server are both off the hub's host. */
bool ml_hostlink_hub_crossed(const struct ml_topology *t);

/* Pure: the script that runs ping from self to peer on a host (count pings, 0.2 s apart). */
char *ml_hostlink_ping_script(struct in_addr self, struct in_addr peer, unsigned count);
/* Pure: the scripts of the TCP ceiling: an iperf3 server bound to peer on its host, one
 * connection then gone (at most timeout_s), and the client on self's host that tries until the
 * server is up, for seconds, and prints iperf3's JSON. */
char *ml_hostlink_iperf_server_script(struct in_addr peer, unsigned port, unsigned timeout_s);
char *ml_hostlink_iperf_client_script(struct in_addr self, struct in_addr peer, unsigned port,
                                      unsigned seconds);

/* The results' "underlay": the hosts (URI without credentials, underlay address, route, MTU,
 * their nodes), the lab's MTU, and each pair's round trip and TCP ceiling (null with why_not when
 * a host lacks ping or iperf3, or the measurement failed). NULL for a one-host lab. */
struct json_object *ml_hostlink_measure(struct ml_lab *lab);
