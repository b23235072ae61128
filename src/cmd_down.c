#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "lab.h"
#include "plan.h"
#include "topology.h"
#include "util.h"
#include "virt.h"

static const char down_usage[] =
    "Usage: meshlab down NAME|FILE\n\n"
    "Removes every libvirt object that carries the lab's tag: its domains (by their\n"
    "meshlab metadata), its network, its storage pool and the volumes in it, and its\n"
    "state file. Nothing else is touched. Works without the topology file (give the\n"
    "lab's name), and is safe to run again: a lab that is gone is reported as such.\n";

static void print_removed(const char *what, void *opaque)
{
    int *n = opaque;
    printf("removed %s\n", what);
    (*n)++;
}

int cmd_down_main(int argc, char **argv)
{
    int status;
    if (!cmd_simple_args(argc, argv, down_usage, 1, &status))
        return status;
    const char *arg = argv[optind];
    g_autoptr(GError) err = NULL;
    g_autofree char *lab = NULL;
    if (g_file_test(arg, G_FILE_TEST_IS_REGULAR)) {
        g_autoptr(MlTopology) topo = ml_topology_load(arg, &err);
        if (!topo)
            return cmd_fail(err);
        lab = g_strdup(topo->name);
    } else if (strchr(arg, '/') || g_str_has_suffix(arg, ".yaml") ||
               g_str_has_suffix(arg, ".yml")) {
        fprintf(stderr,
                "meshlab: '%s' is not a file; give the lab's name instead "
                "('meshlab status' lists them)\n",
                arg);
        return ML_EXIT_USAGE;
    } else {
        lab = g_strdup(arg);
    }
    virConnectPtr conn = ml_virt_connect(ml_virt_uri(), &err);
    if (!conn)
        return cmd_fail(err);
    int removed = 0;
    int n = ml_virt_teardown(conn, lab, print_removed, &removed, &err);
    virConnectClose(conn);
    if (n >= 0)
        ml_lab_state_remove(lab, print_removed, &removed);
    if (n < 0)
        return cmd_fail(err);
    if (removed == 0)
        printf("lab %s: nothing to remove\n", lab);
    return ML_EXIT_OK;
}
