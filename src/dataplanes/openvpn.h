/* openvpn-hub's pure parts: the server's status file and the configurations and
 * commands it renders, for its unit test, its netns driver and the fuzzer. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "topology/topology.h"

#define ML_OPENVPN_CLIENTS_MAX 16

/* One CLIENT_LIST row of the status file. */
struct ml_openvpn_client {
    char name[64]; /* Common Name: the node's name, its certificate's CN */
    char real[64]; /* Real Address, ADDR:PORT */
    char virt[16]; /* Virtual Address, the overlay address ("" before it has one) */
    long long bytes_received, bytes_sent; /* the hub's link bytes from and to it */
    long long since;                      /* Connected Since (time_t) */
    char cipher[32];                      /* Data Channel Cipher (2.6); "" when the row has none */
};

/* The whole file: status-version 2 (commas) or 3 (tabs). */
struct ml_openvpn_status {
    long long time; /* TIME's time_t: when the server wrote it */
    int dco;        /* GLOBAL_STATS dco_enabled: 0, 1, or -1 when absent */
    size_t n_clients;
    struct ml_openvpn_client clients[ML_OPENVPN_CLIENTS_MAX];
};

/* Pure: reads a whole status file, TITLE to END. False, ret zeroed, for anything
 * else: a file cut short while the server rewrote it, a row of another shape, a
 * number that is not one, more clients than fit. */
bool ml_openvpn_status_parse(const char *text, struct ml_openvpn_status *ret);
/* The row of the client named name, or NULL. */
const struct ml_openvpn_client *ml_openvpn_status_client(const struct ml_openvpn_status *s,
                                                         const char *name);

/* Pure: the SHA-256 fingerprint in `openssl x509 -fingerprint -sha256 -noout`'s
 * output ("sha256 Fingerprint=AA:BB:...", 32 pairs), into ret; false otherwise. */
bool ml_openvpn_fingerprint_parse(const char *text, char ret[96]);

/* The command that makes node's key and self-signed certificate in dir (stopping an
 * openvpn started from dir before) and prints only the certificate's fingerprint. */
char *ml_openvpn_keygen_command(const struct ml_topology *t, size_t node, const char *dir);
/* The hub's server configuration: fp[i] is node i's fingerprint (the hub's unread). */
char *ml_openvpn_render_server(const struct ml_topology *t, const char *dir, char *const *fp);
/* A client's configuration, pinning the hub's fingerprint. */
char *ml_openvpn_render_client(const struct ml_topology *t, size_t node, const char *dir,
                               const char *hub_fp);
/* The command that takes node's configuration on stdin and starts openvpn as a
 * daemon from dir (on the hub also each client's fixed address and forwarding). */
char *ml_openvpn_start_command(const struct ml_topology *t, size_t node, const char *dir);
/* node's overlay address, 10.17.0.<last octet of its tunnel_address>. */
char *ml_openvpn_address(const struct ml_topology *t, size_t node, char buf[16]);
/* The UDP port the hub's server listens on. */
#define ML_OPENVPN_PORT 1194
