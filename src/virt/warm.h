/* The warm start: a guest saved while cloud-init's hold keeps it waiting (booted, agent
 * answering, not yet configured), restored by a later `up` of the same lab instead of
 * booted. One saved guest per lab node, because libvirt restores a domain only with the
 * UUID, MAC and disk it was saved with: <cache>/warm/LAB/NODE/ holds the memory image
 * (state), the overlay as it was at the save (overlay.qcow2), and the key of everything
 * that must not have changed (key). Restored twins would draw the same random numbers:
 * every guest that continues from a saved image gets the host's fresh randomness and
 * clock (ml_warm_release_line) with its release, before cloud-init runs. */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>
#include <stdbool.h>

#include "cache/image.h"

/* MESHLAB_WARM=off: every up boots cold and saves nothing. */
bool ml_warm_enabled(void);

/* The key of a saved guest: the image (name, hash, kernel command line), QEMU's and
 * libvirt's versions, the accelerator, the domain XML with the run id taken out, and media:
 * what its CDs hold (NULL: nothing beyond the XML). A guest restored from memory keeps the
 * CD's size and blocks its kernel read at boot: the same path with other files behind it
 * reads past the old end as I/O errors (a hub's artifacts CD grown from Headscale alone to
 * Headscale and Tailscale did), so what is on the CD is part of the key. */
char *ml_warm_key(virConnectPtr conn, const struct ml_image *image, bool kvm, const char *xml,
                  const char *run_id, const char *media, GError **err);

char *ml_warm_dir(const char *lab, const char *node);

/* True when LAB/NODE has a complete saved guest under this key. */
bool ml_warm_have(const char *lab, const char *node, const char *key);

/* Copies the saved overlay to dest (the lab's pool), for the domain to restore onto. */
bool ml_warm_place_overlay(const char *lab, const char *node, const char *dest, GError **err);

/* Saves a running guest (held before cloud-init) under key: pauses it, writes its memory
 * (a memory-only snapshot, in the save format ml_warm_restore reads) and a copy of its
 * overlay, and lets it go on; seconds taken in *ret_s. */
bool ml_warm_save(virDomainPtr dom, const char *lab, const char *node, const char *key,
                  const char *overlay, double *ret_s, GError **err);

/* Starts the domain whose XML is xml from LAB/NODE's saved state. */
bool ml_warm_restore(virConnectPtr conn, const char *lab, const char *node, const char *xml,
                     GError **err);

/* Waits, up to 60 s, for a guest's agent to answer: one just restored (or paused for its save)
 * answers again only after a moment. */
bool ml_warm_agent_back(virDomainPtr dom, GError **err);

/* The line that releases cloud-init's hold (images/debian-12/customize.sh), written into its
 * FIFO: "go NS HEX\n", the host's clock in ns since the epoch and 64 bytes of the host's
 * randomness in hex. The hold sets the guest's clock from it and writes the bytes to
 * /dev/urandom before RNDRESEEDCRNG, before anything else runs: Debian's cloud kernel has no
 * vmgenid, so nothing else tells a restored guest that it is a copy. The caller clears it
 * (explicit_bzero) once written. */
#define ML_WARM_RELEASE_LINE_MAX 160
bool ml_warm_release_line(char line[ML_WARM_RELEASE_LINE_MAX], GError **err);

/* The saved guests in the cache (of one lab, or all when lab is NULL), one line each:
 * "LAB/NODE SIZE key KEY". */
GPtrArray *ml_warm_list(const char *lab);

/* Removes the saved guests of one lab (all when lab is NULL); cb hears each. */
bool ml_warm_purge(const char *lab, void (*cb)(const char *what, void *opaque), void *opaque,
                   GError **err);
