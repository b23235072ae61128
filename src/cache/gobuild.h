/* Tailscale and Headscale built from their Go modules, where the publishers' downloads cannot
 * be reached: the project's own module (images/go: go.mod and go.sum committed) requires both at
 * the pinned versions, so go.sum pins the hash of every module that goes into them, and the build
 * runs with -mod=readonly, CGO_ENABLED=0, -trimpath and a Go that is the machine's own
 * (GOTOOLCHAIN=local). The binaries go into the cache, with their provenance (every module and
 * its hash, as `go version -m` reads them from the binary, and the Go that built them). */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

/* A Go toolchain: the program, and its version ("1.26.8"). */
struct ml_go {
    char *path;
    char *version;
};
void ml_go_clear(struct ml_go *go);

/* Where a build of name ("tailscale", "headscale") lives: CACHE/built/NAME-VERSION. */
char *ml_gobuild_dir(const char *cache_dir, const char *name);

/* The module's directory: ml_data_dir("images/go"). */
char *ml_gobuild_module_dir(void);

/* The Go version the module asks for at least (go.mod's go line), or NULL with err. */
char *ml_gobuild_wanted_go(const char *module_dir, GError **err);

/* A Go the module accepts: `go` on PATH, else /usr/local/go/bin/go, at least the version go.mod
 * names. False with err (ML_ERR_HOST) saying what is there and what to install. */
bool ml_go_find(const char *module_dir, struct ml_go *ret, GError **err);

/* Pure: whether version a ("1.26.8", "1.27rc1", "1.26") is at least b. */
bool ml_go_version_at_least(const char *a, const char *b);

/* Pure: `go version -m`'s lines for one binary as JSON: {"go", "path", "modules": [{"path",
 * "version", "sum"}]}, the main module first; NULL when text is not that. */
struct json_object *ml_gobuild_parse_version_m(const char *text);

/* Builds tailscale, tailscaled and headscale from the module into the cache, as
 * CACHE/built/tailscale-VERSION/{tailscale,tailscaled,provenance.json} and
 * CACHE/built/headscale-VERSION/{headscale,provenance.json}, in one `go build` (they share most
 * of their modules). Shows its progress; a build cut short leaves only a directory that down's
 * sweep removes (.build-gomod-PID-XXXXXX). Each binary must say the pinned version. */
bool ml_gobuild_programs(const char *cache_dir, GError **err);
