/* down removes only the files meshlab made in a lab's pool (issue 16, finding 18): the
 * overlays, seed and artifacts ISOs and console logs, by their names, and no file that someone
 * added by hand. Against libvirt's test:///default driver, whose volumes are not files. The
 * names of the image pool's volumes, which --purge-cache removes, and only those, are checked
 * here too; test_volume purges a real pool. */
#include "check.h"

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdlib.h>

#include "core/controller.h"
#include "core/util.h"
#include "topology/name.h"
#include "topology/plan.h"
#include "virt/virt.h"
#include "virt/volume.h"

static void collect(const char *what, void *opaque)
{
    g_ptr_array_add(opaque, g_strdup(what));
}

static bool said(GPtrArray *lines, const char *what)
{
    for (guint i = 0; i < lines->len; i++)
        if (!strcmp(g_ptr_array_index(lines, i), what))
            return true;
    return false;
}

static void test_pool_file_names(void)
{
    static const char *const ours[] = {"hub.qcow2",       "hub-seed.iso",      "a-artifacts.iso",
                                       "hub-console.log", "hub-console.log.0", "b-1.qcow2",
                                       "client-b.qcow2"};
    static const char *const theirs[] = {"notes.txt",        "hub.qcow2.bak",     "Hub.qcow2",
                                         ".qcow2",           "-seed.iso",         "hub.log.1",
                                         "hub.qcow2.1",      "hub-console.log.x", "../x.qcow2",
                                         "hub-seed.iso.0",   "a.b.qcow2",         "",
                                         "hub-console.log.", "base.qcow2.tmp"};
    for (size_t i = 0; i < G_N_ELEMENTS(ours); i++)
        CHECK(ml_name_is_pool_file(ours[i]));
    for (size_t i = 0; i < G_N_ELEMENTS(theirs); i++) {
        if (ml_name_is_pool_file(theirs[i]))
            fprintf(stderr, "taken as meshlab's: '%s'\n", theirs[i]);
        CHECK(!ml_name_is_pool_file(theirs[i]));
    }
}

static void test_image_names(void)
{
    const char *hex = "0123456789abcdef0123456789abcdef";
    const char *sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    /* What ml_vol_cache_file makes of each of the images a lab boots is purged. */
    const char *kinds[][2] = {{"base", ".qcow2"}, {"kernel", ""}, {"initrd", ""}};
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
        g_autofree char *name = ml_vol_cached_name(kinds[i][0], sha, kinds[i][1]);
        CHECK(ml_vol_is_image_name(name));
    }
    g_autofree char *ours = g_strdup_printf("base-%s.qcow2", hex);
    CHECK(ml_vol_is_image_name(ours));
    g_autofree char *upper = g_ascii_strup(ours, -1);
    const char *theirs[] = {"notes.txt",
                            "",
                            "base-",
                            "base-.qcow2",
                            "base-handmade.qcow2",
                            "base-0123456789abcdef0123456789abcde.qcow2",
                            "base-0123456789abcdef0123456789abcdef0.qcow2",
                            "base-0123456789ABCDEF0123456789abcdef.qcow2",
                            "base-0123456789abcdef0123456789abcdef",
                            "base-0123456789abcdef0123456789abcdef.qcow2.part",
                            "kernel-0123456789abcdef0123456789abcdef.qcow2",
                            "initrd-0123456789abcdef0123456789abcdef.bak",
                            "vmlinuz-0123456789abcdef0123456789abcdef",
                            "kernel0123456789abcdef0123456789abcdef",
                            "../kernel-0123456789abcdef0123456789abcdef",
                            "hub.qcow2",
                            upper};
    for (size_t i = 0; i < G_N_ELEMENTS(theirs); i++) {
        if (ml_vol_is_image_name(theirs[i]))
            fprintf(stderr, "taken as an image of meshlab's: '%s'\n", theirs[i]);
        CHECK(!ml_vol_is_image_name(theirs[i]));
    }
}

static void test_teardown_leaves_foreign_volumes(void)
{
    virConnectPtr conn = virConnectOpen("test:///default");
    CHECK(conn != NULL);
    if (!conn)
        return;
    g_autofree char *pool_name = ml_plan_pool_name("lab-a");
    g_autofree char *pool_dir = ml_lab_pool_dir("lab-a");
    /* Made as meshlab makes it: its UUID carries this controller (core/controller.h). */
    g_autofree char *what = g_strdup_printf("meshlab pool %s", pool_name);
    char uuid[37];
    ml_controller_uuid(what, uuid);
    g_autofree char *xml = g_strdup_printf("<pool type='dir'><name>%s</name><uuid>%s</uuid>"
                                           "<target><path>%s</path></target></pool>",
                                           pool_name, uuid, pool_dir);
    virStoragePoolPtr pool = virStoragePoolDefineXML(conn, xml, 0);
    CHECK(pool != NULL && virStoragePoolCreate(pool, 0) == 0);
    const char *vols[] = {"hub.qcow2", "hub-seed.iso", "notes.txt"};
    for (size_t i = 0; pool && i < G_N_ELEMENTS(vols); i++) {
        g_autofree char *vx =
            g_strdup_printf("<volume><name>%s</name><capacity>1024</capacity></volume>", vols[i]);
        virStorageVolPtr v = virStorageVolCreateXML(pool, vx, 0);
        CHECK(v != NULL);
        if (v)
            virStorageVolFree(v);
    }
    g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GError) err = NULL;
    ml_virt_teardown(conn, "lab-a", collect, lines, &err);
    g_autofree char *hub = g_strdup_printf("volume %s/hub.qcow2", pool_name);
    g_autofree char *seed = g_strdup_printf("volume %s/hub-seed.iso", pool_name);
    g_autofree char *notes = g_strdup_printf("volume %s/notes.txt", pool_name);
    CHECK(said(lines, hub) && said(lines, seed));
    CHECK(!said(lines, notes));
    virStoragePoolPtr still = virStoragePoolLookupByName(conn, pool_name);
    if (still) {
        virStorageVolPtr v = virStorageVolLookupByName(still, "notes.txt");
        CHECK(v != NULL);
        if (v)
            virStorageVolFree(v);
        virStoragePoolFree(still);
    }
    if (pool)
        virStoragePoolFree(pool);
    virConnectClose(conn);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    g_autofree char *root = g_strdup_printf("%s/meshlab-test-down-XXXXXX", t && *t ? t : "/tmp");
    if (!g_mkdtemp(root))
        return 1;
    g_autofree char *state = g_build_filename(root, "state", NULL);
    g_setenv("MESHLAB_STATE_DIR", state, TRUE);
    test_pool_file_names();
    test_image_names();
    test_teardown_leaves_foreign_volumes();
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", root);
    if (system(rm) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    return check_finish();
}
