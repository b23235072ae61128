#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "cli/commands.h"
#include "virt/lab.h"
#include "core/util.h"
#include "topology/name.h"
#include "virt/virt.h"

static const char console_usage[] =
    "Usage: meshlab console [--connect URI] LAB NODE\n\n"
    "Attaches this terminal to the serial console of the guest NODE of the running lab\n"
    "LAB (see 'meshlab status'), through 'virsh console --force' (it takes the console\n"
    "from another session that holds it). The lab's guests give their serial console,\n"
    "and nothing else, a root shell without a password: there is no password anywhere\n"
    "and no SSH. Ctrl-] leaves. Everything the console shows is also kept in the\n"
    "guest's console log. 'meshlab exec' runs single commands without a terminal.\n\n"
    "  --connect URI  the lab's libvirt host (default: the one its up recorded)\n";

/* A domain defined before the serial console became a pty logs to a file only. */
static bool has_pty_console(virDomainPtr dom)
{
    char *xml = virDomainGetXMLDesc(dom, 0);
    bool ok = xml && strstr(xml, "<console type='pty'");
    free(xml);
    virResetLastError();
    return ok;
}

int cmd_console_main(int argc, char **argv)
{
    int status;
    if (!cmd_simple_args(argc, argv, console_usage, 2, &status))
        return status;
    const char *lab = argv[optind], *node = argv[optind + 1];
    g_autoptr(GError) err = NULL;
    if (!ml_name_check_guest(lab, node, &err))
        return cmd_fail(err);
    g_autofree char *uri = ml_lab_node_uri(lab, node);
    virConnectPtr conn = ml_virt_connect(uri, &err);
    if (!conn)
        return cmd_fail(err);
    virDomainPtr dom = cmd_find_guest(conn, lab, node, &err);
    if (!dom) {
        virConnectClose(conn);
        return cmd_fail(err);
    }
    bool pty = has_pty_console(dom);
    g_autofree char *domain = g_strdup(virDomainGetName(dom));
    virDomainFree(dom);
    virConnectClose(conn);
    if (!pty) {
        fprintf(stderr,
                "meshlab: %s of lab %s has no serial console to attach to (its guests were "
                "defined by an older meshlab); 'meshlab down %s' and 'meshlab up FILE' build "
                "them again with one\n",
                node, lab, lab);
        return ML_EXIT_FAIL;
    }
    printf("connected to %s's serial console; Ctrl-] leaves; root logs in without a password "
           "on this console only\n",
           node);
    fflush(stdout);
    const char *const args[] = {"virsh", "-c", uri, "console", "--force", domain, NULL};
    execvp(args[0], (char *const *)args);
    fprintf(stderr, "meshlab: cannot run virsh: %s; install libvirt-clients (scripts/deps.sh)\n",
            g_strerror(errno));
    return ML_EXIT_FAIL;
}
