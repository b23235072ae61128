/* One line of `ip -o route get ADDR` from a guest. */
#include <string.h>

#include "dataplanes/dataplane.h"
#include "dataplanes/verdict.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = fuzz_string(data, size);
    struct ml_route rt;
    if (ml_route_parse(text, &rt)) {
        if (!memchr(rt.dev, 0, sizeof(rt.dev)) || !memchr(rt.via, 0, sizeof(rt.via)) ||
            !memchr(rt.src, 0, sizeof(rt.src)))
            __builtin_trap();
        g_autoptr(GString) s = g_string_new(NULL);
        ml_route_enters(&rt, "wg0", s);
    }
    return 0;
}
