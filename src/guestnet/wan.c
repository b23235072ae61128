#include "guestnet/wan.h"

#include <math.h>
#include <string.h>

#include "results/json.h"

unsigned ml_wan_limit(const struct ml_wan_profile *p)
{
    double rate_bps = (p->rate_mbit > 0 ? p->rate_mbit : 10000) * 1e6;
    double seconds = (p->delay_ms + p->jitter_ms) / 1000;
    double packets = 2 * rate_bps * seconds / (1500 * 8);
    return packets > 1000 ? (unsigned)ceil(MIN(packets, 1e6)) : 1000;
}

char *ml_wan_script(const struct ml_wan_profile *p, const char *dev)
{
    if (ml_wan_is_none(p))
        return g_strdup_printf("# WAN profile %s: nothing added\n"
                               "tc qdisc del dev %s root 2>/dev/null || true\n",
                               p->name, dev);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "# WAN profile %s\nset -e\ntc qdisc replace dev %s root netem limit %u",
                           p->name, dev, ml_wan_limit(p));
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(s, " delay %sms %sms", g_ascii_formatd(a, sizeof(a), "%g", p->delay_ms),
                           g_ascii_formatd(b, sizeof(b), "%g", p->jitter_ms));
    if (p->loss_percent > 0)
        g_string_append_printf(s, " loss random %s%%",
                               g_ascii_formatd(a, sizeof(a), "%g", p->loss_percent));
    if (p->rate_mbit > 0)
        g_string_append_printf(s, " rate %smbit",
                               g_ascii_formatd(a, sizeof(a), "%g", p->rate_mbit));
    g_string_append_c(s, '\n');
    return g_string_free(s, false);
}

/* A member of o's member `outer` (0 when absent, as tc leaves out what is 0). */
static double nested(struct json_object *o, const char *outer, const char *inner)
{
    double v = 0;
    return ml_j_num(ml_j_obj(o, outer), inner, &v) ? v : 0;
}

static bool near(double a, double b, double abs_tol)
{
    return fabs(a - b) <= abs_tol + 1e-3 * fabs(b);
}

/* The keys are those of iproute2 6.1's tc/q_netem.c, netem_print_opt, in JSON: "delay" {"delay",
 * "jitter"} in seconds, "loss-random" {"loss"} as a fraction, "rate" {"rate"} in bytes/s (the
 * profile's Mbit/s over 8); tc/tc_qdisc.c prints "kind" and "root". */
bool ml_wan_qdisc_matches(const char *text, const struct ml_wan_profile *p, GString *seen)
{
    struct json_object *all = json_tokener_parse(text ? text : "");
    struct json_object *root = NULL;
    for (size_t i = 0; all && json_object_is_type(all, json_type_array) && i < ml_j_len(all); i++)
        if (ml_j_bool(json_object_array_get_idx(all, i), "root"))
            root = json_object_array_get_idx(all, i);
    const char *kind = ml_j_str(root, "kind");
    bool ok;
    if (!kind) {
        g_string_append(seen, all ? "no root qdisc" : "no JSON from tc");
        ok = false;
    } else if (strcmp(kind, "netem")) {
        g_string_append(seen, kind);
        ok = ml_wan_is_none(p);
    } else {
        struct json_object *opt = ml_j_obj(root, "options");
        double delay_ms = nested(opt, "delay", "delay") * 1000;
        double jitter_ms = nested(opt, "delay", "jitter") * 1000;
        double loss_percent = nested(opt, "loss-random", "loss") * 100;
        double rate_mbit = nested(opt, "rate", "rate") * 8 / 1e6;
        g_string_append_printf(seen, "netem delay %g ms jitter %g ms loss %g %%", delay_ms,
                               jitter_ms, loss_percent);
        if (rate_mbit > 0)
            g_string_append_printf(seen, " rate %g Mbit/s", rate_mbit);
        ok = !ml_wan_is_none(p) && near(delay_ms, p->delay_ms, 0.01) &&
             near(jitter_ms, p->jitter_ms, 0.01) && near(loss_percent, p->loss_percent, 1e-4) &&
             near(rate_mbit, p->rate_mbit, 1e-6);
    }
    json_object_put(all);
    return ok;
}
