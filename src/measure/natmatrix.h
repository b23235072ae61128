/* NAT traversal as a lesson: the NAT each client sits behind, observed before any dataplane
 * runs (nat_observed), and the NAT matrix: every unordered pair of the topology's NAT types
 * for each dataplane, repeated, without rebooting. A cell's outcome is what the dataplane found
 * by itself (direct, relay) or failed, verified as a forced path is: its own view and the hub's
 * counters must agree. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "dataplanes/path.h"
#include "virt/lab.h"

/* In up, before the dataplanes: each NATed client's namespace and NAT, and every NAT type the
 * lab uses observed behind measure.client (a configured type on the server behind the server).
 * The observations go into the lab's state ("nat" -> "observed"); a NAT that does not behave as
 * its type says fails up with what was seen. Nothing to do without NATs. */
bool ml_nat_lab_up(struct ml_lab *lab, GError **err);

/* The nat_observed object recorded by up, or NULL when the lab has no NAT (a new reference). */
struct json_object *ml_nat_observed(struct ml_lab *lab);

/* Pure: the outcome of one repeat, from the polls of the dataplane's view (a JSON array of
 * {"t", "out"}) and whether the check after them passed, and what it found. Fills the repeat
 * object's outcome, seconds_to_direct, timeline and reason. */
void ml_nat_repeat_judge(const struct ml_topology *topo, const struct ml_auto_ops *a,
                         struct json_object *polls, bool check_ok, const char *check_found,
                         const char *check_evidence, struct json_object *rep);

/* Pure: a cell's outcome from its repeats: the most frequent (direct wins a tie with relay,
 * either wins one with failed), the counts, the median time to direct and hub bytes. */
void ml_nat_cell_summarise(struct json_object *cell);

/* Runs the topology's nat_matrix and returns results.json's nat_matrix array (NULL with err
 * only when the lab broke or on Ctrl-C). capture: a pcap of every repeat from the hub's and the
 * clients' taps under captures/nat/. Puts each client back behind its configured NAT at the
 * end, with its dataplanes running. */
struct json_object *ml_nat_matrix_run(struct ml_lab *lab, bool capture, GError **err);
