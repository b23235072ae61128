/* The hub factor physics predicts for a relay path, beside the measured one: a
 * teacher can point at it, and a path that took a wrong turn stands out. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "dataplanes/dataplane.h"

/* What ping sends without -s: 56 data bytes, an 8-byte ICMP header and a 20-byte IP header. */
#define ML_PING_INNER_BYTES 84

/* What a transfer's counters say, the inputs of the model. */
struct ml_physics_counts {
    double payload_bytes;
    double hub_rx_packets;   /* every packet the hub received during the transfer */
    double probe_rx_packets; /* of those, the latency probe's (each ping and each reply) */
    double retransmits;      /* of those, data segments sent again (iperf3's count) */
    double unreceived_bytes; /* iperf3's bytes sent less those counted received, >= 0 */
    /* What the sending guest's tap carried out over the transfer, every frame of it; 0 when not
     * known (a sender on the hub's own tap, both ways at once, results of before it was kept).
     * The tail's segments that reached the hub were on this wire first. */
    double sender_tx_bytes;
    /* The frames the receiving guest's tap carried out over the transfer: its ACKs and its half
     * of the probe (a ping or a reply for each the hub counts twice); 0 when not known (as for
     * sender_tx_bytes). Where known, the ACKs are counted here and not from the hub's packets,
     * so that the model reads none of the counters it is checked against. */
    double receiver_tx_packets;
};

/* One TCP transfer through the hub: every data segment and every ACK crosses
 * the hub's NIC twice (in from one client, out to the other). */
struct ml_physics {
    const struct ml_encap *encap;
    unsigned inner_mtu_bytes;
    unsigned overhead_bytes;
    unsigned mss_bytes;        /* inner MTU - 20 IP - 20 TCP - 12 timestamps */
    unsigned data_frame_bytes; /* a full segment on the hub's wire, Ethernet included */
    unsigned ack_frame_bytes;  /* a 52-byte ACK, padded, wrapped, Ethernet included */
    double data_packets;       /* D = ceil(payload / mss) */
    double probe_packets;      /* the probe's packets the hub received, not ACKs */
    double retransmits;        /* data segments sent again, not ACKs */
    double tail_packets;       /* T: segments of the bytes sent, never counted received, and
                                * on the sender's wire (its tap's bytes beyond D + R frames) */
    double ack_packets;        /* A: the receiver's frames out less its half of the probe where
                                * its tap is known (acks_from_receiver), else the hub's packets
                                * received beyond D, the probe, R and T */
    bool acks_from_receiver;
    bool tail_from_sender;     /* T bounded by the sender's wire, not by the hub's packets */
    double ack_ratio;          /* D / A, data segments per ACK; 0 when A is 0 */
    double payload_bytes;
    double hub_bytes_per_payload_byte; /* 2 x ((D + R + T) x data + A x ack) / payload */
    double floor;                      /* 2 x D x data / payload: no ACK at all */
    double ceiling;                    /* 2 x D x (data + ack) / payload: an ACK per segment, as
                                        * ml_physics_bounds and the per-second judge */
    bool compared;                     /* ml_physics_compare ran */
    double measured;
    double differs_percent; /* (measured - expected) / expected x 100 */
    bool flag;              /* |differs_percent| > ML_PHYSICS_FLAG_PERCENT */
};

#define ML_PHYSICS_FLAG_PERCENT 5.0

/* Pure: an IP packet of inner bytes as the hub's NIC counts it through encap e:
 * padded, wrapped, with its Ethernet header. 0 for e NULL. (ml_encap_frame_bytes) */
unsigned ml_physics_frame_bytes(const struct ml_encap *e, unsigned inner);

/* Pure: the expected factor of a transfer through encap e from its counters. D is the payload
 * in MSS segments; the ACKs are the receiver's tap's frames out less its half of the probe, and
 * the tail T at most what the sender's tap carried beyond D and R, where those taps are known
 * and e's frames are exact; else the hub's packets received beyond D, the probe and R stand in
 * for both. False, *ret untouched, when there is nothing to expect: no encap (the path does not
 * cross the hub), no payload, or an MTU too small for TCP. */
bool ml_physics_expected(const struct ml_encap *e, const struct ml_physics_counts *n,
                         struct ml_physics *ret);
/* Pure: what the hub's NIC may carry per payload byte of a TCP transfer through encap e,
 * whatever its ACKs and however long: the floor is every segment full (MSS payload in a
 * data_frame, 2 x data_frame / MSS: in and out) and no ACK at all; the ceiling adds one ACK
 * frame per segment, about the most a receiver sends without loss (quickack, as TCG's slow
 * guests do: val17's OpenVPN and tinc relays measured 1.2 segments per ACK), 2 x (data_frame
 * + ack_frame) / MSS. A short segment costs a frame for less payload and lands above the
 * floor, never below it; above the ceiling is what is no payload (retransmits, bytes sent and
 * never received), a stream of short segments, or not this path. False, both untouched, for
 * no encap or an MTU too small for TCP. */
bool ml_physics_bounds(const struct ml_encap *e, double *ret_floor, double *ret_ceiling);
/* A UDP cell's floor: iperf3 3.12 sizes its datagrams to its control connection's MSS (the
 * TCP segment's payload, inner_mtu less 52), so each carries that payload in an inner packet
 * of MSS + 28 (IP, UDP) and no ACK comes back: 2 x frame(MSS + 28) / MSS, a little under the
 * TCP floor, whose full segment has 24 more header bytes. NAN without a frame model. */
double ml_physics_udp_floor(const struct ml_encap *e);
/* Pure: the underlay's bytes per payload byte that p's model expects where every frame at the
 * hub's NIC crosses between hosts (a lab over several, measure/hostlink.h): its hub factor plus
 * per_frame bytes (VXLAN's 50) on each of its frames, 2 x (D + R + T + A), in and out. */
double ml_physics_underlay(const struct ml_physics *p, unsigned per_frame);
/* Pure: hub bytes per payload byte that crossed a relaying hub and are no payload: the
 * retransmits (segments sent again) and the unreceived bytes (sent, never counted received: in
 * flight or queued when the transfer ended), each as full data frames in and out. 0 for no
 * encap or no payload. Where the sender's tap is known, ml_pass_band counts the tail as
 * ml_physics_expected does instead: only what that wire carried. */
double ml_physics_not_payload(const struct ml_encap *e, double retransmits, double unreceived,
                              double payload);
/* Sets measured, differs_percent and flag. */
void ml_physics_compare(struct ml_physics *p, double measured);
/* The results' `expected` object, `model` sentence included; measured, differs_percent
 * and flag null before ml_physics_compare. NULL (JSON null) for p NULL. */
struct json_object *ml_physics_json(const struct ml_physics *p);
