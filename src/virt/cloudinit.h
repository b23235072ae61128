/* NoCloud seeds: user-data, meta-data and network-config rendered from the
 * templates in cloud-init/, and the seed ISO built from them. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "topology/plan.h"
#include <libvirt/libvirt.h>

#include "core/leftovers.h"

struct ml_seed {
    char *user_data;
    char *meta_data;
    char *network_config;
};
void ml_seed_clear(struct ml_seed *seed);

/* Replaces each {{name}} in text by its value; an unknown name is an error, so
 * a template can never ship a placeholder to a guest. */
char *ml_template_expand(const char *text, const char *const *vars, GError **err);

bool ml_seed_render(const struct ml_plan *plan, size_t guest, struct ml_seed *ret, GError **err);

/* Writes the seed ISO (volume label cidata) to path with cloud-localds. */
/* A MIME multipart user-data: first (a #cloud-config the lab does not write, as export --verify
 * hands a hub its exported file, byte for byte), then the lab's own part with a merge_how that
 * appends its lists and adds its keys without replacing first's (cloud-init's "Merging
 * user-data sections": list append, dict no_replace and recurse_list). */
char *ml_seed_multipart(const char *first, const char *lab_part);

bool ml_seed_write_iso(const struct ml_seed *seed, const char *path, GError **err);

/* Where an image that takes its seed from the host (ml_image.seed_by_agent) looks for it:
 * NoCloud's seed directory. Its hold (images/debian-12/customize.sh) writes
 * ML_SEED_GUEST_HELD once cloud-init is imported, then keeps it waiting on the FIFO
 * ML_SEED_GUEST_RELEASE until the host writes its release line (ml_warm_release_line); it
 * loads ML_SEED_GUEST_FIREWALL, where the host wrote one, before cloud-init runs. */
#define ML_SEED_GUEST_DIR "/var/lib/cloud/seed/nocloud"
#define ML_SEED_GUEST_HELD "/run/meshlab/held"
#define ML_SEED_GUEST_RELEASE "/run/meshlab/release"
#define ML_SEED_GUEST_FIREWALL "/run/meshlab/firewall.nft"
#define ML_SEED_GUEST_READY "/run/meshlab/ready"

/* Writes the seed into the guest's seed directory through the guest agent, its meta-data
 * with dsmode: local (cloud-init's one stage does everything). */
bool ml_seed_push(virDomainPtr dom, const struct ml_seed *seed, GError **err);
