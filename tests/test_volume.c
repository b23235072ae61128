/* A lab's files as storage volumes (virt/volume.h), through this machine's libvirtd as any
 * host's: a pool of the test's own, a file uploaded and read back byte for byte, a cached file
 * found by its hash and not sent again, a cut-off upload (the volume shorter than the file)
 * sent again whole, a download capped at what was asked and stopped at its deadline, and the
 * image pool's purge, which removes the volumes meshlab puts there and leaves a file put there
 * by hand. Needs root and libvirtd; skips (77) without them. */
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/util.h"
#include "virt/virt.h"
#include "virt/volume.h"

static void collect(const char *what, void *opaque)
{
    g_ptr_array_add(opaque, g_strdup(what));
}

static void collect_warning(const struct ml_log_event *e, void *data)
{
    if (e->kind == ML_LOG_WARN)
        g_ptr_array_add(data, g_strdup(e->message));
}

static bool said(GPtrArray *lines, const char *part)
{
    for (guint i = 0; i < lines->len; i++)
        if (strstr(g_ptr_array_index(lines, i), part))
            return true;
    return false;
}

/* A sparse volume far larger than what is read of it: libvirtd streams its zeros as fast as it
 * can. */
static void test_download_bounds(virConnectPtr conn, virStoragePoolPtr pool, const char *pool_name)
{
    const unsigned long long big = 3ull << 30;
    g_autofree char *vx = g_strdup_printf("<volume><name>big.img</name><capacity unit='bytes'>%llu"
                                          "</capacity><allocation>0</allocation><target>"
                                          "<format type='raw'/></target></volume>",
                                          big);
    virStorageVolPtr v = virStorageVolCreateXML(pool, vx, 0);
    CHECK(v != NULL);
    if (!v)
        return;
    virStorageVolFree(v);
    /* At the cap: the first MiB, promptly, and the stream aborted with the rest unread. */
    g_autoptr(GError) err = NULL;
    gsize len = 0;
    double t0 = ml_now();
    g_autofree char *head = ml_vol_download(conn, pool_name, "big.img", 1 << 20, &len, &err);
    CHECK(head && len == 1 << 20 && ml_now() - t0 < 10);
    g_autofree guchar *zeros = g_malloc0(1 << 20);
    CHECK(head && !memcmp(head, zeros, 1 << 20));
    /* A download that cannot end by its deadline is stopped there, and says so. */
    t0 = ml_now();
    g_autofree char *all = ml_vol_download_within(conn, pool_name, "big.img", big, 0.5, &len, &err);
    double took = ml_now() - t0;
    CHECK(all == NULL && err && strstr(err->message, "took longer than") &&
          strstr(err->message, "big.img"));
    CHECK(took < 3);
    printf("the 3 GiB download was stopped after %.2f s: %s\n", took, err ? err->message : "");
    /* The aborted streams left the connection working. */
    g_clear_error(&err);
    g_autofree char *again = ml_vol_download(conn, pool_name, "big.img", 100, &len, &err);
    CHECK(again && len == 100);
}

/* The image pool's purge: what ml_vol_cache_file put there goes; what someone put there by hand
 * stays, named in a warning, and the pool with it, until it is gone too. */
static void test_purge(virConnectPtr conn, const char *pool_name, const char *pool_dir,
                       const char *dir, const char *cached_base)
{
    const char *kinds[][2] = {{"kernel", ""}, {"initrd", ""}};
    g_autoptr(GPtrArray) ours = g_ptr_array_new_with_free_func(g_free);
    const char *base_name = cached_base ? strrchr(cached_base, '/') + 1 : "?";
    g_ptr_array_add(ours, g_strdup_printf("volume %s/%s", pool_name, base_name));
    g_autoptr(GError) err = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
        g_autofree char *file = g_strdup_printf("%s/%s", dir, kinds[i][0]);
        CHECK(g_file_set_contents(file, kinds[i][0], -1, NULL));
        g_autofree char *host = NULL;
        bool up = false;
        CHECK(ml_vol_cache_file(conn, pool_name, file, NULL, kinds[i][0], kinds[i][1], &host, &up,
                                &err));
        if (host)
            g_ptr_array_add(ours,
                            g_strdup_printf("volume %s/%s", pool_name, strrchr(host, '/') + 1));
    }
    const char *hand[] = {"notes.txt", "base-handmade.qcow2"};
    for (size_t i = 0; i < G_N_ELEMENTS(hand); i++) {
        g_autofree char *p = g_build_filename(pool_dir, hand[i], NULL);
        CHECK(g_file_set_contents(p, "mine", -1, NULL));
    }
    g_autoptr(GPtrArray) lines = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
    struct ml_log_sink sink = {collect_warning, warnings};
    struct ml_log_sink before = ml_log_set_sink(&sink);
    int n = ml_vol_pool_purge(conn, pool_name, pool_dir, collect, lines, &err);
    ml_log_set_sink(&before);
    CHECK(n == 3 && lines->len == 3);
    for (guint i = 0; i < ours->len; i++)
        CHECK(said(lines, g_ptr_array_index(ours, i)));
    CHECK(!said(lines, "notes.txt") && !said(lines, "handmade") && !said(lines, "seed.iso"));
    CHECK(said(warnings, "notes.txt") && said(warnings, "base-handmade.qcow2") &&
          said(warnings, "seed.iso") && said(warnings, pool_name));
    for (size_t i = 0; i < G_N_ELEMENTS(hand); i++) {
        g_autofree char *p = g_build_filename(pool_dir, hand[i], NULL);
        CHECK(g_file_test(p, G_FILE_TEST_IS_REGULAR));
        unlink(p);
    }
    virStoragePoolPtr kept = virStoragePoolLookupByName(conn, pool_name);
    CHECK(kept != NULL);
    /* With only meshlab's left (none), the pool goes with its directory. */
    if (kept) {
        virStoragePoolRefresh(kept, 0);
        virStorageVolPtr *vols = NULL;
        int nv = virStoragePoolListAllVolumes(kept, &vols, 0);
        for (int i = 0; i < nv; i++) {
            virStorageVolDelete(vols[i], 0);
            virStorageVolFree(vols[i]);
        }
        free(vols);
        virStoragePoolFree(kept);
    }
    g_ptr_array_set_size(lines, 0);
    CHECK(ml_vol_pool_purge(conn, pool_name, pool_dir, collect, lines, &err) == 1);
    CHECK(said(lines, "storage pool") && !g_file_test(pool_dir, G_FILE_TEST_EXISTS));
    virStoragePoolPtr gone = virStoragePoolLookupByName(conn, pool_name);
    CHECK(gone == NULL);
    if (gone)
        virStoragePoolFree(gone);
    virResetLastError();
    /* Not the pool it should be: left alone. */
    CHECK(ml_vol_pool_purge(conn, pool_name, "/nowhere", collect, lines, &err) == 0);
}

int main(void)
{
    /* ml_virt_connect: its event loop moves a download's data. */
    g_autoptr(GError) cerr = NULL;
    virConnectPtr conn = geteuid() == 0 ? ml_virt_connect("qemu:///system", &cerr) : NULL;
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

    /* A hash that names no volume (a damaged .sha256 file) is computed again. */
    g_autofree char *cached4 = NULL;
    CHECK(ml_vol_cache_file(conn, pool_name, file, "not a hash", "base", ".qcow2", &cached4, &up,
                            &err) &&
          !up);
    CHECK_STR(cached4, cached);

    test_download_bounds(conn, pool, pool_name);

    /* A missing volume is an error that names it. */
    g_autoptr(GError) e2 = NULL;
    gsize n = 0;
    CHECK(ml_vol_download(conn, pool_name, "nothing.log", 10, &n, &e2) == NULL && e2 &&
          strstr(e2->message, "nothing.log"));

    test_purge(conn, pool_name, pool_dir, dir, cached);

    /* Whatever a failed check left. */
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
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
    CHECK(system(rm) == 0);
    return check_finish();
}
