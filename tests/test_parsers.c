/* The parsers against output that iperf3 and ping really printed (tests/data/samples/README). */
#include <math.h>

#include "check.h"

#include <stdint.h>
#include "measure/parse_iperf.h"
#include "measure/parse_ping.h"
#include "measure/pass.h"
#include "core/util.h"

#define CHECK_NEAR(a, b) CHECK(fabs((a) - (b)) < 1e-9)

static char *sample(const char *name)
{
    g_autofree char *path = g_build_filename("tests", "data", "samples", name, NULL);
    char *text = NULL;
    g_autoptr(GError) err = NULL;
    if (!g_file_get_contents(path, &text, NULL, &err)) {
        fprintf(stderr, "%s\n", err->message);
        exit(1);
    }
    return text;
}

/* Parses text that must fail; returns the message so the caller can check it names the cause. */
static char *iperf_error(const char *text)
{
    struct ml_iperf_result r = {.seconds = 42};
    g_autoptr(GError) err = NULL;
    CHECK(!ml_iperf_parse(text, &r, &err));
    CHECK(r.seconds == 42); /* untouched on failure */
    CHECK(err && err->domain == ML_ERROR && err->code == ML_ERR_MEASURE);
    return g_strdup(err ? err->message : "");
}

static void test_iperf_tcp(void)
{
    g_autofree char *text = sample("iperf3-loopback-2s.json");
    struct ml_iperf_result r;
    g_autoptr(GError) err = NULL;
    CHECK(ml_iperf_parse(text, &r, &err));
    CHECK(err == NULL);
    CHECK_NEAR(r.seconds, 2.000804);
    CHECK(r.bytes_received == 5352980480u);
    CHECK_NEAR(r.bits_per_second_received, 21403317786.249928);
    CHECK(r.bytes_sent == 5352980480u);
    CHECK(r.retransmits == 4);
}

static void test_iperf_udp_has_no_retransmits(void)
{
    g_autofree char *text = sample("iperf3-loopback-udp-2s.json");
    struct ml_iperf_result r;
    CHECK(ml_iperf_parse(text, &r, NULL));
    CHECK_NEAR(r.seconds, 2.000416);
    CHECK(r.bytes_received == 25001984);
    CHECK_NEAR(r.bits_per_second_received, 99987138.67515557);
    CHECK(r.bytes_sent == 25001984);
    CHECK(r.retransmits == -1);
}

static void test_iperf_errors(void)
{
    /* iperf3 -J exits 0 here; only the "error" key says it failed. */
    g_autofree char *refused = sample("iperf3-connection-refused.json");
    g_autofree char *msg = iperf_error(refused);
    CHECK_STR(msg, "iperf3 failed: unable to connect to server: Connection refused");

    g_autofree char *empty = iperf_error(" \n");
    CHECK_STR(empty, "iperf3 printed nothing; expected JSON (-J)");
    g_autofree char *garbage = iperf_error("iperf3: error - unable to connect to server");
    CHECK(g_str_has_prefix(garbage, "iperf3 output is not JSON: "));
    g_autofree char *cut = iperf_error("{\"end\": {\"sum_received\": {");
    CHECK_STR(cut, "iperf3 output is not JSON: it ends too early");
    g_autofree char *trailing = iperf_error("{\"end\": {}} {}");
    CHECK(g_str_has_prefix(trailing, "iperf3 output has text after its JSON document"));
    g_autofree char *array = iperf_error("[]");
    CHECK_STR(array, "iperf3 output is JSON but not an object");
    g_autofree char *no_end = iperf_error("{\"start\": {}}");
    CHECK_STR(no_end, "iperf3 output has no \"end\" object");
    g_autofree char *server = iperf_error("{\"end\": {\"sum_sent\": {}}}");
    CHECK_STR(server,
              "iperf3 output has no end.sum_received object; was it run as a client with -J?");

/* A minimal client document; the arguments are spliced in as JSON text. */
#define IPERF_DOC(bytes, bps, sent, extra)                                                         \
    "{\"end\": {\"sum_received\": {\"seconds\": 1, \"bytes\": " bytes                              \
    ", \"bits_per_second\": " bps "}, \"sum_sent\": {\"bytes\": " sent extra "}}}"
    g_autofree char *m1 = iperf_error(IPERF_DOC("10.5", "80", "10", ""));
    CHECK_STR(m1, "iperf3 output has no integer end.sum_received.bytes");
    g_autofree char *m2 = iperf_error(IPERF_DOC("10", "\"fast\"", "10", ""));
    CHECK_STR(m2, "iperf3 output has no number end.sum_received.bits_per_second");
    g_autofree char *m3 = iperf_error(IPERF_DOC("10", "80", "-1", ""));
    CHECK_STR(m3, "iperf3 output has a negative end.sum_sent.bytes");
    g_autofree char *m4 = iperf_error(IPERF_DOC("10", "80", "10", ", \"retransmits\": \"x\""));
    CHECK_STR(m4, "iperf3 output has an invalid end.sum_sent.retransmits");
    /* --bidir: the two directions' retransmits add, and two counts near the top of int64 (a
     * fuzzer's) are held at the largest, not overflowed. */
    {
        struct ml_iperf_result r;
        g_autoptr(GError) e = NULL;
        CHECK(ml_iperf_parse("{\"end\": {\"sum_received\": {\"seconds\": 1, \"bytes\": 10, "
                             "\"bits_per_second\": 80}, \"sum_sent\": {\"bytes\": 10, "
                             "\"retransmits\": 9223372036854775807}, \"sum_sent_bidir_reverse\": "
                             "{\"bytes\": 10, \"retransmits\": 7}}}",
                             &r, &e));
        CHECK(r.retransmits == INT64_MAX);
    }

    /* Whole numbers come through as JSON integers and still count as numbers. */
    struct ml_iperf_result r;
    CHECK(ml_iperf_parse(IPERF_DOC("10", "80", "10", ", \"retransmits\": 0"), &r, NULL));
    CHECK(r.seconds == 1 && r.bits_per_second_received == 80 && r.retransmits == 0);
}

static void test_ping_all_received(void)
{
    g_autofree char *text = sample("ping-loopback-5.txt");
    struct ml_ping_result r;
    g_autoptr(GError) err = NULL;
    CHECK(ml_ping_parse(text, &r, &err));
    CHECK(r.transmitted == 5 && r.received == 5 && r.errors == 0 && r.duplicates == 0);
    CHECK(r.have_rtt);
    CHECK_NEAR(r.min_ms, 0.036);
    CHECK_NEAR(r.avg_ms, 0.069);
    CHECK_NEAR(r.max_ms, 0.196);
    CHECK_NEAR(r.mdev_ms, 0.063);
}

static void test_ping_all_lost(void)
{
    g_autofree char *text = sample("ping-loopback-all-lost.txt");
    struct ml_ping_result r;
    CHECK(ml_ping_parse(text, &r, NULL));
    CHECK(r.transmitted == 3 && r.received == 0 && r.errors == 0);
    CHECK(!r.have_rtt);
}

static void test_ping_errors(void)
{
    g_autofree char *text = sample("ping-loopback-errors.txt");
    struct ml_ping_result r;
    CHECK(ml_ping_parse(text, &r, NULL));
    CHECK(r.transmitted == 3 && r.received == 0 && r.errors == 3 && r.duplicates == 0);
    CHECK(!r.have_rtt);
}

static void test_ping_duplicates(void)
{
    g_autofree char *text = sample("ping-loopback-duplicates.txt");
    struct ml_ping_result r;
    CHECK(ml_ping_parse(text, &r, NULL));
    CHECK(r.transmitted == 5 && r.received == 5 && r.duplicates == 4 && r.errors == 0);
    CHECK(r.have_rtt);
    CHECK_NEAR(r.min_ms, 0.038);
    CHECK_NEAR(r.avg_ms, 0.057);
    CHECK_NEAR(r.max_ms, 0.120);
    CHECK_NEAR(r.mdev_ms, 0.032);
}

static void test_ping_busybox(void)
{
    g_autofree char *text = sample("ping-busybox-loopback-5.txt");
    struct ml_ping_result r;
    CHECK(ml_ping_parse(text, &r, NULL));
    CHECK(r.transmitted == 5 && r.received == 5);
    CHECK(r.have_rtt);
    CHECK_NEAR(r.min_ms, 0.040);
    CHECK_NEAR(r.avg_ms, 0.052);
    CHECK_NEAR(r.max_ms, 0.063);
    CHECK(r.mdev_ms == -1);
}

/* The path check's probe: four `ping -c 1 -W 1 -s 1000 127.0.0.1` one after another, the third's
 * request dropped by nftables in a netns (iputils 20221126, Debian 12). Each run waits for its own
 * reply, so a late one still counts; the sum is what the probe judges. */
static void test_ping_runs(void)
{
    g_autofree char *text = sample("ping-loopback-runs-one-lost.txt");
    struct ml_ping_result r;
    g_autoptr(GError) err = NULL;
    CHECK(ml_ping_parse_runs(text, &r, &err));
    CHECK(r.transmitted == 4 && r.received == 3 && r.errors == 0);
    CHECK(r.have_rtt);
    CHECK_NEAR(r.min_ms, 0.038);
    CHECK_NEAR(r.max_ms, 0.057);
    CHECK_NEAR(r.avg_ms, (0.050 + 0.038 + 0.057) / 3);
    /* ml_ping_parse alone reads the first run only: the sum is not what it gives. */
    struct ml_ping_result one;
    CHECK(ml_ping_parse(text, &one, NULL) && one.transmitted == 1);
    /* One run is ml_ping_parse's answer; no run at all is its error. */
    g_autofree char *single = sample("ping-loopback-5.txt");
    CHECK(ml_ping_parse_runs(single, &r, NULL) && r.transmitted == 5 && r.received == 5);
    g_autoptr(GError) e = NULL;
    CHECK(!ml_ping_parse_runs("connect: Network is unreachable\n", &r, &e));
    CHECK(e && strstr(e->message, "Network is unreachable"));
}

/* A pass's ping ends at its deadline (`-w`), whatever is in flight: the unanswered requests
 * after the last reply that ping would have waited for (two of its slowest round trips, iputils)
 * are cut off, not lost; more than that after the last reply is a path gone dead, all lost. */
static void test_ping_cut_off(void)
{
    g_autofree char *cut = sample("ping-loopback-deadline-cut.txt");
    struct ml_ping_result r;
    CHECK(ml_ping_parse(cut, &r, NULL) && r.transmitted == 10 && r.received == 9);
    /* Replies up to icmp_seq 9, the slowest 0.299 ms: at 0.2 s a request, two round trips
     * and one more request are the tail's allowance, and the one unanswered request is in it. */
    CHECK(ml_ping_cut_off(cut, r.transmitted, 0.2) == 1);
    g_autofree char *dead = sample("ping-loopback-deadline-dead.txt");
    CHECK(ml_ping_parse(dead, &r, NULL) && r.transmitted == 10 && r.received == 4);
    CHECK(ml_ping_cut_off(dead, r.transmitted, 0.2) == 0);
    /* At 20 Hz with a 600 ms round trip (a loaded relay), 25 requests may still be on their way
     * when the deadline comes; the same six are then cut, not lost. */
    g_autofree char *slow =
        g_strdup_printf("64 bytes from 10.8.0.3: icmp_seq=4 ttl=64 time=600 ms\n"
                        "\n--- 10.8.0.3 ping statistics ---\n"
                        "10 packets transmitted, 1 received, 90%% packet loss, "
                        "time 450ms\n");
    CHECK(ml_ping_cut_off(slow, 10, 0.05) == 6);
    /* Nothing answered: no round trip to scale by; no interval: nothing cut. */
    g_autofree char *lost = sample("ping-loopback-all-lost.txt");
    CHECK(ml_ping_cut_off(lost, 3, 0.2) == 0);
    CHECK(ml_ping_cut_off(cut, 10, 0) == 0);
    /* The command a pass runs: its deadline after the count; the idle baseline's has none. */
    g_autofree char *cmd = ml_pass_ping_cmd("ip netns exec c ", 0.05, 600, 30, "10.8.0.3");
    CHECK_STR(cmd, "ip netns exec c ping -n -i 0.050 -W 1 -c 600 -w 30 10.8.0.3");
    g_autofree char *idle = ml_pass_ping_cmd(NULL, 0.05, 200, 0, "10.8.0.3");
    CHECK_STR(idle, "ping -n -i 0.050 -W 1 -c 200 10.8.0.3");
}

static void test_ping_failures(void)
{
    g_autofree char *down = sample("ping-loopback-down.txt");
    struct ml_ping_result r = {.transmitted = 99};
    g_autoptr(GError) e1 = NULL;
    CHECK(!ml_ping_parse(down, &r, &e1));
    CHECK(r.transmitted == 99);
    CHECK(e1 && e1->code == ML_ERR_MEASURE);
    CHECK_STR(e1 ? e1->message : NULL,
              "ping printed no statistics; its last line was \"ping: connect: Network is "
              "unreachable\"");

    g_autoptr(GError) e2 = NULL;
    CHECK(!ml_ping_parse("", &r, &e2));
    CHECK_STR(e2 ? e2->message : NULL, "ping printed nothing");

    g_autoptr(GError) e3 = NULL;
    CHECK(!ml_ping_parse("2 packets transmitted, 2 received, 0% packet loss, time 1ms\n", &r, &e3));
    CHECK_STR(e3 ? e3->message : NULL, "ping counted 2 replies but printed no round-trip times");

    g_autoptr(GError) e4 = NULL;
    CHECK(!ml_ping_parse("2 packets transmitted, 2 received\nrtt min/avg/max/mdev = 1/x/3/4 ms\n",
                         &r, &e4));
    CHECK(e4 && g_str_has_prefix(e4->message, "Cannot read ping's round-trip line"));

    g_autoptr(GError) e5 = NULL;
    CHECK(!ml_ping_parse("2 packets transmitted, 2 lost\n", &r, &e5));
    CHECK(e5 && g_str_has_prefix(e5->message, "Cannot read ping's statistics line"));
}

/* The matrix's directions, as iperf3 3.12 printed them on loopback (tests/data/samples/iperf3/:
 * `iperf3 -J -c 127.0.0.1 -t 2` with --bidir -P 2, with -R, with -b 100M). */
static void test_iperf_directions_and_intervals(void)
{
    g_autofree char *bidir = sample("iperf3/bidir-2.json");
    struct ml_iperf_result r;
    CHECK(ml_iperf_parse(bidir, &r, NULL));
    /* Both directions' payload: sum_received plus sum_received_bidir_reverse. */
    CHECK(r.bytes_received == 1552941056 && r.bytes_received_reverse == 672268182);
    CHECK(r.payload_bytes == 1552941056ull + 672268182ull);
    CHECK(fabs(r.payload_bits_per_second - (6203535234.51142 + 2685510398.4564476)) < 1);
    /* Each interval: sum plus sum_bidir_reverse, and its length. */
    CHECK(r.n_intervals == 2);
    CHECK(r.interval_bytes[0] == 565968896.0 + 417988502.0);
    CHECK(r.interval_bytes[1] == 986972160.0 + 254279680.0);
    CHECK(fabs(r.interval_s[0] - 1.0028549432754517) < 1e-9);

    g_autofree char *reverse = sample("iperf3/reverse-1.json");
    CHECK(ml_iperf_parse(reverse, &r, NULL));
    CHECK(r.payload_bytes == 1913519492 && r.bytes_received_reverse == 0);
    CHECK(r.n_intervals == 2 && r.interval_bytes[0] == 943849472.0 &&
          r.interval_bytes[1] == 969670020.0);

    g_autofree char *fixed = sample("iperf3/forward-1-fixed.json");
    CHECK(ml_iperf_parse(fixed, &r, NULL));
    CHECK(r.payload_bytes == 25034752 && r.payload_bits_per_second == r.bits_per_second_received);
}

/* Every reply's round-trip time, for the percentiles; duplicates are not replies. */
static void test_ping_rtts(void)
{
    g_autofree char *text = sample("ping-loopback-5.txt");
    g_autoptr(GArray) a = ml_ping_rtts(text);
    CHECK(a->len == 5);
    CHECK(a->len && g_array_index(a, double, 0) == 0.196);
    CHECK(a->len > 1 && g_array_index(a, double, 1) == 0.038);
    g_autoptr(GArray) dup = ml_ping_rtts("64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time=1.5 ms\n"
                                         "64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time=1.9 ms "
                                         "(DUP!)\n"
                                         "From 10.0.0.9 icmp_seq=2 Destination Host Unreachable\n");
    CHECK(dup->len == 1 && g_array_index(dup, double, 0) == 1.5);
    g_autoptr(GArray) none = ml_ping_rtts(NULL);
    CHECK(none->len == 0);
}

int main(void)
{
    test_iperf_directions_and_intervals();
    test_ping_rtts();
    test_iperf_tcp();
    test_iperf_udp_has_no_retransmits();
    test_iperf_errors();
    test_ping_all_received();
    test_ping_all_lost();
    test_ping_errors();
    test_ping_duplicates();
    test_ping_busybox();
    test_ping_runs();
    test_ping_cut_off();
    test_ping_failures();
    return check_finish();
}
