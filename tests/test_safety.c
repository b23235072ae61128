/* meshlab runs as root: what it writes, where, and what it leaves must never
 * be steered by another local user, and two meshlabs must never work on one
 * lab. Issue 6, items 7, 9 and 11. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/leftovers.h"
#include "core/lock.h"
#include "topology/plan.h"
#include "core/rundir.h"
#include "core/util.h"
#include "topology/name.h"
#include "virt/lab.h"
#include "virt/warm.h"

static char *tmp_root;

static char *path_in(const char *name)
{
    return g_build_filename(tmp_root, name, NULL);
}

static char *read_text(const char *path)
{
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return g_strdup("(unreadable)");
    return text;
}

static void write_text(const char *path, const char *text, int mode)
{
    CHECK(g_file_set_contents(path, text, -1, NULL));
    chmod(path, (mode_t)mode);
}

/* Item 7: ml_write_file never follows a link planted at the file or at the
 * name its temporary file used to have. */
static void test_write_file_no_follow(void)
{
    g_autofree char *victim = path_in("victim");
    g_autofree char *target = path_in("state.json");
    write_text(victim, "victim\n", 0600);
    CHECK(symlink(victim, target) == 0);
    g_autofree char *old_tmp = g_strdup_printf("%s.tmp.%d", target, (int)getpid());
    CHECK(symlink(victim, old_tmp) == 0);
    g_autoptr(GError) err = NULL;
    CHECK(ml_write_file(target, "{}\n", -1, 0644, &err));
    g_autofree char *v = read_text(victim);
    CHECK_STR(v, "victim\n");
    struct stat st;
    CHECK(stat(victim, &st) == 0 && (st.st_mode & 07777) == 0600);
    CHECK(lstat(target, &st) == 0 && S_ISREG(st.st_mode));
    g_autofree char *t = read_text(target);
    CHECK_STR(t, "{}\n");
    unlink(old_tmp);
}

/* Item 7: a run directory that another user controls is refused before
 * anything is written into it; a planted link's target stays untouched. */
static void test_rundir_foreign(void)
{
    if (geteuid() != 0) {
        printf("rundir ownership checks: not run (they need root to chown a directory to "
               "another user)\n");
        return;
    }
    g_autofree char *victim = path_in("victim-foreign");
    write_text(victim, "victim\n", 0600);
    g_autofree char *dir = path_in("foreign-out");
    CHECK(mkdir(dir, 0777) == 0);
    CHECK(chmod(dir, 0777) == 0);
    CHECK(chown(dir, 65534, 65534) == 0);
    g_autofree char *planted = g_build_filename(dir, "results.json", NULL);
    CHECK(symlink(victim, planted) == 0);
    g_autoptr(GError) err = NULL;
    int fd = ml_rundir_open(dir, "three-guest", "20261130-000000-abcdef", true, &err);
    CHECK(fd < 0);
    CHECK(err && err->code == ML_ERR_INPUT && strstr(err->message, "uid 65534"));
    g_autofree char *v = read_text(victim);
    CHECK_STR(v, "victim\n");
    g_autofree char *marker = g_build_filename(dir, ML_RUNDIR_MARKER, NULL);
    CHECK(!g_file_test(marker, G_FILE_TEST_EXISTS));

    /* Ours, but writable by everyone: refused too. */
    g_autofree char *open_dir = path_in("world-writable");
    CHECK(mkdir(open_dir, 0777) == 0 && chmod(open_dir, 0777) == 0);
    g_clear_error(&err);
    CHECK(ml_rundir_open(open_dir, "three-guest", "r", false, &err) < 0);
    CHECK(err && strstr(err->message, "writable by everyone"));

    /* A link as the run directory itself is refused. */
    g_autofree char *link = path_in("link-out");
    CHECK(symlink(tmp_root, link) == 0);
    g_clear_error(&err);
    CHECK(ml_rundir_open(link, "three-guest", "r", false, &err) < 0);
    CHECK(err && strstr(err->message, "symbolic link"));
}

/* Item 7: runs are never mixed; writes below the run directory never follow a link. */
static void test_rundir_reuse_and_links(void)
{
    g_autofree char *dir = path_in("runs/three-guest-1");
    g_autoptr(GError) err = NULL;
    int fd = ml_rundir_open(dir, "three-guest", "run-1", false, &err);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    CHECK(ml_rundir_write(fd, "guests/hub-console.log", "boot\n", -1, 0644, &err));
    g_autofree char *console = g_build_filename(dir, "guests", "hub-console.log", NULL);
    g_autofree char *c = read_text(console);
    CHECK_STR(c, "boot\n");

    /* A link planted where a subdirectory goes: the write fails, nothing lands outside. */
    g_autofree char *elsewhere = path_in("elsewhere");
    CHECK(mkdir(elsewhere, 0755) == 0);
    g_autofree char *rules = g_build_filename(dir, "rulesets", NULL);
    CHECK(symlink(elsewhere, rules) == 0);
    CHECK(!ml_rundir_write(fd, "rulesets/plain/hub.nft", "x", -1, 0644, &err));
    g_clear_error(&err);
    g_autofree char *escaped = g_build_filename(elsewhere, "plain", NULL);
    CHECK(!g_file_test(escaped, G_FILE_TEST_EXISTS));

    /* A link planted at the file's name is replaced, its target untouched. */
    g_autofree char *victim = path_in("victim-report");
    write_text(victim, "victim\n", 0600);
    g_autofree char *report = g_build_filename(dir, "report.md", NULL);
    CHECK(symlink(victim, report) == 0);
    CHECK(ml_rundir_write(fd, "report.md", "# report\n", -1, 0644, &err));
    g_autofree char *v = read_text(victim);
    CHECK_STR(v, "victim\n");
    struct stat st;
    CHECK(lstat(report, &st) == 0 && S_ISREG(st.st_mode));
    CHECK(!ml_rundir_write(fd, "../escape", "x", -1, 0644, &err));
    g_clear_error(&err);
    close(fd);

    /* The same directory again: refused without --force, cleared with it. */
    CHECK(ml_rundir_open(dir, "three-guest", "run-2", false, &err) < 0);
    CHECK(err && strstr(err->message, "--force"));
    g_clear_error(&err);
    CHECK(ml_rundir_open(dir, "other-lab", "run-2", true, &err) < 0);
    CHECK(err && strstr(err->message, "run of lab three-guest"));
    g_clear_error(&err);
    fd = ml_rundir_open(dir, "three-guest", "run-2", true, &err);
    CHECK(fd >= 0);
    CHECK(!g_file_test(console, G_FILE_TEST_EXISTS));
    CHECK(g_file_test(elsewhere, G_FILE_TEST_IS_DIR)); /* the link went, not its target */
    if (fd >= 0)
        close(fd);

    /* A directory with someone else's files is never taken, not even with --force. */
    g_autofree char *foreign = path_in("not-a-run");
    CHECK(mkdir(foreign, 0755) == 0);
    g_autofree char *doc = g_build_filename(foreign, "thesis.tex", NULL);
    write_text(doc, "precious\n", 0644);
    g_clear_error(&err);
    CHECK(ml_rundir_open(foreign, "three-guest", "r", true, &err) < 0);
    CHECK(err && strstr(err->message, "holds no meshlab run"));
    CHECK(g_file_test(doc, G_FILE_TEST_EXISTS));
}

/* Item 9: one meshlab per lab; the refusal names the holder. */
static void test_lock(void)
{
    g_autoptr(GError) err = NULL;
    int a = ml_lock_lab("three-guest", "up", &err);
    CHECK(a >= 0);
    int b = ml_lock_lab("three-guest", "run", &err);
    CHECK(b < 0);
    g_autofree char *pid = g_strdup_printf("meshlab pid %d ('meshlab up')", (int)getpid());
    CHECK(err && strstr(err->message, "three-guest is busy") && strstr(err->message, pid) &&
          strstr(err->message, "since 20"));
    g_clear_error(&err);
    /* Another lab is not affected. */
    int other = ml_lock_lab("e2e-detour", "up", &err);
    CHECK(other >= 0);
    ml_lock_release("e2e-detour", other);

    /* A child process is refused too, and gets it once the holder is gone. */
    pid_t child = fork();
    if (child == 0) {
        GError *e = NULL;
        _exit(ml_lock_lab("three-guest", "down", &e) < 0 ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ml_lock_release("three-guest", a);
    g_autofree char *path = ml_lock_path("three-guest");
    CHECK(!g_file_test(path, G_FILE_TEST_EXISTS));
    int again = ml_lock_lab("three-guest", "up", &err);
    CHECK(again >= 0);
    ml_lock_release("three-guest", again);
}

/* Item 9: two labs never map to one libvirt name. */
static void test_names_unambiguous(void)
{
    struct ml_topology t1 = {.n_nodes = 1}, t2 = {.n_nodes = 1};
    g_strlcpy(t1.name, "a", sizeof(t1.name));
    g_strlcpy(t1.nodes[0].name, "b-c", sizeof(t1.nodes[0].name));
    g_strlcpy(t2.name, "a-b", sizeof(t2.name));
    g_strlcpy(t2.nodes[0].name, "c", sizeof(t2.nodes[0].name));
    g_autoptr(MlPlan) p1 = ml_plan_new(&t1, "r");
    g_autoptr(MlPlan) p2 = ml_plan_new(&t2, "r");
    CHECK(strcmp(p1->guests[0].domain, p2->guests[0].domain) != 0);
    CHECK(strcmp(p1->hosts[0].network, p2->hosts[0].network) != 0 &&
          strcmp(p1->hosts[0].pool, p2->hosts[0].pool) != 0);
    g_autofree char *prefix = ml_plan_domain_prefix("a");
    CHECK(!g_str_has_prefix(p2->guests[0].domain, prefix));
}

static int dead_pid(void)
{
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    return (int)child;
}

static void count_left(const char *path, void *opaque)
{
    (void)path;
    (*(int *)opaque)++;
}

/* Item 11: what a killed meshlab leaves is found and removed; what a live one
 * is writing, and anything else, is not. */
static void test_leftovers(void)
{
    CHECK(ml_leftover_pid("meshlab-seed-4242-AbC123") == 4242);
    CHECK(ml_leftover_pid(".build-debian-12-4242-AbC123") == 4242);
    CHECK(ml_leftover_pid("base.qcow2.tmp.4242") == 4242);
    CHECK(ml_leftover_pid("known-hashes.tmp.4242.AbC123") == 4242);
    CHECK(ml_leftover_pid("debian-12-0123abcd") == 0);
    CHECK(ml_leftover_pid("tailscale_1.104.4_amd64.tgz.part") == 0);
    /* Issue 16, finding 18: the other temporary names in $TMPDIR carry the pid too. */
    CHECK(ml_leftover_pid("meshlab-capture-4242-AbC123.pcap") == 4242);
    CHECK(ml_leftover_pid("meshlab-plot-4242-AbC123") == 4242);
    CHECK(ml_leftover_pid("meshlab-kvm-4242-AbC123") == 4242);
    CHECK(ml_leftover_pid("meshlab-warm-AbC123") == 0);
    CHECK(ml_leftover_pid("meshlab-plot-AbC123") == 0);
    /* Issue 36, finding 8: the export's key directories (a wg0.conf with its PrivateKey, a CA's
     * key) carry the pid too, and the sweep knows their kind. */
    CHECK(ml_leftover_pid("meshlab-export-4242-AbC123") == 4242);
    CHECK(ml_leftover_pid("meshlab-export-check-AbC123") == 0);
    const char *kinds[][2] = {{"seed", ""}, {"capture", ".pcap"}, {"plot", ""}, {"kvm", ""},
                              {"export", ""}};
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
        g_autofree char *tmpl = ml_leftover_template(kinds[i][0], kinds[i][1]);
        g_autofree char *name = g_strdup(tmpl);
        char *x = strstr(name, "XXXXXX");
        CHECK(x != NULL);
        if (x)
            memcpy(x, "AbC123", 6);
        CHECK(ml_leftover_pid(name) == (int)getpid());
    }

    int gone = dead_pid();
    g_autofree char *cache = g_strdup(g_getenv("MESHLAB_CACHE_DIR"));
    g_autofree char *tmp = g_strdup(g_get_tmp_dir());
    g_autofree char *build = g_strdup_printf("%s/.build-debian-12-%d-AbC123", cache, gone);
    g_autofree char *rootfs = g_build_filename(build, "rootfs", NULL);
    CHECK(g_mkdir_with_parents(rootfs, 0755) == 0);
    g_autofree char *outside = path_in("outside");
    write_text(outside, "keep\n", 0644);
    g_autofree char *inner_link = g_build_filename(rootfs, "link", NULL);
    CHECK(symlink(outside, inner_link) == 0);
    g_autofree char *img_dir = g_build_filename(cache, "ubuntu-24.04-abc", NULL);
    CHECK(g_mkdir_with_parents(img_dir, 0755) == 0);
    g_autofree char *half = g_strdup_printf("%s/base.qcow2.tmp.%d", img_dir, gone);
    write_text(half, "half", 0644);
    g_autofree char *live = g_strdup_printf("%s/base.qcow2.tmp.%d", img_dir, (int)getpid());
    write_text(live, "mine", 0644);
    g_autofree char *seed = g_strdup_printf("%s/meshlab-seed-%d-AbC123", tmp, gone);
    CHECK(g_mkdir_with_parents(seed, 0700) == 0);
    g_autofree char *ud = g_build_filename(seed, "user-data", NULL);
    write_text(ud, "#cloud-config\n", 0600);
    g_autofree char *plot = g_strdup_printf("%s/meshlab-plot-%d-AbC123", tmp, gone);
    CHECK(g_mkdir_with_parents(plot, 0700) == 0);
    g_autofree char *pcap = g_strdup_printf("%s/meshlab-capture-%d-AbC123.pcap", tmp, gone);
    write_text(pcap, "pcap", 0600);
    g_autofree char *live_pcap =
        g_strdup_printf("%s/meshlab-capture-%d-AbC123.pcap", tmp, (int)getpid());
    write_text(live_pcap, "pcap", 0600);
    g_autofree char *dead_export = g_strdup_printf("%s/meshlab-export-%d-AbC123", tmp, gone);
    g_autofree char *live_export =
        g_strdup_printf("%s/meshlab-export-%d-AbC123", tmp, (int)getpid());
    const char *exports[] = {dead_export, live_export};
    for (size_t i = 0; i < G_N_ELEMENTS(exports); i++) {
        CHECK(g_mkdir_with_parents(exports[i], 0700) == 0);
        g_autofree char *wg = g_build_filename(exports[i], "wg0.conf", NULL);
        write_text(wg, "[Interface]\nPrivateKey = x\n", 0600);
    }
    g_autofree char *labs = g_build_filename(g_getenv("MESHLAB_STATE_DIR"), "labs", NULL);
    CHECK(g_mkdir_with_parents(labs, 0700) == 0);
    g_autofree char *state_tmp = g_strdup_printf("%s/three-guest.json.tmp.%d.AbC123", labs, gone);
    write_text(state_tmp, "{", 0600);

    int seen = 0;
    CHECK(ml_leftovers_sweep(false, count_left, &seen) == 7);
    CHECK(seen == 7);
    CHECK(g_file_test(build, G_FILE_TEST_IS_DIR)); /* a dry run removes nothing */
    seen = 0;
    CHECK(ml_leftovers_sweep(true, count_left, &seen) == 7);
    CHECK(!g_file_test(dead_export, G_FILE_TEST_EXISTS));
    CHECK(g_file_test(live_export, G_FILE_TEST_IS_DIR));
    g_autofree char *live_wg = g_build_filename(live_export, "wg0.conf", NULL);
    CHECK(unlink(live_wg) == 0 && rmdir(live_export) == 0);
    CHECK(!g_file_test(plot, G_FILE_TEST_EXISTS) && !g_file_test(pcap, G_FILE_TEST_EXISTS));
    CHECK(g_file_test(live_pcap, G_FILE_TEST_EXISTS));
    CHECK(!g_file_test(build, G_FILE_TEST_EXISTS));
    CHECK(!g_file_test(half, G_FILE_TEST_EXISTS));
    CHECK(!g_file_test(seed, G_FILE_TEST_EXISTS));
    CHECK(!g_file_test(state_tmp, G_FILE_TEST_EXISTS));
    CHECK(g_file_test(live, G_FILE_TEST_EXISTS));
    CHECK(g_file_test(img_dir, G_FILE_TEST_IS_DIR));
    g_autofree char *o = read_text(outside);
    CHECK_STR(o, "keep\n");
}

/* Issue 16, item 3: the run directory's parents are not followed through a link that another
 * user can change (runs -> /anywhere in a checkout), only through the host's own; guests/
 * (consoles, journals) is the owner's alone. */
static void test_rundir_parents(void)
{
    g_autofree char *elsewhere = path_in("parents-elsewhere");
    CHECK(mkdir(elsewhere, 0755) == 0);
    g_autofree char *checkout = path_in("checkout");
    CHECK(mkdir(checkout, 0755) == 0);
    g_autofree char *runs = g_build_filename(checkout, "runs", NULL);
    CHECK(symlink(elsewhere, runs) == 0);
    if (geteuid() == 0)
        CHECK(lchown(runs, 65534, 65534) == 0 && chown(checkout, 65534, 65534) == 0);
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_build_filename(runs, "three-guest-1", NULL);
    CHECK(ml_rundir_open(dir, "three-guest", "r", false, &err) < 0);
    CHECK(err && err->code == ML_ERR_INPUT && strstr(err->message, "'runs' on its way") &&
          strstr(err->message, "symbolic link"));
    g_autofree char *escaped = g_build_filename(elsewhere, "three-guest-1", NULL);
    CHECK(!g_file_test(escaped, G_FILE_TEST_EXISTS));
    /* Deeper, with parents still to create past the link. */
    g_autofree char *deep = g_build_filename(runs, "a", "b", "three-guest-1", NULL);
    g_clear_error(&err);
    CHECK(ml_rundir_open(deep, "three-guest", "r", false, &err) < 0);
    g_autofree char *deep_escaped = g_build_filename(elsewhere, "a", NULL);
    CHECK(!g_file_test(deep_escaped, G_FILE_TEST_EXISTS));

    /* The host's own link (root's, in a directory only root writes) is followed. */
    if (geteuid() == 0) {
        g_autofree char *host = path_in("host");
        CHECK(mkdir(host, 0755) == 0);
        g_autofree char *var_run = g_build_filename(host, "run", NULL);
        CHECK(symlink("../parents-elsewhere", var_run) == 0);
        g_autofree char *through = g_build_filename(var_run, "new", "three-guest-2", NULL);
        g_clear_error(&err);
        int fd = ml_rundir_open(through, "three-guest", "r", false, &err);
        CHECK(fd >= 0);
        g_autofree char *made = g_build_filename(elsewhere, "new", "three-guest-2", NULL);
        CHECK(g_file_test(made, G_FILE_TEST_IS_DIR));
        if (fd >= 0) {
            CHECK(ml_rundir_write(fd, "guests/hub-console.log", "root@hub:~# ", -1, 0644, &err));
            CHECK(ml_rundir_write(fd, "rulesets/plain/hub.nft", "x", -1, 0644, &err));
            struct stat st;
            g_autofree char *guests = g_build_filename(made, "guests", NULL);
            g_autofree char *rules = g_build_filename(made, "rulesets", NULL);
            CHECK(stat(guests, &st) == 0 && (st.st_mode & 07777) == 0700);
            CHECK(stat(rules, &st) == 0 && (st.st_mode & 07777) == 0755);
            close(fd);
        }
    }
}

/* Issue 16, item 3: meshlab sets the mode only of a directory it has just made. */
static void test_mkdir_mode(void)
{
    g_autofree char *shared = path_in("shared-tmp");
    CHECK(mkdir(shared, 0755) == 0 && chmod(shared, 01777) == 0);
    g_autoptr(GError) err = NULL;
    CHECK(ml_mkdir_mode(shared, 0755, &err));
    struct stat st;
    CHECK(stat(shared, &st) == 0 && (st.st_mode & 07777) == 01777);
    mode_t old = umask(077);
    g_autofree char *fresh = path_in("fresh/state");
    CHECK(ml_mkdir_mode(fresh, 0711, &err));
    umask(old);
    CHECK(stat(fresh, &st) == 0 && (st.st_mode & 07777) == 0711);
    g_autofree char *file = path_in("fresh/file");
    write_text(file, "x", 0644);
    CHECK(!ml_mkdir_mode(file, 0755, &err));
    CHECK(err && strstr(err->message, "in the way"));
    g_clear_error(&err);
    /* The lock directory (0700) made first on a fresh host: its parents, the state directory
     * among them, stay passable (0755), or QEMU's user could not reach the pools. */
    g_autofree char *lockdir = path_in("first/labs");
    g_autofree char *first = path_in("first");
    old = umask(022);
    CHECK(ml_mkdir_p(lockdir, 0700, &err));
    umask(old);
    CHECK(stat(lockdir, &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK(stat(first, &st) == 0 && (st.st_mode & 0777) == 0755);
}

static void count_removed(const char *what, void *opaque)
{
    (void)what;
    (*(int *)opaque)++;
}

/* Issue 16, item 1: the name rule refuses every name that would lead to a directory above one
 * lab's own, and the functions that build or remove those paths refuse such a name themselves. */
static void test_bad_names(void)
{
    static const char *const bad[] = {"",    ".",  "..", "../x", "a/b", "/",
                                      "Lab", "-a", "a-", "1a",   "a b", "a\nb"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) err = NULL;
        CHECK(!ml_name_check("lab name", bad[i], false, &err));
        CHECK(err && err->code == ML_ERR_INPUT && strstr(err->message, "is not allowed"));
        CHECK(!ml_name_check("image.use", bad[i], true, NULL));
        g_autofree char *pool = ml_lab_pool_dir(bad[i]);
        CHECK(i >= 6 || pool == NULL); /* the first six would lead out of STATE/pools/LAB */
    }
    g_autoptr(GError) err = NULL;
    CHECK(!ml_name_check("lab name", "abcdefghijklmnopqrstuvwxyz012345", false, &err));
    CHECK(err && strstr(err->message, "at most 31 characters"));
    CHECK(ml_name_check("lab name", "three-guest", false, NULL));
    CHECK(ml_name_check("image.use", "ubuntu-24.04", true, NULL));
    CHECK(!ml_name_check("lab name", "ubuntu-24.04", false, NULL));
    g_autofree char *good = ml_lab_pool_dir("lab-a");
    CHECK(good && g_str_has_suffix(good, "/pools/lab-a"));

    /* Two labs' saves and states: a bad name removes none of them. */
    const char *cache = g_getenv("MESHLAB_CACHE_DIR"), *state = g_getenv("MESHLAB_STATE_DIR");
    g_autofree char *save_a = g_build_filename(cache, "warm", "lab-a", "hub", "state", NULL);
    g_autofree char *save_b = g_build_filename(cache, "warm", "lab-b", "hub", "state", NULL);
    g_autofree char *labs = g_build_filename(state, "labs", NULL);
    g_autofree char *dir_a = g_path_get_dirname(save_a), *dir_b = g_path_get_dirname(save_b);
    CHECK(g_mkdir_with_parents(dir_a, 0700) == 0 && g_mkdir_with_parents(dir_b, 0700) == 0);
    CHECK(g_mkdir_with_parents(labs, 0700) == 0);
    write_text(save_a, "a", 0600);
    write_text(save_b, "b", 0600);
    g_autofree char *json = g_build_filename(labs, ".json", NULL);
    write_text(json, "{}", 0600);
    int removed = 0;
    for (size_t i = 0; i < 4; i++) {
        g_clear_error(&err);
        CHECK(!ml_warm_purge(bad[i], count_removed, &removed, &err));
        CHECK(err && strstr(err->message, "is not allowed"));
        ml_lab_state_remove(bad[i], count_removed, &removed);
        CHECK(ml_lab_state_read(bad[i]) == NULL && !ml_lab_state_exists(bad[i]));
    }
    CHECK(removed == 0);
    CHECK(g_file_test(save_a, G_FILE_TEST_EXISTS) && g_file_test(save_b, G_FILE_TEST_EXISTS));
    CHECK(g_file_test(json, G_FILE_TEST_EXISTS));
    g_clear_error(&err);
    CHECK(ml_warm_purge("lab-a", count_removed, &removed, &err));
    CHECK(removed == 1 && !g_file_test(save_a, G_FILE_TEST_EXISTS));
    CHECK(g_file_test(save_b, G_FILE_TEST_EXISTS));
}

int main(void)
{
    /* Not g_dir_make_tmp: GLib would remember $TMPDIR before it is set below. */
    const char *t = getenv("TMPDIR");
    tmp_root = g_strdup_printf("%s/meshlab-test-safety-XXXXXX", t && *t ? t : "/tmp");
    if (!g_mkdtemp(tmp_root))
        return 1;
    chmod(tmp_root, 0755);
    g_autofree char *state = path_in("state");
    g_autofree char *cache = path_in("cache");
    g_autofree char *tmpdir = path_in("tmp");
    g_mkdir_with_parents(tmpdir, 0700);
    g_setenv("MESHLAB_STATE_DIR", state, TRUE);
    g_setenv("MESHLAB_CACHE_DIR", cache, TRUE);
    g_setenv("TMPDIR", tmpdir, TRUE);

    test_write_file_no_follow();
    test_rundir_foreign();
    test_rundir_reuse_and_links();
    test_lock();
    test_names_unambiguous();
    test_leftovers();
    test_bad_names();
    test_rundir_parents();
    test_mkdir_mode();

    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", tmp_root);
    if (system(rm) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_root);
    g_free(tmp_root);
    return check_finish();
}
