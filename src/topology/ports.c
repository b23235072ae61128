#include "topology/ports.h"

#include <glib.h>

const char *ml_proto_name(enum ml_proto p)
{
    return p == ML_PROTO_TCP ? "tcp" : "udp";
}

static const struct ml_port fixed[] = {
    {"ssh", ML_PROTO_TCP, ML_PORT_SSH, true, NULL},
    {"Headscale and its DERP relay", ML_PROTO_TCP, ML_PORT_HTTPS, true, "tailscale"},
    {"Headscale's STUN", ML_PROTO_UDP, ML_PORT_STUN, true, "tailscale"},
    {"NAT probe", ML_PROTO_UDP, ML_PORT_NAT_PROBE, true, NULL},
    {"NAT probe", ML_PROTO_UDP, ML_PORT_NAT_PROBE_ALT, true, NULL},
    {"iperf3", ML_PROTO_TCP, ML_PORT_IPERF3, true, NULL},
    {"nebula", ML_PROTO_UDP, ML_PORT_NEBULA, true, "nebula"},
    {"tailscaled", ML_PROTO_UDP, ML_PORT_TAILSCALED, false, "tailscale"},
};

const struct ml_port *ml_port_fixed(enum ml_proto proto, unsigned port)
{
    for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
        if (fixed[i].proto == proto && fixed[i].port == port)
            return &fixed[i];
    return NULL;
}

size_t ml_ports(const struct ml_topology *topo, struct ml_port ret[ML_PORTS_MAX])
{
    size_t n = 0;
    ret[n++] = fixed[0];
    ret[n++] =
        (struct ml_port){"WireGuard", ML_PROTO_UDP, topo->wireguard.listen_port, true, "wireguard"};
    for (size_t i = 1; i < G_N_ELEMENTS(fixed); i++)
        ret[n++] = fixed[i];
    return n;
}
