/* A lab's files on a libvirt host that is not this machine: storage volumes, moved through the
 * connection's streams (virStorageVolUpload, virStorageVolDownload), never through a file
 * system this machine shares with the host.
 *
 * The images a lab boots (the base disk, the kernel and the initrd) are built or fetched here
 * and uploaded once into the host's image pool, ML_VOL_IMAGES_POOL, under names that carry
 * their SHA-256: a second lab, or the next run, finds them there. `down` leaves that pool
 * alone; it is a cache, like this machine's image cache. A lab's own files (seed and
 * artifacts CDs) are uploaded into its pool and go with it. */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>
#include <stdbool.h>

#include "virt/virt.h"

/* The image pool: '.' is in no lab name, so no lab's pool (meshlab-LAB) is ever called this,
 * and no lab's pool directory (ML_VIRT_HOST_DIR/meshlab-LAB) is its. */
#define ML_VOL_IMAGES_POOL "meshlab.images"
#define ML_VOL_IMAGES_DIR ML_VIRT_HOST_DIR "/" ML_VOL_IMAGES_POOL

/* Pure: the image pool's XML, a directory pool in ML_VOL_IMAGES_DIR that QEMU's user can read
 * and not write (root's, 0755). */
char *ml_vol_images_pool_xml(void);
/* Pure: the name of the cached volume of a file: "PREFIX-SHA256[:32]SUFFIX". */
char *ml_vol_cached_name(const char *prefix, const char *sha256, const char *suffix);
/* Pure: whether name is one meshlab gives a volume of the image pool: base-HEX.qcow2,
 * kernel-HEX or initrd-HEX, HEX the first 32 lowercase hex digits of the file's SHA-256.
 * ml_vol_cache_file makes no other; the purge removes no other. */
bool ml_vol_is_image_name(const char *name);

/* Makes sure local_path (whose SHA-256 is sha256, or NULL to compute it) is in pool (the image
 * pool, ML_VOL_IMAGES_POOL, which is made when the host has none) as a volume named by
 * ml_vol_cached_name(prefix, sha, suffix), uploading it when the host has none or only part of one
 * (an upload that was cut off: its size is not the file's). The host's path of the volume into
 * *ret_host_path; *ret_uploaded says whether it travelled now. A name that is not
 * ml_vol_is_image_name's is refused (a sha256 that makes none is computed again). */
bool ml_vol_cache_file(virConnectPtr conn, const char *pool, const char *local_path,
                       const char *sha256, const char *prefix, const char *suffix,
                       char **ret_host_path, bool *ret_uploaded, GError **err);

/* Uploads local_path into pool as a new volume vol_name (one of that name goes first), of file
 * mode 0600 (0644 when readable); the host's path of the volume into *ret_host_path. */
bool ml_vol_upload(virConnectPtr conn, const char *pool, const char *vol_name,
                   const char *local_path, bool readable, char **ret_host_path, GError **err);

/* Seconds a download may take before it is given up: a host that sends slowly, or not at all,
 * does not hold meshlab. */
#define ML_VOL_DOWNLOAD_TIMEOUT_S 120.0

/* The first max bytes of pool's volume vol_name (the pool refreshed first, for files the host
 * wrote itself: virtlogd's console logs); NULL with err when there is none, or when it takes
 * longer than ML_VOL_DOWNLOAD_TIMEOUT_S. At max the stream is aborted, whatever the host would
 * still send. conn is ml_virt_connect's: its event loop moves the data. */
char *ml_vol_download(virConnectPtr conn, const char *pool, const char *vol_name, gsize max,
                      gsize *ret_len, GError **err);
/* ml_vol_download that gives up after timeout_s s. */
char *ml_vol_download_within(virConnectPtr conn, const char *pool, const char *vol_name,
                             gsize max, double timeout_s, gsize *ret_len, GError **err);

/* Removes the host's image pool, its volumes and its directory (down --purge-cache of a lab on
 * that host): cb says each; returns how many were removed, 0 when there is none, -1 with err
 * when one could not be or the pool of that name is not meshlab's. Only the volumes meshlab
 * puts there go (ml_vol_is_image_name): any other stays, and the pool with it, and a warning
 * names them. */
int ml_vol_images_purge(virConnectPtr conn, void (*cb)(const char *what, void *opaque),
                        void *opaque, GError **err);
/* ml_vol_images_purge of pool_name, which must be in dir. */
int ml_vol_pool_purge(virConnectPtr conn, const char *pool_name, const char *dir,
                      void (*cb)(const char *what, void *opaque), void *opaque, GError **err);
