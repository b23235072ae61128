/* The lab as the user described it in a topology file: parsed, checked, and
 * nothing else. Nothing here touches libvirt or the host. */
#pragma once

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>

#define ML_NAME_MAX 32   /* names become parts of libvirt object names */
#define ML_MAX_NODES 16

/* Paths that a measurement can take; a topology names the ones to measure. */
enum ml_path_kind {
    ML_PATH_PLAIN = 0,      /* client to server over the bridge, unencrypted */
    ML_PATH_WIREGUARD_HUB,  /* kernel WireGuard, client -> hub -> server */
    ML_PATH_TAILSCALE_DIRECT, /* tailscaled client to client, Headscale on the hub */
    ML_PATH_TAILSCALE_RELAY,  /* the same, forced onto Headscale's embedded DERP relay */
    ML_PATH_NEBULA_DIRECT,    /* nebula client to client, lighthouse on the hub */
    ML_PATH_NEBULA_RELAY,     /* the same, forced onto the hub's nebula relay */
    ML_PATH_COUNT
};
const char *ml_path_name(enum ml_path_kind kind);
/* Returns -1 for an unknown name. */
int ml_path_from_name(const char *name);

struct ml_subnet {
    struct in_addr net;  /* network byte order, host bits zero */
    unsigned prefix;     /* 8..30 */
};

struct ml_node {
    char name[ML_NAME_MAX];
    struct in_addr address;         /* on the lab bridge */
    struct in_addr tunnel_address;  /* inside wireguard.subnet */
    unsigned vcpus;
    unsigned memory_mib;
    int line, column;               /* where the node was declared, 1-based */
};

/* Durations and counts of one measurement profile. */
struct ml_profile {
    unsigned transfer_s;  /* the byte-counter transfer */
    unsigned passes;      /* number of throughput passes */
    unsigned pass_s;      /* duration of each pass */
    unsigned ping_count;  /* packets per ping */
};

struct ml_topology {
    char *path;                       /* the file it came from */
    char name[ML_NAME_MAX];           /* the lab's name: tags every libvirt object */
    char image[ML_NAME_MAX];          /* preferred guest image (catalogue name) */
    char image_fallback[ML_NAME_MAX]; /* used, and said so, when the preferred one can't be had */
    struct ml_subnet lab_subnet;
    size_t n_nodes;
    struct ml_node nodes[ML_MAX_NODES];
    struct {
        struct ml_subnet subnet;
        size_t hub;                   /* index into nodes */
        unsigned listen_port;
        unsigned persistent_keepalive;
    } wireguard;
    struct {
        size_t client;                /* index into nodes: runs iperf3 -c and ping */
        size_t server;                /* index into nodes: runs iperf3 -s */
        bool paths[ML_PATH_COUNT];    /* which paths to measure */
        struct ml_profile full;
        struct ml_profile quick;
    } measure;
};

/* Parses and validates a topology file. On failure returns NULL and sets err
 * (code ML_ERR_INPUT) to one line: "FILE:LINE:COL: RULE". */
struct ml_topology *ml_topology_load(const char *path, GError **err);
/* The same from memory; name is used in messages in place of a path. */
struct ml_topology *ml_topology_parse(const char *name, const char *text, size_t len,
                                      GError **err);
void ml_topology_free(struct ml_topology *topo);
typedef struct ml_topology MlTopology;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MlTopology, ml_topology_free)

/* Index of a node by name, or -1. */
int ml_topology_find_node(const struct ml_topology *topo, const char *name);
