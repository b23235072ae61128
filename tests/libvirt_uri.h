/* libvirt's own URI parser as the oracle of meshlab's (src/topology/uri.c): virURIParse, which
 * virConnectOpen uses, from the libvirt library this machine runs. It is one of libvirt's private
 * symbols (LIBVIRT_PRIVATE_9.0.0 in Debian 12's libvirt0), found with dlsym; the struct below is
 * src/util/viruri.h of libvirt 9.0.0, unchanged in its fields since libvirt 1.0. */
#pragma once

#include <dlfcn.h>
#include <glib.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "topology/uri.h"

struct lv_uri_param {
    char *name;
    char *value;
    bool ignore;
};

struct lv_uri {
    char *scheme;
    char *server;
    char *user;
    unsigned int port;
    char *path;
    char *query;
    char *fragment;
    size_t paramsCount;
    size_t paramsAlloc;
    struct lv_uri_param *params;
};

typedef struct lv_uri *(*lv_parse_fn)(const char *);
typedef void (*lv_free_fn)(struct lv_uri *);
static lv_parse_fn lv_parse;
static lv_free_fn lv_free;

static void lv_quiet(void *opaque, virErrorPtr e)
{
    (void)opaque;
    (void)e;
}

/* Finds virURIParse; false (with why) where this libvirt does not export it. */
static inline bool lv_uri_init(const char **why)
{
    if (lv_parse)
        return true;
    virInitialize();
    virSetErrorFunc(NULL, lv_quiet);
    lv_parse = (lv_parse_fn)dlsym(RTLD_DEFAULT, "virURIParse");
    lv_free = (lv_free_fn)dlsym(RTLD_DEFAULT, "virURIFree");
    if (!lv_parse || !lv_free)
        *why = "libvirt does not export virURIParse/virURIFree";
    return lv_parse && lv_free;
}

static inline bool lv_same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* NULL when libvirt parses text to the same parts as ours (which parsed it), else what differs;
 * the caller frees it. virConnectOpen reads a NULL path as "". */
static inline char *lv_uri_disagreement(const struct ml_uri *ours, const char *text)
{
    struct lv_uri *lv = lv_parse(text);
    virResetLastError();
    if (!lv)
        return g_strdup("libvirt cannot parse it");
    char *why = NULL;
    const char *lv_path = lv->path && *lv->path ? lv->path : NULL;
    if (!lv_same(ours->scheme, lv->scheme))
        why = g_strdup_printf("scheme: ours '%s', libvirt's '%s'", ours->scheme, lv->scheme);
    else if (!lv_same(ours->user, lv->user))
        why = g_strdup_printf("user: ours '%s', libvirt's '%s'", ours->user, lv->user);
    else if (!lv_same(ours->server, lv->server && *lv->server ? lv->server : NULL))
        why = g_strdup_printf("server: ours '%s', libvirt's '%s'", ours->server, lv->server);
    else if (ours->port != lv->port)
        why = g_strdup_printf("port: ours %u, libvirt's %u", ours->port, lv->port);
    else if (!lv_same(ours->path, lv_path))
        why = g_strdup_printf("path: ours '%s', libvirt's '%s'", ours->path, lv->path);
    else if (!lv_same(ours->query, lv->query))
        why = g_strdup_printf("query: ours '%s', libvirt's '%s'", ours->query, lv->query);
    else if (ours->n_params != lv->paramsCount)
        why = g_strdup_printf("parameters: ours %zu, libvirt's %zu", ours->n_params,
                              lv->paramsCount);
    for (size_t i = 0; !why && i < ours->n_params; i++)
        if (!lv_same(ours->params[i].name, lv->params[i].name) ||
            !lv_same(ours->params[i].value, lv->params[i].value))
            why = g_strdup_printf("parameter %zu: ours '%s'='%s', libvirt's '%s'='%s'", i,
                                  ours->params[i].name, ours->params[i].value,
                                  lv->params[i].name, lv->params[i].value);
    lv_free(lv);
    return why;
}
