#include "dataplanes/bundle.h"

#include <string.h>

static void file_free(gpointer p)
{
    struct ml_bundle_file *f = p;
    if (f->content)
        memset(f->content, 0, strlen(f->content));
    g_free(f->rel);
    g_free(f->content);
    g_free(f->install);
    g_free(f->what);
    g_free(f);
}

static void hub_file_free(gpointer p)
{
    struct ml_bundle_hub_file *f = p;
    if (f->content)
        memset(f->content, 0, strlen(f->content));
    g_free(f->path);
    g_free(f->content);
    g_free(f);
}

struct ml_bundle *ml_bundle_new(const struct ml_topology *topo, const char *hub_address,
                                const char *hub_interface, const char *label)
{
    struct ml_bundle *b = g_new0(struct ml_bundle, 1);
    b->topo = topo;
    b->hub_address = hub_address;
    b->hub_interface = hub_interface;
    b->label = label;
    b->files = g_ptr_array_new_with_free_func(file_free);
    b->hub_files = g_ptr_array_new_with_free_func(hub_file_free);
    b->hub_packages = g_ptr_array_new_with_free_func(g_free);
    b->hub_sysctls = g_ptr_array_new_with_free_func(g_free);
    b->hub_commands = g_ptr_array_new_with_free_func(g_free);
    b->checks = g_ptr_array_new_with_free_func(g_free);
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        b->client_commands[i] = g_ptr_array_new_with_free_func(g_free);
    return b;
}

void ml_bundle_free(struct ml_bundle *b)
{
    if (!b)
        return;
    g_ptr_array_unref(b->files);
    g_ptr_array_unref(b->hub_files);
    g_ptr_array_unref(b->hub_packages);
    g_ptr_array_unref(b->hub_sysctls);
    g_ptr_array_unref(b->hub_commands);
    g_ptr_array_unref(b->checks);
    for (size_t i = 0; i < ML_MAX_NODES; i++)
        g_ptr_array_unref(b->client_commands[i]);
    g_free(b);
}

struct ml_bundle_file *ml_bundle_add(struct ml_bundle *b, const char *rel, char *content,
                                     unsigned flags, size_t node, const char *install,
                                     const char *what)
{
    struct ml_bundle_file *f = g_new0(struct ml_bundle_file, 1);
    f->rel = g_strdup(rel);
    f->content = content;
    f->flags = flags;
    f->node = node;
    f->install = g_strdup(install);
    f->what = g_strdup(what);
    g_ptr_array_add(b->files, f);
    return f;
}

void ml_bundle_hub_file(struct ml_bundle *b, const char *path, const char *content, unsigned mode)
{
    struct ml_bundle_hub_file *f = g_new0(struct ml_bundle_hub_file, 1);
    f->path = g_strdup(path);
    f->content = g_strdup(content);
    f->mode = mode;
    g_ptr_array_add(b->hub_files, f);
}

static void add_once(GPtrArray *a, char *s)
{
    for (guint i = 0; i < a->len; i++)
        if (!strcmp(g_ptr_array_index(a, i), s)) {
            g_free(s);
            return;
        }
    g_ptr_array_add(a, s);
}

void ml_bundle_hub_package(struct ml_bundle *b, const char *command, const char *package)
{
    add_once(b->hub_packages, g_strdup_printf("%s %s", command, package));
}

void ml_bundle_hub_sysctl(struct ml_bundle *b, const char *key, const char *value)
{
    add_once(b->hub_sysctls, g_strdup_printf("%s = %s", key, value));
}

void ml_bundle_hub_command(struct ml_bundle *b, const char *line)
{
    g_ptr_array_add(b->hub_commands, g_strdup(line));
}

void ml_bundle_checked(struct ml_bundle *b, const char *rel, const char *check)
{
    g_ptr_array_add(b->checks, g_strdup_printf("%s\t%s", rel, check));
}

void ml_bundle_client_command(struct ml_bundle *b, size_t node, const char *line)
{
    g_ptr_array_add(b->client_commands[node], g_strdup(line));
}

char *ml_bundle_endpoint_of(const char *address, unsigned port)
{
    return strchr(address, ':') ? g_strdup_printf("[%s]:%u", address, port)
                                : g_strdup_printf("%s:%u", address, port);
}

char *ml_bundle_endpoint(const struct ml_bundle *b, unsigned port)
{
    return ml_bundle_endpoint_of(b->hub_address, port);
}

void ml_bundle_keys_free(char **priv, char **pub)
{
    for (size_t i = 0; i < ML_MAX_NODES; i++) {
        if (priv[i])
            explicit_bzero(priv[i], strlen(priv[i]));
        g_clear_pointer(&priv[i], g_free);
        if (pub)
            g_clear_pointer(&pub[i], g_free);
    }
}

const struct ml_bundle_file *ml_bundle_find(const struct ml_bundle *b, const char *rel)
{
    for (guint i = 0; i < b->files->len; i++) {
        const struct ml_bundle_file *f = g_ptr_array_index(b->files, i);
        if (!strcmp(f->rel, rel))
            return f;
    }
    return NULL;
}
