/* export --verify (export_verify.c): the export at export_dir tried in a fresh lab of topo
 * whose run directory is verify_dir; true when every exported path passed its check there.
 * *ret_verify (may be NULL): what was checked and how it went, for the manifest. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "topology/topology.h"

bool cmd_export_verify(const char *export_dir, const char *verify_dir,
                       const struct ml_topology *topo, struct json_object **ret_verify,
                       GError **err);
