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
};

/* Fills ret from iperf3's client JSON. iperf3 -J exits 0 even when it could not connect and
 * reports the failure in an "error" key instead, so a caller must not trust the exit status
 * alone: this fails (ML_ERR_MEASURE) with iperf3's own message then, and when a field is missing.
 * ret is untouched on failure. */
bool ml_iperf_parse(const char *json_text, struct ml_iperf_result *ret, GError **err);
