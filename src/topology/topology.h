/* The lab as the user described it in a topology file: parsed, checked, and
 * nothing else. Nothing here touches libvirt or the host. */
#pragma once

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>

#define ML_NAME_MAX 32   /* names become parts of libvirt object names */
#define ML_MAX_NODES 16

#define ML_PATHS_MAX 16

/* A path the topology asks to measure, by name, and where it was named. The
 * names mean something only to the dataplanes' registry, which resolves them
 * (dataplanes/path.h, ml_paths_resolve) in a step the command runs after
 * loading. */
struct ml_path_ref {
    char *name;
    int line, column; /* 1-based */
};

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
        size_t n_paths;               /* which paths to measure, as listed */
        struct ml_path_ref paths[ML_PATHS_MAX];
        int paths_line, paths_column; /* where measure.paths was given */
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

/* Whether measure.paths names path. */
bool ml_topology_has_path(const struct ml_topology *topo, const char *path);

/* Index of a node by name, or -1. */
int ml_topology_find_node(const struct ml_topology *topo, const char *name);
