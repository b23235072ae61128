/* The measurement matrix: for each path, a verification probe before, every
 * metric of the table (measure/metrics.h: ping, the byte-counting transfer, the
 * throughput passes), a probe after. A path
 * whose checks fail yields no numbers, only the evidence. */
#pragma once

#include <json-c/json.h>

#include "dataplanes/dataplane.h"
#include "virt/lab.h"

/* Measures every path the topology names with the given profile and returns
 * the paths[] array of the results document. Fails only when the lab itself
 * broke (a guest stopped answering, Ctrl-C); a path that fails its checks is
 * recorded as failed and the next one is measured. */
struct json_object *ml_measure_paths(struct ml_lab *lab, const struct ml_profile *profile,
                                     GError **err);

/* Pure: the order one sweep visits ng policy groups, as group indices into ret ((rounds + 2) *
 * ng of them): the setup of every group (its policy, checks, idle baseline) starting with group
 * `first` (the one in force), then each of the rounds visiting every group in the same cyclic
 * order (round 1 of every group, then round 2 ...), then the checks after. The rounds start
 * with the group the setup ended with, the checks after with the group the last round ended
 * with: neither costs a switch of the policy. */
void ml_sweep_visits(size_t ng, unsigned rounds, size_t first, size_t *ret);

/* One check of ops as the lab stands now (its NATs, its daemons): the probe's pings from the
 * client while the hub's NIC is counted, the dataplane's view, the verdict (*ret_ok). The check
 * object of results.json; NULL with err when it could not run. */
struct json_object *ml_measure_check(struct ml_lab *lab, const struct ml_path_ops *ops,
                                     const char *when, bool *ret_ok, GError **err);

/* The environment object: host, hypervisor, accelerator, image, guest OS and tools. */
struct json_object *ml_measure_environment(struct ml_lab *lab);
