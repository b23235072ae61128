/* What the tailscale CLI prints in a guest: `tailscale ip -4`, `tailscale ping`, `tailscale
 * metrics print`, `tailscale status --json` and `tailscale debug netmap` (the input's first
 * NUL-separated part is the peer's hostname). */
#include <string.h>

#include "dataplanes/tailscale.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *part[2];
    fuzz_split(data, size, part, 2);
    g_autofree char *all = fuzz_string(data, size);
    char ip[INET_ADDRSTRLEN];
    g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL;
    if (!ml_tailscale_ip_parse(all, ip, &e1) && !e1)
        __builtin_trap();
    struct ml_ts_ping ping;
    if (!ml_tailscale_ping_parse(all, &ping, &e2) && !e2)
        __builtin_trap();
    struct ml_ts_path_bytes bytes;
    g_autoptr(GError) e4 = NULL;
    if (ml_tailscale_metrics_parse(all, &bytes, &e4)) {
        for (int k = 0; k < ML_TS_PATHS; k++)
            if (bytes.out[k] < 0 || bytes.in[k] < 0)
                __builtin_trap();
    } else if (!e4) {
        __builtin_trap();
    }
    struct ml_ts_peer peer;
    if (ml_tailscale_status_parse(part[1], part[0], &peer, &e3)) {
        if (!memchr(peer.host_name, 0, sizeof(peer.host_name)) ||
            !memchr(peer.cur_addr, 0, sizeof(peer.cur_addr)) ||
            !memchr(peer.ipv4, 0, sizeof(peer.ipv4)) || !memchr(peer.ipv6, 0, sizeof(peer.ipv6)))
            __builtin_trap();
    } else if (!e3) {
        __builtin_trap();
    }
    unsigned n_eps = 0;
    g_autoptr(GError) e5 = NULL;
    if (!ml_tailscale_netmap_endpoints(part[1], part[0], &n_eps, &e5) && !e5)
        __builtin_trap();
    g_free(part[0]);
    g_free(part[1]);
    return 0;
}
