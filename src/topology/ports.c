#include "topology/ports.h"

#include <glib.h>

const char *ml_proto_name(enum ml_proto p)
{
    return p == ML_PROTO_TCP ? "tcp" : "udp";
}

static const struct ml_port fixed[] = {
    {"ssh", ML_PROTO_TCP, ML_PORT_SSH, true, NULL},
    {"NAT probe", ML_PROTO_UDP, ML_PORT_NAT_PROBE, true, NULL},
    {"NAT probe", ML_PROTO_UDP, ML_PORT_NAT_PROBE_ALT, true, NULL},
    {"iperf3", ML_PROTO_TCP, ML_PORT_IPERF3, true, NULL},
};

size_t ml_ports(const struct ml_topology *topo, struct ml_port ret[ML_PORTS_MAX])
{
    (void)topo;
    for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
        ret[i] = fixed[i];
    return G_N_ELEMENTS(fixed);
}
