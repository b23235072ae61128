/* What openvpn-hub reads from guests: the hub's status file twice (observe's two reads, the
 * input's two NUL-separated parts), and a certificate's fingerprint line (the first part). */
#include <string.h>

#include "dataplanes/openvpn.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *part[2];
    fuzz_split(data, size, part, 2);
    struct ml_openvpn_status a, b;
    if (ml_openvpn_status_parse(part[0], &a) && ml_openvpn_status_parse(part[1], &b))
        for (size_t i = 0; i < a.n_clients; i++) {
            const struct ml_openvpn_client *y = ml_openvpn_status_client(&b, a.clients[i].name);
            if (y && strlen(y->virt) >= sizeof y->virt)
                __builtin_trap(); /* each field fits its buffer, terminated */
        }
    char fp[96];
    ml_openvpn_fingerprint_parse(part[0], fp);
    g_free(part[0]);
    g_free(part[1]);
    return 0;
}
