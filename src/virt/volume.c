#include "virt/volume.h"

#include <errno.h>
#include <fcntl.h>
#include <libvirt/virterror.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "virt/virt.h"

/* What one virStreamSend or virStreamRecv moves: 256 KiB, libvirt's own largest message
 * payload (VIR_NET_MESSAGE_LEGACY_PAYLOAD_MAX); a larger one is split anyway. */
#define CHUNK (256 * 1024)

char *ml_vol_images_pool_xml(void)
{
    return g_strdup("<pool type='dir'>\n"
                    "  <name>" ML_VOL_IMAGES_POOL "</name>\n"
                    "  <target>\n"
                    "    <path>" ML_VOL_IMAGES_DIR "</path>\n"
                    "    <permissions><mode>0755</mode><owner>0</owner><group>0</group>"
                    "</permissions>\n"
                    "  </target>\n"
                    "</pool>\n");
}

/* How many hex digits of a file's SHA-256 name its volume. */
#define NAME_HASH_DIGITS 32

/* The volumes meshlab puts into the image pool: PREFIX-HASH SUFFIX. */
static const struct {
    const char *prefix, *suffix;
} image_kinds[] = {{"base", ".qcow2"}, {"kernel", ""}, {"initrd", ""}};

char *ml_vol_cached_name(const char *prefix, const char *sha256, const char *suffix)
{
    return g_strdup_printf("%s-%.*s%s", prefix, NAME_HASH_DIGITS, sha256, suffix);
}

bool ml_vol_is_image_name(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(image_kinds); i++) {
        size_t n = strlen(image_kinds[i].prefix);
        if (strncmp(name, image_kinds[i].prefix, n) != 0 || name[n] != '-')
            continue;
        const char *hash = name + n + 1;
        size_t k = 0;
        while (k < NAME_HASH_DIGITS && g_ascii_isxdigit(hash[k]) && !g_ascii_isupper(hash[k]))
            k++;
        if (k == NAME_HASH_DIGITS && !strcmp(hash + k, image_kinds[i].suffix))
            return true;
    }
    return false;
}

/* The pool named name, running; the image pool is defined and built when the host has none. */
static virStoragePoolPtr pool_open(virConnectPtr conn, const char *name, GError **err)
{
    virStoragePoolPtr pool = virStoragePoolLookupByName(conn, name);
    if (!pool && !strcmp(name, ML_VOL_IMAGES_POOL)) {
        g_autofree char *xml = ml_vol_images_pool_xml();
        pool = virStoragePoolDefineXML(conn, xml, 0);
        if (pool && virStoragePoolBuild(pool, 0) < 0) {
            ml_virt_error(err, "cannot build the image pool '%s' in %s on the host",
                          ML_VOL_IMAGES_POOL, ML_VOL_IMAGES_DIR);
            virStoragePoolUndefine(pool);
            virStoragePoolFree(pool);
            return NULL;
        }
    }
    if (!pool) {
        ml_virt_error(err, "cannot find or define storage pool '%s' on the host", name);
        return NULL;
    }
    if (!strcmp(name, ML_VOL_IMAGES_POOL)) {
        g_autofree char *dir = ml_virt_pool_path(pool);
        if (g_strcmp0(dir, ML_VOL_IMAGES_DIR) != 0) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST,
                        "the host has a storage pool '%s' in '%s', not meshlab's %s; meshlab "
                        "does not put its images into a pool it did not make: remove or rename "
                        "that pool (virsh pool-undefine %s)",
                        name, dir ? dir : "?", ML_VOL_IMAGES_DIR, name);
            virStoragePoolFree(pool);
            return NULL;
        }
    }
    if (virStoragePoolIsActive(pool) != 1 && virStoragePoolCreate(pool, 0) < 0) {
        ml_virt_error(err, "cannot start storage pool '%s' on the host", name);
        virStoragePoolFree(pool);
        return NULL;
    }
    return pool;
}

static char *vol_path(virStorageVolPtr vol, const char *name, GError **err)
{
    char *p = virStorageVolGetPath(vol);
    if (!p)
        ml_virt_error(err, "cannot get the host's path of volume '%s'", name);
    return p;
}

/* A fresh, empty raw volume: libvirt's upload writes into a file without truncating it, so
 * a leftover of the same name goes first. */
static virStorageVolPtr vol_fresh(virStoragePoolPtr pool, const char *name, bool readable,
                                  GError **err)
{
    virStorageVolPtr old = virStorageVolLookupByName(pool, name);
    if (old) {
        int rc = virStorageVolDelete(old, 0);
        virStorageVolFree(old);
        if (rc < 0) {
            ml_virt_error(err, "cannot replace volume '%s' on the host", name);
            return NULL;
        }
    }
    g_autofree char *xml = g_markup_printf_escaped(
        "<volume>\n"
        "  <name>%s</name>\n"
        "  <capacity unit='bytes'>0</capacity>\n"
        "  <target>\n"
        "    <format type='raw'/>\n"
        "    <permissions><mode>%s</mode><owner>0</owner><group>0</group></permissions>\n"
        "  </target>\n"
        "</volume>\n",
        name, readable ? "0644" : "0600");
    virStorageVolPtr vol = virStorageVolCreateXML(pool, xml, 0);
    if (!vol)
        ml_virt_error(err, "cannot create volume '%s' on the host", name);
    return vol;
}

static bool send_file(virConnectPtr conn, virStorageVolPtr vol, const char *name, int fd,
                      unsigned long long size, GError **err)
{
    virStreamPtr st = virStreamNew(conn, 0);
    if (!st || virStorageVolUpload(vol, st, 0, size, 0) < 0) {
        ml_virt_error(err, "cannot start uploading '%s' to the host", name);
        if (st)
            virStreamFree(st);
        return false;
    }
    g_autofree char *buf = g_malloc(CHUNK);
    unsigned long long sent = 0;
    bool ok = true;
    while (ok && sent < size) {
        if (ml_check_interrupted(err)) {
            ok = false;
            break;
        }
        ssize_t got = read(fd, buf, CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot read '%s' while uploading it: %s", name,
                        got < 0 ? g_strerror(errno) : "it got shorter");
            ok = false;
            break;
        }
        for (ssize_t off = 0; ok && off < got;) {
            int n = virStreamSend(st, buf + off, (size_t)(got - off));
            if (n <= 0) {
                ml_virt_error(err, "uploading '%s' to the host failed after %llu bytes", name,
                              sent);
                ok = false;
            } else {
                off += n;
                sent += (unsigned long long)n;
            }
        }
    }
    if (ok && virStreamFinish(st) < 0) {
        ml_virt_error(err, "the host did not take all of '%s'", name);
        ok = false;
    }
    if (!ok)
        virStreamAbort(st);
    virStreamFree(st);
    return ok;
}

bool ml_vol_upload(virConnectPtr conn, const char *pool_name, const char *vol_name,
                   const char *local_path, bool readable, char **ret_host_path, GError **err)
{
    *ret_host_path = NULL;
    int fd = open(local_path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot read '%s' to upload it: %s", local_path,
                    g_strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    virStoragePoolPtr pool = pool_open(conn, pool_name, err);
    virStorageVolPtr vol = pool ? vol_fresh(pool, vol_name, readable, err) : NULL;
    bool ok = vol && send_file(conn, vol, local_path, fd, (unsigned long long)st.st_size, err);
    close(fd);
    if (ok)
        *ret_host_path = vol_path(vol, vol_name, err);
    else if (vol)
        virStorageVolDelete(vol, 0); /* no half a file under a name that says it is whole */
    if (vol)
        virStorageVolFree(vol);
    if (pool)
        virStoragePoolFree(pool);
    return *ret_host_path != NULL;
}

static char *file_sha256(const char *path, GError **err)
{
    g_autoptr(GMappedFile) m = g_mapped_file_new(path, FALSE, err);
    if (!m)
        return NULL;
    return g_compute_checksum_for_data(G_CHECKSUM_SHA256,
                                       (const guchar *)g_mapped_file_get_contents(m),
                                       g_mapped_file_get_length(m));
}

bool ml_vol_cache_file(virConnectPtr conn, const char *pool_name, const char *local_path,
                       const char *sha256, const char *prefix, const char *suffix,
                       char **ret_host_path, bool *ret_uploaded, GError **err)
{
    *ret_host_path = NULL;
    *ret_uploaded = false;
    g_autofree char *name = sha256 ? ml_vol_cached_name(prefix, sha256, suffix) : NULL;
    if (!name || !ml_vol_is_image_name(name)) {
        /* A hash that names no image volume (a damaged .sha256 file) is computed again. */
        g_autofree char *computed = file_sha256(local_path, err);
        if (!computed)
            return false;
        g_free(name);
        name = ml_vol_cached_name(prefix, computed, suffix);
    }
    if (!ml_vol_is_image_name(name)) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "'%s' is not a name meshlab gives an image in the host's pool "
                    "(base-HASH.qcow2, kernel-HASH or initrd-HASH), so 'down --purge-cache' would "
                    "leave it there; this is a bug in meshlab, please report it",
                    name);
        return false;
    }
    struct stat st;
    if (stat(local_path, &st) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot read '%s' to upload it: %s", local_path,
                    g_strerror(errno));
        return false;
    }
    virStoragePoolPtr pool = pool_open(conn, pool_name, err);
    if (!pool)
        return false;
    /* Files put there by an upload on another connection are seen after a refresh. */
    virStoragePoolRefresh(pool, 0);
    virStorageVolPtr vol = virStorageVolLookupByName(pool, name);
    virStorageVolInfo info;
    bool whole = vol && virStorageVolGetInfoFlags(vol, &info, VIR_STORAGE_VOL_GET_PHYSICAL) == 0 &&
                 info.allocation == (unsigned long long)st.st_size;
    if (whole)
        *ret_host_path = vol_path(vol, name, err);
    if (vol)
        virStorageVolFree(vol);
    virStoragePoolFree(pool);
    if (whole)
        return *ret_host_path != NULL;
    virResetLastError();
    double t0 = ml_now();
    ml_progress("host", "uploading %s (%.1f MiB) into the host's pool %s", name,
                (double)st.st_size / (1 << 20), pool_name);
    if (!ml_vol_upload(conn, pool_name, name, local_path, true, ret_host_path, err))
        return false;
    double s = ml_now() - t0;
    ml_progress("host", "uploaded %s in %.1f s (%.0f MiB/s); later labs on this host reuse it",
                name, s, (double)st.st_size / (1 << 20) / MAX(s, 0.001));
    *ret_uploaded = true;
    return true;
}

/* Reads st until max bytes, its end, an error or the deadline. The stream is non-blocking:
 * libvirt's event loop queues what arrives, and an empty queue is waited on in short sleeps, so
 * a host that sends nothing meets the deadline too. *ret_whole: the host ended it. */
static GByteArray *stream_read(virStreamPtr st, const char *vol_name, gsize max,
                               double timeout_s, bool *ret_whole, GError **err)
{
    g_autoptr(GByteArray) out = g_byte_array_new();
    g_autofree char *buf = g_malloc(CHUNK);
    double deadline = ml_now() + timeout_s;
    *ret_whole = false;
    while (out->len < max) {
        int n = virStreamRecv(st, buf, MIN((gsize)CHUNK, max - out->len));
        if (n == 0) {
            *ret_whole = true;
            break;
        }
        if (n == -1) {
            ml_virt_error(err, "downloading volume '%s' from the host failed", vol_name);
            return NULL;
        }
        if (n > 0)
            g_byte_array_append(out, (const guint8 *)buf, (guint)n);
        if (ml_now() >= deadline) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST,
                        "downloading volume '%s' from the host took longer than %g s and was "
                        "stopped after %u bytes; check the host's libvirtd and the connection to "
                        "it",
                        vol_name, timeout_s, out->len);
            return NULL;
        }
        if (ml_check_interrupted(err))
            return NULL;
        if (n == -2)
            g_usleep(10 * 1000);
    }
    return g_steal_pointer(&out);
}

char *ml_vol_download_within(virConnectPtr conn, const char *pool_name, const char *vol_name,
                             gsize max, double timeout_s, gsize *ret_len, GError **err)
{
    *ret_len = 0;
    virStoragePoolPtr pool = virStoragePoolLookupByName(conn, pool_name);
    if (!pool) {
        ml_virt_error(err, "cannot find storage pool '%s' on the host", pool_name);
        return NULL;
    }
    virStoragePoolRefresh(pool, 0);
    virStorageVolPtr vol = virStorageVolLookupByName(pool, vol_name);
    virStoragePoolFree(pool);
    if (!vol) {
        ml_virt_error(err, "the host has no volume '%s' in pool '%s'", vol_name, pool_name);
        return NULL;
    }
    max = MIN(max, (gsize)G_MAXUINT - 1); /* a GByteArray's length, and the NUL */
    virStreamPtr st = virStreamNew(conn, VIR_STREAM_NONBLOCK);
    if (!st || virStorageVolDownload(vol, st, 0, max, 0) < 0) {
        ml_virt_error(err, "cannot download volume '%s' from the host", vol_name);
        if (st)
            virStreamFree(st);
        virStorageVolFree(vol);
        return NULL;
    }
    virStorageVolFree(vol);
    bool whole = false;
    GByteArray *out = stream_read(st, vol_name, max, timeout_s, &whole, err);
    if (out && whole && virStreamFinish(st) < 0) {
        ml_virt_error(err, "the host did not finish sending volume '%s'", vol_name);
        g_clear_pointer(&out, g_byte_array_unref);
    }
    /* At max, or on an error: whatever the host would still send is not taken. */
    if (!out || !whole) {
        virStreamAbort(st);
        virResetLastError();
    }
    virStreamFree(st);
    if (!out)
        return NULL;
    *ret_len = out->len;
    g_byte_array_append(out, (const guint8 *)"", 1);
    return (char *)g_byte_array_free(out, false);
}

char *ml_vol_download(virConnectPtr conn, const char *pool_name, const char *vol_name, gsize max,
                      gsize *ret_len, GError **err)
{
    return ml_vol_download_within(conn, pool_name, vol_name, max, ML_VOL_DOWNLOAD_TIMEOUT_S,
                                  ret_len, err);
}

/* Deletes the image volumes of pool; the others' names into foreign. False with err when one
 * could not be deleted. */
static bool purge_volumes(virStoragePoolPtr pool, const char *pool_name, GPtrArray *foreign,
                          void (*cb)(const char *what, void *opaque), void *opaque, int *removed,
                          GError **err)
{
    bool failed = false;
    virStorageVolPtr *vols = NULL;
    int nv = virStoragePoolListAllVolumes(pool, &vols, 0);
    for (int i = 0; i < nv; i++) {
        const char *name = virStorageVolGetName(vols[i]);
        if (!ml_vol_is_image_name(name)) {
            g_ptr_array_add(foreign, g_strdup(name));
        } else if (virStorageVolDelete(vols[i], 0) == 0) {
            g_autofree char *what = g_strdup_printf("volume %s/%s", pool_name, name);
            if (cb)
                cb(what, opaque);
            (*removed)++;
        } else if (!failed) {
            ml_virt_error(err, "cannot delete volume '%s' of the host's image pool '%s'", name,
                          pool_name);
            failed = true;
        }
        virStorageVolFree(vols[i]);
    }
    free(vols);
    return !failed;
}

static gint by_name(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int ml_vol_pool_purge(virConnectPtr conn, const char *pool_name, const char *dir,
                      void (*cb)(const char *what, void *opaque), void *opaque, GError **err)
{
    virStoragePoolPtr pool = virStoragePoolLookupByName(conn, pool_name);
    if (!pool) {
        virResetLastError();
        return 0;
    }
    g_autofree char *path = ml_virt_pool_path(pool);
    if (g_strcmp0(path, dir) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "the host's storage pool '%s' is in '%s', not meshlab's %s: it was not "
                    "made by meshlab and is left alone",
                    pool_name, path ? path : "?", dir);
        virStoragePoolFree(pool);
        return -1;
    }
    int removed = 0;
    if (virStoragePoolIsActive(pool) != 1)
        virStoragePoolCreate(pool, 0);
    virStoragePoolRefresh(pool, 0);
    g_autoptr(GPtrArray) foreign = g_ptr_array_new_with_free_func(g_free);
    bool ok = purge_volumes(pool, pool_name, foreign, cb, opaque, &removed, err);
    if (ok && foreign->len) {
        g_ptr_array_sort(foreign, by_name);
        g_ptr_array_add(foreign, NULL);
        g_autofree char *list = g_strjoinv("', '", (char **)foreign->pdata);
        ml_warn("the host's image pool %s holds what meshlab did not put there ('%s'): that is "
                "left, and so is the pool; if it is not needed, remove it with 'virsh vol-delete "
                "--pool %s NAME', then the pool with 'virsh pool-destroy %s; virsh pool-delete "
                "%s; virsh pool-undefine %s'",
                pool_name, list, pool_name, pool_name, pool_name, pool_name);
    } else if (ok) {
        if (virStoragePoolIsActive(pool) == 1)
            virStoragePoolDestroy(pool);
        virStoragePoolDelete(pool, VIR_STORAGE_POOL_DELETE_NORMAL);
        if (virStoragePoolUndefine(pool) < 0) {
            ml_virt_error(err, "cannot undefine the host's image pool '%s'", pool_name);
            ok = false;
        } else {
            g_autofree char *what =
                g_strdup_printf("storage pool %s (the host's image cache)", pool_name);
            if (cb)
                cb(what, opaque);
            removed++;
        }
    }
    virStoragePoolFree(pool);
    virResetLastError();
    return ok ? removed : -1;
}

int ml_vol_images_purge(virConnectPtr conn, void (*cb)(const char *what, void *opaque),
                        void *opaque, GError **err)
{
    return ml_vol_pool_purge(conn, ML_VOL_IMAGES_POOL, ML_VOL_IMAGES_DIR, cb, opaque, err);
}
