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

struct ml_plan_guest {
    const struct ml_node *node;
    char *domain;        /* libvirt domain: meshlab-<lab>.<node> */
    char mac[18];        /* 52:54:00:<lab hash>:<index> */
    char tap[16];        /* host tap: mlt<lab hash><index> */
    char *overlay_vol;   /* <node>.qcow2 in the pool */
    char *seed_vol;      /* <node>-seed.iso in the pool */
};

struct ml_plan {
    const struct ml_topology *topo;
    char run_id[40];
    char hash[9];        /* 8 hex digits of SHA-256 of the lab name */
    char *network;       /* libvirt network: meshlab-<lab> */
    char bridge[16];     /* mlb<hash> */
    char *pool;          /* libvirt pool: meshlab-<lab> */
    char *pool_dir;      /* <state>/pools/<lab> */
    char *state_file;    /* <state>/labs/<lab>.json */
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
char *ml_plan_domain_prefix(const char *lab);  /* "meshlab-<lab>." */
void ml_plan_lab_hash(const char *lab, char ret_hash[9]);

/* "a.b.c.d" of an address; returns buf. */
const char *ml_ip_str(struct in_addr addr, char buf[16]);
