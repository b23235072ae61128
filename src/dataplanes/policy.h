/* The guest firewall and the path policies put in force in the guests, with the rulesets in
 * force saved beside the run. */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include "dataplanes/dataplane.h"
#include "virt/lab.h"

/* Loads the seed's guest firewall fw (ml_nft_firewall of ml_dataplane_ports) into every
 * guest; summary (ml_nft_firewall_summary) goes to the progress line. */
bool ml_policy_firewall(struct ml_lab *lab, const char *fw, const char *summary, GError **err);
/* Puts ops' policy in force on every guest, saves the rulesets in force under
 * RUN_DIR/rulesets/PATH/, and lets the dataplane settle. in_force (or NULL): one ruleset a guest,
 * as `nft list ruleset` printed it; when it holds them, ops' policy is the one they show, in
 * force since another path of its group entered it, and only the saving and the settling are
 * done (the rulesets are loaded once per group, not once per path); when it is empty it is
 * filled with what this entry loaded. Free them with ml_policy_rulesets_clear. */
bool ml_policy_enter(struct ml_lab *lab, const struct ml_path_ops *ops, char **in_force,
                     GError **err);
void ml_policy_rulesets_clear(char **in_force);
