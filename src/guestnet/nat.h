/* NAT inside a client guest, without extra guests: the client's dataplane daemons and
 * measurement endpoints run in a network namespace (ML_NAT_NETNS) with a private address,
 * behind a veth; the guest's root namespace is the NAT towards the lab bridge, built with
 * nftables (table ip meshlab_nat). Switching the type needs no reboot: the rules are swapped
 * and conntrack flushed; the caller restarts the daemons.
 *
 * The NAT is observed, not assumed: a STUN-style probe from the inside to two hub ports and
 * the hub's second address shows the mapping and whether the port is kept; sends from a new
 * hub port and a new hub address show the filtering (RFC 4787 words). */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "topology/topology.h"
#include "virt/lab.h"

#define ML_NAT_NETNS "mlnat"     /* the inside namespace on a NATed client */
#define ML_NAT_VETH_OUT "mlnat0" /* the veth's end in the root namespace (.1) */
#define ML_NAT_VETH_IN "nat0"    /* its end inside the namespace (.2) */

/* RFC 4787's words for mapping (section 4.1) and filtering (section 5). */
enum ml_nat_dependence {
    ML_NAT_ENDPOINT_INDEPENDENT,
    ML_NAT_ADDRESS_DEPENDENT,
    ML_NAT_ADDRESS_AND_PORT_DEPENDENT,
    ML_NAT_DEPENDENCE_UNKNOWN,
};
/* "endpoint-independent", "address-dependent", "address-and-port-dependent", "unknown". */
const char *ml_nat_dependence_name(enum ml_nat_dependence d);

struct ml_nat_behaviour {
    enum ml_nat_dependence mapping;
    enum ml_nat_dependence filtering;
    bool port_preserved;
};

/* What a NAT of this type must show the probe. For none that is the guest firewall's
 * filtering: address-and-port-dependent (see nat.c). */
struct ml_nat_behaviour ml_nat_expected(enum ml_nat_type type);

/* Pure: table ip meshlab_nat for node behind type (for none: only its deletion), as loaded by
 * `nft -f`. */
char *ml_nat_ruleset(const struct ml_topology *topo, size_t node, enum ml_nat_type type);
/* Pure: the guest script that makes the namespace, the veth, their addresses and routes and
 * turns on forwarding; idempotent. */
char *ml_nat_setup_script(const struct ml_topology *topo, size_t node);
/* "ip netns exec mlnat " for a NATed type, "" for none: what a command that must run where the
 * client's daemons run is prefixed with. */
const char *ml_nat_exec_prefix(enum ml_nat_type type);
/* The same script for a namespace named netns (tests build several side by side). */
char *ml_nat_setup_script_in(const struct ml_topology *topo, size_t node, const char *netns);

/* The probe's halves, python3 scripts run as `python3 - ARGS` with the script on stdin: the
 * hub's in its root namespace, the client's where its daemons run (ml_nat_exec_prefix). ARGS is
 * ml_nat_probe_args: "A1 A2 P1 P2", the hub's two addresses and ML_PORT_NAT_PROBE{,_ALT}. The
 * client's may be given two more, its own ports (default ML_NAT_PROBE_PORTS). */
const char *ml_nat_probe_hub_script(void);
const char *ml_nat_probe_client_script(void);
char *ml_nat_probe_args(const struct ml_topology *topo);
#define ML_NAT_PROBE_PORTS "40001 40002" /* the inside's ports: mapping, then filtering test */

/* Puts node behind type: the namespace (when not there yet), the ruleset, conntrack flushed
 * on node. Saves the ruleset as RUN_DIR/rulesets/nat/NODE-TYPE.nft. */
bool ml_nat_apply(struct ml_lab *lab, size_t node, enum ml_nat_type type, GError **err);

/* Pure: reads the inside probe's output (JSON, see nat.c) into what it shows; appends what was
 * seen to seen ("mapped 172.16.11.2:40001 to 192.0.2.11:40001 towards 192.0.2.10:3479, ..."). */
bool ml_nat_probe_parse(const char *output, struct ml_nat_behaviour *ret, GString *seen,
                        GError **err);

/* Puts node behind type, probes it from the hub and returns the nat_observed entry:
 * {"node", "type", "mapping", "filtering", "port_preserved", "expected": {...},
 *  "as_configured": bool, "seen": "..."}. NULL (err set) only when the probe could not run. */
struct json_object *ml_nat_observe(struct ml_lab *lab, size_t node, enum ml_nat_type type,
                                   GError **err);
