/* How a node's WAN profile (topology/wan.h) is put in force on its guest, and how to see that it
 * is; measure/wancheck.h does it on a lab and proves it.
 *
 * Where: a netem qdisc at the root of each guest's lab NIC (ML_LAB_NIC), for what leaves the
 * guest. Every packet that leaves a node is delayed, jittered, dropped and paced by that node's
 * profile, so a round trip between two nodes adds the sum of their delays and a relay's twice.
 * Not on the host's taps: a host kernel need not have sch_netem (the development hosts' has
 * none: `tc qdisc add ... netem` answers "Specified qdisc kind is unknown"), while the guest
 * images' kernels do. What netem costs the guests is in their measured CPU like any other work.
 */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "topology/wan.h"

/* Pure: netem's queue in packets for p: what the uplink (or 10 Gbit/s when none) sends in the
 * delay and jitter, twice over, at 1500 bytes a packet, and never under netem's own default of
 * 1000 (a queue shorter than that would drop what a real link carries). */
unsigned ml_wan_limit(const struct ml_wan_profile *p);
/* Pure: the guest shell script that puts p in force on dev: the root qdisc replaced by netem, or
 * for a profile that changes nothing, whatever root qdisc there is removed. Idempotent. */
char *ml_wan_script(const struct ml_wan_profile *p, const char *dev);
/* Pure: whether `tc -j qdisc show dev DEV` (text) shows p in force at the root: netem with p's
 * delay, jitter, loss and rate, or for a profile that changes nothing, no netem. Appends what it
 * saw to seen ("netem delay 40 ms jitter 0 ms loss 0 % rate 1000 Mbit/s", "fq_codel"). */
bool ml_wan_qdisc_matches(const char *text, const struct ml_wan_profile *p, GString *seen);
