/* One pass: iperf3 on the path for a few seconds while meshlab watches it. Once a second the
 * hub's NIC counters are read from the host beside iperf3's own intervals, so each second has
 * its own hub bytes per payload byte; pings at 20 Hz measure the latency under load; the
 * dataplane's own view of the path is read at the start, the middle and the end; every
 * guest's CPU is read before and after, and the host's. A second outside the path's band, or a
 * view that does not show the path, fails the pass: it keeps its values as evidence, and no
 * figure includes it. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "dataplanes/dataplane.h"
#include "measure/guestcpu.h"
#include "measure/parse_iperf.h"
#include "virt/virt.h"
#include "virt/lab.h"

/* Where a pass runs. */
struct ml_pass_path {
    struct ml_lab *lab;
    const struct ml_path_ops *ops;
    const char *target; /* the address the client sends to */
    virDomainPtr client, hub;
    const char *client_tap, *hub_tap;
    const char *client_ns; /* what the client's commands are prefixed with (ml_lab_netns_prefix) */
    double idle_hub_bytes_per_s; /* the hub's idle rate measured just before (the baseline) */
    double ping_interval_s;      /* the loaded ping's interval */
    /* Each guest's busy CPU seconds per second while idle (the same pings running), measured
     * with the hub's baseline; subtracted so that CPU per GB is what the payload cost. <0:
     * unknown. */
    double idle_cpu_s_per_s[ML_MAX_NODES];
    /* The same for each daemon of the path's dataplane (guestcpu.h's order); <0: unknown. */
    double idle_daemon_s_per_s[ML_MAX_NODES][ML_DAEMONS_MAX];
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
/* The ping the idle baseline and every pass run, so that the idle rates subtracted from a pass
 * were taken under the same pings. */
char *ml_pass_ping_cmd(const char *prefix, double interval_s, unsigned count, const char *target);

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
 * inside the band, 0 outside, -1 not judged (too little payload in it to judge a ratio: the
 * start and the end of a transfer). */
struct ml_second {
    double t_s, payload_bytes, iperf_bytes, client_bytes, hub_bytes, hub_packets;
    int ok;
};

/* The bands, as numbers: a relayed second moves 1.8 to 4.0 hub bytes per payload byte; a
 * direct second moves no more than the idle rate plus ML_BAND_DIRECT_SLACK_BYTES plus
 * ML_BAND_DIRECT_SLACK_SHARE of its payload. Below 1.8 part of the payload went around the hub.
 * The upper bound is 4.0, not 3.0: nebula's relay with 8 streams under TCG really moves 3.4 to 3.6
 * (two nebula headers and tags per packet, one ACK per segment, segments of ~900 bytes), while a
 * loop or a second relay moves every byte through the hub twice, 4.4 and more. */
#define ML_BAND_RELAY_MIN 1.8
#define ML_BAND_RELAY_MAX 4.0
#define ML_BAND_DIRECT_SLACK_BYTES 16384.0
#define ML_BAND_DIRECT_SLACK_SHARE 0.001
/* How close to the pass's median second two adjacent seconds must be, together, for one of them
 * outside the band to count as the counters' lag rather than the path (ml_band_judge). */
#define ML_BAND_LAG_TOLERANCE 0.10

/* Pure: judges every second of a pass for a path whose hub has role, and appends to why what
 * the seconds outside the band showed. A relayed second is not judged when it is the first or the
 * last of the pass (with more than two) or its payload is under a quarter of the median; one
 * outside the band is inside after all when it and an adjacent second deviate from the pass's
 * median second in opposite directions and together sit within ML_BAND_LAG_TOLERANCE of it (the
 * hub's counters lagging the client's by part of a second). True when no second is outside. */
bool ml_band_judge(enum ml_hub_role role, double idle_bytes_per_s, struct ml_second *s, size_t n,
                   GString *why);

/* ---- the verdict of a pass, from what it collected alone ---- */

/* The hub's and the client's NIC counters, read from the host in the same instant, t seconds
 * after the transfer started (the first at 0, then one a second). */
struct ml_pass_sample {
    double t;
    struct ml_nic_stats hub, client;
};

/* The dataplane's view of the path at one moment of a pass ("start", "middle", "end"): whether
 * the path's check showed the path, and what was read. */
struct ml_pass_view {
    const char *when;
    bool ok;
    char *evidence;
};

struct ml_pass_verdict {
    struct ml_second *sec; /* the pass's seconds, each judged (ok) */
    size_t n;
    bool passed;
    GString *reason; /* what failed it, as one sentence; empty when it passed */
};

/* Pure: judges a pass whose hub has role from its samples, iperf3's result and the dataplane's
 * views: builds the per-second series (struct ml_second, payload from the client's NIC scaled by
 * r's payload), judges each second (ml_band_judge) and each view; the pass fails when a second
 * is outside the band or a view did not show the path. Free with ml_pass_verdict_clear. */
void ml_pass_judge(enum ml_hub_role role, double idle_bytes_per_s,
                   const struct ml_pass_sample *samples, size_t n_samples,
                   const struct ml_iperf_result *r, const struct ml_pass_view *views,
                   size_t n_views, struct ml_pass_verdict *ret);
void ml_pass_verdict_clear(struct ml_pass_verdict *v);
