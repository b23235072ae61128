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

/* Pure: the order one sweep's rounds visit ng policy groups, as group indices into ret (rounds *
 * ng of them): round 1 from group `first` (the one in force) on, cyclically, round 2 the same
 * groups walked back, round 3 forward again...: serpentine, so that each round starts with the
 * group the round before ended with, and no switch of the policy is spent between rounds. */
void ml_sweep_visits(size_t ng, unsigned rounds, size_t first, size_t *ret);

/* Pure: where a sweep of full full-speed rounds puts fixed fixed-rate ones: *ret_fixed_from, the
 * round of the first fixed-rate pass (0: none), and *ret_rounds in all. They run in the last
 * rounds, each in the same visit of its group as that round's full-speed passes (no policy
 * switch of their own), from round 2 on at the earliest: the rate is a fraction of the slowest
 * path's median over the rounds before. The seed lab's full profile (3 rounds, 1 fixed): the
 * fixed pass in round 3, 3 rounds; dataplanes.yaml's (2 and 2): rounds 2 and 3, 3 rounds. */
void ml_sweep_plan(unsigned full, unsigned fixed, unsigned *ret_rounds, unsigned *ret_fixed_from);

/* Pure: the order the sweeps walk ng policy groups, costs[g] what entering group g costs (in
 * settles: one per path, one more per path whose settle changes a daemon's state and back), as
 * group indices into ret_order: the two costliest at the two ends, the others inside, the
 * cheapest in the middle. The serpentine rounds (ml_sweep_visits) enter an inner group in every
 * round and an end group in every other, and leave them as often: the seed lab's peer relay
 * (Headscale's grant given on entry, withdrawn on leaving) at an end, DERP (a path to wait for)
 * in the middle; dataplanes.yaml's relay group (nebula's and tinc's restarts) at an end, the
 * peer relay inside. Fewer than three groups keep their order; of equal costs, the one given first
 * is taken first. */
void ml_groups_arrange(size_t ng, const size_t *costs, size_t *ret_order);

/* One check of ops as the lab stands now (its NATs, its daemons): the probe's pings from the
 * client while the hub's NIC is counted, the dataplane's view, the verdict (*ret_ok). The check
 * object of results.json; NULL with err when it could not run. */
struct json_object *ml_measure_check(struct ml_lab *lab, const struct ml_path_ops *ops,
                                     const char *when, bool *ret_ok, GError **err);

/* What a check's hub counter tolerates on a quiet path: 5 % of the probe's bytes (PROBE_COUNT
 * answered pings of PROBE_SIZE, each an IPv4 packet both ways). A second in which the hub's NIC
 * moves more than this with nothing sent could swing a check either way by itself. */
long long ml_check_quiet_bytes(void);

/* Pure: the index in per_s[n] (the hub's bytes in each of n seconds) just past the first run of
 * `run` seconds each under `limit`; 0 when there is none yet. */
size_t ml_quiet_run_end(const long long *per_s, size_t n, size_t run, long long limit);

/* Waits, up to limit_s, until the hub's NIC moves under ml_check_quiet_bytes() in each of
 * ML_QUIET_RUN_S consecutive seconds: a check's idle baseline is "as long, just before", which
 * holds only while what crosses the hub with nothing sent is steady (a daemon's start-up, such as
 * tinc's PMTU discovery after a restart, is not). *ret_waited_s: how long it took; false only on
 * a libvirt error. *ret_quiet: false when limit_s passed first (the check then judges as it
 * stands, with its evidence). */
#define ML_QUIET_RUN_S 3
bool ml_measure_wait_quiet(struct ml_lab *lab, double limit_s, double *ret_waited_s,
                           bool *ret_quiet, GError **err);

/* The environment object: host, hypervisor, accelerator, image, guest OS and tools. */
struct json_object *ml_measure_environment(struct ml_lab *lab);
