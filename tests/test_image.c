/* The debian-12 build's mmdebstrap command: the order of its hooks is what keeps the deb
 * cache filled and the guest's initrd present. */
#include "check.h"

#include <glib/gstdio.h>

#include "cache/image.h"

static int find(char **argv, const char *prefix, const char *contains)
{
    for (int i = 0; argv[i]; i++)
        if (g_str_has_prefix(argv[i], prefix) && (!contains || strstr(argv[i], contains)))
            return i;
    return -1;
}

static void test_argv(void)
{
    g_auto(GStrv) a = ml_image_debian_mmdebstrap_argv(
        "linux-image-cloud-amd64,iperf3", "/r/customize.sh", "/c/debs-bookworm",
        "/c/debs-bookworm.new", "/s/rootfs", "http://m/debian");
    guint n = g_strv_length(a);
    CHECK_STR(a[0], "mmdebstrap");
    CHECK(find(a, "--include=linux-image-cloud-amd64,iperf3", NULL) > 0);
    /* The deb cache: what was downloaded stays in the chroot until it is copied out. */
    CHECK(find(a, "--skip=essential/unlink", NULL) > 0);
    /* Into partial/, so that apt checks each cached file's hash (it trusts archives/ on size). */
    int sync_in =
        find(a, "--setup-hook=sync-in /c/debs-bookworm /var/cache/apt/archives/partial/", NULL);
    int sync_out =
        find(a, "--customize-hook=sync-out /var/cache/apt/archives /c/debs-bookworm.new", NULL);
    int autoclean = find(a, "--customize-hook=", "apt-get --quiet autoclean");
    int recipe = find(a, "--customize-hook=sh '/r/customize.sh' \"$1\"", NULL);
    int noop = find(a, "--essential-hook=", "dpkg-divert");
    int restore = find(a, "--customize-hook=", "--remove /usr/sbin/update-initramfs");
    int fallback = find(a, "--customize-hook=", "update-initramfs -c");
    CHECK(sync_in > 0 && sync_out > 0 && recipe > 0 && noop > 0 && restore > 0 && fallback > 0);
    /* The recipe's hook empties /var/cache/apt/archives: the cache is copied out before it,
     * without the versions the mirror has dropped. */
    CHECK(autoclean > 0 && autoclean < sync_out && sync_out < recipe);
    /* The recipe's hook finds the real update-initramfs; the stock initrd only when it wrote
     * none. */
    CHECK(restore < recipe && recipe < fallback);
    CHECK(n >= 3 && !strcmp(a[n - 3], "bookworm") && !strcmp(a[n - 2], "/s/rootfs") &&
          !strcmp(a[n - 1], "http://m/debian"));
}

/* Runs a hook as mmdebstrap does (sh -c HOOK exec ROOT), with a chroot that only records. */
static int run_hook(const char *hook, const char *root, const char *bin)
{
    g_autofree char *path = g_strdup_printf("%s:/usr/bin:/bin", bin);
    const char *argv[] = {"sh", "-c", hook, "exec", root, NULL};
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "PATH", path, TRUE);
    int status = -1;
    CHECK(g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_SEARCH_PATH_FROM_ENVP, NULL, NULL, NULL,
                       NULL, &status, NULL));
    return status;
}

/* The recipe may write its own initrd; the stock one is built only when it did not. */
static void test_fallback_initrd(void)
{
    g_autofree char *tmp = g_dir_make_tmp("test_image-XXXXXX", NULL);
    g_autofree char *bin = g_build_filename(tmp, "bin", NULL);
    g_autofree char *root = g_build_filename(tmp, "root", NULL);
    g_autofree char *boot = g_build_filename(root, "boot", NULL);
    g_autofree char *fake = g_build_filename(bin, "chroot", NULL);
    g_autofree char *log = g_build_filename(tmp, "chroot.log", NULL);
    CHECK(g_mkdir_with_parents(bin, 0755) == 0 && g_mkdir_with_parents(boot, 0755) == 0);
    g_autofree char *script = g_strdup_printf("#!/bin/sh\necho \"$*\" >> '%s'\n", log);
    CHECK(g_file_set_contents(fake, script, -1, NULL) && g_chmod(fake, 0755) == 0);

    g_auto(GStrv) a = ml_image_debian_mmdebstrap_argv("p", "/h", "/d", "/d.new", "/r", "m");
    int i = find(a, "--customize-hook=", "update-initramfs -c");
    CHECK(i > 0);
    if (i <= 0)
        return;
    const char *hook = a[i] + strlen("--customize-hook=");

    CHECK(run_hook(hook, root, bin) == 0);
    g_autofree char *built = NULL;
    CHECK(g_file_get_contents(log, &built, NULL, NULL));
    g_autofree char *want = g_strdup_printf("%s update-initramfs -c -k all\n", root);
    CHECK_STR(built, want);

    g_unlink(log);
    g_autofree char *initrd = g_build_filename(boot, "initrd.img-6.1.0-50-cloud-amd64", NULL);
    CHECK(g_file_set_contents(initrd, "tiny", -1, NULL));
    CHECK(run_hook(hook, root, bin) == 0);
    CHECK(!g_file_test(log, G_FILE_TEST_EXISTS));

    const char *rm[] = {"rm", "-rf", tmp, NULL};
    g_spawn_sync(NULL, (char **)rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
}

static char *put(const char *root, const char *rel, const char *text)
{
    char *path = g_build_filename(root, rel, NULL);
    g_autofree char *dir = g_path_get_dirname(path);
    CHECK(g_mkdir_with_parents(dir, 0755) == 0 && g_file_set_contents(path, text, -1, NULL));
    return path;
}

/* Documentation goes, from what is already extracted and from what dpkg installs later; the
 * copyright files and locale.alias stay. A root without /usr/share/info is no error. */
static void test_no_docs(void)
{
    g_autofree char *root = g_dir_make_tmp("test_image-XXXXXX", NULL);
    g_autofree char *cfgdir = g_build_filename(root, "etc/dpkg/dpkg.cfg.d", NULL);
    CHECK(g_mkdir_with_parents(cfgdir, 0755) == 0);
    g_autofree char *copyright = put(root, "usr/share/doc/bash/copyright", "GPL");
    g_autofree char *news = put(root, "usr/share/doc/bash/NEWS.gz", "news");
    g_autofree char *alias = put(root, "usr/share/locale/locale.alias", "alias");
    g_autofree char *mo = put(root, "usr/share/locale/de/LC_MESSAGES/bash.mo", "mo");
    g_autofree char *man = put(root, "usr/share/man/man1/bash.1.gz", "man");

    g_auto(GStrv) a = ml_image_debian_mmdebstrap_argv("p", "/h", "/d", "/d.new", "/r", "m");
    int i = find(a, "--extract-hook=", "99meshlab-nodoc");
    CHECK(i > 0);
    if (i <= 0)
        return;
    CHECK(run_hook(a[i] + strlen("--extract-hook="), root, "/nonexistent") == 0);
    CHECK(g_file_test(copyright, G_FILE_TEST_EXISTS) && g_file_test(alias, G_FILE_TEST_EXISTS) &&
          g_file_test(man, G_FILE_TEST_EXISTS));
    CHECK(!g_file_test(news, G_FILE_TEST_EXISTS) && !g_file_test(mo, G_FILE_TEST_EXISTS));
    g_autofree char *cfg = g_build_filename(cfgdir, "99meshlab-nodoc", NULL);
    g_autofree char *text = NULL;
    CHECK(g_file_get_contents(cfg, &text, NULL, NULL));
    CHECK(text && strstr(text, "path-exclude=/usr/share/doc/*\n") &&
          strstr(text, "path-include=/usr/share/doc/*/copyright\n") &&
          strstr(text, "path-exclude=/usr/share/locale/*\n"));

    const char *rm[] = {"rm", "-rf", root, NULL};
    g_spawn_sync(NULL, (char **)rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
}

int main(void)
{
    test_argv();
    test_fallback_initrd();
    test_no_docs();
    return check_finish();
}
