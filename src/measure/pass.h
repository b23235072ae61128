/* One pass: iperf3 on the path for a few seconds while meshlab watches it. Once a second
 * every guest's NIC counters are read from the host beside iperf3's own intervals, so each
 * second has its own hub bytes per payload byte, its server's bytes and every other guest's;
 * pings at 20 Hz measure the latency under load; the dataplane's own view of the path (with,
 * for a direct path, the client's route to the server's underlay address) is read at the
 * start, every ML_VIEW_EVERY_S through the transfer and at the end; every guest's CPU is read
 * before and after, and the host's. A window of seconds outside the path's band (its own
 * frames' physics), a window whose server did not receive the payload or whose other guests
 * carried it, or a view that does not show the path, fails the pass: it keeps its values as
 * evidence, and no figure includes it. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "dataplanes/dataplane.h"
#include "measure/guestcpu.h"
#include "measure/parse_iperf.h"
#include "virt/agent.h"
#include "virt/virt.h"
#include "virt/lab.h"

/* The flows of a pairs-K pass, around the ring of the hub's clients (ml_pass_ring): flow 0 is the
 * pass's own, measure.client to measure.server, with the ping and the views; the others run at
 * the same time, each from one client to the next. */
struct ml_pass_flows {
    size_t n; /* K */
    size_t from[ML_PAIRS_MAX], to[ML_PAIRS_MAX];
    size_t member[ML_MAX_NODES]; /* every guest a flow starts or ends at, each once */
    size_t n_members;
    /* flows 1..n-1, filled while the pass runs (flow 0 is the pass's own iperf3) */
    long long pid[ML_PAIRS_MAX];
    struct ml_exec out[ML_PAIRS_MAX];
    struct ml_iperf_result r[ML_PAIRS_MAX];
};

/* Pure: the ring of the hub's clients the flows of a pairs cell run around: measure.client,
 * measure.server, then the other nodes but the hub in the topology's order; flow i goes from
 * ring[i] to ring[(i + 1) % n]. Returns n. */
size_t ml_pass_ring(const struct ml_topology *t, size_t ret[ML_MAX_NODES]);
/* Pure: the flows of cell pairs-K on t (the members and each flow's ends; nothing run). */
void ml_pass_flows_plan(const struct ml_topology *t, unsigned k, struct ml_pass_flows *ret);

/* Pure: adds flow b's figures into a, as a pairs pass's are its flows' sums: bytes received and
 * sent, rates, retransmits (unknown in either: unknown), the intervals index by index, the
 * longest duration. What the kernel saw (RTT, MSS, congestion control) stays a's. */
void ml_iperf_result_add(struct ml_iperf_result *a, const struct ml_iperf_result *b);

/* Pure: each flow's receiver's NIC received (rx_bytes, the guest's side as libvirt reports a
 * tap, from the guests' counters a to b) at least ML_SIDES_SERVER_SHARE of that flow's payload
 * (payload[i]): the flows went where they were sent. Sets received[i] (f->n of them) to what
 * flow i's receiver received, the figure the pass records; appends to why each flow that fell
 * short, naming its nodes (of t); true when none did. */
bool ml_pass_flows_judge(const struct ml_topology *t, const struct ml_pass_flows *f,
                         const double *payload, const struct ml_nic_stats *a,
                         const struct ml_nic_stats *b, double *received, GString *why);

/* A hub whose busy CPU seconds over a pairs pass reach this share of the transfer's seconds is
 * saturated: its one vCPU can carry no more. */
#define ML_PAIRS_HUB_SATURATED_PERCENT 90.0

/* Starts iperf3's server on node, where its daemons run (inside its NAT's namespace, the
 * pidfile says so), unless one runs already; what it printed, or NULL with err. */
char *ml_pass_iperf_server(struct ml_lab *lab, size_t node, GError **err);

/* Where a pass runs. */
struct ml_pass_path {
    struct ml_lab *lab;
    const struct ml_path_ops *ops;
    const char *target; /* the address the client sends to */
    virDomainPtr client, hub;
    const char *client_tap, *hub_tap;
    const char *client_ns; /* what the client's commands are prefixed with (ml_lab_netns_prefix) */
    double idle_hub_bytes_per_s; /* the hub's idle rate measured just before (the baseline) */
    /* Every guest's tap's idle rate, measured with the hub's (lab->plan->guests' order); <0:
     * unknown, that guest's tap is then not judged. */
    double idle_bytes_per_s[ML_MAX_NODES];
    double ping_interval_s; /* the loaded ping's interval */
    /* Each guest's busy CPU seconds per second while idle (the same pings running), measured
     * with the hub's baseline; subtracted so that CPU per GB is what the payload cost. <0:
     * unknown. */
    double idle_cpu_s_per_s[ML_MAX_NODES];
    /* What one reading of each guest's CPU costs it, s (ml_guest_cpu_idle): a pass's window
     * holds one, subtracted once. */
    double idle_cpu_read_cost_s[ML_MAX_NODES];
    /* What one view of the path (ml_pass_view_once) costs each guest, s: the median of three
     * read after the idle window; <0: unknown. A pass's views through its transfer are the proof
     * that it took its path, not the dataplane's work: their CPU is charged at this cost, once a
     * view (cpu.GUEST.proof_s), and kept out of its CPU above idle. */
    double idle_view_cost_s[ML_MAX_NODES];
    /* How far that price may be off by the ticks' counting (ml_guest_cpu_view_cost): a pass's
     * shortfall within its views' share of it is none. */
    double idle_view_noise_s[ML_MAX_NODES];
    /* The idle window those rates were measured over, s (its own tick noise widens what a
     * pass may fall short of them by: ml_guest_cpu_above_idle); 0: unknown. */
    double idle_cpu_window_s;
    /* The same for each daemon of the path's dataplane (guestcpu.h's order); <0: unknown. */
    double idle_daemon_s_per_s[ML_MAX_NODES][ML_DAEMONS_MAX];
    /* The previous pass's end reading of the guests' CPU, which this pass starts from when it
     * is recent enough, and where this pass leaves its own; NULL: every pass reads twice. */
    struct ml_guest_cpu_reading *last_cpu;
    /* A pairs pass's flows (ml_pass_run sets it for a pairs cell); NULL: the one flow. */
    struct ml_pass_flows *flows;
};

/* What a pass is. */
struct ml_pass_spec {
    const struct ml_cell *cell;
    unsigned index; /* 1-based, within its cell */
    unsigned round; /* the round of the interleaving it ran in */
    unsigned seq;   /* its place among every pass of the run, from 1 */
    unsigned seconds;
    double offered_bits_per_second; /* 0: full speed */
};

/* The client's `ip -o route get TARGET`, squashed to single spaces: what the path checks and the
 * views read as the route. */
char *ml_pass_route(virDomainPtr client, const char *prefix, const char *target, GError **err);
/* One view of the path as a pass reads it through its transfer (the dataplane's own view and
 * the client's routes), its evidence dropped: what it costs the guests is the proof's price. */
void ml_pass_view_once(const struct ml_pass_path *pp);
/* The same for two targets in one agent call (the path's target and the server's underlay
 * address): *ret_target and *ret_underlay, each squashed; false with err when the call failed
 * or printed no route to target (*ret_underlay may then be set). */
bool ml_pass_routes(virDomainPtr client, const char *prefix, const char *target,
                    const char *underlay, char **ret_target, char **ret_underlay, GError **err);
/* Pure: a direct path's client reaches the server's underlay address `underlay` straight or
 * through the server itself; a route via any other gateway is a detour through another node.
 * True when route (`ip -o route get underlay`, as ml_pass_route returns it) shows no such
 * gateway; false with why appended, naming the node (of t, may be NULL) the gateway is. */
bool ml_pass_underlay_ok(const char *route, const char *underlay, const struct ml_topology *t,
                         GString *why);
/* The ping the idle baseline and every pass run, so that the idle rates subtracted from a pass
 * were taken under the same pings. deadline_s > 0 (a pass's): ping ends then (-w), whatever is
 * in flight, instead of waiting two of its slowest round trips for the last replies after its
 * transfer (seconds a pass under load); the replies so cut off are no loss (ml_ping_cut_off). */
char *ml_pass_ping_cmd(const char *prefix, double interval_s, unsigned count, unsigned deadline_s,
                       const char *target);

/* The iperf3 client command of a pass of cell lasting seconds: -O leaves out
 * ml_profile_omit_s(seconds) of warm-up within them; a UDP cell sends at its own rate (-u -b);
 * offered_bits_per_second > 0 (a TCP cell at the fixed rate) is split over the streams. */
char *ml_pass_iperf_cmd(const char *prefix, const char *target, const struct ml_cell *c,
                        unsigned seconds, double offered_bits_per_second);

/* Pure: adds to a pass's object what iperf3 said (ml_iperf_result says where each comes from):
 * payload_bytes and duration_s of the whole transfer, warm-up included (what the hub's counters
 * are divided by); omitted_s and omitted_payload_bytes, the warm-up; measured_s,
 * measured_payload_bytes, sent_bytes, bits_per_second and retransmits, iperf3's figures after
 * it; retransmits_per_second; tcp_congestion_sender/_receiver, tcp_mss, tcp_rtt_mean/max/min_ms,
 * path_mtu; for a UDP cell udp_offered_bits_per_second, udp_loss_percent, udp_jitter_ms,
 * udp_lost_packets, udp_packets. Unknown values are null. */
void ml_pass_iperf_json(struct json_object *o, const struct ml_cell *c,
                        const struct ml_iperf_result *r);

/* The rtt object of ping's output: transmitted, received, loss_percent, p50/p90/p99_ms with
 * every lost ping counted as +inf (where that lands on a lost ping, the value is the largest
 * reply and pNN_at_least is true: the true figure is at least that), max_ms of the replies. */
struct json_object *ml_pass_rtt_json(const char *ping_text);

/* The latency probe's own packets on the hub during a pass: a relayed ping and its reply each
 * cross the hub's NIC in and out once. Counted from the pings sent (a lost one may have been
 * dropped before the hub: an upper bound) and the replies, each of frame_bytes on the hub's wire
 * (ml_physics_frame_bytes); all 0 for a path that does not cross the hub (e NULL). */
struct ml_probe_bytes {
    long long frame_bytes, rx_packets, rx_bytes; /* rx and tx each carry rx_bytes */
};
struct ml_probe_bytes ml_pass_probe_bytes(const struct ml_encap *e, long long transmitted,
                                          long long received);

/* Pure: hub bytes per payload byte of a pass: raw (the NIC's in + out), in and out without the
 * probe's bytes (probe_rx each way), net = in + out. NAN for no payload. */
struct ml_hub_factors {
    double raw, net, in, out;
};
struct ml_hub_factors ml_pass_hub_factors(long long rx, long long tx, long long probe_rx,
                                          long long payload);

/* A fixed-rate pass that carried less than this share of its offered rate did not run at the
 * rate the paths were to be compared at: marked, and counted in its cell. */
#define ML_PASS_CARRIED_MIN_PERCENT 95.0
/* Pure: what a pass carried as a share of its offered rate, in %; NAN at full speed. */
double ml_pass_carried_percent(double carried_bps, double offered_bps);

/* Runs the pass and returns its object (results.json's passes[]), status "ok" or "failed" with
 * the reason and the seconds. NULL with err when a step could not run (the guest stopped
 * answering, iperf3 failed, Ctrl-C). */
struct json_object *ml_pass_run(const struct ml_pass_path *pp, const struct ml_pass_spec *spec,
                                GError **err);

/* One second of a pass, read from the host. Its payload is the client's NIC bytes of that second
 * scaled by the pass's payload over the client's NIC bytes: the hub and the client are read in
 * the same instant, so the ratio of a second needs no clock of the guest's. iperf3's own
 * interval of that number is kept beside it (it starts when iperf3 does, a moment later). ok: 1
 * judged and inside its band, 0 one of the seconds that put a window outside it, -1 not judged
 * (a relayed pass's start and end: too little payload in it to judge a ratio). */
struct ml_second {
    double from_s, to_s; /* the two samples' instants from the transfer's start; NAN: unknown */
    double t_s, payload_bytes, iperf_bytes, client_bytes, hub_bytes, hub_packets;
    int ok;
    /* Every guest's tap of that second, in + out (lab->plan->guests' order); NAN: not read
     * (a recorded series without them), not judged. server_bytes repeats the server's. */
    double server_bytes;
    double guest_bytes[ML_MAX_NODES];
    /* What the hub's NIC received that second (its intake; hub_bytes less it is what it sent);
     * hub_rx_known false: not read (a recorded series), the window then judges in + out. */
    double hub_rx_bytes;
    bool hub_rx_known;
    /* The hub's door: its tap's queue toward it, which the kernel counts in hub_rx_bytes only
     * when QEMU reads a frame from it, so a hub whose vCPU falls behind takes in late what
     * reached it (up to its queue's frames), and the host drops what no longer fits.
     * hub_dropped: frames dropped there that second, hub_dropped_bytes at the second's mean
     * intake frame; door_bytes: what every other guest's tap sent that second, the most that
     * can have reached the door (door_known false: not read, a recorded series);
     * door_queue_bytes: ml_band_judge's estimate of the queue at the second's end (NAN: none). */
    double hub_dropped, hub_dropped_bytes, door_bytes, door_queue_bytes;
    bool door_known;
    /* The ends' own taps that second (ml_pass_expect.ends_known): the bytes the sender's sent
     * and the frames the receiver's sent; NAN: not read (both ways at once, a recorded series
     * without them). A relayed window prices its own ACKs and tail from them (ml_band_judge). */
    double sender_tx_bytes, receiver_tx_packets;
};

/* Who each guest of lab is in a pass measured between its measure.client and measure.server,
 * with each guest's tap's idle rate (idle_bytes_per_s[i], <0 unknown). A guest on the client's,
 * the server's or the hub's tap (the same tap read twice) is not another side; a server on the
 * client's or the hub's tap is not judged as the server (server = SIZE_MAX). */
struct ml_sides;
void ml_pass_sides(const struct ml_lab *lab, const double *idle_bytes_per_s, struct ml_sides *ret);

/* The server's tap must carry, over each window, at least this share of the window's payload
 * above its idle rate (its bytes scaled as the client's are): the payload reached its NIC. */
#define ML_SIDES_SERVER_SHARE 0.75
/* Any guest other than the client, the server and the hub may move its idle rate plus the
 * direct band's slack over each window (ML_BAND_DIRECT_SLACK_BYTES a second and
 * ML_BAND_DIRECT_SLACK_SHARE of the payload): more is the payload passing through it. */

/* Who each guest of a pass is, for ml_sides_judge. */
struct ml_sides {
    size_t n_guests;            /* 0: no guest's tap read, nothing judged */
    size_t client, server, hub; /* server SIZE_MAX: not judged */
    const char *name[ML_MAX_NODES];
    double idle_bytes_per_s[ML_MAX_NODES]; /* <0: unknown, that guest not judged */
    bool other[ML_MAX_NODES]; /* neither the client, the server nor the hub (nor on their tap) */
    /* What reaches the hub's door is what these send: every tap but the hub's, each once;
     * door_known false when the client is on the hub's tap (its frames never cross it). */
    bool door[ML_MAX_NODES];
    bool door_known;
};

/* A direct path's hub may move its idle rate plus this much a second, plus this share of the
 * payload: the bridge's chatter, not the payload. */
#define ML_BAND_DIRECT_SLACK_BYTES 16384.0
#define ML_BAND_DIRECT_SLACK_SHARE 0.001
/* The seconds judged together: a window's hub bytes against its payload. */
#define ML_BAND_WINDOW_S 3

/* What a pass's hub may carry, as numbers (ml_pass_band). A relayed window's hub bytes above
 * idle per payload byte must lie between floor less the probe's share and ceiling plus
 * not_payload plus the probe's share; a direct window's must stay within the slack. The band is
 * the model's whole range, not a tolerance around expected: expected counts the pass's ACKs
 * from the hub's packets, which a loop through the hub inflates as much as its bytes. */
/* Which of a relaying hub's bytes a window judges, counted twice: the leg its payload is
 * measured on. A pass's payload per second is read at the client's NIC, so a forward pass's is
 * upstream of the hub (its intake, rx) and a reverse pass's downstream (what it sends, tx); a
 * queue inside the hub then moves neither. Both ways at once (bidir, several flows): in + out. */
enum ml_band_leg { ML_LEG_BOTH, ML_LEG_IN, ML_LEG_OUT };

struct ml_band {
    enum ml_hub_role role;    /* ML_HUB_QUIET: direct; otherwise relayed */
    enum ml_band_leg leg;     /* relayed: the hub's bytes judged (ML_LEG_BOTH where unknown) */
    double idle_bytes_per_s;  /* the hub's idle rate, taken under the same pings */
    double probe_bytes_per_s; /* the loaded probe's frames on the hub, in and out: inside the
                               * idle rate, but a ping lost or late under load moves them by
                               * up to this much either way */
    /* relayed only, hub bytes per payload byte: */
    double expected;    /* the frame model at the pass's own ACKs (the report's physics) */
    double floor;       /* ml_physics_bounds: full segments, no ACK */
    double ceiling;     /* ml_physics_bounds: an ACK per segment */
    double not_payload; /* what crossed the hub and is no payload: the retransmitted segments
                         * and the bytes sent and never received, as full data frames in
                         * and out, over the pass's payload */
    /* relayed, the intake judged (ML_LEG_IN, ML_LEG_BOTH): the bytes the hub's door holds
     * (its tap's queue's frames at the largest frame); 0: unknown, no queue counted. */
    double door_bytes;
    /* relayed, the ends' taps known and the frames exact (not DERP's average): a window's own
     * frames, priced as the pass's model prices the pass (ml_physics_expected) from the seconds'
     * sender_tx_bytes and receiver_tx_packets: its data segments from its payload, its ACKs from
     * the receiver's frames, and its resent and never received segments from what the sender's
     * tap carried beyond them, at most tail_max_packets (the pass's R + T). The window's top is
     * the higher of that and ceiling + not_payload, the probe's share above either. */
    bool ends_model;
    double mss_bytes, data_frame_bytes, ack_frame_bytes;
    double probe_frame_bytes; /* a ping or its reply on one end's tap */
    double probe_per_s;       /* the pings a second (each end's tap carries one frame of each) */
    double tail_max_packets;
};

/* A pass's inputs to its band known before it runs. */
struct ml_pass_expect {
    enum ml_hub_role role;
    struct ml_sides sides;        /* n_guests 0: only the hub judged */
    const struct ml_encap *encap; /* the path's frames (ml_path_ops.encap); NULL: direct */
    double idle_bytes_per_s;
    double ping_interval_s; /* the loaded probe's; 0: none */
    enum ml_band_leg leg;   /* the hub's leg a relayed window is judged on */
    bool tunnel_judged;     /* judge the views' tunnel counters (ml_tunnel_judge): one flow */
    /* The hub's tap's queue (ml_virt_tap_queue): frames and the largest frame; 0: unknown. */
    unsigned door_frames, door_frame_bytes;
    /* The guests (indices into the samples' guest[]) that send the payload and receive it on
     * taps of their own, not the hub's (ml_pass_wire); ends_known false: neither (both ways at
     * once, the pairs, UDP, a guest on the hub's tap). */
    bool ends_known;
    size_t sender, receiver;
};

/* What the wires carried over a pass, the band's inputs beside iperf3's: the packets the hub
 * received, and the sender's bytes and the receiver's frames out on their own taps
 * (ml_physics_counts; 0 where not known). */
struct ml_pass_wire {
    double hub_rx_packets;
    double sender_tx_bytes;
    double receiver_tx_packets;
};

/* Pure: the band of a pass from x and what it carried: iperf3's payload, bytes sent and
 * retransmits, and the wires over seconds (for the pass's own ACKs and tail, as the physics
 * table counts them; the tail that is no payload only as far as the sender's tap carried it).
 * False, with why, for a relayed path without a frame model to judge it by. */
bool ml_pass_band(const struct ml_pass_expect *x, const struct ml_iperf_result *r,
                  const struct ml_pass_wire *w, double seconds, struct ml_band *ret, GString *why);

/* Pure: judges a pass's seconds against band b, ML_BAND_WINDOW_S at a time, and appends to why
 * what the windows outside it showed. A relayed pass's first and last second (with more than
 * two) and the seconds before or after its transfer with under a quarter of the median payload
 * are not judged. A window outside its band fails only when it stays outside with the second
 * before it or the second after it added: the hub's counters lagging the client's move bytes
 * into the next second, never further, and a window that takes that second in sums them
 * whole; a bypass or a detour stays outside however it is paired. Its seconds that are outside
 * on their own (or the window furthest out, when none is) are marked failed and named with
 * their counters.
 *
 * A relayed window judged on the hub's intake (b->leg ML_LEG_IN or ML_LEG_BOTH) counts what
 * reached the hub's door (ml_second) and is not in its counter yet: the frames dropped there
 * and its queue at the window's end less its queue at the start, the queue estimated second by
 * second from door_bytes (into door_queue_bytes) and kept between empty and b->door_bytes. Over
 * the whole pass what the other guests sent less the intake and the drops must be under
 * ML_DOOR_LEDGER_SLACK_BYTES a second and ML_DOOR_LEDGER_SLACK_SHARE of the payload (pass.c),
 * whether the queue's size is known or not: more went around the hub, and its seconds are named
 * and marked failed. True when no window is
 * outside and the ledger closes. */
bool ml_band_judge(const struct ml_band *b, struct ml_second *s, size_t n, GString *why);

/* Pure: judges the other sides of a pass's seconds, in the windows and over the span
 * ml_band_judge judges (b's), with the same leave for a lag of one second: the server's tap
 * carried the payload (ML_SIDES_SERVER_SHARE of it, scaled by scale, the pass's payload over
 * its client NIC bytes; ml_pass_judge divides it by a UDP pass's delivered share, so that its
 * lost datagrams are not asked of the server), and no other guest carried anything beyond its
 * slack. A second whose
 * guest_bytes are NAN is not judged for that guest. Marks the failed seconds (ok 0), appends to
 * why the seconds, the guest and its counters; true when nothing failed. */
bool ml_sides_judge(const struct ml_band *b, const struct ml_sides *sd, double scale,
                    struct ml_second *s, size_t n, GString *why);

/* ---- the verdict of a pass, from what it collected alone ---- */

/* Every guest's NIC counters, read from the host in the same instant, t seconds after the
 * transfer started (the first at 0, then one a second); hub and client repeat theirs. */
struct ml_pass_sample {
    double t;
    struct ml_nic_stats hub, client;
    struct ml_nic_stats guest[ML_MAX_NODES]; /* every guest's tap, hub and client included */
};

/* How often the dataplane's view is read through a transfer, in seconds, from ML_VIEW_FIRST_S
 * after its start; none starts in its last ML_VIEW_LAST_S (the end view follows). */
#define ML_VIEW_EVERY_S 2.0
#define ML_VIEW_LAST_S 1.5
/* The start view is read this long after iperf3 started. */
#define ML_VIEW_FIRST_S 1.0

/* The dataplane's view of the path at one moment of a pass ("start", "middle", "end"): whether
 * the path's check showed the path, and what was read. */
struct ml_pass_view {
    const char *when;
    bool ok;
    char *evidence;
    /* Seconds from the transfer's start when the view was asked for and when it had answered.
     * NAN: not known. */
    double t_s, t_done_s;
    /* The dataplane's own per-peer counters in it (ml_path_ops.tunnel_counts); 0: none. They
     * were read inside the dataplane's agent call, from tunnel_from_s to tunnel_to_s, when the
     * counting guest's uptime was tunnel_at (NAN: not known). */
    size_t n_tunnel;
    struct ml_tunnel_count tunnel[ML_TUNNEL_COUNTS_MAX];
    double tunnel_from_s, tunnel_to_s, tunnel_at;
};

/* Between two views, each end's counter must have grown by at least this share of the payload
 * the client's NIC moved between them: the payload went through the dataplane's own tunnel.
 * (Its packets' bytes are above the payload's: headers, padding.) */
#define ML_TUNNEL_SHARE 0.75
/* An excluded counter (ml_tunnel_count.excluded: a way the path must not take) may grow over a
 * window by what a direct path's hub may move above idle (ML_BAND_DIRECT_SLACK_BYTES a second
 * and ML_BAND_DIRECT_SLACK_SHARE of the payload): the client's count of the other way is held
 * to the same slack as the hub's tap, so the two judge a lapse alike. */
#define ML_TUNNEL_EXCLUDED_SHARE ML_BAND_DIRECT_SLACK_SHARE
#define ML_TUNNEL_EXCLUDED_BYTES_PER_S ML_BAND_DIRECT_SLACK_BYTES
/* A window between two readings shorter than this is not judged: a second's bytes are not
 * spread evenly through it, and a window is priced by the share of each second it covers. */
#define ML_TUNNEL_WINDOW_S 2.0

/* What ml_tunnel_judge judged: the pairs of views with seconds between them, those that fell
 * short, and the least any counter grew per payload byte of its window (NAN: none judged). */
struct ml_tunnel_verdict {
    size_t windows, failed;
    double min_share;
    double max_excluded_share; /* the most an excluded counter grew per payload byte (NAN: none) */
    bool excluded_carried;     /* an excluded counter grew past what it is allowed in a window */
};

/* Pure: judges the dataplane's own counters in views (n_views of them, in time order) against
 * the seconds s (n of them, each with the host instants it spans, from_s to to_s).
 *
 * When each reading was made: inside its agent call, [tunnel_from_s, tunnel_to_s], a second or
 * more under TCG. Where the views carry the guest's uptime at the reading (tunnel_at), the
 * guest's clock less the host's is the same in every one, so it lies in the intersection of
 * every view's [from - at, to - at], and each reading is placed within that intersection's
 * width (a tenth of a second where one view answered fast); otherwise its call's span is used.
 *
 * Every pair of views (not only neighbours) is a window: from the first reading's latest
 * instant to the second's earliest, at least ML_TUNNEL_WINDOW_S long, over seconds the band
 * judged (a window touching a second with ok == -1, a relay's edge, judges only the counters
 * kept at the client, ml_tunnel_count.at_client). Its payload
 * is each second's payload times the share of that second inside it. Every end's counter must
 * grow over it by ML_TUNNEL_SHARE of that: the readings bracket the window, so its bytes
 * crossed the client's NIC between them, whatever queues delay. An excluded counter must grow
 * by no more than ML_TUNNEL_EXCLUDED_SHARE of it plus ML_TUNNEL_EXCLUDED_BYTES_PER_S a second:
 * the payload did not go that way as well (tailscaled sending by DERP beside a direct path whose
 * trust lapsed). A pair where an end's count fell (the dataplane replaced its peer or SA) or is
 * missing is not judged. Marks the seconds of
 * windows that fell short (ok 0), appends to why how many did and the worst, with its
 * counters; true when none did. */
bool ml_tunnel_judge(const struct ml_pass_view *views, size_t n_views, struct ml_second *s,
                     size_t n, struct ml_tunnel_verdict *ret, GString *why);

struct ml_pass_verdict {
    struct ml_second *sec; /* the pass's seconds, each judged (ok) */
    size_t n;
    struct ml_band band;             /* what they were judged against */
    struct ml_sides sides;           /* who each guest's tap was */
    struct ml_tunnel_verdict tunnel; /* the dataplane's own counters, where judged */
    bool passed;
    /* The pass's own evidence shows the path was not in force through it: a view that did not
     * show it, or a way the path excludes carrying payload. The pass is no figure of the path,
     * nor of the path it went by; the run settles the path and runs it again (measure.c). */
    bool path_lost;
    GString *reason; /* what failed it, as one sentence; empty when it passed */
};

/* Pure: judges a pass expected as x from its samples, iperf3's result and the dataplane's
 * views: builds the per-second series (struct ml_second, payload from the client's NIC scaled by
 * r's payload), its band (ml_pass_band), judges the seconds (ml_band_judge) and each view; the
 * pass fails when a window is outside the band or a view did not show the path. Free with
 * ml_pass_verdict_clear. */
void ml_pass_judge(const struct ml_pass_expect *x, const struct ml_pass_sample *samples,
                   size_t n_samples, const struct ml_iperf_result *r,
                   const struct ml_pass_view *views, size_t n_views, struct ml_pass_verdict *ret);
void ml_pass_verdict_clear(struct ml_pass_verdict *v);
