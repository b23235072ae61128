/* Tailscale clients and Headscale on the hub, as the seed ran them: the files meshlab writes
 * into the guests, and readers for what `tailscale` and `headscale` print. Nothing here runs
 * either program. docs/tailscale.md explains the setup and how secrets are kept. */
#pragma once

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>

#include "virt/daemon.h"
#include "topology/ports.h"
#include "topology/topology.h"

#define ML_PORT_HTTPS 443        /* Headscale's control server and embedded DERP relay */
#define ML_PORT_STUN 3478        /* Headscale's embedded STUN server */
#define ML_PORT_TAILSCALED 41641 /* tailscaled --port */
/* The hub's tailscaled as a peer relay (`tailscale set --relay-server-port`): the UDP port the
 * clients send their Geneve-wrapped WireGuard packets to, and it forwards them on. */
#define ML_PORT_PEER_RELAY 40000

#define ML_HEADSCALE_HOSTNAME "headscale.lab"
#define ML_HEADSCALE_URL "https://headscale.lab:" G_STRINGIFY(ML_PORT_HTTPS)
#define ML_HEADSCALE_DERP_REGION "headscale"
#define ML_HEADSCALE_DERP_REGION_ID 999
#define ML_HEADSCALE_CONFIG_PATH "/etc/headscale/config.yaml"
#define ML_HEADSCALE_POLICY_PATH "/etc/headscale/policy.hujson"
#define ML_HEADSCALE_TLS_DIR "/etc/headscale/tls"
/* Where a client keeps the CA that vouches for Headscale: not the system's trust store, a
 * directory of its own that only tailscaled is told about (SSL_CERT_DIR in its environment: Go's
 * crypto/x509 on Linux reads the system bundle file, then the directories SSL_CERT_DIR lists
 * instead of /etc/ssl/certs; tailscale's net/tlsdial/tlsdial.go verifies a server with the
 * system pool, opts.Roots left nil, then its baked-in Let's Encrypt root). */
#define ML_HEADSCALE_CA_DIR "/etc/meshlab/headscale-ca"
#define ML_LAB_CA_CLIENT_PATH ML_HEADSCALE_CA_DIR "/meshlab-lab-ca.crt"
/* How long the lab's CA and certificate last, and an export's (docs/export.md: a year, then a
 * new export or a new certificate from the export's ca.key). */
#define ML_LAB_CA_DAYS 30
#define ML_EXPORT_CA_DAYS 365

/* The openssl -addext value that limits a Headscale CA to the hub: nameConstraints (critical)
 * permitting the DNS name dns and the one address ip (a /32 or /128), so a certificate it signs
 * for any other name or address fails to verify. dns NULL: no DNS name but the reserved
 * "invalid" (RFC 6761); ip NULL: no IP address at all. */
char *ml_headscale_ca_constraints(const char *dns, const char *ip);

/* /etc/headscale/config.yaml for headscale 0.29, key names as in its config-example.yaml:
 * listens on 0.0.0.0:443 with the lab certificate, embedded DERP region "headscale" (id 999) at
 * hub_ip with STUN on UDP 3478, no other DERP map (urls: []), MagicDNS with base domain
 * tailnet.example.com, the policy file, state in /var/lib/headscale/db.sqlite.
 * hub_ip is the hub's IPv4 address (NULL: none in the DERP map, which is optional there),
 * server_url normally ML_HEADSCALE_URL. */
char *ml_headscale_config(const char *hub_ip, const char *server_url);

/* Headscale's URL as the clients of an export dial it: "https://ADDRESS:443", an IPv6 address
 * in brackets. */
char *ml_headscale_export_url(const char *hub_address);

/* The export hook (dataplane.h): Headscale on the hub VPS (its config with the embedded DERP
 * relay as the only region, the policy, a certificate for --hub-address signed by a CA made for
 * the export, the release binary's install, a systemd unit, the script that makes the user and a
 * pre-auth key) and for each client the CA and its `tailscale up` line. No pre-auth key is in
 * the export: the hub makes one when the user runs the script. */
struct ml_bundle;
bool ml_tailscale_export(struct ml_bundle *b, GError **err);

/* Where the export puts the hub's script that prints a pre-auth key, and the file each client's
 * `tailscale up` reads that key from: the user runs the one and fills the other by hand, and
 * export --verify does the same (path_tailscale.c). */
#define ML_TS_EXPORT_AUTHKEY_SCRIPT "/usr/local/sbin/meshlab-headscale-authkey"
#define ML_TS_EXPORT_AUTHKEY_FILE "/etc/meshlab/tailscale-authkey"

/* The dataplane's conflict hook (dataplane.h): a lab or tunnel subnet inside Headscale's
 * 100.64.0.0/10, at that subnet; NULL when none. */
char *ml_tailscale_conflict(const struct ml_topology *topo, int *ret_line, int *ret_column);

/* The policy (HuJSON): one rule accepting every source to every destination and port. */
char *ml_headscale_policy(void);
/* The policy of a lab whose hub is a peer relay, as grants: every node to every node, and with
 * grant the capability tailscale.com/cap/relay from each of the n addresses in from to relay_ip.
 * Written once every node joined (the grants name their addresses) and taken in by Headscale on
 * SIGHUP: the grant is there only while tailscale-peer-relay is measured, as
 * a client granted a relay pays for discovering it at the start of its direct flows
 * (path_tailscale.c relay_grant). The addresses are checked ones (ml_tailscale_ip_parse); none
 * is quoted further. */
char *ml_headscale_policy_relay(const char *relay_ip, const char *const *from, size_t n,
                                bool grant);

/* The client's join command. The key is read from authkey_file with tailscale's "file:"
 * prefix, so it never appears on a command line, in a process list or in a log. Values are
 * shell-quoted where needed. */
char *ml_tailscale_up_command(const char *login_server, const char *hostname,
                              const char *authkey_file);

/* Shell script (run as root on the hub through the guest agent) that makes a lab CA and a
 * certificate for hostname (SAN DNS:hostname and IP:hub_ip), for headscale under
 * ML_HEADSCALE_TLS_DIR. The CA vouches for hostname and hub_ip only (ml_headscale_ca_constraints)
 * for ML_LAB_CA_DAYS. Its private key is created there with mode 0600 and never leaves the hub.
 * The script prints only the CA certificate (public, PEM) on stdout, for the clients. */
char *ml_lab_ca_hub_script(const char *hostname, const char *hub_ip);

/* Shell script (run as root on a client) that puts ca_pem at ML_LAB_CA_CLIENT_PATH, for
 * tailscaled alone (it runs with SSL_CERT_DIR=ML_HEADSCALE_CA_DIR; nothing is added to the
 * system's trust store), and makes hostname resolve to hub_ip in /etc/hosts. Idempotent. Returns
 * NULL if ca_pem is not one PEM certificate (so nothing else can be smuggled into the
 * script). */
char *ml_lab_ca_client_script(const char *ca_pem, const char *hostname, const char *hub_ip);

/* What `tailscale ip -4` printed (tailscale cmd/tailscale/cli/ip.go: one address per line):
 * exactly one canonical IPv4 address inside Headscale's prefixes.v4, 100.64.0.0/10, written to
 * ret. Anything else fails (ML_ERR_GUEST): the address goes into commands on other guests. */
bool ml_tailscale_ip_parse(const char *out, char ret[INET_ADDRSTRLEN], GError **err);

/* What `tailscale ping PEER` printed. The last "pong from" line decides the path: tailscale
 * stops at the first direct pong, and without one the last pong is the relay's. */
struct ml_ts_ping {
    bool answered;        /* at least one pong */
    bool direct;          /* the last pong came over a direct UDP path */
    char endpoint[64];    /* direct: "192.0.2.12:41641" or "[2001:db8::1]:41641" */
    char derp_region[32]; /* relayed through DERP: the region code, e.g. "headscale" */
    char peer_relay[64];  /* relayed by a peer relay: "IP:PORT:vni:N" (cmd/tailscale/cli/ping.go
                           * prints "via peer-relay(%s)" with ipnstate.PingResult.PeerRelay) */
    double latency_ms;    /* of the last pong */
    unsigned pongs;       /* how many pong lines */
};

/* Reads `tailscale ping` output. No pong at all (timeouts, "no reply") is a result: answered
 * false. Fails (ML_ERR_MEASURE) on a pong line it cannot read; ret is untouched on failure. */
bool ml_tailscale_ping_parse(const char *text, struct ml_ts_ping *ret, GError **err);

/* What tailscaled counted of the data it sent and received, by the path it took (`tailscale
 * metrics print`: tailscaled_{outbound,inbound}_bytes_total{path=...}, tailscale
 * wgengine/magicsock/magicsock.go registerMetrics at v1.102.5: direct_ipv4, direct_ipv6, derp,
 * peer_relay_ipv4, peer_relay_ipv6; WireGuard's data packets, not disco). IPv4 and IPv6 are
 * summed. */
enum ml_ts_path { ML_TS_DIRECT, ML_TS_DERP, ML_TS_PEER_RELAY, ML_TS_PATHS };
struct ml_ts_path_bytes {
    long long out[ML_TS_PATHS];
    long long in[ML_TS_PATHS];
};

/* Reads `tailscale metrics print` (Prometheus text). Fails (ML_ERR_MEASURE) when it holds no
 * tailscaled_outbound_bytes_total line, or one it cannot read. */
bool ml_tailscale_metrics_parse(const char *text, struct ml_ts_path_bytes *ret, GError **err);

/* What `tailscale metrics print` calls a path in its counters' label, for a sentence: "direct",
 * "derp", "peer_relay". */
const char *ml_ts_path_name(enum ml_ts_path p);

struct ml_tunnel_count;
/* Pure: the counters of client's tailscaled as a pass's tunnel counts (dataplane.h), from text:
 * `tailscale metrics print`, then the guest's uptime line (ML_UPTIME_COMMAND), printed just after
 * the CLI read them. The path the label
 * takes first, its bytes in + out, which must carry the payload; then each other path, excluded:
 * the payload must not go that way as well. *ret_at: the uptime (NAN when absent). 0 when the
 * counters cannot be read. ret holds ML_TS_PATHS. */
size_t ml_tailscale_tunnel_counts(const char *text, const char *client, enum ml_ts_path want,
                                  struct ml_tunnel_count *ret, double *ret_at);

/* One peer in `tailscale status --json`. */
struct ml_ts_peer {
    char host_name[64];  /* HostName */
    char dns_name[256];  /* DNSName, with its trailing dot */
    bool online, active; /* Online, Active */
    char cur_addr[64];   /* CurAddr: set while a direct path is in use, "" otherwise */
    char relay[32];      /* Relay: the peer's home DERP region code */
    char peer_relay[64]; /* PeerRelay (newer clients): "" unless a peer relay carries it */
    char ipv4[16];       /* first IPv4 of TailscaleIPs, or "" */
    char ipv6[48];       /* first IPv6 of TailscaleIPs, or "" */
    bool direct;         /* cur_addr is set */
};

/* Finds the peer whose HostName, or the first label of whose DNSName, is peer_hostname
 * (case-insensitive; the DNS label wins when both match different peers). Fails
 * (ML_ERR_MEASURE) on bad JSON or when no peer matches, naming the peers that exist. */
bool ml_tailscale_status_parse(const char *json, const char *peer_hostname, struct ml_ts_peer *ret,
                               GError **err);

/* How many endpoints (ip:port) the netmap that `tailscale debug netmap` prints (tailcfg's
 * NetworkMap: "Peers", each with "Name", its FQDN, "Hostinfo"."Hostname" and "Endpoints") holds
 * for the peer named peer_hostname, matched as ml_tailscale_status_parse matches; *ret_n 0 for
 * a peer without any. `tailscale status --json` fills Addrs only for Self (magicsock.go
 * UpdateStatus at v1.102.5): the netmap is where a peer's endpoints are. Fails (ML_ERR_MEASURE)
 * on bad JSON or no such peer. */
bool ml_tailscale_netmap_endpoints(const char *json, const char *peer_hostname, unsigned *ret_n,
                                   GError **err);

/* The numeric id of user in `headscale users list -o json` (an array of users; a single user
 * object is accepted too). headscale prints ids as numbers or, in older releases, as strings;
 * both are read. Fails (ML_ERR_GUEST) when the user is absent. */
bool ml_headscale_user_id(const char *json, const char *user, long *ret_id, GError **err);

/* The key from `headscale preauthkeys create ... -o json`. The caller keeps it in memory only
 * and never logs it; error messages here never contain it. Fails (ML_ERR_GUEST). */
char *ml_headscale_preauthkey_parse(const char *json, GError **err);

/* One node in `headscale nodes list -o json`. */
struct ml_hs_node {
    char *name;       /* "name": the node's hostname */
    char *given_name; /* "given_name": its MagicDNS name; may equal name */
    char *ipv4;       /* from "ip_addresses", or NULL */
    char *ipv6;
    bool online;
};

void ml_hs_node_free(struct ml_hs_node *n);

/* Reads the node list into *ret_nodes (struct ml_hs_node *, freed with the array). Accepts
 * the CLI's snake_case keys and the REST API's camelCase ones. Fails (ML_ERR_GUEST) on bad
 * JSON; *ret_nodes is untouched then. */
bool ml_headscale_nodes_parse(const char *json, GPtrArray **ret_nodes, GError **err);

/* After the clients joined: the node named name (its name or given_name) is in nodes with
 * exactly the IPv4 address ipv4 that the client reported. Fails (ML_ERR_GUEST) saying what
 * Headscale has instead. */
bool ml_headscale_nodes_check(const GPtrArray *nodes, const char *name, const char *ipv4,
                              GError **err);

/* ---- the paths' guest commands (path_tailscale.c) ---- */

/* tailscaled as node runs it now: in the NAT's namespace (ML_PLAN_NETNS) while node sits behind
 * one, else in the guest's own; the CLI reaches it through its socket from anywhere. Its
 * command line has --no-logs-no-support: no log uploads to reach the hub. */
struct ml_daemon ml_tailscaled_on(const struct ml_lab *lab, size_t node);

/* The guest command that records node's footprint beside the numbers: headscale's RSS and the
 * memory in use on the hub; on a client tailscaled's RSS, the memory in use, tailscale0's MTU
 * and kind (read in the NAT's namespace while node sits behind one) and its addresses. */
char *ml_tailscale_observe_cmd(const struct ml_lab *lab, size_t node);
