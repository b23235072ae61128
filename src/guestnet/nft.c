#include "guestnet/nft.h"

#include <stdio.h>

#include "guestnet/nat.h"

#include "topology/plan.h"
#include "topology/ports.h"

const char *ml_policy_name(enum ml_policy p)
{
    return p == ML_POLICY_RELAY ? "relay" : p == ML_POLICY_PEER_RELAY ? "peer-relay" : "direct";
}

/* "udp dport { 51820, 3478 }" for the transports of proto, or nothing when there are none. */
static void transport_rule(GString *s, const struct ml_port *ports, size_t n, enum ml_proto proto,
                           const char *field)
{
    GString *set = g_string_new(NULL);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ports[i].dataplane || ports[i].proto != proto)
            continue;
        g_string_append_printf(set, "%s%u", count ? ", " : "", ports[i].port);
        count++;
    }
    if (count == 1)
        g_string_append_printf(s, "        %s %s %s counter drop\n", ml_proto_name(proto), field,
                               set->str);
    else if (count > 1)
        g_string_append_printf(s, "        %s %s { %s } counter drop\n", ml_proto_name(proto),
                               field, set->str);
    g_string_free(set, TRUE);
}

char *ml_nft_firewall(const struct ml_port *ports, size_t n)
{
    GString *s = g_string_new("# meshlab guest firewall (the seed's), loaded for the whole run\n"
                              "table inet meshlab_fw\n"
                              "delete table inet meshlab_fw\n"
                              "table inet meshlab_fw {\n");
    g_string_append(
        s, "    # Isolation: a dataplane's own transport uses the lab NIC only, never a tunnel:\n");
    for (size_t i = 0; i < n; i++)
        if (ports[i].dataplane)
            g_string_append_printf(s, "    #   %s %u: %s (%s)\n", ml_proto_name(ports[i].proto),
                                   ports[i].port, ports[i].what, ports[i].dataplane);
    g_string_append(s,
                    "    # Dropped on the way in and through, not out: a local drop on output is\n"
                    "    # EPERM to the sender, and tailscaled rebinds and re-STUNs on EPERM.\n"
                    "    chain transport {\n");
    transport_rule(s, ports, n, ML_PROTO_UDP, "dport");
    transport_rule(s, ports, n, ML_PROTO_UDP, "sport");
    transport_rule(s, ports, n, ML_PROTO_TCP, "dport");
    transport_rule(s, ports, n, ML_PROTO_TCP, "sport");
    g_string_append(s, "    }\n"
                       "    chain input {\n"
                       "        type filter hook input priority 0; policy drop;\n"
                       "        iifname \"lo\" accept\n"
                       "        iifname != \"" ML_LAB_NIC "\" jump transport\n"
                       "        iifname != \"" ML_LAB_NIC "\" accept\n"
                       "        ct state established,related accept\n"
                       "        icmp type echo-request accept\n");
    for (size_t i = 0; i < n; i++)
        if (ports[i].open)
            g_string_append_printf(s, "        %s dport %u accept comment \"%s\"\n",
                                   ml_proto_name(ports[i].proto), ports[i].port, ports[i].what);
    g_string_append(s, "    }\n"
                       "    chain forward {\n"
                       "        type filter hook forward priority 0; policy accept;\n"
                       "        # A NATed client's daemons sit behind " ML_NAT_VETH_OUT
                       ": their transport\n"
                       "        # is routed between it and the lab NIC (guestnet/nat.h)\n"
                       "        iifname \"" ML_NAT_VETH_OUT "\" oifname \"" ML_LAB_NIC "\" accept\n"
                       "        iifname \"" ML_LAB_NIC "\" oifname \"" ML_NAT_VETH_OUT "\" accept\n"
                       "        iifname != \"" ML_LAB_NIC "\" jump transport\n"
                       "        oifname != \"" ML_LAB_NIC "\" jump transport\n"
                       "    }\n"
                       "}\n");
    return g_string_free(s, FALSE);
}

char *ml_nft_firewall_summary(const struct ml_port *ports, size_t n)
{
    GString *s = g_string_new("policy drop on " ML_LAB_NIC " except established, ICMP echo");
    for (size_t i = 0; i < n; i++)
        if (ports[i].open)
            g_string_append_printf(s, ", %s %u", ml_proto_name(ports[i].proto), ports[i].port);
    g_string_append(s, "; dataplane transports kept off the tunnels");
    return g_string_free(s, FALSE);
}

char *ml_nft_policy(const struct ml_topology *topo, size_t node, enum ml_policy policy,
                    const struct ml_port *ports, size_t n)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "# meshlab path policy '%s' on %s\n"
                           "table inet meshlab_path\n"
                           "delete table inet meshlab_path\n",
                           ml_policy_name(policy), topo->nodes[node].name);
    if (policy == ML_POLICY_DIRECT)
        return g_string_free(s, FALSE);
    if (node == topo->hub) {
        /* The relay policy leaves the clients one relay: the TCP one (DERP), not a peer relay
         * on the hub, which tailscaled prefers to DERP whenever it answers. */
        g_autoptr(GString) set = g_string_new(NULL);
        size_t count = 0;
        for (size_t i = 0; policy == ML_POLICY_RELAY && i < n; i++)
            if (ports[i].relay_server && ports[i].proto == ML_PROTO_UDP)
                g_string_append_printf(set, "%s%u", count++ ? ", " : "", ports[i].port);
        if (count)
            g_string_append_printf(s,
                                   "table inet meshlab_path {\n"
                                   "    chain input {\n"
                                   "        type filter hook input priority 0; policy accept;\n"
                                   "        iifname \"" ML_LAB_NIC "\" udp dport %s%s%s counter "
                                   "drop\n"
                                   "    }\n"
                                   "}\n",
                                   count > 1 ? "{ " : "", set->str, count > 1 ? " }" : "");
        return g_string_free(s, FALSE);
    }
    char hub[16];
    ml_ip_str(topo->nodes[topo->hub].address, hub);
    /* Every client drops the others' UDP as it arrives, so no direct path can form in either
     * direction. Nothing is dropped on output: tailscaled takes EPERM on a send as a reason to
     * rebind and re-STUN every 5 s (magicsock maybeRebindOnError), which would add control
     * traffic to the hub during the measurement; nebula would log each failed send. STUN and
     * the relays on the hub stay reachable. */
    g_string_append_printf(s,
                           "table inet meshlab_path {\n"
                           "    chain input {\n"
                           "        type filter hook input priority 0; policy accept;\n"
                           "        iifname \"" ML_LAB_NIC "\" ip saddr != %s meta l4proto udp "
                           "counter drop\n"
                           "    }\n"
                           "}\n",
                           hub);
    return g_string_free(s, FALSE);
}
