/* A path a measurement can take, as an ops table: adding a path is adding a
 * file that fills one in. Each says where traffic goes and how to prove that
 * traffic really took it. */
#pragma once

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>

#include "virt/lab.h"
#include "dataplanes/nft.h"

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
    /* The nftables path policy in force while this path is measured. */
    enum ml_policy policy;
    /* One line for the report, with the client, server and target filled in. */
    char *(*describe)(const struct ml_topology *topo);
    /* The address iperf3 and ping aim at (0.0.0.0 while the dataplane has not
     * assigned it yet). */
    struct in_addr (*target)(const struct ml_lab *lab);
    /* False, with the reason, when the path cannot run on this host (NULL: always can). */
    bool (*available)(const struct ml_lab *lab, char **ret_reason);
    /* Host files node needs on its artifacts CD (NULL: none), added to files. */
    void (*artifacts)(const struct ml_lab *lab, size_t node, GPtrArray *files);
    /* Brings the dataplane up on a freshly booted lab (NULL: nothing to do). Paths
     * that share a dataplane share the function, and it runs once. */
    bool (*setup)(struct ml_lab *lab, GError **err);
    /* After the policy changed: lets the dataplane find its path again (NULL: nothing). */
    bool (*settle)(struct ml_lab *lab, GError **err);
    /* True when what the probe (and the path's own state) shows is this path.
     * evidence receives a sentence of what was seen, for the results. */
    bool (*verify)(struct ml_lab *lab, const struct ml_probe *probe, GString *evidence);
};

const struct ml_path_ops *ml_path_ops(enum ml_path_kind kind);

extern const struct ml_path_ops ml_path_plain;
extern const struct ml_path_ops ml_path_wireguard_hub;
extern const struct ml_path_ops ml_path_tailscale_direct;
extern const struct ml_path_ops ml_path_tailscale_relay;
extern const struct ml_path_ops ml_path_nebula_direct;
extern const struct ml_path_ops ml_path_nebula_relay;

/* Loads the seed's guest firewall into every guest. */
bool ml_policy_firewall(struct ml_lab *lab, GError **err);
/* Puts ops' policy in force on every guest, saves the rulesets in force under
 * RUN_DIR/rulesets/PATH/, and lets the dataplane settle. */
bool ml_policy_enter(struct ml_lab *lab, const struct ml_path_ops *ops, GError **err);

/* The files node i needs from the host, from every path the topology names
 * that can run here; empty when it needs none. */
GPtrArray *ml_path_artifacts(const struct ml_lab *lab, size_t node);

/* The common probe, for verify functions that need more than one. */
bool ml_probe_run(struct ml_lab *lab, const char *target, struct ml_probe *ret, GError **err);
