/* The dataplanes meshlab can measure, and the paths each one offers: the registry
 * (ml_dataplanes[], registry.c) lists dataplanes, each dataplane lists its paths, and
 * everything outside a dataplane's own file (setup, the firewall's ports, the daemons whose
 * CPU and memory are counted and whose versions are recorded, the NAT grid's expectations)
 * reads it from here. Adding a dataplane is one file that fills in a struct ml_dataplane
 * and its paths, plus its line in the registry. Every hook has a default (the ml_dp_*
 * wrappers), so callers never test a hook for NULL. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <stdbool.h>

#include "virt/lab.h"
#include "guestnet/nft.h"
#include "results/natgrid.h"
#include "topology/ports.h"
#include "dataplanes/bundle.h"

/* Whether the hub's NIC may see the path's traffic, counted above its idle
 * bytes. A bystander hub moves under 5% of the probe's bytes; a hub that
 * relays moves every byte twice, each inside a frame of the path's encap: the
 * exact multiple its frames give, within 5% (verdict.h). */
enum ml_hub_role { ML_HUB_QUIET, ML_HUB_CARRIES, ML_HUB_FOUND };
/* ML_HUB_FOUND: a path nothing forces (NAME-auto). The dataplane's own view says which it
 * found, and the hub's NIC must agree: quiet for direct, carrying for a relay. */

/* What a dataplane's view shows of the client's tunnel to the server. */
enum ml_found { ML_FOUND_NONE, ML_FOUND_DIRECT, ML_FOUND_RELAY };
const char *ml_found_name(enum ml_found f); /* "none", "direct", "relay" */
struct ml_found_view {
    enum ml_found found;
    char remote[64]; /* direct: the peer's address as the dataplane sends to it */
    char relay[64];  /* relay: which relay carries it */
};

struct ml_path_ops;
struct ml_evidence;

#define ML_DATAPLANE_DAEMONS_MAX 4
#define ML_DATAPLANE_PATHS_MAX 4

/* A process a dataplane runs in the guests. */
struct ml_dp_daemon {
    const char *name; /* as pidof and /proc/PID/stat name it: "tailscaled", "charon-systemd" */
    /* The shell command that prints its version ("nebula -version"); when the daemon is
     * not installed it prints nothing (its errors are discarded). */
    const char *version;
};

/* A dataplane: what it needs, how it comes up, what it remembers, how it sees
 * its own paths. One file fills one in; its paths point at it. */
struct ml_dataplane {
    const char *name; /* its key in the lab's state file, "wireguard", "nebula", ... */
    /* Its paths, in the order they are measured and reported (NULL-terminated). */
    const struct ml_path_ops *paths[ML_DATAPLANE_PATHS_MAX + 1];
    /* The processes it runs in the guests: only its own paths count their CPU and memory, and
     * the environment table records their versions. None: kernel WireGuard. */
    struct ml_dp_daemon daemons[ML_DATAPLANE_DAEMONS_MAX];
    /* How its transport meets a NAT; NULL for a dataplane the NAT matrix does not run. */
    const struct ml_nat_traits *nat;
    /* Its own transports, appended to the lab's port table (ports.h) so the
     * firewall opens and isolates them (NULL: the fixed table has them). */
    size_t (*ports)(const struct ml_topology *topo, struct ml_port *ret, size_t max);
    /* When the topology conflicts with it (its own subnet overlapping the lab's,
     * say): the rule broken, for "FILE:LINE:COL: RULE"; NULL when none (the hook
     * may be NULL). *ret_line and *ret_column come set to measure.paths; the hook
     * moves them to the value that causes the conflict. */
    char *(*conflict)(const struct ml_topology *topo, int *ret_line, int *ret_column);
    /* False, with the reason, when it cannot run on this host (NULL: always can). */
    bool (*available)(const struct ml_lab *lab, char **ret_reason);
    /* Host files node needs on its artifacts CD (NULL: none), added to files. */
    void (*artifacts)(const struct ml_lab *lab, size_t node, GPtrArray *files);
    /* The programs it needs fetched into the cache (cache/artifacts.h names, NULL-terminated;
     * NULL: none): their versions and how they were obtained go into results.json. */
    const char *const *fetched;
    /* Brings it up on a freshly booted lab, once for all its paths (NULL:
     * nothing to do). What it learns goes into state, its JSON object in the
     * lab's state file, so a later `run` finds it. */
    bool (*setup)(struct ml_lab *lab, struct json_object *state, GError **err);
    /* Records its own view of the path being checked into ev->own[] (NULL: it
     * has none). A view that cannot be read is evidence too: ev->own_error. */
    void (*observe)(struct ml_lab *lab, struct ml_evidence *ev);
    /* Paths that emerge (NAME-auto, the NAT matrix); NULL: it has none. */
    const struct ml_auto_ops *autop;
    /* What `meshlab export` hands over when one of its paths passed its checks: its files for
     * the hub and each client, with keys made fresh here (never the lab's), and what the hub's
     * cloud-init must write, install and run (bundle.h). NULL: this meshlab exports nothing
     * for it, and the export's manifest says so. */
    bool (*export)(struct ml_bundle *b, GError **err);
    /* export --verify, on a fresh lab that runs the exported files and none of the lab's own
     * dataplanes: once ops' policy is in force, brings the exported daemons onto its path, and
     * adds beside the exported files what the lab needs to read its own view (nebula: its
     * admin console, as a drop-in next to the exported config). NULL: nothing to do. */
    bool (*verify_settle)(struct ml_lab *lab, const struct ml_path_ops *ops, GError **err);
    /* export --verify, before the exported setup runs on node (the hub's user-data, a client's
     * commands): what a real host gets from the publisher and the lab's guests cannot download
     * (a release binary, a package), put in place from the lab's cache at the version the
     * export names, and anything the export tells its user to do by hand (a key made on the
     * hub and copied to a client). Runs on the hub first, then on each client. NULL: nothing. */
    bool (*verify_install)(struct ml_lab *lab, size_t node, GError **err);
};

/* How a dataplane takes part when nothing forces its path. */
struct ml_auto_ops {
    /* Node's address inside the overlay (0.0.0.0 while not assigned). */
    struct in_addr (*address)(const struct ml_lab *lab, size_t node);
    /* The guest command, run in the client's root namespace, that prints the dataplane's view
     * of its tunnel to the server (the command enters the namespace itself). */
    char *(*view_cmd)(const struct ml_lab *lab);
    /* Pure: what that output shows. False when it is not the output this knows. */
    bool (*view_parse)(const struct ml_topology *topo, const char *text, struct ml_found_view *ret);
    /* Which of the evidence's own[] observe() fills with that same view. */
    unsigned view_own;
    /* A Python regular expression that matches the view's output when direct: the NAT matrix
     * ends a cell early after two such views in a row. */
    const char *direct_re;
    /* The UDP port its peers send to (ports.h). Whether the port table opens it in the guest
     * firewall is what a client with no NAT is to the other's first packet: open (nebula's
     * 4242), or a filter that lets in only replies, as a port-restricted cone (tailscaled's
     * 41641). The NAT matrix's expected outcomes depend on it; the report, which may not read
     * this table, keeps the same fact (ml_nat_none_open), and tests/test_natgrid.c checks the
     * two agree. */
    unsigned peer_port;
    /* Stops the daemons on the clients (before their NAT changes). */
    bool (*stop)(struct ml_lab *lab, GError **err);
    /* Starts them afresh on the hub and the clients, each where its NAT puts it now, without
     * waiting for the overlay: the NAT matrix times that. */
    bool (*start)(struct ml_lab *lab, GError **err);
    /* Waits until the client reaches the server through the overlay. */
    bool (*wait)(struct ml_lab *lab, GError **err);
};

/* How a path wraps one inner IP packet on the hub's wire, for the hub factor
 * physics predicts (measure/physics.h). A packet of n inner bytes is padded to
 * a multiple of pad_to (0: none), capped at inner_mtu as WireGuard does, then
 * overhead bytes are added, then a 14-byte Ethernet header. approximate: the
 * encapsulation is not per packet (a byte stream), so overhead is an average
 * share; how says where each byte comes from. trailer: bytes padded together
 * with the packet (ESP's pad length and next header), counted in neither. */
struct ml_encap {
    const char *name;
    unsigned inner_mtu;
    unsigned overhead;
    unsigned pad_to;
    unsigned trailer;
    bool approximate;
    const char *how;
};
/* Kernel WireGuard and wireguard-go: the same wire format and padding. */
extern const struct ml_encap ml_encap_wireguard;
/* Pure: an IP packet of inner bytes (at most e->inner_mtu) as the hub's NIC counts it through
 * e: padded, wrapped, with its Ethernet header. 0 for e NULL. */
unsigned ml_encap_frame_bytes(const struct ml_encap *e, unsigned inner);

/* What a dataplane's own counters say its tunnel carried for one end of a path so far: who
 * counts it ("the hub's peer for client-a") and the bytes in plus out, as it counts them (its
 * own packets' bytes: WireGuard's transfer, the kernel's SA bytes). Read from its view; a pass
 * judges how they grow between views against the payload the NICs saw (ml_tunnel_judge). */
struct ml_tunnel_count {
    char who[64];
    double bytes;
    /* A way the path must not take, counted by the same daemon: tailscaled's bytes by DERP
     * while the path is direct. Its growth is held under ML_TUNNEL_EXCLUDED_SHARE of the
     * payload (plus the control plane's chatter) where the others must reach ML_TUNNEL_SHARE. */
    bool excluded;
    /* Counted by the client itself, in step with its own NIC (tailscaled's counters): no
     * relay's queue lies between the two, so its windows may take in the seconds a relay's
     * band leaves unjudged (its first and last), where a hub's counters lag the client's NIC. */
    bool at_client;
};
#define ML_TUNNEL_COUNTS_MAX 3
/* Printed just before a dataplane's counters, in the same shell: the guest's uptime then, read
 * by shell builtins (no process of its own on a guest whose one vCPU may be the measured hub). */
#define ML_UPTIME_COMMAND "read -r up _ < /proc/uptime; echo \"$up\""
/* Pure: the uptime a section starts with (ML_UPTIME_COMMAND's line); NAN when it does not. */
double ml_uptime_head(const char *text);

struct ml_path_ops {
    const char *name; /* as topologies and results name it */
    const struct ml_dataplane *dataplane;
    /* The nftables path policy in force while this path is measured. */
    enum ml_policy policy;
    /* What the hub's NIC must show during the probe. */
    enum ml_hub_role hub;
    /* What the hub carries per packet (NULL: the path does not cross the hub,
     * expected factor 0). */
    const struct ml_encap *encap;
    /* One line for the report, with the client, server and target filled in. */
    char *(*describe)(const struct ml_topology *topo);
    /* The address iperf3 and ping aim at (0.0.0.0 while the dataplane has not
     * assigned it yet). */
    struct in_addr (*target)(const struct ml_lab *lab);
    /* The address a flow to node aims at, for the pairs-K cells whose flows run between any two
     * of the hub's clients (NULL: the path measures only its own pair, and takes no pairs cell). */
    struct in_addr (*target_of)(const struct ml_lab *lab, size_t node);
    /* After the policy changed: lets the dataplane find its path again (NULL: nothing). */
    bool (*settle)(struct ml_lab *lab, GError **err);
    /* Its settle changes a daemon's state, which the next policy's settle changes back: a
     * restart (nebula's, tinc's), a grant of Headscale's policy (the peer relay). Seconds more
     * than waiting for a path: the sweep enters a group of such paths as seldom as it can
     * (ml_groups_arrange). */
    bool settle_changes_state;
    /* Pure: true when the recorded evidence shows this path, beyond what every
     * path shares (an answered probe and the hub's role, see ml_path_verdict).
     * ev->rt is parsed by then. Appends what it saw to sentence. */
    bool (*verify)(const struct ml_topology *topo, const struct ml_evidence *ev, GString *sentence);
    /* Pure: the dataplane's own per-peer byte counters for the path's ends in ev (what observe
     * read), into ret (ML_TUNNEL_COUNTS_MAX at most); how many. 0 when the view holds none
     * that can be read. *ret_at: the counting guest's uptime printed next to them, with
     * nothing slow between (ML_UPTIME_COMMAND; just before a fast reader like wg, just after a
     * slow one like tailscale's Go CLI, which reads at its end; NAN when absent), which places
     * the reading on the host's clock far closer than the agent call around it. NULL: the dataplane keeps no per-peer counters
     * meshlab reads live (nebula's and tinc 1.0's views have none; OpenVPN's status file is
     * rewritten once a second, so its counters are of another moment than the view's). */
    size_t (*tunnel_counts)(const struct ml_topology *topo, const struct ml_evidence *ev,
                            struct ml_tunnel_count *ret, double *ret_at);
    /* Non-NULL: its dataplane's export does not configure this path, and why; the export's
     * manifest names the path not exported with this reason (and --verify does not check it). */
    const char *not_exported;
};

/* Every dataplane, NULL-terminated: the one list a new dataplane joins (registry.c). */
extern const struct ml_dataplane *const ml_dataplanes[];
/* Every path's name, dataplane by dataplane in the registry's order, ", " between: what an
 * error about a path name and `meshlab validate --help` list. */
char *ml_path_names(void);
/* The dataplane by name, or NULL. */
const struct ml_dataplane *ml_dataplane_find(const char *name);
/* How the named dataplane's transport meets a NAT (the NAT grid's input), or NULL: an unknown
 * name, or a dataplane the NAT matrix does not run. */
const struct ml_nat_traits *ml_dataplane_nat(const char *name);
/* The registry's paths one after the other: the forced paths of every dataplane in the
 * registry's order, then the paths that emerge by themselves (hub role ML_HUB_FOUND), which are
 * measured after every forced one. NULL past the last. */
const struct ml_path_ops *ml_path_at(size_t i);
#define ML_FOR_EACH_PATH(i, ops) for (size_t i = 0; ((ops) = ml_path_at(i)) != NULL; i++)

/* The daemons of every dataplane, each name once, in the registry's order: what guestcpu.c
 * counts and hostinfo.c asks for its version. NULL past the last. */
const struct ml_dp_daemon *ml_daemon_at(size_t i);
size_t ml_daemon_count(void);

/* The hooks with their defaults, so no caller tests one for NULL. */
bool ml_dp_available(const struct ml_dataplane *dp, const struct ml_lab *lab, char **ret_reason);
bool ml_dp_setup(const struct ml_dataplane *dp, struct ml_lab *lab, struct json_object *state,
                 GError **err);
void ml_dp_observe(const struct ml_dataplane *dp, struct ml_lab *lab, struct ml_evidence *ev);
char *ml_dp_conflict(const struct ml_dataplane *dp, const struct ml_topology *topo, int *ret_line,
                     int *ret_column);
/* Whether the dataplane has an export hook. */
bool ml_dp_exports(const struct ml_dataplane *dp);
/* Its export hook; false with err when it has none. */
bool ml_dp_export(const struct ml_dataplane *dp, struct ml_bundle *b, GError **err);
/* Its verify_settle hook; true when it has none. */
bool ml_dp_verify_settle(const struct ml_dataplane *dp, struct ml_lab *lab,
                         const struct ml_path_ops *ops, GError **err);
/* Its verify_install hook on node; true when it has none. */
bool ml_dp_verify_install(const struct ml_dataplane *dp, struct ml_lab *lab, size_t node,
                          GError **err);
/* Whether the topology needs the dataplane: one of its paths measured, or run by the NAT
 * matrix. */
bool ml_dp_needed(const struct ml_dataplane *dp, const struct ml_topology *topo);
/* After a settle of dp's that failed with *err: its daemons stopped on the clients (its auto
 * ops' stop), said in *err. A daemon that found no tunnel keeps probing every address it knows
 * (nebula handshaking at 7 kB/s on the bridge beside the hub in one CI run), which the next
 * relay paths' door ledgers count against them; stopped, it disturbs none. For a dataplane whose
 * settle starts its daemons afresh (nebula, tinc); nothing when interrupted. */
void ml_dp_stop_unsettled(const struct ml_dataplane *dp, struct ml_lab *lab, GError **err);
/* The path's settle hook; true when it has none. */
bool ml_path_settle(const struct ml_path_ops *ops, struct ml_lab *lab, GError **err);
/* The path by name, or NULL. */
const struct ml_path_ops *ml_path_find(const char *name);
/* Whether the path's dataplane runs the daemon (a process name): what the path's passes count. */
bool ml_path_runs_daemon(const struct ml_path_ops *ops, const char *daemon);
/* Checks that every path the topology names is registered, and the dataplanes'
 * own rules; the error is "FILE:LINE:COL: RULE" at the name, as the parser's. */
bool ml_paths_resolve(const struct ml_topology *topo, GError **err);
/* Whether the topology measures this path. */
bool ml_path_wanted(const struct ml_topology *topo, const struct ml_path_ops *ops);
/* Whether the lab needs this path's dataplane: measured, or run by the NAT matrix. */
bool ml_path_needed(const struct ml_topology *topo, const struct ml_path_ops *ops);
/* The path that emerges by itself for a dataplane ("nebula" -> nebula-auto), or NULL. */
const struct ml_path_ops *ml_path_auto(const char *dataplane);

/* Pure: when subnet NET/PREFIX (a dotted quad) overlaps the lab subnet or
 * wireguard.subnet, the rule for a dataplane's conflict hook ("WHO the overlay
 * NET/PREFIX, which overlaps ...", who being "the nebula paths use") with
 * *ret_line and *ret_column set to that subnet's place; NULL when it does not. */
char *ml_subnet_conflict(const struct ml_topology *topo, const char *who, const char *net,
                         unsigned prefix, int *ret_line, int *ret_column);

/* The dataplane's per-run state in the lab, created empty when missing. */
struct json_object *ml_dataplane_state(struct ml_lab *lab, const struct ml_dataplane *dp);
/* The same for any name in the lab's per-run state ("nat": the NATs observed by up). */
struct json_object *ml_lab_state_named(struct ml_lab *lab, const char *name);
/* The lab's whole port table: the fixed ports, then each dataplane's own. */
size_t ml_dataplane_ports(const struct ml_topology *topo, struct ml_port ret[ML_PORTS_MAX]);

/* The files node i needs from the host, from every path the topology names
 * that can run here; empty when it needs none. */
GPtrArray *ml_path_artifacts(const struct ml_lab *lab, size_t node);
