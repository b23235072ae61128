/* The workload a VPS hub is rehearsed for: the client payload a month, the share of it the hub
 * relays, and the plan's price (the topology's `vps:` section, or `run --traffic ...`). The
 * report turns it into GB and money a month per path (results/month.h). */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#define ML_CURRENCY_MAX 8

struct ml_workload {
    bool present;
    double traffic_gb;          /* the clients' payload a month, GB (10^9 bytes) */
    double relayed_share;       /* of it, what a mesh's relay carries (0..1; default 1) */
    double egress_price_per_gb; /* what a GB sent beyond the included transfer costs; <0: none */
    double included_tb;         /* the plan's included transfer a month, TB (default 0) */
    double peak_mbit;           /* the workload's peak payload rate, Mbit/s; <0: none given */
    char currency[ML_CURRENCY_MAX]; /* the price's, for the reader ("USD" by default) */
    bool seed;                      /* the seed's workload, taken where none was given */
};

/* The seed's workload: seven 1 GB files a night for 30 nights, 210 GB a month, a fifth of it
 * relayed where a mesh relays (shared/seeds); no plan, so no price and nothing included. */
#define ML_SEED_TRAFFIC_GB 210.0
#define ML_SEED_RELAYED_SHARE 0.2
/* w the seed's workload (seed true) where nothing made it present. */
void ml_workload_default_seed(struct ml_workload *w);

/* The defaults a workload starts from: nothing present, share 1, no price, no peak, USD. */
void ml_workload_init(struct ml_workload *w);
/* A currency code: 1 to 7 capital letters ("USD", "EUR"); NULL is none. */
bool ml_workload_currency_ok(const char *s);
/* One `run` flag (--traffic, --relayed-share, --egress-price, --included-tb, --peak-mbit,
 * --currency) over what the topology said; false with err (ML_ERR_INPUT) naming the flag. */
bool ml_workload_set(struct ml_workload *w, const char *flag, const char *value, GError **err);
/* Whether w can be priced: present and with traffic; else false and why, naming the key. */
bool ml_workload_complete(const struct ml_workload *w, GError **err);
/* w from results.json's `vps_workload` (NULL or null: w as ml_workload_init leaves it). */
void ml_workload_from_json(struct ml_workload *w, struct json_object *o);
/* results.json's `vps_workload`: the inputs, as given. */
struct json_object *ml_workload_json(const struct ml_workload *w);
