#include "topology/workload.h"

#include <math.h>
#include <string.h>

#include "core/util.h"

void ml_workload_init(struct ml_workload *w)
{
    *w = (struct ml_workload){
        .relayed_share = 1, .egress_price_per_gb = -1, .peak_mbit = -1, .traffic_gb = 0};
    g_strlcpy(w->currency, "USD", sizeof(w->currency));
}

bool ml_workload_currency_ok(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n >= 1 && n < ML_CURRENCY_MAX && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == n;
}

/* A flag's number: decimal, finite, at least 0. */
static bool flag_number(const char *flag, const char *value, double *ret, GError **err)
{
    char *end = NULL;
    double d = g_ascii_strtod(value, &end);
    if (!*value || *end || !isfinite(d) || d < 0 || strspn(value, "0123456789.") != strlen(value)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "--%s must be a decimal number like 0.2 or 1000, not '%s'", flag, value);
        return false;
    }
    *ret = d;
    return true;
}

bool ml_workload_set(struct ml_workload *w, const char *flag, const char *value, GError **err)
{
    if (!strcmp(flag, "currency")) {
        if (!ml_workload_currency_ok(value)) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "--currency must be a code of capital letters like USD or EUR, not '%s'",
                        value);
            return false;
        }
        g_strlcpy(w->currency, value, sizeof(w->currency));
        return true;
    }
    double d;
    if (!flag_number(flag, value, &d, err))
        return false;
    const char *why = NULL;
    if (!strcmp(flag, "traffic"))
        why = d > 0 ? (w->traffic_gb = d, NULL) : "must be above 0 (GB of payload a month)";
    else if (!strcmp(flag, "relayed-share"))
        why = d <= 1 ? (w->relayed_share = d, NULL) : "must be 0 to 1 (0.2 for a fifth)";
    else if (!strcmp(flag, "egress-price"))
        w->egress_price_per_gb = d;
    else if (!strcmp(flag, "included-tb"))
        w->included_tb = d;
    else if (!strcmp(flag, "peak-mbit"))
        why = d > 0 ? (w->peak_mbit = d, NULL) : "must be above 0 (Mbit/s)";
    else
        why = "is not a workload flag";
    if (why) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "--%s %s, not %s", flag, why, value);
        return false;
    }
    w->present = true;
    return true;
}

bool ml_workload_complete(const struct ml_workload *w, GError **err)
{
    if (!w->present || w->traffic_gb > 0)
        return true;
    g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                "the VPS workload has no traffic: give --traffic GB (the clients' payload a "
                "month) or vps.traffic_gb in the topology");
    return false;
}

void ml_workload_default_seed(struct ml_workload *w)
{
    if (w->present)
        return;
    ml_workload_init(w);
    w->present = true;
    w->seed = true;
    w->traffic_gb = ML_SEED_TRAFFIC_GB;
    w->relayed_share = ML_SEED_RELAYED_SHARE;
}

static struct json_object *num_or_null(double v)
{
    return v >= 0 ? json_object_new_double(v) : NULL;
}

struct json_object *ml_workload_json(const struct ml_workload *w)
{
    if (!w->present)
        return NULL;
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "traffic_gb", json_object_new_double(w->traffic_gb));
    json_object_object_add(o, "relayed_share", json_object_new_double(w->relayed_share));
    json_object_object_add(o, "egress_price_per_gb", num_or_null(w->egress_price_per_gb));
    json_object_object_add(o, "included_tb", json_object_new_double(w->included_tb));
    json_object_object_add(o, "peak_mbit", num_or_null(w->peak_mbit));
    json_object_object_add(o, "currency", json_object_new_string(w->currency));
    if (w->seed)
        json_object_object_add(o, "source", json_object_new_string("seed"));
    return o;
}

static double member(struct json_object *o, const char *key, double fallback)
{
    struct json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && v ? json_object_get_double(v) : fallback;
}

void ml_workload_from_json(struct ml_workload *w, struct json_object *o)
{
    ml_workload_init(w);
    if (!o || !json_object_is_type(o, json_type_object))
        return;
    w->present = true;
    w->traffic_gb = member(o, "traffic_gb", 0);
    w->relayed_share = member(o, "relayed_share", 1);
    w->egress_price_per_gb = member(o, "egress_price_per_gb", -1);
    w->included_tb = member(o, "included_tb", 0);
    w->peak_mbit = member(o, "peak_mbit", -1);
    struct json_object *src = NULL;
    w->seed = json_object_object_get_ex(o, "source", &src) &&
              !g_strcmp0(json_object_get_string(src), "seed");
    struct json_object *c = NULL;
    if (json_object_object_get_ex(o, "currency", &c) &&
        ml_workload_currency_ok(json_object_get_string(c)))
        g_strlcpy(w->currency, json_object_get_string(c), sizeof(w->currency));
}
