/* nebula's `print-tunnel` JSON, read on the client. */
#include <string.h>

#include "dataplanes/nebula.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = fuzz_string(data, size);
    struct ml_nebula_tunnel t;
    g_autoptr(GError) err = NULL;
    if (ml_nebula_tunnel_parse(text, &t, &err)) {
        if (!memchr(t.remote, 0, sizeof(t.remote)) || !memchr(t.relay, 0, sizeof(t.relay)))
            __builtin_trap();
    } else if (!err) {
        __builtin_trap();
    }
    return 0;
}
