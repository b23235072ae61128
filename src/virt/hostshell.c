#include "virt/hostshell.h"

#include <string.h>

#include "core/util.h"
#include "virt/virt.h"

static void add(GPtrArray *a, const char *s)
{
    g_ptr_array_add(a, g_strdup(s));
}

char **ml_hostshell_argv(const char *uri, const char *script, GError **err)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    if (ml_virt_uri_remote(uri) == 0) {
        add(a, "sh");
        add(a, "-c");
        add(a, script);
        g_ptr_array_add(a, NULL);
        return (char **)g_ptr_array_free(a, FALSE);
    }
    g_autoptr(GUri) u = g_uri_parse(uri, G_URI_FLAGS_ENCODED_QUERY, NULL);
    g_autofree char *shown = ml_virt_uri_public(uri);
    const char *scheme = u ? g_uri_get_scheme(u) : NULL;
    if (!u || !scheme || !g_str_has_suffix(scheme, "+ssh") || !g_uri_get_host(u)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s is not an SSH URI (qemu+ssh://USER@HOST/system), and this needs a shell "
                    "on the lab's host: meshlab runs it over the SSH that libvirt's connection "
                    "uses; connect with qemu+ssh://, or run meshlab on that host",
                    shown ? shown : "the URI");
        g_ptr_array_unref(a);
        return NULL;
    }
    g_autoptr(GHashTable) q = g_uri_get_query(u) ? g_uri_parse_params(g_uri_get_query(u), -1, "&",
                                                                      G_URI_PARAMS_NONE, NULL)
                                                 : NULL;
    const char *command = q ? g_hash_table_lookup(q, "command") : NULL;
    const char *keyfile = q ? g_hash_table_lookup(q, "keyfile") : NULL;
    const char *known = q ? g_hash_table_lookup(q, "known_hosts") : NULL;
    const char *no_verify = q ? g_hash_table_lookup(q, "no_verify") : NULL;
    add(a, command && *command ? command : "ssh");
    add(a, "-T");
    add(a, "-o");
    add(a, "BatchMode=yes");
    if (g_uri_get_port(u) > 0) {
        add(a, "-p");
        g_ptr_array_add(a, g_strdup_printf("%d", g_uri_get_port(u)));
    }
    if (g_uri_get_user(u) && *g_uri_get_user(u)) {
        add(a, "-l");
        add(a, g_uri_get_user(u));
    }
    if (keyfile && *keyfile) {
        add(a, "-i");
        add(a, keyfile);
    }
    if (known && *known) {
        add(a, "-o");
        g_ptr_array_add(a, g_strdup_printf("UserKnownHostsFile=%s", known));
    }
    if (no_verify && !strcmp(no_verify, "1")) {
        add(a, "-o");
        add(a, "StrictHostKeyChecking=no");
    }
    add(a, "--");
    add(a, g_uri_get_host(u));
    /* ssh joins its words into one command line for the remote shell: one quoted word. */
    g_autofree char *inner = g_shell_quote(script);
    g_ptr_array_add(a, g_strdup_printf("sh -c %s", inner));
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}
