/* What iperf3 3.12 already knows, read from real -J outputs (tests/data/samples/README): the
 * warm-up -O leaves out, tcp_info's RTT, MSS and path MTU, the congestion control, a UDP run's
 * loss and jitter; the command a pass runs; and the hub factor over the whole transfer.
 *
 * iperf 3.12's source (esnet/iperf, tag 3.12) is what the parser relies on:
 *   src/iperf_api.c iperf_reset_stats(): when the omit timer fires, bytes_received = 0 and
 *     bytes_sent_omit = bytes_sent, so end.sum_sent/sum_received leave the omitted seconds out,
 *     while stream_max_rtt/stream_sum_rtt are not reset (the RTTs cover the warm-up);
 *   iperf_print_intermediate(): intervals[].sum has "omitted" (the warm-up's intervals are
 *     printed, marked true);
 *   iperf_print_results(): end.streams[].sender has max_rtt, min_rtt, mean_rtt (tcp_info, µs)
 *     for every stream, zeros where the local socket does not send (-R);
 *   print_interval_results(): intervals[].streams[].pmtu (tcp_info's tcpi_pmtu) for a sending
 *     TCP socket only;
 *   iperf_on_connect(): start.tcp_mss when -M was given, else start.tcp_mss_default;
 *   end.sender_tcp_congestion / receiver_tcp_congestion (TCP on Linux). */
#include "check.h"
#include "measure/parse_iperf.h"
#include "measure/pass.h"
#include "report/schema_check.h"

#include <json-c/json.h>
#include <math.h>

/* A recorded output; the test cannot mean anything without it. */
static char *sample(const char *name)
{
    g_autofree char *path = g_strconcat("tests/data/samples/", name, NULL);
    char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-6 * MAX(1.0, fabs(b));
}

/* iperf3 -t 3 -O 1 --get-server-output: the first interval is the warm-up; every end figure is
 * of the 3 s after. The warm-up counts as the server received it (server_output_json). */
static void test_omit_forward(void)
{
    g_autofree char *text = sample("iperf3/forward-1-omit-1-server.json");
    struct ml_iperf_result r;
    g_autoptr(GError) err = NULL;
    CHECK(ml_iperf_parse(text, &r, &err));
    CHECK(r.omit_s == 1);
    CHECK(r.n_intervals == 4);
    CHECK(r.interval_omitted[0] && !r.interval_omitted[1] && !r.interval_omitted[3]);
    /* 3.12 leaves the omitted interval out of end.sum_sent: the measured intervals add up to
     * it exactly. The parser's whole-transfer payload rests on this. */
    double measured = r.interval_bytes[1] + r.interval_bytes[2] + r.interval_bytes[3];
    CHECK(near(measured, (double)r.bytes_sent));
    CHECK(r.bytes_sent == 8081899520u);
    CHECK(r.payload_bytes == 8083341524u); /* end.sum_received */
    /* The server's omitted interval, not the client's 2245263360: what was in flight when the
     * warm-up ended (1442004 bytes) is in end.sum_received already. */
    CHECK(r.omitted_bytes == 2243821356u);
    /* So the whole transfer received is every byte the client sent, warm-up included, exactly:
     * the sender's count would have read 1442004 bytes high. */
    CHECK(ml_iperf_transfer_bytes(&r) == 8081899520u + 2245263360u);
    CHECK(near(r.seconds, 3.000609));
    CHECK(near(r.omitted_s, 1.000480055809021));
    CHECK(near(ml_iperf_transfer_s(&r), 3.000609 + 1.000480055809021));
    CHECK_STR(r.sender_congestion, "bbr");
    CHECK_STR(r.receiver_congestion, "bbr");
    CHECK(r.tcp_mss == 32768);
    CHECK(near(r.rtt_mean_us, 177) && near(r.rtt_max_us, 486) && near(r.rtt_min_us, 58));
    CHECK(r.pmtu == 65535);
    CHECK(r.retransmits == 18);
    CHECK(!r.udp && isnan(r.jitter_ms) && r.lost_packets == -1 && r.packets == -1);
}

/* The same without the server's document: the warm-up the client sent is known only as it sent
 * it, which reads high; the pass fails rather than report that. */
static void test_omit_without_receiver(void)
{
    g_autofree char *text = sample("iperf3/forward-1-omit-1.json");
    struct ml_iperf_result r = {.omit_s = 77};
    g_autoptr(GError) err = NULL;
    CHECK(!ml_iperf_parse(text, &r, &err));
    CHECK(r.omit_s == 77); /* untouched */
    CHECK_STR(err ? err->message : NULL,
              "iperf3's output counts the 857079808 bytes of the warm-up (-O) only as the client "
              "sent them: the receiver's count, server_output_json (--get-server-output, the "
              "server run with -J), is missing, and without it the payload would read high");
}

/* -R: the client is the receiver, so its own omitted intervals are the receiver's count, and the
 * server's document is not needed: the same figures with it taken out. */
static void test_omit_reverse(void)
{
    g_autofree char *text = sample("iperf3/reverse-1-omit-1-server.json");
    struct ml_iperf_result r, bare;
    CHECK(ml_iperf_parse(text, &r, NULL));
    CHECK(r.omitted_bytes == 2625634198u && r.payload_bytes == 7122845696u);
    struct json_object *doc = json_tokener_parse(text);
    CHECK(doc && json_object_object_get_ex(doc, "server_output_json", NULL));
    json_object_object_del(doc, "server_output_json");
    CHECK(ml_iperf_parse(json_object_to_json_string(doc), &bare, NULL));
    CHECK(bare.omitted_bytes == r.omitted_bytes && bare.payload_bytes == r.payload_bytes);
    json_object_put(doc);
}

/* A slow relay's eight streams on the lab's guests (nebula-relay, 2.6 Mbit/s, -t 3 -O 1): the
 * client wrote 1392768 bytes in the warm-up into its sockets, the server counted 320736 of them
 * then, and 851136 bytes the client sent were never counted received: still in the buffers when
 * the test ended, they crossed the hub all the same. Over the measured seconds alone the server
 * counted more than the client sent, and the tail disappeared: the pass's band read no tail and
 * failed the genuine pass at 3.38 hub bytes per payload byte against a ceiling of 2.61. */
static void test_unreceived_tail(void)
{
    g_autofree char *text = sample("iperf3/nebula-relay-forward-8-omit-1.json");
    struct ml_iperf_result r;
    CHECK(ml_iperf_parse(text, &r, NULL));
    CHECK(r.bytes_sent == 965952u && r.bytes_received == 1186848u);
    CHECK(r.omitted_sent_bytes == 1392768u && r.omitted_received_bytes == 320736u);
    CHECK(!r.omitted_sent_unknown);
    CHECK(ml_iperf_transfer_bytes(&r) == 1186848u + 320736u);
    CHECK(ml_iperf_unreceived_bytes(&r) == 851136.0);
    /* -R with the client's document alone: the sender's count of the warm-up is unknown, and
     * the tail is the measured seconds' (none here). */
    g_autofree char *rev = sample("iperf3/reverse-1-omit-1-server.json");
    struct json_object *doc = json_tokener_parse(rev);
    json_object_object_del(doc, "server_output_json");
    CHECK(ml_iperf_parse(json_object_to_json_string(doc), &r, NULL));
    CHECK(r.omitted_sent_unknown && r.omitted_received_bytes == 2625634198u);
    CHECK(ml_iperf_unreceived_bytes(&r) == 0); /* 7121141760 sent, 7122845696 received */
    json_object_put(doc);
    /* With the server's document it is known: 2627993600 + 7121141760 sent, 2625634198 +
     * 7122845696 received. */
    CHECK(ml_iperf_parse(rev, &r, NULL));
    CHECK(!r.omitted_sent_unknown && ml_iperf_unreceived_bytes(&r) == 655466.0);
    /* A client's count below its server's (tests/data/samples/README,
     * nebula-relay-forward-1-sent-short): the block it was writing is counted as sent. */
    g_autofree char *text2 = sample("iperf3/nebula-relay-forward-1-sent-short.json");
    CHECK(ml_iperf_parse(text2, &r, NULL));
    CHECK(r.blksize == 131072 && r.streams == 1);
    CHECK(r.bytes_sent == 786240u && r.omitted_sent_bytes == 285792u);
    CHECK(r.bytes_received == 856128u && r.omitted_received_bytes == 230880u);
    CHECK(ml_iperf_unreceived_bytes(&r) == 116096.0);
    /* A count at or above the receiver's is taken as it is: the eight streams' above. */
    g_autofree char *text8 = sample("iperf3/nebula-relay-forward-8-omit-1.json");
    CHECK(ml_iperf_parse(text8, &r, NULL));
    CHECK(r.blksize == 131072 && r.streams == 8 && ml_iperf_unreceived_bytes(&r) == 851136.0);
}

/* --bidir -P 2 -O 1: the warm-up counts both directions as each receiver counted it, the
 * client's reverse intervals and the server's forward ones; the RTT is the client's two sending
 * sockets' only (the two receiving ones print their ACK-only flow's). */
static void test_omit_bidir(void)
{
    g_autofree char *text = sample("iperf3/bidir-2-omit-1-server.json");
    struct ml_iperf_result r;
    CHECK(ml_iperf_parse(text, &r, NULL));
    CHECK(r.omitted_bytes == 153354240u + 1236467659u);
    CHECK(r.payload_bytes == 5832245301u + 819462144u);
    CHECK(ml_iperf_transfer_bytes(&r) == r.payload_bytes + r.omitted_bytes);
    CHECK(near(r.rtt_mean_us, (309.0 + 385.0) / 2));
    CHECK(near(r.rtt_max_us, 1281) && near(r.rtt_min_us, 37));
    CHECK(r.pmtu == 65535);
    CHECK(r.retransmits == 49 + 12); /* the client's sending sockets' and the server's */
    CHECK(r.bytes_sent_reverse == 819200000u);
}

/* --bidir -P 4 -O 1 (rrul) through wireguard-hub: each direction's sender left a tail its
 * receiver never counted, the server's three times the client's; both are what crossed the hub
 * beyond the payload. */
static void test_unreceived_bidir(void)
{
    g_autofree char *text = sample("iperf3/wireguard-hub-rrul-omit-1.json");
    struct ml_iperf_result r;
    CHECK(ml_iperf_parse(text, &r, NULL));
    CHECK(r.bytes_sent == 4788000u && r.omitted_sent_bytes == 1653912u);
    CHECK(r.bytes_received == 4804416u && r.omitted_received_bytes == 911088u);
    CHECK(r.bytes_sent_reverse == 9194328u && r.omitted_sent_reverse_bytes == 3801672u);
    CHECK(r.bytes_received_reverse == 8508960u && r.omitted_received_reverse_bytes == 2270880u);
    CHECK(!r.reverse_sent_unknown);
    CHECK(ml_iperf_unreceived_bytes(&r) == 726408.0 + 2216160.0);
    CHECK(r.retransmits == 0);
    struct json_object *doc = json_tokener_parse(text);
    json_object_object_del(doc, "server_output_json");
    g_autoptr(GError) err = NULL;
    /* the client's warm-up sending needs the server's count: that fails (read_warm_up) */
    CHECK(!ml_iperf_parse(json_object_to_json_string(doc), &r, &err));
    json_object_put(doc);
}

/* No -O: nothing omitted, the whole transfer is the measured one. -R: the client sends nothing,
 * so neither RTT nor path MTU is known (3.12 prints zeros and no pmtu there). */
static void test_no_omit_and_reverse(void)
{
    g_autofree char *text = sample("iperf3/reverse-1.json");
    struct ml_iperf_result r;
    CHECK(ml_iperf_parse(text, &r, NULL));
    CHECK(r.omit_s == 0 && r.omitted_bytes == 0 && r.omitted_s == 0);
    CHECK(ml_iperf_transfer_bytes(&r) == r.payload_bytes &&
          near(ml_iperf_transfer_s(&r), r.seconds));
    CHECK(isnan(r.rtt_mean_us) && isnan(r.rtt_max_us) && isnan(r.rtt_min_us));
    CHECK(r.pmtu == -1);
    CHECK(r.tcp_mss == 32768);
}

/* -u -b 10M -O 1: loss and jitter from end.sum; nothing of TCP. */
static void test_udp(void)
{
    g_autofree char *text = sample("iperf3/udp-10M-omit-1-server.json");
    struct ml_iperf_result r;
    g_autoptr(GError) err = NULL;
    CHECK(ml_iperf_parse(text, &r, &err));
    CHECK(r.udp);
    CHECK(r.packets == 114 && r.lost_packets == 0 && near(r.lost_percent, 0));
    CHECK(near(r.jitter_ms, 0.014835950515343446));
    CHECK(r.omitted_bytes == 1277952u && r.payload_bytes == 3735552u);
    CHECK(r.retransmits == -1 && r.tcp_mss == -1 && r.pmtu == -1 && isnan(r.rtt_mean_us));
    CHECK(r.sender_congestion[0] == 0);
}

/* Every field beyond the end sums may be missing or mistyped: it is then unknown, never an
 * error and never a wrong number. */
static void test_optional_fields(void)
{
    static const char bare[] = "{\"end\": {\"sum_sent\": {\"bytes\": 10}, \"sum_received\": "
                               "{\"bytes\": 9, \"bits_per_second\": 8, \"seconds\": 1}}}";
    struct ml_iperf_result r;
    g_autoptr(GError) err = NULL;
    CHECK(ml_iperf_parse(bare, &r, &err));
    CHECK(r.omit_s == 0 && ml_iperf_transfer_bytes(&r) == 9 && r.tcp_mss == -1 && r.pmtu == -1);
    CHECK(isnan(r.rtt_mean_us) && !r.udp && r.sender_congestion[0] == 0);

    static const char odd[] =
        "{\"start\": {\"tcp_mss_default\": \"big\", \"test_start\": {\"omit\": -3, \"protocol\": "
        "\"UDP\"}},"
        " \"intervals\": [{\"sum\": {\"bytes\": 5, \"seconds\": 1, \"omitted\": \"yes\"},"
        "  \"streams\": [{\"pmtu\": -1, \"sender\": true}, {\"pmtu\": 1400}]}],"
        " \"end\": {\"sender_tcp_congestion\": 5, \"sum\": {\"jitter_ms\": \"x\", "
        "\"lost_percent\": "
        "300, \"packets\": -2},"
        "  \"streams\": [{\"sender\": {\"sender\": true, \"mean_rtt\": \"fast\", \"max_rtt\": 9}},"
        "   {\"sender\": {\"sender\": false, \"mean_rtt\": 40, \"max_rtt\": 80}}, 7],"
        "  \"sum_sent\": {\"bytes\": 10}, \"sum_received\": {\"bytes\": 9, \"bits_per_second\": 8,"
        "  \"seconds\": 1}}}";
    CHECK(ml_iperf_parse(odd, &r, &err));
    CHECK(r.omit_s == 0 && r.omitted_bytes == 0 && !r.interval_omitted[0]);
    CHECK(r.tcp_mss == -1 && r.pmtu == -1 && isnan(r.rtt_mean_us) && isnan(r.rtt_max_us));
    CHECK(r.udp && isnan(r.jitter_ms) && isnan(r.lost_percent) && r.packets == -1);
    CHECK(r.sender_congestion[0] == 0);

    /* An interval no pass can have is refused, not summed into the warm-up. */
    static const char huge[] =
        "{\"intervals\": [{\"sum\": {\"bytes\": 9223372036854775807, \"seconds\": 1, "
        "\"omitted\": true}}], \"end\": {\"sum_sent\": {\"bytes\": 10}, \"sum_received\": "
        "{\"bytes\": 9, \"bits_per_second\": 8, \"seconds\": 1}}}";
    CHECK(!ml_iperf_parse(huge, &r, &err));
    CHECK_STR(err ? err->message : NULL,
              "iperf3 output's intervals[0] claims 9223372036854775808 bytes in 1 s; no "
              "interval of a pass has more than 9007199254740992 bytes or lasts over 3600 s");
}

/* The command a pass runs: the warm-up within the pass's seconds, UDP at its rate, rrul both
 * ways with 4 streams, the fixed rate split over the streams. */
static void test_iperf_cmd(void)
{
    static const struct {
        struct ml_cell cell;
        unsigned seconds;
        double offered;
        const char *want;
    } cases[] = {
        {{.name = "forward-1", .direction = ML_DIR_FORWARD, .streams = 1},
         30,
         0,
         "iperf3 -J -c 10.0.0.3 -t 28 -O 2 --get-server-output"},
        {{.name = "reverse-1", .direction = ML_DIR_REVERSE, .streams = 1},
         4,
         0,
         "iperf3 -J -c 10.0.0.3 -t 3 -O 1 --get-server-output -R"},
        {{.name = "forward-1", .direction = ML_DIR_FORWARD, .streams = 1},
         3,
         0,
         "iperf3 -J -c 10.0.0.3 -t 3"},
        {{.name = "forward-8-fixed", .direction = ML_DIR_FORWARD, .streams = 8, .fixed_rate = true},
         8,
         80e6,
         "iperf3 -J -c 10.0.0.3 -t 6 -O 2 --get-server-output -P 8 -b 10000000"},
        {{.name = "udp-10M",
          .direction = ML_DIR_FORWARD,
          .streams = 1,
          .kind = ML_CELL_UDP,
          .udp_bits_per_second = 10e6},
         30,
         0,
         "iperf3 -J -c 10.0.0.3 -t 28 -O 2 --get-server-output -u -b 10000000"},
        {{.name = "rrul", .direction = ML_DIR_BIDIR, .streams = 4, .kind = ML_CELL_RRUL},
         30,
         0,
         "iperf3 -J -c 10.0.0.3 -t 28 -O 2 --get-server-output --bidir -P 4"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *got =
            ml_pass_iperf_cmd(NULL, "10.0.0.3", &cases[i].cell, cases[i].seconds, cases[i].offered);
        CHECK_STR(got, cases[i].want);
    }
    g_autofree char *ns = ml_pass_iperf_cmd("ip netns exec c ", "10.0.0.3", &cases[0].cell, 30, 0);
    CHECK_STR(ns, "ip netns exec c iperf3 -J -c 10.0.0.3 -t 28 -O 2 --get-server-output");
    /* The warm-up is a quarter of the pass, at most 2 s; none in a pass under 4 s. */
    CHECK(ml_profile_omit_s(1) == 0 && ml_profile_omit_s(3) == 0 && ml_profile_omit_s(4) == 1);
    CHECK(ml_profile_omit_s(8) == 2 && ml_profile_omit_s(600) == 2);
}

/* The series of a relayed pass with -O 1, built from the recorded forward-1-omit-1-server.json:
 * the
 * client's NIC moved exactly iperf3's interval bytes each second, the hub twice that. Each
 * second's payload is the client's bytes scaled by the whole transfer's payload over the
 * client's NIC bytes, so it must come out at the client's bytes (scale ~1), and the pass's
 * hub factor over the whole transfer at 2. Scaled by the measured payload alone (the warm-up
 * left out) every second would read ~3/4 of its payload and the hub factor ~8/3. */
static void test_series_with_warm_up(void)
{
    g_autofree char *text = sample("iperf3/forward-1-omit-1-server.json");
    struct ml_iperf_result r;
    CHECK(ml_iperf_parse(text, &r, NULL));
    struct ml_pass_sample smp[5] = {0};
    long long client = 0;
    for (unsigned k = 1; k <= 4; k++) {
        client += (long long)r.interval_bytes[k - 1];
        smp[k].t = k;
        smp[k].client.tx_bytes = client;
    }
    struct ml_pass_verdict v = {0};
    const struct ml_pass_view views[] = {{.when = "start", .ok = true}};
    /* A direct path's hub stays quiet: the series' payload scale is what is checked here. */
    const struct ml_pass_expect x = {.role = ML_HUB_QUIET};
    ml_pass_judge(&x, smp, 5, &r, views, 1, &v);
    CHECK(v.n == 4);
    double scale = (double)ml_iperf_transfer_bytes(&r) / (double)client;
    CHECK(fabs(scale - 1) < 0.001); /* the client NIC's bytes are the whole transfer's */
    for (size_t i = 0; i < v.n; i++)
        CHECK(fabs(v.sec[i].payload_bytes / r.interval_bytes[i] - 1) < 0.001);
    CHECK(v.passed);
    struct ml_hub_factors f =
        ml_pass_hub_factors(2 * client, 0, 0, (long long)ml_iperf_transfer_bytes(&r));
    CHECK(fabs(f.net - 2) < 0.002);
    struct ml_hub_factors wrong = ml_pass_hub_factors(2 * client, 0, 0, (long long)r.payload_bytes);
    CHECK(wrong.net > 2.5); /* what dividing by the measured payload alone would have read */
    ml_pass_verdict_clear(&v);
}

/* A number of the pass's object, or NAN when it is null or missing. */
static double field(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && v ? json_object_get_double(v) : NAN;
}

static bool is_null(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && v == NULL;
}

/* What results.json's passes[] keep of iperf3: the whole transfer beside the measured part. */
static void test_pass_json(void)
{
    g_autofree char *tcp_text = sample("iperf3/forward-1-omit-1-server.json");
    struct ml_iperf_result r;
    CHECK(ml_iperf_parse(tcp_text, &r, NULL));
    const struct ml_cell tcp = {.name = "forward-1", .direction = ML_DIR_FORWARD, .streams = 1};
    struct json_object *o = json_object_new_object();
    ml_pass_iperf_json(o, &tcp, &r);
    CHECK(field(o, "payload_bytes") == 8083341524.0 + 2243821356.0);
    CHECK(field(o, "measured_payload_bytes") == 8083341524.0);
    CHECK(field(o, "omitted_payload_bytes") == 2243821356.0);
    CHECK(near(field(o, "omitted_s"), 1.000480055809021));
    CHECK(near(field(o, "measured_s"), 3.000609));
    CHECK(near(field(o, "duration_s"), 3.000609 + 1.000480055809021));
    CHECK(near(field(o, "retransmits_per_second"), 18 / 3.000609));
    CHECK(near(field(o, "tcp_rtt_mean_ms"), 0.177) && near(field(o, "tcp_rtt_max_ms"), 0.486));
    CHECK(near(field(o, "tcp_rtt_min_ms"), 0.058));
    CHECK(field(o, "tcp_mss") == 32768 && field(o, "path_mtu") == 65535);
    struct json_object *cc = NULL;
    CHECK(json_object_object_get_ex(o, "tcp_congestion_sender", &cc) &&
          strcmp(json_object_get_string(cc), "bbr") == 0);
    CHECK(is_null(o, "udp_loss_percent") && is_null(o, "udp_offered_bits_per_second"));
    json_object_put(o);

    g_autofree char *udp_text = sample("iperf3/udp-10M-omit-1-server.json");
    CHECK(ml_iperf_parse(udp_text, &r, NULL));
    const struct ml_cell udp = {.name = "udp-10M",
                                .direction = ML_DIR_FORWARD,
                                .streams = 1,
                                .kind = ML_CELL_UDP,
                                .udp_bits_per_second = 10e6};
    o = json_object_new_object();
    ml_pass_iperf_json(o, &udp, &r);
    CHECK(field(o, "udp_offered_bits_per_second") == 10e6);
    CHECK(field(o, "udp_loss_percent") == 0 && field(o, "udp_packets") == 114);
    CHECK(field(o, "udp_lost_packets") == 0 && near(field(o, "udp_jitter_ms"), 0.0148359505153));
    CHECK(is_null(o, "retransmits") && is_null(o, "retransmits_per_second"));
    CHECK(is_null(o, "tcp_mss") && is_null(o, "tcp_rtt_mean_ms") && is_null(o, "path_mtu"));
    CHECK(is_null(o, "tcp_congestion_sender"));
    CHECK(field(o, "payload_bytes") == 3735552.0 + 1277952.0);
    json_object_put(o);
}

/* The schema takes what ml_pass_iperf_json writes, nulls included, and the new cell names:
 * the example run's first pass, given a UDP and then a TCP pass's fields. */
static void test_schema_takes_them(void)
{
    struct json_object *doc = json_object_from_file("docs/examples/results.json");
    CHECK(doc != NULL);
    if (!doc)
        return;
    struct json_object *paths = NULL, *passes = NULL;
    CHECK(json_object_object_get_ex(doc, "paths", &paths) &&
          json_object_object_get_ex(json_object_array_get_idx(paths, 0), "passes", &passes));
    struct json_object *pass = json_object_array_get_idx(passes, 0);
    static const struct {
        const char *file, *cell;
        struct ml_cell c;
    } cases[] = {
        {"iperf3/udp-10M-omit-1-server.json",
         "udp-10M",
         {.streams = 1, .kind = ML_CELL_UDP, .udp_bits_per_second = 10e6}},
        {"iperf3/bidir-2-omit-1-server.json", "rrul", {.streams = 4, .kind = ML_CELL_RRUL}},
        {"iperf3/reverse-1.json", "reverse-1", {.streams = 1, .direction = ML_DIR_REVERSE}},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = sample(cases[i].file);
        struct ml_iperf_result r;
        CHECK(ml_iperf_parse(text, &r, NULL));
        ml_pass_iperf_json(pass, &cases[i].c, &r);
        json_object_object_add(pass, "cell", json_object_new_string(cases[i].cell));
        g_autofree char *at = NULL, *rule = NULL;
        bool valid = ml_schema_validate(ml_results_schema(), doc, &at, &rule);
        CHECK(valid);
        if (!valid)
            fprintf(stderr, "%s: %s: %s\n", cases[i].file, at, rule);
    }
    /* A cell name outside the vocabulary is still refused. */
    json_object_object_add(pass, "cell", json_object_new_string("udp-10X"));
    CHECK(!ml_schema_validate(ml_results_schema(), doc, NULL, NULL));
    json_object_put(doc);
}

/* The profile's estimate of iperf3 -J's size (what it refuses a cell by) covers the new
 * recorded outputs: UDP, and -O's extra intervals within the pass's seconds, with the server's
 * own document inside (--get-server-output). */
static void test_json_size_estimate(void)
{
    static const struct {
        const char *file;
        struct ml_cell c;
    } cases[] = {
        {"iperf3/udp-10M-omit-1-server.json", {.streams = 1, .kind = ML_CELL_UDP}},
        {"iperf3/forward-1-omit-1-server.json", {.streams = 1}},
        {"iperf3/bidir-2-omit-1-server.json", {.streams = 2, .direction = ML_DIR_BIDIR}},
        {"iperf3/reverse-1-omit-1-server.json", {.streams = 1, .direction = ML_DIR_REVERSE}},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = sample(cases[i].file);
        /* -t 3 -O 1: a pass of 4 s. */
        CHECK(strlen(text) <= ml_iperf_json_bytes(&cases[i].c, 4));
    }
}

int main(void)
{
    test_omit_forward();
    test_omit_without_receiver();
    test_omit_reverse();
    test_unreceived_tail();
    test_omit_bidir();
    test_unreceived_bidir();
    test_no_omit_and_reverse();
    test_udp();
    test_optional_fields();
    test_iperf_cmd();
    test_series_with_warm_up();
    test_pass_json();
    test_schema_takes_them();
    test_json_size_estimate();
    return check_finish();
}
