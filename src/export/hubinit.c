#include "export/hubinit.h"

#include <string.h>
#include <yaml.h>

#include "core/util.h"
#include "topology/yaml.h"

/* Every file the user-data writes, in order: the bundle's, then the sysctls, the firewall and
 * its unit, and the setup script. */
struct hub_write {
    const char *path;
    char *content;
    unsigned mode;
};

static const char firewall_unit[] = "[Unit]\n"
                                    "Description=meshlab's hub firewall (" ML_HUBINIT_FIREWALL ")\n"
                                    "Before=network-pre.target\n"
                                    "Wants=network-pre.target\n"
                                    "\n"
                                    "[Service]\n"
                                    "Type=oneshot\n"
                                    "RemainAfterExit=yes\n"
                                    "ExecStart=/usr/sbin/nft -f " ML_HUBINIT_FIREWALL "\n"
                                    "\n"
                                    "[Install]\n"
                                    "WantedBy=multi-user.target\n";
#define FIREWALL_UNIT "/etc/systemd/system/meshlab-hub-firewall.service"

static char *setup_script(const struct ml_bundle *b, bool firewall)
{
    g_autofree char *label = ml_comment_text(b->label);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "#!/bin/sh\n"
                           "# %s: the hub's setup, run once by cloud-init (log: " ML_HUBINIT_LOG
                           ").\n"
                           "set -eu\n"
                           "missing=\n",
                           label);
    for (guint i = 0; i < b->hub_packages->len; i++) {
        g_auto(GStrv) cp = g_strsplit(g_ptr_array_index(b->hub_packages, i), " ", 2);
        g_string_append_printf(s, "command -v %s >/dev/null 2>&1 || missing=\"$missing %s\"\n",
                               cp[0], cp[1]);
    }
    g_string_append(s, "if [ -n \"$missing\" ]; then\n"
                       "    apt-get update\n"
                       "    DEBIAN_FRONTEND=noninteractive apt-get install -y "
                       "--no-install-recommends $missing\n"
                       "fi\n");
    if (b->hub_sysctls->len)
        g_string_append(s, "sysctl -q -p " ML_HUBINIT_SYSCTL "\n");
    if (firewall)
        g_string_append(s, "systemctl daemon-reload\n"
                           "systemctl enable --now meshlab-hub-firewall.service\n");
    for (guint i = 0; i < b->hub_commands->len; i++)
        g_string_append_printf(s, "%s\n", (const char *)g_ptr_array_index(b->hub_commands, i));
    g_string_append(s, "echo 'meshlab hub setup: done'\n");
    return g_string_free(s, FALSE);
}

static GArray *hub_writes(const struct ml_bundle *b, const char *firewall)
{
    GArray *w = g_array_new(FALSE, TRUE, sizeof(struct hub_write));
    for (guint i = 0; i < b->hub_files->len; i++) {
        const struct ml_bundle_hub_file *f = g_ptr_array_index(b->hub_files, i);
        struct hub_write x = {f->path, g_strdup(f->content), f->mode};
        g_array_append_val(w, x);
    }
    if (b->hub_sysctls->len) {
        GString *s = g_string_new("# What the exported dataplanes need of the hub's kernel.\n");
        for (guint i = 0; i < b->hub_sysctls->len; i++)
            g_string_append_printf(s, "%s\n", (const char *)g_ptr_array_index(b->hub_sysctls, i));
        struct hub_write x = {ML_HUBINIT_SYSCTL, g_string_free(s, FALSE), 0644};
        g_array_append_val(w, x);
    }
    if (firewall) {
        struct hub_write x = {ML_HUBINIT_FIREWALL, g_strdup(firewall), 0600};
        g_array_append_val(w, x);
        struct hub_write u = {FIREWALL_UNIT, g_strdup(firewall_unit), 0644};
        g_array_append_val(w, u);
    }
    struct hub_write x = {ML_HUBINIT_SCRIPT, setup_script(b, firewall != NULL), 0700};
    g_array_append_val(w, x);
    return w;
}

static void hub_writes_free(GArray *w)
{
    for (guint i = 0; i < w->len; i++) {
        char *c = g_array_index(w, struct hub_write, i).content;
        memset(c, 0, strlen(c));
        g_free(c);
    }
    g_array_unref(w);
}

/* A literal block keeps content as it is when it ends in exactly one newline and its first
 * line does not start with a space; anything else goes as base64. */
static bool literal_ok(const char *c)
{
    size_t n = strlen(c);
    if (n == 0 || c[n - 1] != '\n' || (n > 1 && c[n - 2] == '\n') || c[0] == ' ')
        return false;
    for (const char *p = c; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
            return false;
    return g_utf8_validate(c, -1, NULL);
}

char *ml_hubinit_render(const struct ml_bundle *b, const char *firewall)
{
    GArray *w = hub_writes(b, firewall);
    g_autofree char *label = ml_comment_text(b->label);
    GString *s = g_string_new("#cloud-config\n");
    g_string_append_printf(
        s,
        "# %s: the hub VPS, from `meshlab export`.\n"
        "# Paste it whole into the provider's user-data field (cloud-init). It holds the hub's\n"
        "# private keys: keep it as secret as they are, and delete it from the provider's\n"
        "# panel once the VPS is up. The setup's log is " ML_HUBINIT_LOG ".\n"
        "write_files:\n",
        label);
    for (guint i = 0; i < w->len; i++) {
        const struct hub_write *x = &g_array_index(w, struct hub_write, i);
        g_string_append_printf(s,
                               "  - path: %s\n"
                               "    owner: root:root\n"
                               "    permissions: '%04o'\n",
                               x->path, x->mode);
        if (literal_ok(x->content)) {
            g_string_append(s, "    content: |\n");
            g_auto(GStrv) lines = g_strsplit(x->content, "\n", -1);
            for (char **l = lines; l[1]; l++)
                g_string_append_printf(s, **l ? "      %s\n" : "\n", *l);
        } else {
            g_autofree char *b64 = g_base64_encode((const guchar *)x->content, strlen(x->content));
            g_string_append_printf(s, "    encoding: b64\n    content: %s\n", b64);
        }
    }
    g_string_append(s,
                    "runcmd:\n  - [sh, -c, '" ML_HUBINIT_SCRIPT " > " ML_HUBINIT_LOG " 2>&1']\n");
    hub_writes_free(w);
    return g_string_free(s, FALSE);
}

static const char *scalar_of(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        if (k && k->type == YAML_SCALAR_NODE && !strcmp(ml_yaml_value(k), key))
            return v && v->type == YAML_SCALAR_NODE ? ml_yaml_value(v) : NULL;
    }
    return NULL;
}

static yaml_node_t *node_of(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && !strcmp(ml_yaml_value(k), key))
            return yaml_document_get_node(doc, p->value);
    }
    return NULL;
}

static bool check_doc(yaml_document_t *doc, GArray *w, GError **err)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);
    yaml_node_t *files =
        root && root->type == YAML_MAPPING_NODE ? node_of(doc, root, "write_files") : NULL;
    if (!files || files->type != YAML_SEQUENCE_NODE) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT, "the hub's user-data has no write_files list");
        return false;
    }
    size_t n = (size_t)(files->data.sequence.items.top - files->data.sequence.items.start);
    if (n != w->len) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "the hub's user-data writes %zu files, not the %u it should", n, w->len);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const struct hub_write *x = &g_array_index(w, struct hub_write, i);
        yaml_node_t *f = yaml_document_get_node(doc, files->data.sequence.items.start[i]);
        const char *path = scalar_of(doc, f, "path");
        const char *content = scalar_of(doc, f, "content");
        const char *perm = scalar_of(doc, f, "permissions");
        const char *enc = scalar_of(doc, f, "encoding");
        g_autofree char *mode = g_strdup_printf("%04o", x->mode);
        g_autofree char *decoded = NULL;
        if (content && !g_strcmp0(enc, "b64")) {
            gsize len = 0;
            guchar *d = g_base64_decode(content, &len);
            decoded = g_strndup((const char *)d, len);
            g_free(d);
            content = decoded;
        }
        if (g_strcmp0(path, x->path) || g_strcmp0(content, x->content) || g_strcmp0(perm, mode)) {
            g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                        "the hub's user-data, read back as YAML, does not write %s as meshlab "
                        "meant (file %zu: path, content or mode differs); a meshlab bug",
                        x->path, i + 1);
            return false;
        }
    }
    return true;
}

bool ml_hubinit_check(const struct ml_bundle *b, const char *firewall, const char *user_data,
                      GError **err)
{
    if (!g_str_has_prefix(user_data, "#cloud-config\n")) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "the hub's user-data does not start with #cloud-config");
        return false;
    }
    yaml_document_t doc;
    if (!ml_yaml_load("hub/user-data", user_data, strlen(user_data), &doc, err))
        return false;
    GArray *w = hub_writes(b, firewall);
    bool ok = check_doc(&doc, w, err);
    hub_writes_free(w);
    yaml_document_delete(&doc);
    return ok;
}
