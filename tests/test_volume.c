/* A lab's files as storage volumes (virt/volume.h), through this machine's libvirtd as any
 * host's: a pool of the test's own, a file uploaded and read back byte for byte, a cached file
 * found by its hash and not sent again, a cut-off upload (the volume shorter than the file)
 * sent again whole, and a download capped at what was asked. Needs root and libvirtd; skips
 * (77) without them. */
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "virt/virt.h"
#include "virt/volume.h"

static void quiet(void *opaque, virErrorPtr e)
{
    (void)opaque;
    (void)e;
}

int main(void)
{
    virSetErrorFunc(NULL, quiet);
    virConnectPtr conn = geteuid() == 0 ? virConnectOpen("qemu:///system") : NULL;
    if (!conn) {
        printf("skipped: needs root and libvirtd (qemu:///system)\n");
        return 77;
    }
    g_autofree char *dir = g_dir_make_tmp("meshlab-test-volume-XXXXXX", NULL);
    g_autofree char *pool_name = g_strdup_printf("meshlab.voltest%d", (int)getpid());
    g_autofree char *pool_dir = g_build_filename(dir, "pool", NULL);
    g_autofree char *xml = g_strdup_printf("<pool type='dir'><name>%s</name><target><path>%s</path>"
                                           "</target></pool>",
                                           pool_name, pool_dir);
    virStoragePoolPtr pool = virStoragePoolDefineXML(conn, xml, 0);
    CHECK(pool && virStoragePoolBuild(pool, 0) == 0 && virStoragePoolCreate(pool, 0) == 0);

    /* 1 MiB and a bit of bytes that are not all alike: four 256 KiB chunks and a tail. */
    gsize size = (1 << 20) + 4321;
    g_autofree guchar *data = g_malloc(size);
    for (gsize i = 0; i < size; i++)
        data[i] = (guchar)((i * 2654435761u) >> 13);
    g_autofree char *file = g_build_filename(dir, "base.img", NULL);
    CHECK(g_file_set_contents(file, (const char *)data, (gssize)size, NULL));

    g_autoptr(GError) err = NULL;
    g_autofree char *host = NULL;
    CHECK(ml_vol_upload(conn, pool_name, "seed.iso", file, false, &host, &err));
    g_autofree char *want = g_build_filename(pool_dir, "seed.iso", NULL);
    CHECK_STR(host, want);
    gsize got_len = 0;
    g_autofree char *got = ml_vol_download(conn, pool_name, "seed.iso", size + 100, &got_len, &err);
    CHECK(got && got_len == size && !memcmp(got, data, size));
    /* A download takes no more than asked. */
    gsize part_len = 0;
    g_autofree char *part = ml_vol_download(conn, pool_name, "seed.iso", 1000, &part_len, &err);
    CHECK(part && part_len == 1000 && !memcmp(part, data, 1000));
    /* Uploading again replaces the volume; a shorter file leaves no tail of the longer one. */
    g_autofree char *small = g_build_filename(dir, "small", NULL);
    CHECK(g_file_set_contents(small, "short", 5, NULL));
    g_autofree char *host2 = NULL;
    CHECK(ml_vol_upload(conn, pool_name, "seed.iso", small, false, &host2, &err));
    g_autofree char *again = ml_vol_download(conn, pool_name, "seed.iso", 1 << 20, &got_len, &err);
    CHECK(again && got_len == 5 && !memcmp(again, "short", 5));

    /* The cache: sent once, found by its hash the next time. */
    g_autofree char *sha = g_compute_checksum_for_data(G_CHECKSUM_SHA256, data, size);
    g_autofree char *cached = NULL;
    bool up = false;
    CHECK(ml_vol_cache_file(conn, pool_name, file, NULL, "base", ".qcow2", &cached, &up, &err) &&
          up);
    g_autofree char *name = ml_vol_cached_name("base", sha, ".qcow2");
    CHECK(g_str_has_suffix(cached, name) && strlen(name) == strlen("base-") + 32 + 6);
    g_autofree char *cached2 = NULL;
    CHECK(ml_vol_cache_file(conn, pool_name, file, sha, "base", ".qcow2", &cached2, &up, &err) &&
          !up);
    CHECK_STR(cached2, cached);
    /* Cut off: the host's copy is shorter than the file, so it is sent again, whole. */
    CHECK(truncate(cached, 300000) == 0);
    g_autofree char *cached3 = NULL;
    CHECK(ml_vol_cache_file(conn, pool_name, file, sha, "base", ".qcow2", &cached3, &up, &err) &&
          up);
    g_autofree char *whole = NULL;
    gsize whole_len = 0;
    CHECK(g_file_get_contents(cached3, &whole, &whole_len, NULL) && whole_len == size &&
          !memcmp(whole, data, size));
    if (err)
        printf("error: %s\n", err->message);

    /* A missing volume is an error that names it. */
    g_autoptr(GError) e2 = NULL;
    gsize n = 0;
    CHECK(ml_vol_download(conn, pool_name, "nothing.log", 10, &n, &e2) == NULL && e2 &&
          strstr(e2->message, "nothing.log"));

    virStorageVolPtr *vols = NULL;
    int nv = virStoragePoolListAllVolumes(pool, &vols, 0);
    for (int i = 0; i < nv; i++) {
        virStorageVolDelete(vols[i], 0);
        virStorageVolFree(vols[i]);
    }
    free(vols);
    virStoragePoolDestroy(pool);
    virStoragePoolDelete(pool, 0);
    virStoragePoolUndefine(pool);
    virStoragePoolFree(pool);
    virConnectClose(conn);
    unlink(file);
    unlink(small);
    rmdir(pool_dir);
    rmdir(dir);
    return check_finish();
}
