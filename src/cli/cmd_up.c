#include <stdio.h>

#include "cli/commands.h"
#include "cli/session.h"
#include "core/util.h"

static const char up_usage[] =
    "Usage: meshlab up [--connect URI] [--out DIR] [--force] [--keep-on-failure] FILE\n\n"
    "Builds the lab that FILE describes: an isolated libvirt bridge (no host address, no\n"
    "forwarding), a storage pool, one qcow2 overlay and NoCloud seed per guest, the guests\n"
    "booted in parallel, the guest firewall, and the dataplanes its paths need (kernel\n"
    "WireGuard through the hub, nebula, Headscale and tailscaled when their binaries are\n"
    "cached). Guests are driven only through the QEMU guest agent. The lab stays up until\n"
    "'meshlab down'. On failure or Ctrl-C everything created is removed, and the guests'\n"
    "consoles and cloud-init logs are kept in the run directory. One meshlab at a time\n"
    "works on a lab: a second up, run or down of it is refused while this one runs.\n\n"
    "  --out DIR            run directory (default runs/LAB-RUNID); it must be new, empty,\n"
    "                       or an earlier run of the same lab with --force, and writable\n"
    "                       by you alone\n"
    "  --force              replace the earlier run of this lab in --out DIR\n"
    "  --keep-on-failure    leave a failed lab in place for diagnosis\n"
    "  --connect URI        the libvirt host (default: MESHLAB_URI, else the one a state\n"
    "                       file of this lab records, else qemu:///system); on another\n"
    "                       host the images are uploaded once into its image pool, the\n"
    "                       seeds and consoles travel as storage volumes, and the KVM probe\n"
    "                       runs there (docs/remote.md)\n\n"
    "A topology that names hosts (hosts: and a host: per node) spreads the lab over them:\n"
    "each host's route to the others is read over its shell (SSH for qemu+ssh://) before\n"
    "anything is made, each gets the lab's network and pool, their bridges are stitched by\n"
    "VXLAN between the hosts' underlay addresses, and --connect is refused\n"
    "(docs/remote.md, One lab over several hosts).\n";

int cmd_up_main(int argc, char **argv)
{
    static const struct option options[] = {ML_SESSION_LONG_OPTIONS, {0}};
    struct ml_session_opts opts = {.verb = "up"};
    int status;
    if (!ml_session_args(argc, argv, options, up_usage, &opts, &status))
        return status;
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = cmd_load_topology(argv[optind], &err);
    if (!topo)
        return cmd_fail(err);
    ml_signals_install();
    struct ml_lab lab = {0};
    bool ok = ml_session_open(&lab, topo, &opts, &err) && ml_session_up(&lab, &opts, &err);
    ml_lab_clear(&lab);
    if (!ok)
        return cmd_fail(err);
    printf("lab %s is up; 'meshlab run %s' measures it, 'meshlab down %s' removes it\n", topo->name,
           argv[optind], topo->name);
    return ML_EXIT_OK;
}
