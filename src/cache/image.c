#include "cache/image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/fetch.h"
#include "cache/image_ubuntu.h"
#include "topology/plan.h"
#include "core/util.h"

/* Bumped whenever the way the image is assembled changes, so the cache key changes too. */
#define DEBIAN_BUILDER_VERSION "meshlab-debian-builder/1"
#define DEBIAN_SUITE "bookworm"
#define DEBIAN_IMAGE_SIZE "2G"
/* Deadlines of the build's steps: a slow mirror or disk is waited for, a hang is not. */
#define MMDEBSTRAP_TIMEOUT_S (30 * 60.0)
#define IMAGE_STEP_TIMEOUT_S (10 * 60.0)
/* ipv6.disable_ipv6 keeps the lab IPv4-only on the wire while AF_INET6 sockets still
 * work (nebula opens its UDP listener as one). The rest spares the emulated CPU under TCG:
 * one UART to probe, pages not zeroed on allocation, no fsck, no speculation mitigations
 * (a lab guest runs only meshlab's own commands), no watchdog, no audit records. */
#define DEBIAN_CMDLINE                                                                            \
    "root=/dev/vda rw console=ttyS0 net.ifnames=0 ipv6.disable_ipv6=1 quiet loglevel=3 "     \
    "systemd.show_status=false 8250.nr_uarts=1 init_on_alloc=0 fsck.mode=skip mitigations=off " \
    "nowatchdog audit=0"

void ml_image_clear(struct ml_image *img)
{
    g_free(img->name);
    g_free(img->requested);
    g_free(img->fallback_reason);
    g_free(img->base);
    g_free(img->kernel);
    g_free(img->initrd);
    g_free(img->cmdline);
    g_free(img->sha256);
    memset(img, 0, sizeof(*img));
}

static const char *debian_mirror(void)
{
    const char *m = g_getenv("MESHLAB_DEBIAN_MIRROR");
    return m && *m ? m : "http://deb.debian.org/debian";
}

static char *recipe_path(const char *file)
{
    g_autofree char *dir = ml_image_catalogue_dir();
    return g_build_filename(dir, "debian-12", file, NULL);
}

char *ml_image_debian_key(GError **err)
{
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    static const char *const files[] = {"packages", "customize.sh"};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *path = recipe_path(files[i]);
        g_autofree char *text = NULL;
        gsize len = 0;
        if (!g_file_get_contents(path, &text, &len, NULL)) {
            g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                        "the debian-12 recipe file '%s' is missing; set MESHLAB_IMAGES_DIR to the "
                        "images/ directory of meshlab's source",
                        path);
            return NULL;
        }
        g_checksum_update(sum, (const guchar *)files[i], -1);
        g_checksum_update(sum, (const guchar *)text, (gssize)len);
    }
    g_checksum_update(sum, (const guchar *)DEBIAN_BUILDER_VERSION DEBIAN_SUITE DEBIAN_IMAGE_SIZE
                      DEBIAN_CMDLINE, -1);
    g_checksum_update(sum, (const guchar *)debian_mirror(), -1);
    return g_strndup(g_checksum_get_string(sum), 16);
}

static char *read_packages(GError **err)
{
    g_autofree char *path = recipe_path("packages");
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "cannot read '%s'", path);
        return NULL;
    }
    GString *list = g_string_new(NULL);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        g_strstrip(*l);
        if (!**l || **l == '#')
            continue;
        if (list->len)
            g_string_append_c(list, ',');
        g_string_append(list, *l);
    }
    return g_string_free(list, FALSE);
}

static char *find_boot_file(const char *rootfs, const char *prefix)
{
    g_autofree char *boot = g_build_filename(rootfs, "boot", NULL);
    g_autoptr(GDir) d = g_dir_open(boot, 0, NULL);
    if (!d)
        return NULL;
    const char *n;
    while ((n = g_dir_read_name(d)))
        if (g_str_has_prefix(n, prefix))
            return g_build_filename(boot, n, NULL);
    return NULL;
}

static bool copy_file(const char *from, const char *to, GError **err)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    g_autoptr(GError) e = NULL;
    if (!g_file_get_contents(from, &data, &len, &e)) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "cannot read '%s': %s", from, e->message);
        return false;
    }
    return ml_write_file(to, data, (gssize)len, 0644, err);
}

static void fill_debian(struct ml_image *ret, const char *dir)
{
    ret->base = g_build_filename(dir, "base.qcow2", NULL);
    ret->kernel = g_build_filename(dir, "vmlinuz", NULL);
    ret->initrd = g_build_filename(dir, "initrd.img", NULL);
    ret->cmdline = g_strdup(DEBIAN_CMDLINE);
    ret->seed_by_agent = true;
    g_autofree char *sumfile = g_build_filename(dir, "base.qcow2.sha256", NULL);
    g_autofree char *sum = NULL;
    if (g_file_get_contents(sumfile, &sum, NULL, NULL))
        ret->sha256 = g_strstrip(g_steal_pointer(&sum));
}

/* Builds the image in the empty directory tmpl; the caller removes tmpl on failure. */
static bool assemble_debian(const char *tmpl, GError **err)
{
    g_autofree char *packages = read_packages(err);
    if (!packages)
        return false;
    g_autofree char *rootfs = g_build_filename(tmpl, "rootfs", NULL);
    g_autofree char *raw = g_build_filename(tmpl, "root.raw", NULL);
    g_autofree char *qcow = g_build_filename(tmpl, "base.qcow2", NULL);
    g_autofree char *hook_script = recipe_path("customize.sh");
    g_autofree char *include = g_strdup_printf("--include=%s", packages);
    g_autofree char *hook = g_strdup_printf("--customize-hook=sh '%s' \"$1\"", hook_script);

    ml_progress("image", "building debian-12 from %s with mmdebstrap (about a minute)",
                debian_mirror());
    const char *mm[] = {"mmdebstrap", "--quiet", "--variant=important", include, hook,
                        DEBIAN_SUITE, rootfs, debian_mirror(), NULL};
    if (!ml_spawn_timeout(mm, MMDEBSTRAP_TIMEOUT_S, NULL, err))
        return false;
    ml_progress("image", "root file system ready; making the ext4 image");
    const char *trunc[] = {"truncate", "-s", DEBIAN_IMAGE_SIZE, raw, NULL};
    const char *mkfs[] = {"mkfs.ext4", "-q", "-L", "meshlab-root", "-d", rootfs, raw, NULL};
    const char *conv[] = {"qemu-img", "convert", "-O", "qcow2", raw, qcow, NULL};
    if (!ml_spawn_timeout(trunc, 60, NULL, err) ||
        !ml_spawn_timeout(mkfs, IMAGE_STEP_TIMEOUT_S, NULL, err) ||
        !ml_spawn_timeout(conv, IMAGE_STEP_TIMEOUT_S, NULL, err))
        return false;
    g_autofree char *kernel = find_boot_file(rootfs, "vmlinuz-");
    g_autofree char *initrd = find_boot_file(rootfs, "initrd.img-");
    if (!kernel || !initrd) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                    "the debian-12 root file system has no kernel or initrd in /boot; check that "
                    "images/debian-12/packages lists a kernel");
        return false;
    }
    g_autofree char *kdst = g_build_filename(tmpl, "vmlinuz", NULL);
    g_autofree char *idst = g_build_filename(tmpl, "initrd.img", NULL);
    if (!copy_file(kernel, kdst, err) || !copy_file(initrd, idst, err))
        return false;
    g_autofree char *sum = ml_fetch_sha256_file(qcow, err);
    if (!sum)
        return false;
    g_autofree char *sumfile = g_build_filename(tmpl, "base.qcow2.sha256", NULL);
    g_autofree char *sumline = g_strdup_printf("%s\n", sum);
    g_autofree char *kname = g_path_get_basename(kernel);
    g_autofree char *manifest =
        g_strdup_printf("image=debian-12\nsuite=%s\nmirror=%s\nkernel=%s\nsha256=%s\n",
                        DEBIAN_SUITE, debian_mirror(), kname + strlen("vmlinuz-"), sum);
    g_autofree char *mfile = g_build_filename(tmpl, "manifest", NULL);
    if (!ml_write_file(sumfile, sumline, -1, 0644, err) ||
        !ml_write_file(mfile, manifest, -1, 0644, err))
        return false;
    chmod(qcow, 0644);
    unlink(raw);
    const char *rm[] = {"rm", "-rf", "--one-file-system", rootfs, NULL};
    return ml_spawn_timeout(rm, IMAGE_STEP_TIMEOUT_S, NULL, err);
}

static bool build_debian(const char *dir, GError **err)
{
    g_autofree char *parent = g_path_get_dirname(dir);
    /* The pid in the name tells 'meshlab down' whether its builder is gone. */
    g_autofree char *base = g_strdup_printf(".build-debian-12-%d-XXXXXX", (int)getpid());
    g_autofree char *tmpl = g_build_filename(parent, base, NULL);
    if (!g_mkdtemp_full(tmpl, 0755)) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "cannot create a build directory in '%s': %s",
                    parent, g_strerror(errno));
        return false;
    }
    bool ok = assemble_debian(tmpl, err);
    if (ok && rename(tmpl, dir) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "cannot move the image into '%s': %s", dir,
                    g_strerror(errno));
        ok = false;
    }
    if (!ok) {
        const char *rmall[] = {"rm", "-rf", "--one-file-system", tmpl, NULL};
        ml_spawn_timeout(rmall, IMAGE_STEP_TIMEOUT_S, NULL, NULL);
    }
    return ok;
}

bool ml_image_debian_prepare(const char *cache_dir, struct ml_image *ret, GError **err)
{
    g_autofree char *key = ml_image_debian_key(err);
    if (!key)
        return false;
    g_autofree char *name = g_strdup_printf("debian-12-%s", key);
    g_autofree char *dir = g_build_filename(cache_dir, name, NULL);
    g_autofree char *done = g_build_filename(dir, "manifest", NULL);
    if (!ml_mkdir_p(cache_dir, 0755, err))
        return false;
    chmod(cache_dir, 0755);

    /* One builder at a time; a second meshlab waits and then finds the image. */
    g_autofree char *lockpath = g_build_filename(cache_dir, ".debian-12.lock", NULL);
    int lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0 || flock(lock, LOCK_EX) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "cannot lock '%s': %s", lockpath,
                    g_strerror(errno));
        if (lock >= 0)
            close(lock);
        return false;
    }
    bool ok = true;
    if (g_file_test(done, G_FILE_TEST_EXISTS)) {
        ml_progress("image", "debian-12 %s is cached", key);
    } else {
        double t0 = ml_now();
        ok = build_debian(dir, err);
        if (ok)
            ml_progress("image", "debian-12 %s built in %.0f s", key, ml_now() - t0);
    }
    close(lock);
    if (!ok)
        return false;
    ret->name = g_strdup("debian-12");
    fill_debian(ret, dir);
    return true;
}

char *ml_image_any_cached_kernel(const char *cache_dir)
{
    g_autoptr(GDir) d = g_dir_open(cache_dir, 0, NULL);
    if (!d)
        return NULL;
    const char *n;
    while ((n = g_dir_read_name(d))) {
        if (!g_str_has_prefix(n, "debian-12-"))
            continue;
        g_autofree char *k = g_build_filename(cache_dir, n, "vmlinuz", NULL);
        if (g_file_test(k, G_FILE_TEST_EXISTS))
            return g_steal_pointer(&k);
    }
    return NULL;
}

static bool prepare_named(const char *name, bool force_tcg, struct ml_image *ret, GError **err)
{
    const char *cache = ml_cache_dir();
    if (!strcmp(name, "debian-12"))
        return ml_image_debian_prepare(cache, ret, err);
    if (!strcmp(name, ML_IMAGE_UBUNTU_NAME)) {
        g_autofree char *qcow = NULL;
        if (!ml_image_ubuntu_prepare(cache, false, force_tcg, &qcow, err))
            return false;
        ret->name = g_strdup(name);
        ret->base = g_steal_pointer(&qcow);
        g_autoptr(GError) e = NULL;
        ret->sha256 = ml_fetch_sha256_file(ret->base, &e);
        return true;
    }
    g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                "image '%s' is not in the catalogue; known images: debian-12, %s", name,
                ML_IMAGE_UBUNTU_NAME);
    return false;
}

bool ml_image_resolve(const struct ml_topology *topo, bool force_tcg, struct ml_image *ret,
                      GError **err)
{
    memset(ret, 0, sizeof(*ret));
    g_autoptr(GError) first = NULL;
    if (prepare_named(topo->image, force_tcg, ret, &first)) {
        ret->requested = g_strdup(topo->image);
        return true;
    }
    ml_image_clear(ret);
    if (!topo->image_fallback[0] || first->code != ML_ERR_IMAGE ||
        !strcmp(topo->image_fallback, topo->image)) {
        g_propagate_error(err, g_steal_pointer(&first));
        return false;
    }
    ml_progress("image", "%s cannot be used: %s", topo->image, first->message);
    ml_progress("image", "using the declared fallback %s", topo->image_fallback);
    if (!prepare_named(topo->image_fallback, force_tcg, ret, err)) {
        ml_image_clear(ret);
        return false;
    }
    ret->requested = g_strdup(topo->image);
    ret->fallback_reason = g_strdup(first->message);
    return true;
}
