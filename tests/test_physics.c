/* The hub factor physics predicts (src/measure/physics.c) against seed 000's
 * figures and the measurement review's (shared/research/measurement-review-2026-11-30.md):
 * kernel WireGuard through the hub at MTU 1420 is 2 x 1494 / 1368 = 2.184 for the data
 * alone, ~2.198 with ~15 segments per ACK (GRO on KVM; seed 000 measured 2.2009) and
 * ~2.25 with ~3 per ACK (TCG, little GRO; measured 2.26 with 0.8 % drops on top). */
#include <math.h>

#include "check.h"
#include "measure/physics.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_object, json_object_put)

#define CHECK_NEAR(a, b, tol) CHECK(fabs((a) - (b)) < (tol))

/* seed 000: "divide by the 1,080,164,352 payload bytes and the factor is 2.20" */
#define SEED_PAYLOAD 1080164352.0

/* The model from a payload and the hub's received packets alone: no probe, no retransmit. */
static bool expected(const struct ml_encap *e, double payload, double rx, struct ml_physics *ret)
{
    struct ml_physics_counts n = {.payload_bytes = payload, .hub_rx_packets = rx};
    return ml_physics_expected(e, &n, ret);
}

static const struct ml_path_ops *path(const char *name)
{
    const struct ml_path_ops *ops = ml_path_find(name);
    if (!ops) {
        fprintf(stderr, "no path %s\n", name);
        exit(1);
    }
    return ops;
}

static void test_wireguard_frames(void)
{
    struct ml_physics p;
    CHECK(expected(path("wireguard-hub")->encap, SEED_PAYLOAD, 0, &p));
    CHECK(p.inner_mtu_bytes == 1420);
    CHECK(p.overhead_bytes == 60);
    CHECK(p.mss_bytes == 1368);
    CHECK(p.data_frame_bytes == 1494); /* 1420 is not a multiple of 16: padding stops at the MTU */
    CHECK(p.ack_frame_bytes == 138);   /* 52 padded to 64, + 60 + 14 */
    CHECK(p.data_packets == 789594);   /* ceil(1080164352 / 1368) */
    CHECK(p.ack_packets == 0);         /* hub rx below D: no ACKs counted */
    CHECK(p.ack_ratio == 0);
    CHECK_NEAR(p.hub_bytes_per_payload_byte, 2.184, 0.0005); /* data only */
    /* wireguard-go on the hub: the same wire format, the same figures */
    struct ml_physics g;
    CHECK(expected(path("wireguard-go-hub")->encap, SEED_PAYLOAD, 0, &g));
    CHECK(g.data_frame_bytes == 1494 && g.ack_frame_bytes == 138);
}

static void test_ack_ratio(void)
{
    const struct ml_encap *wg = path("wireguard-hub")->encap;
    struct ml_physics kvm, tcg;
    /* the hub receives every data segment and every ACK once */
    CHECK(expected(wg, SEED_PAYLOAD, 789594 + 789594 / 15.0, &kvm));
    CHECK_NEAR(kvm.ack_ratio, 15, 0.01);
    CHECK_NEAR(kvm.hub_bytes_per_payload_byte, 2.198, 0.0005);
    CHECK(expected(wg, SEED_PAYLOAD, 789594 + 789594 / 3.0, &tcg));
    CHECK_NEAR(tcg.ack_ratio, 3, 0.01);
    CHECK_NEAR(tcg.hub_bytes_per_payload_byte, 2.2515, 0.0005);

    /* seed 000 measured 2.2009 on KVM: 0.15 % from the model, no flag */
    ml_physics_compare(&kvm, 2.2009);
    CHECK(!kvm.flag);
    CHECK_NEAR(kvm.differs_percent, 0.15, 0.01);
    /* the review's TCG 2.26 (0.8 % drops beyond the model): still within 5 % */
    ml_physics_compare(&tcg, 2.26);
    CHECK(!tcg.flag);
    /* a pass that went the long way round, or half of it direct: flagged */
    ml_physics_compare(&tcg, 2.44);
    CHECK(tcg.flag && tcg.differs_percent > 5);
    ml_physics_compare(&tcg, 1.9);
    CHECK(tcg.flag && tcg.differs_percent < -5);
}

static void test_other_encaps(void)
{
    struct ml_physics n, t;
    /* nebula relay: tun mtu 1300, a second header and tag for the relay tunnel */
    CHECK(expected(path("nebula-relay")->encap, SEED_PAYLOAD, 0, &n));
    CHECK(n.overhead_bytes == 92 && n.mss_bytes == 1248);
    CHECK(n.data_frame_bytes == 1300 + 92 + 14);
    CHECK(n.ack_frame_bytes == 52 + 92 + 14); /* nebula does not pad */
    CHECK_NEAR(n.hub_bytes_per_payload_byte, 2.2532, 0.0005);
    /* tailscale relay: approximate, and said so */
    const struct ml_encap *derp = path("tailscale-relay")->encap;
    CHECK(derp->approximate);
    CHECK(expected(derp, SEED_PAYLOAD, 0, &t));
    CHECK(t.mss_bytes == 1228);
    /* seed 000's relay measured 2.44; the model with ~3 segments per ACK */
    double d = ceil(SEED_PAYLOAD / 1228);
    CHECK(expected(derp, SEED_PAYLOAD, d + d / 3, &t));
    ml_physics_compare(&t, 2.44);
    CHECK(!t.flag);
    g_autoptr(json_object) o = ml_physics_json(&t);
    CHECK(strstr(json_object_get_string(json_object_object_get(o, "model")), "approximation"));

    /* direct paths do not cross the hub: nothing to expect */
    struct ml_physics untouched = {.mss_bytes = 7};
    for (const char *const *name = (const char *const[]){"plain", "wireguard-direct",
                                                         "nebula-direct", "tailscale-direct", NULL};
         *name; name++) {
        CHECK(path(*name)->encap == NULL);
        CHECK(!expected(path(*name)->encap, SEED_PAYLOAD, 0, &untouched));
    }
    CHECK(!expected(path("wireguard-hub")->encap, 0, 10, &untouched));
    CHECK(untouched.mss_bytes == 7);
    /* every path that carries through the hub has a model; one that finds its own way has its
     * relay's, used when it finds the relay */
    const struct ml_path_ops *p;
    ML_FOR_EACH_PATH(k, p)
    CHECK((p->hub != ML_HUB_QUIET) == (p->encap != NULL));
}

static void test_json(void)
{
    struct ml_physics p;
    CHECK(expected(path("wireguard-hub")->encap, SEED_PAYLOAD, 789594 + 52640, &p));
    g_autoptr(json_object) before = ml_physics_json(&p);
    CHECK(json_object_object_get(before, "differs_percent") == NULL);
    CHECK(json_object_object_get_ex(before, "flag", NULL)); /* written, null */
    ml_physics_compare(&p, 2.2009);
    g_autoptr(json_object) o = ml_physics_json(&p);
    static const char *const keys[] = {"inner_mtu_bytes",
                                       "overhead_bytes",
                                       "mss_bytes",
                                       "data_frame_bytes",
                                       "ack_frame_bytes",
                                       "data_packets",
                                       "probe_packets",
                                       "retransmits",
                                       "ack_packets",
                                       "ack_ratio",
                                       "hub_bytes_per_payload_byte",
                                       "floor_hub_bytes_per_payload_byte",
                                       "ceiling_hub_bytes_per_payload_byte",
                                       "measured_hub_bytes_per_payload_byte",
                                       "differs_percent",
                                       "flag",
                                       "model",
                                       NULL};
    for (const char *const *k = keys; *k; k++)
        CHECK(json_object_object_get_ex(o, *k, NULL));
    CHECK(json_object_object_length(o) == 20); /* and tail_packets, acks_from, tail_from */
    /* no tap known here: both counted on the hub's packets, and the model says so */
    CHECK(
        !g_strcmp0(json_object_get_string(json_object_object_get(o, "acks_from")), "hub_packets"));
    CHECK_NEAR(
        json_object_get_double(json_object_object_get(o, "measured_hub_bytes_per_payload_byte")),
        2.2009, 1e-9);
    CHECK(json_object_object_get(before, "measured_hub_bytes_per_payload_byte") == NULL);
    CHECK(json_object_get_int(json_object_object_get(o, "data_frame_bytes")) == 1494);
    CHECK(json_object_get_int64(json_object_object_get(o, "ack_packets")) == 52640);
    CHECK_NEAR(json_object_get_double(json_object_object_get(o, "ack_ratio")), 15.0, 0.01);
    CHECK(!json_object_get_boolean(json_object_object_get(o, "flag")));
    const char *model = json_object_get_string(json_object_object_get(o, "model"));
    CHECK(strstr(model, "2 x ((D + R + T) x 1494 + A x 138) / payload"));
    CHECK(strstr(model, "60 bytes, padding to 16"));
    CHECK(ml_physics_json(NULL) == NULL);
}

/* The review's wireguard-hub forward-1 (measurement-review-2026-12-01, finding 5): D = 317,910
 * data segments, 57,912 more packets received by the hub, of which 3,536 were the latency
 * probe's pings and replies and 870 retransmits. Those are not ACKs: 53,506 are, 5.94 segments
 * per ACK, not the 5.5 the hub's packets alone gave. */
static void test_probe_and_retransmits_are_not_acks(void)
{
    const struct ml_encap *wg = path("wireguard-hub")->encap;
    double payload = 317910.0 * 1368 - 100;
    struct ml_physics_counts n = {.payload_bytes = payload,
                                  .hub_rx_packets = 317910 + 57912,
                                  .probe_rx_packets = 3536,
                                  .retransmits = 870};
    struct ml_physics p;
    CHECK(ml_physics_expected(wg, &n, &p));
    CHECK(p.data_packets == 317910);
    CHECK(p.ack_packets == 53506);
    CHECK(p.probe_packets == 3536 && p.retransmits == 870);
    CHECK_NEAR(p.ack_ratio, 5.94, 0.005);
    /* The 870 segments sent again are full frames in and out, not ACK frames: 2 x ((D + R) x
     * 1494 + A x 138) / payload = 2.2242, where pricing every packet beyond D as an ACK gives
     * 2.2210. */
    CHECK_NEAR(p.hub_bytes_per_payload_byte,
               2 * ((317910.0 + 870) * 1494 + 53506.0 * 138) / payload, 1e-9);
    CHECK_NEAR(p.hub_bytes_per_payload_byte, 2.2242, 0.0001);
    /* The seed lab's tinc-relay forward-1 tail: 120,495 bytes sent and never counted received
     * are 87 segments of 1,385 the hub relayed, no longer priced as ACKs; never more of them
     * than the packets beyond D leave (what never left the sender was never on the hub). */
    const struct ml_encap *tinc = path("tinc-relay")->encap;
    struct ml_physics_counts t = {.payload_bytes = 764520,
                                  .hub_rx_packets = 1316,
                                  .probe_rx_packets = 160,
                                  .unreceived_bytes = 120495};
    struct ml_physics tp;
    CHECK(ml_physics_expected(tinc, &t, &tp));
    CHECK(tp.data_packets == 552 && tp.tail_packets == 87 &&
          tp.ack_packets == 1316 - 552 - 160 - 87);
    CHECK_NEAR(tp.hub_bytes_per_payload_byte, 2 * ((552.0 + 87) * 1514 + 517.0 * 141) / 764520,
               1e-9);
    CHECK(tp.hub_bytes_per_payload_byte > 2.70 && tp.hub_bytes_per_payload_byte < 2.75);
    t.unreceived_bytes = 10e6;
    CHECK(ml_physics_expected(tinc, &t, &tp));
    CHECK(tp.tail_packets == 1316 - 552 - 160 && tp.ack_packets == 0);
    struct ml_physics old;
    CHECK(expected(wg, payload, 317910 + 57912, &old));
    CHECK_NEAR(old.hub_bytes_per_payload_byte, 2.2210, 0.0005);
    CHECK(fabs(old.ack_ratio - 5.49) < 0.01);
    /* more pings and retransmits than packets beyond D: no ACK, never a negative count */
    n.probe_rx_packets = 60000;
    CHECK(ml_physics_expected(wg, &n, &p));
    CHECK(p.ack_packets == 0 && p.ack_ratio == 0);
}

/* The tail is bounded by the sender's own wire too: segments still queued in its socket or its
 * dataplane when iperf3 stopped never reached the hub, whatever iperf3 counted sent. */
static void test_tail_on_sender_wire(void)
{
    const struct ml_encap *tinc = path("tinc-relay")->encap;
    struct ml_physics_counts t = {.payload_bytes = 764520,
                                  .hub_rx_packets = 1316,
                                  .probe_rx_packets = 160,
                                  .unreceived_bytes = 120495};
    struct ml_physics free_tail, bound;
    CHECK(ml_physics_expected(tinc, &t, &free_tail));
    CHECK(free_tail.tail_packets == 87);
    /* a wire that carried every tail segment and more: unchanged */
    t.sender_tx_bytes = (552.0 + 87 + 40) * 1514;
    CHECK(ml_physics_expected(tinc, &t, &bound));
    CHECK(bound.tail_packets == 87 && bound.ack_packets == free_tail.ack_packets);
    /* a wire that carried 30 full frames beyond D and its half of the probe (80 pings): 30 of
     * the tail on the hub, the rest of the packets beyond D its ACKs */
    double pings = 80.0 * ml_physics_frame_bytes(tinc, ML_PING_INNER_BYTES);
    t.sender_tx_bytes = (552.0 + 30) * 1514 + pings + 1000;
    CHECK(ml_physics_expected(tinc, &t, &bound));
    CHECK(bound.tail_packets == 30 && bound.ack_packets == 1316 - 552 - 160 - 30);
    CHECK(bound.hub_bytes_per_payload_byte < free_tail.hub_bytes_per_payload_byte);
    /* a wire that carried less than the data itself: no tail, never a negative one */
    t.sender_tx_bytes = 1000;
    CHECK(ml_physics_expected(tinc, &t, &bound));
    CHECK(bound.tail_packets == 0 && bound.ack_packets == 1316 - 552 - 160);
    /* retransmits are on that wire first */
    t.retransmits = 10;
    t.sender_tx_bytes = (552.0 + 10 + 30) * 1514 + pings;
    CHECK(ml_physics_expected(tinc, &t, &bound));
    CHECK(bound.tail_packets == 30);
}

/* The ACK term can move the factor only between the data alone (no ACK) and an ACK per
 * segment: 2.184 to 2.386 for kernel WireGuard at 1420 over 1500 (finding 5). The ceiling is the
 * per-second judge's (ml_physics_bounds): one ceiling, not one for the judge and another for
 * the report (the review of 2026-12-04 found four of six hub paths "above" the report's). */
static void test_floor_and_ceiling(void)
{
    struct ml_physics p;
    CHECK(expected(path("wireguard-hub")->encap, SEED_PAYLOAD, 789594 + 789594 / 15.0, &p));
    CHECK_NEAR(p.floor, 2.1842, 0.0005);
    CHECK_NEAR(p.ceiling, 2.3860, 0.0005);
    double lo, hi;
    CHECK(ml_physics_bounds(path("wireguard-hub")->encap, &lo, &hi));
    CHECK_NEAR(p.ceiling, hi, 0.0005);
    CHECK(p.floor < p.hub_bytes_per_payload_byte && p.hub_bytes_per_payload_byte < p.ceiling);
    g_autoptr(json_object) o = ml_physics_json(&p);
    CHECK_NEAR(
        json_object_get_double(json_object_object_get(o, "floor_hub_bytes_per_payload_byte")),
        2.1842, 0.00005);
    CHECK_NEAR(
        json_object_get_double(json_object_object_get(o, "ceiling_hub_bytes_per_payload_byte")),
        2.3860, 0.00005);
    /* nebula's relay: no padding, 92 bytes of overhead */
    CHECK(expected(path("nebula-relay")->encap, SEED_PAYLOAD, 0, &p));
    CHECK_NEAR(p.floor, 2 * 1406 / 1248.0, 0.0005);
    CHECK_NEAR(p.ceiling, 2 * (1406 + 158) / 1248.0, 0.0005);
}

/* The review of 2026-12-04 (shared/research/measurement-review-2026-12-04.md, section 3): the
 * full cell of nebula-relay on a fresh quickstart, its three passes pooled. Its counters as the
 * review gives them: payload 16,811 segments of 1,248 bytes (D), 520 retransmits, 4.15 MB sent
 * and never received (19.8 %, 3,329 segments), the hub's bytes and packets solved for nebula's
 * 1,406- and 158-byte frames: 17,987 data frames (D + R + 656 of the tail) and an ACK per 1.53
 * segments; measured 2.573. The probe: 90 s of pings every 0.05 s, each and its reply. The
 * guests' taps as those counts imply: the sender's carried its data frames and its half of the
 * probe, the receiver's its ACKs and its half. */
static void test_review_nebula_relay(void)
{
    const struct ml_encap *neb = path("nebula-relay")->encap;
    double d = 16811, r = 520, reached = 656, acks = round(16811 / 1.53), probe = 2 * 90 / 0.05;
    double ping = ml_physics_frame_bytes(neb, ML_PING_INNER_BYTES);
    struct ml_physics_counts n = {
        .payload_bytes = d * 1248,
        .retransmits = r,
        .unreceived_bytes = 4.15e6,
        .probe_rx_packets = probe,
        .hub_rx_packets = d + r + reached + acks + probe,
    };
    double measured = 2.573;
    /* the hub's packets alone: every unreceived byte priced as relayed data, 2.894 as the
     * review found, 12.5 % over what the hub carried */
    struct ml_physics hub_only;
    CHECK(ml_physics_expected(neb, &n, &hub_only));
    CHECK(!hub_only.tail_from_sender && !hub_only.acks_from_receiver);
    CHECK(hub_only.tail_packets == 3326);
    CHECK_NEAR(hub_only.hub_bytes_per_payload_byte, 2.894, 0.005);
    ml_physics_compare(&hub_only, measured);
    CHECK(hub_only.flag && hub_only.differs_percent < -10);
    /* the taps: the tail that reached the wire, the ACKs the receiver sent; within 3 % */
    n.sender_tx_bytes = (d + r + reached) * 1406 + probe / 2 * ping;
    n.receiver_tx_packets = acks + probe / 2;
    struct ml_physics taps;
    CHECK(ml_physics_expected(neb, &n, &taps));
    CHECK(taps.tail_from_sender && taps.acks_from_receiver);
    CHECK(taps.tail_packets == reached && taps.ack_packets == acks);
    ml_physics_compare(&taps, measured);
    CHECK(fabs(taps.differs_percent) < 3 && !taps.flag);
    /* and the model reads none of the hub's counters: a hub that carried twice the ACKs (a
     * loop) moves the measured factor, not the expected one */
    n.hub_rx_packets += acks;
    struct ml_physics loop;
    CHECK(ml_physics_expected(neb, &n, &loop));
    CHECK(loop.hub_bytes_per_payload_byte == taps.hub_bytes_per_payload_byte);
    g_autoptr(json_object) o = ml_physics_json(&taps);
    CHECK(
        !g_strcmp0(json_object_get_string(json_object_object_get(o, "acks_from")), "receiver_tap"));
    CHECK(!g_strcmp0(json_object_get_string(json_object_object_get(o, "tail_from")), "sender_tap"));
}

/* A ping (84 inner bytes) on the hub's wire, by the frame model the data and ACKs use: the
 * review's idle rates (12,755 B/s for wireguard-hub, 14,363 for nebula-relay at 20 Hz, four
 * crossings each) are 18.8 and 18.9 pings a second of these frames. */
static void test_probe_frame(void)
{
    CHECK(ml_physics_frame_bytes(path("wireguard-hub")->encap, ML_PING_INNER_BYTES) == 170);
    CHECK(ml_physics_frame_bytes(path("wireguard-go-hub")->encap, ML_PING_INNER_BYTES) == 170);
    CHECK(ml_physics_frame_bytes(path("nebula-relay")->encap, ML_PING_INNER_BYTES) == 190);
    CHECK(ml_physics_frame_bytes(path("plain")->encap, ML_PING_INNER_BYTES) == 0);
    CHECK(ml_physics_frame_bytes(path("wireguard-hub")->encap, 1420) == 1494);
    CHECK(ml_physics_frame_bytes(path("wireguard-hub")->encap, 52) == 138);
}

/* A lab over several hosts: each of the 2 x (D + R + T + A) frames at the hub also crossed the
 * underlay, 50 bytes of VXLAN more on each. */
static void test_underlay(void)
{
    struct ml_physics p;
    CHECK(expected(path("wireguard-hub")->encap, SEED_PAYLOAD, 789594 + 52640, &p));
    double frames = 2 * (p.data_packets + p.retransmits + p.tail_packets + p.ack_packets);
    double u = ml_physics_underlay(&p, 50);
    CHECK(fabs(u - (p.hub_bytes_per_payload_byte + 50 * frames / p.payload_bytes)) < 1e-12);
    CHECK(u > p.hub_bytes_per_payload_byte);
    CHECK(ml_physics_underlay(&p, 0) == p.hub_bytes_per_payload_byte);
    /* The seed's wireguard-hub: about 2.2 at the hub, and 50 bytes on segments of ~1420 add
     * about 3.5 % on the underlay. */
    CHECK(u / p.hub_bytes_per_payload_byte > 1.02 && u / p.hub_bytes_per_payload_byte < 1.06);
}

int main(void)
{
    test_probe_and_retransmits_are_not_acks();
    test_tail_on_sender_wire();
    test_floor_and_ceiling();
    test_review_nebula_relay();
    test_probe_frame();
    test_wireguard_frames();
    test_ack_ratio();
    test_other_encaps();
    test_json();
    test_underlay();
    return check_finish();
}
