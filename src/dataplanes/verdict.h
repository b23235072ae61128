/* The verdict on one check of a path: what the check recorded (the client's route, the probe,
 * the hub's NIC bytes, the dataplane's own view) and the one function that judges it. Pure:
 * tests feed it recorded evidence without guests. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "dataplanes/dataplane.h"

/* The fields of one `ip -o route get ADDR` line that say where the route
 * leaves; empty when the line has none (no gateway: via is ""). */
struct ml_route {
    char dev[16]; /* the interface, IFNAMSIZ */
    char via[46]; /* the gateway, INET6_ADDRSTRLEN */
    char src[46]; /* the preferred source address */
    bool parsed;  /* the line was read; false leaves the rest empty */
};
/* Pure: reads one line of `ip -o route get ADDR` (as printed, or squashed to
 * single spaces: tabs, "\" and runs of spaces separate words alike). False,
 * ret zeroed, for anything else: an error message, an unknown word, a value
 * that does not fit. */
bool ml_route_parse(const char *text, struct ml_route *ret);

#define ML_EVIDENCE_OWN_MAX 6

/* What a check recorded, as data: the probe's burst of pings from the client
 * to the path's target while the hub's NIC counters were read from the host,
 * and the dataplane's own view in the raw text its tools printed. verify reads
 * nothing else, so it can be tested on recorded evidence without guests. */
struct ml_evidence {
    long long hub_bytes;      /* hub NIC bytes in + out during the burst */
    long long hub_idle_bytes; /* the same over as long just before the burst; 0: unknown */
    long long probe_bytes;    /* IP bytes of the pings answered and their replies: received x 2
                               * x one packet's bytes (ICMP payload + headers) */
    unsigned transmitted, received;
    double probe_loss;   /* the chance the nodes' WAN profiles lose a probe's round trip on this
                          * path (ml_probe_loss); 0: they lose none, and every probe must come
                          * back */
    double probe_max_ms; /* the slowest reply's round trip; -1 none, 0 not measured */
    char *route;         /* the client's `ip -o route get TARGET`, squashed */
    struct ml_route rt;  /* route's fields; ml_path_verdict reads route when !rt.parsed */
    char *own[ML_EVIDENCE_OWN_MAX]; /* the dataplane's observations, in its own order */
    char *own_error;                /* why they could not be read, or NULL */
    /* ml_now() around the agent call that read the dataplane's counters, where it reads them
     * in a call of its own (tailscale's metrics, before its slower status and ping); 0: they
     * were read somewhere in the whole observe, which the pass times itself. */
    double counted_from, counted_to;
    /* The public IPv4 address export --verify maps onto each node's lab address
     * (ml_lab.mapped_from), 0.0.0.0 for none: a peer's endpoint may read either. */
    struct in_addr mapped_from[ML_MAX_NODES];
};
void ml_evidence_clear(struct ml_evidence *e);

/* For a path with hub role ML_HUB_FOUND: the role its dataplane's view in ev->own[] shows
 * (ML_HUB_FOUND when it shows no tunnel); other paths: their own. */
enum ml_hub_role ml_path_role(const struct ml_path_ops *ops, const struct ml_topology *topo,
                              const struct ml_evidence *ev);

/* Pure: hub bytes per probe byte for a probe of inner-byte IP packets relayed through encap e:
 * each ping and its reply cross the hub's NIC in and out, each a frame of
 * ml_encap_frame_bytes, against the two IP packets the probe counts: 2 x frame / inner. 0 for
 * e NULL or inner 0. */
double ml_probe_ratio(const struct ml_encap *e, unsigned inner);
/* How far a relaying hub's bytes for the probe may be from that ratio: the probe's frames are
 * of one fixed size, so the ratio is exact. */
#define ML_PROBE_TOLERANCE_PERCENT 5.0
/* What the control planes' chatter may add to a hub's bytes for the probe beyond its idle rate
 * taken just before (as long as the probe): it comes in bursts that window need not catch. In
 * the seed lab with every path, tailscale-direct's check failed with the path direct by
 * tailscaled's own view and 2,895 bytes on the hub above idle for 41,120 probe bytes (Headscale
 * pushing the clients new endpoints after a policy change), over the 5 % (2,056) a bystander was
 * allowed. A relay moves at least twice the probe's bytes (78 kB for 20 answered pings), so
 * this much more cannot pass one as direct. The other way, a burst the idle window caught and
 * the probe's did not: a relay's floor is held against all the hub moved, never less than its
 * frames (tinc-relay's check once failed with the hub at 90,025 bytes for the 89,360 its frames
 * give, after an idle window of 5,491 bytes left 84,534 against a floor of 84,892).
 *
 * 4,096 bytes held until a tailscaled peer relay ran on the hub. A client that may use one runs
 * relay path discovery whenever its direct address is no longer trusted (tailscale
 * wgengine/magicsock/endpoint.go wantUDPRelayPathDiscoveryLocked at v1.102.5), and another
 * dataplane's restart is such a moment (a new tinc0 is a major link change: tailscaled rebinds and
 * forgets the address it trusted, wgengine/userspace.go linkChange). The discovery binds with the
 * hub's relay server at every address the server offers, the overlays' included
 * (net/udprelay/server.go addrDiscoveryLoop reads every local address; no knob limits it): on the
 * hub's tap, 11,428 bytes in one second, 53 s after a tinc restart (Geneve-wrapped disco on UDP
 * 40000 from both clients; within 200 ms one packet of their size inside each of WireGuard,
 * wireguard-go, nebula, tinc, IPsec and OpenVPN to the hub, taken for the same handshakes to the
 * relay's overlay addresses; and Headscale's updates on TCP 443). In CI that failed plain's and
 * tailscale-direct's checks with 11,150 and 10,475 bytes above idle (9,094 and 8,419 over the
 * 5 %), 28 and 50 s after a tinc restart. One discovery's bytes with 40 % to spare, 16,384, still
 * leave a direct check's limit (18,440 for 20 pings) under a quarter of what the least relay
 * moves for the same probe. */
#define ML_PROBE_CHATTER_BYTES 16384

/* Pure: the chance a ping's round trip is lost to the WAN profiles' loss on a path from a to b,
 * through relay when not NULL: the request leaves a (and the relay), the reply leaves b (and
 * the relay), each dropped with its node's loss_percent: 1 - (1-a)(1-b)(1-relay)^2. */
double ml_probe_loss(const struct ml_wan_profile *a, const struct ml_wan_profile *b,
                     const struct ml_wan_profile *relay);
/* Pure: how many of n probe pings may go unanswered to a loss of chance q each and the path
 * still pass: the fewest k that more than k are lost with a chance under 1 in 1,000
 * (binomial), at most n - 1 (one must come back). 0 for q 0: then every ping must. */
unsigned ml_probe_misses_allowed(unsigned n, double q);

/* Pure: the verdict on one check. The route parsed (unless the caller did),
 * the path's own verify, then what every path shares, written once: every
 * probe ping answered (but for the misses the WAN profiles' loss allows, ev->probe_loss), and
 * the hub's bytes above its idle bytes within its role's band: under 5% of the probe's bytes for
 * a bystander, the path's exact ratio within ML_PROBE_TOLERANCE_PERCENT for a relay, plus at most
 * three of the path's frames for each ping lost (a request or reply lost on the hub's way out
 * crossed its NIC in). A bystander and a relay's ceiling allow ML_PROBE_CHATTER_BYTES more; a
 * relay's floor is held against every byte the hub moved, idle included. */
bool ml_path_verdict(const struct ml_path_ops *ops, const struct ml_topology *topo,
                     const struct ml_evidence *ev, GString *sentence);

/* Pure: true when hostport ("192.0.2.12:41641", or the address alone) is an address on the lab
 * bridge other than the hub's, where a path a dataplane found for itself must reach its peer
 * directly: the server's own, or its NAT's mapping. An overlay address (another dataplane's
 * tunnel, which that dataplane's relay may carry) or one off the lab is no direct path of
 * this lab; appends to sentence that it is not. */
bool ml_peer_on_underlay(const struct ml_topology *t, const char *hostport, GString *sentence);

/* Pure: true when the parsed route leaves by dev with no gateway; appends to
 * sentence what it should have been when it does not. */
bool ml_route_enters(const struct ml_route *rt, const char *dev, GString *sentence);
