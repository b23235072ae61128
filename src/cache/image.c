#include "cache/image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cache/fetch.h"
#include "cache/image_ubuntu.h"
#include "topology/plan.h"
#include "core/leftovers.h"
#include "core/spawn.h"
#include "core/util.h"

/* Bumped whenever the way the image is assembled changes, so the cache key changes too. */
#define DEBIAN_BUILDER_VERSION "meshlab-debian-builder/2"
#define DEBIAN_SUITE "bookworm"
#define DEBIAN_IMAGE_SIZE "2G"
/* Deadlines of the build's steps: a slow mirror or disk is waited for, a hang is not. */
#define MMDEBSTRAP_TIMEOUT_S (30 * 60.0)
#define IMAGE_STEP_TIMEOUT_S (10 * 60.0)
#define SCRATCH_MIN_BYTES (3ULL << 30)

/* update-initramfs does nothing while the packages install: the kernel's postinst and
 * initramfs-tools' trigger would each build a full initramfs (the slowest step of the
 * install). The real one is back before the recipe's hook, which may build its own. */
#define NOOP_UPDATE_INITRAMFS                                                                      \
    "--essential-hook=chroot \"$1\" dpkg-divert --quiet --local --rename --divert "                \
    "/usr/sbin/update-initramfs.meshlab --add /usr/sbin/update-initramfs && "                      \
    "printf '#!/bin/sh\\nexit 0\\n' > \"$1/usr/sbin/update-initramfs\" && "                        \
    "chmod 755 \"$1/usr/sbin/update-initramfs\""
#define RESTORE_UPDATE_INITRAMFS                                                                   \
    "--customize-hook=rm -f \"$1/usr/sbin/update-initramfs\" && chroot \"$1\" dpkg-divert "        \
    "--quiet --local --rename --remove /usr/sbin/update-initramfs"
/* A recipe whose hook writes no initrd gets the stock one, built once, after the hook. */
#define FALLBACK_INITRAMFS                                                                         \
    "--customize-hook=ls \"$1\"/boot/initrd.img-* >/dev/null 2>&1 || "                             \
    "chroot \"$1\" update-initramfs -c -k all"

/* Documentation and translations, which no lab step reads, are not installed (the copyright
 * files and man pages stay). Set once the essential packages are extracted, whose copies are
 * deleted then: as --dpkgopt, mmdebstrap would pipe each of them through its Python tar filter,
 * which cost ~50 s here. */
#define NO_DOCS                                                                                    \
    "--extract-hook=printf '%s\\n' 'path-exclude=/usr/share/doc/*' "                               \
    "'path-include=/usr/share/doc/*/copyright' 'path-exclude=/usr/share/info/*' "                  \
    "'path-exclude=/usr/share/locale/*' 'path-include=/usr/share/locale/locale.alias' "            \
    "> \"$1/etc/dpkg/dpkg.cfg.d/99meshlab-nodoc\" && for d in doc info locale; do "                \
    "if [ -d \"$1/usr/share/$d\" ]; then find \"$1/usr/share/$d\" -type f ! -name copyright "      \
    "! -name locale.alias -delete || exit 1; fi; done"

/* mmdebstrap options that shape the image. */
static const char *const debian_shape[] = {
    "--variant=important",
    NO_DOCS,
    NOOP_UPDATE_INITRAMFS,
    NULL,
};
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
    g_checksum_update(
        sum, (const guchar *)DEBIAN_BUILDER_VERSION DEBIAN_SUITE DEBIAN_IMAGE_SIZE DEBIAN_CMDLINE,
        -1);
    /* Every mmdebstrap option, so that a changed option builds a new image; the paths are
     * placeholders, the files behind them are hashed above. */
    g_auto(GStrv) mm =
        ml_image_debian_mmdebstrap_argv("PACKAGES", "HOOK", "DEBS", "DEBS.new", "ROOTFS", "");
    for (char **o = mm; *o; o++)
        g_checksum_update(sum, (const guchar *)*o, -1);
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

/* One step of the build, its time printed so a slow build says where the time went. */
static bool timed_step(const char *what, const char *const *argv, double timeout_s, GError **err)
{
    double t0 = ml_now();
    if (!ml_spawn_timeout(argv, timeout_s, NULL, err))
        return false;
    ml_progress("image", "%s: %.1f s", what, ml_now() - t0);
    return true;
}

/* The .debs of earlier builds, so a rebuild (a changed recipe, a cleared image) downloads only
 * what changed. apt checks each one against the signed indexes as if it had just downloaded it. */
static char *deb_cache_dir(const char *cache_dir)
{
    return g_build_filename(cache_dir, "debs-" DEBIAN_SUITE, NULL);
}

/* The root file system and the raw disk are scratch: on a tmpfs, dpkg's fsyncs and their
 * removal cost nothing, where on a disk mounted with discard they were half of the build.
 * NULL when /dev/shm is missing or has too little room (a guest image needs ~1.5 GiB). */
static char *scratch_parent(void)
{
    static const char shm[] = "/dev/shm";
    struct statvfs st;
    if (statvfs(shm, &st) < 0 || (guint64)st.f_bavail * st.f_frsize < SCRATCH_MIN_BYTES)
        return NULL;
    g_autofree char *meminfo = NULL;
    if (!g_file_get_contents("/proc/meminfo", &meminfo, NULL, NULL))
        return NULL;
    const char *avail = strstr(meminfo, "MemAvailable:");
    if (!avail ||
        g_ascii_strtoull(avail + strlen("MemAvailable:"), NULL, 10) * 1024 < SCRATCH_MIN_BYTES)
        return NULL;
    return g_strdup(shm);
}

/* Scratch directories of builders that died (a crash, a kill -9); a live builder's are kept. */
static void sweep_scratch(const char *parent)
{
    g_autoptr(GDir) d = g_dir_open(parent, 0, NULL);
    const char *n;
    while (d && (n = g_dir_read_name(d))) {
        int pid = g_str_has_prefix(n, ".build-debian-12-") ? ml_leftover_pid(n) : 0;
        if (pid <= 0 || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        g_autofree char *path = g_build_filename(parent, n, NULL);
        const char *rm[] = {"rm", "-rf", "--one-file-system", path, NULL};
        ml_spawn_timeout(rm, IMAGE_STEP_TIMEOUT_S, NULL, NULL);
    }
}

char **ml_image_debian_mmdebstrap_argv(const char *packages, const char *hook_script,
                                       const char *debs, const char *debs_out, const char *rootfs,
                                       const char *mirror)
{
    GPtrArray *a = g_ptr_array_new();
    g_ptr_array_add(a, g_strdup("mmdebstrap"));
    g_ptr_array_add(a, g_strdup("--quiet"));
    for (size_t i = 0; debian_shape[i]; i++)
        g_ptr_array_add(a, g_strdup(debian_shape[i]));
    g_ptr_array_add(a, g_strdup_printf("--include=%s", packages));
    /* The deb cache: mmdebstrap keeps what it downloaded (essential/unlink), and it is copied
     * out before the recipe's hook empties /var/cache/apt/archives. */
    g_ptr_array_add(a, g_strdup("--skip=essential/unlink"));
    /* In partial/, not beside it: apt takes a file in archives/ on its size alone, but treats
     * one in partial/ as an interrupted download, resumes it (nothing left to fetch) and checks
     * its hash against the signed index; a damaged or altered copy is fetched again. */
    g_ptr_array_add(a, g_strdup("--setup-hook=mkdir -p \"$1/var/cache/apt/archives/partial\""));
    g_ptr_array_add(
        a, g_strdup_printf("--setup-hook=sync-in %s /var/cache/apt/archives/partial/", debs));
    /* Versions the mirror no longer has would only fill the cache. */
    g_ptr_array_add(a, g_strdup("--customize-hook=chroot \"$1\" apt-get --quiet autoclean"));
    g_ptr_array_add(
        a, g_strdup_printf("--customize-hook=sync-out /var/cache/apt/archives %s", debs_out));
    g_ptr_array_add(a, g_strdup(RESTORE_UPDATE_INITRAMFS));
    g_ptr_array_add(a, g_strdup_printf("--customize-hook=sh '%s' \"$1\"", hook_script));
    g_ptr_array_add(a, g_strdup(FALLBACK_INITRAMFS));
    g_ptr_array_add(a, g_strdup(DEBIAN_SUITE));
    g_ptr_array_add(a, g_strdup(rootfs));
    g_ptr_array_add(a, g_strdup(mirror));
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

/* Builds the image into the empty directory tmpl, with its root file system and raw disk in
 * scratch; the caller removes both on failure. */
static bool assemble_debian(const char *tmpl, const char *scratch, const char *debs, GError **err)
{
    g_autofree char *packages = read_packages(err);
    if (!packages)
        return false;
    g_autofree char *rootfs = g_build_filename(scratch, "rootfs", NULL);
    g_autofree char *raw = g_build_filename(scratch, "root.raw", NULL);
    g_autofree char *qcow = g_build_filename(tmpl, "base.qcow2", NULL);
    g_autofree char *hook_script = recipe_path("customize.sh");
    /* The cache is replaced only by a build that went through, with what that build used. */
    g_autofree char *debs_out = g_strconcat(debs, ".new", NULL);
    const char *rmnew[] = {"rm", "-rf", "--one-file-system", debs_out, NULL};
    if (!ml_mkdir_p(debs, 0755, err) || !ml_spawn_timeout(rmnew, IMAGE_STEP_TIMEOUT_S, NULL, err) ||
        !ml_mkdir_p(debs_out, 0755, err))
        return false;

    ml_progress("image",
                "building debian-12 from %s with mmdebstrap (about two minutes on 2 cores)",
                debian_mirror());
    g_auto(GStrv) mm = ml_image_debian_mmdebstrap_argv(packages, hook_script, debs, debs_out,
                                                       rootfs, debian_mirror());
    if (!timed_step("mmdebstrap", (const char *const *)mm, MMDEBSTRAP_TIMEOUT_S, err))
        return false;
    /* The copy of /var/cache/apt/archives carries apt's lock and its empty partial/ along. */
    g_autofree char *out_partial = g_build_filename(debs_out, "partial", NULL);
    g_autofree char *out_lock = g_build_filename(debs_out, "lock", NULL);
    const char *rmpartial[] = {"rm", "-rf", "--one-file-system", out_partial, out_lock, NULL};
    const char *rmold[] = {"rm", "-rf", "--one-file-system", debs, NULL};
    if (!ml_spawn_timeout(rmpartial, IMAGE_STEP_TIMEOUT_S, NULL, err) ||
        !ml_spawn_timeout(rmold, IMAGE_STEP_TIMEOUT_S, NULL, err))
        return false;
    if (rename(debs_out, debs) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "cannot move the deb cache into '%s': %s", debs,
                    g_strerror(errno));
        return false;
    }
    ml_progress("image", "root file system ready; making the ext4 image");
    const char *trunc[] = {"truncate", "-s", DEBIAN_IMAGE_SIZE, raw, NULL};
    const char *mkfs[] = {"mkfs.ext4", "-q", "-L", "meshlab-root", "-d", rootfs, raw, NULL};
    const char *conv[] = {"qemu-img", "convert", "-W", "-O", "qcow2", raw, qcow, NULL};
    if (!ml_spawn_timeout(trunc, 60, NULL, err) ||
        !timed_step("mkfs.ext4", mkfs, IMAGE_STEP_TIMEOUT_S, err) ||
        !timed_step("qemu-img convert", conv, IMAGE_STEP_TIMEOUT_S, err))
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
    double t_sum = ml_now();
    g_autofree char *sum = ml_fetch_sha256_file(qcow, err);
    if (!sum)
        return false;
    ml_progress("image", "sha256 of base.qcow2: %.1f s", ml_now() - t_sum);
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
    return true;
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
    g_autofree char *shm = scratch_parent();
    if (shm)
        sweep_scratch(shm);
    g_autofree char *scratch =
        shm ? g_build_filename(shm, base, NULL) : g_build_filename(tmpl, "scratch", NULL);
    bool ok = true;
    if (shm ? !g_mkdtemp_full(scratch, 0755) : mkdir(scratch, 0755) < 0) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "cannot create a scratch directory '%s': %s",
                    scratch, g_strerror(errno));
        ok = false;
    }
    g_autofree char *debs = deb_cache_dir(parent);
    ok = ok && assemble_debian(tmpl, scratch, debs, err);
    double t_rm = ml_now();
    const char *rmscratch[] = {"rm", "-rf", "--one-file-system", scratch, NULL};
    ok = ml_spawn_timeout(rmscratch, IMAGE_STEP_TIMEOUT_S, NULL, ok ? err : NULL) && ok;
    if (ok)
        ml_progress("image", "removing the root file system: %.1f s", ml_now() - t_rm);
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
    if (!ml_mkdir_mode(cache_dir, 0755, err))
        return false;

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
