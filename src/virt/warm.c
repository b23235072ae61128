#include "virt/warm.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/spawn.h"
#include "core/util.h"
#include "topology/name.h"
#include "virt/agent.h"
#include "virt/virt.h"

bool ml_warm_enabled(void)
{
    const char *v = g_getenv("MESHLAB_WARM");
    return !v || (strcmp(v, "off") && strcmp(v, "0") && strcmp(v, "no"));
}

char *ml_warm_dir(const char *lab, const char *node)
{
    return g_build_filename(ml_cache_dir(), "warm", lab, node, NULL);
}

static char *warm_file(const char *lab, const char *node, const char *name)
{
    g_autofree char *dir = ml_warm_dir(lab, node);
    return g_build_filename(dir, name, NULL);
}

char *ml_warm_key(virConnectPtr conn, const struct ml_image *image, bool kvm, const char *xml,
                  const char *run_id, const char *media, GError **err)
{
    unsigned long hv = 0, lib = 0;
    if (virConnectGetVersion(conn, &hv) < 0 || virConnectGetLibVersion(conn, &lib) < 0) {
        ml_virt_error(err, "cannot read QEMU's and libvirt's versions");
        return NULL;
    }
    /* The run id is in the domain's metadata; everything else in the XML is the lab's. */
    g_auto(GStrv) parts = g_strsplit(xml, run_id, -1);
    g_autofree char *stable = g_strjoinv("RUN", parts);
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    g_autofree char *head = g_strdup_printf(
        "meshlab warm v1\nimage %s %s\ncmdline %s\nqemu %lu\nlibvirt %lu\naccel %s\n", image->name,
        image->sha256 ? image->sha256 : "", image->cmdline ? image->cmdline : "", hv, lib,
        kvm ? "kvm" : "tcg");
    g_checksum_update(sum, (const guchar *)head, -1);
    g_checksum_update(sum, (const guchar *)stable, -1);
    if (media) {
        g_checksum_update(sum, (const guchar *)"\nmedia\n", -1);
        g_checksum_update(sum, (const guchar *)media, -1);
    }
    return g_strndup(g_checksum_get_string(sum), 16);
}

bool ml_warm_have(const char *lab, const char *node, const char *key)
{
    g_autofree char *kf = warm_file(lab, node, "key");
    g_autofree char *st = warm_file(lab, node, "state");
    g_autofree char *ov = warm_file(lab, node, "overlay.qcow2");
    g_autofree char *have = NULL;
    if (!g_file_get_contents(kf, &have, NULL, NULL))
        return false;
    return !strcmp(g_strstrip(have), key) && g_file_test(st, G_FILE_TEST_IS_REGULAR) &&
           g_file_test(ov, G_FILE_TEST_IS_REGULAR);
}

bool ml_warm_place_overlay(const char *lab, const char *node, const char *dest, GError **err)
{
    /* dest is in the pool, which QEMU's user can write: no link there is followed. */
    g_autofree char *ov = warm_file(lab, node, "overlay.qcow2");
    return ml_file_place(ov, dest, 0600, err);
}

/* The snapshot that keeps the guest: its memory only, to a file in the save format that
 * virDomainRestoreFlags reads (libvirt writes both through qemuSaveImageCreate), no disk
 * snapshot (every disk of a lab's domain says snapshot='no', virt_xml.c), no snapshot object
 * left behind for `down` to find. */
static bool snapshot_memory(virDomainPtr dom, const char *file)
{
    g_autofree char *xml = g_markup_printf_escaped(
        "<domainsnapshot><memory snapshot='external' file='%s'/></domainsnapshot>", file);
    virDomainSnapshotPtr snap =
        virDomainSnapshotCreateXML(dom, xml, VIR_DOMAIN_SNAPSHOT_CREATE_NO_METADATA);
    if (!snap)
        return false;
    virDomainSnapshotFree(snap);
    return true;
}

bool ml_warm_save(virDomainPtr dom, const char *lab, const char *node, const char *key,
                  const char *overlay, double *ret_s, GError **err)
{
    double t0 = ml_now();
    g_autofree char *dir = ml_warm_dir(lab, node);
    if (!ml_mkdir_p(dir, 0700, err))
        return false;
    g_autofree char *kf = warm_file(lab, node, "key");
    g_autofree char *st = warm_file(lab, node, "state");
    g_autofree char *ov = warm_file(lab, node, "overlay.qcow2");
    /* The old key goes first: a save cut short leaves no key, so nothing is restored. */
    g_unlink(kf);
    g_unlink(st);
    g_unlink(ov);
    /* Paused first, so that the memory and the overlay copied after it are of one instant:
     * pausing drains and flushes the disk, and the memory dump's end leaves QEMU's images
     * flushed and inactive until the guest goes on. The guest is not stopped and started
     * again (virDomainSave then virDomainRestore did that: a new QEMU reading back what it had
     * just written, and its translated code lost under TCG). */
    if (virDomainSuspend(dom) < 0) {
        ml_virt_error(err, "cannot pause guest %s to save it for a warm start", node);
        return false;
    }
    bool ok = snapshot_memory(dom, st);
    if (!ok)
        ml_virt_error(err, "cannot save guest %s for a warm start (to %s)", node, st);
    else
        chmod(st, 0600);
    /* The overlay is read from the pool without following a link planted there. */
    ok = ok && ml_file_place(overlay, ov, 0600, err);
    /* Whatever happened to the save, the guest goes on. */
    if (virDomainResume(dom) < 0) {
        g_clear_error(err);
        ml_virt_error(err, "cannot resume guest %s after its save to %s", node, st);
        return false;
    }
    if (ok)
        ok = ml_write_file(kf, key, -1, 0600, err);
    *ret_s = ml_now() - t0;
    return ok;
}

bool ml_warm_restore(virConnectPtr conn, const char *lab, const char *node, const char *xml,
                     GError **err)
{
    g_autofree char *st = warm_file(lab, node, "state");
    if (virDomainRestoreFlags(conn, st, xml, VIR_DOMAIN_SAVE_RUNNING) < 0) {
        ml_virt_error(err,
                      "cannot restore guest %s from %s; 'meshlab down %s --purge-cache' drops "
                      "the saved guests, and the next up boots cold",
                      node, st, lab);
        return false;
    }
    return true;
}

bool ml_warm_agent_back(virDomainPtr dom, GError **err)
{
    /* libvirt's agent calls wait for ever by default: a guest that stalls would hang this
     * thread and the boot that joins it. */
    if (!ml_agent_bound(dom, err))
        return false;
    double until = ml_now() + 60;
    while (!ml_agent_ping(dom, 2)) {
        if (ml_check_interrupted(err))
            return false;
        if (ml_now() >= until) {
            g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                        "the guest agent of '%s' did not answer within 60 s of its restore",
                        virDomainGetName(dom));
            return false;
        }
        g_usleep(200 * 1000);
    }
    return true;
}

bool ml_warm_release_line(char line[ML_WARM_RELEASE_LINE_MAX], GError **err)
{
    unsigned char seed[64];
    if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot read the host's randomness: %s",
                    g_strerror(errno));
        return false;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int n = snprintf(line, ML_WARM_RELEASE_LINE_MAX, "go %lld%09ld ", (long long)now.tv_sec,
                     (long)now.tv_nsec);
    for (size_t i = 0; i < sizeof(seed); i++)
        n += snprintf(line + n, ML_WARM_RELEASE_LINE_MAX - (size_t)n, "%02x", seed[i]);
    snprintf(line + n, ML_WARM_RELEASE_LINE_MAX - (size_t)n, "\n");
    explicit_bzero(seed, sizeof(seed));
    return true;
}

static long long file_size(const char *path)
{
    GStatBuf st;
    return g_stat(path, &st) == 0 ? (long long)st.st_blocks * 512 : 0;
}

static gint by_text(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

GPtrArray *ml_warm_list(const char *lab)
{
    GPtrArray *ret = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *root = g_build_filename(ml_cache_dir(), "warm", NULL);
    g_autoptr(GDir) labs = g_dir_open(root, 0, NULL);
    const char *l;
    while (labs && (l = g_dir_read_name(labs))) {
        if (lab && strcmp(l, lab))
            continue;
        g_autofree char *ldir = g_build_filename(root, l, NULL);
        g_autoptr(GDir) nodes = g_dir_open(ldir, 0, NULL);
        const char *n;
        while (nodes && (n = g_dir_read_name(nodes))) {
            g_autofree char *kf = warm_file(l, n, "key");
            g_autofree char *st = warm_file(l, n, "state");
            g_autofree char *ov = warm_file(l, n, "overlay.qcow2");
            g_autofree char *key = NULL;
            if (!g_file_get_contents(kf, &key, NULL, NULL))
                key = g_strdup("(incomplete)");
            g_ptr_array_add(ret, g_strdup_printf("%s/%s %.0f MB key %s", l, n,
                                                 (file_size(st) + file_size(ov)) / 1e6,
                                                 g_strstrip(key)));
        }
    }
    g_ptr_array_sort(ret, by_text);
    return ret;
}

bool ml_warm_purge(const char *lab, void (*cb)(const char *what, void *opaque), void *opaque,
                   GError **err)
{
    /* Only one lab's saves, or all of them when asked by NULL: never because a name
     * ("", ".", "..") happens to lead to the directory of every save, or above it. */
    if (lab && !ml_name_check("lab name", lab, false, err))
        return false;
    g_autofree char *root = g_build_filename(ml_cache_dir(), "warm", NULL);
    g_autofree char *dir = lab ? g_build_filename(root, lab, NULL) : g_strdup(root);
    if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
        return true;
    const char *argv[] = {"rm", "-rf", "--one-file-system", dir, NULL};
    if (!ml_spawn_timeout(argv, 120, NULL, err))
        return false;
    if (cb) {
        g_autofree char *what = g_strdup_printf("saved guests %s", dir);
        cb(what, opaque);
    }
    return true;
}
