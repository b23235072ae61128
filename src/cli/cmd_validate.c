#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/print.h"
#include "dataplanes/dataplane.h"
#include "topology/topology.h"
#include "core/util.h"

struct ml_topology *cmd_load_topology(const char *path, GError **err)
{
    g_autoptr(MlTopology) topo = ml_topology_load(path, err);
    if (!topo || !ml_paths_resolve(topo, err))
        return NULL;
    return g_steal_pointer(&topo);
}

int cmd_fail(const GError *err)
{
    g_autofree char *message = ml_escape_controls(err->message); /* guest text, file content */
    fprintf(stderr, "meshlab: %s\n", message);
    if (err->domain == ML_ERROR && err->code == ML_ERR_INPUT)
        return ML_EXIT_USAGE;
    if (err->domain == ML_ERROR && err->code == ML_ERR_INTERRUPTED)
        return ML_EXIT_INTERRUPTED;
    return ML_EXIT_FAIL;
}

bool cmd_simple_args(int argc, char **argv, const char *usage, int operands, int *ret_status)
{
    return cmd_print_args(argc, argv, usage, operands, NULL, ret_status);
}

static const char validate_usage[] =
    "Usage: meshlab validate FILE\n\n"
    "Checks a topology file without touching libvirt. Prints nothing and exits 0 when it\n"
    "is valid; otherwise prints one line, FILE:LINE:COLUMN: the rule broken, and exits 2.\n\n"
    "The paths measure.paths may name (every dataplane's, from its registry):\n";

int cmd_validate_main(int argc, char **argv)
{
    int status;
    g_autofree char *names = ml_path_names();
    g_autofree char *usage = g_strdup_printf("%sPaths: %s\n", validate_usage, names);
    if (!cmd_simple_args(argc, argv, usage, 1, &status))
        return status;
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = cmd_load_topology(argv[optind], &err);
    if (!topo)
        return cmd_fail(err);
    return ML_EXIT_OK;
}
