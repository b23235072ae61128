/* The judgement of every second of a pass, the figures over passes, and the CPU counters,
 * on recorded numbers: no guest runs here. */
#include "check.h"

#include <math.h>

#include "measure/guestcpu.h"
#include "measure/pass.h"
#include "measure/physics.h"
#include "measure/stats.h"

/* A relayed pass at about 30 MB/s of payload, the hub moving 2.26 times that (the seed under
 * TCG), idle 400 B/s. */
static void relayed(struct ml_second *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        s[i] = (struct ml_second){.t_s = (double)(i + 1),
                                  .payload_bytes = 30e6 + 1e6 * (double)(i % 3),
                                  .hub_bytes = 2.26 * (30e6 + 1e6 * (double)(i % 3)) + 400};
}

static void test_relay_band(void)
{
    struct ml_second s[10];
    relayed(s, 10);
    g_autoptr(GString) why = g_string_new(NULL);
    CHECK(ml_band_judge(ML_HUB_CARRIES, 400, s, 10, why));
    CHECK(why->len == 0);
    for (size_t i = 1; i < 9; i++)
        CHECK(s[i].ok == 1);
    CHECK(s[0].ok == -1 && s[9].ok == -1); /* the edges: see below */

    /* Seconds 5 and 6 went direct: the hub moved next to nothing while the payload flowed. */
    relayed(s, 10);
    s[4].hub_bytes = s[5].hub_bytes = 2000;
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(ML_HUB_CARRIES, 400, s, 10, why));
    CHECK(s[4].ok == 0 && s[5].ok == 0 && s[3].ok == 1 && s[6].ok == 1);
    CHECK(strstr(why->str, "second 5: hub moved 2.0 kB for 31.0 MB of payload") != NULL);
    CHECK(strstr(why->str, "second 6:") != NULL);

    /* Through the hub twice (a loop, a second relay): 4.4 hub bytes per payload byte, outside. */
    relayed(s, 10);
    s[2].hub_bytes = 4.4 * s[2].payload_bytes;
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(ML_HUB_CARRIES, 400, s, 10, why));
    CHECK(s[2].ok == 0);
    /* nebula's relay with 8 streams under TCG, as measured: 3.47 is the path, inside. */
    relayed(s, 10);
    for (size_t i = 0; i < 10; i++)
        s[i].hub_bytes = 3.47 * s[i].payload_bytes;
    g_string_truncate(why, 0);
    CHECK(ml_band_judge(ML_HUB_CARRIES, 400, s, 10, why));

    /* The edges of a transfer are not judged: a first second at 1.79 above idle (as CI saw for
     * wireguard-go-hub with 8 streams) is its ramp-up; the same in the middle is a failure. */
    relayed(s, 10);
    s[0].hub_bytes = 1.79 * s[0].payload_bytes + 400;
    g_string_truncate(why, 0);
    CHECK(ml_band_judge(ML_HUB_CARRIES, 400, s, 10, why));
    CHECK(s[0].ok == -1 && s[1].ok == 1);
    relayed(s, 10);
    s[1].hub_bytes = 1.79 * s[1].payload_bytes + 400;
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(ML_HUB_CARRIES, 400, s, 10, why));
    CHECK(s[1].ok == 0);
    CHECK(strstr(why->str, "(1.79 per payload byte above idle, the band is 1.8 to 4.0)") != NULL);

    /* A second with under a quarter of the median payload (the tail) is not judged. */
    relayed(s, 10);
    s[9].payload_bytes = 1e6;
    s[9].hub_bytes = 9e6;
    g_string_truncate(why, 0);
    CHECK(ml_band_judge(ML_HUB_CARRIES, 400, s, 10, why));
    CHECK(s[9].ok == -1);
}

/* The hub's counters lag the client's by part of a second: one second reads high and its
 * neighbour low, and together they are the path. Recorded by CI on a quiet host (nebula-relay,
 * forward-8, quick profile, idle 12,823 B/s): second 5 read 4.23 above idle after second 4's
 * 3.14; the two together are 3.51, the pass's own level. It must not fail the pass; a loop's
 * second (above) or a bypass (the seconds that went direct) still does. */
static void test_counter_lag(void)
{
    static const double payload[] = {6161, 117038, 183116, 210127, 106678, 109222, 174661, 106368};
    static const double hub[] = {21946, 417096, 650865, 673162, 464398, 389480, 617978, 385463};
    struct ml_second s[8];
    for (size_t i = 0; i < 8; i++)
        s[i] = (struct ml_second){
            .t_s = (double)(i + 1), .payload_bytes = payload[i], .hub_bytes = hub[i]};
    g_autoptr(GString) why = g_string_new(NULL);
    CHECK(ml_band_judge(ML_HUB_CARRIES, 12823, s, 8, why));
    CHECK(s[4].ok == 1 && why->len == 0);
    /* on bf295aa's rule it failed: the same second alone is 4.23 */
    CHECK((hub[4] - 12823) / payload[4] > ML_BAND_RELAY_MAX);

    /* The quickstart's false alarm of issue 18: 1.75 then 2.59 on a 2.2 path, 2.17 together. */
    relayed(s, 8);
    s[3].hub_bytes = 1.75 * s[3].payload_bytes + 400;
    s[4].hub_bytes = 2.59 * s[4].payload_bytes + 400;
    g_string_truncate(why, 0);
    CHECK(ml_band_judge(ML_HUB_CARRIES, 400, s, 8, why));

    /* No neighbour makes up for a second that went around the hub, nor for a loop's. */
    relayed(s, 8);
    s[3].hub_bytes = 0.5 * s[3].payload_bytes;
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(ML_HUB_CARRIES, 400, s, 8, why));
    relayed(s, 8);
    s[3].hub_bytes = 4.6 * s[3].payload_bytes;
    s[4].hub_bytes = 2.0 * s[4].payload_bytes; /* low, but the pair is 3.3: not the path's 2.26 */
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(ML_HUB_CARRIES, 400, s, 8, why));
    CHECK(s[3].ok == 0);
}

static void test_direct_band(void)
{
    struct ml_second s[6];
    for (size_t i = 0; i < 6; i++)
        s[i] = (struct ml_second){.t_s = (double)(i + 1), .payload_bytes = 60e6, .hub_bytes = 900};
    g_autoptr(GString) why = g_string_new(NULL);
    /* Idle 800 B/s: a few hundred bytes above it is the bridge's chatter, not the payload. */
    CHECK(ml_band_judge(ML_HUB_QUIET, 800, s, 6, why));
    /* A detour: seconds 3 and 4 put the payload through the hub twice. */
    s[2].hub_bytes = 2 * 60e6;
    s[3].hub_bytes = 30e6;
    CHECK(!ml_band_judge(ML_HUB_QUIET, 800, s, 6, why));
    CHECK(s[2].ok == 0 && s[3].ok == 0 && s[1].ok == 1 && s[4].ok == 1);
    CHECK(strstr(why->str, "second 3: hub moved 120.0 MB against an idle 800 B/s") != NULL);
    /* The allowance: 16 KiB plus 0.1 % of the second's payload above the idle rate. */
    for (size_t i = 0; i < 6; i++)
        s[i].hub_bytes = 800 + ML_BAND_DIRECT_SLACK_BYTES + 0.001 * 60e6;
    g_string_truncate(why, 0);
    CHECK(ml_band_judge(ML_HUB_QUIET, 800, s, 6, why));
    s[1].hub_bytes += 2;
    CHECK(!ml_band_judge(ML_HUB_QUIET, 800, s, 6, why));
}

static void test_stats(void)
{
    double odd[] = {739.0, 696.4, 722.1};
    CHECK(ml_median(odd, 3) == 722.1); /* the seed's kernel WireGuard passes */
    double even[] = {4, 1, 3, 2};
    CHECK(ml_median(even, 4) == 2.5);
    CHECK(isnan(ml_median(NULL, 0)));
    double v[100];
    for (int i = 0; i < 100; i++)
        v[i] = 100 - i; /* 1..100, shuffled order does not matter */
    CHECK(ml_percentile(v, 100, 50) == 50);
    CHECK(ml_percentile(v, 100, 99) == 99);
    CHECK(ml_percentile(v, 100, 100) == 100);
    CHECK(ml_percentile(v, 100, 0) == 1);
    double three[] = {1, 2, 3};
    CHECK(ml_percentile(three, 3, 99) == 3);
    /* The busy host's plain passes from the review: 546, 1046, 637 Mbit/s, CV 35.8 %. */
    double busy[] = {546, 1046, 637};
    CHECK(fabs(ml_cv_percent(busy, 3) - 35.84) < 0.01);
    double same[] = {5, 5, 5};
    CHECK(ml_cv_percent(same, 3) == 0);
    CHECK(isnan(ml_cv_percent(same, 1)));
}

/* What the guest prints: /proc/stat's first line (Debian 12's kernel: 10 fields), then the
 * daemons' /proc/PID/stat lines (comm in parentheses may hold spaces) and VmRSS lines. */
static void test_guest_cpu(void)
{
    const char *text =
        "cpu  1124 117 477 656651 46 3 8335 12 0 0\n"
        "D nebula 812 (nebula) S 1 812 812 0 -1 4194560 2130 0 0 0 250 130 0 0 20 0 9 0 5000 "
        "0 0\n"
        "R nebula VmRSS:\t   14336 kB\n"
        "D wireguard-go 900 (wireguard go) S 1 900 900 0 -1 4194560 10 0 0 0 1000 500 0 0 20 0 "
        "9 0 5000 0 0\n"
        "R wireguard-go VmRSS:\t    8000 kB\n"
        "D wireguard-go 901 (wireguard-go) S 1 900 900 0 -1 4194560 10 0 0 0 100 50 0 0 20 0 9 0 "
        "5000 0 0\n"
        "R wireguard-go VmRSS:\t    1000 kB\n";
    struct ml_guest_cpu c;
    CHECK(ml_guest_cpu_parse(text, &c));
    CHECK(c.user_s == 11.24 && c.system_s == 4.77 && c.softirq_s == 83.35 && c.irq_s == 0.03);
    CHECK(c.steal_s == 0.12);
    size_t neb = ml_daemon_index("nebula"), wgo = ml_daemon_index("wireguard-go");
    size_t ts = ml_daemon_index("tailscaled"), hs = ml_daemon_index("headscale");
    CHECK(neb < ML_DAEMONS_MAX && wgo < ML_DAEMONS_MAX && ts < ML_DAEMONS_MAX && hs < ML_DAEMONS_MAX);
    CHECK(fabs(c.daemon_s[neb] - 3.8) < 1e-9);       /* nebula: (250 + 130) / 100 */
    CHECK(fabs(c.daemon_s[wgo] - 16.5) < 1e-9);      /* wireguard-go: two processes together */
    CHECK(c.daemon_s[ts] < 0 && c.daemon_s[hs] < 0); /* no tailscaled, no headscale */
    CHECK(c.daemon_rss_kib[neb] == 14336 && c.daemon_rss_kib[wgo] == 9000);
    CHECK(!strcmp(ml_daemon_name(wgo), "wireguard-go"));
    CHECK(!ml_guest_cpu_parse("bash: /proc/stat: No such file\n", &c));

    /* The host: 2 CPUs, 10 s; 16 s busy of which the lab's QEMU 14 s and meshlab 0.5: 7.5 %. */
    struct ml_host_cpu a = {.ok = true,
                            .total_s = 100,
                            .idle_s = 50,
                            .steal_s = 0,
                            .qemu_s = 10,
                            .self_s = 1,
                            .cpus = 2};
    struct ml_host_cpu b = {.ok = true,
                            .total_s = 120,
                            .idle_s = 54,
                            .steal_s = 0,
                            .qemu_s = 24,
                            .self_s = 1.5,
                            .cpus = 2};
    double other, steal;
    ml_host_cpu_other(&a, &b, &other, &steal);
    CHECK(fabs(other - 7.5) < 1e-9 && steal == 0);
    b.steal_s = 2;
    b.idle_s = 52;
    ml_host_cpu_other(&a, &b, &other, &steal);
    CHECK(fabs(steal - 10) < 1e-9);
    a.ok = false;
    ml_host_cpu_other(&a, &b, &other, &steal);
    CHECK(isnan(other) && isnan(steal));
}

/* The latency probe's pings cross a relaying hub in and out, each way: counted from the pings
 * sent and the replies, at the frame size the path's encapsulation gives a ping, and taken out of
 * the pass's hub factor; the raw figure stays beside it. The review's wireguard-hub pass 1 moved
 * 381,410,776 hub bytes; 600 pings, 590 replies. */
static void test_probe_bytes(void)
{
    const struct ml_encap *wg = ml_path_find("wireguard-hub")->encap;
    struct ml_probe_bytes b = ml_pass_probe_bytes(wg, 600, 590);
    CHECK(b.frame_bytes == 170);
    CHECK(b.rx_packets == 1190);
    CHECK(b.rx_bytes == 1190 * 170);
    /* a direct path's pings never reach the hub */
    b = ml_pass_probe_bytes(ml_path_find("plain")->encap, 600, 590);
    CHECK(b.frame_bytes == 0 && b.rx_packets == 0 && b.rx_bytes == 0);
    b = ml_pass_probe_bytes(ml_path_find("nebula-relay")->encap, 600, 600);
    CHECK(b.rx_bytes == 1200 * 190);

    long long probe = 1190 * 170;
    struct ml_hub_factors f = ml_pass_hub_factors(190600000, 190810776, probe, 171400000);
    CHECK(fabs(f.raw - 381410776.0 / 171400000) < 1e-12);
    CHECK(fabs(f.net - (381410776.0 - 2 * probe) / 171400000) < 1e-12);
    CHECK(fabs(f.in - (190600000.0 - probe) / 171400000) < 1e-12);
    CHECK(fabs(f.out - (190810776.0 - probe) / 171400000) < 1e-12);
    CHECK(f.raw - f.net > 0.0023 && f.raw - f.net < 0.0024);
    f = ml_pass_hub_factors(10, 10, 0, 0);
    CHECK(isnan(f.raw) && isnan(f.net) && isnan(f.in) && isnan(f.out));
}

/* A fixed-rate pass's share of its offered rate: the review's nebula fixed #3 carried 1.79 of
 * 2.0 Mbit/s, under 95 %. */
static void test_carried(void)
{
    double c = ml_pass_carried_percent(1.79e6, 2e6);
    CHECK(fabs(c - 89.5) < 1e-9);
    CHECK(c < ML_PASS_CARRIED_MIN_PERCENT);
    CHECK(ml_pass_carried_percent(1.95e6, 2e6) >= ML_PASS_CARRIED_MIN_PERCENT);
    CHECK(isnan(ml_pass_carried_percent(45e6, 0)));
}

/* Ping's output with `sent` pings of which the first `got` replied, in 1 ms .. got ms. */
static char *ping_text(unsigned sent, unsigned got)
{
    GString *s = g_string_new("PING 10.8.0.3 (10.8.0.3) 56(84) bytes of data.\n");
    for (unsigned i = 1; i <= got; i++)
        g_string_append_printf(s, "64 bytes from 10.8.0.3: icmp_seq=%u ttl=64 time=%u.0 ms\n", i,
                               i);
    g_string_append_printf(s,
                           "\n--- 10.8.0.3 ping statistics ---\n%u packets transmitted, %u "
                           "received, %u%% packet loss, time 5000ms\n",
                           sent, got, (sent - got) * 100 / sent);
    if (got)
        g_string_append_printf(s, "rtt min/avg/max/mdev = 1.0/%.1f/%u.0/1.0 ms\n", (got + 1) / 2.0,
                               got);
    return g_string_free(s, FALSE);
}

static bool flag(struct json_object *o, const char *key)
{
    return json_object_get_boolean(json_object_object_get(o, key));
}

static double value(struct json_object *o, const char *key)
{
    return json_object_get_double(json_object_object_get(o, key));
}

/* Lost pings count as +inf: up to 1 % lost the p99 is a reply's, exact; above it is the largest
 * reply and only a lower bound, said so. */
static void test_p99_counts_the_lost(void)
{
    g_autofree char *none = ping_text(200, 200);
    struct json_object *o = ml_pass_rtt_json(none);
    CHECK(value(o, "p99_ms") == 198 && !flag(o, "p99_at_least"));
    CHECK(value(o, "p50_ms") == 100 && !flag(o, "p50_at_least"));
    json_object_put(o);

    /* 2 of 200 lost, 1 %: the 198th of 200 values is still a reply, the largest */
    g_autofree char *one = ping_text(200, 198);
    o = ml_pass_rtt_json(one);
    CHECK(value(o, "p99_ms") == 198 && !flag(o, "p99_at_least"));
    json_object_put(o);

    /* 3 of 200 lost: the p99 lands on a lost ping; over the replies alone it would read 195 */
    g_autofree char *three = ping_text(200, 197);
    o = ml_pass_rtt_json(three);
    CHECK(value(o, "p99_ms") == 197 && flag(o, "p99_at_least"));
    CHECK(value(o, "p90_ms") == 180 && !flag(o, "p90_at_least"));
    CHECK(fabs(value(o, "loss_percent") - 1.5) < 1e-9);
    CHECK(value(o, "max_ms") == 197);
    json_object_put(o);

    /* the review's nebula fixed #3, 9.83 % lost: its p99 is a bound, its p90 just not yet; 12 %
     * lost makes the p90 one too */
    g_autofree char *many = ping_text(600, 541);
    o = ml_pass_rtt_json(many);
    CHECK(flag(o, "p99_at_least") && !flag(o, "p90_at_least") && !flag(o, "p50_at_least"));
    CHECK(value(o, "p99_ms") == 541 && value(o, "p90_ms") == 540 && value(o, "p50_ms") == 300);
    json_object_put(o);
    g_autofree char *more = ping_text(600, 528);
    o = ml_pass_rtt_json(more);
    CHECK(flag(o, "p90_at_least") && value(o, "p90_ms") == 528);
    json_object_put(o);

    /* nothing came back: no time, and every percentile beyond what was seen */
    g_autofree char *lost = ping_text(20, 0);
    o = ml_pass_rtt_json(lost);
    CHECK(json_object_object_get(o, "p99_ms") == NULL && flag(o, "p99_at_least"));
    json_object_put(o);
}

/* ---- ml_pass_judge: a pass's verdict from its recorded counters, iperf3's result, views ---- */

/* Samples as the host reads them: cumulative counters, one reading a second from 0. The client
 * sends client[i] bytes in second i+1 and the hub moves hub[i] (half in, half out). */
static size_t samples_of(const double *client, const double *hub, size_t n,
                         struct ml_pass_sample *ret)
{
    ret[0] = (struct ml_pass_sample){.hub = {.rx_bytes = 5000, .tx_bytes = 7000},
                                     .client = {.rx_bytes = 100, .tx_bytes = 200}};
    for (size_t i = 0; i < n; i++) {
        ret[i + 1] = ret[i];
        ret[i + 1].t = (double)(i + 1);
        ret[i + 1].client.tx_bytes += (long long)client[i];
        ret[i + 1].hub.rx_bytes += (long long)(hub[i] / 2);
        ret[i + 1].hub.tx_bytes += (long long)(hub[i] - (long long)(hub[i] / 2));
        ret[i + 1].hub.rx_packets += 1000;
        ret[i + 1].hub.tx_packets += 1000;
    }
    return n + 1;
}

static const struct ml_pass_view views_ok[] = {
    {"start", true, "route: 10.10.0.3 dev wg0"},
    {"middle", true, "route: 10.10.0.3 dev wg0"},
    {"end", true, "route: 10.10.0.3 dev wg0"},
};

static void test_judge(void)
{
    /* A relayed pass: 8 seconds, the client's NIC 5 % above the payload (headers), the hub 2.26
     * times the payload above an idle 400 B/s. */
    double client[8], hub[8];
    for (size_t i = 0; i < 8; i++) {
        client[i] = 1.05 * 10e6;
        hub[i] = 2.26 * 10e6 + 400;
    }
    struct ml_pass_sample smp[9];
    size_t ns = samples_of(client, hub, 8, smp);
    struct ml_iperf_result r = {
        .payload_bytes = 80000000, .n_intervals = 2, .interval_bytes = {9.9e6, 10.1e6}};
    struct ml_pass_verdict v = {0};
    ml_pass_judge(ML_HUB_CARRIES, 400, smp, ns, &r, views_ok, 3, &v);
    CHECK(v.passed);
    CHECK_STR(v.reason->str, "");
    CHECK(v.n == 8);
    /* the series: payload from the client's NIC scaled to iperf3's payload, iperf3's intervals
     * beside it (none past its last), the hub's bytes and packets of each second */
    CHECK(v.sec[0].t_s == 1 && v.sec[7].t_s == 8);
    CHECK(fabs(v.sec[3].payload_bytes - 10e6) < 1 && v.sec[3].client_bytes == 1.05 * 10e6);
    CHECK(v.sec[0].iperf_bytes == 9.9e6 && v.sec[1].iperf_bytes == 10.1e6 &&
          v.sec[2].iperf_bytes == 0);
    CHECK(fabs(v.sec[3].hub_bytes - (2.26 * 10e6 + 400)) < 1 && v.sec[3].hub_packets == 2000);
    CHECK(v.sec[0].ok == -1 && v.sec[7].ok == -1 && v.sec[3].ok == 1);
    ml_pass_verdict_clear(&v);
    CHECK(v.sec == NULL && v.reason == NULL);

    /* Seconds 4 and 5 went around the hub: the band fails the pass and says which. */
    hub[3] = hub[4] = 3000;
    ns = samples_of(client, hub, 8, smp);
    ml_pass_judge(ML_HUB_CARRIES, 400, smp, ns, &r, views_ok, 3, &v);
    CHECK(!v.passed);
    CHECK(v.sec[3].ok == 0 && v.sec[4].ok == 0 && v.sec[2].ok == 1);
    CHECK(g_str_has_prefix(v.reason->str, "outside the relayed band: second 4: hub moved 3.0 kB "
                                          "for 10.0 MB of payload"));
    CHECK(strstr(v.reason->str, "; second 5: hub moved 3.0 kB") != NULL);
    CHECK(strstr(v.reason->str, "view") == NULL);
    ml_pass_verdict_clear(&v);

    /* The counters lag: CI's nebula-relay pass (test_counter_lag) through the judge passes. */
    static const double lag_payload[] = {6161,   117038, 183116, 210127,
                                         106678, 109222, 174661, 106368};
    static const double lag_hub[] = {21946, 417096, 650865, 673162, 464398, 389480, 617978, 385463};
    ns = samples_of(lag_payload, lag_hub, 8, smp);
    double lag_total = 0;
    for (size_t i = 0; i < 8; i++)
        lag_total += lag_payload[i];
    struct ml_iperf_result lag_r = {.payload_bytes = (uint64_t)lag_total};
    ml_pass_judge(ML_HUB_CARRIES, 12823, smp, ns, &lag_r, views_ok, 3, &v);
    CHECK(v.passed && v.sec[4].ok == 1);
    ml_pass_verdict_clear(&v);
    /* and a second without a neighbour to make up for it still fails it */
    double loop_hub[8];
    memcpy(loop_hub, lag_hub, sizeof(loop_hub));
    loop_hub[4] = 4.6 * lag_payload[4] + 12823;
    loop_hub[3] = 4.6 * lag_payload[3] + 12823;
    ns = samples_of(lag_payload, loop_hub, 8, smp);
    ml_pass_judge(ML_HUB_CARRIES, 12823, smp, ns, &lag_r, views_ok, 3, &v);
    CHECK(!v.passed && v.sec[4].ok == 0);
    ml_pass_verdict_clear(&v);

    /* A view that did not show the path fails a pass whose seconds are all inside. */
    for (size_t i = 0; i < 8; i++)
        hub[i] = 2.26 * 10e6 + 400;
    ns = samples_of(client, hub, 8, smp);
    struct ml_pass_view views[3];
    memcpy(views, views_ok, sizeof(views));
    views[1] = (struct ml_pass_view){"middle", false, "route: 10.10.0.3 dev eth0"};
    ml_pass_judge(ML_HUB_CARRIES, 400, smp, ns, &r, views, 3, &v);
    CHECK(!v.passed);
    CHECK_STR(v.reason->str, "the dataplane's view at the middle did not show the path: "
                             "route: 10.10.0.3 dev eth0");
    ml_pass_verdict_clear(&v);
    /* both: the band first, then each view in order, "; " between; no evidence reads "?" */
    hub[5] = 4.6 * 10e6;
    ns = samples_of(client, hub, 8, smp);
    views[2] = (struct ml_pass_view){"end", false, NULL};
    ml_pass_judge(ML_HUB_CARRIES, 400, smp, ns, &r, views, 3, &v);
    CHECK(!v.passed);
    CHECK(g_str_has_prefix(v.reason->str, "outside the relayed band: second 6: "));
    CHECK(g_str_has_suffix(v.reason->str,
                           "; the dataplane's view at the middle did not show the path: route: "
                           "10.10.0.3 dev eth0; the dataplane's view at the end did not show the "
                           "path: ?"));
    ml_pass_verdict_clear(&v);

    /* A direct path: a hub at its idle rate passes; the payload through the hub fails it, and
     * the sentence names the direct band. */
    for (size_t i = 0; i < 8; i++)
        hub[i] = 900;
    ns = samples_of(client, hub, 8, smp);
    ml_pass_judge(ML_HUB_QUIET, 800, smp, ns, &r, views_ok, 3, &v);
    CHECK(v.passed && v.sec[0].ok == 1 && v.sec[7].ok == 1);
    ml_pass_verdict_clear(&v);
    hub[2] = 2 * 10e6;
    ns = samples_of(client, hub, 8, smp);
    ml_pass_judge(ML_HUB_QUIET, 800, smp, ns, &r, views_ok, 3, &v);
    CHECK(!v.passed && v.sec[2].ok == 0);
    CHECK_STR(v.reason->str,
              "outside the direct band: second 3: hub moved 20.0 MB against an idle 800 B/s");
    ml_pass_verdict_clear(&v);
}

int main(void)
{
    test_judge();
    test_counter_lag();
    test_probe_bytes();
    test_carried();
    test_p99_counts_the_lost();
    test_relay_band();
    test_direct_band();
    test_stats();
    test_guest_cpu();
    return check_finish();
}
