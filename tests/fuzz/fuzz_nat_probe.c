/* The NAT probe's JSON, printed by a script inside a guest's NAT namespace. */
#include "guestnet/nat.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = fuzz_string(data, size);
    struct ml_nat_behaviour b;
    g_autoptr(GString) seen = g_string_new(NULL);
    g_autoptr(GError) err = NULL;
    if (!ml_nat_probe_parse(text, &b, seen, &err) && !err)
        __builtin_trap();
    return 0;
}
