#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "core/util.h"
#include "virt/virt.h"

static const struct {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *summary;
} verbs[] = {
    {"up", cmd_up_main, "Build the lab's guests on an isolated bridge and bring up its tunnels"},
    {"run", cmd_run_main,
     "Measure every path (bringing the lab up and down if needed); write a report"},
    {"exec", cmd_exec_main, "Run a command in a guest of a running lab, streaming its output"},
    {"console", cmd_console_main, "Attach to a guest's serial console (a root shell)"},
    {"down", cmd_down_main, "Remove everything a lab created, by lab name or topology file"},
    {"status", cmd_status_main, "List labs that exist on this host and what they hold"},
    {"validate", cmd_validate_main, "Check a topology file without touching libvirt"},
    {"check", cmd_check_main,
     "Check the host: libvirt, QEMU, KVM or TCG, disk, memory, image cache"},
    {"fetch", cmd_fetch_main, "Download and prepare guest images into the cache"},
    {"report", cmd_report_main, "Render a run's report.md, report.html and pictures again"},
    {"compare", cmd_compare_main, "Compare two runs' figures against their own noise"},
    {"export", cmd_export_main,
     "Write the configs a run verified, for a hub VPS and its clients, with fresh keys"},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: meshlab COMMAND [ARGS]\n\n"
               "Builds a lab of QEMU guests on an isolated libvirt bridge, brings up WireGuard\n"
               "paths between them, measures each path and writes results.json and report.md.\n\n"
               "Commands:\n");
    for (size_t i = 0; i < G_N_ELEMENTS(verbs); i++)
        fprintf(f, "  %-9s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(f, "\n'meshlab COMMAND --help' describes a command. Every command takes\n"
               "  --connect URI      the libvirt connection (or a libvirt URI alias), before or\n"
               "                     after COMMAND; MESHLAB_URI below when not given\n"
               "Environment:\n"
               "  MESHLAB_CACHE_DIR  image cache (default /var/cache/meshlab)\n"
               "  MESHLAB_STATE_DIR  lab state and storage pools (default /var/lib/meshlab)\n"
               "  MESHLAB_URI        libvirt connection (default " ML_VIRT_DEFAULT_URI "); a\n"
               "                     lab's own commands (down, exec, console, and run on a lab\n"
               "                     an up left) use the connection its up recorded when\n"
               "                     neither is given\n");
}

/* Takes "--connect URI" and "--connect=URI" out of argv[from..], up to a "--" (after it, the
 * words are a guest command's), and sets the connection. False, with the reason on stderr,
 * when one has no URI. */
static bool take_connect(int *argc, char **argv, int from)
{
    int out = from;
    bool rest = false;
    for (int i = from; i < *argc; i++) {
        const char *a = argv[i];
        if (rest || (strcmp(a, "--connect") != 0 && !g_str_has_prefix(a, "--connect="))) {
            rest = rest || !strcmp(a, "--");
            argv[out++] = argv[i];
            continue;
        }
        const char *uri = a[9] == '=' ? a + 10 : i + 1 < *argc ? argv[++i] : NULL;
        /* "--connect --" or "--connect --json" is a missing URI, not a URI. */
        if (!uri || !*uri || (a[9] != '=' && uri[0] == '-')) {
            fprintf(stderr, "meshlab: --connect needs a libvirt URI (qemu:///system, "
                            "qemu+ssh://root@server/system) or a URI alias\n");
            return false;
        }
        ml_virt_set_uri(uri);
    }
    *argc = out;
    argv[out] = NULL;
    return true;
}

/* --connect's or MESHLAB_URI's URI is read as libvirt reads it (topology/uri.h), and one that
 * meshlab cannot read so is refused: what meshlab checks of a connection (is it this machine's,
 * is it the recorded one, how to reach its shell) must be what libvirt uses. */
static bool check_given_uri(void)
{
    const char *uri = ml_virt_uri_given();
    g_autoptr(GError) e = NULL;
    if (!uri || ml_uri_is_alias(uri))
        return true;
    g_autoptr(MlUri) u = ml_uri_parse(uri, &e);
    if (u)
        return true;
    g_autofree char *shown = ml_uri_public(uri);
    g_autofree char *safe = ml_escape_controls(shown);
    fprintf(stderr,
            "meshlab: %s '%s': %s; give a libvirt URI like qemu+ssh://USER@HOST/system, or put "
            "it in libvirt.conf's uri_aliases and give the alias\n",
            ml_virt_uri_from_env() ? "MESHLAB_URI" : "--connect", safe, e->message);
    return false;
}

int main(int argc, char **argv)
{
    ml_log_init();
    if (!take_connect(&argc, argv, 1) || !check_given_uri())
        return ML_EXIT_USAGE;
    if (argc < 2) {
        usage(stderr);
        return ML_EXIT_USAGE;
    }
    const char *verb = argv[1];
    if (!strcmp(verb, "--help") || !strcmp(verb, "-h") || !strcmp(verb, "help")) {
        usage(stdout);
        return ML_EXIT_OK;
    }
    if (!strcmp(verb, "--version")) {
        printf("meshlab %s\n", MESHLAB_VERSION);
        return ML_EXIT_OK;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(verbs); i++)
        if (!strcmp(verb, verbs[i].name))
            return verbs[i].main(argc - 1, argv + 1);
    fprintf(stderr, "meshlab: unknown command '%s'; 'meshlab --help' lists the commands\n", verb);
    return ML_EXIT_USAGE;
}
