#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/export_verify.h"
#include "core/rundir.h"
#include "cli/session.h"
#include "core/util.h"
#include "dataplanes/dataplane.h"
#include "export/export.h"
#include "export/place.h"
#include "report/runfiles.h"
#include "results/json.h"
#include "topology/topology.h"
#include "virt/virt.h"

/* The most export reads of a run's topology.yaml: the loader's limit. */
#define TOPOLOGY_MAX (1u << 20)

static const char export_usage[] =
    "Usage: meshlab export --hub-address ADDR [--hub-interface IFACE] [--to DIR] [--verify]\n"
    "                      [--client-address NODE=ADDR ...]\n"
    "                      [--traffic GB [--relayed-share F] [--egress-price P]\n"
    "                      [--included-tb T] [--peak-mbit M] [--currency CODE]] RUN_DIR\n\n"
    "Writes what to deploy for each path whose checks passed in the run RUN_DIR, and nothing\n"
    "for one that failed or did not run: each node's files for kernel WireGuard (hub and\n"
    "direct: wg-quick files, the clients' as QR codes too, PNG and terminal text),\n"
    "wireguard-go, nebula, IPsec (strongSwan), OpenVPN, tinc, and Tailscale with Headscale\n"
    "(docs/export.md lists them). Keys are made for the export (none of the lab's keys ever\n"
    "left its guests). Beside them: hub/firewall.nft, the hub's nftables ruleset as it was in\n"
    "force in the run, checked with `nft -c`; hub/user-data, one cloud-init file for the hub\n"
    "VPS that writes, installs and starts all of it; SIZING.md, the hub's traffic and cost a\n"
    "month (the workload flags price another workload, as `meshlab report` does); README.md;\n"
    "and manifest.json, naming the run, each path's verdict and each file's SHA-256.\n\n"
    "  --hub-address ADDR     the hub VPS's public address or DNS name, as the clients will\n"
    "                         dial it (required)\n"
    "  --client-address NODE=ADDR\n"
    "                         the address a client is reached at by the other (IP or DNS\n"
    "                         name; its router must forward the path's UDP port to it), once\n"
    "                         per client: wireguard-direct's clients dial each other, and it\n"
    "                         is exported only when both are given\n"
    "  --hub-interface IFACE  the VPS's network interface, for its firewall and WireGuard's\n"
    "                         masquerade (default eth0)\n"
    "  --to DIR               where to write it (default RUN_DIR/export); must not exist, or\n"
    "                         be empty, in a directory of yours or root's that no one else\n"
    "                         can write, with no symbolic link on the way\n"
    "  --verify               try the export in a fresh lab of the run's topology first, and\n"
    "                         hand it over only if every exported path passes its check there:\n"
    "                         the hub boots from hub/user-data (its address mapped to its lab\n"
    "                         address on the clients), each client gets its exported files and\n"
    "                         runs their commands, no dataplane of meshlab's own runs; the\n"
    "                         lab's run directory is RUN_DIR/verify, and manifest.json records\n"
    "                         each check (needs what `meshlab up` needs, and minutes); a\n"
    "                         run whose topology places the lab on hosts (hosts:) is\n"
    "                         verified only on the one host --connect names\n\n"
    "Every file is mode 0600 in 0700 directories. The export is made beside DIR and moved\n"
    "into place at the end: a failed export leaves nothing. Needs the run directory whole\n"
    "(results.json, topology.yaml, rulesets/, each its own regular file: a symbolic link is\n"
    "never followed), nft (it checks the firewall, as root), and for\n"
    "nebula nebula-cert and nebula (Debian: nebula); wg-quick (Debian: wireguard-tools)\n"
    "checks each WireGuard file when installed. Exits 2 on bad arguments or a run directory\n"
    "it cannot read, 1 when nothing could be exported.\n";

/* One label of a DNS name (RFC 1123 2.1): 1 to 63 letters, digits and '-', not first or
 * last. */
static bool label_ok(const char *l)
{
    size_t n = strlen(l);
    if (n == 0 || n > 63 || l[0] == '-' || l[n - 1] == '-')
        return false;
    for (const char *p = l; *p; p++)
        if (!g_ascii_isalnum(*p) && *p != '-')
            return false;
    return true;
}

/* An IP address as inet_pton reads it, or a DNS name of RFC 1123 labels, at most 253
 * characters, whose last label begins with a letter, as every top-level domain does: `1e100`,
 * `10.0.0.256` and inet_aton's `127.1` are no names. What wg-quick's Endpoint, nebula's
 * static_host_map and a certificate's name take. */
static bool address_ok(const char *a)
{
    unsigned char buf[16];
    if (inet_pton(AF_INET, a, buf) == 1 || inet_pton(AF_INET6, a, buf) == 1)
        return true;
    if (strlen(a) > 253)
        return false;
    g_auto(GStrv) labels = g_strsplit(a, ".", -1);
    guint n = g_strv_length(labels);
    for (guint i = 0; i < n; i++)
        if (!label_ok(labels[i]))
            return false;
    return n && g_ascii_isalpha(labels[n - 1][0]);
}

static bool interface_ok(const char *i)
{
    size_t n = strlen(i);
    if (n == 0 || n > 15 || !strcmp(i, ".") || !strcmp(i, ".."))
        return false;
    for (const char *p = i; *p; p++)
        if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_' && *p != '.')
            return false;
    return true;
}

/* --client-address NODE=ADDR, each naming a client of the run's topology once, into ret by
 * node. */
static bool client_addresses(const struct ml_session_opts *opts, const struct ml_topology *t,
                             const char *ret[ML_MAX_NODES], GError **err)
{
    for (size_t i = 0; i < opts->n_client_address; i++) {
        const char *arg = opts->client_address[i];
        const char *eq = strchr(arg, '=');
        g_autofree char *name = eq ? g_strndup(arg, (gsize)(eq - arg)) : NULL;
        const char *addr = eq ? eq + 1 : NULL;
        int found = name ? ml_topology_find_node(t, name) : -1;
        size_t n = found < 0 ? SIZE_MAX : (size_t)found;
        bool shared = addr && !g_ascii_strcasecmp(addr, opts->hub_address);
        for (size_t k = 0; addr && k < t->n_nodes; k++)
            shared |= ret[k] && !g_ascii_strcasecmp(addr, ret[k]);
        const char *why = !eq                 ? "is not NODE=ADDR"
                          : n == SIZE_MAX     ? "names no node of the run's topology"
                          : n == t->hub       ? "names the hub, whose address is --hub-address"
                          : ret[n]            ? "names a client given already"
                          : !address_ok(addr) ? "has an address that is neither an IP address "
                                                "nor a DNS name"
                          : shared ? "gives an address another node has (two clients behind one "
                                     "router dial each other at their own network's addresses, "
                                     "not the router's)"
                                   : NULL;
        if (why) {
            GString *clients = g_string_new(NULL);
            for (size_t k = 0; k < t->n_nodes; k++)
                if (k != t->hub)
                    g_string_append_printf(clients, "%s%s", clients->len ? ", " : "",
                                           t->nodes[k].name);
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "--client-address '%s' %s; give NODE=ADDR once for each client (%s)", arg,
                        why, clients->str);
            g_string_free(clients, TRUE);
            return false;
        }
        ret[n] = addr;
    }
    return true;
}

/* RUN/results.json, the run directory's own regular file, checked against the schema (as report
 * reads it). */
static struct json_object *run_results(int run_fd, const char *dir, GError **err)
{
    g_autofree char *file = g_build_filename(dir, "results.json", NULL);
    return ml_results_read_at(run_fd, "results.json", file, err);
}

/* RUN/topology.yaml, the run directory's own regular file, and never the path results.json
 * names: a run directory another sent could name any file of this machine, and a topology's
 * errors quote what they found. */
static struct ml_topology *run_topology(int run_fd, const char *dir, GError **err)
{
    gsize len = 0;
    g_autofree char *text =
        ml_export_read_at(run_fd, dir, ML_SESSION_TOPOLOGY, TOPOLOGY_MAX, &len, err);
    if (!text) {
        g_autoptr(GError) e = g_steal_pointer(err);
        g_set_error(err, e->domain, e->code,
                    "%s Export rebuilds the configs from the run's own %s; a run of an older "
                    "meshlab has none, and needs a copy of the topology it ran put there by "
                    "someone who trusts it.",
                    e->message, ML_SESSION_TOPOLOGY);
        return NULL;
    }
    g_autofree char *file = g_build_filename(dir, ML_SESSION_TOPOLOGY, NULL);
    g_autoptr(MlTopology) topo = ml_topology_parse_data(file, text, len, err);
    if (!topo || !ml_paths_resolve(topo, err))
        return NULL;
    return g_steal_pointer(&topo);
}

/* The topology the verify lab is made of. A run directory is data someone may have sent: its
 * topology's hosts: would have meshlab (root, with its SSH keys) connect to whatever libvirt
 * hosts it names. Such a lab is verified only where --connect, on the command line, says, as
 * one lab on that one host; NULL with err otherwise. */
static struct ml_topology *verify_topology(const struct ml_topology *topo, GError **err)
{
    struct ml_topology *v = g_memdup2(topo, sizeof(*topo));
    if (!topo->n_hosts)
        return v;
    if (!ml_virt_uri_given() || ml_virt_uri_from_env()) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s:%d:%d: the run's topology places its lab on libvirt hosts (hosts:), and "
                    "a run directory, which anyone may have sent, never makes meshlab connect to "
                    "the hosts it names; give --connect URI to verify the whole lab on one host "
                    "of your choosing, or export without --verify",
                    topo->path, topo->hosts[0].line, topo->hosts[0].column);
        g_free(v);
        return NULL;
    }
    v->n_hosts = 0;
    memset(v->hosts, 0, sizeof(v->hosts));
    for (size_t i = 0; i < v->n_nodes; i++)
        v->nodes[i].host = 0;
    return v;
}

/* The export made in a stage beside `to`, tried in a fresh lab, its manifest given the
 * verdicts, and moved into place only when every exported path passed; otherwise removed, and
 * the lab's run directory (RUN_DIR/verify) keeps the evidence. The stage is written, read back
 * and placed through its descriptor alone, for the minutes the lab runs. */
static bool export_verified(const char *dir, const struct ml_export_opts *base,
                            struct json_object *results, const struct ml_topology *topo,
                            struct json_object **ret_manifest, GError **err)
{
    g_autofree struct ml_topology *vt = verify_topology(topo, err);
    struct ml_export_place place;
    if (!vt || !ml_export_place_open(base->to, "unverified", &place, err))
        return false;
    struct ml_export_opts o = *base;
    struct json_object *manifest = NULL;
    bool ok = ml_export_write_at(&o, results, topo, place.fd, &manifest, err);
    g_autofree char *verify_dir = g_build_filename(dir, "verify", NULL);
    if (ok) {
        ml_signals_install();
        g_autofree char *parent = g_path_get_dirname(o.to);
        g_autofree char *shown = g_build_filename(parent, place.stage, NULL);
        struct json_object *v = NULL;
        ok = cmd_export_verify(place.fd, shown, verify_dir, vt, &v, err);
        json_object_object_add(manifest, "verify", v);
        ok = ok && ml_export_manifest_write_at(place.fd, manifest, err) &&
             ml_export_place_commit(&place, err);
        if (!ok)
            g_prefix_error(err, "the export was not handed over (%s keeps the lab's evidence): ",
                           verify_dir);
    }
    ml_export_place_close(&place);
    if (ok)
        *ret_manifest = manifest;
    else
        json_object_put(manifest);
    return ok;
}

int cmd_export_main(int argc, char **argv)
{
    static const struct option options[] = {{"help", no_argument, NULL, 'h'},
                                            {"hub-address", required_argument, NULL, 'A'},
                                            {"hub-interface", required_argument, NULL, 'I'},
                                            {"to", required_argument, NULL, 'T'},
                                            {"verify", no_argument, NULL, 'V'},
                                            {"client-address", required_argument, NULL, 'C'},
                                            ML_WORKLOAD_LONG_OPTIONS,
                                            {0}};
    int status;
    struct ml_session_opts opts = {.verb = "export"};
    if (!ml_session_args(argc, argv, options, export_usage, &opts, &status))
        return status;
    g_autoptr(GError) err = NULL;
    if (opts.out_dir || !opts.hub_address) {
        fprintf(stderr, "meshlab export: %s\n\n%s",
                opts.out_dir ? "-o is not an option of export (--to DIR is)"
                             : "--hub-address is required: the address the clients will dial",
                export_usage);
        return ML_EXIT_USAGE;
    }
    const char *iface = opts.hub_interface ? opts.hub_interface : "eth0";
    if (!address_ok(opts.hub_address) || !interface_ok(iface)) {
        g_set_error(&err, ML_ERROR, ML_ERR_INPUT,
                    !address_ok(opts.hub_address)
                        ? "--hub-address '%s' is neither an IP address nor a DNS name"
                        : "--hub-interface '%s' is not an interface name (1 to 15 letters, "
                          "digits, '-', '_' or '.')",
                    !address_ok(opts.hub_address) ? opts.hub_address : iface);
        return cmd_fail(err);
    }
    const char *dir = argv[optind];
    int run_fd = ml_runfile_dir_open(dir, &err);
    if (run_fd < 0)
        return cmd_fail(err);
    struct json_object *results = run_results(run_fd, dir, &err);
    g_autoptr(MlTopology) topo = results ? run_topology(run_fd, dir, &err) : NULL;
    close(run_fd);
    if (!topo) {
        json_object_put(results);
        return cmd_fail(err);
    }
    g_autofree char *to = opts.to ? g_strdup(opts.to) : g_build_filename(dir, "export", NULL);
    struct json_object *manifest = NULL;
    struct ml_export_opts o = {
        .run_dir = dir, .hub_address = opts.hub_address, .hub_interface = iface, .to = to};
    bool ok = ml_session_reprice(results, &opts, &err) &&
              client_addresses(&opts, topo, o.client_address, &err);
    if (ok && opts.verify)
        ok = export_verified(dir, &o, results, topo, &manifest, &err);
    else if (ok)
        ok = ml_export_write(&o, results, topo, &manifest, &err);
    json_object_put(results);
    if (!ok)
        return cmd_fail(err);
    struct json_object *paths = ml_j_array(manifest, "paths");
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        printf("%-18s %-8s %s\n", ml_j_str(p, "name"), ml_j_str(p, "verdict"),
               ml_j_bool(p, "exported") ? "exported" : ml_j_str_or(p, "why_not", ""));
    }
    printf("export:   %s (%zu files; README.md says what goes where)\n", to,
           ml_j_len(ml_j_array(manifest, "files")) + 1);
    if (opts.verify)
        printf("verified: every exported path passed its check in a fresh lab (%s)\n",
               ml_j_str(ml_j_obj(manifest, "verify"), "run_dir"));
    json_object_put(manifest);
    return ML_EXIT_OK;
}
