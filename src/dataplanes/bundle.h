/* What `meshlab export` hands over, as the dataplanes build it: each dataplane's export hook
 * (dataplane.h) adds the files its verified paths need (a client's wg0.conf, nebula's
 * certificates) and what the hub VPS must hold and run (files, packages, sysctls, commands),
 * from which export/ writes one cloud-init user-data. The hooks make their own keys, fresh:
 * nothing here comes from the lab's guests. Pure data; export/ writes it. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

#include "topology/topology.h"

enum {
    ML_BUNDLE_SECRET = 1 << 0,   /* holds a private key or a CA key */
    ML_BUNDLE_QR = 1 << 1,       /* also as a QR code (PNG and terminal text) for a phone's app */
    ML_BUNDLE_WG_QUICK = 1 << 2, /* a wg-quick file: checked with `wg-quick strip` */
};

/* One file of the export, below its directory. node: whose it is (SIZE_MAX: nobody's, a
 * script or a note); install: where it goes on that node ("/etc/wireguard/wg0.conf"; NULL:
 * it is not installed as is). */
struct ml_bundle_file {
    char *rel;
    char *content;
    unsigned flags;
    size_t node;
    char *install;
    char *what; /* one line for the export's README */
};

/* A file the hub's user-data writes. */
struct ml_bundle_hub_file {
    char *path;
    char *content;
    unsigned mode; /* 0600, 0644 */
};

struct ml_bundle {
    const struct ml_topology *topo;
    const char *hub_address;   /* as the clients reach the hub: "203.0.113.10", "hub.example" */
    const char *hub_interface; /* the hub's public NIC, as its kernel names it: "eth0" */
    const char *label;         /* "lab three-guest, run 20261203-...": the files' first line */
    /* Per node, as the other clients reach it (export --client-address NODE=ADDR): the address
     * of a client that others dial directly (wireguard-direct); NULL where none was given. */
    const char *client_address[ML_MAX_NODES];
    GPtrArray *files;        /* struct ml_bundle_file */
    GPtrArray *hub_files;    /* struct ml_bundle_hub_file */
    GPtrArray *hub_packages; /* "COMMAND PACKAGE": installed when COMMAND is missing */
    GPtrArray *hub_sysctls;  /* "key = value" */
    GPtrArray *hub_commands; /* shell lines the hub runs last, in order */
    /* Per node (clients): the shell lines that start what its files hold. */
    GPtrArray *client_commands[ML_MAX_NODES];
    GPtrArray *checks; /* "FILE\tCHECK": a check a hook made of its file, and it passed */
};

struct ml_bundle *ml_bundle_new(const struct ml_topology *topo, const char *hub_address,
                                const char *hub_interface, const char *label);
void ml_bundle_free(struct ml_bundle *b);
typedef struct ml_bundle MlBundle;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MlBundle, ml_bundle_free)

/* Adds a file (content taken over). */
struct ml_bundle_file *ml_bundle_add(struct ml_bundle *b, const char *rel, char *content,
                                     unsigned flags, size_t node, const char *install,
                                     const char *what);
void ml_bundle_hub_file(struct ml_bundle *b, const char *path, const char *content, unsigned mode);
/* Once each: a package the hub installs when command is not found. */
void ml_bundle_hub_package(struct ml_bundle *b, const char *command, const char *package);
void ml_bundle_hub_sysctl(struct ml_bundle *b, const char *key, const char *value);
void ml_bundle_hub_command(struct ml_bundle *b, const char *line);
void ml_bundle_checked(struct ml_bundle *b, const char *rel, const char *check);
void ml_bundle_client_command(struct ml_bundle *b, size_t node, const char *line);

/* The file at rel in the export, or NULL. */
const struct ml_bundle_file *ml_bundle_find(const struct ml_bundle *b, const char *rel);
/* Wipes (explicit_bzero: no compiler drops it before the free) and frees an export hook's
 * private key texts and frees their public halves or certificates, node by node (ML_MAX_NODES
 * each; NULL entries and a NULL pub are skipped). */
void ml_bundle_keys_free(char **priv, char **pub);

/* "ADDRESS:PORT" of the hub as the clients dial it ("[ADDRESS]:PORT" for an IPv6 address). */
char *ml_bundle_endpoint(const struct ml_bundle *b, unsigned port);
/* The same for any address: a client's (client_address). */
char *ml_bundle_endpoint_of(const char *address, unsigned port);
