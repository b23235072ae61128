#include "nft.h"

#include <stdio.h>

#include "plan.h"

const char *ml_policy_name(enum ml_policy p)
{
    return p == ML_POLICY_RELAY ? "relay" : "direct";
}

char *ml_nft_firewall(void)
{
    return g_strdup(
        "# meshlab guest firewall (the seed's), loaded for the whole run\n"
        "table inet meshlab_fw\n"
        "delete table inet meshlab_fw\n"
        "table inet meshlab_fw {\n"
        "    chain input {\n"
        "        type filter hook input priority 0; policy drop;\n"
        "        iifname != \"" ML_LAB_NIC "\" accept\n"
        "        ct state established,related accept\n"
        "        icmp type echo-request accept\n"
        "        tcp dport 22 accept\n"
        "        udp dport 51820 accept\n"
        "        tcp dport 443 accept\n"
        "        udp dport 3478 accept\n"
        "        # meshlab's additions: iperf3 on the plain path, the nebula lighthouse\n"
        "        tcp dport 5201 accept\n"
        "        udp dport 4242 accept\n"
        "    }\n"
        "}\n");
}

char *ml_nft_policy(const struct ml_topology *topo, size_t node, enum ml_policy policy)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "# meshlab path policy '%s' on %s\n"
                           "table inet meshlab_path\n"
                           "delete table inet meshlab_path\n",
                           ml_policy_name(policy), topo->nodes[node].name);
    if (policy == ML_POLICY_DIRECT || node == topo->wireguard.hub)
        return g_string_free(s, FALSE);
    char hub[16];
    ml_ip_str(topo->nodes[topo->wireguard.hub].address, hub);
    /* Both directions: the input drop is silent, the output drop makes the
     * daemon see EPERM at once instead of waiting for a timeout. STUN and the
     * relay on the hub stay reachable. */
    g_string_append_printf(s,
                           "table inet meshlab_path {\n"
                           "    chain output {\n"
                           "        type filter hook output priority 0; policy accept;\n"
                           "        oifname \"" ML_LAB_NIC "\" ip daddr != %s meta l4proto udp "
                           "counter drop\n"
                           "    }\n"
                           "    chain input {\n"
                           "        type filter hook input priority 0; policy accept;\n"
                           "        iifname \"" ML_LAB_NIC "\" ip saddr != %s meta l4proto udp "
                           "counter drop\n"
                           "    }\n"
                           "}\n",
                           hub, hub);
    return g_string_free(s, FALSE);
}
