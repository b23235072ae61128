/* The nodes' WAN profiles put in force on a lab (guestnet/wan.h says how on one guest) and
 * proven to be, before anything is measured through them.
 *
 * Proven: each guest's qdisc is read back (`tc -j qdisc show`) and compared with its profile,
 * and every client's idle round trip to the hub is measured before and after: it must have
 * grown by the two profiles' delays, within ML_WAN_RTT_TOLERANCE_PERCENT (or
 * ML_WAN_RTT_TOLERANCE_MIN_MS, what an emulated guest's own round trip wanders by). A profile
 * not in force fails the run. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "virt/lab.h"

#define ML_WAN_RTT_TOLERANCE_PERCENT 10.0
#define ML_WAN_RTT_TOLERANCE_MIN_MS 2.0
/* The pings of each round trip measured, and their interval. */
#define ML_WAN_PINGS 20
#define ML_WAN_PING_INTERVAL_S 0.1

/* Pure: whether a round trip measured_ms, baseline_ms before the profiles, shows added_ms more:
 * within the tolerance above. *ret_tolerance_ms: the tolerance used. */
bool ml_wan_rtt_within(double baseline_ms, double added_ms, double measured_ms,
                       double *ret_tolerance_ms);

/* Puts set[i] in force on node i, for every node, and proves it, as above: results.json's `wan`
 * (see docs/results.md), or NULL with err when a profile is not in force or a guest failed.
 * lab->wan_now is set once they are in force. */
struct json_object *ml_wan_lab_apply(struct ml_lab *lab, const struct ml_wan_profile *set,
                                     GError **err);
