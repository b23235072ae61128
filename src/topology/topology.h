/* The lab as the user described it in a topology file: parsed, checked, and
 * nothing else. Nothing here touches libvirt or the host. */
#pragma once

#include "topology/wan.h"
#include "topology/workload.h"
#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>

#define ML_NAME_MAX 32 /* names become parts of libvirt object names */
_Static_assert(ML_NAME_MAX == ML_WAN_NAME_MAX, "a WAN profile's name is a name");
/* A lab is one hub and at most ML_MAX_CLIENTS clients. The development host has 2 cores and no
 * KVM: every guest is emulated (TCG) and their boots and tunnels share those 2 cores, so a 10th
 * guest would slow every other one past the agent's and cloud-init's waits. */
#define ML_MAX_CLIENTS 8
#define ML_MAX_NODES (1 + ML_MAX_CLIENTS)

#define ML_PATHS_MAX 16
#define ML_WAN_PROFILES_MAX 8
#define ML_WAN_SWEEP_MAX 6

/* A path the topology asks to measure, by name, and where it was named. The
 * names mean something only to the dataplanes' registry, which resolves them
 * (dataplanes/dataplane.h, ml_paths_resolve) in a step the command runs after
 * loading. */
struct ml_path_ref {
    char *name;
    int line, column; /* 1-based */
};

struct ml_subnet {
    struct in_addr net; /* network byte order, host bits zero */
    unsigned prefix;    /* 8..30 */
    int line, column;   /* where the topology gave it, 1-based */
};

/* The NAT a client sits behind (RFC 4787 behaviours, see docs/nat-traversal.md):
 *   none                  no NAT: the client's daemons use its lab address
 *   one-to-one            static 1:1, port kept, no filtering (a cloud VM's public IP)
 *   full-cone             endpoint-independent mapping and filtering, port preserved
 *   restricted-cone       endpoint-independent mapping, address-dependent filtering
 *   port-restricted-cone  endpoint-independent mapping, address-and-port-dependent filtering
 *                         (Tailscale's "easy": Linux masquerade, home routers)
 *   symmetric             address-and-port-dependent mapping, a random port per destination,
 *                         address-and-port-dependent filtering (Tailscale's "hard")
 * A NATed client's daemons and measurement endpoints run in a network namespace behind a
 * veth; the guest's root namespace is the NAT (guestnet/nat.h). */
enum ml_nat_type {
    ML_NAT_NONE,
    ML_NAT_ONE_TO_ONE,
    ML_NAT_FULL_CONE,
    ML_NAT_RESTRICTED_CONE,
    ML_NAT_PORT_RESTRICTED_CONE,
    ML_NAT_SYMMETRIC,
    ML_NAT_TYPES
};
/* "none", "one-to-one", "full-cone", ...; NULL for an out-of-range value. */
const char *ml_nat_type_name(enum ml_nat_type t);
/* False when name is none of them. */
bool ml_nat_type_parse(const char *name, enum ml_nat_type *ret);

#define ML_NAT_DATAPLANES_MAX 4

/* A lab over several hosts (`hosts:`): at most this many libvirt hosts, each a VXLAN peer of
 * every other. */
#define ML_HOSTS_MAX 4
/* One libvirt host of a lab over several: its name (in the names of its libvirt objects), its
 * libvirt URI as written, and its underlay address, the address of its own that the other hosts
 * reach it at and its VXLAN endpoint binds to. */
struct ml_host {
    char name[ML_NAME_MAX];
    char *uri;
    struct in_addr underlay; /* 0.0.0.0 when not given (allowed for a lone host) */
    int line, column;        /* where it was named, 1-based */
};

struct ml_node {
    char name[ML_NAME_MAX];
    struct in_addr address;        /* on the lab bridge */
    struct in_addr second_address; /* the hub's second lab address (NAT probes, a second STUN
                                    * listener); 0.0.0.0 when none */
    enum ml_nat_type nat;          /* the NAT this client sits behind (ML_NAT_NONE: none) */
    struct in_addr tunnel_address; /* inside wireguard.subnet */
    unsigned vcpus;
    unsigned memory_mib;
    struct ml_wan_profile wan;      /* its link to the internet (`wan:`; lan when not given) */
    size_t host;                    /* index into the topology's hosts (0 when it names none) */
    int line, column;               /* where the node was declared, 1-based */
    int tunnel_line, tunnel_column; /* where its tunnel_address was given */
};

/* How iperf3 drives a cell's passes: client to server, server to client (-R), or both at
 * once (--bidir). */
enum ml_direction { ML_DIR_FORWARD, ML_DIR_REVERSE, ML_DIR_BIDIR };

#define ML_CELLS_MAX 16
#define ML_PROFILES_MAX 8
#define ML_STREAMS_MAX 128
/* rrul: TCP flows each way (flent's RRUL runs 4 up and 4 down) beside a ping at least this
 * often. */
#define ML_RRUL_STREAMS 4
#define ML_RRUL_PING_INTERVAL_S 0.05
/* pairs-K: at most this many flows through the hub at once. */
#define ML_PAIRS_MAX 8
/* udp-RATE's range, bit/s. */
#define ML_UDP_RATE_MIN 1e5
#define ML_UDP_RATE_MAX 1e11

/* What a cell's iperf3 carries: TCP at full speed or the fixed rate (DIRECTION-STREAMS[-fixed]),
 * UDP at its own rate (udp-RATE), TCP both ways at once beside the pass's ping (rrul), or K
 * single-stream TCP flows at once between the hub's clients (pairs-K: the ring of
 * ml_pass_ring, the measured pair first). */
enum ml_cell_kind { ML_CELL_TCP, ML_CELL_UDP, ML_CELL_RRUL, ML_CELL_PAIRS };

/* One combination of direction, streams and rate that each path is measured in. */
struct ml_cell {
    char name[32]; /* "forward-1", "reverse-8", "bidir-1", "forward-1-fixed", "udp-10M", "rrul" */
    enum ml_direction direction;
    unsigned streams; /* iperf3 -P, 1..128 */
    unsigned passes;  /* passes of this cell per path */
    bool fixed_rate;  /* at the run's fixed offered rate (iperf3 -b), not full speed */
    enum ml_cell_kind kind;
    double udp_bits_per_second; /* ML_CELL_UDP: iperf3 -u -b */
    unsigned pairs;             /* ML_CELL_PAIRS: flows at once, 1..ML_PAIRS_MAX; else 0 */
    size_t line0, column0;      /* where its name was written (0-based, as libyaml marks) */
};

/* Durations, counts and the matrix of cells of one measurement profile. */
struct ml_profile {
    char name[ML_NAME_MAX];     /* "full", "quick", "deep", ... */
    unsigned pass_s;            /* duration of each pass (iperf3 -t) */
    unsigned passes;            /* default passes per cell */
    unsigned ping_count;        /* idle pings at ping_interval_s before the passes */
    double ping_interval_s;     /* 0.05 (20 Hz) unless given; >= 0.002 */
    unsigned idle_s;            /* seconds of idle hub counters before a path's passes (baseline) */
    double fixed_rate_fraction; /* 0 < f <= 1; the fixed rate is f x the slowest path's median;
                                   default 0.5 */
    size_t n_cells;
    struct ml_cell cells[ML_CELLS_MAX]; /* in order; cells[0] is the headline cell */
    /* run --until PCT,MAX (0: off): a cell takes passes beyond its own until its throughput's
     * 95 % interval is within ±until_percent of its mean, at most until_max passes */
    double until_percent;
    unsigned until_max;
};

/* "forward", "reverse", "bidir". */
const char *ml_direction_name(enum ml_direction d);

/* The most output a guest command may print and still come back whole. qemu-ga keeps up to
 * 16 MiB of each stream (GUEST_EXEC_MAX_OUTPUT, qga/commands.c of QEMU 7.2) and sends it
 * base64-encoded in guest-exec-status's reply; libvirtd reads that reply line up to 10 MiB
 * (QEMU_AGENT_MAX_RESPONSE, src/qemu/qemu_agent.c of libvirt 9.0; longer breaks the agent
 * channel until the domain is destroyed), and hands it to a client of qemu:///system as one
 * remote_string of at most REMOTE_STRING_MAX = 4194304 bytes (src/remote/remote_protocol.x of
 * libvirt 9.0; Debian 12's libvirt.so.0.9000.0 passes 0x400000 to xdr_string in
 * xdr_remote_nonnull_string; longer fails as "Unable to encode message payload"). That last
 * cap binds: 4 MiB of base64, less 4 KiB for the reply's JSON and stderr, is 3 MiB of output. */
#define ML_AGENT_REPLY_MAX 4194304
#define ML_GUEST_OUTPUT_MAX ((ML_AGENT_REPLY_MAX - 4096) / 4 * 3)

/* At least the bytes `iperf3 -J` prints for one pass of cell lasting seconds (see load.c
 * for where the figures come from). */
size_t ml_iperf_json_bytes(const struct ml_cell *cell, unsigned seconds);
/* At least the bytes `ping -n -c count` prints, every probe answered. */
size_t ml_ping_text_bytes(unsigned count);
/* How many pings a pass of seconds sends at interval_s (as measure/pass.c counts them). */
unsigned ml_ping_count(unsigned seconds, double interval_s);
/* The warm-up seconds iperf3 -O leaves out of a pass of pass_s seconds (profile.c has the rule). */
unsigned ml_profile_omit_s(unsigned pass_s);

struct ml_topology {
    char *path;                       /* the file it came from */
    char *text;                       /* its text, as parsed: what a run directory keeps */
    size_t text_len;
    char name[ML_NAME_MAX];           /* the lab's name: tags every libvirt object */
    char image[ML_NAME_MAX];          /* preferred guest image (catalogue name) */
    char image_fallback[ML_NAME_MAX]; /* used, and said so, when the preferred one can't be had */
    struct ml_subnet lab_subnet;
    size_t n_nodes;
    struct ml_node nodes[ML_MAX_NODES];
    /* The hub: index into nodes. Every hub path relays through it, nebula's lighthouse and
     * Headscale run on it, the NAT probes answer from it, its NIC's bytes are the hub factor's. */
    size_t hub;
    int hub_line, hub_column; /* where it was given: `hub:`, or the deprecated wireguard.hub */
    struct {
        struct ml_subnet subnet;
        unsigned listen_port;
        int listen_port_line, listen_port_column; /* where it was given (or wireguard was) */
        unsigned persistent_keepalive;
    } wireguard;
    struct {
        size_t client;  /* index into nodes: runs iperf3 -c and ping */
        size_t server;  /* index into nodes: runs iperf3 -s */
        size_t n_paths; /* which paths to measure, as listed */
        struct ml_path_ref paths[ML_PATHS_MAX];
        int paths_line, paths_column; /* where measure.paths was given */
        size_t n_profiles;            /* measure.profiles in file order; "full" is one */
        struct ml_profile profiles[ML_PROFILES_MAX];
    } measure;
    /* nat_matrix: every unordered pair of types (measure.client behind the first, measure.server
     * behind the second) for each dataplane, `repeats` times, without rebooting. */
    struct {
        bool present;
        size_t n_types;
        enum ml_nat_type types[ML_NAT_TYPES]; /* as listed, no type twice */
        size_t n_dataplanes;
        struct ml_path_ref dataplanes[ML_NAT_DATAPLANES_MAX]; /* "nebula", "tailscale": resolved
                                                               * by dataplanes/ as NAME-auto */
        unsigned repeats;                                     /* 1..20, default 3 */
        unsigned window_s; /* how long a cell waits for a direct path, 5..300, default 20 */
        int line, column;  /* where nat_matrix was given */
    } nat_matrix;
    /* wan_profiles: the topology's own WAN profiles, beside the shipped ones (topology/wan.h). */
    size_t n_wan_profiles;
    struct ml_wan_profile wan_profiles[ML_WAN_PROFILES_MAX];
    /* wan_sweep: the path matrix measured once per step, each step a set of the nodes' profiles
     * (the nodes' own `wan` where the step names none); none: one run on the nodes' own. */
    size_t n_wan_sweep;
    struct ml_wan_step {
        char label[96]; /* the profile's name, for a step that names the hub's alone;
                         * "NODE=PROFILE ..." for one that names nodes */
        struct ml_wan_profile wan[ML_MAX_NODES]; /* every node's, in nodes' order */
        int line, column;
    } wan_sweep[ML_WAN_SWEEP_MAX];
    /* hosts: the libvirt hosts the lab is spread over, each node on one (`host:`); none: the
     * whole lab on the one host --connect names. */
    size_t n_hosts;
    struct ml_host hosts[ML_HOSTS_MAX];
    /* vps: the workload the hub is rehearsed for (topology/workload.h); present or not. */
    struct ml_workload vps;
};

/* The WAN profile named name: the topology's own (wan_profiles), else a shipped one; NULL when
 * neither. */
const struct ml_wan_profile *ml_topology_wan_find(const struct ml_topology *topo, const char *name);
/* Whether any node sits behind a NAT. */
bool ml_topology_has_nat(const struct ml_topology *topo);
/* The inside network of node i's NAT: 172.16.<last octet of its lab address>.0/24; the
 * namespace's address is .2, the root namespace's end of the veth .1. */
struct in_addr ml_nat_inside_net(const struct ml_topology *topo, size_t node);

/* Parses and validates a topology file. On failure returns NULL and sets err
 * (code ML_ERR_INPUT) to one line: "FILE:LINE:COL: RULE". */
struct ml_topology *ml_topology_load(const char *path, GError **err);
/* The same from memory; name is used in messages in place of a path. */
struct ml_topology *ml_topology_parse(const char *name, const char *text, size_t len, GError **err);
/* ml_topology_parse of a file someone else may have written (a run directory's topology.yaml):
 * its errors name the place and the rule, and quote none of its text. */
struct ml_topology *ml_topology_parse_data(const char *name, const char *text, size_t len,
                                          GError **err);
void ml_topology_free(struct ml_topology *topo);
typedef struct ml_topology MlTopology;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MlTopology, ml_topology_free)

/* Whether measure.paths names path. */
bool ml_topology_has_path(const struct ml_topology *topo, const char *path);

/* The profile of that name, or NULL. */
const struct ml_profile *ml_topology_profile(const struct ml_topology *t, const char *name);

/* Whether nodes a and b are on different hosts (a path between them crosses the underlay). */
bool ml_topology_crosses(const struct ml_topology *topo, size_t a, size_t b);

/* Index of a node by name, or -1. */
int ml_topology_find_node(const struct ml_topology *topo, const char *name);
