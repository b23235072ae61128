#include "export/export.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/leftovers.h"
#include "core/rundir.h"
#include "core/spawn.h"
#include "core/util.h"
#include "dataplanes/bundle.h"
#include "dataplanes/dataplane.h"
#include "export/hubinit.h"
#include "export/place.h"
#include "export/qr.h"
#include "report/report.h"
#include "report/runfiles.h"
#include "results/json.h"
#include "topology/plan.h"

#define QR_SCALE 6 /* pixels a module: a 57-module client config is a 390-pixel PNG */
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define RULESET_MAX (4u << 20)

const char *ml_export_verdict(struct json_object *path)
{
    const char *status = ml_j_str(path, "status");
    if (!g_strcmp0(status, "not-run"))
        return "not-run";
    if (g_strcmp0(status, "measured"))
        return "failed";
    struct json_object *checks = ml_j_array(path, "checks");
    if (!ml_j_len(checks))
        return "failed";
    for (size_t i = 0; i < ml_j_len(checks); i++)
        if (!ml_j_bool(json_object_array_get_idx(checks, i), "ok"))
            return "failed";
    return "passed";
}

char *ml_export_without_comments(const char *conf)
{
    GString *s = g_string_new(NULL);
    g_auto(GStrv) lines = g_strsplit(conf, "\n", -1);
    for (char **l = lines; *l; l++)
        if (**l != '#' && (**l || l[1]))
            g_string_append_printf(s, "%s\n", *l);
    return g_string_free(s, FALSE);
}

char *ml_export_firewall(const char *ruleset, const char *iface, const char *label, GError **err)
{
    static const char head[] = "table inet meshlab_fw {\n";
    const char *start = ruleset ? strstr(ruleset, head) : NULL;
    while (start && start != ruleset && start[-1] != '\n')
        start = strstr(start + 1, head);
    const char *end = start ? strstr(start, "\n}\n") : NULL;
    if (!end) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "the saved ruleset holds no table inet meshlab_fw (the lab's firewall)");
        return NULL;
    }
    g_autofree char *table = g_strndup(start, (gsize)(end + 3 - start));
    g_autoptr(GRegex) counters =
        g_regex_new("counter packets [0-9]+ bytes [0-9]+", G_REGEX_DEFAULT, 0, NULL);
    g_autofree char *zeroed = g_regex_replace_literal(counters, table, -1, 0, "counter", 0, NULL);
    GString *s = g_string_new(zeroed);
    g_autofree char *lab_nic = g_strdup_printf("\"%s\"", ML_LAB_NIC);
    g_autofree char *vps_nic = g_strdup_printf("\"%s\"", iface);
    g_string_replace(s, lab_nic, vps_nic, 0);
    g_autofree char *body = g_string_free(s, FALSE);
    g_autofree char *shown = ml_comment_text(label);
    g_autofree char *renamed =
        strcmp(iface, ML_LAB_NIC)
            ? g_strdup_printf(", the lab's NIC %s renamed %s", ML_LAB_NIC, iface)
            : g_strdup("");
    return g_strdup_printf(
        "#!/usr/sbin/nft -f\n"
        "# %s: the hub's firewall, as `nft list ruleset`\n"
        "# showed it while the run measured, counters zeroed%s. It opens ssh, the\n"
        "# dataplanes' ports and what the lab measured with (iperf3 5201, the NAT probes);\n"
        "# delete what you do not want. The first two lines make `nft -f` replace this table\n"
        "# and no other.\n"
        "table inet meshlab_fw\n"
        "delete table inet meshlab_fw\n"
        "%s",
        shown, renamed, body);
}

static bool write_tmp(const char *name, const char *text, char **ret_dir, char **ret_path,
                      GError **err)
{
    g_autofree char *tmpl = ml_leftover_template("export", "");
    char *dir = g_dir_make_tmp(tmpl, err);
    if (!dir)
        return false;
    char *path = g_build_filename(dir, name, NULL);
    if (!g_file_set_contents_full(path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600, err)) {
        g_rmdir(dir);
        g_free(dir);
        g_free(path);
        return false;
    }
    *ret_dir = dir;
    *ret_path = path;
    return true;
}

static void remove_tmp(char *dir, char *path)
{
    g_unlink(path);
    g_rmdir(dir);
    g_free(dir);
    g_free(path);
}

bool ml_export_nft_check(const char *script, GError **err)
{
    g_autofree char *nft = g_find_program_in_path("nft");
    if (!nft) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "the hub's firewall is checked with `nft -c` before it is exported, and nft "
                    "is not installed here (Debian: apt install nftables)");
        return false;
    }
    char *dir, *path;
    if (!write_tmp("hub.nft", script, &dir, &path, err))
        return false;
    const char *argv[] = {nft, "-c", "-f", path, NULL};
    g_autoptr(GError) e = NULL;
    bool ok = ml_spawn_timeout(argv, 60, NULL, &e);
    remove_tmp(dir, path);
    if (!ok)
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "`nft -c` refused the hub's firewall (it must run as root, with nf_tables): "
                    "%s",
                    e->message);
    return ok;
}

/* `wg-quick strip` of a wg-quick file: what wg(8) would be given. NULL with why when it
 * refuses the file; *ret_ran false when wg-quick is not installed here. */
static bool wg_quick_strip(const char *conf, bool *ret_ran, GError **err)
{
    g_autofree char *tool = g_find_program_in_path("wg-quick");
    *ret_ran = tool != NULL;
    if (!tool)
        return true;
    char *dir, *path;
    if (!write_tmp("wg0.conf", conf, &dir, &path, err))
        return false;
    const char *argv[] = {tool, "strip", path, NULL};
    g_autofree char *out = NULL;
    bool ok = ml_spawn_timeout(argv, 60, &out, err);
    remove_tmp(dir, path);
    if (out)
        memset(out, 0, strlen(out));
    return ok;
}

/* One output file of the export. */
struct out {
    char *rel;
    GBytes *data;
    bool secret;
    size_t node;
    const char *install;
};

static void out_free(gpointer p)
{
    struct out *o = p;
    g_free(o->rel);
    g_bytes_unref(o->data);
    g_free(o);
}

static void out_add(GPtrArray *outs, const char *rel, GBytes *data, bool secret, size_t node,
                    const char *install)
{
    struct out *o = g_new0(struct out, 1);
    o->rel = g_strdup(rel);
    o->data = data;
    o->secret = secret;
    o->node = node;
    o->install = install;
    g_ptr_array_add(outs, o);
}

static void out_text(GPtrArray *outs, const char *rel, char *text, bool secret)
{
    out_add(outs, rel, g_bytes_new_take(text, strlen(text)), secret, SIZE_MAX, NULL);
}

/* Every path of the run with its verdict, and the dataplanes to export, in the registry's
 * order: those with a passed path. */
struct plan {
    struct json_object *paths; /* manifest's paths[] */
    bool want[64];             /* by index in ml_dataplanes[] */
};

static size_t dp_index(const struct ml_dataplane *dp)
{
    size_t i = 0;
    while (ml_dataplanes[i] && ml_dataplanes[i] != dp)
        i++;
    return i;
}

static void judge_paths(struct json_object *results, struct plan *p)
{
    p->paths = json_object_new_array();
    struct json_object *paths = ml_j_array(results, "paths");
    for (size_t i = 0; i < ml_j_len(paths); i++) {
        struct json_object *rp = json_object_array_get_idx(paths, i);
        const char *name = ml_j_str_or(rp, "name", "?");
        const char *verdict = ml_export_verdict(rp);
        const struct ml_path_ops *ops = ml_path_find(name);
        struct json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(name));
        json_object_object_add(o, "verdict", json_object_new_string(verdict));
        json_object_object_add(o, "dataplane",
                               ops ? json_object_new_string(ops->dataplane->name) : NULL);
        json_object_object_add(o, "exported", json_object_new_boolean(false));
        bool passed = !strcmp(verdict, "passed");
        json_object_object_add(
            o, "why_not",
            json_object_new_string(passed ? (!ops                ? "this meshlab knows no such path"
                                             : ops->not_exported ? ops->not_exported
                                                                 : "its dataplane was not exported")
                                   : !strcmp(verdict, "not-run") ? "it did not run in this run"
                                                                 : "its checks did not pass"));
        json_object_array_add(p->paths, o);
        if (ops && passed && !ops->not_exported) {
            size_t k = dp_index(ops->dataplane);
            if (k < G_N_ELEMENTS(p->want))
                p->want[k] = true;
        }
    }
}

/* Marks the dataplane's passed paths exported, or says why not. */
static void mark(struct plan *p, const struct ml_dataplane *dp, const char *why_not)
{
    for (size_t i = 0; i < ml_j_len(p->paths); i++) {
        struct json_object *o = json_object_array_get_idx(p->paths, i);
        const struct ml_path_ops *ops = ml_path_find(ml_j_str_or(o, "name", ""));
        if (g_strcmp0(ml_j_str(o, "dataplane"), dp->name) ||
            g_strcmp0(ml_j_str(o, "verdict"), "passed") || (ops && ops->not_exported))
            continue;
        json_object_object_add(o, "exported", json_object_new_boolean(why_not == NULL));
        json_object_object_add(o, "why_not", why_not ? json_object_new_string(why_not) : NULL);
    }
}

/* The hub's firewall from the rulesets of every exported path: one text, or an error when two
 * paths had different ones in force. */
static char *firewall_of(int run_fd, const struct ml_export_opts *o,
                         const struct ml_topology *topo, struct plan *p, const char *label,
                         GError **err)
{
    char *first = NULL;
    const char *first_path = NULL;
    for (size_t i = 0; i < ml_j_len(p->paths); i++) {
        struct json_object *x = json_object_array_get_idx(p->paths, i);
        if (!ml_j_bool(x, "exported"))
            continue;
        const char *name = ml_j_str(x, "name");
        g_autofree char *rel =
            g_strdup_printf("rulesets/%s/%s.nft", name, topo->nodes[topo->hub].name);
        g_autoptr(GError) e = NULL;
        g_autofree char *text = ml_export_read_at(run_fd, o->run_dir, rel, RULESET_MAX, NULL, &e);
        if (!text) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "%s The hub's firewall the run saved for %s is needed: export needs the "
                        "run directory whole.",
                        e->message, name);
            g_free(first);
            return NULL;
        }
        char *fw = ml_export_firewall(text, o->hub_interface, label, &e);
        if (!fw) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT, "%s/%s: %s", o->run_dir, rel, e->message);
            g_free(first);
            return NULL;
        }
        if (!first) {
            first = fw;
            first_path = name;
        } else {
            bool same = !strcmp(first, fw);
            g_free(fw);
            if (!same) {
                g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                            "the hub's firewall differed between %s and %s in this run, and the "
                            "hub VPS can have one: export one of them alone",
                            first_path, name);
                g_free(first);
                return NULL;
            }
        }
    }
    return first;
}

static char *readme(const struct ml_bundle *b, struct plan *p, const struct ml_export_opts *o)
{
    const struct ml_topology *t = b->topo;
    g_autofree char *label = ml_comment_text(b->label);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "# %s\n\n"
                           "What to deploy for the paths this run verified, with keys made for "
                           "this export (none of the lab's\nkeys left its guests). The hub VPS "
                           "is reached at %s; its NIC is %s.\n\n"
                           "Every file here is mode 0600 in 0700 directories: several hold "
                           "private keys. `manifest.json`\nnames each file with its SHA-256.\n\n"
                           "## Paths\n\n",
                           label, o->hub_address, o->hub_interface);
    for (size_t i = 0; i < ml_j_len(p->paths); i++) {
        struct json_object *x = json_object_array_get_idx(p->paths, i);
        g_autofree char *name = ml_comment_text(ml_j_str(x, "name"));
        g_string_append_printf(s, "- %s: %s, %s\n", name, ml_j_str(x, "verdict"),
                               ml_j_bool(x, "exported") ? "exported"
                                                        : ml_j_str_or(x, "why_not", "?"));
    }
    g_string_append_printf(s,
                           "\n## The hub (%s)\n\n"
                           "Paste `hub/user-data` into the provider's user-data (cloud-init) "
                           "field when creating the VPS.\nIt writes the files below, installs "
                           "what is missing, loads `hub/firewall.nft` (now and at every\nboot) "
                           "and starts the dataplanes; its log is " ML_HUBINIT_LOG ".\n\n",
                           t->nodes[t->hub].name);
    for (guint i = 0; i < b->files->len; i++) {
        const struct ml_bundle_file *f = g_ptr_array_index(b->files, i);
        if (f->node == t->hub)
            g_string_append_printf(s, "- `%s` (`%s`): %s\n", f->rel, f->install, f->what);
    }
    for (size_t n = 0; n < t->n_nodes; n++) {
        if (n == t->hub)
            continue;
        g_string_append_printf(s, "\n## %s\n\n", t->nodes[n].name);
        for (guint i = 0; i < b->files->len; i++) {
            const struct ml_bundle_file *f = g_ptr_array_index(b->files, i);
            if (f->node == n)
                g_string_append_printf(s, "- `%s` → `%s`: %s\n", f->rel, f->install, f->what);
        }
        if (b->client_commands[n]->len) {
            g_string_append(s, "\nThen, as root:\n\n```sh\n");
            for (guint i = 0; i < b->client_commands[n]->len; i++)
                g_string_append_printf(s, "%s\n",
                                       (const char *)g_ptr_array_index(b->client_commands[n], i));
            g_string_append(s, "```\n");
        }
    }
    g_string_append(s, "\n## Everything else\n\n");
    for (guint i = 0; i < b->files->len; i++) {
        const struct ml_bundle_file *f = g_ptr_array_index(b->files, i);
        if (f->node == SIZE_MAX)
            g_string_append_printf(s, "- `%s`: %s\n", f->rel, f->what);
    }
    g_string_append(s, "- `SIZING.md`: the hub's traffic and cost a month, from the run's "
                       "figures\n- `manifest.json`: the run, each path's verdict, each file's "
                       "SHA-256 and the checks made\n");
    return g_string_free(s, FALSE);
}

/* The output files of the bundle, with their QR codes, and the checks made on them. */
static bool bundle_outputs(const struct ml_bundle *b, GPtrArray *outs, struct json_object *checks,
                           GError **err)
{
    for (guint i = 0; i < b->checks->len; i++) {
        g_auto(GStrv) fc = g_strsplit(g_ptr_array_index(b->checks, i), "\t", 2);
        struct json_object *c = json_object_new_object();
        json_object_object_add(c, "file", json_object_new_string(fc[0]));
        json_object_object_add(c, "check", json_object_new_string(fc[1] ? fc[1] : ""));
        json_object_object_add(c, "result", json_object_new_string("passed"));
        json_object_array_add(checks, c);
    }
    for (guint i = 0; i < b->files->len; i++) {
        const struct ml_bundle_file *f = g_ptr_array_index(b->files, i);
        out_add(outs, f->rel, g_bytes_new(f->content, strlen(f->content)),
                f->flags & ML_BUNDLE_SECRET, f->node, f->install);
        if (f->flags & ML_BUNDLE_WG_QUICK) {
            bool ran;
            if (!wg_quick_strip(f->content, &ran, err)) {
                g_prefix_error(err, "wg-quick strip refused %s (a meshlab bug): ", f->rel);
                return false;
            }
            struct json_object *c = json_object_new_object();
            json_object_object_add(c, "file", json_object_new_string(f->rel));
            json_object_object_add(c, "check", json_object_new_string("wg-quick strip"));
            json_object_object_add(
                c, "result",
                json_object_new_string(ran ? "passed"
                                           : "not run: wg-quick is not installed "
                                             "here (Debian: wireguard-tools)"));
            json_object_array_add(checks, c);
        }
        if (f->flags & ML_BUNDLE_QR) {
            /* The phone's app needs the config, not meshlab's comments: a smaller symbol. */
            g_autofree char *bare = ml_export_without_comments(f->content);
            g_autofree char *stem =
                g_strndup(f->rel, strlen(f->rel) - (g_str_has_suffix(f->rel, ".conf") ? 5 : 0));
            g_autoptr(GByteArray) png = ml_qr_png(bare, QR_SCALE, err);
            char *text = png ? ml_qr_text(bare, err) : NULL;
            if (!text)
                return false;
            g_autofree char *rp = g_strdup_printf("%s.qr.png", stem);
            g_autofree char *rt = g_strdup_printf("%s.qr.txt", stem);
            out_add(outs, rp, g_byte_array_free_to_bytes(g_steal_pointer(&png)), true, f->node,
                    NULL);
            out_text(outs, rt, text, true);
        }
    }
    return true;
}

static struct json_object *manifest_new(struct json_object *results, const char *results_sha,
                                        const struct ml_export_opts *o, struct plan *p,
                                        struct json_object *checks, const struct ml_bundle *b)
{
    struct json_object *m = json_object_new_object();
    struct json_object *nodes = json_object_new_object();
    for (size_t n = 0; n < b->topo->n_nodes; n++) {
        struct json_object *node = json_object_new_object();
        struct json_object *cmds = json_object_new_array();
        for (guint i = 0; i < b->client_commands[n]->len; i++)
            json_object_array_add(
                cmds, json_object_new_string(g_ptr_array_index(b->client_commands[n], i)));
        json_object_object_add(node, "role",
                               json_object_new_string(n == b->topo->hub ? "hub" : "client"));
        json_object_object_add(node, "commands", cmds);
        json_object_object_add(nodes, b->topo->nodes[n].name, node);
    }
    json_object_object_add(m, "schema", json_object_new_string(ML_EXPORT_SCHEMA));
    json_object_object_add(m, "meshlab_version", json_object_new_string(MESHLAB_VERSION));
    json_object_object_add(m, "lab", json_object_new_string(ml_j_str_or(results, "lab", "")));
    json_object_object_add(m, "run_id", json_object_new_string(ml_j_str_or(results, "run_id", "")));
    json_object_object_add(m, "results_sha256", json_object_new_string(results_sha));
    g_autoptr(GDateTime) now = g_date_time_new_now_utc();
    g_autofree char *when = g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");
    json_object_object_add(m, "created", json_object_new_string(when));
    json_object_object_add(m, "hub_address", json_object_new_string(o->hub_address));
    json_object_object_add(m, "hub_interface", json_object_new_string(o->hub_interface));
    struct json_object *clients = json_object_new_object();
    for (size_t n = 0; n < b->topo->n_nodes; n++)
        if (o->client_address[n])
            json_object_object_add(clients, b->topo->nodes[n].name,
                                   json_object_new_string(o->client_address[n]));
    json_object_object_add(m, "client_addresses", clients);
    json_object_object_add(m, "paths", json_object_get(p->paths));
    json_object_object_add(m, "checks", json_object_get(checks));
    json_object_object_add(m, "nodes", nodes);
    return m;
}

static bool manifest_write_at(int fd, struct json_object *manifest, GError **err)
{
    const char *text = json_object_to_json_string_ext(manifest, JSON_C_TO_STRING_PRETTY |
                                                                    JSON_C_TO_STRING_NOSLASHESCAPE);
    g_autofree char *with_nl = g_strconcat(text, "\n", NULL);
    return ml_rundir_write_private(fd, "manifest.json", with_nl, -1, err);
}

bool ml_export_manifest_write_at(int dirfd, struct json_object *manifest, GError **err)
{
    return manifest_write_at(dirfd, manifest, err);
}

static bool write_all(int fd, GPtrArray *outs, const struct ml_topology *topo,
                      struct json_object *manifest, GError **err)
{
    struct json_object *files = json_object_new_array();
    bool ok = true;
    for (guint i = 0; i < outs->len && ok; i++) {
        const struct out *x = g_ptr_array_index(outs, i);
        gsize len;
        const char *data = g_bytes_get_data(x->data, &len);
        ok = ml_rundir_write_private(fd, x->rel, data, (gssize)len, err);
        g_autofree char *sha =
            g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)data, len);
        struct json_object *f = json_object_new_object();
        json_object_object_add(f, "path", json_object_new_string(x->rel));
        json_object_object_add(f, "sha256", json_object_new_string(sha));
        json_object_object_add(f, "bytes", json_object_new_int64((int64_t)len));
        json_object_object_add(f, "mode", json_object_new_string("0600"));
        json_object_object_add(f, "secret", json_object_new_boolean(x->secret));
        json_object_object_add(
            f, "node",
            x->node < topo->n_nodes ? json_object_new_string(topo->nodes[x->node].name) : NULL);
        json_object_object_add(f, "install",
                               x->install ? json_object_new_string(x->install) : NULL);
        json_object_array_add(files, f);
    }
    json_object_object_add(manifest, "files", files);
    return ok && manifest_write_at(fd, manifest, err);
}

/* Each dataplane with a passed path adds its files to b, or says in p why it could not. */
static bool export_dataplanes(const struct ml_export_opts *o, struct plan *p, struct ml_bundle *b,
                              GError **err)
{
    size_t exported = 0;
    for (size_t k = 0; ml_dataplanes[k]; k++) {
        const struct ml_dataplane *dp = ml_dataplanes[k];
        if (k >= G_N_ELEMENTS(p->want) || !p->want[k])
            continue;
        if (!ml_dp_exports(dp)) {
            g_autofree char *why =
                g_strdup_printf("this meshlab has no export for %s yet", dp->name);
            mark(p, dp, why);
            continue;
        }
        g_autoptr(GError) e = NULL;
        if (!ml_dp_export(dp, b, &e)) {
            if (e->code == ML_ERR_INTERRUPTED) {
                g_propagate_error(err, g_steal_pointer(&e));
                return false;
            }
            ml_warn("export: %s not exported: %s", dp->name, e->message);
            mark(p, dp, e->message);
            continue;
        }
        mark(p, dp, NULL);
        exported++;
    }
    if (!exported)
        g_set_error(err, ML_ERROR, ML_ERR_MEASURE,
                    "nothing to export: no path of this run passed its checks with a dataplane "
                    "this meshlab exports (manifest: each path's verdict is in results.json's "
                    "paths[].checks)");
    return exported > 0;
}

static void add_check(struct json_object *checks, const char *file, const char *check)
{
    struct json_object *c = json_object_new_object();
    json_object_object_add(c, "file", json_object_new_string(file));
    json_object_object_add(c, "check", json_object_new_string(check));
    json_object_object_add(c, "result", json_object_new_string("passed"));
    json_object_array_add(checks, c);
}

/* Around the dataplanes' files: the hub's firewall from the run's rulesets, its user-data,
 * SIZING.md and README.md, each checked as it is made. */
static bool hub_outputs(int run_fd, const struct ml_export_opts *o, struct json_object *results,
                        struct plan *p, const struct ml_bundle *b, GPtrArray *outs,
                        struct json_object *checks, GError **err)
{
    g_autofree char *fw = firewall_of(run_fd, o, b->topo, p, b->label, err);
    if (!fw || !ml_export_nft_check(fw, err))
        return false;
    add_check(checks, "hub/firewall.nft", "nft -c -f");
    if (!bundle_outputs(b, outs, checks, err))
        return false;
    char *ud = ml_hubinit_render(b, fw);
    if (!ml_hubinit_check(b, fw, ud, err)) {
        g_free(ud);
        return false;
    }
    add_check(checks, "hub/user-data",
              "read back as YAML: every file it writes, byte for byte, with its mode");
    out_text(outs, "hub/user-data", ud, true);
    out_text(outs, "hub/firewall.nft", g_steal_pointer(&fw), false);
    char *sizing = ml_report_render_sizing(results, err);
    if (!sizing)
        return false;
    out_text(outs, "SIZING.md", sizing, false);
    out_text(outs, "README.md", readme(b, p, o), false);
    return true;
}

bool ml_export_write_at(const struct ml_export_opts *o, struct json_object *results,
                        const struct ml_topology *topo, int dirfd,
                        struct json_object **ret_manifest, GError **err)
{
    int run_fd = ml_runfile_dir_open(o->run_dir, err);
    if (run_fd < 0)
        return false;
    g_autofree char *label =
        g_strdup_printf("meshlab export of lab %s, run %s", ml_j_str_or(results, "lab", "?"),
                        ml_j_str_or(results, "run_id", "?"));
    struct plan p = {0};
    judge_paths(results, &p);
    struct json_object *checks = json_object_new_array();
    g_autoptr(MlBundle) b = ml_bundle_new(topo, o->hub_address, o->hub_interface, label);
    memcpy(b->client_address, o->client_address, sizeof(b->client_address));
    g_autoptr(GPtrArray) outs = g_ptr_array_new_with_free_func(out_free);
    bool ok = export_dataplanes(o, &p, b, err) &&
              hub_outputs(run_fd, o, results, &p, b, outs, checks, err);
    close(run_fd);
    struct json_object *manifest = NULL;
    if (ok) {
        const char *rtext = json_object_to_json_string_ext(results, JSON_C_TO_STRING_PLAIN);
        g_autofree char *results_sha = g_compute_checksum_for_string(G_CHECKSUM_SHA256, rtext, -1);
        manifest = manifest_new(results, results_sha, o, &p, checks, b);
        ok = write_all(dirfd, outs, topo, manifest, err);
    }
    json_object_put(p.paths);
    json_object_put(checks);
    if (ok && ret_manifest)
        *ret_manifest = manifest;
    else
        json_object_put(manifest);
    return ok;
}

bool ml_export_write(const struct ml_export_opts *o, struct json_object *results,
                     const struct ml_topology *topo, struct json_object **ret_manifest,
                     GError **err)
{
    struct ml_export_place place;
    if (!ml_export_place_open(o->to, "partial", &place, err))
        return false;
    struct json_object *manifest = NULL;
    bool ok = ml_export_write_at(o, results, topo, place.fd, &manifest, err) &&
              ml_export_place_commit(&place, err);
    ml_export_place_close(&place);
    if (ok && ret_manifest)
        *ret_manifest = manifest;
    else
        json_object_put(manifest);
    return ok;
}
