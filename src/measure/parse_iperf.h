/* Reads what `iperf3 -J -c ...` printed. Nothing here runs iperf3. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct ml_iperf_result {
    double seconds;                  /* end.sum_received.seconds */
    uint64_t bytes_received;         /* end.sum_received.bytes: the payload that arrived */
    double bits_per_second_received; /* end.sum_received.bits_per_second */
    uint64_t bytes_sent;             /* end.sum_sent.bytes */
    int64_t retransmits;             /* end.sum_sent.retransmits; -1 if absent (UDP, non-Linux) */
};

/* Fills ret from iperf3's client JSON. iperf3 -J exits 0 even when it could not connect and
 * reports the failure in an "error" key instead, so a caller must not trust the exit status
 * alone: this fails (ML_ERR_MEASURE) with iperf3's own message then, and when a field is missing.
 * ret is untouched on failure. */
bool ml_iperf_parse(const char *json_text, struct ml_iperf_result *ret, GError **err);
