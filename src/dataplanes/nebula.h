/* Nebula (Debian's nebula package) as an offline mesh with a relay: the hub is
 * lighthouse and relay, every node's key is generated in its own guest, and
 * certificates are signed on the hub, where the CA key stays. */
#pragma once

#include <glib.h>
#include <netinet/in.h>
#include <stdbool.h>

#include "virt/lab.h"
#include "dataplanes/bundle.h"

#include "topology/ports.h"

#define ML_NEBULA_PORT 4242 /* nebula on every node, the lighthouse and relay included */
#define ML_NEBULA_DEV "nebula1"
#define ML_NEBULA_ADMIN "127.0.0.1:2222"

/* Node i's overlay address: host i + 1 of nebula's subnet (10.42.0.0/24 by default). */
struct in_addr ml_nebula_address(const struct ml_topology *topo, size_t node);

/* config.yml of node i; admin_pubkey is the node's own key for the local
 * sshd admin console, through which meshlab reads nebula's view of a tunnel. */
char *ml_nebula_config(const struct ml_topology *topo, size_t node, const char *admin_pubkey);

/* config.yml of node i for an export: the hub dialled at the bundle's address, no admin
 * console, and the WireGuard overlay and interfaces never taken for an underlay. */
char *ml_nebula_export_config(const struct ml_bundle *b, size_t node);
/* The export hook (dataplane.h): a fresh CA and a certificate per node made by nebula-cert on
 * this host, each node's config checked by `nebula -test`, the systemd unit that runs it.
 * Fails (ML_ERR_HOST) where nebula-cert or nebula is not installed. */
bool ml_nebula_export(struct ml_bundle *b, GError **err);

/* export --verify: restarts the exported nebula (nebula-meshlab.service) on the clients, with
 * the lab's admin console added beside the exported config the first time, and waits for the
 * overlay to answer. */
bool ml_nebula_verify_settle(struct ml_lab *lab, GError **err);

/* A node's `nebula-cert keygen -out-pub` file: one PEM block of a 32-byte X25519 key. */
bool ml_nebula_pubkey_valid(const char *pem);
/* One PEM "NEBULA CERTIFICATE" block and nothing else. */
bool ml_nebula_cert_valid(const char *pem);

/* What nebula's `print-tunnel` says of a peer: a direct tunnel names the
 * peer's underlay address as currentRemote; a relayed one has none. */
struct ml_nebula_tunnel {
    bool found;
    bool relayed;    /* currentRemote is present and null, and a relay carries it */
    char remote[64]; /* "192.0.2.12:4242" when direct */
    char relay[16];  /* the first of currentRelaysToMe, when relayed */
};
bool ml_nebula_tunnel_parse(const char *json, struct ml_nebula_tunnel *ret, GError **err);

/* Keys, certificates, configs and the daemons on every guest; waits for the
 * client to reach the server through the overlay. */
bool ml_nebula_setup(struct ml_lab *lab, struct json_object *state, GError **err);
/* Restarts nebula on the clients (after a policy change) and waits for the
 * overlay to answer again. */
bool ml_nebula_restart_clients(struct ml_lab *lab, GError **err);
/* Restarts nebula where each node's daemons run now (the NAT matrix moves them): on the hub
 * first when hub_too, then on every client `which` selects (NULL: all), without waiting for
 * the overlay. */
bool ml_nebula_restart(struct ml_lab *lab, bool hub_too, const bool *which, GError **err);
/* Stops nebula on the nodes `which` selects (NULL: all). */
bool ml_nebula_stop(struct ml_lab *lab, const bool *which, GError **err);
/* The guest command that prints nebula's view of the client's tunnel to the server. */
char *ml_nebula_view_cmd(const struct ml_lab *lab);
/* nebula's own view of the client's tunnel to the server: print-tunnel's
 * output on the admin console, unparsed. */
char *ml_nebula_view(struct ml_lab *lab, GError **err);
