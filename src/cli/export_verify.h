/* export --verify (export_verify.c): the export in the directory export_fd (its stage, read
 * through that descriptor only; shown names it in messages) tried in a fresh lab of topo whose
 * run directory is verify_dir; true when every exported path passed its check there.
 * *ret_verify (may be NULL): what was checked and how it went, for the manifest. topo must name
 * no libvirt hosts of its own (cmd_export.c: a received run directory never picks the host). */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "topology/topology.h"

bool cmd_export_verify(int export_fd, const char *shown, const char *verify_dir,
                       const struct ml_topology *topo, struct json_object **ret_verify,
                       GError **err);
