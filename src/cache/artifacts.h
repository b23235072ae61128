/* Pinned third-party binaries the guests run (Tailscale, Headscale): downloaded on the host by
 * `meshlab fetch`, verified against the publisher's checksum file, kept in the cache and copied
 * into the guests, which never reach the internet. docs/tailscale.md describes the pins. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "cache/pins.h"

/* The artifact names `meshlab fetch` accepts, NULL-terminated: "tailscale", "headscale". */
extern const char *const ml_artifact_names[];

/* Where the publisher serves the named artifact: its URL, the URL of the checksum file beside
 * it and the artifact's entry there (NULL: the file holds one bare hash). False for an unknown
 * name. What a host that installs it on its own (an exported hub VPS) downloads and checks. */
bool ml_artifact_source(const char *name, const char **ret_url, const char **ret_sums_url,
                        const char **ret_sums_entry);

/* True when name is one of ml_artifact_names. */
bool ml_artifact_known(const char *name);
/* The version the named artifact is pinned at, or NULL for an unknown name. */
const char *ml_artifact_version(const char *name);

/* True if any artifact is not ready in cache_dir. ret_missing (may be NULL) gets one line per
 * file that is needed and absent, as an absolute path, so a report can say exactly what to
 * copy in or fetch. Download and checksum files come first; the tailscale binaries, which
 * `meshlab fetch tailscale` extracts from the verified archive, are listed only when the
 * archive itself is present. */
bool ml_artifacts_missing(const char *cache_dir, GString *ret_missing);

/* The verified artifact in cache_dir, or NULL when it is not there yet:
 *   "tailscale" -> the directory CACHE/tailscale-VERSION holding `tailscale` and `tailscaled`,
 *   "headscale" -> CACHE/downloads/headscale_VERSION_linux_amd64 (the binary);
 * where there is no download, a build from the Go modules (gobuild.h): CACHE/built/tailscale-V
 * and CACHE/built/headscale-V/headscale. Only what ml_artifact_fetch verified, or
 * ml_gobuild_programs built, counts; a file merely present does not. */
char *ml_artifact_path(const char *cache_dir, const char *name);

/* How the artifact in the cache was obtained, for results.json and fetch: {"name", "version",
 * "obtained": "downloaded from its publisher", "url", "sha256"}, or a build's provenance.json
 * (gobuild.h: "obtained": "built from its Go module", "go", "go_sum_sha256", "binaries": {NAME:
 * {"sha256", "path", "go", "modules": [{"path", "version", "sum"}]}}); NULL when it is not
 * there. */
struct json_object *ml_artifact_provenance(const char *cache_dir, const char *name);

/* Downloads (or, when the files are already in CACHE/downloads, only verifies) the named
 * artifact and its checksum file, then for tailscale extracts the two binaries. The checksum
 * file and the artifact are both recorded in CACHE/downloads/known-hashes, so a later copy
 * with other bytes is refused. $MESHLAB_ARTIFACT_MIRROR, when set, replaces the publishers'
 * directories with one base URL serving every file under its own name (a local mirror; the
 * tests use it). Errors: ML_ERR_INPUT for an unknown name, ML_ERR_FETCH, ML_ERR_HOST when tar
 * fails, ML_ERR_INTERRUPTED. */
bool ml_artifact_fetch(const char *cache_dir, const char *name, GError **err);
