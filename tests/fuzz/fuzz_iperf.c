/* iperf3 -J's client JSON from a guest. */
#include "fuzz.h"
#include "measure/parse_iperf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = fuzz_string(data, size);
    static struct ml_iperf_result r;
    g_autoptr(GError) err = NULL;
    if (!ml_iperf_parse(text, &r, &err) && !err)
        __builtin_trap();
    if (r.n_intervals > ML_IPERF_INTERVALS_MAX)
        __builtin_trap();
    return 0;
}
