/* The report's section on a lab over several hosts: where each node ran, what lies between the
 * hosts (round trip, MTU, TCP ceiling, measured between them), and what each path through the
 * hub put on that link per byte of payload; all from results.json's `underlay` and the passes'
 * `underlay_bytes_per_payload_byte` (docs/results.md). A one-host lab: no section. */
#include <math.h>

#include "measure/stats.h"
#include "report/render.h"

/* An integer as it is written in configs (an MTU, a VXLAN id): no thousands separators. */
static void put_int(GString *s, struct json_object *o, const char *key)
{
    double v;
    if (ml_j_num(o, key, &v))
        g_string_append_printf(s, "%.0f", v);
    else
        g_string_append(s, ML_DASH);
}

static void host_row(GString *s, const char *name, struct json_object *h)
{
    g_string_append(s, "| ");
    ml_put_text(s, name);
    g_string_append(s, " | ");
    ml_put_text(s, ml_j_str_or(h, "uri", ML_DASH));
    g_string_append(s, " | ");
    ml_put_text(s, ml_j_str_or(h, "underlay", ML_DASH));
    g_string_append(s, " | ");
    ml_put_text(s, ml_j_str_or(h, "device", ML_DASH));
    g_string_append(s, " | ");
    put_int(s, h, "mtu");
    g_string_append(s, " | ");
    struct json_object *nodes = ml_j_array(h, "nodes");
    for (size_t i = 0; i < ml_j_len(nodes); i++) {
        if (i)
            g_string_append(s, ", ");
        ml_put_text(s, json_object_get_string(json_object_array_get_idx(nodes, i)));
    }
    g_string_append(s, " |\n");
}

/* "- here to there: round trip 0.061 ms (median of 20 pings), MTU 65536, a plain TCP stream
 *   18700 Mbit/s", or why a figure is missing. */
static void link_sentence(GString *s, struct json_object *l)
{
    struct json_object *rtt = ml_j_obj(l, "rtt_ms");
    double v;
    g_string_append(s, "- ");
    ml_put_text(s, ml_j_str_or(l, "from", ML_DASH));
    g_string_append(s, " to ");
    ml_put_text(s, ml_j_str_or(l, "to", ML_DASH));
    g_string_append(s, ": ");
    if (rtt && ml_j_num(rtt, "median", &v)) {
        g_string_append(s, "round trip ");
        ml_put_significant(s, v, 3);
        g_string_append(s, " ms (median of ");
        ml_put_num(s, rtt, "received", 0);
        g_string_append(s, " pings), ");
    }
    g_string_append(s, "MTU ");
    put_int(s, l, "mtu");
    if (ml_j_num(l, "tcp_bits_per_second", &v)) {
        g_string_append(s, ", one plain TCP stream ");
        ml_put_significant(s, v / 1e6, 3);
        g_string_append(s, " Mbit/s (");
        ml_put_num(s, l, "tcp_retransmits", 0);
        g_string_append(s, " retransmits)");
    }
    const char *why = ml_j_str(l, "why_not");
    if (why) {
        g_string_append(s, "; not measured: ");
        ml_put_text(s, why);
    }
    g_string_append(s, " (`underlay.links`).\n");
}

/* The median of the passes' underlay factor of path p; NAN when none has one. */
static double path_underlay(struct json_object *p, double *ret_hub)
{
    struct json_object *passes = ml_j_array(p, "passes");
    GArray *u = g_array_new(FALSE, FALSE, sizeof(double));
    GArray *h = g_array_new(FALSE, FALSE, sizeof(double));
    for (size_t i = 0; i < ml_j_len(passes); i++) {
        struct json_object *x = json_object_array_get_idx(passes, i);
        double a, b;
        if (g_strcmp0(ml_j_str(x, "status"), "ok") == 0 &&
            ml_j_num(x, "underlay_bytes_per_payload_byte", &a) &&
            ml_j_num(x, "hub_bytes_per_payload_byte", &b)) {
            g_array_append_val(u, a);
            g_array_append_val(h, b);
        }
    }
    double ret = u->len ? ml_median((double *)(void *)u->data, u->len) : NAN;
    *ret_hub = h->len ? ml_median((double *)(void *)h->data, h->len) : NAN;
    g_array_free(u, TRUE);
    g_array_free(h, TRUE);
    return ret;
}

void ml_section_underlay(struct ml_render *c)
{
    struct json_object *u = ml_j_obj(c->r, "underlay");
    if (!u)
        return;
    GString *s = c->s;
    g_string_append(s, "## Hosts: one lab over several\n\n");
    g_string_append(s, "Each host ran its nodes on a bridge of its own; the bridges were "
                       "stitched into one by VXLAN (id ");
    put_int(s, u, "vni");
    g_string_append(s, ") between the hosts' underlay addresses, which adds ");
    ml_put_num(s, u, "vxlan_overhead_bytes", 0);
    g_string_append(s, " bytes to every frame that crosses; the lab's MTU was ");
    put_int(s, u, "lab_mtu");
    g_string_append(s, " (`underlay`).\n\n");
    g_string_append(s, "| host | libvirt | underlay | device | MTU | nodes |\n"
                       "|---|---|---|---|---:|---|\n");
    json_object_object_foreach(ml_j_obj(u, "hosts"), name, h) host_row(s, name, h);
    g_string_append(s, "\nBetween the hosts, measured before the paths, the guests idle:\n\n");
    struct json_object *links = ml_j_array(u, "links");
    for (size_t i = 0; i < ml_j_len(links); i++)
        link_sentence(s, json_object_array_get_idx(links, i));
    g_string_append(s, "\n");
    bool head = false;
    for (size_t i = 0; i < ml_j_len(c->paths); i++) {
        struct json_object *p = json_object_array_get_idx(c->paths, i);
        double hub = NAN, under = c->st[i] == ML_PATH_MEASURED ? path_underlay(p, &hub) : NAN;
        if (!isfinite(under))
            continue;
        if (!head)
            g_string_append(s, "Every frame at the hub's NIC of these paths crossed the "
                               "underlay (their client and server were off the hub's host):\n\n");
        head = true;
        g_string_append(s, "- ");
        ml_put_text(s, ml_j_str_or(p, "name", ML_DASH));
        g_string_append(s, ": ");
        ml_put_significant(s, under, 3);
        g_string_append(s, " underlay bytes per payload byte, the hub's ");
        ml_put_significant(s, hub, 3);
        g_string_append(s, " plus VXLAN's bytes (median of its passes' "
                           "`underlay_bytes_per_payload_byte`)");
        double want;
        if (ml_j_num(ml_j_obj(p, "expected"), "underlay_bytes_per_payload_byte", &want)) {
            g_string_append(s, "; the frames' physics expects ");
            ml_put_significant(s, want, 3);
            g_string_append(s, " (`expected.underlay_bytes_per_payload_byte`)");
        }
        g_string_append(s, ".\n");
    }
    if (head)
        g_string_append(s, "\n");
}
