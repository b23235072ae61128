#include "virt/virt.h"

#include <errno.h>
#include <libvirt/virterror.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/controller.h"
#include "core/spawn.h"
#include "core/util.h"
#include "topology/name.h"

/* --connect's URI; NULL until main sets it. */
static char *connect_uri;

void ml_virt_set_uri(const char *uri)
{
    g_free(connect_uri);
    connect_uri = g_strdup(uri);
}

const char *ml_virt_uri_given(void)
{
    if (connect_uri)
        return connect_uri;
    const char *u = g_getenv("MESHLAB_URI");
    return u && *u ? u : NULL;
}

bool ml_virt_uri_from_env(void)
{
    return !connect_uri && ml_virt_uri_given();
}

const char *ml_virt_uri(void)
{
    const char *u = ml_virt_uri_given();
    return u ? u : ML_VIRT_DEFAULT_URI;
}

int ml_virt_uri_remote(const char *uri)
{
    g_autoptr(MlUri) u = ml_uri_parse(uri, NULL);
    if (!u)
        return -1;
    return u->server ? 1 : 0;
}

static char *replace_all(const char *text, const char *what, const char *with)
{
    g_auto(GStrv) parts = g_strsplit(text, what, -1);
    return g_strjoinv(with, parts);
}

/* libvirt's message with the URI in it replaced by its public form, and each value of the
 * URI's query (ssh's complaint names the key file) by the parameter's name. */
static char *scrub(const char *message, const char *uri, const char *shown)
{
    if (!message)
        return g_strdup("unknown error");
    char *m =
        uri && *uri && strstr(message, uri) ? replace_all(message, uri, shown) : g_strdup(message);
    g_autoptr(MlUri) u = ml_uri_parse(uri, NULL);
    for (size_t i = 0; u && i < u->n_params; i++) {
        const char *v = u->params[i].value;
        if (strlen(v) < 4 || !strstr(m, v))
            continue;
        g_autofree char *name = g_strdup_printf("(the URI's %s)", u->params[i].name);
        char *next = replace_all(m, v, name);
        g_free(m);
        m = next;
    }
    return m;
}

char *ml_virt_conn_uri(virConnectPtr conn, const char *fallback)
{
    char *u = virConnectGetURI(conn);
    if (!u) {
        virResetLastError();
        return g_strdup(fallback);
    }
    char *copy = g_strdup(u);
    free(u);
    return copy;
}

int ml_virt_conn_remote(virConnectPtr conn)
{
    g_autofree char *uri = ml_virt_conn_uri(conn, ml_virt_uri());
    /* libvirt's own spelling of a URI meshlab took; one it cannot read (an alias of
     * libvirt.conf that resolves to more than meshlab reads) is taken for another host's,
     * whose files meshlab never touches here. */
    return ml_virt_uri_remote(uri) == 0 ? 0 : 1;
}

static void quiet_handler(void *opaque, virErrorPtr e)
{
    (void)opaque;
    (void)e;
}

/* Why libvirt closed a connection (VIR_CONNECT_CLOSE_REASON_* + 1), 0 while none was closed. */
static int closed_reason;

static gpointer run_events(gpointer data)
{
    (void)data;
    for (;;)
        if (virEventRunDefaultImpl() < 0)
            g_usleep(100 * 1000);
    return NULL;
}

bool ml_virt_events_start(GError **err)
{
    static gsize once;
    static bool started;
    if (g_once_init_enter(&once)) {
        /* Keepalive and close callbacks are run by an event loop, which libvirt needs
         * registered before the first connection is opened. */
        started = virEventRegisterDefaultImpl() == 0 &&
                  g_thread_try_new("meshlab-libvirt-events", run_events, NULL, NULL) != NULL;
        g_once_init_leave(&once, 1);
    }
    if (!started)
        g_set_error(err, ML_ERROR, ML_ERR_LIBVIRT,
                    "cannot start libvirt's event loop, so a hung libvirtd could not be noticed; "
                    "this is a bug in meshlab or libvirt, please report it");
    return started;
}

static void on_close(virConnectPtr conn, int reason, void *opaque)
{
    (void)conn;
    (void)opaque;
    /* Closing a connection on purpose says nothing about the others. */
    if (reason != VIR_CONNECT_CLOSE_REASON_CLIENT)
        g_atomic_int_set(&closed_reason, reason + 1);
}

const char *ml_virt_closed_why(void)
{
    switch (g_atomic_int_get(&closed_reason) - 1) {
    case VIR_CONNECT_CLOSE_REASON_ERROR:
        return "a connection error";
    case VIR_CONNECT_CLOSE_REASON_EOF:
        return "libvirtd closed it";
    case VIR_CONNECT_CLOSE_REASON_KEEPALIVE:
        return "libvirtd stopped answering keepalives";
    default:
        return NULL;
    }
}

virConnectPtr ml_virt_connect(const char *uri, GError **err)
{
    /* libvirt prints every error to stderr by default; meshlab reports its own. */
    virSetErrorFunc(NULL, quiet_handler);
    if (!ml_virt_events_start(err))
        return NULL;
    virConnectPtr conn = virConnectOpen(uri);
    if (!conn) {
        g_autofree char *shown = ml_uri_public(uri);
        g_autofree char *m = scrub(virGetLastErrorMessage(), uri, shown);
        if (ml_virt_uri_remote(uri) == 1)
            g_set_error(err, ML_ERROR, ML_ERR_LIBVIRT,
                        "cannot connect to libvirt at %s: %s; check the URI, that the host "
                        "answers (for qemu+ssh, that 'ssh' to it works without a prompt), and "
                        "that libvirtd runs there ('meshlab check --connect URI')",
                        shown, m);
        else
            g_set_error(err, ML_ERROR, ML_ERR_LIBVIRT,
                        "cannot connect to libvirt at %s: %s; is libvirtd running? (start it "
                        "with 'libvirtd -d', or run 'meshlab check')",
                        shown, m);
        return NULL;
    }
    /* A libvirtd that stops answering ends the connection after ML_VIRT_KEEPALIVE_S ×
     * ML_VIRT_KEEPALIVE_COUNT s, and every call waiting on it fails, teardown's included.
     * Drivers in this process (test:///default) have no keepalive and need none. */
    if (virConnectSetKeepAlive(conn, ML_VIRT_KEEPALIVE_S, ML_VIRT_KEEPALIVE_COUNT) < 0) {
        virErrorPtr e = virGetLastError();
        bool unsupported = e && e->code == VIR_ERR_NO_SUPPORT;
        if (!unsupported) {
            g_autofree char *shown = ml_uri_public(uri);
            ml_virt_error(err, "cannot turn on libvirt's keepalive at %s", shown);
            virConnectClose(conn);
            return NULL;
        }
        virResetLastError();
    }
    if (virConnectRegisterCloseCallback(conn, on_close, NULL, NULL) < 0)
        virResetLastError();
    return conn;
}

void ml_virt_error(GError **err, const char *what_fmt, ...)
{
    va_list ap;
    va_start(ap, what_fmt);
    g_autofree char *what = g_strdup_vprintf(what_fmt, ap);
    va_end(ap);
    const char *m = virGetLastErrorMessage();
    const char *closed = ml_virt_closed_why();
    if (closed)
        g_set_error(err, ML_ERROR, ML_ERR_LIBVIRT,
                    "%s: %s (the connection to libvirt was closed: %s; check libvirtd with "
                    "'meshlab check', then run the command again)",
                    what, m ? m : "unknown libvirt error", closed);
    else
        g_set_error(err, ML_ERROR, ML_ERR_LIBVIRT, "%s: %s", what, m ? m : "unknown libvirt error");
}

#include "virt/virt_xml.h"

bool ml_virt_define_network(virConnectPtr conn, const struct ml_plan_host *h, unsigned mtu,
                            GError **err)
{
    g_autofree char *xml = ml_xml_network(h, mtu);
    virNetworkPtr net = virNetworkDefineXML(conn, xml);
    if (!net) {
        ml_virt_error(err, "cannot define network '%s'", h->network);
        return false;
    }
    bool ok = virNetworkCreate(net) == 0;
    if (!ok)
        ml_virt_error(err, "cannot start network '%s'", h->network);
    virNetworkFree(net);
    return ok;
}

bool ml_virt_qemu_owner(virConnectPtr conn, long *ret_uid, long *ret_gid)
{
    *ret_uid = *ret_gid = -1;
    g_autofree char *caps = virConnectGetCapabilities(conn);
    /* <secmodel><model>dac</model>...<baselabel type='qemu'>+64055:+64055</baselabel> */
    const char *dac = caps ? strstr(caps, "<model>dac</model>") : NULL;
    const char *label = dac ? strstr(dac, "<baselabel type='qemu'>") : NULL;
    const char *end = dac ? strstr(dac, "</secmodel>") : NULL;
    if (!label || (end && label > end)) {
        virResetLastError();
        return false;
    }
    label += strlen("<baselabel type='qemu'>");
    long uid = -1, gid = -1;
    if (sscanf(label, "+%ld:+%ld", &uid, &gid) != 2 || uid < 0 || gid < 0)
        return false;
    *ret_uid = uid;
    *ret_gid = gid;
    return true;
}

bool ml_virt_define_pool(virConnectPtr conn, const struct ml_plan_host *h, GError **err)
{
    long uid = 0, gid = 0;
    int mode = 0711;
    if (ml_virt_conn_remote(conn) != 1) {
        ml_virt_qemu_owner(conn, &uid, &gid);
        mode = 0700;
    }
    g_autofree char *xml = ml_xml_pool(h, uid, gid, mode);
    virStoragePoolPtr pool = virStoragePoolDefineXML(conn, xml, 0);
    if (!pool) {
        ml_virt_error(err, "cannot define storage pool '%s'", h->pool);
        return false;
    }
    bool ok = virStoragePoolBuild(pool, 0) == 0 && virStoragePoolCreate(pool, 0) == 0;
    if (!ok)
        ml_virt_error(err, "cannot build storage pool '%s' in %s", h->pool, h->pool_dir);
    virStoragePoolFree(pool);
    return ok;
}

char *ml_virt_lab_pool_dir(virConnectPtr conn, const char *lab)
{
    if (ml_virt_conn_remote(conn) != 1)
        return ml_lab_pool_dir(lab);
    if (!lab || !*lab || !strcmp(lab, ".") || !strcmp(lab, "..") || strchr(lab, '/'))
        return NULL;
    g_autofree char *name = ml_plan_pool_name(lab);
    return g_build_filename(ML_VIRT_HOST_DIR, name, NULL);
}

unsigned long long ml_virt_image_size(const char *path, GError **err)
{
    const char *info[] = {"qemu-img", "info", "--output=json", path, NULL};
    g_autofree char *json = NULL;
    if (!ml_spawn_timeout(info, 60, &json, err))
        return 0;
    const char *vs = strstr(json, "\"virtual-size\":");
    return vs ? g_ascii_strtoull(vs + strlen("\"virtual-size\":"), NULL, 10) : 0;
}

bool ml_virt_create_overlay(virConnectPtr conn, const struct ml_plan *plan, size_t guest,
                            const char *backing, unsigned long long capacity, char **ret_path,
                            GError **err)
{
    const char *poolname = ml_plan_guest_host(plan, guest)->pool;
    virStoragePoolPtr pool = virStoragePoolLookupByName(conn, poolname);
    if (!pool) {
        ml_virt_error(err, "storage pool '%s' is gone", poolname);
        return false;
    }
    const struct ml_plan_guest *g = &plan->guests[guest];
    /* The overlay's size must match the base's virtual size. */
    if (!capacity)
        capacity = 2ULL << 30;
    g_autofree char *xml = ml_xml_overlay_volume(g->overlay_vol, backing, capacity);
    virStorageVolPtr vol = virStorageVolCreateXML(pool, xml, 0);
    virStoragePoolFree(pool);
    if (!vol) {
        ml_virt_error(err, "cannot create overlay '%s' on %s", g->overlay_vol, backing);
        return false;
    }
    *ret_path = virStorageVolGetPath(vol);
    virStorageVolFree(vol);
    if (!*ret_path)
        ml_virt_error(err, "cannot get the path of overlay '%s'", g->overlay_vol);
    return *ret_path != NULL;
}

virDomainPtr ml_virt_define_domain(virConnectPtr conn, const char *name, const char *xml,
                                   GError **err)
{
    virDomainPtr dom = virDomainDefineXML(conn, xml);
    if (!dom)
        ml_virt_error(err, "cannot define domain '%s'", name);
    return dom;
}

struct tag_parse {
    const char *current;
    char *lab;
    char *run;
    char *by;
};

static const char *local_name(const char *name)
{
    const char *colon = strrchr(name, ':');
    return colon ? colon + 1 : name;
}

static void tag_start(GMarkupParseContext *ctx, const char *name, const char **an, const char **av,
                      gpointer data, GError **err)
{
    struct tag_parse *tp = data;
    tp->current = local_name(name);
}

static void tag_end(GMarkupParseContext *ctx, const char *name, gpointer data, GError **err)
{
    ((struct tag_parse *)data)->current = NULL;
}

static void tag_text(GMarkupParseContext *ctx, const char *text, gsize len, gpointer data,
                     GError **err)
{
    struct tag_parse *tp = data;
    if (!tp->current)
        return;
    if (!strcmp(tp->current, "name") && !tp->lab)
        tp->lab = g_strndup(text, len);
    else if (!strcmp(tp->current, "run") && !tp->run)
        tp->run = g_strndup(text, len);
    else if (!strcmp(tp->current, "by") && !tp->by)
        tp->by = g_strndup(text, len);
}

/* The domain's meshlab metadata; false when it has none. */
static bool read_tag(virDomainPtr dom, struct tag_parse *tp)
{
    char *md =
        virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, ML_TAG_NS, VIR_DOMAIN_AFFECT_CONFIG);
    virResetLastError();
    if (!md)
        return false;
    static const GMarkupParser parser = {tag_start, tag_end, tag_text, NULL, NULL};
    GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, tp, NULL);
    bool ok = g_markup_parse_context_parse(ctx, md, -1, NULL) &&
              g_markup_parse_context_end_parse(ctx, NULL) && tp->lab;
    g_markup_parse_context_free(ctx);
    free(md);
    return ok;
}

static void tag_clear(struct tag_parse *tp)
{
    g_free(tp->lab);
    g_free(tp->run);
    g_free(tp->by);
}

bool ml_virt_domain_tag(virDomainPtr dom, char **ret_lab, char **ret_run)
{
    struct tag_parse tp = {0};
    bool ok = read_tag(dom, &tp);
    if (ok && ret_lab)
        *ret_lab = g_steal_pointer(&tp.lab);
    if (ok && ret_run)
        *ret_run = g_steal_pointer(&tp.run);
    tag_clear(&tp);
    return ok;
}

/* Whose an object of UUID uuid is, in words; NULL when it is this controller's. */
static char *owner_words(const char *uuid, const char *by, const char *run)
{
    char id[ML_CONTROLLER_ID_LEN + 1];
    if (ml_controller_owns(uuid))
        return NULL;
    if (!ml_controller_of_uuid(uuid, id))
        return g_strdup("no controller's: made by hand, or by a meshlab older than controllers");
    g_autofree char *by_safe = by ? ml_escape_controls(by) : NULL;
    g_autofree char *run_safe = run ? ml_escape_controls(run) : NULL;
    return g_strdup_printf("controller %s's%s%s%s%s%s", id, by_safe ? " (" : "",
                           by_safe ? by_safe : "", run_safe ? ", run " : "",
                           run_safe ? run_safe : "", by_safe ? ")" : "");
}

char *ml_virt_domain_owner(virDomainPtr dom)
{
    char uuid[VIR_UUID_STRING_BUFLEN] = "";
    struct tag_parse tp = {0};
    read_tag(dom, &tp);
    virDomainGetUUIDString(dom, uuid);
    char *words = owner_words(uuid, tp.by, tp.run);
    tag_clear(&tp);
    return words;
}

static char *network_owner(virNetworkPtr net)
{
    char uuid[VIR_UUID_STRING_BUFLEN] = "";
    virNetworkGetUUIDString(net, uuid);
    return owner_words(uuid, NULL, NULL);
}

static char *pool_owner(virStoragePoolPtr pool)
{
    char uuid[VIR_UUID_STRING_BUFLEN] = "";
    virStoragePoolGetUUIDString(pool, uuid);
    return owner_words(uuid, NULL, NULL);
}

char *ml_virt_pool_path(virStoragePoolPtr pool)
{
    char *xml = virStoragePoolGetXMLDesc(pool, 0);
    if (!xml)
        return NULL;
    const char *a = strstr(xml, "<path>");
    const char *b = a ? strstr(a, "</path>") : NULL;
    char *path = b ? g_strndup(a + strlen("<path>"), (gsize)(b - a - strlen("<path>"))) : NULL;
    free(xml);
    return path;
}

/* A teardown in progress: what it removed, and whether anything failed. The first
 * failure is the error reported; the teardown goes on and removes what it still can. */
struct teardown {
    virConnectPtr conn;
    const char *lab;
    bool foreign; /* remove another controller's objects too (down --foreign) */
    ml_teardown_cb cb;
    void *opaque;
    GError **err;
    int removed;
    bool failed;
};

static void removed(struct teardown *td, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void removed(struct teardown *td, const char *fmt, ...)
{
    td->removed++;
    if (!td->cb)
        return;
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *s = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    td->cb(s, td->opaque);
}

/* A libvirt call failed: its own message follows ours. */
static void libvirt_failed(struct teardown *td, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void libvirt_failed(struct teardown *td, const char *fmt, ...)
{
    if (!td->failed) {
        va_list ap;
        va_start(ap, fmt);
        g_autofree char *what = g_strdup_vprintf(fmt, ap);
        va_end(ap);
        ml_virt_error(td->err, "%s", what);
    }
    td->failed = true;
}

/* meshlab would not remove something, or the host would not let it: msg says why. */
static void refused(struct teardown *td, int code, char *msg)
{
    if (!td->failed)
        g_set_error_literal(td->err, ML_ERROR, code, msg);
    td->failed = true;
    g_free(msg);
}

/* Whether the teardown may remove an object whose owner is whose (NULL: this controller's);
 * when not, the refusal says whose it is and what removes it. */
static bool may_remove(struct teardown *td, const char *what, const char *whose)
{
    if (!whose || td->foreign)
        return true;
    refused(td, ML_ERR_INPUT,
            g_strdup_printf("%s is %s, not this controller's (%s): it is left alone; if that lab "
                            "is abandoned, 'meshlab down --foreign %s' removes it",
                            what, whose, ml_controller_words(), td->lab));
    return false;
}

/* One domain being stopped on its own thread: virDomainDestroy waits for QEMU to exit (up to
 * seconds each under TCG), so a lab's guests are stopped all at once. libvirt's errors are
 * per thread: the thread keeps its message. */
struct stopping {
    virDomainPtr dom;
    GThread *thread;
    bool failed;
    char *why;
};

static gpointer stop_main(gpointer data)
{
    struct stopping *s = data;
    if (virDomainIsActive(s->dom) == 1 && virDomainDestroy(s->dom) < 0) {
        const char *m = virGetLastErrorMessage();
        s->failed = true;
        s->why = g_strdup(m ? m : "unknown libvirt error");
    }
    return NULL;
}

static int by_domain_name(gconstpointer a, gconstpointer b)
{
    const struct stopping *x = a, *y = b;
    return strcmp(virDomainGetName(x->dom), virDomainGetName(y->dom));
}

/* The lab's domains: named with its prefix and tagged with its name. All are stopped at
 * once, then undefined and reported one by one in the order of their names. */
static bool remove_domains(struct teardown *td)
{
    g_autofree char *prefix = ml_plan_domain_prefix(td->lab);
    virDomainPtr *doms = NULL;
    int n = virConnectListAllDomains(td->conn, &doms, 0);
    if (n < 0) {
        ml_virt_error(td->err, "cannot list domains");
        return false;
    }
    g_autoptr(GArray) own = g_array_new(FALSE, TRUE, sizeof(struct stopping));
    for (int i = 0; i < n; i++) {
        const char *name = virDomainGetName(doms[i]);
        g_autofree char *tag_lab = NULL;
        bool lab_s = g_str_has_prefix(name, prefix) &&
                     ml_virt_domain_tag(doms[i], &tag_lab, NULL) && !strcmp(tag_lab, td->lab);
        g_autofree char *whose = lab_s ? ml_virt_domain_owner(doms[i]) : NULL;
        g_autofree char *what = g_strdup_printf("domain '%s'", name);
        if (lab_s && may_remove(td, what, whose)) {
            struct stopping s = {.dom = doms[i]};
            g_array_append_val(own, s);
        } else {
            virDomainFree(doms[i]);
        }
    }
    free(doms);
    g_array_sort(own, by_domain_name);
    for (guint i = 0; i < own->len; i++) {
        struct stopping *s = &g_array_index(own, struct stopping, i);
        s->thread = g_thread_new("meshlab-stop", stop_main, s);
    }
    for (guint i = 0; i < own->len; i++)
        g_thread_join(g_array_index(own, struct stopping, i).thread);
    for (guint i = 0; i < own->len; i++) {
        struct stopping *s = &g_array_index(own, struct stopping, i);
        const char *name = virDomainGetName(s->dom);
        if (s->failed)
            refused(td, ML_ERR_LIBVIRT,
                    g_strdup_printf("cannot stop domain '%s': %s", name, s->why));
        else if (virDomainUndefine(s->dom) < 0)
            libvirt_failed(td, "cannot undefine domain '%s'", name);
        else
            removed(td, "domain %s", name);
        g_free(s->why);
        virDomainFree(s->dom);
    }
    return true;
}

/* Only the lab's own network: its bridge carries the lab's hash. NULL when there is none,
 * or when the network of that name is someone else's. */
static virNetworkPtr own_network(struct teardown *td, const char *netname)
{
    virNetworkPtr net = virNetworkLookupByName(td->conn, netname);
    if (!net)
        return NULL;
    char hash[9];
    ml_plan_lab_hash(td->lab, hash);
    g_autofree char *bridge = g_strdup_printf("mlb%s", hash);
    char *net_bridge = virNetworkGetBridgeName(net);
    /* A host's network of a lab over several hosts has the lab's bridge name and its index. */
    bool dotted = strlen(netname) > strlen(ML_OBJ_PREFIX) + strlen(td->lab);
    if (!net_bridge ||
        (dotted ? !g_str_has_prefix(net_bridge, bridge) || strlen(net_bridge) != strlen(bridge) + 1
                : strcmp(net_bridge, bridge) != 0)) {
        refused(
            td, ML_ERR_LIBVIRT,
            g_strdup_printf(
                "network '%s' has bridge '%s', not meshlab's '%s'; it was not made by meshlab and "
                "is left alone (remove it with virsh if you are sure)",
                netname, net_bridge ? net_bridge : "?", bridge));
        virNetworkFree(net);
        net = NULL;
    }
    free(net_bridge);
    return net;
}

static gint by_string(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether name is one of lab's networks or pools: meshlab-LAB, or meshlab-LAB.HOST. */
static bool lab_object(const char *name, const char *lab)
{
    if (!name || !g_str_has_prefix(name, ML_OBJ_PREFIX))
        return false;
    name += strlen(ML_OBJ_PREFIX);
    size_t n = strlen(lab);
    return !strncmp(name, lab, n) && (name[n] == '\0' || name[n] == '.');
}

GPtrArray *ml_virt_lab_objects(virConnectPtr conn, const char *lab, bool pools)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    if (pools) {
        virStoragePoolPtr *list = NULL;
        int n = virConnectListAllStoragePools(conn, &list, 0);
        for (int i = 0; i < n; i++) {
            if (lab_object(virStoragePoolGetName(list[i]), lab))
                g_ptr_array_add(names, g_strdup(virStoragePoolGetName(list[i])));
            virStoragePoolFree(list[i]);
        }
        free(list);
    } else {
        virNetworkPtr *list = NULL;
        int n = virConnectListAllNetworks(conn, &list, 0);
        for (int i = 0; i < n; i++) {
            if (lab_object(virNetworkGetName(list[i]), lab))
                g_ptr_array_add(names, g_strdup(virNetworkGetName(list[i])));
            virNetworkFree(list[i]);
        }
        free(list);
    }
    g_ptr_array_sort(names, by_string);
    return names;
}

static void remove_network(struct teardown *td, const char *netname)
{
    virNetworkPtr net = own_network(td, netname);
    if (!net)
        return;
    g_autofree char *whose = network_owner(net);
    g_autofree char *what = g_strdup_printf("network '%s'", netname);
    if (!may_remove(td, what, whose)) {
        virNetworkFree(net);
        return;
    }
    if (virNetworkIsActive(net) == 1 && virNetworkDestroy(net) < 0)
        libvirt_failed(td, "cannot stop network '%s'", netname);
    else if (virNetworkUndefine(net) < 0)
        libvirt_failed(td, "cannot undefine network '%s'", netname);
    else
        removed(td, "network %s", netname);
    virNetworkFree(net);
}

/* Only the lab's own pool: its directory is the one meshlab gives it. NULL when there is
 * none, or when the pool of that name is someone else's. */
static virStoragePoolPtr own_pool(struct teardown *td, const char *poolname, char **ret_dir)
{
    *ret_dir = NULL;
    virStoragePoolPtr pool = virStoragePoolLookupByName(td->conn, poolname);
    if (!pool)
        return NULL;
    /* meshlab-LAB.HOST's directory is LAB.HOST's */
    g_autofree char *key = g_strdup(poolname + strlen(ML_OBJ_PREFIX));
    g_autofree char *want_dir = ml_virt_lab_pool_dir(td->conn, key);
    g_autofree char *pool_dir = ml_virt_pool_path(pool);
    /* On another host, a lab that host's own meshlab made keeps its pool where meshlab does
     * by default there; and where this machine's libvirt is also one of a lab's hosts reached
     * by another URI (a host's pool, meshlab-LAB.HOST), that pool is where meshlab puts a
     * remote one. A one-host lab's pool here is only ever its own directory's: one of that name
     * in the remote place is another controller's lab. */
    bool host_pool = strchr(key, '.') != NULL;
    g_autofree char *theirs = ml_virt_conn_remote(td->conn) == 1
                                  ? g_build_filename("/var/lib/meshlab/pools", key, NULL)
                              : host_pool ? g_build_filename(ML_VIRT_HOST_DIR, poolname, NULL)
                                          : NULL;
    if (g_strcmp0(pool_dir, want_dir) != 0 && g_strcmp0(pool_dir, theirs) != 0) {
        refused(
            td, ML_ERR_LIBVIRT,
            g_strdup_printf(
                "storage pool '%s' lives in '%s', not meshlab's '%s'; it was not made by meshlab "
                "and is left alone with its volumes",
                poolname, pool_dir ? pool_dir : "?", want_dir));
        virStoragePoolFree(pool);
        return NULL;
    }
    *ret_dir = g_steal_pointer(&pool_dir);
    return pool;
}

static void remove_volumes(struct teardown *td, virStoragePoolPtr pool, const char *poolname)
{
    if (virStoragePoolIsActive(pool) != 1)
        virStoragePoolCreate(pool, 0);
    virStoragePoolRefresh(pool, 0);
    virStorageVolPtr *vols = NULL;
    int nv = virStoragePoolListAllVolumes(pool, &vols, 0);
    for (int i = 0; i < nv; i++) {
        const char *vname = virStorageVolGetName(vols[i]);
        /* Only what meshlab made: a file added by hand stays, and so does the directory. */
        if (!ml_name_is_pool_file(vname)) {
            virStorageVolFree(vols[i]);
            continue;
        }
        if (virStorageVolDelete(vols[i], 0) < 0)
            libvirt_failed(td, "cannot delete volume '%s' of pool '%s'", vname, poolname);
        else
            removed(td, "volume %s/%s", poolname, vname);
        virStorageVolFree(vols[i]);
    }
    free(vols);
}

static void remove_pool(struct teardown *td, const char *poolname)
{
    g_autofree char *pool_dir = NULL;
    virStoragePoolPtr pool = own_pool(td, poolname, &pool_dir);
    if (!pool)
        return;
    g_autofree char *whose = pool_owner(pool);
    g_autofree char *what = g_strdup_printf("storage pool '%s'", poolname);
    if (!may_remove(td, what, whose)) {
        virStoragePoolFree(pool);
        return;
    }
    remove_volumes(td, pool, poolname);
    if (virStoragePoolIsActive(pool) == 1)
        virStoragePoolDestroy(pool);
    /* Removes the pool's directory; fails harmlessly if something foreign is in it. */
    virStoragePoolDelete(pool, VIR_STORAGE_POOL_DELETE_NORMAL);
    if (virStoragePoolUndefine(pool) < 0)
        libvirt_failed(td, "cannot undefine storage pool '%s'", poolname);
    else
        removed(td, "storage pool %s", poolname);
    virStoragePoolFree(pool);
    /* The directory is the host's: this machine's of that name is not the lab's unless the
     * host is this machine's libvirt. */
    if (ml_virt_conn_remote(td->conn) == 0 && g_file_test(pool_dir, G_FILE_TEST_IS_DIR) &&
        rmdir(pool_dir) < 0)
        refused(td, ML_ERR_HOST,
                g_strdup_printf(
                    "the pool directory '%s' could not be removed (%s); look inside, remove it by "
                    "hand, and run down again",
                    pool_dir, g_strerror(errno)));
}

static int teardown(virConnectPtr conn, const char *lab, bool foreign, ml_teardown_cb cb,
                    void *opaque, GError **err)
{
    struct teardown td = {
        .conn = conn, .lab = lab, .foreign = foreign, .cb = cb, .opaque = opaque, .err = err};
    if (!remove_domains(&td))
        return -1;
    g_autoptr(GPtrArray) nets = ml_virt_lab_objects(conn, lab, false);
    for (guint i = 0; i < nets->len; i++)
        remove_network(&td, g_ptr_array_index(nets, i));
    g_autoptr(GPtrArray) pools = ml_virt_lab_objects(conn, lab, true);
    for (guint i = 0; i < pools->len; i++)
        remove_pool(&td, g_ptr_array_index(pools, i));
    virResetLastError();
    return td.failed ? -1 : td.removed;
}

int ml_virt_teardown(virConnectPtr conn, const char *lab, ml_teardown_cb cb, void *opaque,
                     GError **err)
{
    return teardown(conn, lab, false, cb, opaque, err);
}

int ml_virt_teardown_foreign(virConnectPtr conn, const char *lab, ml_teardown_cb cb, void *opaque,
                             GError **err)
{
    return teardown(conn, lab, true, cb, opaque, err);
}

/* "KIND NAME: WHOSE" for one of the lab's networks or pools that is not this controller's. */
static void add_foreign_object(GPtrArray *out, virConnectPtr conn, const char *name, bool pool)
{
    g_autofree char *whose = NULL;
    if (pool) {
        virStoragePoolPtr p = virStoragePoolLookupByName(conn, name);
        whose = p ? pool_owner(p) : NULL;
        if (p)
            virStoragePoolFree(p);
    } else {
        virNetworkPtr n = virNetworkLookupByName(conn, name);
        whose = n ? network_owner(n) : NULL;
        if (n)
            virNetworkFree(n);
    }
    if (whose)
        g_ptr_array_add(out, g_strdup_printf("%s %s: %s", pool ? "storage pool" : "network", name,
                                             whose));
}

GPtrArray *ml_virt_lab_foreign(virConnectPtr conn, const char *lab)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *prefix = ml_plan_domain_prefix(lab);
    virDomainPtr *doms = NULL;
    int n = virConnectListAllDomains(conn, &doms, 0);
    for (int i = 0; i < n; i++) {
        g_autofree char *tag_lab = NULL;
        const char *name = virDomainGetName(doms[i]);
        g_autofree char *whose = NULL;
        if (g_str_has_prefix(name, prefix) && ml_virt_domain_tag(doms[i], &tag_lab, NULL) &&
            !strcmp(tag_lab, lab) && (whose = ml_virt_domain_owner(doms[i])))
            g_ptr_array_add(out, g_strdup_printf("domain %s: %s", name, whose));
        virDomainFree(doms[i]);
    }
    free(doms);
    for (int pools = 0; pools < 2; pools++) {
        g_autoptr(GPtrArray) names = ml_virt_lab_objects(conn, lab, pools);
        for (guint i = 0; i < names->len; i++)
            add_foreign_object(out, conn, g_ptr_array_index(names, i), pools);
    }
    virResetLastError();
    return out;
}

static void add_unique(GPtrArray *labs, const char *lab)
{
    for (guint i = 0; i < labs->len; i++)
        if (!strcmp(g_ptr_array_index(labs, i), lab))
            return;
    g_ptr_array_add(labs, g_strdup(lab));
}

/* The lab of a network's or pool's name: meshlab-LAB, or meshlab-LAB.HOST of a lab over several
 * hosts ('.' is in no lab name). */
static void add_object_lab(GPtrArray *labs, const char *name)
{
    if (!g_str_has_prefix(name, ML_OBJ_PREFIX))
        return;
    name += strlen(ML_OBJ_PREFIX);
    g_autofree char *lab = g_strndup(name, strcspn(name, "."));
    add_unique(labs, lab);
}

GPtrArray *ml_virt_list_labs(virConnectPtr conn)
{
    GPtrArray *labs = g_ptr_array_new_with_free_func(g_free);
    virDomainPtr *doms = NULL;
    int n = virConnectListAllDomains(conn, &doms, 0);
    for (int i = 0; i < n; i++) {
        g_autofree char *lab = NULL;
        if (ml_virt_domain_tag(doms[i], &lab, NULL))
            add_unique(labs, lab);
        virDomainFree(doms[i]);
    }
    free(doms);
    virNetworkPtr *nets = NULL;
    n = virConnectListAllNetworks(conn, &nets, 0);
    for (int i = 0; i < n; i++) {
        add_object_lab(labs, virNetworkGetName(nets[i]));
        virNetworkFree(nets[i]);
    }
    free(nets);
    virStoragePoolPtr *pools = NULL;
    n = virConnectListAllStoragePools(conn, &pools, 0);
    for (int i = 0; i < n; i++) {
        add_object_lab(labs, virStoragePoolGetName(pools[i]));
        virStoragePoolFree(pools[i]);
    }
    free(pools);
    virResetLastError();
    return labs;
}

bool ml_virt_nic_stats(virDomainPtr dom, const char *tap, struct ml_nic_stats *ret, GError **err)
{
    virDomainInterfaceStatsStruct st;
    if (virDomainInterfaceStats(dom, tap, &st, sizeof(st)) < 0) {
        ml_virt_error(err, "cannot read the counters of %s", tap);
        return false;
    }
    *ret = (struct ml_nic_stats){.rx_bytes = st.rx_bytes,
                                 .tx_bytes = st.tx_bytes,
                                 .rx_packets = st.rx_packets,
                                 .tx_packets = st.tx_packets,
                                 .rx_drop = MAX(0, st.rx_drop),
                                 .tx_drop = MAX(0, st.tx_drop)};
    return true;
}

static bool sysfs_uint(const char *tap, const char *name, unsigned *ret)
{
    g_autofree char *path = g_strdup_printf("/sys/class/net/%s/%s", tap, name);
    g_autofree char *text = NULL;
    if (strchr(tap, '/') || !g_file_get_contents(path, &text, NULL, NULL))
        return false;
    char *end = NULL;
    guint64 v = g_ascii_strtoull(text, &end, 10);
    if (end == text || v == 0 || v > 1u << 24)
        return false;
    *ret = (unsigned)v;
    return true;
}

bool ml_virt_tap_queue(const char *tap, unsigned *ret_frames, unsigned *ret_frame_bytes)
{
    unsigned mtu = 0;
    if (!tap || !sysfs_uint(tap, "tx_queue_len", ret_frames) || !sysfs_uint(tap, "mtu", &mtu))
        return false;
    *ret_frame_bytes = mtu + 14; /* the Ethernet header */
    return true;
}

double ml_virt_vcpu_time_s(virDomainPtr dom)
{
    double vcpu = -1;
    int n = virDomainGetCPUStats(dom, NULL, 0, -1, 1, 0);
    if (n <= 0)
        return vcpu;
    virTypedParameterPtr params = g_new0(virTypedParameter, n);
    int got = virDomainGetCPUStats(dom, params, (unsigned)n, -1, 1, 0);
    for (int i = 0; i < got; i++)
        if (params[i].type == VIR_TYPED_PARAM_ULLONG &&
            !strcmp(params[i].field, VIR_DOMAIN_CPU_STATS_VCPUTIME))
            vcpu = (double)params[i].value.ul / 1e9;
    if (got > 0)
        virTypedParamsClear(params, got);
    g_free(params);
    return vcpu;
}

int ml_virt_qemu_pid(virDomainPtr dom)
{
    const char *name = virDomainGetName(dom);
    g_autofree char *path = g_strdup_printf("/run/libvirt/qemu/%s.pid", name ? name : "");
    g_autofree char *text = NULL;
    if (!name || !g_file_get_contents(path, &text, NULL, NULL))
        return 0;
    long pid = strtol(text, NULL, 10);
    return pid > 0 && pid < INT32_MAX ? (int)pid : 0;
}
