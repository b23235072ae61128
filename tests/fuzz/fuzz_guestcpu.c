/* A guest's /proc/stat line and its daemons' stat and VmRSS lines. */
#include "fuzz.h"
#include "measure/guestcpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = fuzz_string(data, size);
    struct ml_guest_cpu c;
    ml_guest_cpu_parse(text, &c);
    return 0;
}
