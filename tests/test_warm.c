/* The warm start's bookkeeping (src/virt/warm.c), without a guest: the key of a saved guest
 * ignores the run id and nothing else that matters; a saved guest counts only when complete
 * and under its key; check's list and down --purge-cache find it; a domain's UUID is the same
 * in every run of its lab (libvirt restores a save only into the UUID it was saved with).
 * Saving, restoring and the reseed run on real guests in tests/e2e_warm.sh. */
#include "check.h"
#include "fixtures.h"

#include <glib/gstdio.h>
#include <libvirt/libvirt.h>

#include "topology/plan.h"
#include "topology/topology.h"
#include "core/util.h"
#include "virt/virt_xml.h"
#include "virt/warm.h"

static const char topo_yaml[] = "name: warmlab\nimage:\n  use: debian-12\nbridge:\n"
                                "  subnet: 192.0.2.0/24\nnodes:\n"
                                "  - {name: hub, address: 192.0.2.10, tunnel_address: 10.8.0.1}\n"
                                "  - {name: a, address: 192.0.2.11, tunnel_address: 10.8.0.2}\n"
                                "  - {name: b, address: 192.0.2.12, tunnel_address: 10.8.0.3}\n"
                                "wireguard: {subnet: 10.8.0.0/24, hub: hub}\n"
                                "measure: {client: a, server: b, paths: [plain]}\n";

static char *xml_for(const struct ml_topology *t, const char *run_id, size_t i)
{
    struct ml_plan *plan = ml_plan_new(t, run_id);
    struct ml_image img = {.base = "/c/base.qcow2", .kernel = "/c/vmlinuz", .initrd = "/c/initrd"};
    struct ml_domain_paths paths = {"/p/o.qcow2", NULL, "/p/c.log", NULL};
    char *xml = ml_xml_domain(plan, i, &img, false, &paths);
    ml_plan_free(plan);
    return xml;
}

static char *uuid_of(const char *xml)
{
    const char *a = strstr(xml, "<uuid>"), *b = a ? strstr(a, "</uuid>") : NULL;
    return a && b ? g_strndup(a + 6, (gsize)(b - a - 6)) : NULL;
}

static void test_key_and_uuid(virConnectPtr conn)
{
    g_autoptr(GError) err = NULL;
    struct ml_topology *t = ml_topology_parse("warm.yaml", topo_yaml, strlen(topo_yaml), &err);
    CHECK(t != NULL);
    if (!t)
        return;
    struct ml_image img = {.name = "debian-12", .sha256 = "aa", .cmdline = "root=/dev/vda"};
    g_autofree char *x1 = xml_for(t, "20261130-120000-aaaaaa", 0);
    g_autofree char *x2 = xml_for(t, "20261130-130000-bbbbbb", 0);
    g_autofree char *xa = xml_for(t, "20261130-120000-aaaaaa", 1);
    g_autofree char *k1 = ml_warm_key(conn, &img, false, x1, "20261130-120000-aaaaaa", NULL, &err);
    g_autofree char *k2 = ml_warm_key(conn, &img, false, x2, "20261130-130000-bbbbbb", NULL, &err);
    g_autofree char *ka = ml_warm_key(conn, &img, false, xa, "20261130-120000-aaaaaa", NULL, &err);
    g_autofree char *kkvm = ml_warm_key(conn, &img, true, x1, "20261130-120000-aaaaaa", NULL, &err);
    struct ml_image img2 = img;
    img2.sha256 = "bb";
    g_autofree char *kimg =
        ml_warm_key(conn, &img2, false, x1, "20261130-120000-aaaaaa", NULL, &err);
    img2 = img;
    img2.cmdline = "root=/dev/vda quiet";
    g_autofree char *kcmd =
        ml_warm_key(conn, &img2, false, x1, "20261130-120000-aaaaaa", NULL, &err);
    g_autofree char *x3 = g_strdup(x1);
    char *mem = strstr(x3, "<memory unit='MiB'>");
    if (mem)
        mem[strlen("<memory unit='MiB'>")] = '2'; /* 1024 -> 2024 MiB */
    g_autofree char *kmem =
        ml_warm_key(conn, &img, false, x3, "20261130-120000-aaaaaa", NULL, &err);
    /* The same XML with other files on its artifacts CD: a guest restored with the old CD's
     * size in its kernel would read past it (the hub's CD grown by Tailscale's binaries). */
    g_autofree char *kcd =
        ml_warm_key(conn, &img, false, x1, "20261130-120000-aaaaaa", "headscale 1 2.0\n", &err);
    g_autofree char *kcd2 = ml_warm_key(conn, &img, false, x1, "20261130-130000-bbbbbb",
                                        "headscale 1 2.0\ntailscale 3 4.0\n", &err);
    g_autofree char *kcd3 =
        ml_warm_key(conn, &img, false, x2, "20261130-130000-bbbbbb", "headscale 1 2.0\n", &err);
    CHECK(kcd && kcd2 && kcd3 && strcmp(kcd, k1) != 0 && strcmp(kcd, kcd2) != 0);
    CHECK(kcd && kcd3 && !strcmp(kcd, kcd3)); /* the same files in another run: the same save */
    CHECK(k1 && k2 && ka && kkvm && kimg && kcmd && kmem);
    if (!(k1 && k2 && ka && kkvm && kimg && kcmd && kmem))
        return;
    CHECK_STR(k1, k2);            /* another run of the same lab restores the same save */
    CHECK(strcmp(k1, ka) != 0);   /* another node */
    CHECK(strcmp(k1, kkvm) != 0); /* another accelerator */
    CHECK(strcmp(k1, kimg) != 0); /* another image */
    CHECK(strcmp(k1, kcmd) != 0); /* another kernel command line */
    CHECK(strcmp(k1, kmem) != 0); /* another domain */
    g_autofree char *u1 = uuid_of(x1), *u2 = uuid_of(x2), *ua = uuid_of(xa);
    CHECK(u1 && strlen(u1) == 36);
    CHECK_STR(u1, u2);
    CHECK(u1 && ua && strcmp(u1, ua) != 0);
    ml_topology_free(t);
}

static void touch(const char *lab, const char *node, const char *name, const char *text)
{
    g_autofree char *dir = ml_warm_dir(lab, node);
    g_mkdir_with_parents(dir, 0700);
    g_autofree char *f = g_build_filename(dir, name, NULL);
    g_file_set_contents(f, text, -1, NULL);
}

static void collect(const char *what, void *opaque)
{
    g_ptr_array_add(opaque, g_strdup(what));
}

static void test_have_list_purge(void)
{
    g_autofree char *cache = g_dir_make_tmp("meshlab-warm-XXXXXX", NULL);
    g_setenv("MESHLAB_CACHE_DIR", cache, TRUE);
    CHECK(!ml_warm_have("lab1", "hub", "k1"));
    touch("lab1", "hub", "state", "memory");
    touch("lab1", "hub", "overlay.qcow2", "disk");
    CHECK(!ml_warm_have("lab1", "hub", "k1")); /* no key yet: a save cut short */
    touch("lab1", "hub", "key", "k1\n");
    CHECK(ml_warm_have("lab1", "hub", "k1"));
    CHECK(!ml_warm_have("lab1", "hub", "k2")); /* a changed input boots cold */
    touch("lab1", "a", "key", "k1");
    CHECK(!ml_warm_have("lab1", "a", "k1")); /* key without state and overlay */
    touch("lab2", "hub", "key", "k9");
    g_autoptr(GPtrArray) all = ml_warm_list(NULL);
    CHECK(all->len == 3);
    if (all->len == 3) {
        CHECK(g_str_has_prefix(g_ptr_array_index(all, 0), "lab1/a "));
        CHECK(g_str_has_prefix(g_ptr_array_index(all, 1), "lab1/hub "));
        CHECK(strstr(g_ptr_array_index(all, 1), "key k1") != NULL);
        CHECK(g_str_has_prefix(g_ptr_array_index(all, 2), "lab2/hub "));
    }
    g_autoptr(GPtrArray) one = ml_warm_list("lab2");
    CHECK(one->len == 1);
    g_autoptr(GPtrArray) said = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GError) err = NULL;
    CHECK(ml_warm_purge("lab1", collect, said, &err));
    CHECK(said->len == 1);
    CHECK(!ml_warm_have("lab1", "hub", "k1"));
    g_autoptr(GPtrArray) left = ml_warm_list(NULL);
    CHECK(left->len == 1);                             /* the other lab's save stays */
    CHECK(ml_warm_purge("lab1", collect, said, &err)); /* again: nothing to do, no error */
    CHECK(said->len == 1);
    CHECK(ml_warm_purge(NULL, NULL, NULL, &err));
    g_autoptr(GPtrArray) none = ml_warm_list(NULL);
    CHECK(none->len == 0);
    g_rmdir(cache);
}

static void test_enabled(void)
{
    g_unsetenv("MESHLAB_WARM");
    CHECK(ml_warm_enabled());
    g_setenv("MESHLAB_WARM", "off", TRUE);
    CHECK(!ml_warm_enabled());
    g_setenv("MESHLAB_WARM", "0", TRUE);
    CHECK(!ml_warm_enabled());
    g_setenv("MESHLAB_WARM", "on", TRUE);
    CHECK(ml_warm_enabled());
    g_unsetenv("MESHLAB_WARM");
}

int main(void)
{
    virConnectPtr conn = virConnectOpen("test:///default");
    CHECK(conn != NULL);
    if (conn) {
        test_key_and_uuid(conn);
        virConnectClose(conn);
    }
    test_have_list_purge();
    test_enabled();
    return check_finish();
}
