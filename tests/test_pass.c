/* The judgement of every second of a pass, the figures over passes, and the CPU counters,
 * on recorded numbers: no guest runs here. */
#include "check.h"

#include <arpa/inet.h>
#include <math.h>

#include "measure/guestcpu.h"
#include "measure/pass.h"
#include "measure/physics.h"
#include "measure/stats.h"

/* A band for a path by name, for a pass that carried payload bytes of which sent - payload
 * were never received, with retransmits, the hub receiving rx_packets over seconds, pings
 * every 0.05 s. */
static struct ml_band band_of(const char *path, double idle, double payload, double sent,
                              long long retransmits, double rx_packets, double seconds)
{
    const struct ml_path_ops *ops = ml_path_find(path);
    struct ml_pass_expect x = {
        .role = ops->hub, .encap = ops->encap, .idle_bytes_per_s = idle, .ping_interval_s = 0.05};
    struct ml_iperf_result r = {.payload_bytes = (uint64_t)payload,
                                .bytes_received = (uint64_t)payload,
                                .bytes_sent = (uint64_t)sent,
                                .retransmits = retransmits};
    struct ml_band band = {0};
    g_autoptr(GString) why = g_string_new(NULL);
    CHECK(ml_pass_band(&x, &r, &(struct ml_pass_wire){.hub_rx_packets = rx_packets}, seconds, &band,
                       why));
    CHECK(why->len == 0);
    return band;
}

/* Kernel WireGuard's model, as numbers: a full segment of 1,368 payload bytes is a 1,494-byte
 * frame on the hub's wire, an ACK 138 (the review's finding 5); a ping 170. */
static void test_band_physics(void)
{
    double payload = 300e6;
    struct ml_band b = band_of("wireguard-hub", 400, payload, payload, 0, 0, 10);
    CHECK(fabs(b.floor - 2.0 * 1494 / 1368) < 1e-9);
    CHECK(fabs(b.ceiling - 2.0 * (1494 + 138) / 1368) < 1e-9);
    CHECK(b.probe_bytes_per_s == 4 * 170 / 0.05);
    CHECK(b.not_payload == 0);
    /* no hub packet beyond the segments: no ACK, the floor (but for the last segment's part) */
    CHECK(b.expected >= b.floor && b.expected - b.floor < 1e-5);
    /* The seed's ACK ratio of about 12 segments per ACK: the physics table's 2.2009. */
    double d = ceil(payload / 1368), acks = d / 12;
    b = band_of("wireguard-hub", 400, payload, payload, 0, d + acks + 400, 10);
    CHECK(fabs(b.expected - 2 * (d * 1494 + acks * 138) / payload) < 1e-9);
    CHECK(b.expected > 2.20 && b.expected < 2.21);
    /* 1,000 segments sent again and 1 MB sent that never arrived: each a full frame in and
     * out, and none of it payload. */
    b = band_of("wireguard-hub", 400, payload, payload + 1368e3, 1000, 0, 10);
    CHECK(fabs(b.not_payload - 2 * 2000 * 1494 / payload) < 1e-9);
    /* nebula's relay: two headers and two tags, no padding, 1,406-byte frames of 1,248 */
    b = band_of("nebula-relay", 400, payload, payload, 0, 0, 10);
    CHECK(fabs(b.floor - 2.0 * 1406 / 1248) < 1e-9);
    /* a direct path has no factor to expect, nor probe bytes on the hub */
    b = band_of("plain", 400, payload, payload, 0, 0, 10);
    CHECK(b.role == ML_HUB_QUIET && b.probe_bytes_per_s == 0);
    /* a relay without a frame model cannot be judged, and says why */
    struct ml_pass_expect x = {.role = ML_HUB_CARRIES, .idle_bytes_per_s = 400};
    struct ml_iperf_result r = {.payload_bytes = 1000};
    g_autoptr(GString) why = g_string_new(NULL);
    CHECK(!ml_pass_band(&x, &r, &(struct ml_pass_wire){.hub_rx_packets = 0}, 10, &b, why));
    CHECK(strstr(why->str, "no frame model") != NULL);
    /* A udp-RATE cell through WireGuard: iperf3's 1,368-byte datagrams (the control
     * connection's MSS) are 1,396-byte inner packets, padded to 1,408, 1,482 on the wire, and
     * nothing comes back: the floor is 2 x 1482 / 1368 = 2.167, under the TCP floor of 2.184
     * that a genuine UDP pass would otherwise fail (hub bytes exactly at the UDP model). */
    const struct ml_path_ops *wg = ml_path_find("wireguard-hub");
    struct ml_pass_expect xu = {.role = ML_HUB_CARRIES, .encap = wg->encap};
    struct ml_iperf_result ru = {.payload_bytes = 1368000,
                                 .bytes_received = 1368000,
                                 .bytes_sent = 1368000,
                                 .retransmits = -1,
                                 .udp = true};
    struct ml_band bu = {0};
    CHECK(ml_pass_band(&xu, &ru, &(struct ml_pass_wire){.hub_rx_packets = 1000}, 10, &bu, why));
    CHECK(fabs(bu.floor - 2.0 * 1482 / 1368) < 1e-9 && bu.floor < 2.0 * 1494 / 1368);
    CHECK(bu.expected == bu.floor);
    struct ml_second su[6];
    for (size_t i = 0; i < 6; i++)
        su[i] = (struct ml_second){.t_s = (double)(i + 1),
                                   .payload_bytes = 228000,
                                   .hub_bytes = 228000.0 * 2 * 1482 / 1368};
    g_autoptr(GString) uwhy = g_string_new(NULL);
    CHECK(ml_band_judge(&bu, su, 6, uwhy));
    /* The same seconds judged as TCP, without a probe's allowance, fall under its floor. */
    ru.udp = false;
    ru.retransmits = 0;
    struct ml_band bt = {0};
    CHECK(ml_pass_band(&xu, &ru, &(struct ml_pass_wire){.hub_rx_packets = 1000}, 10, &bt, why));
    CHECK(!ml_band_judge(&bt, su, 6, uwhy));
}

/* A relayed kernel-WireGuard pass at about 30 MB/s of payload, the hub moving 2.26 times that
 * above an idle 400 B/s. */
static void relayed(struct ml_second *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        s[i] = (struct ml_second){.t_s = (double)(i + 1),
                                  .payload_bytes = 30e6 + 1e6 * (double)(i % 3),
                                  .hub_bytes = 2.26 * (30e6 + 1e6 * (double)(i % 3)) + 400};
}

/* The review of 2026-12-04's nebula-relay full cell (its counters as tests/test_physics.c's
 * test_review_nebula_relay reads them: 16,811 segments, 520 retransmits, 4.15 MB unreceived of
 * which 656 segments reached the wire, an ACK per 1.53 segments), as one pass of 90 s. The band
 * once allowed the whole unreceived tail above the ceiling (0.52 here, 0.61 and 0.84 in the
 * review's passes 21 and 11), so that a window could carry 15 % over the physics and pass. With
 * the sender's tap bounding the tail, a relay that carries 15 % more than its physics for 3 s
 * fails, and the path's own seconds, a few percent either side of it, pass. */
static void test_surplus_over_physics(void)
{
    const struct ml_path_ops *ops = ml_path_find("nebula-relay");
    double d = 16811, retr = 520, reached = 656, acks = round(16811 / 1.53), secs = 90,
           probe = 2 * secs / 0.05, idle = 14363;
    double payload = d * 1248, ping = ml_physics_frame_bytes(ops->encap, ML_PING_INNER_BYTES);
    struct ml_pass_expect x = {
        .role = ops->hub, .encap = ops->encap, .idle_bytes_per_s = idle, .ping_interval_s = 0.05};
    struct ml_iperf_result r = {.payload_bytes = (uint64_t)payload,
                                .bytes_received = (uint64_t)payload,
                                .bytes_sent = (uint64_t)(payload + 4.15e6),
                                .retransmits = (int64_t)retr};
    struct ml_pass_wire wire = {.hub_rx_packets = d + retr + reached + acks + probe};
    g_autoptr(GString) why = g_string_new(NULL);
    struct ml_band old = {0}, b = {0};
    CHECK(ml_pass_band(&x, &r, &wire, secs, &old, why));
    wire.sender_tx_bytes = (d + retr + reached) * 1406 + probe / 2 * ping;
    wire.receiver_tx_packets = acks + probe / 2;
    CHECK(ml_pass_band(&x, &r, &wire, secs, &b, why));
    CHECK(why->len == 0);
    /* the physics the taps give (2.576), and what is no payload: the retransmits and the 656 */
    double physics = 2 * ((d + retr + reached) * 1406 + acks * 158) / payload;
    CHECK(fabs(physics - 2.576) < 0.001);
    CHECK(fabs(b.not_payload - 2 * (retr + reached) * 1406 / payload) < 1e-9);
    CHECK(old.not_payload > 0.5 && b.not_payload < 0.16);
    struct ml_second s[90];
    for (size_t i = 0; i < 90; i++) {
        double f = physics * (1 + 0.03 * ((double)(i % 3) - 1)); /* 0.97, 1, 1.03 */
        s[i] = (struct ml_second){.t_s = (double)(i + 1),
                                  .payload_bytes = payload / secs,
                                  .hub_bytes = f * payload / secs + idle};
    }
    CHECK(ml_band_judge(&b, s, 90, why));
    CHECK(why->len == 0);
    /* 15 % over the physics for three seconds */
    for (size_t i = 40; i < 43; i++)
        s[i].hub_bytes = 1.15 * physics * payload / secs + idle;
    CHECK(ml_band_judge(&old, s, 90, why)); /* the old band let it through */
    CHECK(!ml_band_judge(&b, s, 90, why));
    CHECK(s[41].ok == 0);
}

/* The seed lab's wireguard-go-hub forward-8 pass (8 streams of 4 s): iperf3 counted four
 * intervals, and the streams' socket buffers drained for three seconds more at 3.2 to 7.7 hub
 * bytes per payload byte. The drain is not judged; a bypass while iperf3 counted still fails. */
static void test_drain_after_iperf(void)
{
    const struct ml_path_ops *ops = ml_path_find("wireguard-go-hub");
    struct ml_pass_expect x = {.role = ops->hub, .encap = ops->encap, .idle_bytes_per_s = 4000};
    struct ml_iperf_result r = {.payload_bytes = 1534896,
                                .bytes_received = 1534896,
                                .bytes_sent = 2388528,
                                .retransmits = 8};
    struct ml_band b = {0};
    g_autoptr(GString) why = g_string_new(NULL);
    CHECK(ml_pass_band(&x, &r, &(struct ml_pass_wire){.hub_rx_packets = 5745}, 8, &b, why));
    /* payload, iperf3's interval, hub: raw/wireguard-go-hub/16-forward-8-1.series.csv */
    static const double rec[8][3] = {{5220, 793440, 17108},    {310174, 749664, 763654},
                                     {311789, 649800, 875739}, {290796, 195624, 980300},
                                     {87681, 0, 675162},       {304192, 0, 966396},
                                     {211515, 0, 754780},      {13529, 0, 87472}};
    struct ml_second s[8];
    for (size_t i = 0; i < 8; i++)
        s[i] = (struct ml_second){.t_s = (double)(i + 1),
                                  .payload_bytes = rec[i][0],
                                  .iperf_bytes = rec[i][1],
                                  .hub_bytes = rec[i][2]};
    CHECK(ml_band_judge(&b, s, 8, why));
    CHECK(s[1].ok == 1 && s[3].ok == 1 && s[4].ok == -1 && s[6].ok == -1);
    /* A bypass while iperf3 counted: seconds 2 to 4 direct. */
    for (size_t i = 0; i < 8; i++)
        s[i].iperf_bytes = rec[i][1];
    s[1].hub_bytes = s[2].hub_bytes = s[3].hub_bytes = 20000;
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(&b, s, 8, why));
    CHECK(strstr(why->str, "seconds 2 to 4") != NULL);
}

static void test_relay_band(void)
{
    struct ml_band b = band_of("wireguard-hub", 400, 310e6, 310e6, 0, 0, 10);
    struct ml_second s[10];
    relayed(s, 10);
    g_autoptr(GString) why = g_string_new(NULL);
    CHECK(ml_band_judge(&b, s, 10, why));
    CHECK(why->len == 0);
    for (size_t i = 1; i < 9; i++)
        CHECK(s[i].ok == 1);
    CHECK(s[0].ok == -1 && s[9].ok == -1); /* the edges: see below */

    /* A bypass: seconds 5 to 7 went direct, the hub moved next to nothing while the payload
     * flowed. The reason names the seconds and their counters. */
    relayed(s, 10);
    s[4].hub_bytes = s[5].hub_bytes = s[6].hub_bytes = 2000;
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(&b, s, 10, why));
    CHECK(s[3].ok == 1 && s[4].ok == 0 && s[5].ok == 0 && s[6].ok == 0 && s[7].ok == 1);
    CHECK_STR(why->str, "seconds 5 to 7: hub moved 6.0 kB (4.8 kB above idle) for 93.0 MB of "
                        "payload, 0.00 per payload byte; the path's frames give 2.18, allowed "
                        "2.18 to 2.39 (full segments 2.18 to an ACK each 2.39, 0.00 resent or "
                        "never received, the probe's 0.00 either way)");
    /* Shorter bypasses fail too: two seconds, one second. */
    relayed(s, 10);
    s[4].hub_bytes = s[5].hub_bytes = 2000;
    CHECK(!ml_band_judge(&b, s, 10, why));
    CHECK(s[4].ok == 0 && s[5].ok == 0 && s[3].ok == 1 && s[6].ok == 1);
    relayed(s, 10);
    s[4].hub_bytes = 2000;
    CHECK(!ml_band_judge(&b, s, 10, why));

    /* A quarter of the bytes around the hub for 3 s: 1.70, under the floor (the old band's 1.8
     * let up to a fifth through). */
    relayed(s, 10);
    for (size_t i = 3; i < 6; i++)
        s[i].hub_bytes = 0.75 * 2.26 * s[i].payload_bytes + 400;
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(&b, s, 10, why));
    CHECK(g_str_has_prefix(why->str, "seconds 4 to 6: "));

    /* Through the hub twice (a loop, a second relay) for one second: 4.4, outside. */
    relayed(s, 10);
    s[2].hub_bytes = 4.4 * s[2].payload_bytes;
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(&b, s, 10, why));
    CHECK(s[2].ok == 0 && s[1].ok == 1 && s[3].ok == 1);
    CHECK(g_str_has_prefix(why->str, "second 3: "));

    /* The edges of a transfer are not judged: a first second at 1.79 above idle (as CI saw for
     * wireguard-go-hub with 8 streams) is its ramp-up; the same in the middle, with no
     * neighbour making up for it, is bytes that went around the hub. */
    relayed(s, 10);
    s[0].hub_bytes = 1.79 * s[0].payload_bytes + 400;
    CHECK(ml_band_judge(&b, s, 10, why));
    CHECK(s[0].ok == -1 && s[1].ok == 1);
    relayed(s, 10);
    s[4].hub_bytes = 1.79 * s[4].payload_bytes + 400;
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(&b, s, 10, why));
    CHECK(s[4].ok == 0 && s[3].ok == 1 && s[5].ok == 1);
    CHECK(strstr(why->str, "second 5: ") && strstr(why->str, ", 1.79 per payload byte"));

    /* Seconds with under a quarter of the median payload before or after the transfer are not
     * judged (the tail). */
    relayed(s, 10);
    s[8].payload_bytes = 1e6;
    s[8].hub_bytes = 9e6;
    CHECK(ml_band_judge(&b, s, 10, why));
    CHECK(s[8].ok == -1 && s[7].ok == 1);
    /* Fewer seconds than a window: they are judged together. */
    relayed(s, 4);
    CHECK(ml_band_judge(&b, s, 4, why));
    CHECK(s[1].ok == 1 && s[2].ok == 1);
    s[1].hub_bytes = s[2].hub_bytes = 400;
    CHECK(!ml_band_judge(&b, s, 4, why));
}

/* The hub's counters lag the client's by part of a second: one second reads low and the next
 * high, and together they are the path. */
static void test_counter_lag(void)
{
    g_autoptr(GString) why = g_string_new(NULL);
    /* CI's nebula-relay forward-8 pass on a quiet host (62b6e33's run, pass 28, idle 12,823
     * B/s): second 5 read 4.23 above idle after second 4's 3.14; the two together are 3.51,
     * the pass's own level, with 8 streams sending 1,579,968 bytes for 1,013,376 received and
     * 37 retransmits. */
    static const double payload[] = {6161, 117038, 183116, 210127, 106678, 109222, 174661, 106368};
    static const double hub[] = {21946, 417096, 650865, 673162, 464398, 389480, 617978, 385463};
    struct ml_second ci[8];
    for (size_t i = 0; i < 8; i++)
        ci[i] = (struct ml_second){
            .t_s = (double)(i + 1), .payload_bytes = payload[i], .hub_bytes = hub[i]};
    struct ml_band nb = band_of("nebula-relay", 12823, 1013376, 1579968, 37, 2418, 5.455136);
    CHECK(ml_band_judge(&nb, ci, 8, why));
    CHECK(ci[4].ok == 1 && why->len == 0);
    /* alone, second 5 is outside */
    CHECK((hub[4] - 12823) / payload[4] >
          nb.ceiling + nb.not_payload + nb.probe_bytes_per_s / payload[4]);

    /* Issue 18's false alarm, kernel WireGuard through the hub, 30 s at full speed: second 17
     * read 1.75 above idle, second 18 2.59, together 2.17; its neighbours are at the path's
     * physics (about 2.23 in the quickstart). Idle as val17's kernel-WireGuard hub. */
    struct ml_second s[30];
    double idle = 12160, rate = 5.6e6, total = 0;
    for (size_t i = 0; i < 30; i++) {
        double f = i == 16 ? 1.75 : i == 17 ? 2.59 : 2.23;
        s[i] = (struct ml_second){
            .t_s = (double)(i + 1), .payload_bytes = rate, .hub_bytes = f * rate + idle};
        total += rate;
    }
    struct ml_band b = band_of("wireguard-hub", idle, total, total, 0, 0, 30);
    CHECK(ml_band_judge(&b, s, 30, why));
    CHECK(s[16].ok == 1 && s[17].ok == 1 && why->len == 0);
    /* each of the two alone is outside the band: the window is what saves them */
    double probe1 = b.probe_bytes_per_s / rate;
    CHECK(1.75 < b.floor - probe1 && 2.59 > b.ceiling + probe1);
    /* the same dip without its catch-up is bytes that went around the hub */
    s[17].hub_bytes = 2.23 * rate + idle;
    CHECK(!ml_band_judge(&b, s, 30, why));
    CHECK(s[16].ok == 0);

    /* The same run's wireguard-go-hub pass at the fixed rate (0.8 Mbit/s) on a quiet host:
     * second 10 read 1.77, second 11 3.02; the others at val17's fixed-rate level, 2.35, above
     * an idle 12,649 B/s. */
    rate = 100e3;
    total = 0;
    for (size_t i = 0; i < 30; i++) {
        double f = i == 9 ? 1.77 : i == 10 ? 3.02 : 2.35;
        s[i] = (struct ml_second){
            .t_s = (double)(i + 1), .payload_bytes = rate, .hub_bytes = f * rate + 12649};
        total += rate;
    }
    b = band_of("wireguard-go-hub", 12649, total, total, 0, 0, 30);
    g_string_truncate(why, 0);
    CHECK(ml_band_judge(&b, s, 30, why));
    CHECK(why->len == 0);
    CHECK(3.02 > b.ceiling + b.probe_bytes_per_s / rate);
    /* and a bypass of 3 s at that rate still fails, the probe's share notwithstanding */
    for (size_t i = 19; i < 22; i++)
        s[i].hub_bytes = 12649;
    CHECK(!ml_band_judge(&b, s, 30, why));
    CHECK(strstr(why->str, "seconds 20 to 22: hub moved 37.9 kB (0 B above idle) for 300.0 kB "
                           "of payload, 0.00 per payload byte") != NULL);

    /* No neighbour makes up for a loop: one second at 4.6 and the next low, together 3.3,
     * not the path's 2.26. */
    b = band_of("wireguard-hub", 400, 310e6, 310e6, 0, 0, 10);
    relayed(s, 8);
    s[3].hub_bytes = 4.6 * s[3].payload_bytes;
    s[4].hub_bytes = 2.0 * s[4].payload_bytes;
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(&b, s, 8, why));
    CHECK(s[3].ok == 0);
}

/* A lab of hub + 3 clients: client-a measures to client-b, client-c is a third guest. */
static const struct ml_sides four = {
    .n_guests = 4,
    .client = 0,
    .server = 1,
    .hub = 2,
    .name = {"client-a", "client-b", "hub", "client-c"},
    .idle_bytes_per_s = {600, 700, 800, 500},
    .other = {false, false, false, true},
};

/* Judges every pass an index of recorded passes (tests/data/samples/pass/README) names, as
 * recorded and with its judged seconds off the path (its relayed seconds bypassing the hub, its
 * direct seconds detoured through it); counts the relayed and the direct ones. Returns how many
 * passed as recorded. */
static unsigned judge_recorded(const char *index_path, unsigned *ret_relayed, unsigned *ret_direct)
{
    g_autofree char *index = NULL;
    CHECK(g_file_get_contents(index_path, &index, NULL, NULL));
    g_auto(GStrv) rows = g_strsplit(index ? index : "", "\n", -1);
    unsigned passed = 0;
    *ret_relayed = *ret_direct = 0;
    for (char **row = rows + 1; row[0] && row[0][0]; row++) {
        g_auto(GStrv) f = g_strsplit(*row, "\t", -1);
        CHECK(g_strv_length(f) == 8);
        if (g_strv_length(f) != 8)
            continue;
        g_autofree char *csv = NULL;
        CHECK(g_file_get_contents(f[1], &csv, NULL, NULL));
        g_auto(GStrv) lines = g_strsplit(csv ? csv : "", "\n", -1);
        struct ml_second s[16], t[16];
        size_t n = 0;
        for (char **l = lines + 1; *l && **l && n < 16; l++, n++) {
            g_auto(GStrv) c = g_strsplit(*l, ",", -1);
            s[n] = (struct ml_second){.t_s = g_ascii_strtod(c[0], NULL),
                                      .payload_bytes = g_ascii_strtod(c[1], NULL),
                                      .hub_bytes = g_ascii_strtod(c[4], NULL),
                                      .server_bytes = NAN};
            /* recorded before the other taps were read: no such columns, unknown */
            CHECK(g_strv_length(c) == 8);
            for (size_t g = 0; g < ML_MAX_NODES; g++)
                s[n].guest_bytes[g] = NAN;
        }
        double idle = g_ascii_strtod(f[2], NULL);
        struct ml_band b = band_of(f[0], idle, g_ascii_strtod(f[3], NULL),
                                   g_ascii_strtod(f[4], NULL), g_ascii_strtoll(f[5], NULL, 10),
                                   g_ascii_strtod(f[6], NULL), g_ascii_strtod(f[7], NULL));
        g_autoptr(GString) why = g_string_new(NULL);
        /* the other sides unread are not judged: they neither fail it nor mark a second */
        g_autoptr(GString) sides_why = g_string_new(NULL);
        ml_band_judge(&b, s, n, why);
        CHECK(ml_sides_judge(&b, &four, 1, s, n, sides_why));
        CHECK(sides_why->len == 0);
        g_string_truncate(why, 0);
        if (ml_band_judge(&b, s, n, why))
            passed++;
        else
            fprintf(stderr, "%s: %s\n", f[1], why->str);
        memcpy(t, s, sizeof(s));
        for (size_t i = 0; i < n; i++)
            if (s[i].ok == 1)
                t[i].hub_bytes =
                    b.role == ML_HUB_QUIET ? s[i].hub_bytes + 2 * s[i].payload_bytes : idle;
        CHECK(!ml_band_judge(&b, t, n, why));
        if (b.role == ML_HUB_QUIET)
            ++*ret_direct;
        else
            ++*ret_relayed;
    }
    return passed;
}

/* Real passes: every one genuine, every one passes, and each fails with its seconds off the
 * path. */
static void test_lab_runs(void)
{
    unsigned relayed_n, direct_n;
    /* val17: the quick profile on six hub and direct paths, every pass genuine */
    CHECK(judge_recorded("tests/data/samples/pass/val17.tsv", &relayed_n, &direct_n) == 36);
    CHECK(relayed_n == 30 && direct_n == 6);
    /* CI's run at 62b6e33 (docs/examples until b9ba3cb; pass/README), whose nebula-relay forward-8
     * pass the 1.8-4.0 band failed on the counters' lag (test_counter_lag) */
    CHECK(judge_recorded("tests/data/samples/pass/ci-62b6e33.tsv", &relayed_n, &direct_n) == 36);
    CHECK(relayed_n == 18 && direct_n == 18);
}

/* Two genuine passes of the e2e's quick run with iperf3's warm-up omitted (pass/README), which
 * failed there because what was sent and never received was taken after the warm-up alone,
 * where the server had counted more than the client sent: no tail, a narrow band. Over the
 * whole transfer (ml_iperf_unreceived_bytes, the warm-up counted by both ends) the tail is
 * there and both pass; with the tail at 0 both fail as they did. */
static void test_unreceived_tail_recorded(void)
{
    static const struct {
        const char *path, *file;
        double idle, payload, sent;
        long long retransmits;
        double rx_packets, seconds;
    } cases[] = {
        /* received 1186848 + 320736 of 965952 + 1392768 sent */
        {"nebula-relay", "tests/data/samples/pass/omit-nebula-relay-05-forward-8-1.series.csv",
         13277.3, 1507584, 2358720, 20, 3242, 4.708367},
        /* received 1585825 + 282540 of 1567820 + 387800 sent */
        {"tinc-relay", "tests/data/samples/pass/omit-tinc-relay-31-forward-1-2.series.csv", 12061.7,
         1868365, 1955620, 5, 2553, 4.130456},
    };
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_autofree char *csv = NULL;
        CHECK(g_file_get_contents(cases[c].file, &csv, NULL, NULL));
        g_auto(GStrv) lines = g_strsplit(csv ? csv : "", "\n", -1);
        struct ml_second s[16];
        size_t n = 0;
        for (char **l = lines + 1; *l && **l && n < 16; l++, n++) {
            g_auto(GStrv) f = g_strsplit(*l, ",", -1);
            CHECK(g_strv_length(f) == 9);
            s[n] = (struct ml_second){.t_s = g_ascii_strtod(f[0], NULL),
                                      .payload_bytes = g_ascii_strtod(f[1], NULL),
                                      .hub_bytes = g_ascii_strtod(f[4], NULL),
                                      .server_bytes = g_ascii_strtod(f[8], NULL)};
            for (size_t g = 0; g < ML_MAX_NODES; g++)
                s[n].guest_bytes[g] = NAN;
        }
        g_autoptr(GString) why = g_string_new(NULL);
        struct ml_band whole =
            band_of(cases[c].path, cases[c].idle, cases[c].payload, cases[c].sent,
                    cases[c].retransmits, cases[c].rx_packets, cases[c].seconds);
        CHECK(whole.not_payload > 0);
        CHECK(ml_band_judge(&whole, s, n, why));
        if (why->len)
            fprintf(stderr, "%s: %s\n", cases[c].file, why->str);
        struct ml_band no_tail =
            band_of(cases[c].path, cases[c].idle, cases[c].payload, cases[c].payload,
                    cases[c].retransmits, cases[c].rx_packets, cases[c].seconds);
        CHECK(!ml_band_judge(&no_tail, s, n, why));
    }
}

static void test_direct_band(void)
{
    struct ml_band b = {.role = ML_HUB_QUIET, .idle_bytes_per_s = 800};
    struct ml_second s[6];
    for (size_t i = 0; i < 6; i++)
        s[i] = (struct ml_second){.t_s = (double)(i + 1), .payload_bytes = 60e6, .hub_bytes = 900};
    g_autoptr(GString) why = g_string_new(NULL);
    /* Idle 800 B/s: a few hundred bytes above it is the bridge's chatter, not the payload. */
    CHECK(ml_band_judge(&b, s, 6, why));
    CHECK(s[0].ok == 1 && s[5].ok == 1); /* a direct pass's edges are judged too */
    /* A detour: seconds 3 to 5 put the payload through the hub twice. */
    for (size_t i = 2; i < 5; i++)
        s[i].hub_bytes = 2 * 60e6;
    CHECK(!ml_band_judge(&b, s, 6, why));
    CHECK(s[1].ok == 1 && s[2].ok == 0 && s[3].ok == 0 && s[4].ok == 0 && s[5].ok == 1);
    CHECK_STR(why->str, "seconds 3 to 5: hub moved 360.0 MB against an idle 800 B/s (360.0 MB "
                        "above it, allowed 229.2 kB)");
    /* The allowance: 16 KiB a second plus 0.1 % of the payload above the idle rate. */
    for (size_t i = 0; i < 6; i++)
        s[i].hub_bytes = 800 + ML_BAND_DIRECT_SLACK_BYTES + 0.001 * 60e6;
    g_string_truncate(why, 0);
    CHECK(ml_band_judge(&b, s, 6, why));
    s[1].hub_bytes += 2;
    CHECK(!ml_band_judge(&b, s, 6, why));
    CHECK(s[1].ok == 0 && s[0].ok == 1 && s[2].ok == 1);
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

/* The idle baseline's reading cost (issue 38 item 2). The seed lab's second quickstart: a
 * bystander hub carried 0.415 s in its 10 s idle window and 0.24-0.44 s in its 15 s passes,
 * nearly all of it the readings themselves; charged as a rate (0.0415 s/s) a pass subtracted
 * 0.62 s and read -0.18 to -0.38 s "above idle". With the cost measured apart by two readings
 * back to back (here 0.4 s) and subtracted once, the same guest reads about 0 above idle. */
static void test_guest_cpu_idle(void)
{
    double rate = -1, cost = -1;
    ml_guest_cpu_idle(0.4, 0.415, 10.0, &rate, &cost);
    CHECK(fabs(cost - 0.4) < 1e-9 && fabs(rate - 0.0015) < 1e-9);
    double above = ml_guest_cpu_above_idle(0.44, 15.0, rate, cost, 0);
    CHECK(fabs(above - (0.44 - 0.0225 - 0.4)) < 1e-9 && above > 0);
    CHECK(0.44 - 0.0415 * 15.0 < 0); /* the old baseline's figure for the same pass */
    /* a busy guest: the cost is a small share, the rate what the payload and pings cost */
    ml_guest_cpu_idle(0.2, 5.2, 10.0, &rate, &cost);
    CHECK(fabs(rate - 0.5) < 1e-9);
    CHECK(fabs(ml_guest_cpu_above_idle(20.2, 15.0, rate, cost, 0) - 12.5) < 1e-9);
    /* a first interval that went backwards (a counter's reset) costs nothing; the window's
     * busy time never gives a negative rate */
    ml_guest_cpu_idle(-0.1, 0.05, 10.0, &rate, &cost);
    CHECK(cost == 0 && fabs(rate - 0.005) < 1e-9);
    ml_guest_cpu_idle(0.3, 0.1, 10.0, &rate, &cost);
    CHECK(rate == 0 && cost == 0.3);
    /* no baseline: no figure */
    CHECK(isnan(ml_guest_cpu_above_idle(1.0, 15.0, -1, 0.2, 0)));
    /* The busy times read through the agent's file calls (reading cost 0.00-0.03 s): the seed
     * lab's quick run at ec0b379 had its bystander hub 0.04 s busy in a 4.1 s pass against an
     * idle 0.013 s/s, -0.013 s: 4 ticks where 5.3 were expected, inside the ticks' own noise
     * (2 x sqrt(0.01 x 0.053 + 0.01^2) = 0.050 s), so none. */
    CHECK(fabs(ml_guest_cpu_noise_s(0.0533, 4.1) -
               2 * sqrt(0.01 * 0.0533 * (1 - 0.0533 / 4.1) + 1e-4)) < 1e-12);
    CHECK(ml_guest_cpu_above_idle(0.04, 4.1, 0.013, 0.0, 0) == 0);
    CHECK(ml_guest_cpu_above_idle(0.02, 4.1, 0.013, 0.0, 0) == 0);
    /* a shortfall beyond it is kept: that baseline was not this pass's idle */
    CHECK(fabs(ml_guest_cpu_above_idle(0.0, 15.0, 0.05, 0.0, 0) + 0.75) < 1e-9);
    CHECK(ml_guest_cpu_noise_s(0.75, 15.0) < 0.2);
    /* a guest busy all the time has no ticks to miscount: only the truncation */
    CHECK(fabs(ml_guest_cpu_noise_s(15.0, 15.0) - 0.02) < 1e-12);
    /* The idle window's own ticks: a rate read over 2 s (the quick profile's) from 2.6 ticks
     * is as uncertain, scaled to a 6 s pass: a pass with no tick at all (-0.078 s) is inside
     * both together (0.129 s), not inside the pass's alone (0.059 s) nor with a 30 s window's
     * (0.065 s). */
    CHECK(ml_guest_cpu_above_idle(0.0, 6.0, 0.013, 0.0, 0) < 0);
    CHECK(ml_guest_cpu_above_idle(0.0, 6.0, 0.013, 0.0, 2.0) == 0);
    CHECK(ml_guest_cpu_above_idle(0.0, 6.0, 0.013, 0.0, 30.0) < 0);
    /* and a figure above idle is never moved */
    CHECK(fabs(ml_guest_cpu_above_idle(0.1, 4.1, 0.013, 0.0, 0) - (0.1 - 0.0533)) < 1e-9);
}

/* The proof's price (issue 38 item 2): one view after the idle window, less the guest's idle
 * over as long and one reading; a pass charges its views at it, and a shortfall within the
 * views' share of the price's own noise is none. */
static void test_view_cost(void)
{
    double noise = 0;
    /* a hub that runs `wg show` for the view: 0.31 s busy over 1.5 s against 0.013 s/s idle and
     * a 0.02 s reading: 0.27 s, well out of the ticks' 0.06 s */
    double cost = ml_guest_cpu_view_cost(0.31, 1.5, 0.013, 0.02, &noise);
    CHECK(fabs(cost - (0.31 - 0.0195 - 0.02)) < 1e-9);
    CHECK(fabs(noise - ml_guest_cpu_noise_s(0.0395, 1.5)) < 1e-12 && noise < 0.1);
    /* a bystander the view does not touch: one tick more than expected is no price */
    CHECK(ml_guest_cpu_view_cost(0.03, 1.5, 0.013, 0.0, &noise) == 0 && noise > 0.02);
    /* no idle rate, no price */
    CHECK(ml_guest_cpu_view_cost(0.3, 1.5, -1, 0.0, &noise) == -1 && isnan(noise));
    /* Seven views priced 0 with 0.045 s noise each on a bystander hub idle at 0.013 s/s: a 15 s
     * pass without a tick, 0.195 s short of its baseline, is none once the views' noise counts
     * (0.33 s together), not before (the ticks' alone allow 0.09 s) */
    double n7 = 7 * 0.045;
    CHECK(ml_guest_cpu_above_idle(0.0, 15.0, 0.013, 0.0, 0) < 0);
    CHECK(ml_guest_cpu_above_idle_noisy(0.0, 15.0, 0.013, 0.0, 0, n7) == 0);
    /* a relaying hub charged 7 views at 0.27 s: 1.89 s of its busy time are the proof's */
    double above = ml_guest_cpu_above_idle_noisy(10.0, 15.0, 0.013, 0.02 + 7 * 0.27, 0, 7 * noise);
    CHECK(fabs(above - (10.0 - 0.195 - 0.02 - 1.89)) < 1e-9);
    /* a figure above idle is never moved by the noise, and a shortfall beyond it is kept */
    CHECK(ml_guest_cpu_above_idle_noisy(0.0, 15.0, 0.013, 1.89, 0, 0.3) < -1.5);
    /* Three views priced on client-a, one beside a burst of the guest's own (CI at aff8f5e priced
     * its one view at 1.63 s and put a fixed-rate pass 1.07 s below idle): the median is the
     * price. Unpriced views (-1) are left out; none priced gives the first. */
    double p3[] = {1.63, 0.21, 0.18};
    CHECK(ml_guest_cpu_view_median(p3, 3) == 1);
    double q3[] = {0.0, 1.63, 0.0};
    CHECK(q3[ml_guest_cpu_view_median(q3, 3)] == 0.0);
    double u3[] = {-1, 0.4, 0.2};
    CHECK(ml_guest_cpu_view_median(u3, 3) == 2);
    double n3[] = {-1, -1, -1};
    CHECK(ml_guest_cpu_view_median(n3, 3) == 0);
    double one[] = {0.3};
    CHECK(ml_guest_cpu_view_median(one, 1) == 0);
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
    CHECK(neb < ML_DAEMONS_MAX && wgo < ML_DAEMONS_MAX && ts < ML_DAEMONS_MAX &&
          hs < ML_DAEMONS_MAX);
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
    double other, lab, steal;
    ml_hostnoise_between(&a, &b, &other, &lab, &steal);
    CHECK(fabs(other - 7.5) < 1e-9 && isnan(steal)); /* no steal since boot: unknown */
    b.steal_s = 2;
    b.idle_s = 52;
    ml_hostnoise_between(&a, &b, &other, &lab, &steal);
    CHECK(fabs(steal - 10) < 1e-9);
    a.ok = false;
    ml_hostnoise_between(&a, &b, &other, &lab, &steal);
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
    {.when = "start", .ok = true, .evidence = "route: 10.10.0.3 dev wg0"},
    {.when = "middle", .ok = true, .evidence = "route: 10.10.0.3 dev wg0"},
    {.when = "end", .ok = true, .evidence = "route: 10.10.0.3 dev wg0"},
};

/* A relayed path without a frame model is not judged second by second: it fails saying so,
 * no second is marked failed (none was judged), and its other sides are judged as a relay's. */
static void test_judge_without_a_model(void)
{
    double client[6], hub[6];
    for (size_t i = 0; i < 6; i++) {
        client[i] = 1.05 * 10e6;
        hub[i] = 2.26 * 10e6;
    }
    struct ml_pass_sample smp[7];
    size_t ns = samples_of(client, hub, 6, smp);
    struct ml_iperf_result r = {.payload_bytes = 60000000,
                                .n_intervals = 6,
                                .interval_bytes = {10e6, 10e6, 10e6, 10e6, 10e6, 10e6}};
    const struct ml_pass_expect x = {.role = ML_HUB_CARRIES, .idle_bytes_per_s = 400};
    struct ml_pass_verdict v = {0};
    ml_pass_judge(&x, smp, ns, &r, views_ok, 3, &v);
    CHECK(!v.passed && strstr(v.reason->str, "no frame model") != NULL);
    CHECK(v.band.role == ML_HUB_CARRIES);
    for (size_t i = 0; i < v.n; i++)
        CHECK(v.sec[i].ok == -1);
    ml_pass_verdict_clear(&v);
}

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
    struct ml_iperf_result r = {.payload_bytes = 80000000,
                                .n_intervals = 7,
                                .interval_bytes = {9.9e6, 10.1e6, 10e6, 10e6, 10e6, 10e6, 10e6}};
    struct ml_pass_verdict v = {0};
    const struct ml_pass_expect wg = {.role = ML_HUB_CARRIES,
                                      .encap = ml_path_find("wireguard-hub")->encap,
                                      .idle_bytes_per_s = 400,
                                      .ping_interval_s = 0.05};
    ml_pass_judge(&wg, smp, ns, &r, views_ok, 3, &v);
    CHECK(v.passed && !v.path_lost);
    CHECK_STR(v.reason->str, "");
    CHECK(v.n == 8);
    /* the series: payload from the client's NIC scaled to iperf3's payload, iperf3's intervals
     * beside it (none past its last), the hub's bytes and packets of each second */
    CHECK(v.sec[0].t_s == 1 && v.sec[7].t_s == 8);
    CHECK(fabs(v.sec[3].payload_bytes - 10e6) < 1 && v.sec[3].client_bytes == 1.05 * 10e6);
    CHECK(v.sec[0].iperf_bytes == 9.9e6 && v.sec[1].iperf_bytes == 10.1e6 &&
          v.sec[6].iperf_bytes == 10e6 && v.sec[7].iperf_bytes == 0);
    CHECK(fabs(v.sec[3].hub_bytes - (2.26 * 10e6 + 400)) < 1 && v.sec[3].hub_packets == 2000);
    CHECK(v.sec[0].ok == -1 && v.sec[7].ok == -1 && v.sec[3].ok == 1);
    ml_pass_verdict_clear(&v);
    CHECK(v.sec == NULL && v.reason == NULL);

    /* Seconds 4 to 6 went around the hub: the band fails the pass and says which, with the
     * band it judged them by (the samples' 1,000 hub packets received a second are fewer than
     * the segments: no ACK counted, the model's floor expected). */
    hub[3] = hub[4] = hub[5] = 3000;
    ns = samples_of(client, hub, 8, smp);
    ml_pass_judge(&wg, smp, ns, &r, views_ok, 3, &v);
    CHECK(!v.passed);
    CHECK(v.sec[3].ok == 0 && v.sec[4].ok == 0 && v.sec[5].ok == 0 && v.sec[2].ok == 1 &&
          v.sec[6].ok == 1);
    CHECK(g_str_has_prefix(v.reason->str, "outside the relayed band: seconds 4 to 6: hub moved "
                                          "9.0 kB (7.8 kB above idle) for 30.0 MB of payload, "
                                          "0.00 per payload byte; the path's frames give 2.18"));
    CHECK(strstr(v.reason->str, "view") == NULL);
    CHECK(v.band.floor > 2.18 && v.band.ceiling < 2.39 && v.band.not_payload == 0);
    ml_pass_verdict_clear(&v);

    /* Through the judge, issue 18's false alarm passes (test_counter_lag): 1.75 then 2.59. */
    for (size_t i = 0; i < 8; i++)
        hub[i] = 2.23 * 10e6 + 400;
    hub[3] = 1.75 * 10e6 + 400;
    hub[4] = 2.59 * 10e6 + 400;
    ns = samples_of(client, hub, 8, smp);
    ml_pass_judge(&wg, smp, ns, &r, views_ok, 3, &v);
    CHECK(v.passed && v.sec[3].ok == 1 && v.sec[4].ok == 1);
    ml_pass_verdict_clear(&v);
    /* and a loop's two seconds still fail it */
    hub[3] = hub[4] = 4.6 * 10e6 + 400;
    ns = samples_of(client, hub, 8, smp);
    ml_pass_judge(&wg, smp, ns, &r, views_ok, 3, &v);
    CHECK(!v.passed && v.sec[3].ok == 0 && v.sec[4].ok == 0);
    /* outside the band with every view on the path: failed, the path not lost (not run again) */
    CHECK(!v.path_lost);
    ml_pass_verdict_clear(&v);
    /* A path that leaves the hub quiet whose hub carried the payload for two seconds: the
     * path is lost whatever the views said (CI at f7d1fda: tailscale-direct on DERP between
     * two views that did not see it), and the pass is run again. */
    for (size_t i = 0; i < 8; i++)
        hub[i] = 400;
    hub[3] = hub[4] = 2.4 * 10e6;
    ns = samples_of(client, hub, 8, smp);
    const struct ml_pass_expect direct = {.role = ML_HUB_QUIET,
                                          .encap = ml_path_find("wireguard-direct")->encap,
                                          .idle_bytes_per_s = 400,
                                          .ping_interval_s = 0.05};
    ml_pass_judge(&direct, smp, ns, &r, views_ok, 3, &v);
    CHECK(!v.passed && v.path_lost && g_str_has_prefix(v.reason->str, "outside the direct band"));
    ml_pass_verdict_clear(&v);
    /* and quiet all through, it passes, the path kept */
    hub[3] = hub[4] = 400;
    ns = samples_of(client, hub, 8, smp);
    ml_pass_judge(&direct, smp, ns, &r, views_ok, 3, &v);
    CHECK(v.passed && !v.path_lost);
    ml_pass_verdict_clear(&v);

    /* A relay without a frame model is not judged as passing. */
    const struct ml_pass_expect bare = {.role = ML_HUB_CARRIES, .idle_bytes_per_s = 400};
    ml_pass_judge(&bare, smp, ns, &r, views_ok, 3, &v);
    CHECK(!v.passed && strstr(v.reason->str, "no frame model"));
    ml_pass_verdict_clear(&v);

    /* A view that did not show the path fails a pass whose seconds are all inside. */
    for (size_t i = 0; i < 8; i++)
        hub[i] = 2.26 * 10e6 + 400;
    ns = samples_of(client, hub, 8, smp);
    struct ml_pass_view views[3];
    memcpy(views, views_ok, sizeof(views));
    views[1] = (struct ml_pass_view){
        .when = "middle", .ok = false, .evidence = "route: 10.10.0.3 dev eth0"};
    ml_pass_judge(&wg, smp, ns, &r, views, 3, &v);
    CHECK(!v.passed);
    CHECK_STR(v.reason->str, "the dataplane's view at the middle did not show the path: "
                             "route: 10.10.0.3 dev eth0");
    CHECK(v.path_lost);
    ml_pass_verdict_clear(&v);
    /* both: the band first, then each view in order, "; " between; no evidence reads "?" */
    hub[5] = 4.6 * 10e6;
    ns = samples_of(client, hub, 8, smp);
    views[2] = (struct ml_pass_view){
        .when = "end",
        .ok = false,
    };
    ml_pass_judge(&wg, smp, ns, &r, views, 3, &v);
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
    const struct ml_pass_expect plain = {.role = ML_HUB_QUIET, .idle_bytes_per_s = 800};
    ml_pass_judge(&plain, smp, ns, &r, views_ok, 3, &v);
    CHECK(v.passed && v.sec[0].ok == 1 && v.sec[7].ok == 1);
    ml_pass_verdict_clear(&v);
    hub[2] = hub[3] = hub[4] = 2 * 10e6;
    ns = samples_of(client, hub, 8, smp);
    ml_pass_judge(&plain, smp, ns, &r, views_ok, 3, &v);
    CHECK(!v.passed && v.sec[2].ok == 0 && v.sec[4].ok == 0 && v.sec[5].ok == 1);
    CHECK_STR(v.reason->str, "outside the direct band: seconds 3 to 5: hub moved 60.0 MB against "
                             "an idle 800 B/s (60.0 MB above it, allowed 79.2 kB)");
    ml_pass_verdict_clear(&v);
}

/* Samples of a hub + 3 clients lab (four's order): the client sends client[i] bytes in second
 * i+1 and the server's, the hub's and client-c's taps move server[i], hub[i] and other[i]. */
static size_t samples_sides(const double *client, const double *server, const double *hub,
                            const double *other, size_t n, struct ml_pass_sample *ret)
{
    ret[0] = (struct ml_pass_sample){0};
    for (size_t g = 0; g < 4; g++)
        ret[0].guest[g] = (struct ml_nic_stats){.rx_bytes = 1000 * (long long)g, .tx_bytes = 77};
    for (size_t i = 0; i < n; i++) {
        ret[i + 1] = ret[i];
        ret[i + 1].t = (double)(i + 1);
        ret[i + 1].guest[0].tx_bytes += (long long)client[i];
        ret[i + 1].guest[1].rx_bytes += (long long)server[i];
        ret[i + 1].guest[2].rx_bytes += (long long)(hub[i] / 2);
        ret[i + 1].guest[2].tx_bytes += (long long)(hub[i] - (long long)(hub[i] / 2));
        ret[i + 1].guest[3].rx_bytes += (long long)(other[i] / 2);
        ret[i + 1].guest[3].tx_bytes += (long long)(other[i] - (long long)(other[i] / 2));
    }
    for (size_t i = 0; i <= n; i++) {
        ret[i].client = ret[i].guest[0];
        ret[i].hub = ret[i].guest[2];
    }
    return n + 1;
}

static const struct ml_pass_view views_plain[] = {
    {.when = "start", .ok = true, .evidence = "route: 192.0.2.12 dev eth0 src 192.0.2.11"},
};

/* Every side of every second: the server's tap received the payload, nobody else carried it. */
static void test_sides(void)
{
    double client[8], server[8], hub[8], other[8];
    for (size_t i = 0; i < 8; i++) {
        client[i] = 10.5e6;
        server[i] = 10.5e6 + 700; /* the same frames arrive, beside its idle chatter */
        hub[i] = 900;
        other[i] = 520;
    }
    struct ml_pass_sample smp[9];
    struct ml_iperf_result r = {.payload_bytes = 80000000};
    struct ml_pass_expect plain = {.role = ML_HUB_QUIET, .idle_bytes_per_s = 800, .sides = four};
    struct ml_pass_verdict v = {0};

    /* A genuine plain pass with a third guest idle passes, and the series holds every tap. */
    size_t ns = samples_sides(client, server, hub, other, 8, smp);
    ml_pass_judge(&plain, smp, ns, &r, views_plain, 1, &v);
    CHECK(v.passed);
    CHECK_STR(v.reason->str, "");
    CHECK(v.sec[3].server_bytes == 10.5e6 + 700 && v.sec[3].guest_bytes[3] == 520 &&
          v.sec[3].guest_bytes[1] == v.sec[3].server_bytes && v.sec[3].ok == 1);
    ml_pass_verdict_clear(&v);

    /* A 3 s detour through client-c: its tap carries the payload twice (in and out) in seconds
     * 4 to 6 while the hub stays quiet; the hub's band alone passes it, the sides fail it. */
    for (size_t i = 3; i < 6; i++)
        other[i] = 2 * 10.5e6 + 520;
    ns = samples_sides(client, server, hub, other, 8, smp);
    ml_pass_judge(&plain, smp, ns, &r, views_plain, 1, &v);
    CHECK(!v.passed);
    CHECK(v.sec[2].ok == 1 && v.sec[3].ok == 0 && v.sec[4].ok == 0 && v.sec[5].ok == 0 &&
          v.sec[6].ok == 1);
    CHECK(strstr(v.reason->str, "outside the direct band") == NULL);
    CHECK_STR(v.reason->str, "not on the path's sides: seconds 4 to 6: client-c's tap moved 63.0 "
                             "MB (63.0 MB above its idle 500 B/s) for 30.0 MB of payload, allowed "
                             "79.2 kB: the path went through client-c");
    ml_pass_verdict_clear(&v);
    /* one second of it is as plain */
    for (size_t i = 3; i < 6; i++)
        other[i] = i == 4 ? 2 * 10.5e6 : 520;
    ns = samples_sides(client, server, hub, other, 8, smp);
    ml_pass_judge(&plain, smp, ns, &r, views_plain, 1, &v);
    CHECK(!v.passed && v.sec[4].ok == 0 && v.sec[3].ok == 1 &&
          strstr(v.reason->str, "second 5: client-c's tap moved 21.0 MB"));
    ml_pass_verdict_clear(&v);
    for (size_t i = 0; i < 8; i++)
        other[i] = 520;

    /* The server's tap at its idle rate for seconds 4 to 6: the payload never reached it. */
    for (size_t i = 3; i < 6; i++)
        server[i] = 700;
    ns = samples_sides(client, server, hub, other, 8, smp);
    ml_pass_judge(&plain, smp, ns, &r, views_plain, 1, &v);
    CHECK(!v.passed && v.sec[3].ok == 0 && v.sec[5].ok == 0 && v.sec[6].ok == 1);
    CHECK_STR(v.reason->str, "not on the path's sides: seconds 4 to 6: the server client-b's tap "
                             "moved 2.1 kB (0 B above its idle 700 B/s) for 30.0 MB of payload, "
                             "at least 22.5 MB expected: the payload did not reach its NIC");
    ml_pass_verdict_clear(&v);

    /* The server's counters a second behind the client's: second 4 low, second 5 makes it up. */
    for (size_t i = 0; i < 8; i++)
        server[i] = 10.5e6 + 700;
    server[3] = 3e6;
    server[4] = 18e6 + 1400;
    ns = samples_sides(client, server, hub, other, 8, smp);
    ml_pass_judge(&plain, smp, ns, &r, views_plain, 1, &v);
    CHECK(v.passed);
    ml_pass_verdict_clear(&v);
    server[3] = server[4] = 10.5e6 + 700;

    /* A relayed pass (kernel WireGuard through the hub, test_judge's) with client-c idle
     * passes; client-c carrying it too fails, the hub's band notwithstanding. */
    for (size_t i = 0; i < 8; i++)
        hub[i] = 2.26 * 10e6 + 800;
    struct ml_pass_expect wg = {.role = ML_HUB_CARRIES,
                                .encap = ml_path_find("wireguard-hub")->encap,
                                .idle_bytes_per_s = 800,
                                .ping_interval_s = 0.05,
                                .sides = four};
    ns = samples_sides(client, server, hub, other, 8, smp);
    ml_pass_judge(&wg, smp, ns, &r, views_ok, 3, &v);
    CHECK(v.passed);
    ml_pass_verdict_clear(&v);
    for (size_t i = 2; i < 5; i++)
        other[i] = 2 * 10.5e6;
    ns = samples_sides(client, server, hub, other, 8, smp);
    ml_pass_judge(&wg, smp, ns, &r, views_ok, 3, &v);
    CHECK(!v.passed && strstr(v.reason->str, "seconds 3 to 5: client-c's tap") &&
          strstr(v.reason->str, "outside the relayed band") == NULL);
    ml_pass_verdict_clear(&v);

    /* A relay that queues: the server gets a third of a second's bytes in seconds 3 to 5 and
     * the rest in 6 and 7. Judged over the whole span it passes; a server that got a third of
     * everything fails, naming the span. */
    for (size_t i = 0; i < 8; i++)
        other[i] = 520;
    for (size_t i = 2; i < 5; i++)
        server[i] = 3.5e6 + 700;
    server[5] = server[6] = 10.5e6 + 10.5e6 + 700;
    ns = samples_sides(client, server, hub, other, 8, smp);
    ml_pass_judge(&wg, smp, ns, &r, views_ok, 3, &v);
    CHECK(v.passed);
    ml_pass_verdict_clear(&v);
    for (size_t i = 0; i < 8; i++)
        server[i] = 3.5e6 + 700;
    ns = samples_sides(client, server, hub, other, 8, smp);
    ml_pass_judge(&wg, smp, ns, &r, views_ok, 3, &v);
    CHECK(!v.passed && strstr(v.reason->str, "seconds 2 to 7: the server client-b's tap") &&
          strstr(v.reason->str, "did not reach its NIC"));
    ml_pass_verdict_clear(&v);
    for (size_t i = 0; i < 8; i++)
        server[i] = 10.5e6 + 700;
    for (size_t i = 2; i < 5; i++)
        other[i] = 2 * 10.5e6;
    ns = samples_sides(client, server, hub, other, 8, smp);

    /* A guest whose idle rate is unknown is not judged. */
    struct ml_pass_expect blind = wg;
    blind.sides.idle_bytes_per_s[3] = -1;
    ml_pass_judge(&blind, smp, ns, &r, views_ok, 3, &v);
    CHECK(v.passed);
    ml_pass_verdict_clear(&v);

    /* A UDP pass that lost 40 % on the way: the server's tap carries 60 % of what the client
     * sent; iperf3's loss is not asked of it, and the same counters at TCP fail. */
    for (size_t i = 0; i < 8; i++) {
        server[i] = 0.6 * 10.5e6 + 700;
        hub[i] = 900;
        other[i] = 520;
    }
    ns = samples_sides(client, server, hub, other, 8, smp);
    struct ml_iperf_result udp = {.payload_bytes = 48000000, .udp = true, .lost_percent = 40};
    ml_pass_judge(&plain, smp, ns, &udp, views_plain, 1, &v);
    CHECK(v.passed);
    ml_pass_verdict_clear(&v);
    udp.udp = false;
    ml_pass_judge(&plain, smp, ns, &udp, views_plain, 1, &v);
    CHECK(!v.passed && strstr(v.reason->str, "did not reach its NIC"));
    ml_pass_verdict_clear(&v);
}

/* The client's route to the server's underlay address, as `ip -o route get` prints it. */
static void test_underlay_route(void)
{
    g_autoptr(GString) why = g_string_new(NULL);
    CHECK(ml_pass_underlay_ok("192.0.2.12 dev eth0 src 192.0.2.11 uid 0 cache", "192.0.2.12", NULL,
                              why));
    CHECK(why->len == 0);
    /* via the server itself is straight to it */
    CHECK(ml_pass_underlay_ok("192.0.2.12 via 192.0.2.12 dev eth0 src 192.0.2.11 uid 0 cache",
                              "192.0.2.12", NULL, why));
    /* via a third client is a detour, named when the topology knows the address */
    struct ml_topology *t = g_new0(struct ml_topology, 1);
    t->n_nodes = 2;
    g_strlcpy(t->nodes[0].name, "client-b", sizeof(t->nodes[0].name));
    inet_pton(AF_INET, "192.0.2.12", &t->nodes[0].address);
    g_strlcpy(t->nodes[1].name, "client-c", sizeof(t->nodes[1].name));
    inet_pton(AF_INET, "192.0.2.13", &t->nodes[1].address);
    CHECK(!ml_pass_underlay_ok("192.0.2.12 via 192.0.2.13 dev eth0 src 192.0.2.11 uid 0 cache",
                               "192.0.2.12", t, why));
    CHECK_STR(why->str, "the client's route to the server's underlay 192.0.2.12 goes via "
                        "192.0.2.13, client-c, not straight to it: \"192.0.2.12 via 192.0.2.13 "
                        "dev eth0 src 192.0.2.11 uid 0 cache\"");
    g_string_truncate(why, 0);
    CHECK(!ml_pass_underlay_ok("192.0.2.12 via 192.0.2.13 dev eth0", "192.0.2.12", NULL, why));
    CHECK(strstr(why->str, "goes via 192.0.2.13, not straight"));
    g_string_truncate(why, 0);
    CHECK(!ml_pass_underlay_ok("RTNETLINK answers: Network is unreachable", "192.0.2.12", t, why));
    CHECK(g_str_has_prefix(why->str, "cannot read the client's route to the server's underlay"));
    g_free(t);
}

/* pairs-K: the ring of the hub's clients, the flows' sums, and each receiver's counters. */
static void test_pairs(void)
{
    /* hub + 3 clients, the hub written second and measure.client last */
    struct ml_topology *t = g_new0(struct ml_topology, 1);
    static const char *names[] = {"client-b", "hub", "client-c", "client-a"};
    t->n_nodes = 4;
    for (size_t i = 0; i < 4; i++)
        g_strlcpy(t->nodes[i].name, names[i], sizeof(t->nodes[i].name));
    t->hub = 1;
    t->measure.client = 3;
    t->measure.server = 0;
    size_t ring[ML_MAX_NODES];
    CHECK(ml_pass_ring(t, ring) == 3);
    CHECK(ring[0] == 3 && ring[1] == 0 && ring[2] == 2); /* a, b, then c */

    struct ml_pass_flows f;
    ml_pass_flows_plan(t, 1, &f); /* the measured pair alone */
    CHECK(f.n == 1 && f.from[0] == 3 && f.to[0] == 0 && f.n_members == 2);
    ml_pass_flows_plan(t, 2, &f); /* a to b, b to c */
    CHECK(f.n == 2 && f.from[1] == 0 && f.to[1] == 2 && f.n_members == 3);
    ml_pass_flows_plan(t, 3, &f); /* ... and c back to a: each client sends and receives */
    CHECK(f.n == 3 && f.from[2] == 2 && f.to[2] == 3 && f.n_members == 3);
    for (size_t i = 0; i < f.n_members; i++)
        CHECK(f.member[i] != t->hub);

    /* The pass's figures are the flows' sums; an unknown retransmit count stays unknown. */
    struct ml_iperf_result a = {.seconds = 4.0,
                                .bytes_received = 1000,
                                .bytes_sent = 1100,
                                .payload_bytes = 1000,
                                .payload_bits_per_second = 2000,
                                .retransmits = 3,
                                .n_intervals = 2,
                                .interval_bytes = {400, 600},
                                .interval_s = {1, 1}};
    struct ml_iperf_result b = {.seconds = 4.2,
                                .bytes_received = 500,
                                .bytes_sent = 520,
                                .payload_bytes = 500,
                                .payload_bits_per_second = 1000,
                                .retransmits = 2,
                                .n_intervals = 3,
                                .interval_bytes = {100, 200, 200},
                                .interval_s = {1, 1, 1}};
    ml_iperf_result_add(&a, &b);
    CHECK(a.payload_bytes == 1500 && a.bytes_sent == 1620 && a.bytes_received == 1500);
    CHECK(a.payload_bits_per_second == 3000 && a.retransmits == 5 && a.seconds == 4.2);
    CHECK(a.n_intervals == 3 && a.interval_bytes[0] == 500 && a.interval_bytes[1] == 800 &&
          a.interval_bytes[2] == 200);
    b.retransmits = -1;
    ml_iperf_result_add(&a, &b);
    CHECK(a.retransmits == -1);

    /* Each flow's receiver must have received 75 % of its payload on its NIC: c got none of
     * flow 2's (a flow sent elsewhere), a got flow 3's. */
    struct ml_nic_stats s0[ML_MAX_NODES] = {0}, s1[ML_MAX_NODES] = {0};
    s1[0].rx_bytes = 1100000; /* b: flow 1's 1 MB in frames */
    s1[2].rx_bytes = 10000;   /* c: 10 kB for flow 2's 1 MB */
    s1[3].rx_bytes = 1050000; /* a: flow 3's */
    double payload[3] = {1e6, 1e6, 1e6};
    g_autoptr(GString) why = g_string_new(NULL);
    double received[3] = {0};
    CHECK(!ml_pass_flows_judge(t, &f, payload, s0, s1, received, why));
    CHECK(received[0] == 1100000 && received[1] == 10000 && received[2] == 1050000);
    CHECK_STR(why->str, "flow 2, client-b to client-c: client-c's NIC received 10000 bytes for "
                        "1000000 bytes of payload (less than 75 % of it)");
    g_string_truncate(why, 0);
    s1[2].rx_bytes = 760000;
    CHECK(ml_pass_flows_judge(t, &f, payload, s0, s1, received, why));
    CHECK(received[1] == 760000);
    CHECK(why->len == 0);
    g_free(t);
}

/* The dataplane's own counters between views (ml_tunnel_judge). A 30 s pass of 1 MB of payload a
 * second, read at whole seconds; a view asked for every 2 s, its dataplane's agent call from 0.5
 * to 1.4 s after (one, the fourth, answering in 0.1 s), the counters read 0.6 s into the call,
 * the guest's uptime then 1000 s ahead of the host's clock. The counters count the tunnel's
 * packets, 6 % above the payload, and lag the client's NIC by up to 0.8 s (a relay's queue),
 * which no genuine pass may fail for; a 3 s bypass of the tunnel (the payload crossing the NICs
 * in the clear), wherever it falls, fails the pass, naming the counter. */
#define TUN_VIEWS 15
#define TUN_SECONDS 30

static double counted_at(double t, double lag, double bypass_from, double bypass_to)
{
    double sent = MAX(t - lag, 0.0);
    double hidden = MAX(0.0, MIN(sent, bypass_to) - bypass_from);
    return 1.06e6 * (sent - hidden);
}

static void tunnel_views(struct ml_pass_view *v, double lag, double bypass_from, double bypass_to,
                         bool uptime)
{
    for (size_t i = 0; i < TUN_VIEWS; i++) {
        double asked = 2.0 * (double)i, from = asked + 0.5;
        double to = i == 3 ? from + 0.1 : from + 0.9, read = i == 3 ? from + 0.05 : from + 0.6;
        v[i] = (struct ml_pass_view){.when = i == 0               ? "start"
                                             : i + 1 == TUN_VIEWS ? "end"
                                                                  : "middle",
                                     .ok = true,
                                     .t_s = asked,
                                     .t_done_s = to + 0.2,
                                     .n_tunnel = 2,
                                     .tunnel_from_s = from,
                                     .tunnel_to_s = to,
                                     .tunnel_at = uptime ? read + 1000 : NAN};
        for (size_t e = 0; e < 2; e++) {
            g_snprintf(v[i].tunnel[e].who, sizeof(v[i].tunnel[e].who), "the hub's peer for %s",
                       e ? "client-b" : "client-a");
            v[i].tunnel[e].bytes = counted_at(read, lag, bypass_from, bypass_to);
        }
    }
}

static void tunnel_seconds(struct ml_second *s)
{
    for (size_t k = 0; k < TUN_SECONDS; k++)
        s[k] = (struct ml_second){.from_s = (double)k,
                                  .to_s = (double)k + 1,
                                  .t_s = (double)k + 1,
                                  .payload_bytes = 1e6,
                                  .ok = 1};
}

/* A relay's queue is not a bypass (tests/data/samples/pass/README, queue-*): two genuine
 * full-speed passes of kernel WireGuard through a hub whose one vCPU queued what it took in and
 * sent it seconds later. In + out failed both; the leg the payload is read on, counted twice,
 * passes both; a bypass of 3 s still fails it. Each second's hub bytes split into in and out by
 * the two clients' NICs, each leg 98 % its data and 2 % the other way's ACKs. */
static size_t queue_series(const char *file, bool reverse, struct ml_second *s, size_t max)
{
    g_autofree char *csv = NULL;
    CHECK(g_file_get_contents(file, &csv, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(csv ? csv : "", "\n", -1);
    size_t n = 0;
    double pay = 0, srv = 0;
    for (char **l = lines + 1; *l && **l && n < max; l++, n++) {
        g_auto(GStrv) f = g_strsplit(*l, ",", -1);
        CHECK(g_strv_length(f) == 9);
        double client = g_ascii_strtod(f[3], NULL), server = g_ascii_strtod(f[8], NULL);
        double hub = g_ascii_strtod(f[4], NULL);
        double up = 0.98 * client + 0.02 * server; /* the sender's leg into the hub */
        s[n] = (struct ml_second){.t_s = g_ascii_strtod(f[0], NULL),
                                  .payload_bytes = g_ascii_strtod(f[1], NULL),
                                  .iperf_bytes = g_ascii_strtod(f[2], NULL),
                                  .client_bytes = client,
                                  .hub_bytes = hub,
                                  .server_bytes = server,
                                  .hub_rx_bytes =
                                      client + server > 0 ? hub * up / (client + server) : 0,
                                  .hub_rx_known = true};
        for (size_t g = 0; g < ML_MAX_NODES; g++)
            s[n].guest_bytes[g] = NAN;
        pay += s[n].payload_bytes;
        srv += server;
    }
    /* The same seconds as a reverse pass: the sender's NIC is the column of the client above,
     * the receiver's (where the payload is read, downstream of the queue) the server's. */
    for (size_t i = 0; reverse && i < n; i++)
        s[i].payload_bytes = s[i].server_bytes * pay / srv;
    return n;
}

static void test_relay_queue(void)
{
    static const struct {
        const char *file;
        double payload, sent, rx_packets, seconds;
        long long retransmits;
    } runs[] = {
        {"tests/data/samples/pass/queue-wireguard-hub-03-forward-1-1.series.csv", 101382480,
         99711608, 89235, 30.10, 254},
        {"tests/data/samples/pass/queue-wireguard-hub-07-forward-1-2.series.csv", 114772464,
         111600176, 100496, 30.15, 132},
    };
    g_autoptr(GString) why = g_string_new(NULL);
    for (size_t k = 0; k < G_N_ELEMENTS(runs); k++) {
        struct ml_second s[40];
        struct ml_band b = band_of("wireguard-hub", 12868.5, runs[k].payload, runs[k].sent,
                                   runs[k].retransmits, runs[k].rx_packets, runs[k].seconds);
        /* in + out: the recorded false alarm */
        size_t n = queue_series(runs[k].file, false, s, 40);
        CHECK(n >= 30);
        b.leg = ML_LEG_BOTH;
        g_string_truncate(why, 0);
        CHECK(!ml_band_judge(&b, s, n, why));
        CHECK(strstr(why->str, "hub moved ") != NULL);
        /* the intake, the leg a forward pass's payload is read on */
        n = queue_series(runs[k].file, false, s, 40);
        b.leg = ML_LEG_IN;
        g_string_truncate(why, 0);
        CHECK(ml_band_judge(&b, s, n, why));
        CHECK(why->len == 0);
        /* a bypass of 3 s in its middle: the hub takes in only the ACKs' share, sends nothing */
        for (size_t i = 9; i < 12; i++) {
            s[i].hub_rx_bytes = 0.02 * s[i].server_bytes;
            s[i].hub_bytes = 0.04 * s[i].server_bytes;
        }
        g_string_truncate(why, 0);
        CHECK(!ml_band_judge(&b, s, n, why));
        CHECK(strstr(why->str, "hub took in ") != NULL && strstr(why->str, "twice that ") != NULL);
        /* the same seconds as a reverse pass: what the hub sent on holds */
        n = queue_series(runs[k].file, true, s, 40);
        b.leg = ML_LEG_OUT;
        g_string_truncate(why, 0);
        CHECK(ml_band_judge(&b, s, n, why));
        CHECK(why->len == 0);
    }
}

/* A series as meshlab writes it: 10 columns up to hub_rx_bytes (before the door was read) or
 * 13 with the door's. The hub's door (tests/data/samples/pass/README, door-*): its tap's queue
 * toward it, which the kernel counts in the hub's intake only when QEMU reads it. A 10-column
 * series' door is read as the client's NIC in + out (door: true) or not at all (false); a
 * 13-column one's is its own, and recorded[i] (may be NULL) the queue meshlab estimated. */
static size_t series_csv(const char *file, bool door, struct ml_second *s, double *recorded,
                         size_t max)
{
    g_autofree char *csv = NULL;
    CHECK(g_file_get_contents(file, &csv, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(csv ? csv : "", "\n", -1);
    size_t n = 0;
    for (char **l = lines + 1; *l && **l && n < max; l++, n++) {
        g_auto(GStrv) f = g_strsplit(*l, ",", -1);
        guint cols = g_strv_length(f);
        CHECK(cols == 10 || cols == 13 || cols == 15);
        bool read = cols >= 13;
        double t = g_ascii_strtod(f[0], NULL);
        s[n] = (struct ml_second){.from_s = t - 1,
                                  .to_s = t,
                                  .t_s = t,
                                  .payload_bytes = g_ascii_strtod(f[1], NULL),
                                  .iperf_bytes = g_ascii_strtod(f[2], NULL),
                                  .client_bytes = g_ascii_strtod(f[3], NULL),
                                  .hub_bytes = g_ascii_strtod(f[4], NULL),
                                  .server_bytes = g_ascii_strtod(f[8], NULL),
                                  .hub_rx_bytes = g_ascii_strtod(f[9], NULL),
                                  .hub_rx_known = true,
                                  .hub_dropped = read ? g_ascii_strtod(f[10], NULL) : 0,
                                  .door_bytes = !door  ? 0
                                                : read ? g_ascii_strtod(f[11], NULL)
                                                       : g_ascii_strtod(f[3], NULL),
                                  .door_known = door};
        for (size_t g = 0; g < ML_MAX_NODES; g++)
            s[n].guest_bytes[g] = NAN;
        s[n].sender_tx_bytes = cols == 15 && *f[13] ? g_ascii_strtod(f[13], NULL) : NAN;
        s[n].receiver_tx_packets = cols == 15 && *f[14] ? g_ascii_strtod(f[14], NULL) : NAN;
        if (recorded)
            recorded[n] = read && *f[12] ? g_ascii_strtod(f[12], NULL) : NAN;
    }
    return n;
}

/* The band of a recorded pass through path: its iperf3 file (below tests/data/samples/) into
 * *r, the hub's idle rate, the leg its payload is judged on, its received packets and length;
 * the door a tap's 1,000 frames of 1,514 bytes. */
static const struct ml_path_ops *recorded_band_wire(const char *iperf3, const char *path,
                                                    double idle, enum ml_band_leg leg,
                                                    const struct ml_pass_wire *w, double seconds,
                                                    struct ml_iperf_result *r, struct ml_band *b)
{
    g_autofree char *file = g_strconcat("tests/data/samples/", iperf3, NULL);
    g_autofree char *text = NULL;
    CHECK(g_file_get_contents(file, &text, NULL, NULL));
    CHECK(ml_iperf_parse(text ? text : "", r, NULL));
    const struct ml_path_ops *ops = ml_path_find(path);
    struct ml_pass_expect x = {.role = ops->hub,
                               .encap = ops->encap,
                               .idle_bytes_per_s = idle,
                               .ping_interval_s = 0.05,
                               .leg = leg,
                               .door_frames = 1000,
                               .door_frame_bytes = 1514};
    g_autoptr(GString) why = g_string_new(NULL);
    CHECK(ml_pass_band(&x, r, w, seconds, b, why));
    return ops;
}

static const struct ml_path_ops *recorded_band(const char *iperf3, const char *path, double idle,
                                               enum ml_band_leg leg, double rx_packets,
                                               double seconds, struct ml_iperf_result *r,
                                               struct ml_band *b)
{
    return recorded_band_wire(iperf3, path, idle, leg,
                              &(struct ml_pass_wire){.hub_rx_packets = rx_packets}, seconds, r, b);
}

/* An rrul pass (--bidir -P 4, 4 s with 1 s of warm-up) through wireguard-hub in e2e_warm's
 * first run of the cells beyond TCP (tests/data/samples/README, wireguard-hub-rrul-omit-1):
 * genuine, and failed at 2.68 hub bytes per payload byte against a ceiling of 2.49 while the
 * band priced the tail of the client's sending alone. The server's sending left 2216160 bytes
 * it sent and the client never counted, three times the other's: priced both ways, the pass
 * holds. */
static void test_rrul_tail(void)
{
    struct ml_iperf_result r;
    struct ml_band b;
    const struct ml_path_ops *ops =
        recorded_band("iperf3/wireguard-hub-rrul-omit-1.json", "wireguard-hub", 10096.2,
                      ML_LEG_BOTH, 17210, 4.17, &r, &b);
    g_autoptr(GString) why = g_string_new(NULL);
    struct ml_second s[12];
    double recorded[12];
    size_t n = series_csv("tests/data/samples/pass/rrul-wireguard-hub-03-rrul-1.series.csv", true,
                          s, recorded, 12);
    CHECK(n == 6);
    CHECK(ml_band_judge(&b, s, n, why));
    CHECK_STR(why->str, "");
    CHECK(b.not_payload > 0.35); /* 2942568 bytes both ways, as frames in and out */
    /* the forward tail alone, as the band priced it */
    b.not_payload = ml_physics_not_payload(ops->encap, 0, 726408, 16495344);
    n = series_csv("tests/data/samples/pass/rrul-wireguard-hub-03-rrul-1.series.csv", true, s,
                   recorded, 12);
    CHECK(!ml_band_judge(&b, s, n, why));
    CHECK(g_str_has_prefix(why->str, "seconds 2 to 3: hub moved 17.2 MB"));
}

/* A forward-1 pass through nebula's relay in CI's e2e at 6542230 (tests/data/samples/README,
 * nebula-relay-forward-1-sent-short): genuine, and failed at 2.62 hub bytes per payload byte
 * against 2.56 while the client's count of what it sent, below the server's of what arrived,
 * priced no tail. With the block the client was writing counted as sent, the pass holds; the
 * band it had then fails it as CI saw. */
static void test_sent_short_tail(void)
{
    struct ml_iperf_result r;
    struct ml_band b;
    const struct ml_path_ops *ops =
        recorded_band("iperf3/nebula-relay-forward-1-sent-short.json", "nebula-relay", 13758.6,
                      ML_LEG_IN, 1696, 4.37, &r, &b);
    CHECK(ml_iperf_unreceived_bytes(&r) == 285792.0 + 786240 + 131072 - 230880 - 856128);
    g_autoptr(GString) why = g_string_new(NULL);
    const char *file = "tests/data/samples/pass/short-nebula-relay-31-forward-1-2.series.csv";
    struct ml_second s[12];
    size_t n = series_csv(file, true, s, NULL, 12);
    CHECK(n == 6);
    CHECK(ml_band_judge(&b, s, n, why));
    CHECK_STR(why->str, "");
    /* no tail, as the band priced it in CI */
    b.not_payload = ml_physics_not_payload(ops->encap, 0, 0, ml_iperf_transfer_bytes(&r));
    n = series_csv(file, true, s, NULL, 12);
    CHECK(!ml_band_judge(&b, s, n, why));
    CHECK(g_str_has_prefix(why->str, "seconds 3 to 4: hub took in 707.7 kB"));
}

/* CI's nebula-relay forward-8 pass at 48e93d0 (tests/data/samples/pass/README,
 * tail-nebula-relay-38-forward-8-1): genuine, and failed its band at seconds 3 to 4 with 3.49
 * hub bytes per payload byte against 3.45 allowed, 3.39 over the pass. The hub took in what
 * the ends' taps sent to within 0.7 % each second (door_bytes); the receiver sent 1,509 frames
 * for 1,177 segments and the sender 112 segments again, unevenly over the seconds. Its series
 * was written before the ends' taps were, so they are spread here as the pass's own totals
 * say: the sender's bytes out in proportion to the client's NIC, whose guest it is (2,332,254
 * of its 2,573,498), and the rest of what reached the hub's door as the receiver's frames at
 * their mean size over the pass. */
static void test_window_tail(void)
{
    struct ml_iperf_result r;
    struct ml_band b;
    const double sent = 2332254, frames = 1509;
    recorded_band_wire(
        "iperf3/nebula-relay-forward-8-window-tail.json", "nebula-relay", 13689.1, ML_LEG_IN,
        &(struct ml_pass_wire){
            .hub_rx_packets = 3290, .sender_tx_bytes = sent, .receiver_tx_packets = frames},
        4.455587, &r, &b);
    CHECK(b.ends_model);
    CHECK(fabs(b.ceiling + b.not_payload - 3.40) < 0.005);
    const char *file = "tests/data/samples/pass/tail-nebula-relay-38-forward-8-1.series.csv";
    struct ml_second s[12];
    size_t n = series_csv(file, true, s, NULL, 12);
    CHECK(n == 7);
    /* as CI judged it, no tap read each second */
    g_autoptr(GString) why = g_string_new(NULL);
    CHECK(!ml_band_judge(&b, s, n, why));
    CHECK(g_str_has_prefix(why->str, "seconds 3 to 4: hub took in 1.1 MB"));
    CHECK(strstr(why->str, "3.49 per payload byte") && strstr(why->str, "allowed 2.20 to 3.45"));

    double client = 0, door = 0;
    for (size_t i = 0; i < n; i++) {
        client += s[i].client_bytes;
        door += s[i].door_bytes;
    }
    CHECK(client == 2573498 && door == 2585210);
    double frame = (door - sent) / frames;
    for (int surplus = 0; surplus < 2; surplus++) {
        n = series_csv(file, true, s, NULL, 12);
        for (size_t i = 0; i < n; i++) {
            s[i].sender_tx_bytes = s[i].client_bytes * sent / client;
            s[i].receiver_tx_packets = (s[i].door_bytes - s[i].sender_tx_bytes) / frame;
        }
        /* a hub that took in 15 % more than the ends sent for the three seconds judged */
        for (size_t i = 1; surplus && i <= 3; i++) {
            s[i].hub_bytes += 0.3 * s[i].hub_rx_bytes;
            s[i].hub_rx_bytes *= 1.15;
            s[i].door_bytes *= 1.15;
        }
        g_string_truncate(why, 0);
        CHECK(ml_band_judge(&b, s, n, why) == !surplus);
        CHECK(surplus ? strstr(why->str, "4.01 per payload byte") &&
                            strstr(why->str, "the ends' taps give these seconds 3.46")
                      : why->len == 0);
    }
}

#define DOOR_BYTES (1000.0 * 1514) /* a tap's 1,000 frames of 1,514 bytes */

static void test_door_queue(void)
{
    static const struct {
        const char *file, *failed;
        double payload, sent, rx_packets, seconds;
        long long retransmits;
    } runs[] = {
        {"tests/data/samples/pass/door-wireguard-hub-04-forward-1-1.series.csv",
         "second 19: ", 145821960, 140359840, 126219, 30.03, 373},
        {"tests/data/samples/pass/door-wireguard-hub-08-forward-1-2.series.csv",
         "seconds 24 to 25: ", 119464704, 116796200, 104680, 30.11, 387},
    };
    g_autoptr(GString) why = g_string_new(NULL);
    struct ml_second s[40];
    for (size_t k = 0; k < G_N_ELEMENTS(runs); k++) {
        struct ml_band b = band_of("wireguard-hub", 12868.2, runs[k].payload, runs[k].sent,
                                   runs[k].retransmits, runs[k].rx_packets, runs[k].seconds);
        b.leg = ML_LEG_IN;
        /* the recorded false alarm: the intake alone */
        size_t n = series_csv(runs[k].file, false, s, NULL, 40);
        CHECK(n == 31);
        g_string_truncate(why, 0);
        CHECK(!ml_band_judge(&b, s, n, why));
        CHECK(g_str_has_prefix(why->str, runs[k].failed));
        /* the door read but its size unknown: nothing counted for its queue */
        n = series_csv(runs[k].file, true, s, NULL, 40);
        g_string_truncate(why, 0);
        CHECK(!ml_band_judge(&b, s, n, why));
        CHECK(isnan(s[5].door_queue_bytes));
        /* the door and its size: the queue the hub had not taken in yet is counted */
        b.door_bytes = DOOR_BYTES;
        n = series_csv(runs[k].file, true, s, NULL, 40);
        g_string_truncate(why, 0);
        CHECK(ml_band_judge(&b, s, n, why));
        CHECK_STR(why->str, "");
        double most = 0;
        for (size_t i = 0; i < n; i++) {
            CHECK(s[i].door_queue_bytes >= 0 && s[i].door_queue_bytes <= DOOR_BYTES);
            most = MAX(most, s[i].door_queue_bytes);
        }
        CHECK(most > 0.3e6); /* second 19 of the first: 0.86 MB behind */
        /* a bypass of 3 s at full speed: the door still reached, the hub took in only the
         * ACKs' share and sent nothing on; it fails both in its windows and over the pass */
        for (size_t i = 9; i < 12; i++) {
            s[i].hub_rx_bytes = 0.02 * s[i].server_bytes;
            s[i].hub_bytes = 0.04 * s[i].server_bytes;
        }
        g_string_truncate(why, 0);
        CHECK(!ml_band_judge(&b, s, n, why));
        CHECK(strstr(why->str, " went around the hub (allowed ") != NULL);
        CHECK(strstr(why->str, "in seconds 10 (") != NULL);
        CHECK(strstr(why->str, " per payload byte") != NULL);
        CHECK(s[9].ok == 0 && s[10].ok == 0 && s[11].ok == 0);
    }
    /* At the fixed rate (1.3 Mbit/s) a 3 s bypass is 0.5 MB, less than the door holds: its
     * windows read it as a queue, and the pass's ledger fails it, naming its seconds. */
    struct ml_band b = band_of("wireguard-hub", 12884.1, 4980736, 4587520, 0, 6188, 30.02);
    b.leg = ML_LEG_IN;
    b.door_bytes = DOOR_BYTES;
    size_t n =
        series_csv("tests/data/samples/pass/door-wireguard-hub-16-forward-1-fixed-1.series.csv",
                   true, s, NULL, 40);
    CHECK(n == 31);
    g_string_truncate(why, 0);
    CHECK(ml_band_judge(&b, s, n, why));
    CHECK_STR(why->str, "");
    for (size_t i = 14; i < 17; i++) {
        s[i].hub_rx_bytes = 0.02 * s[i].server_bytes;
        s[i].hub_bytes = 0.04 * s[i].server_bytes;
    }
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(&b, s, n, why));
    CHECK(g_str_has_prefix(why->str, "over the pass the other guests sent "));
    CHECK(strstr(why->str, " per payload byte") == NULL); /* no window failed */
    CHECK(strstr(why->str, "in seconds 15 (") != NULL && strstr(why->str, ", 17 (") != NULL);
    CHECK(s[14].ok == 0 && s[16].ok == 0 && s[13].ok == 1 && s[17].ok == 1);
    /* The ledger needs no queue size: where sysfs did not say (a remote host), it still holds. */
    b.door_bytes = 0;
    g_string_truncate(why, 0);
    CHECK(!ml_band_judge(&b, s, n, why));
    CHECK(g_str_has_prefix(why->str, "over the pass the other guests sent "));
    CHECK(isnan(s[5].door_queue_bytes));
    b.door_bytes = DOOR_BYTES;
    /* A series with the door read by meshlab itself (door-read-*): the queue the judge
     * estimates is the one it recorded, and its ledger closes within bytes. */
    b = band_of("wireguard-hub", 12848.1, 103300416, 102322528, 218, 89529, 30.05);
    b.leg = ML_LEG_IN;
    double recorded[40], offered = 0, in = 0, most = 0;
    n = series_csv("tests/data/samples/pass/door-read-wireguard-hub-04-forward-1-1.series.csv",
                   true, s, recorded, 40);
    for (size_t i = 0; i < n; i++) {
        offered += s[i].door_bytes;
        in += s[i].hub_rx_bytes;
    }
    CHECK(n == 31);
    CHECK(fabs(offered - in) < 1000); /* the ledger: every byte that reached the door went in */
    g_string_truncate(why, 0);
    b.door_bytes = DOOR_BYTES;
    CHECK(ml_band_judge(&b, s, n, why));
    CHECK_STR(why->str, "");
    for (size_t i = 0; i < n; i++) {
        CHECK(fabs(s[i].door_queue_bytes - recorded[i]) < 1);
        most = MAX(most, recorded[i]);
    }
    CHECK(most > 1.2e6); /* 850 of the door's 1,000 frames waiting at once */
    /* The intake alone reads seconds 18 to 20 at 2.02 per payload byte, under the frames'
     * floor (a second added either side brings it back, so the old judge passed it); counted
     * with the door's queue, they read 2.2x, as the model expects. */
    double least = INFINITY, least_door = INFINITY;
    for (size_t a = 1; a + 2 < n - 1; a++) {
        double pay = 0, rx = 0;
        for (size_t i = a; i < a + 3; i++) {
            pay += s[i].payload_bytes;
            rx += s[i].hub_rx_bytes;
        }
        double queued = s[a + 2].door_queue_bytes - s[a - 1].door_queue_bytes;
        least = MIN(least, (2 * rx - 3 * b.idle_bytes_per_s) / pay);
        least_door = MIN(least_door, (2 * (rx + queued) - 3 * b.idle_bytes_per_s) / pay);
    }
    CHECK(least < 2.03 && least < b.floor);
    CHECK(least_door > 2.2 && least_door >= b.floor);
    /* A reverse pass judges what the hub sends: its door is not counted. */
    b.leg = ML_LEG_OUT;
    n = series_csv("tests/data/samples/pass/door-wireguard-hub-16-forward-1-fixed-1.series.csv",
                   true, s, NULL, 40);
    g_string_truncate(why, 0);
    ml_band_judge(&b, s, n, why);
    CHECK(isnan(s[3].door_queue_bytes));
}

/* What the host read becomes the door's seconds: the frames dropped at the hub's tap at that
 * second's mean intake frame, and what every other tap sent, each tap once. */
static void test_door_series(void)
{
    double client[6], server[6], hub[6], other[6];
    for (size_t i = 0; i < 6; i++) {
        client[i] = 10e6;
        server[i] = 10e6;
        hub[i] = 2.26 * 10e6;
        other[i] = 520;
    }
    struct ml_pass_sample smp[7];
    size_t ns = samples_sides(client, server, hub, other, 6, smp);
    for (size_t i = 0; i < ns; i++) {
        /* 11.3 kB a frame taken in, but none counted in second 5 */
        smp[i].guest[2].rx_packets = 1000 * (long long)(i >= 5 ? i - 1 : i);
        /* 40 dropped in second 3, 10 in second 5 */
        smp[i].guest[2].rx_drop = i >= 5 ? 50 : i >= 3 ? 40 : 0;
        smp[i].hub = smp[i].guest[2];
    }
    struct ml_sides sd = four;
    sd.door[0] = sd.door[1] = sd.door[3] = true;
    sd.door_known = true;
    struct ml_iperf_result r = {.payload_bytes = 60000000};
    const struct ml_pass_expect x = {.role = ML_HUB_CARRIES,
                                     .encap = ml_path_find("wireguard-hub")->encap,
                                     .idle_bytes_per_s = 800,
                                     .leg = ML_LEG_IN,
                                     .sides = sd,
                                     .door_frames = 1000,
                                     .door_frame_bytes = 1514};
    struct ml_pass_verdict v = {0};
    ml_pass_judge(&x, smp, ns, &r, views_ok, 3, &v);
    CHECK(v.n == 6);
    CHECK(v.band.door_bytes == DOOR_BYTES);
    CHECK(v.sec[2].hub_dropped == 40 && v.sec[3].hub_dropped == 0);
    CHECK(fabs(v.sec[2].hub_dropped_bytes - 40 * 11300.0) < 1);
    /* a second that took in no frame prices its drops at the pass's mean: 67.8 MB in 5,000 */
    CHECK(v.sec[4].hub_dropped == 10 && fabs(v.sec[4].hub_dropped_bytes - 10 * 13560.0) < 1);
    /* the client's 10 MB, nothing of the server's (it received), the third guest's half */
    CHECK(v.sec[1].door_known && v.sec[1].door_bytes == 10e6 + 260);
    ml_pass_verdict_clear(&v);
}

static void test_tunnel_judge(void)
{
    struct ml_pass_view v[TUN_VIEWS];
    struct ml_second s[TUN_SECONDS];
    struct ml_tunnel_verdict tv;
    g_autoptr(GString) why = g_string_new(NULL);
    /* Genuine, with no lag and with 0.8 s of it, readings placed by the uptime or not: passes,
     * and windows were judged. */
    for (int lag10 = 0; lag10 <= 8; lag10 += 4)
        for (int up = 0; up < 2; up++) {
            tunnel_views(v, lag10 / 10.0, 0, 0, up);
            tunnel_seconds(s);
            g_string_truncate(why, 0);
            CHECK(ml_tunnel_judge(v, TUN_VIEWS, s, TUN_SECONDS, &tv, why));
            CHECK(why->len == 0 && tv.windows > 50 && tv.failed == 0);
            CHECK(tv.min_share >= 1.0);
        }
    /* A 3 s bypass, starting anywhere in a view's 2 s: fails, the readings placed by the
     * uptime. */
    for (int q = 0; q < 8; q++) {
        double at = 10.0 + q / 4.0;
        tunnel_views(v, 0, at, at + 3, true);
        tunnel_seconds(s);
        g_string_truncate(why, 0);
        CHECK(!ml_tunnel_judge(v, TUN_VIEWS, s, TUN_SECONDS, &tv, why));
        CHECK(tv.failed > 0 && tv.min_share < ML_TUNNEL_SHARE);
        CHECK(strstr(why->str, " windows between its readings fell short, the worst: the hub's "
                               "peer for client-a counted ") != NULL);
        CHECK(strstr(why->str, "must be at least 0.75)") != NULL);
        /* The seconds of the bypass are marked, the seconds far from it are not. */
        CHECK(s[(int)at + 1].ok == 0);
        CHECK(s[2].ok == 1 && s[25].ok == 1);
    }
    /* Without the uptime, a reading is anywhere in its agent call: the windows are shorter
     * and fewer, and still no genuine pass fails (above). */
    tunnel_views(v, 0, 0, 0, false);
    tunnel_seconds(s);
    struct ml_tunnel_verdict wide;
    CHECK(ml_tunnel_judge(v, TUN_VIEWS, s, TUN_SECONDS, &wide, why));
    tunnel_views(v, 0, 0, 0, true);
    CHECK(ml_tunnel_judge(v, TUN_VIEWS, s, TUN_SECONDS, &tv, why));
    CHECK(tv.windows > wide.windows);
    /* Seconds the band did not judge (a relay's edges) are in no window of a hub's counters;
     * counters kept at the client judge them too, and find the bypass there. */
    tunnel_views(v, 0, 10, 13, true);
    tunnel_seconds(s);
    for (size_t k = 9; k < 15; k++)
        s[k].ok = -1;
    CHECK(ml_tunnel_judge(v, TUN_VIEWS, s, TUN_SECONDS, &tv, why));
    for (size_t i = 0; i < TUN_VIEWS; i++)
        v[i].tunnel[0].at_client = v[i].tunnel[1].at_client = true;
    CHECK(!ml_tunnel_judge(v, TUN_VIEWS, s, TUN_SECONDS, &tv, why));
    /* A count that fell (the peer or SA replaced) or a view without counts: not judged. */
    tunnel_views(v, 0, 10, 13, true);
    tunnel_seconds(s);
    for (size_t i = 5; i < TUN_VIEWS; i++)
        v[i].tunnel[0].bytes = v[i].tunnel[1].bytes = 0;
    for (size_t i = 6; i < TUN_VIEWS; i++)
        v[i].tunnel[0].bytes = v[i].tunnel[1].bytes = 1e9;
    v[6].n_tunnel = 0;
    CHECK(ml_tunnel_judge(v, 7, s, TUN_SECONDS, &tv, why));
    /* Seconds without their instants (a recorded series) are never judged. */
    tunnel_views(v, 0, 10, 13, true);
    for (size_t k = 0; k < TUN_SECONDS; k++)
        s[k].from_s = s[k].to_s = NAN;
    CHECK(ml_tunnel_judge(v, TUN_VIEWS, s, TUN_SECONDS, &tv, why) && tv.windows == 0);
}

/* An excluded counter (tailscaled's bytes by DERP while the path is direct): the client's own
 * count of a way the path must not take. Its keepalives (120 bytes a second) pass; the payload
 * sent that way as well for one second, 174 kB (the CI run whose direct trust lapsed under
 * load), fails the pass and names the counter; a counter that must carry the payload still
 * must. */
static void test_tunnel_excluded(void)
{
    struct ml_pass_view v[TUN_VIEWS];
    struct ml_second s[TUN_SECONDS];
    struct ml_tunnel_verdict tv;
    g_autoptr(GString) why = g_string_new(NULL);
    for (int lapse = 0; lapse < 2; lapse++) {
        tunnel_views(v, 0, 0, 0, true);
        tunnel_seconds(s);
        for (size_t i = 0; i < TUN_VIEWS; i++) {
            double read = v[i].tunnel_at - 1000;
            g_snprintf(v[i].tunnel[0].who, sizeof(v[i].tunnel[0].who),
                       "client-a's tailscaled by direct");
            g_snprintf(v[i].tunnel[1].who, sizeof(v[i].tunnel[1].who),
                       "client-a's tailscaled by derp");
            v[i].tunnel[1].excluded = true;
            v[i].tunnel[1].bytes = 120 * read + (lapse && read > 13 ? 174000 : 0);
        }
        g_string_truncate(why, 0);
        bool ok = ml_tunnel_judge(v, TUN_VIEWS, s, TUN_SECONDS, &tv, why);
        CHECK(ok == !lapse);
        CHECK(tv.excluded_carried == (lapse == 1));
        CHECK(tv.min_share >= 1.0);
        CHECK(lapse ? tv.max_excluded_share > 0.03 : tv.max_excluded_share < 0.001);
        if (lapse) {
            CHECK(strstr(why->str, "saw a way the path excludes carry payload, the most: "
                                   "client-a's tailscaled by derp counted ") != NULL);
            CHECK(strstr(why->str, "fell short") == NULL);
            CHECK(s[13].ok == 0 && s[25].ok == 1);
        }
    }
    /* The excluded counter is not asked to carry the payload: flat, it passes. */
    tunnel_views(v, 0, 0, 0, true);
    tunnel_seconds(s);
    for (size_t i = 0; i < TUN_VIEWS; i++) {
        v[i].tunnel[1].excluded = true;
        v[i].tunnel[1].bytes = 0;
    }
    CHECK(ml_tunnel_judge(v, TUN_VIEWS, s, TUN_SECONDS, &tv, why));
}

int main(void)
{
    test_guest_cpu_idle();
    test_view_cost();
    test_pairs();
    test_sides();
    test_underlay_route();
    test_judge();
    test_judge_without_a_model();
    test_band_physics();
    test_surplus_over_physics();
    test_counter_lag();
    test_lab_runs();
    test_unreceived_tail_recorded();
    test_probe_bytes();
    test_carried();
    test_p99_counts_the_lost();
    test_relay_band();
    test_drain_after_iperf();
    test_direct_band();
    test_stats();
    test_guest_cpu();
    test_tunnel_judge();
    test_tunnel_excluded();
    test_relay_queue();
    test_door_queue();
    test_door_series();
    test_rrul_tail();
    test_sent_short_tail();
    test_window_tail();
    return check_finish();
}
