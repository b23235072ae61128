/* The underlay's measurements between a lab's hosts (measure/hostlink.h): the underlay factor's
 * arithmetic, when a path's hub frames all cross the underlay, and the ping and iperf3 scripts run
 * for real between 127.0.0.1 and 127.0.0.2 through this machine's shell, as a lab runs them on its
 * hosts (the server's script on one "host" in a thread, the client's on the other). Without ping
 * or iperf3 that part skips and says so. */
#include <arpa/inet.h>
#include <math.h>
#include <unistd.h>

#include "check.h"
#include "measure/hostlink.h"
#include "measure/parse_iperf.h"
#include "measure/parse_ping.h"
#include "topology/topology.h"
#include "virt/underlay.h"

static void test_factor(void)
{
    /* 1000 frames each way of 1500 bytes for 1 MB of payload: 3.0 at the hub, and 50 bytes more
     * per frame on the underlay: 3.1. */
    double f = ml_hostlink_factor(1500000, 1500000, 1000, 1000, 0, 0, 1000000);
    CHECK(fabs(f - 3.1) < 1e-9);
    /* The probe's bytes and frames come out, as they do of the hub factor. */
    f = ml_hostlink_factor(1500000 + 840, 1500000 + 840, 1000 + 10, 1000 + 10, 1680, 20, 1000000);
    CHECK(fabs(f - 3.1) < 1e-9);
    CHECK(isnan(ml_hostlink_factor(1, 1, 1, 1, 0, 0, 0)));

    struct ml_topology t = {.n_nodes = 3, .hub = 0, .n_hosts = 2};
    t.measure.client = 1;
    t.measure.server = 2;
    t.nodes[1].host = t.nodes[2].host = 1;
    CHECK(ml_hostlink_hub_crossed(&t));
    t.nodes[2].host = 0; /* the server on the hub's host: half the hub's frames stay there */
    CHECK(!ml_hostlink_hub_crossed(&t));
    t.n_hosts = 0;
    t.nodes[2].host = 1;
    CHECK(!ml_hostlink_hub_crossed(&t));
}

struct server {
    char *script;
    GError *err;
    bool ok;
};

static gpointer server_main(gpointer data)
{
    struct server *s = data;
    s->ok = ml_underlay_run("qemu:///system", "b", s->script, 30, NULL, &s->err);
    return NULL;
}

static void test_for_real(void)
{
    if (system("command -v ping >/dev/null && command -v iperf3 >/dev/null && "
               "command -v timeout >/dev/null") != 0) {
        printf(
            "SKIP the scripts for real: needs ping and iperf3 (scripts/deps.sh installs them)\n");
        return;
    }
    struct in_addr a = {htonl(0x7f000001)}, b = {htonl(0x7f000002)};
    g_autoptr(GError) err = NULL;
    g_autofree char *ping = ml_hostlink_ping_script(a, b, 5);
    g_autofree char *out = NULL;
    CHECK(ml_underlay_run("qemu:///system", "a", ping, 30, &out, &err));
    struct ml_ping_result pr = {0};
    CHECK(out && ml_ping_parse(out, &pr, &err) && pr.received == 5 && pr.have_rtt);
    CHECK(pr.avg_ms > 0 && pr.avg_ms < 5);

    /* The client starts first and tries until the server is up: iperf3 3.12 says a refused
     * connection in its JSON and exits 0, which must not pass for a measurement. */
    unsigned port = 45000 + (unsigned)(getpid() % 1000);
    g_autofree char *client = ml_hostlink_iperf_client_script(a, b, port, 2);
    struct server s = {.script = ml_hostlink_iperf_server_script(b, port, 25)};
    g_autofree char *tcp = NULL;
    GThread *thread = NULL;
    {
        /* A second behind: the client's first tries are refused. */
        g_autofree char *late = g_strdup_printf("sleep 1; %s", s.script);
        g_free(s.script);
        s.script = g_steal_pointer(&late);
        thread = g_thread_new("server", server_main, &s);
    }
    CHECK(ml_underlay_run("qemu:///system", "a", client, 30, &tcp, &err));
    g_thread_join(thread);
    CHECK(s.ok);
    struct ml_iperf_result r = {0};
    CHECK(tcp && ml_iperf_parse(tcp, &r, &err));
    CHECK(r.bits_per_second_received > 1e8 && r.seconds > 1.5);
    printf("loopback underlay: %.3f ms round trip, TCP %.1f Gbit/s\n", pr.avg_ms,
           r.bits_per_second_received / 1e9);
    g_free(s.script);
    g_clear_error(&s.err);

    /* No server at all: the client gives up and says iperf3's error. */
    g_autofree char *alone = ml_hostlink_iperf_client_script(a, b, port + 1, 1);
    g_autofree char *nothing = NULL;
    g_clear_error(&err);
    CHECK(!ml_underlay_run("qemu:///system", "a", alone, 60, &nothing, &err));
    CHECK(err && strstr(err->message, "unable to connect"));
}

int main(void)
{
    test_factor();
    test_for_real();
    return check_finish();
}
