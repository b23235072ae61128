#include "results/month.h"

#include <math.h>
#include <string.h>

#include "results/json.h"
#include <glib.h>

/* A hub path relays everything; a path a policy forced onto a mesh's relay (policy "relay" or
 * "peer-relay"),
 * or a path its dataplane found relayed, carries the workload's relayed share; a direct path
 * none. A results.json from before paths[].policy counts a relaying path as a hub path: the
 * most the hub can carry. */
static enum ml_month_share share_of(struct json_object *p)
{
    const char *role = ml_j_str(p, "hub_role");
    if (!role || !strcmp(role, "quiet"))
        return ML_SHARE_NONE;
    const char *found = ml_j_str(p, "found");
    if (found)
        return !strcmp(found, "direct") ? ML_SHARE_NONE : ML_SHARE_RELAYED;
    const char *policy = ml_j_str(p, "policy");
    if (!policy)
        return ML_SHARE_ALL_UNKNOWN;
    return !strcmp(policy, "relay") || !strcmp(policy, "peer-relay") ? ML_SHARE_RELAYED
                                                                     : ML_SHARE_ALL;
}

bool ml_month_of(const struct ml_workload *w, struct json_object *p, struct ml_month *ret)
{
    *ret = (struct ml_month){
        .in_gb = NAN, .out_gb = NAN, .cost = NAN, .peak_bits_per_second = NAN, .vcpus = NAN};
    if (!w->present || !(w->traffic_gb > 0))
        return false;
    double traffic = w->traffic_gb, relayed = w->relayed_share, included = w->included_tb;
    double price = w->egress_price_per_gb >= 0 ? w->egress_price_per_gb : NAN;
    double peak = w->peak_mbit > 0 ? w->peak_mbit : NAN;
    ret->why = share_of(p);
    ret->share = ret->why == ML_SHARE_NONE ? 0 : ret->why == ML_SHARE_RELAYED ? relayed : 1;
    ret->payload_gb = traffic * ret->share;
    ret->included_gb = included * 1000;
    struct json_object *v = ml_j_obj(p, "vps");
    double in_tb = NAN, out_tb = NAN;
    if (ret->why == ML_SHARE_NONE) {
        in_tb = out_tb = 0;
    } else if (!ml_j_num(v, "hub_gb_in_per_tb_payload", &in_tb) ||
               !ml_j_num(v, "hub_gb_out_per_tb_payload", &out_tb)) {
        return false;
    }
    /* GB of the hub's NIC per TB of payload, times TB of payload. */
    ret->in_gb = in_tb * ret->payload_gb / 1000;
    ret->out_gb = out_tb * ret->payload_gb / 1000;
    ret->fits = ret->out_gb <= ret->included_gb;
    ret->overage_gb = MAX(0.0, ret->out_gb - ret->included_gb);
    if (isfinite(price))
        ret->cost = ret->overage_gb * price;
    double vcpu_bps;
    if (isfinite(peak)) {
        ret->peak_bits_per_second = peak * 1e6 * ret->share;
        if (ret->why == ML_SHARE_NONE)
            ret->vcpus = 0;
        else if (ml_j_num(v, "hub_vcpu_relay_bits_per_second", &vcpu_bps) && vcpu_bps > 0)
            ret->vcpus = MAX(1.0, ceil(ret->peak_bits_per_second / vcpu_bps));
    }
    ret->vcpus_meaningful = ml_j_bool(v, "meaningful");
    return true;
}
