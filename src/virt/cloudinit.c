#include "virt/cloudinit.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/spawn.h"
#include "core/util.h"
#include "virt/agent.h"

void ml_seed_clear(struct ml_seed *seed)
{
    g_free(seed->user_data);
    g_free(seed->meta_data);
    g_free(seed->network_config);
    memset(seed, 0, sizeof(*seed));
}

static const char *lookup(const char *const *vars, const char *name, size_t len)
{
    for (size_t i = 0; vars[i]; i += 2)
        if (strlen(vars[i]) == len && !strncmp(vars[i], name, len))
            return vars[i + 1];
    return NULL;
}

char *ml_template_expand(const char *text, const char *const *vars, GError **err)
{
    GString *out = g_string_new(NULL);
    const char *p = text;
    const char *open;
    while ((open = strstr(p, "{{"))) {
        const char *close = strstr(open + 2, "}}");
        if (!close) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT, "template has '{{' without '}}'");
            g_string_free(out, TRUE);
            return NULL;
        }
        const char *name = open + 2;
        const char *value = lookup(vars, name, (size_t)(close - name));
        if (!value) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT, "template uses unknown placeholder '%.*s'",
                        (int)(close - name), name);
            g_string_free(out, TRUE);
            return NULL;
        }
        g_string_append_len(out, p, open - p);
        g_string_append(out, value);
        p = close + 2;
    }
    g_string_append(out, p);
    return g_string_free(out, FALSE);
}

static char *render_file(const char *file, const char *const *vars, GError **err)
{
    g_autofree char *dir = ml_data_dir("cloud-init");
    g_autofree char *path = g_build_filename(dir, file, NULL);
    g_autofree char *text = NULL;
    g_autoptr(GError) e = NULL;
    if (!g_file_get_contents(path, &text, NULL, &e)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "cannot read the cloud-init template '%s': %s; set MESHLAB_DATA_DIR to "
                    "meshlab's source directory",
                    path, e->message);
        return NULL;
    }
    g_autoptr(GError) te = NULL;
    char *out = ml_template_expand(text, vars, &te);
    if (!out)
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "%s: %s", path, te->message);
    return out;
}

bool ml_seed_render(const struct ml_plan *plan, size_t guest, struct ml_seed *ret, GError **err)
{
    const struct ml_topology *t = plan->topo;
    const struct ml_plan_guest *g = &plan->guests[guest];
    char addr[16], buf[16];
    ml_ip_str(g->node->address, addr);
    g_autofree char *prefix = g_strdup_printf("%u", t->lab_subnet.prefix);
    GString *hosts = g_string_new(NULL);
    for (size_t i = 0; i < t->n_nodes; i++)
        g_string_append_printf(hosts, "      %s %s\n", ml_ip_str(t->nodes[i].address, buf),
                               t->nodes[i].name);
    g_string_truncate(hosts, hosts->len ? hosts->len - 1 : 0);
    g_autofree char *hosts_text = g_string_free(hosts, FALSE);
    /* The node's lab address first (the source of what it sends), then the hub's second
     * address (the NAT probes' and a STUN client's second destination), if it has one. */
    GString *addresses = g_string_new(NULL);
    g_string_append_printf(addresses, "      - %s/%s", addr, prefix);
    if (g->node->second_address.s_addr)
        g_string_append_printf(addresses, "\n      - %s/%s",
                               ml_ip_str(g->node->second_address, buf), prefix);
    g_autofree char *addresses_text = g_string_free(addresses, FALSE);
    const char *vars[] = {"lab",          t->name,   "node",  g->node->name, "run_id",
                          plan->run_id,   "address", addr,    "prefix",      prefix,
                          "mac",          g->mac,    "hosts", hosts_text,    "addresses",
                          addresses_text, NULL};
    memset(ret, 0, sizeof(*ret));
    ret->user_data = render_file("user-data", vars, err);
    if (ret->user_data)
        ret->meta_data = render_file("meta-data", vars, err);
    if (ret->meta_data)
        ret->network_config = render_file("network-config", vars, err);
    if (!ret->network_config) {
        ml_seed_clear(ret);
        return false;
    }
    return true;
}

char *ml_seed_multipart(const char *first, const char *lab_part)
{
    /* A boundary that neither part holds. The line break before each boundary belongs to the
     * boundary (RFC 2046 5.1.1): each part ends with one more, so its text arrives whole. */
    g_autofree char *boundary = NULL;
    do {
        g_free(boundary);
        boundary = g_strdup_printf("==meshlab-%08x%08x==", g_random_int(), g_random_int());
    } while (strstr(first, boundary) || strstr(lab_part, boundary));
    const char *part_head = "Content-Type: text/cloud-config; charset=\"us-ascii\"\n"
                            "MIME-Version: 1.0\n"
                            "Content-Transfer-Encoding: 7bit\n";
    return g_strdup_printf("Content-Type: multipart/mixed; boundary=\"%s\"\n"
                           "MIME-Version: 1.0\n"
                           "\n"
                           "--%s\n%s"
                           "Content-Disposition: attachment; filename=\"exported\"\n"
                           "\n"
                           "%s%s\n"
                           "--%s\n%s"
                           "Content-Disposition: attachment; filename=\"meshlab-lab\"\n"
                           "\n"
                           "%s%s"
                           "merge_how:\n"
                           "  - name: list\n"
                           "    settings: [append]\n"
                           "  - name: dict\n"
                           "    settings: [no_replace, recurse_list]\n"
                           "\n--%s--\n",
                           boundary, boundary, part_head, first,
                           g_str_has_suffix(first, "\n") ? "" : "\n", boundary, part_head, lab_part,
                           g_str_has_suffix(lab_part, "\n") ? "" : "\n", boundary);
}

bool ml_seed_write_iso(const struct ml_seed *seed, const char *path, GError **err)
{
    /* The pid in the name lets 'meshlab down' tell a killed meshlab's leftovers
     * from the seeds another meshlab is writing right now. */
    g_autofree char *tmpl = ml_leftover_template("seed", "");
    g_autofree char *dir = g_dir_make_tmp(tmpl, NULL);
    if (!dir) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot create a temporary directory");
        return false;
    }
    g_autofree char *ud = g_build_filename(dir, "user-data", NULL);
    g_autofree char *md = g_build_filename(dir, "meta-data", NULL);
    g_autofree char *nc = g_build_filename(dir, "network-config", NULL);
    bool ok = ml_write_file(ud, seed->user_data, -1, 0600, err) &&
              ml_write_file(md, seed->meta_data, -1, 0600, err) &&
              ml_write_file(nc, seed->network_config, -1, 0600, err);
    /* Built in root's own directory, then copied into the pool, which belongs to QEMU's
     * user: cloud-localds would write through a link planted at path. */
    g_autofree char *iso = g_build_filename(dir, "seed.iso", NULL);
    if (ok) {
        const char *argv[] = {"cloud-localds", "-N", nc, iso, ud, md, NULL};
        ok = ml_spawn_timeout(argv, 60, NULL, err) && ml_file_place(iso, path, 0600, err);
    }
    unlink(ud);
    unlink(md);
    unlink(nc);
    unlink(iso);
    rmdir(dir);
    return ok;
}

bool ml_seed_push(virDomainPtr dom, const struct ml_seed *seed, GError **err)
{
    /* dsmode local: cloud-init-local, the only cloud-init stage the image runs, applies
     * the network configuration and runs the init modules itself. */
    g_autofree char *meta = g_strdup_printf("%s%sdsmode: local\n", seed->meta_data,
                                            g_str_has_suffix(seed->meta_data, "\n") ? "" : "\n");
    const struct {
        const char *name, *text;
    } files[] = {{"user-data", seed->user_data},
                 {"network-config", seed->network_config},
                 {"meta-data", meta}};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *path = g_build_filename(ML_SEED_GUEST_DIR, files[i].name, NULL);
        if (!ml_agent_file_write(dom, path, files[i].text, strlen(files[i].text), err))
            return false;
    }
    return true;
}
