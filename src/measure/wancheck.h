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
/* Under TCG a packet netem holds leaves when the guest's timer fires and its vCPU gets a host
 * core back: late, never early. In the e2e's detour lab (four one-vCPU guests on two cores, each
 * client pinging the hub in turn) a 5 ms profile on the hub read 5.4 to 7.0 ms above the
 * baseline's median, and the minima 6.4 ms above the baseline's minimum: every reply late, not a
 * queue. Each delaying profile on the round trip may add this much more, on the late side only,
 * where KVM was not used (ml_host_accel); twice the profile (10 ms) still fails. */
#define ML_WAN_TCG_LATE_MS 1.5
/* The pings of each round trip measured, and their interval. */
#define ML_WAN_PINGS 20
#define ML_WAN_PING_INTERVAL_S 0.1
/* A round trip's pings are settled when the medians of their two halves differ by at most this
 * much. A guest still busy with what came before (an agent command, a daemon stopping) answers
 * late for a few seconds: in one CI run client-a's baseline read 20.9, then 3 to 5 ms for 15
 * pings, then 1.5 to 2.4 ms, where a quiet guest reads 1.2 ms throughout. Its median (3.38 ms)
 * then rejected a 5 ms profile that was in force (+2.96 ms against the 3 ms floor). A quiet
 * TCG guest's halves differ by tenths of a millisecond; a quarter of ML_WAN_RTT_TOLERANCE_MIN_MS
 * is the most a settled reading may wander. Unsettled pings are taken again, up to
 * ML_WAN_PING_TRIES times in all, and the last taken is used (its tries are recorded). */
#define ML_WAN_SETTLED_MS (ML_WAN_RTT_TOLERANCE_MIN_MS / 4)
#define ML_WAN_PING_TRIES 3

/* Pure: whether the n round trips rtts (in the order sent) are settled, as above, beyond what the
 * jitter of the two legs' profiles (±jitter_a_ms, ±jitter_b_ms; 0 for none) moves two halves'
 * medians apart. Fewer than 4 are never settled. */
bool ml_wan_pings_settled(const double *rtts, size_t n, double jitter_a_ms, double jitter_b_ms);

/* Pure: how far the median of n round trips may stray by the profiles' jitter alone, each leg's
 * delay uniform within ±jitter_a_ms and ±jitter_b_ms: three standard errors of that median
 * (0 without jitter). */
double ml_wan_median_spread_ms(double jitter_a_ms, double jitter_b_ms, size_t n);

/* Pure: whether a round trip measured_ms, baseline_ms before the profiles, shows added_ms more:
 * within the tolerance above either way, and late_ms more on the late side (what an emulated
 * guest's timers add: ML_WAN_TCG_LATE_MS a delaying profile under TCG, else 0), each side
 * spread_ms wider (ml_wan_median_spread_ms: the profiles' jitter), and the early side early_ms
 * wider: how far the baseline's median stood above its minimum. A guest's own delays only add
 * to a round trip, so a baseline read while its guest was busy may stand that much above what
 * the bridge gives, and the reading after less above it (CI's midpass lab: a baseline of 4.62
 * ms from pings of 3.2 to 8.5 ms, a quiet guest's 1.2 ms). *ret_tolerance_ms: the tolerance
 * used, before late_ms and early_ms. */
bool ml_wan_rtt_within(double baseline_ms, double added_ms, double late_ms, double spread_ms,
                       double early_ms, double measured_ms, double *ret_tolerance_ms);

/* Puts set[i] in force on node i, for every node, and proves it, as above: results.json's `wan`
 * (see docs/results.md), or NULL with err when a profile is not in force or a guest failed.
 * lab->wan_now is set once they are in force. */
struct json_object *ml_wan_lab_apply(struct ml_lab *lab, const struct ml_wan_profile *set,
                                     GError **err);
