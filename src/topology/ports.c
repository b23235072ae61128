#include "topology/ports.h"

#include <glib.h>

const char *ml_proto_name(enum ml_proto p)
{
    return p == ML_PROTO_TCP ? "tcp" : "udp";
}

static const struct ml_port fixed[] = {
    {.what = "ssh", .proto = ML_PROTO_TCP, .port = ML_PORT_SSH, .open = true, .dataplane = NULL},
    {.what = "NAT probe",
     .proto = ML_PROTO_UDP,
     .port = ML_PORT_NAT_PROBE,
     .open = true,
     .dataplane = NULL},
    {.what = "NAT probe",
     .proto = ML_PROTO_UDP,
     .port = ML_PORT_NAT_PROBE_ALT,
     .open = true,
     .dataplane = NULL},
    {.what = "iperf3",
     .proto = ML_PROTO_TCP,
     .port = ML_PORT_IPERF3,
     .open = true,
     .dataplane = NULL},
};

size_t ml_ports(const struct ml_topology *topo, struct ml_port ret[ML_PORTS_MAX])
{
    (void)topo;
    for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
        ret[i] = fixed[i];
    return G_N_ELEMENTS(fixed);
}
