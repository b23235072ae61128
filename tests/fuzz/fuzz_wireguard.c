/* What `wg show` prints in a guest: "date +%s; wg show IFACE latest-handshakes", then
 * "wg show IFACE allowed-ips" (the input's two NUL-separated parts). */
#include <arpa/inet.h>

#include "dataplanes/wireguard.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *part[2];
    fuzz_split(data, size, part, 2);
    struct ml_wg_end ends[2] = {{"client", {0}}, {"server", {0}}};
    inet_pton(AF_INET, "10.8.0.2", &ends[0].address);
    inet_pton(AF_INET, "10.8.0.3", &ends[1].address);
    g_autoptr(GString) s = g_string_new(NULL);
    ml_wg_path_fresh(NULL, part[0], part[1], "hub", ends, 2, 180, s);
    g_autofree char *peer = ml_wg_peer_for(part[1], ends[0].address);
    if (peer)
        g_free(ml_wg_field(part[0], peer));
    g_free(part[0]);
    g_free(part[1]);
    return 0;
}
