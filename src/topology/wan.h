/* A node's WAN profile: the distance, jitter, loss and uplink of the link that joins it to the
 * internet (a hub "in a datacenter", a client "at home"). The shipped ones are named here; a
 * topology may define more under `wan_profiles:` and give each node one with `wan: NAME`.
 * guestnet/wan.h puts a profile in force on a guest and proves it is. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

/* As ML_NAME_MAX (topology.h, which includes this file and checks that they agree). */
#define ML_WAN_NAME_MAX 32

/* What a profile does to every packet that leaves the node:
 *   delay_ms      held this long, so a round trip between two nodes takes the sum of their
 *                 delays (a relay's is counted twice: its packets leave it in both directions)
 *   jitter_ms     the delay varies uniformly by up to this much either way
 *   loss_percent  dropped at random with this chance
 *   rate_mbit     sent no faster than this: the node's uplink (a VPS plan's port, a home line's
 *                 upload); 0 for none */
struct ml_wan_profile {
    char name[ML_WAN_NAME_MAX];
    double delay_ms, jitter_ms, loss_percent, rate_mbit;
    const char *source; /* where a shipped profile's figures come from; NULL for a topology's */
};

/* The shipped profiles, in the order docs list them: lan, vps-near, vps-far, home-fibre,
 * home-dsl, mobile. *ret_n: how many. */
const struct ml_wan_profile *ml_wan_shipped(size_t *ret_n);
/* The shipped profile named name, or NULL. */
const struct ml_wan_profile *ml_wan_shipped_find(const char *name);
/* The shipped names, ", " between, for messages. */
const char *ml_wan_shipped_names(void);
/* Whether the profile changes nothing: no delay, jitter, loss or rate. */
bool ml_wan_is_none(const struct ml_wan_profile *p);
/* The bounds a profile's figures must keep (what netem takes, and what a lab can mean), or NULL
 * when they do; else a sentence naming the key at fault. */
const char *ml_wan_out_of_bounds(const struct ml_wan_profile *p);
/* Pure: the idle round trip the profiles add to a path from a to b, through relay when relay
 * is not NULL: a's and b's delays, and the relay's twice. */
double ml_wan_rtt_ms(const struct ml_wan_profile *a, const struct ml_wan_profile *b,
                     const struct ml_wan_profile *relay);
/* Pure: the most they may add to it, each delay with its jitter. */
double ml_wan_rtt_max_ms(const struct ml_wan_profile *a, const struct ml_wan_profile *b,
                         const struct ml_wan_profile *relay);
/* {name, delay_ms, jitter_ms, loss_percent, rate_mbit} (rate_mbit null when none). */
struct json_object *ml_wan_profile_json(const struct ml_wan_profile *p);
