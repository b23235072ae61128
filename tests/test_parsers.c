/* The parsers against output that iperf3 and ping really printed (tests/data/samples/README). */
#include <math.h>

#include "check.h"
#include "measure/parse_iperf.h"
#include "measure/parse_ping.h"
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

int main(void)
{
    test_iperf_tcp();
    test_iperf_udp_has_no_retransmits();
    test_iperf_errors();
    test_ping_all_received();
    test_ping_all_lost();
    test_ping_errors();
    test_ping_duplicates();
    test_ping_busybox();
    test_ping_failures();
    return check_finish();
}
