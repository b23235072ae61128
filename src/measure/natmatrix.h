/* NAT traversal as a lesson: the NAT each client sits behind, observed before any dataplane
 * runs (nat_observed), and the NAT matrix: every unordered pair of the topology's NAT types
 * for each dataplane, repeated, without rebooting. A cell's outcome is what the dataplane found
 * by itself (direct, relay) or failed, verified as a forced path is: its own view and the hub's
 * counters must agree. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "dataplanes/dataplane.h"
#include "virt/lab.h"

/* In up, before the dataplanes: each NATed client's namespace and NAT, and every NAT type the
 * lab uses observed behind measure.client (a configured type on the server behind the server).
 * The observations go into the lab's state ("nat" -> "observed"); a NAT that does not behave as
 * its type says fails up with what was seen. Nothing to do without NATs. */
bool ml_nat_lab_up(struct ml_lab *lab, GError **err);

/* The nat_observed object recorded by up, or NULL when the lab has no NAT (a new reference). */
struct json_object *ml_nat_observed(struct ml_lab *lab);

/* The watch a repeat runs on the client: Python 3 on the stdin of ml_nat_watch_cmd's
 * `python3 -`. It pings target through prefix (the client's NAT namespace: "ip netns exec
 * mlnat " or "") and runs view every half second for window_s seconds, or until direct_re matched
 * two views in a row, keeping each view whole while all of them fit in budget bytes of JSON text.
 * It prints {"polls": [{"t": seconds, "out": text}], "ping": text, "cut": null or why it ended
 * early}. */
extern const char ml_nat_watch_py[];
char *ml_nat_watch_cmd(const char *target, unsigned window_s, const char *direct_re,
                       const char *prefix, const char *view, size_t budget);

/* The budget of a repeat's views. The watch's reply crosses the guest agent as base64 inside one
 * libvirt string: at most 4 MiB (REMOTE_STRING_MAX, libvirt src/remote/remote_protocol.x) within
 * an agent reply of at most 10 MiB (QEMU_AGENT_MAX_RESPONSE, src/qemu/qemu_agent.c). 2.5 MiB of
 * JSON text is 3.3 MiB of base64. A one-peer `tailscale status --json` is about 4.5 kB of JSON
 * text (tests/data/samples/tailscale: 5.6 kB raw with two peers, 6.2 kB as a JSON string), so
 * about 580 views fit: the longest window, 300 s, at two views a second. */
#define ML_NAT_WATCH_BUDGET ((size_t)5 << 19)

/* Pure: the dataplane's view at a repeat's check in a few words, "PATH: direct to REMOTE",
 * "PATH: relayed by RELAY" or "PATH: no tunnel", read from the check's own outputs
 * (chk.own[a->view_own]); NULL when there is none or it does not parse. */
char *ml_nat_repeat_view(const struct ml_topology *topo, const struct ml_auto_ops *a,
                         const char *path, struct json_object *chk);

/* Pure: the outcome of one repeat, from what the watch printed (its JSON, parsed; anything
 * else, from a guest, is checked first and fails the repeat with why) and whether the check
 * after it passed, and what it found. Fills the repeat object's outcome, seconds_to_direct,
 * timeline and reason (also set on a repeat whose watch ended early). */
void ml_nat_repeat_judge(const struct ml_topology *topo, const struct ml_auto_ops *a,
                         struct json_object *watch, bool check_ok, const char *check_found,
                         const char *check_evidence, struct json_object *rep);

/* The path policy the NAT matrix loads before its cells: direct, the firewall alone, whatever
 * path was measured last (a relay policy drops the clients' UDP). Named "nat-matrix": its
 * rulesets are saved under RUN_DIR/rulesets/nat-matrix/. */
extern const struct ml_path_ops ml_nat_matrix_policy;

/* Pure: a cell's outcome from its repeats: the most frequent (direct wins a tie with relay,
 * either wins one with failed), the counts, the median time to direct and hub bytes. */
void ml_nat_cell_summarise(struct json_object *cell);

/* Runs the topology's nat_matrix and returns results.json's nat_matrix array (NULL with err
 * only when the lab broke or on Ctrl-C). capture: a pcap of every repeat from the hub's and the
 * clients' taps under captures/nat/. Puts each client back behind its configured NAT at the
 * end, with its dataplanes running. */
struct json_object *ml_nat_matrix_run(struct ml_lab *lab, bool capture, GError **err);
