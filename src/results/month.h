/* A month of the workload (results.json's vps_workload) on one measured path: the hub's GB in
 * and out, whether its plan's included transfer holds them, what the rest costs, and the hub
 * vCPUs the peak rate needs. Pure: everything comes from results.json, and each figure names
 * the fields it came from (the report prints them). */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "topology/workload.h"

/* Why the hub carries the share of the payload it does. */
enum ml_month_share {
    ML_SHARE_NONE,        /* a direct path: the hub carries none of the payload */
    ML_SHARE_ALL,         /* a hub path (every packet crosses the hub, whatever the mesh does) */
    ML_SHARE_ALL_UNKNOWN, /* a relaying path of a results.json without paths[].policy: all */
    ML_SHARE_RELAYED,     /* a mesh's relay: the workload's relayed_share */
};

struct ml_month {
    enum ml_month_share why;
    double share;                /* of the payload the hub carries, 0..1 */
    double payload_gb;           /* that payload, GB a month */
    double in_gb, out_gb;        /* the hub's NIC, GB a month; NaN: the path has no split figure */
    double included_gb;          /* the plan's, GB */
    bool fits;                   /* out_gb within included_gb */
    double overage_gb;           /* out beyond it */
    double cost;                 /* overage_gb x the egress price; NaN: no price given */
    double peak_bits_per_second; /* the hub's share of the peak rate; NaN: no peak given */
    double vcpus;                /* hub vCPUs that rate needs (rounded up); NaN: not known */
    bool vcpus_meaningful;       /* the relay rate was measured on KVM */
};

/* The month of workload w (ml_workload_from_json of results.json's vps_workload) on path p (a
 * paths[] member with status "measured"). False when w has no traffic or p's hub figures are
 * missing (a path that failed, an old results.json). */
bool ml_month_of(const struct ml_workload *w, struct json_object *p, struct ml_month *ret);
