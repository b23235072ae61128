#include "measure/hostlink.h"

#include <math.h>
#include <string.h>

#include "core/util.h"
#include "measure/parse_iperf.h"
#include "measure/parse_ping.h"
#include "measure/stats.h"
#include "virt/underlay.h"
#include "virt/virt.h"

#define PINGS 20
#define TCP_SECONDS 5
#define SHELL_TIMEOUT_S 60
/* The ceiling's iperf3 port on the server's host: one of the lab's own, from its VXLAN id. */
#define PORT_BASE 45000

double ml_hostlink_factor(long long rx_bytes, long long tx_bytes, long long rx_packets,
                          long long tx_packets, long long probe_bytes, long long probe_packets,
                          long long payload)
{
    if (payload <= 0)
        return NAN;
    double bytes = (double)MAX(0, rx_bytes + tx_bytes - probe_bytes);
    double frames = (double)MAX(0, rx_packets + tx_packets - probe_packets);
    return (bytes + ML_VXLAN_OVERHEAD * frames) / (double)payload;
}

bool ml_hostlink_hub_crossed(const struct ml_topology *t)
{
    return t->n_hosts > 1 && ml_topology_crosses(t, t->hub, t->measure.client) &&
           ml_topology_crosses(t, t->hub, t->measure.server);
}

char *ml_hostlink_ping_script(struct in_addr self, struct in_addr peer, unsigned count)
{
    char s[16], p[16];
    return g_strdup_printf("ping -n -c %u -i 0.2 -W 2 -I %s %s", count, ml_ip_str(self, s),
                           ml_ip_str(peer, p));
}

char *ml_hostlink_iperf_server_script(struct in_addr peer, unsigned port, unsigned timeout_s)
{
    char p[16];
    return g_strdup_printf("exec timeout %u iperf3 -s -1 -B %s -p %u >/dev/null", timeout_s,
                           ml_ip_str(peer, p), port);
}

char *ml_hostlink_iperf_client_script(struct in_addr self, struct in_addr peer, unsigned port,
                                      unsigned seconds)
{
    char s[16], p[16];
    ml_ip_str(self, s);
    ml_ip_str(peer, p);
    /* The server starts on the other host at about the same time: tried until it answers.
     * iperf3 3.12 -J exits 0 when the server refuses, its JSON holding "error". */
    return g_strdup_printf(
        "i=0; while :; do "
        "out=$(iperf3 -c %s -B %s -p %u -t %u -J 2>&1) && "
        "! printf '%%s' \"$out\" | grep -q '\"error\":' && "
        "{ printf '%%s\\n' \"$out\"; exit 0; }; "
        "i=$((i+1)); [ $i -ge 20 ] && { printf '%%s\\n' \"$out\" >&2; exit 1; }; "
        "sleep 0.5; done",
        p, s, port, seconds);
}

/* The tools a host lacks of those the measurements run, as words; NULL when it has them. */
static char *missing_tools(const char *uri, const char *name)
{
    g_autofree char *out = NULL;
    g_autoptr(GError) e = NULL;
    if (!ml_underlay_run(uri, name,
                         "for t in ping iperf3 timeout; do command -v $t >/dev/null || echo $t; "
                         "done",
                         SHELL_TIMEOUT_S, &out, &e))
        return g_strdup(e->message);
    g_strstrip(out);
    if (!*out)
        return NULL;
    g_strdelimit(out, "\n", ' ');
    return g_strdup_printf("host %s has no %s", name, out);
}

struct server_job {
    const char *uri, *name;
    char *script;
    GError *err;
    bool ok;
};

static gpointer server_main(gpointer data)
{
    struct server_job *job = data;
    job->ok = ml_underlay_run(job->uri, job->name, job->script, SHELL_TIMEOUT_S, NULL, &job->err);
    return NULL;
}

static void put_num(struct json_object *o, const char *key, double v, double scale)
{
    json_object_object_add(o, key,
                           isfinite(v) ? json_object_new_double(round(v * scale) / scale) : NULL);
}

/* The round trip from host a to host b's underlay address into o. */
static void link_rtt(struct ml_lab *lab, size_t a, size_t b, struct json_object *o,
                     GString *why_not)
{
    const struct ml_topology *t = lab->topo;
    g_autofree char *script =
        ml_hostlink_ping_script(t->hosts[a].underlay, t->hosts[b].underlay, PINGS);
    g_autofree char *out = NULL;
    g_autoptr(GError) e = NULL;
    struct ml_ping_result r = {0};
    if (!ml_underlay_run(lab->hosts[a].uri, t->hosts[a].name, script, SHELL_TIMEOUT_S, &out, &e) ||
        !ml_ping_parse(out, &r, &e) || !r.have_rtt) {
        g_string_append_printf(why_not, "%sround trip: %s", why_not->len ? "; " : "",
                               e ? e->message : "no reply");
        json_object_object_add(o, "rtt_ms", NULL);
        return;
    }
    g_autoptr(GArray) rtts = ml_ping_rtts(out);
    struct json_object *rtt = json_object_new_object();
    double median = rtts->len ? ml_median((double *)(void *)rtts->data, rtts->len) : r.avg_ms;
    put_num(rtt, "median", median, 1000);
    put_num(rtt, "min", r.min_ms, 1000);
    put_num(rtt, "max", r.max_ms, 1000);
    json_object_object_add(rtt, "sent", json_object_new_int((int)r.transmitted));
    json_object_object_add(rtt, "received", json_object_new_int((int)r.received));
    json_object_object_add(o, "rtt_ms", rtt);
}

/* A plain TCP stream from host a to host b's underlay address, as fast as it goes. */
static void link_tcp(struct ml_lab *lab, size_t a, size_t b, struct json_object *o,
                     GString *why_not)
{
    const struct ml_topology *t = lab->topo;
    unsigned port = PORT_BASE + lab->plan->vni % 1000;
    struct server_job job = {
        .uri = lab->hosts[b].uri,
        .name = t->hosts[b].name,
        .script = ml_hostlink_iperf_server_script(t->hosts[b].underlay, port, SHELL_TIMEOUT_S - 10),
    };
    GThread *thread = g_thread_new("meshlab-hostlink", server_main, &job);
    g_autofree char *script = ml_hostlink_iperf_client_script(
        t->hosts[a].underlay, t->hosts[b].underlay, port, TCP_SECONDS);
    g_autofree char *out = NULL;
    g_autoptr(GError) e = NULL;
    struct ml_iperf_result r = {0};
    bool ok =
        ml_underlay_run(lab->hosts[a].uri, t->hosts[a].name, script, SHELL_TIMEOUT_S, &out, &e) &&
        ml_iperf_parse(out, &r, &e);
    g_thread_join(thread);
    g_free(job.script);
    if (!ok && !e && job.err)
        e = g_error_copy(job.err);
    g_clear_error(&job.err);
    if (!ok) {
        g_string_append_printf(why_not, "%sTCP ceiling: %s", why_not->len ? "; " : "",
                               e ? e->message : "iperf3 failed");
        json_object_object_add(o, "tcp_bits_per_second", NULL);
        json_object_object_add(o, "tcp_retransmits", NULL);
        return;
    }
    put_num(o, "tcp_bits_per_second", r.bits_per_second_received, 1);
    json_object_object_add(o, "tcp_retransmits",
                           r.retransmits >= 0 ? json_object_new_int64(r.retransmits) : NULL);
    json_object_object_add(o, "tcp_seconds", json_object_new_double(round(r.seconds * 100) / 100));
}

struct json_object *ml_hostlink_measure(struct ml_lab *lab)
{
    const struct ml_topology *t = lab->topo;
    if (lab->n_hosts < 2)
        return NULL;
    struct json_object *u = json_object_new_object();
    json_object_object_add(u, "vxlan_overhead_bytes", json_object_new_int(ML_VXLAN_OVERHEAD));
    json_object_object_add(u, "vni", json_object_new_int((int)lab->plan->vni));
    json_object_object_add(u, "lab_mtu",
                           lab->hosts[0].mtu ? json_object_new_int((int)lab->hosts[0].mtu) : NULL);
    struct json_object *hosts = json_object_new_object();
    char *missing[ML_HOSTS_MAX] = {0};
    for (size_t k = 0; k < lab->n_hosts; k++) {
        const struct ml_lab_host *h = &lab->hosts[k];
        struct json_object *o = json_object_new_object();
        char a[16];
        g_autofree char *shown = ml_uri_public(h->uri);
        json_object_object_add(o, "uri", json_object_new_string(shown));
        json_object_object_add(o, "underlay",
                               json_object_new_string(ml_ip_str(t->hosts[k].underlay, a)));
        json_object_object_add(o, "device",
                               *h->underlay_dev ? json_object_new_string(h->underlay_dev) : NULL);
        json_object_object_add(o, "mtu",
                               h->underlay_mtu ? json_object_new_int((int)h->underlay_mtu) : NULL);
        json_object_object_add(o, "vxlan_port",
                               json_object_new_int((int)lab->plan->hosts[k].vxlan_port));
        struct json_object *nodes = json_object_new_array();
        for (size_t i = 0; i < t->n_nodes; i++)
            if (t->nodes[i].host == k)
                json_object_array_add(nodes, json_object_new_string(t->nodes[i].name));
        json_object_object_add(o, "nodes", nodes);
        json_object_object_add(hosts, t->hosts[k].name, o);
        missing[k] = missing_tools(h->uri, t->hosts[k].name);
    }
    json_object_object_add(u, "hosts", hosts);
    struct json_object *links = json_object_new_array();
    for (size_t a = 0; a < lab->n_hosts; a++)
        for (size_t b = a + 1; b < lab->n_hosts; b++) {
            struct json_object *o = json_object_new_object();
            json_object_object_add(o, "from", json_object_new_string(t->hosts[a].name));
            json_object_object_add(o, "to", json_object_new_string(t->hosts[b].name));
            unsigned mtu = MIN(lab->hosts[a].underlay_mtu, lab->hosts[b].underlay_mtu);
            json_object_object_add(o, "mtu", mtu ? json_object_new_int((int)mtu) : NULL);
            g_autoptr(GString) why_not = g_string_new(NULL);
            const char *lack = missing[a] ? missing[a] : missing[b];
            if (lack) {
                g_string_append(why_not, lack);
                json_object_object_add(o, "rtt_ms", NULL);
                json_object_object_add(o, "tcp_bits_per_second", NULL);
                json_object_object_add(o, "tcp_retransmits", NULL);
            } else {
                ml_progress("underlay", "%s to %s: %u pings and %u s of TCP between the hosts",
                            t->hosts[a].name, t->hosts[b].name, PINGS, TCP_SECONDS);
                link_rtt(lab, a, b, o, why_not);
                link_tcp(lab, a, b, o, why_not);
            }
            json_object_object_add(o, "why_not",
                                   why_not->len ? json_object_new_string(why_not->str) : NULL);
            if (why_not->len)
                ml_warn("underlay %s to %s: %s", t->hosts[a].name, t->hosts[b].name, why_not->str);
            json_object_array_add(links, o);
        }
    json_object_object_add(u, "links", links);
    for (size_t k = 0; k < ML_HOSTS_MAX; k++)
        g_free(missing[k]);
    return u;
}
