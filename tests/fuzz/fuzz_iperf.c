/* iperf3 -J's client JSON from a guest. */
#include "fuzz.h"
#include "measure/parse_iperf.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = fuzz_string(data, size);
    static struct ml_iperf_result r;
    g_autoptr(GError) err = NULL;
    bool ok = ml_iperf_parse(text, &r, &err);
    if (!ok && !err)
        __builtin_trap();
    if (r.n_intervals > ML_IPERF_INTERVALS_MAX)
        __builtin_trap();
    /* After a parse, every optional field is unknown or plausible, never garbage. */
    if (ok && (r.pmtu == 0 || r.pmtu < -1 || r.tcp_mss == 0 || r.tcp_mss < -1 || r.packets < -1 ||
               r.lost_packets < -1 ||
               !(isnan(r.lost_percent) || (r.lost_percent >= 0 && r.lost_percent <= 100)) ||
               !(isnan(r.rtt_mean_us) || r.rtt_mean_us > 0) || !isfinite(r.omitted_s) ||
               r.omitted_s < 0 || r.sender_congestion[sizeof(r.sender_congestion) - 1] != 0))
        __builtin_trap();
    return 0;
}
