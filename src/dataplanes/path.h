/* A path a measurement can take, as an ops table: adding a path is adding a
 * file that fills one in. Each says where traffic goes and how to prove that
 * traffic really took it. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <stdbool.h>

#include "virt/lab.h"
#include "dataplanes/nft.h"
#include "topology/ports.h"

/* Whether the hub's NIC may see the path's traffic, counted above its idle
 * bytes. A bystander hub moves under 5% of the probe's bytes; a hub that
 * relays moves every byte twice, each inside a larger packet: between 1.5 and
 * 3.0 times the probe's bytes (the seed measured 2.2 to 2.5; more than 3 is a
 * loop or a second relay, not this path). */
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

#define ML_EVIDENCE_OWN_MAX 4

/* The fields of one `ip -o route get ADDR` line that say where the route
 * leaves; empty when the line has none (no gateway: via is ""). */
struct ml_route {
    char dev[16]; /* the interface, IFNAMSIZ */
    char via[46]; /* the gateway, INET6_ADDRSTRLEN */
    char src[46]; /* the preferred source address */
    bool parsed;  /* the line was read; false leaves the rest empty */
};
/* Pure: reads one line of `ip -o route get ADDR` (as printed, or squashed to
 * single spaces: tabs, "\" and runs of spaces separate words alike). False,
 * ret zeroed, for anything else: an error message, an unknown word, a value
 * that does not fit. */
bool ml_route_parse(const char *text, struct ml_route *ret);

/* What a check recorded, as data: the probe's burst of pings from the client
 * to the path's target while the hub's NIC counters were read from the host,
 * and the dataplane's own view in the raw text its tools printed. verify reads
 * nothing else, so it can be tested on recorded evidence without guests. */
struct ml_evidence {
    long long hub_bytes;      /* hub NIC bytes in + out during the burst */
    long long hub_idle_bytes; /* the same over as long just before the burst; 0: unknown */
    long long probe_bytes;    /* ICMP payload + headers sent and answered */
    unsigned transmitted, received;
    char *route;        /* the client's `ip -o route get TARGET`, squashed */
    struct ml_route rt; /* route's fields; ml_path_verdict reads route when !rt.parsed */
    char *own[ML_EVIDENCE_OWN_MAX]; /* the dataplane's observations, in its own order */
    char *own_error;                /* why they could not be read, or NULL */
};
void ml_evidence_clear(struct ml_evidence *e);

#define ML_DATAPLANE_DAEMONS_MAX 4

/* A dataplane: what it needs, how it comes up, what it remembers, how it sees
 * its own paths. One file fills one in; its paths point at it. */
struct ml_dataplane {
    const char *name; /* its key in the lab's state file, "wireguard", "nebula", ... */
    /* The processes it runs in the guests, as pidof names them (one of guestcpu.h's
     * ML_DAEMONS): only its own paths count their CPU and memory. None: kernel WireGuard. */
    const char *daemons[ML_DATAPLANE_DAEMONS_MAX];
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
    /* Brings it up on a freshly booted lab, once for all its paths (NULL:
     * nothing to do). What it learns goes into state, its JSON object in the
     * lab's state file, so a later `run` finds it. */
    bool (*setup)(struct ml_lab *lab, struct json_object *state, GError **err);
    /* Records its own view of the path being checked into ev->own[] (NULL: it
     * has none). A view that cannot be read is evidence too: ev->own_error. */
    void (*observe)(struct ml_lab *lab, struct ml_evidence *ev);
    /* Paths that emerge (NAME-auto, the NAT matrix); NULL: it has none. */
    const struct ml_auto_ops *autop;
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

/* For a path with hub role ML_HUB_FOUND: the role its dataplane's view in ev->own[0] shows
 * (ML_HUB_FOUND when it shows no tunnel); other paths: their own. */
enum ml_hub_role ml_path_role(const struct ml_path_ops *ops, const struct ml_topology *topo,
                              const struct ml_evidence *ev);

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
    /* After the policy changed: lets the dataplane find its path again (NULL: nothing). */
    bool (*settle)(struct ml_lab *lab, GError **err);
    /* Pure: true when the recorded evidence shows this path, beyond what every
     * path shares (an answered probe and the hub's role, see ml_path_verdict).
     * ev->rt is parsed by then. Appends what it saw to sentence. */
    bool (*verify)(const struct ml_topology *topo, const struct ml_evidence *ev, GString *sentence);
};

/* Every path, in the order they are measured and reported, NULL-terminated:
 * the one list a new dataplane's paths join (path.c). */
extern const struct ml_path_ops *const ml_paths[];
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

/* Pure: the verdict on one check. The route parsed (unless the caller did),
 * the path's own verify, then what every path shares, written once: every
 * probe ping answered, and the hub's bytes above its idle bytes within its
 * role's band. */
bool ml_path_verdict(const struct ml_path_ops *ops, const struct ml_topology *topo,
                     const struct ml_evidence *ev, GString *sentence);

/* Pure: true when the parsed route leaves by dev with no gateway; appends to
 * sentence what it should have been when it does not. */
bool ml_route_enters(const struct ml_route *rt, const char *dev, GString *sentence);

/* Loads the seed's guest firewall into every guest. */
bool ml_policy_firewall(struct ml_lab *lab, GError **err);
/* Puts ops' policy in force on every guest, saves the rulesets in force under
 * RUN_DIR/rulesets/PATH/, and lets the dataplane settle. */
bool ml_policy_enter(struct ml_lab *lab, const struct ml_path_ops *ops, GError **err);

/* The files node i needs from the host, from every path the topology names
 * that can run here; empty when it needs none. */
GPtrArray *ml_path_artifacts(const struct ml_lab *lab, size_t node);
