#include "topology/wan.h"

#include <glib.h>
#include <math.h>
#include <string.h>

/* Round figures for the cases users name, not measurements: docs/topology.md ("WAN profiles")
 * says the same, and where each range comes from. */
static const struct ml_wan_profile shipped[] = {
    {"lan", 0, 0, 0, 0, "the lab's bridge as it is: nothing added"},
    {"vps-near", 10, 0, 0, 1000,
     "a VPS in the clients' own region: 10 ms away on a 1 Gbit/s port (issue 19; VPS plans "
     "commonly sell a 1 Gbit/s port)"},
    {"vps-far", 40, 0, 0, 1000,
     "a VPS in another region or across a continent: 40 ms away on a 1 Gbit/s port (issue 19; "
     "peers-2026-12-01 section 6 puts a VPS 20-80 ms from its clients)"},
    {"home-fibre", 5, 1, 0, 100,
     "a fibre line at home: a few ms to the internet, 100 Mbit/s up (FCC Measuring Broadband "
     "America: fibre has the lowest latency of the terrestrial fixed technologies)"},
    {"home-dsl", 15, 2, 0, 10,
     "a DSL line at home: 15 ms with a little jitter and 10 Mbit/s up, a VDSL2 50/10 plan's "
     "upload (FCC Measuring Broadband America: DSL has the highest latency of the "
     "terrestrial fixed technologies and the lowest upload)"},
    {"mobile", 30, 10, 1, 20,
     "a phone on 4G: 30 ms with 10 ms of jitter, 1 % of packets lost, 20 Mbit/s up (Ookla's "
     "US carrier averages were 31-39 ms; FCC Measuring Broadband America counts a line over 1 "
     "% of peak-hour loss among the worst)"},
};

const struct ml_wan_profile *ml_wan_shipped(size_t *ret_n)
{
    *ret_n = G_N_ELEMENTS(shipped);
    return shipped;
}

const struct ml_wan_profile *ml_wan_shipped_find(const char *name)
{
    for (size_t i = 0; name && i < G_N_ELEMENTS(shipped); i++)
        if (!strcmp(shipped[i].name, name))
            return &shipped[i];
    return NULL;
}

const char *ml_wan_shipped_names(void)
{
    return "lan, vps-near, vps-far, home-fibre, home-dsl, mobile";
}

bool ml_wan_is_none(const struct ml_wan_profile *p)
{
    return p->delay_ms == 0 && p->jitter_ms == 0 && p->loss_percent == 0 && p->rate_mbit == 0;
}

const char *ml_wan_out_of_bounds(const struct ml_wan_profile *p)
{
    /* A relayed round trip leaves the relay twice: four delays of up to twice 500 ms stay
     * inside the probe's wait (measure.c), which grows with them. */
    if (!(p->delay_ms >= 0 && p->delay_ms <= 500))
        return "delay_ms must be 0 to 500: the round trip the node's link adds, in ms";
    if (!(p->jitter_ms >= 0 && p->jitter_ms <= p->delay_ms))
        return "jitter_ms must be 0 to delay_ms: the delay varies by up to it either way, and "
               "a delay below 0 does not exist";
    if (!(p->loss_percent >= 0 && p->loss_percent <= 50))
        return "loss_percent must be 0 to 50: past half the packets lost, no path is measured";
    if (!(p->rate_mbit == 0 || (p->rate_mbit >= 0.1 && p->rate_mbit <= 10000)))
        return "rate_mbit must be 0 (no limit) or 0.1 to 10000: the node's uplink in Mbit/s";
    return NULL;
}

double ml_wan_rtt_ms(const struct ml_wan_profile *a, const struct ml_wan_profile *b,
                     const struct ml_wan_profile *relay)
{
    return a->delay_ms + b->delay_ms + (relay ? 2 * relay->delay_ms : 0);
}

double ml_wan_rtt_max_ms(const struct ml_wan_profile *a, const struct ml_wan_profile *b,
                         const struct ml_wan_profile *relay)
{
    double most = a->delay_ms + a->jitter_ms + b->delay_ms + b->jitter_ms;
    return most + (relay ? 2 * (relay->delay_ms + relay->jitter_ms) : 0);
}

struct json_object *ml_wan_profile_json(const struct ml_wan_profile *p)
{
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string(p->name));
    json_object_object_add(o, "delay_ms", json_object_new_double(p->delay_ms));
    json_object_object_add(o, "jitter_ms", json_object_new_double(p->jitter_ms));
    json_object_object_add(o, "loss_percent", json_object_new_double(p->loss_percent));
    json_object_object_add(o, "rate_mbit",
                           p->rate_mbit > 0 ? json_object_new_double(p->rate_mbit) : NULL);
    return o;
}
