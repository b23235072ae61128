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

/* One check of ops as the lab stands now (its NATs, its daemons): the probe's pings from the
 * client while the hub's NIC is counted, the dataplane's view, the verdict (*ret_ok). The check
 * object of results.json; NULL with err when it could not run. */
struct json_object *ml_measure_check(struct ml_lab *lab, const struct ml_path_ops *ops,
                                     const char *when, bool *ret_ok, GError **err);

/* The environment object: host, hypervisor, accelerator, image, guest OS and tools. */
struct json_object *ml_measure_environment(struct ml_lab *lab);
