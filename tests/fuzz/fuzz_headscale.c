/* What the headscale CLI prints on the hub: users, a pre-auth key, the node list. */
#include "dataplanes/tailscale.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = fuzz_string(data, size);
    g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL, e4 = NULL;
    long id = 0;
    if (!ml_headscale_user_id(text, "meshlab", &id, &e1) && !e1)
        __builtin_trap();
    g_autofree char *key = ml_headscale_preauthkey_parse(text, &e2);
    if (!key && !e2)
        __builtin_trap();
    GPtrArray *nodes = NULL;
    if (ml_headscale_nodes_parse(text, &nodes, &e3)) {
        ml_headscale_nodes_check(nodes, "client", "100.64.0.2", &e4);
        g_ptr_array_unref(nodes);
    } else if (!e3) {
        __builtin_trap();
    }
    return 0;
}
