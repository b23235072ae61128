/* Reads what `iperf3 -J -c ...` printed. Nothing here runs iperf3. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* The per-second intervals kept; a pass is far shorter. */
#define ML_IPERF_INTERVALS_MAX 600

struct ml_iperf_result {
    double seconds;                  /* end.sum_received.seconds */
    uint64_t bytes_received;         /* end.sum_received.bytes: the payload that arrived */
    double bits_per_second_received; /* end.sum_received.bits_per_second */
    uint64_t bytes_sent;             /* end.sum_sent.bytes */
    int64_t retransmits;             /* end.sum_sent.retransmits; -1 if absent (UDP, non-Linux) */
    /* --bidir: the other direction's end.sum_received_bidir_reverse (0 without --bidir), whose
     * bytes and rate are added into payload_bytes and payload_bits_per_second. */
    uint64_t bytes_received_reverse;
    uint64_t payload_bytes; /* every byte that arrived, both directions under --bidir */
    double payload_bits_per_second;
    /* intervals[].sum (+ sum_bidir_reverse) in order: the bytes of each interval (iperf3's
     * own, one second apart by default) and its length in seconds; none when the document has
     * no intervals. */
    unsigned n_intervals;
    double interval_bytes[ML_IPERF_INTERVALS_MAX];
    double interval_s[ML_IPERF_INTERVALS_MAX];
    bool interval_omitted[ML_IPERF_INTERVALS_MAX]; /* intervals[].sum.omitted: warm-up (-O) */

    /* The warm-up iperf3 -O left out. iperf 3.12 still prints the omitted seconds as intervals
     * marked "omitted": true, but every end.* figure above (bytes, seconds, bits_per_second,
     * retransmits) starts after them: iperf_reset_stats() zeroes bytes_received and sets
     * bytes_sent_omit when the omit timer fires (src/iperf_api.c of 3.12). omit_s is what was
     * asked (start.test_start.omit, 0 if absent); omitted_s adds up the omitted intervals'
     * seconds, omitted_bytes their bytes as the receivers counted them (both directions under
     * --bidir): the client's received intervals, and the server's from server_output_json
     * (--get-server-output), without which a warm-up the client sent fails to parse. */
    unsigned omit_s;
    double omitted_s;
    uint64_t omitted_bytes;
    /* The warm-up of the direction end.sum_sent and end.sum_received count (the forward one, or
     * the reverse under -R) as its sender and its receiver counted it, so that what was sent and
     * never received is known over the whole transfer. The sender's count is unknown
     * (omitted_sent_unknown) where only the receiver's document came back: -R without
     * --get-server-output. */
    uint64_t omitted_sent_bytes, omitted_received_bytes;
    bool omitted_sent_unknown;
    /* --bidir, the other direction (the server's sending): end.sum_sent_bidir_reverse's bytes
     * and its warm-up as the server sent it and the client received it; the sent counts unknown
     * (reverse_sent_unknown) without the server's document. 0 without --bidir. */
    uint64_t bytes_sent_reverse, omitted_sent_reverse_bytes, omitted_received_reverse_bytes;
    bool reverse_sent_unknown;
    /* start.test_start's blksize (the bytes of each write) and num_streams; 0 when absent. */
    uint64_t blksize;
    unsigned streams;

    /* What the kernel used and saw; each is unknown (empty, -1, NAN) where the document does not
     * say. The congestion control names (end.sender_tcp_congestion, receiver_tcp_congestion).
     * The MSS: start.tcp_mss when -M set it, else start.tcp_mss_default (the control
     * connection's TCP_MAXSEG). */
    char sender_congestion[32], receiver_congestion[32];
    int64_t tcp_mss;
    /* tcp_info's smoothed RTT of the client's sending sockets, in microseconds:
     * end.streams[].sender mean_rtt (averaged over the streams), max_rtt, min_rtt. Only a stream
     * whose "sender" flag is true carries its own socket's figures; under -R the client sends
     * nothing and 3.12 prints zeros there, read as unknown. iperf_reset_stats() does not reset
     * them: they cover the warm-up too. */
    double rtt_mean_us, rtt_max_us, rtt_min_us;
    /* tcp_info's path MTU (intervals[].streams[].pmtu, printed by 3.12 for a sending TCP
     * socket) in the last interval, the smallest over its streams; -1 when none carries it
     * (UDP, -R). */
    int64_t pmtu;

    /* UDP (start.test_start.protocol "UDP"): end.sum's loss and jitter as the receiver saw them
     * after the warm-up; NAN and -1 for TCP. */
    bool udp;
    double jitter_ms, lost_percent;
    int64_t lost_packets, packets;
};

/* The whole transfer, warm-up included: what the hub's counters, the client's NIC and the
 * guests' CPU, read around the whole transfer, are to be divided by. */
static inline uint64_t ml_iperf_transfer_bytes(const struct ml_iperf_result *r)
{
    return r->payload_bytes + r->omitted_bytes;
}
static inline double ml_iperf_transfer_s(const struct ml_iperf_result *r)
{
    return r->seconds + r->omitted_s;
}
/* What a sender sent and its receiver never counted, over the whole transfer where both counts
 * of the warm-up are known (else after it): the socket buffers' tail, which still crosses the
 * hub. end.sum_sent's direction, and under --bidir the other one too. A slow relay's eight
 * streams left 851136 of 2358720 bytes so; an rrul pass through wireguard-hub 726408 forward
 * and 2216160 back (tests/data/samples/README).
 *
 * A sender's count can come out below its receiver's, which no sender can do: writes of its
 * went uncounted. In a forward nebula-relay pass on a slow relay the client's figures ended at
 * 2.96 s and the server's at 3.37 s; 1072032 bytes were sent by the client's count, 1087008
 * arrived, and the hub's packets and bytes (data frames and ACKs solved from both) carried
 * 91456 bytes of segments more than arrived. Taken as no tail, the pass failed its band at
 * 2.62 hub bytes per payload byte against 2.56 (tests/data/samples/README). The sender
 * had then sent at most its count and the block (blksize) each stream was writing, and the
 * tail is priced as that: 116096 there. A count at or above the receiver's is taken as it
 * is. */
static inline double ml_iperf_sent_tail(double sent, double got, const struct ml_iperf_result *r)
{
    if (sent < got && r->blksize > 0)
        sent += (double)r->blksize * (r->streams ? r->streams : 1);
    return sent > got ? sent - got : 0;
}
static inline double ml_iperf_unreceived_bytes(const struct ml_iperf_result *r)
{
    double sent = (double)r->bytes_sent, got = (double)r->bytes_received;
    if (!r->omitted_sent_unknown) {
        sent += (double)r->omitted_sent_bytes;
        got += (double)r->omitted_received_bytes;
    }
    double back_sent = (double)r->bytes_sent_reverse, back_got = (double)r->bytes_received_reverse;
    if (!r->reverse_sent_unknown) {
        back_sent += (double)r->omitted_sent_reverse_bytes;
        back_got += (double)r->omitted_received_reverse_bytes;
    }
    return ml_iperf_sent_tail(sent, got, r) +
           (r->bytes_sent_reverse > 0 ? ml_iperf_sent_tail(back_sent, back_got, r) : 0);
}

/* Fills ret from iperf3's client JSON. iperf3 -J exits 0 even when it could not connect and
 * reports the failure in an "error" key instead, so a caller must not trust the exit status
 * alone: this fails (ML_ERR_MEASURE) with iperf3's own message then, and when one of the end
 * sums it needs is missing; every other field may be missing and is then unknown. ret is
 * untouched on failure. */
bool ml_iperf_parse(const char *json_text, struct ml_iperf_result *ret, GError **err);
