/* NoCloud seeds: user-data, meta-data and network-config rendered from the
 * templates in cloud-init/, and the seed ISO built from them. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "topology/plan.h"
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
bool ml_seed_write_iso(const struct ml_seed *seed, const char *path, GError **err);
