/* `meshlab export`: what to deploy for each path a run verified, and nothing for one it did
 * not. A path is exportable when results.json says it was measured and every one of its
 * checks passed; its dataplane's export hook (dataplane.h) then adds its files, with keys made
 * fresh here. Around them: the hub's firewall as it was in force in the run (rulesets/), re-
 * checked by `nft -c`; one cloud-init user-data for the hub VPS (hubinit.h); QR codes of the
 * client configs; SIZING.md (the report's VPS sections); README.md; and manifest.json naming
 * the run, each path's verdict and every file's SHA-256. Every file is 0600 and every
 * directory 0700; the export is made in a stage beside the target and renamed into place, all
 * through descriptors (place.h), so a failed export leaves nothing half written and what is
 * handed over is what was written. It reads only the run directory's own regular files. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "topology/topology.h"

#define ML_EXPORT_SCHEMA "meshlab-export/1"

struct ml_export_opts {
    const char *run_dir;       /* the run: results.json, rulesets/ */
    const char *hub_address;   /* as the clients will reach the hub VPS */
    const char *hub_interface; /* the VPS's NIC ("eth0") */
    const char *to;            /* the export's directory; must not exist or be empty */
    /* Per node of the topology: the address the other clients dial it at (--client-address),
     * or NULL; for a path whose clients dial each other (wireguard-direct). */
    const char *client_address[ML_MAX_NODES];
};

/* One path of the run, as the export judges it. */
struct ml_export_path {
    const char *name;
    const char *verdict; /* "passed", "failed", "not-run" */
    const char *why;     /* why it was not exported, or NULL */
};

/* Pure: the verdict of a results.json path: "passed" when its status is "measured" and every
 * check is ok, "not-run" when its status says it did not run, "failed" otherwise. */
const char *ml_export_verdict(struct json_object *path);

/* Pure: the hub's firewall for the VPS from the `nft list ruleset` the run saved: the table
 * `inet meshlab_fw` alone (what the dataplanes add is theirs to add), counters zeroed, the lab
 * NIC's name replaced by iface, wrapped so `nft -f` replaces the table and touches no other.
 * NULL with err when the text holds no such table. */
char *ml_export_firewall(const char *ruleset, const char *iface, const char *label, GError **err);

/* Pure: a wg-quick file without its comment lines, as its QR code carries it. */
char *ml_export_without_comments(const char *conf);

/* Checks an nft script with `nft -c -f` (the kernel parses it; nothing is loaded). */
bool ml_export_nft_check(const char *script, GError **err);

/* Writes manifest as manifest.json (0600) in the directory dirfd. */
bool ml_export_manifest_write_at(int dirfd, struct json_object *manifest, GError **err);

/* Makes the export of the run whose results.json is results and whose topology is topo in the
 * directory dirfd (a stage of place.h): o->run_dir's saved rulesets read as its own files only;
 * *ret_manifest (may be NULL) is the manifest written. */
bool ml_export_write_at(const struct ml_export_opts *o, struct json_object *results,
                        const struct ml_topology *topo, int dirfd,
                        struct json_object **ret_manifest, GError **err);

/* ml_export_write_at into a stage beside o->to (ml_export_place_open, kind "partial"), renamed
 * to o->to when it is whole. */
bool ml_export_write(const struct ml_export_opts *o, struct json_object *results,
                     const struct ml_topology *topo, struct json_object **ret_manifest,
                     GError **err);
