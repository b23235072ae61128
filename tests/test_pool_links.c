/* Root never follows a link in a directory another user can write (issue 16, item 3). A lab's
 * pool directory belongs to QEMU's user: the seed ISO, the warm overlay and everything else
 * root puts there is built in root's own directory and copied in with O_EXCL after removing
 * what is at the name; what root reads there (the console log) is opened without following a
 * link and only when it is a regular file. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "topology/plan.h"
#include "virt/cloudinit.h"
#include "virt/warm.h"

static char *root;

static char *in_root(const char *name)
{
    return g_build_filename(root, name, NULL);
}

static char *victim(void)
{
    char *v = in_root("victim");
    CHECK(g_file_set_contents(v, "secret\n", -1, NULL));
    chmod(v, 0600);
    return v;
}

static bool victim_intact(const char *v)
{
    g_autofree char *text = NULL;
    struct stat st;
    return g_file_get_contents(v, &text, NULL, NULL) && !strcmp(text, "secret\n") &&
           stat(v, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_uid == geteuid();
}

static bool regular_0600(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600;
}

/* The warm overlay: copied into the pool over a planted link, holes kept. */
static void test_warm_overlay(const char *pool)
{
    g_autofree char *v = victim();
    g_autofree char *dir = ml_warm_dir("lab1", "hub");
    CHECK(g_mkdir_with_parents(dir, 0700) == 0);
    g_autofree char *saved = g_build_filename(dir, "overlay.qcow2", NULL);
    int fd = open(saved, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && write(fd, "QFI\xfb", 4) == 4 && pwrite(fd, "end", 3, 63 << 20) == 3);
    close(fd);
    g_autofree char *dest = g_build_filename(pool, "hub.qcow2", NULL);
    CHECK(symlink(v, dest) == 0);
    g_autoptr(GError) err = NULL;
    CHECK(ml_warm_place_overlay("lab1", "hub", dest, &err));
    CHECK(victim_intact(v));
    CHECK(regular_0600(dest));
    struct stat st;
    CHECK(stat(dest, &st) == 0 && st.st_size == (63 << 20) + 3);
    CHECK(st.st_blocks * 512 < (8 << 20)); /* still sparse */
    char head[4] = {0}, tail[3] = {0};
    fd = open(dest, O_RDONLY);
    CHECK(fd >= 0 && pread(fd, head, 4, 0) == 4 && pread(fd, tail, 3, 63 << 20) == 3);
    close(fd);
    CHECK(!memcmp(head, "QFI\xfb", 4) && !memcmp(tail, "end", 3));

    /* The other way (ml_warm_save reads the overlay from the pool): a link there is not
     * followed, and nothing is written. */
    unlink(dest);
    CHECK(symlink(v, dest) == 0);
    g_autofree char *copy = in_root("saved-copy");
    g_clear_error(&err);
    CHECK(!ml_file_place(dest, copy, 0600, &err));
    CHECK(err && strstr(err->message, "symbolic link"));
    CHECK(!g_file_test(copy, G_FILE_TEST_EXISTS));
    unlink(dest);
}

/* A FIFO at a name root reads is refused at once, not waited on. */
static void test_fifo(const char *pool)
{
    g_autofree char *fifo = g_build_filename(pool, "hub-console.log", NULL);
    CHECK(mkfifo(fifo, 0600) == 0);
    alarm(10);
    g_autoptr(GError) err = NULL;
    gsize len = 0;
    CHECK(ml_file_read_nofollow(fifo, 1024, &len, &err) == NULL);
    CHECK(err && strstr(err->message, "not a regular file"));
    g_autofree char *copy = in_root("fifo-copy");
    g_clear_error(&err);
    CHECK(!ml_file_place(fifo, copy, 0600, &err));
    alarm(0);
    unlink(fifo);
}

/* The console log: a planted link is not read; a regular file is, its end when long. */
static void test_console_read(const char *pool)
{
    g_autofree char *v = victim();
    g_autofree char *log = g_build_filename(pool, "hub-console.log", NULL);
    CHECK(symlink(v, log) == 0);
    g_autoptr(GError) err = NULL;
    gsize len = 0;
    g_autofree char *leaked = ml_file_read_nofollow(log, 1 << 20, &len, &err);
    CHECK(leaked == NULL && err && strstr(err->message, "symbolic link"));
    unlink(log);
    CHECK(g_file_set_contents(log, "0123456789", -1, NULL));
    g_autofree char *all = ml_file_read_nofollow(log, 1 << 20, &len, NULL);
    CHECK_STR(all, "0123456789");
    g_autofree char *end = ml_file_read_nofollow(log, 4, &len, NULL);
    CHECK(len == 4);
    CHECK_STR(end, "6789");
    unlink(log);
}

/* The seed ISO: built in root's temporary directory, copied over a planted link. */
static void test_seed_iso(const char *pool)
{
    g_autofree char *tool = g_find_program_in_path("cloud-localds");
    if (!tool) {
        printf("seed ISO over a planted link: not run (cloud-localds missing; "
               "scripts/deps.sh installs it)\n");
        return;
    }
    g_autofree char *v = victim();
    g_autofree char *iso = g_build_filename(pool, "hub-seed.iso", NULL);
    CHECK(symlink(v, iso) == 0);
    struct ml_seed seed = {.user_data = g_strdup("#cloud-config\n"),
                           .meta_data = g_strdup("instance-id: x\n"),
                           .network_config = g_strdup("version: 2\n")};
    g_autoptr(GError) err = NULL;
    CHECK(ml_seed_write_iso(&seed, iso, &err));
    if (err)
        printf("  %s\n", err->message);
    ml_seed_clear(&seed);
    CHECK(victim_intact(v));
    CHECK(regular_0600(iso));
    struct stat st;
    CHECK(stat(iso, &st) == 0 && st.st_size > 32 * 1024); /* an ISO 9660 image */
    unlink(iso);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    root = g_strdup_printf("%s/meshlab-test-pool-links-XXXXXX", t && *t ? t : "/tmp");
    if (!g_mkdtemp(root))
        return 1;
    g_autofree char *cache = in_root("cache");
    g_setenv("MESHLAB_CACHE_DIR", cache, TRUE);
    g_autofree char *pool = in_root("pool");
    CHECK(mkdir(pool, 0700) == 0);
    /* As the pool is: QEMU's user owns it (uid 65534 stands in for it). */
    if (geteuid() == 0)
        CHECK(chown(pool, 65534, 65534) == 0);

    test_warm_overlay(pool);
    test_fifo(pool);
    test_console_read(pool);
    test_seed_iso(pool);

    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", root);
    if (system(rm) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    g_free(root);
    return check_finish();
}
