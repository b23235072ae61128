/* Guest images: the catalogue in images/, the offline debian-12 build, and the
 * choice between the topology's preferred image and its declared fallback. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "topology/topology.h"

struct ml_image {
    char *name;            /* the image that runs */
    char *requested;       /* the topology's preferred image */
    char *fallback_reason; /* NULL when the preferred image runs */
    char *base;            /* qcow2 base every overlay backs onto */
    char *kernel;          /* direct kernel boot; NULL boots the disk */
    char *initrd;
    char *cmdline;
    char *sha256;           /* of the base file */
    bool seed_by_agent;     /* holds cloud-init until the host writes the seed through the
                             * agent and says go (no seed CD), and reports readiness in a
                             * file; only such an image can be saved for a warm start */
};
void ml_image_clear(struct ml_image *img);

/* Makes sure the topology's image (or its fallback) is in the cache. Only
 * `meshlab fetch` downloads: here a preferred image that is not cached is
 * passed over for the fallback, and the reason is recorded. */
bool ml_image_resolve(const struct ml_topology *topo, bool force_tcg, struct ml_image *ret,
                      GError **err);

/* Builds (or finds cached) the debian-12 image from the host's Debian mirror. */
bool ml_image_debian_prepare(const char *cache_dir, struct ml_image *ret, GError **err);

/* The cache key of the debian-12 recipe: SHA-256 over the recipe files and every option of
 * the build. */
char *ml_image_debian_key(GError **err);

/* The mmdebstrap command that builds the root file system: PACKAGES comma-separated, the
 * recipe's HOOK_SCRIPT; the .debs come in from the deb cache DEBS and go out to DEBS_OUT. */
char **ml_image_debian_mmdebstrap_argv(const char *packages, const char *hook_script,
                                       const char *debs, const char *debs_out, const char *rootfs,
                                       const char *mirror);

/* A kernel from any cached debian-12 build, for the KVM probe; NULL if none. */
char *ml_image_any_cached_kernel(const char *cache_dir);
