#include "virt/hostshell.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "virt/virt.h"

static void add(GPtrArray *a, const char *s)
{
    g_ptr_array_add(a, g_strdup(s));
}

/* no_verify as the remote driver reads it (EXTRACT_URI_ARG_BOOL): a whole number, any but 0 on. */
static bool flag_on(const char *v)
{
    char *end = NULL;
    long n = v && *v ? strtol(v, &end, 10) : 0;
    return end && !*end && n != 0;
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
    /* The parameters as libvirt's remote driver takes them (topology/uri.h): what it would
     * run as ssh, with which key, is what this runs. */
    g_autoptr(MlUri) u = ml_uri_parse(uri, NULL);
    g_autofree char *shown = ml_uri_public(uri);
    if (!u || g_strcmp0(ml_uri_transport(u), "ssh") || !u->server) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "%s is not an SSH URI (qemu+ssh://USER@HOST/system), and this needs a shell "
                    "on the lab's host: meshlab runs it over the SSH that libvirt's connection "
                    "uses; connect with qemu+ssh://, or run meshlab on that host",
                    shown ? shown : "the URI");
        g_ptr_array_unref(a);
        return NULL;
    }
    const char *command = ml_uri_param(u, "command");
    const char *keyfile = ml_uri_param(u, "keyfile");
    const char *known = ml_uri_param(u, "known_hosts");
    add(a, command && *command ? command : "ssh");
    add(a, "-T");
    add(a, "-o");
    add(a, "BatchMode=yes");
    if (u->port) {
        add(a, "-p");
        g_ptr_array_add(a, g_strdup_printf("%u", u->port));
    }
    if (u->user) {
        add(a, "-l");
        add(a, u->user);
    }
    if (keyfile && *keyfile) {
        add(a, "-i");
        add(a, keyfile);
    }
    if (known && *known) {
        add(a, "-o");
        g_ptr_array_add(a, g_strdup_printf("UserKnownHostsFile=%s", known));
    }
    if (flag_on(ml_uri_param(u, "no_verify"))) {
        add(a, "-o");
        add(a, "StrictHostKeyChecking=no");
    }
    add(a, "--");
    add(a, u->server);
    /* ssh joins its words into one command line for the remote shell: one quoted word. */
    g_autofree char *inner = g_shell_quote(script);
    g_ptr_array_add(a, g_strdup_printf("sh -c %s", inner));
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}
