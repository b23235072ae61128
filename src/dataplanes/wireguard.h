/* Kernel WireGuard through the hub, as the seed built it: keys generated in
 * each guest (a private key never leaves it), wg-quick configurations that
 * load the key from the guest's own file, the hub forwarding and masquerading. */
#pragma once

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>

#include "core/keys.h"
#include "dataplanes/dataplane.h"
#include "virt/lab.h"

#define ML_WG_KEY_FILE "/etc/wireguard/wg0.key"

/* wg0.conf of the hub; pubkeys[i] is node i's public key (the hub's is unused). */
char *ml_wg_render_hub(const struct ml_topology *topo, const char *const *pubkeys);
/* wg0.conf of client node i. */
char *ml_wg_render_client(const struct ml_topology *topo, size_t node, const char *hub_pubkey);

/* The export hook (dataplane.h): wg0.conf for the hub and each client in wg-quick's format,
 * with keys made here (core/keys.h), the run's listen port, keepalive and wg-quick's MTU
 * written out; the hub forwards and masquerades on the bundle's hub_interface as in the lab. */
bool ml_wg_export(struct ml_bundle *b, GError **err);

/* True for a well-formed WireGuard public key (44 base64 characters, 32 bytes). */
bool ml_wg_key_valid(const char *key);

/* Generates a key into key_file in every guest that which selects (NULL: all)
 * at once; only the public keys come back, into pub[i], each checked. */
bool ml_wg_keys(struct ml_lab *lab, const bool *which, const char *key_file, char **pub,
                GError **err);

/* Generates keys in every guest, writes the configurations, brings wg0 up and
 * waits for the first tunnel ping; records setup_s in state. */
bool ml_wg_setup(struct ml_lab *lab, struct json_object *state, GError **err);

/* prefix (e.g. "10.9.0.") plus the last octet of node's tunnel_address: the
 * WireGuard dataplanes beside wg0 number their nodes the way wg0 does. */
char *ml_wg_overlay_address(const struct ml_topology *t, size_t node, const char *prefix,
                            char buf[16]);
/* The same address as the one a path aims at (0.0.0.0 if prefix is malformed). */
struct in_addr ml_wg_overlay_target(const struct ml_topology *t, size_t node, const char *prefix);
/* The conflict hook (dataplane.h) of the path named path, whose overlay is prefix + "0/24" and
 * whose nodes (which[i]; NULL: all) take the addresses above: its subnet against the topology's,
 * then each address neither the /24's network nor its broadcast, and no two alike. NULL when none;
 * *ret_line and *ret_column then untouched. */
char *ml_wg_overlay_conflict(const struct ml_topology *t, const char *path, const char *prefix,
                             const bool *which, int *ret_line, int *ret_column);

/* One WireGuard network through the hub as `meshlab export` writes it: what the wireguard-hub
 * and wireguard-go-hub exports share (their hubs differ: wg-quick with forwarding, wg setconf
 * under wireguard-go). */
struct ml_wg_export_net {
    const char *dir;     /* the export's folder: "wireguard" */
    const char *dev;     /* the clients' interface and file: "wg0" */
    const char *kind;    /* "kernel WireGuard (wireguard-hub)", each file's first line */
    const char *overlay; /* NULL: the nodes' tunnel_address; else its prefix ("10.10.0.") */
    unsigned port;       /* the hub's listen port */
    const char *allowed; /* the clients' AllowedIPs for the hub: the network ("10.8.0.0/24") */
};
/* Fresh keys for every node of t (core/keys.h), none from the lab; cleared again on failure. */
bool ml_wg_export_keys(const struct ml_topology *t, struct ml_wg_keypair keys[ML_MAX_NODES],
                       GError **err);
/* A wg-quick [Interface] section of the export: its comment lines, node's address in n with
 * prefix, its private key, the MTU the lab ran with; role ("the hub", "a client") for the
 * comment. */
void ml_wg_export_interface(GString *c, const struct ml_bundle *b, const struct ml_wg_export_net *n,
                            size_t node, unsigned prefix, const char *private_key,
                            const char *role);
/* Each client's wg-quick file of n (QR codes, `wg-quick strip`, its start command) and the hub's
 * [Peer] section for each client, appended to hub. */
void ml_wg_export_clients(struct ml_bundle *b, const struct ml_wg_export_net *n,
                          const struct ml_wg_keypair *keys, GString *hub);

/* One end of a path, as a peer of the node whose WireGuard was asked. */
struct ml_wg_end {
    const char *name;       /* the node's name, for the sentence */
    struct in_addr address; /* its address inside the tunnel */
};

/* Pure: the value on peer key's line of `wg show IFACE FIELD` ("KEY\tVALUE"
 * per peer), stripped; NULL when the peer has no line. */
char *ml_wg_field(const char *out, const char *key);
/* Pure: the public key of the peer whose allowed-ips (`wg show IFACE
 * allowed-ips`) hold addr; NULL when none does. */
char *ml_wg_peer_for(const char *allowed, struct in_addr addr);

/* Pure: the bytes each end's peer moved, received plus sent, in `wg show IFACE transfer`
 * ("KEY\tRX\tTX" a peer: wireguard-tools' show.c, ugly_print "transfer") as node `whose`
 * ("the hub's") records them, the peer being the one whose allowed-ips hold the end's address.
 * Into ret, in ends' order, up to n_ends; how many were read (an end with no peer or no line
 * stops there). */
size_t ml_wg_tunnel_counts(const char *transfer, const char *allowed, const char *whose,
                           const struct ml_wg_end *ends, size_t n_ends,
                           struct ml_tunnel_count *ret);

/* Pure: reads `date +%s; wg show IFACE latest-handshakes` (handshakes) and
 * `wg show IFACE allowed-ips` (allowed) as recorded on node `who` (error: why
 * they could not be read). True when, for each of the path's ends, the peer
 * whose allowed-ips hold its address shook hands within max_age_s; peers not
 * on the path do not count. Appends what it saw of each end to sentence. */
bool ml_wg_path_fresh(const char *error, const char *handshakes, const char *allowed,
                      const char *who, const struct ml_wg_end *ends, size_t n_ends,
                      long long max_age_s, GString *sentence);
