/* A path a measurement can take, as an ops table: adding a path is adding a
 * file that fills one in. Each says where traffic goes and how to prove that
 * traffic really took it. */
#pragma once

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>

#include "lab.h"

/* What one verification probe saw: a short burst of pings from the client to
 * the path's target while the hub's NIC counters were read from the host. */
struct ml_probe {
    long long hub_bytes;     /* hub NIC bytes in + out during the burst */
    long long probe_bytes;   /* ICMP payload + headers sent and answered */
    unsigned transmitted, received;
    char *route;             /* the client's `ip route get TARGET` */
};
void ml_probe_clear(struct ml_probe *p);

struct ml_path_ops {
    enum ml_path_kind kind;
    /* One line for the report, with the client, server and target filled in. */
    char *(*describe)(const struct ml_topology *topo);
    /* The address iperf3 and ping aim at. */
    struct in_addr (*target)(const struct ml_topology *topo);
    /* Brings the dataplane up on a freshly booted lab (NULL: nothing to do). */
    bool (*setup)(struct ml_lab *lab, GError **err);
    /* True when what the probe (and the path's own state) shows is this path.
     * evidence receives a sentence of what was seen, for the results. */
    bool (*verify)(struct ml_lab *lab, const struct ml_probe *probe, GString *evidence);
};

const struct ml_path_ops *ml_path_ops(enum ml_path_kind kind);

extern const struct ml_path_ops ml_path_plain;
extern const struct ml_path_ops ml_path_wireguard_hub;
