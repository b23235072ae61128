/* export --verify: the export tried in a fresh lab before it is handed over. The hub boots with
 * the exported hub/user-data, byte for byte, as the first part of its cloud-init (the lab's own
 * part after it only names the guest, its address and hosts); the lab's images run cloud-init's
 * init stage at boot and no other, so its runcmd is then run through cloud-init itself
 * (`cloud-init single`). Each client gets the exported files at their install paths and runs
 * the commands the manifest gives, and nothing else of meshlab's dataplanes runs: no key, config
 * or daemon of the lab's own. The hub's public address is mapped to its lab address on the
 * clients only (a DNAT in their output path for an IPv4 address, /etc/hosts for a name), so no
 * packet is sent anywhere but between the lab's guests. Then every exported path's check runs
 * as in a run (the path policy in force, the probe, the hub's NIC, the dataplane's own view),
 * and the export is handed over only if each passed. */
#include <arpa/inet.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/export_verify.h"
#include "cli/session.h"
#include "core/util.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/policy.h"
#include "export/export.h"
#include "export/hubinit.h"
#include "export/place.h"
#include "measure/measure.h"
#include "results/json.h"
#include "virt/agent.h"
#include "virt/lab.h"
#include "topology/plan.h"

/* What an export holds, at most, in one file (its own output: configs, QR codes). */
#define EXPORT_FILE_MAX (64u << 20)

/* The manifest, with every file it names checked against its SHA-256: what verify installs is
 * exactly what the user gets. Read through the stage's descriptor, never by path. */
static struct json_object *read_export(int dirfd, const char *shown, GError **err)
{
    g_autofree char *text = ml_export_read_at(dirfd, shown, "manifest.json", EXPORT_FILE_MAX,
                                              NULL, err);
    struct json_object *m = text ? json_tokener_parse(text) : NULL;
    if (text && (!m || g_strcmp0(ml_j_str(m, "schema"), ML_EXPORT_SCHEMA))) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s/manifest.json is not a %s manifest", shown,
                    ML_EXPORT_SCHEMA);
        json_object_put(m);
        return NULL;
    }
    struct json_object *files = ml_j_array(m, "files");
    for (size_t i = 0; m && i < ml_j_len(files); i++) {
        struct json_object *f = json_object_array_get_idx(files, i);
        const char *rel = ml_j_str_or(f, "path", "?");
        gsize len = 0;
        g_autofree char *data = ml_export_read_at(dirfd, shown, rel, EXPORT_FILE_MAX, &len, NULL);
        g_autofree char *sha =
            data ? g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)data, len)
                 : NULL;
        if (g_strcmp0(sha, ml_j_str(f, "sha256"))) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "%s/%s is missing or is not the file the manifest names (SHA-256 "
                        "differs)",
                        shown, rel);
            json_object_put(m);
            return NULL;
        }
    }
    return m;
}

/* The hub's setup, as cloud-init's runcmd and scripts_user run it on a VPS; its log's end. */
static bool hub_setup(struct ml_lab *lab, GError **err)
{
    const struct ml_topology *t = lab->topo;
    ml_progress("verify", "%s: running the exported user-data's runcmd through cloud-init",
                t->nodes[t->hub].name);
    g_autofree char *out =
        ml_agent_run(lab->dom[t->hub],
                     "cloud-init single --name runcmd --frequency always >/dev/null 2>&1; "
                     "cloud-init single --name scripts_user --frequency always >/dev/null 2>&1; "
                     "tail -n 15 " ML_HUBINIT_LOG " 2>&1",
                     NULL, 300, err);
    if (!out)
        return false;
    if (!strstr(out, "meshlab hub setup: done")) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "the exported hub setup did not finish on %s; the end of " ML_HUBINIT_LOG
                    ":\n%s",
                    t->nodes[t->hub].name, out);
        return false;
    }
    return true;
}

/* The address node is dialed at in the export: the hub's --hub-address, a client's
 * --client-address (the manifest's client_addresses), or NULL. */
static const char *public_address(const struct ml_topology *t, struct json_object *m, size_t node)
{
    return node == t->hub ? ml_j_str(m, "hub_address")
                          : ml_j_str(ml_j_obj(m, "client_addresses"), t->nodes[node].name);
}

/* The command that maps, on client `on`, every other node's public address to its lab address.
 * The guests have no route off the bridge, so an IPv4 address gets one onto it first (the route
 * lookup comes before the DNAT in the output path); the DNAT then rewrites every packet to the
 * node's lab address before it leaves, and nothing is ever sent to the public address itself.
 * A name gets an /etc/hosts line. */
static char *address_map(const struct ml_topology *t, struct json_object *m, size_t on)
{
    GString *routes = g_string_new("set -e\n"), *rules = g_string_new(NULL);
    for (size_t n = 0; n < t->n_nodes; n++) {
        const char *pub = public_address(t, m, n);
        if (n == on || !pub)
            continue;
        char lab[16];
        ml_ip_str(t->nodes[n].address, lab);
        struct in_addr a;
        if (inet_pton(AF_INET, pub, &a) == 1) {
            g_string_append_printf(routes, "ip route replace %s/32 dev " ML_LAB_NIC "\n", pub);
            g_string_append_printf(rules, "    ip daddr %s dnat ip to %s\n", pub, lab);
        } else {
            g_string_append_printf(routes, "echo '%s %s' >> /etc/hosts\n", lab, pub);
        }
    }
    if (rules->len)
        g_string_append_printf(routes,
                               "nft -f - <<'EOF'\n"
                               "table ip meshlab_verify {\n"
                               "  chain output {\n"
                               "    type nat hook output priority -100; policy accept;\n"
                               "%s"
                               "  }\n"
                               "}\n"
                               "EOF\n",
                               rules->str);
    g_string_free(rules, TRUE);
    return g_string_free(routes, FALSE);
}

/* What address_map maps, as the lab's checks read it (ml_lab.mapped_from). */
static void mapped_from(struct ml_lab *lab, struct json_object *m)
{
    const struct ml_topology *t = lab->topo;
    for (size_t n = 0; n < t->n_nodes; n++) {
        const char *pub = public_address(t, m, n);
        struct in_addr a;
        if (pub && inet_pton(AF_INET, pub, &a) == 1)
            lab->mapped_from[n] = a;
    }
}

/* One client's exported commands as one script, in order, stopping at the first that fails and
 * naming it. */
static char *commands_script(struct json_object *cmds)
{
    GString *s = g_string_new("set -u\n");
    for (size_t i = 0; i < ml_j_len(cmds); i++) {
        g_autofree char *q =
            g_shell_quote(json_object_get_string(json_object_array_get_idx(cmds, i)));
        g_string_append_printf(s,
                               "sh -c %s || { s=$?; printf '`%%s` exited %%d\\n' %s \"$s\" >&2; "
                               "exit 1; }\n",
                               q, q);
    }
    return g_string_free(s, FALSE);
}

/* Each client's exported files at their install paths, one client after the other (the agent's
 * file writes are quick), then every client's commands at once: they start its daemons, which
 * under TCG take tens of seconds a client (strongSwan's and tincd's start), and no client's
 * commands wait for another's. */
static bool clients_setup(struct ml_lab *lab, struct json_object *m, int dirfd, const char *shown,
                          GError **err)
{
    const struct ml_topology *t = lab->topo;
    struct json_object *files = ml_j_array(m, "files");
    struct json_object *nodes = ml_j_obj(m, "nodes");
    bool which[ML_MAX_NODES] = {0};
    char *scripts[ML_MAX_NODES] = {0};
    size_t installed[ML_MAX_NODES] = {0};
    bool ok = true;
    for (size_t n = 0; ok && n < t->n_nodes; n++) {
        if (n == t->hub)
            continue;
        const char *name = t->nodes[n].name;
        g_autofree char *map = address_map(t, m, n);
        g_autofree char *mapped = ml_agent_run(lab->dom[n], map, NULL, 30, err);
        ok = mapped != NULL;
        for (size_t i = 0; ok && i < ml_j_len(files); i++) {
            struct json_object *f = json_object_array_get_idx(files, i);
            const char *install = ml_j_str(f, "install");
            if (!install || g_strcmp0(ml_j_str(f, "node"), name))
                continue;
            g_autofree char *data = ml_export_read_at(dirfd, shown, ml_j_str_or(f, "path", "?"),
                                                      EXPORT_FILE_MAX, NULL, err);
            if (!data) {
                ok = false;
                break;
            }
            g_autofree char *q = g_shell_quote(install);
            g_autofree char *cmd =
                g_strdup_printf("set -e; umask 077; mkdir -p \"$(dirname %s)\"; cat > %s", q, q);
            g_autofree char *out = ml_agent_run(lab->dom[n], cmd, data, 30, err);
            explicit_bzero(data, strlen(data));
            ok = out != NULL;
            installed[n] += ok;
        }
        which[n] = true;
        scripts[n] = commands_script(ml_j_array(ml_j_obj(nodes, name), "commands"));
    }
    size_t most = 0;
    for (size_t n = 0; n < t->n_nodes; n++)
        if (which[n])
            most = MAX(most, ml_j_len(ml_j_array(ml_j_obj(nodes, t->nodes[n].name), "commands")));
    ok =
        ok && ml_lab_run_parallel(lab, which, (const char *const *)scripts, NULL,
                                  120.0 * (double)MAX(most, 1), NULL, "the exported commands", err);
    for (size_t n = 0; n < t->n_nodes; n++) {
        if (ok && which[n])
            ml_progress("verify", "%s: %zu exported files installed, %zu commands run",
                        t->nodes[n].name, installed[n],
                        ml_j_len(ml_j_array(ml_j_obj(nodes, t->nodes[n].name), "commands")));
        g_free(scripts[n]);
    }
    return ok;
}

/* Whether the export carries one of dp's paths. */
static bool exports_dataplane(struct json_object *m, const struct ml_dataplane *dp)
{
    struct json_object *paths = ml_j_array(m, "paths");
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        const struct ml_path_ops *ops = ml_path_find(ml_j_str_or(p, "name", ""));
        if (ml_j_bool(p, "exported") && ops && ops->dataplane == dp)
            return true;
    }
    return false;
}

/* Each dataplane with an exported path, its verify_install hook on node (ml_dataplane): what
 * the export leaves its user to download or do by hand, done as the user would. */
static bool install(struct ml_lab *lab, struct json_object *m, size_t node, GError **err)
{
    for (size_t d = 0; ml_dataplanes[d]; d++) {
        const struct ml_dataplane *dp = ml_dataplanes[d];
        if (exports_dataplane(m, dp) && !ml_dp_verify_install(dp, lab, node, err)) {
            g_prefix_error(err, "%s, %s: ", dp->name, lab->topo->nodes[node].name);
            return false;
        }
    }
    return true;
}

/* install() on every client (the hub's comes before its setup). */
static bool install_clients(struct ml_lab *lab, struct json_object *m, GError **err)
{
    for (size_t n = 0; n < lab->topo->n_nodes; n++)
        if (n != lab->topo->hub && !install(lab, m, n, err))
            return false;
    return true;
}

/* Before a check, the hub's NIC quiet (ml_measure_wait_quiet): the exported daemons start
 * together here, and a check taken while one is still starting measures its start-up in the
 * idle baseline or in the probe. tinc 1.0's PMTU discovery after a start sends a burst of UDP
 * probes of up to 1518 bytes each way every second until the PMTU is fixed: 36 to 92 KB through
 * the hub in the 10 s after each client's tincd started, counted on the hub's tap with tcpdump,
 * and a check of `plain` taken 1 s after the second client's setup (CI) counted 15,817 idle
 * bytes against the 2,056 a quiet path may carry. */
#define QUIET_LIMIT_S 60

static bool wait_quiet(struct ml_lab *lab, const struct ml_path_ops *ops, double *ret_waited_s,
                       bool *ret_quiet, GError **err)
{
    if (!ml_measure_wait_quiet(lab, QUIET_LIMIT_S, ret_waited_s, ret_quiet, err))
        return false;
    if (!*ret_quiet)
        ml_progress("verify",
                    "%s: the hub's NIC did not go quiet in %d s (under %lld bytes in each of %d "
                    "seconds); checking as it stands",
                    ops->name, QUIET_LIMIT_S, ml_check_quiet_bytes(), ML_QUIET_RUN_S);
    else if (*ret_waited_s > ML_QUIET_RUN_S + 1)
        ml_progress("verify",
                    "%s: the hub's NIC went quiet after %.0f s (under %lld bytes in each of %d "
                    "seconds)",
                    ops->name, *ret_waited_s, ml_check_quiet_bytes(), ML_QUIET_RUN_S);
    return true;
}

/* Each exported path's check, as a run makes it; verdicts into the manifest's verify object. */
static bool check_paths(struct ml_lab *lab, struct json_object *m, struct json_object *out,
                        GError **err)
{
    struct json_object *paths = ml_j_array(m, "paths");
    char *in_force[ML_MAX_NODES] = {0};
    bool all = true;
    size_t checked = 0;
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *p = json_object_array_get_idx(paths, i);
        if (!ml_j_bool(p, "exported"))
            continue;
        const struct ml_path_ops *ops = ml_path_find(ml_j_str(p, "name"));
        if (!ops)
            continue;
        /* The policy alone: a path's settle hook restarts the lab's own daemons, and here the
         * exported ones run. */
        struct ml_path_ops policy_only = *ops;
        policy_only.settle = NULL;
        ml_policy_rulesets_clear(in_force);
        if (!ml_policy_enter(lab, &policy_only, in_force, err))
            break;
        g_autoptr(GError) e = NULL;
        bool ok = false;
        struct json_object *check = NULL;
        double waited = 0;
        bool quiet = false;
        if (ml_dp_verify_settle(ops->dataplane, lab, ops, &e) &&
            ml_lab_wait_ping(lab, ops->target(lab), 120, ops->name, &e) &&
            wait_quiet(lab, ops, &waited, &quiet, &e))
            check = ml_measure_check(lab, ops, "export-verify", &ok, &e);
        if (e && e->code == ML_ERR_INTERRUPTED) {
            g_propagate_error(err, g_steal_pointer(&e));
            break;
        }
        struct json_object *v = json_object_new_object();
        json_object_object_add(v, "name", json_object_new_string(ops->name));
        json_object_object_add(v, "ok", json_object_new_boolean(ok));
        json_object_object_add(v, "error", e ? json_object_new_string(e->message) : NULL);
        json_object_object_add(v, "quiet_wait_s", json_object_new_double(waited));
        json_object_object_add(v, "quiet", json_object_new_boolean(quiet));
        json_object_object_add(v, "check", check);
        json_object_array_add(out, v);
        ml_progress("verify", "%s: %s", ops->name,
                    ok ? "passed its check on the exported files"
                       : (e ? e->message : "FAILED its check"));
        all &= ok;
        checked++;
    }
    ml_policy_rulesets_clear(in_force);
    if (err && *err)
        return false;
    if (!all || !checked)
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                    checked ? "the export failed in the lab: a path's check did not pass on the "
                              "exported files (the verify run directory has its evidence)"
                            : "the export has no path to check");
    return all && checked;
}

bool cmd_export_verify(int export_fd, const char *shown, const char *verify_dir,
                       const struct ml_topology *topo, struct json_object **ret_verify,
                       GError **err)
{
    struct json_object *m = read_export(export_fd, shown, err);
    if (!m)
        return false;
    for (size_t n = 0; n < topo->n_nodes; n++) {
        const char *pub = public_address(topo, m, n);
        unsigned char v6[16];
        if (pub && inet_pton(AF_INET6, pub, v6) == 1) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "--verify maps %s's address %s to its lab address on IPv4 only; export "
                        "to an IPv4 address or a name to verify",
                        topo->nodes[n].name, pub);
            json_object_put(m);
            return false;
        }
    }
    g_autofree char *ud =
        ml_export_read_at(export_fd, shown, "hub/user-data", EXPORT_FILE_MAX, NULL, err);
    if (!ud) {
        json_object_put(m);
        return false;
    }
    struct ml_session_opts opts = {
        .verb = "export --verify", .out_dir = verify_dir, .force = true, .no_dataplanes = true};
    struct ml_lab lab = {0};
    ml_progress("verify",
                "a fresh lab %s: the hub from hub/user-data, the clients from their "
                "exported files",
                topo->name);
    bool up = ml_session_open(&lab, topo, &opts, err);
    if (up) {
        lab.user_data_first[topo->hub] = g_strdup(ud);
        up = ml_session_up(&lab, &opts, err);
    }
    struct json_object *checks = json_object_new_array();
    if (up)
        mapped_from(&lab, m);
    bool ok = up && install(&lab, m, topo->hub, err) && hub_setup(&lab, err) &&
              install_clients(&lab, m, err) && clients_setup(&lab, m, export_fd, shown, err) &&
              check_paths(&lab, m, checks, err);
    if (up) {
        ml_lab_collect_logs(&lab);
        g_autoptr(GError) derr = NULL;
        if (!ml_lab_destroy(&lab, &derr))
            ml_warn("teardown incomplete: %s; run 'meshlab down %s'", derr->message, topo->name);
    }
    struct json_object *v = json_object_new_object();
    json_object_object_add(v, "lab_run_id", json_object_new_string(lab.run_id));
    json_object_object_add(v, "run_dir", lab.run_dir ? json_object_new_string(lab.run_dir) : NULL);
    json_object_object_add(v, "passed", json_object_new_boolean(ok));
    json_object_object_add(v, "paths", checks);
    ml_lab_clear(&lab);
    json_object_put(m);
    if (ret_verify)
        *ret_verify = v;
    else
        json_object_put(v);
    return ok;
}
