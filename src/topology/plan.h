/* The plan: every name, address and path that a lab will have on this host,
 * derived from a topology alone, so that up, run, down and the tests agree. */
#pragma once

#include "topology/topology.h"

#define ML_TAG_NS "https://meshlab.invalid/xmlns/lab/1"
#define ML_OBJ_PREFIX "meshlab-"
/* Inside a NATed client: the network namespace its daemons and endpoints run in. */
#define ML_PLAN_NETNS "mlnat"
/* The lab NIC inside every guest (net.ifnames=0, and set-name in the seed). */
#define ML_LAB_NIC "eth0"

/* Where the lab's bridge and disks are on one of its hosts. A one-host lab has one, named for
 * the lab alone (meshlab-LAB, mlbHASH); a lab over several hosts has one per host, named for the
 * lab and the host (meshlab-LAB.HOST, mlbHASHk), their bridges stitched by VXLAN (mlxHASHk,
 * bound to the host's underlay address at UDP port ML_VXLAN_PORT_BASE + k, so that hosts that
 * are one kernel, as in the tests, do not clash). */
#define ML_VXLAN_PORT_BASE 4789
/* VXLAN's outer headers on the underlay's wire: Ethernet 14, IPv4 20, UDP 8, VXLAN 8. */
#define ML_VXLAN_OVERHEAD 50
struct ml_plan_host {
    const struct ml_host *host; /* NULL for a one-host lab */
    char *network;              /* libvirt network */
    char bridge[16];            /* its bridge */
    char *pool;                 /* libvirt pool */
    char *pool_dir;             /* its directory as the host has it (set once connected) */
    char vxlan[16];             /* the VXLAN device that stitches the bridge to the others' */
    unsigned vxlan_port;        /* its UDP port */
};

struct ml_plan_guest {
    const struct ml_node *node;
    size_t host;       /* index into the plan's hosts */
    char *domain;      /* libvirt domain: meshlab-<lab>.<node> */
    char mac[18];      /* 52:54:00:<lab hash>:<index> */
    char tap[16];      /* host tap: mlt<lab hash><index> */
    char *overlay_vol; /* <node>.qcow2 in the pool */
    char *seed_vol;    /* <node>-seed.iso in the pool */
};

struct ml_plan {
    const struct ml_topology *topo;
    char run_id[40];
    char hash[9];     /* 8 hex digits of SHA-256 of the lab name */
    char *state_file; /* <state>/labs/<lab>.json */
    size_t n_hosts;   /* 1 for a one-host lab */
    struct ml_plan_host hosts[ML_HOSTS_MAX];
    unsigned vni; /* the VXLAN network id of a lab over several hosts: from the hash */
    size_t n_guests;
    struct ml_plan_guest guests[ML_MAX_NODES];
};

/* run_id NULL makes a new one from the clock and random bits. */
struct ml_plan *ml_plan_new(const struct ml_topology *topo, const char *run_id);
void ml_plan_free(struct ml_plan *plan);
typedef struct ml_plan MlPlan;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MlPlan, ml_plan_free)

/* Names that depend only on the lab name, for down without a topology file. */
char *ml_plan_network_name(const char *lab);
char *ml_plan_pool_name(const char *lab);
/* The name of the lab's pool or network on host (NULL: a one-host lab's): meshlab-LAB.HOST. */
char *ml_plan_host_object(const char *lab, const char *host);
/* The part of pool_dir's name that ml_virt_lab_pool_dir takes: LAB, or LAB.HOST. */
char *ml_plan_host_key(const char *lab, const char *host);
/* The prefix of every VXLAN device of a lab: "mlx<hash>". */
void ml_plan_vxlan_prefix(const char *lab, char ret[12]);
/* The plan's host of node i. */
const struct ml_plan_host *ml_plan_guest_host(const struct ml_plan *plan, size_t i);
char *ml_plan_domain_prefix(const char *lab); /* "meshlab-<lab>." */
void ml_plan_lab_hash(const char *lab, char ret_hash[9]);

/* "a.b.c.d" of an address; returns buf. */
const char *ml_ip_str(struct in_addr addr, char buf[16]);
