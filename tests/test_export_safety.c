/* meshlab export treats a run directory as data (issue 36; the 2026-12-04 audit's findings 3, 9
 * and 11): it reads only the run directory's own regular files, never through a link, without
 * blocking on a FIFO and without quoting them; it places the export through descriptors, so a
 * stage swapped for another directory is never handed over; and a label from results.json with
 * a newline in it stays inside the comment lines it lands in, in every file any dataplane's
 * export writes (checked with sh -n and nft -c, which the export runs itself). */
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "core/rundir.h"
#include "core/spawn.h"
#include "core/util.h"
#include "dataplanes/bundle.h"
#include "dataplanes/dataplane.h"
#include "export/export.h"
#include "export/hubinit.h"
#include "export/place.h"
#include "results/json.h"
#include "topology/topology.h"

#define PAYLOAD "$(touch /tmp/meshlab-export-safety-ran)"
#define RAN "/tmp/meshlab-export-safety-ran"

static void rm_rf(const char *path)
{
    const char *argv[] = {"rm", "-rf", path, NULL};
    ml_spawn(argv, NULL, NULL);
}

static bool have(const char *tool)
{
    g_autofree char *p = g_find_program_in_path(tool);
    if (!p)
        printf("note: %s is not installed here; the checks that need it did not run\n", tool);
    return p != NULL;
}

static void write_text(const char *path, const char *text)
{
    CHECK(g_file_set_contents(path, text, -1, NULL));
}

/* ---- reading a run directory ---- */

static void test_read_at(void)
{
    g_autofree char *run = g_dir_make_tmp("test-export-read-XXXXXX", NULL);
    g_autofree char *outside = g_dir_make_tmp("test-export-outside-XXXXXX", NULL);
    g_autofree char *shadow = g_build_filename(outside, "shadow", NULL);
    write_text(shadow, "root:$y$j9T$SECRETHASH:19000:0:99999:7:::\n");
    g_autofree char *own = g_build_filename(run, "topology.yaml", NULL);
    write_text(own, "name: x\n");
    int fd = open(run, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(fd >= 0);
    gsize len = 0;
    g_autofree char *text = ml_export_read_at(fd, run, "topology.yaml", 1024, &len, NULL);
    CHECK(text && !strcmp(text, "name: x\n") && len == 8);

    /* A link as the file, and a link as a directory on the way, are refused, and the message
     * names the file, never what it points at or holds. */
    g_autofree char *link = g_build_filename(run, "results.json", NULL);
    CHECK(symlink(shadow, link) == 0);
    g_autofree char *rulesets = g_build_filename(run, "rulesets", NULL);
    CHECK(symlink(outside, rulesets) == 0);
    const char *refused[] = {"results.json", "rulesets/shadow", "../" /* a name with .. */,
                             "rulesets/../topology.yaml", "", "./topology.yaml"};
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        g_autoptr(GError) e = NULL;
        g_autofree char *got = ml_export_read_at(fd, run, refused[i], 1 << 20, NULL, &e);
        CHECK(got == NULL && e && e->code == ML_ERR_INPUT && !strstr(e->message, "SECRETHASH") &&
              !strstr(e->message, outside));
        if (i < 2)
            CHECK(e && strstr(e->message, "symbolic link"));
    }
    /* A FIFO is refused at once (no writer would ever come), and so is a file over the limit. */
    g_autofree char *fifo = g_build_filename(run, "fifo", NULL);
    CHECK(mkfifo(fifo, 0600) == 0);
    g_autoptr(GError) ef = NULL;
    double t0 = ml_now();
    CHECK(!ml_export_read_at(fd, run, "fifo", 1024, NULL, &ef) && ef &&
          strstr(ef->message, "not a regular file"));
    CHECK(ml_now() - t0 < 2.0);
    g_autoptr(GError) el = NULL;
    CHECK(!ml_export_read_at(fd, run, "topology.yaml", 4, NULL, &el) && el &&
          strstr(el->message, "larger than"));
    close(fd);
    rm_rf(run);
    rm_rf(outside);
}

/* ---- placing the export ---- */

/* Stands in for another user who can write the export's directory (the audit's swapper, as
 * nobody with inotify): the stage is moved aside and a directory of its own put in its name. */
static void swap_stage(const char *parent, const char *stage, const char *aside)
{
    g_autofree char *from = g_build_filename(parent, stage, NULL);
    g_autofree char *to = g_build_filename(parent, aside, NULL);
    CHECK(rename(from, to) == 0);
    CHECK(g_mkdir(from, 0755) == 0);
    g_autofree char *hub = g_build_filename(from, "hub", NULL);
    CHECK(g_mkdir(hub, 0755) == 0);
    g_autofree char *ud = g_build_filename(hub, "user-data", NULL);
    write_text(ud, "#cloud-config\nruncmd: [sh, -c, 'echo attacker > /root/owned']\n");
}

static void test_swapped_stage(void)
{
    g_autofree char *parent = g_dir_make_tmp("test-export-swap-XXXXXX", NULL);
    g_autofree char *to = g_build_filename(parent, "out", NULL);
    struct ml_export_place p;
    CHECK(ml_export_place_open(to, "partial", &p, NULL));
    CHECK(ml_rundir_write_private(p.fd, "wireguard/hub/wg0.conf", "PrivateKey = k\n", -1, NULL));
    swap_stage(parent, p.stage, "moved-aside");
    g_autoptr(GError) e = NULL;
    CHECK(!ml_export_place_commit(&p, &e));
    CHECK(e && strstr(e->message, "no longer the directory this export made"));
    CHECK(!g_file_test(to, G_FILE_TEST_EXISTS)); /* nothing handed over */
    ml_export_place_close(&p);
    /* The keys went with the stage it made, wherever it was moved; the other directory stays. */
    g_autofree char *aside = g_build_filename(parent, "moved-aside", NULL);
    g_autofree char *key = g_build_filename(aside, "wireguard", NULL);
    CHECK(g_file_test(aside, G_FILE_TEST_IS_DIR) && !g_file_test(key, G_FILE_TEST_EXISTS));
    rm_rf(parent);
}

/* Another user cannot do what swap_stage did: the directory is root's and 0755, and the kernel
 * refuses nobody's rename in it. */
static void test_other_user_cannot_swap(void)
{
    if (geteuid() != 0) {
        printf("note: not root: another user's rename was not tried\n");
        return;
    }
    g_autofree char *parent = g_dir_make_tmp("test-export-nobody-XXXXXX", NULL);
    CHECK(chmod(parent, 0755) == 0);
    g_autofree char *to = g_build_filename(parent, "out", NULL);
    struct ml_export_place p;
    CHECK(ml_export_place_open(to, "partial", &p, NULL));
    g_autofree char *stage = g_build_filename(parent, p.stage, NULL);
    g_autofree char *aside = g_build_filename(parent, "aside", NULL);
    pid_t child = fork();
    if (child == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(3);
        bool moved = rename(stage, aside) == 0;
        bool made = mkdir(to, 0755) == 0;
        _exit(moved || made ? 1 : errno == EACCES ? 0 : 2);
    }
    int status = -1;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(ml_export_place_commit(&p, NULL));
    ml_export_place_close(&p);
    struct stat st;
    CHECK(stat(to, &st) == 0 && st.st_uid == 0 && (st.st_mode & 07777) == 0700);
    rm_rf(parent);
}

/* ---- labels in comments ---- */

static void test_comment_text(void)
{
    g_autofree char *a =
        ml_comment_text("lab three-guest\n" PAYLOAD "\r\tx\\y\xe2\x80\xa8z\xc2\x85");
    CHECK_STR(a, "lab three-guest\\x0a" PAYLOAD "\\x0d\\x09x\\\\y\\u2028z\\u0085");
    g_autofree char *b = ml_comment_text("plain, run 20261130-071500-a1b2c3 \xc3\xa9");
    CHECK_STR(b, "plain, run 20261130-071500-a1b2c3 \xc3\xa9");
    g_autofree char *c = ml_comment_text("bad \xff byte");
    CHECK_STR(c, "bad \\xff byte");
}

/* No line of text begins with the payload, even past its indentation: the label's newline did
 * not end the comment it is in. */
static bool payload_in_a_comment(const char *what, const char *text)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        const char *s = *l + strspn(*l, " \t\r");
        if (g_str_has_prefix(s, "$(touch") || g_str_has_prefix(s, ", run")) {
            fprintf(stderr, "%s: a line begins with the label's payload: %s\n", what, *l);
            return false;
        }
    }
    return true;
}

static bool is_shell(const char *text)
{
    return g_str_has_prefix(text, "#!/bin/sh\n") || g_str_has_prefix(text, "#!/bin/bash\n");
}

/* Every dataplane's export hook, called with a label holding a newline and a command
 * substitution: the files, the hub's files, the hub's user-data and the firewall keep it in their
 * comments, and the scripts still pass sh -n, the firewall nft -c. */
static void test_renderers_escape(const struct ml_topology *topo)
{
    g_autofree char *ruleset = NULL;
    CHECK(g_file_get_contents("tests/data/ruleset-hub.nft", &ruleset, NULL, NULL));
    const char *label = "meshlab export of lab three-guest\n" PAYLOAD "\n, run x";
    g_autofree char *fw = ml_export_firewall(ruleset, "eth0", label, NULL);
    CHECK(fw && payload_in_a_comment("hub/firewall.nft", fw));
    if (geteuid() == 0 && have("nft"))
        CHECK(ml_export_nft_check(fw, NULL));
    for (size_t k = 0; ml_dataplanes[k]; k++) {
        const struct ml_dataplane *dp = ml_dataplanes[k];
        if (!ml_dp_exports(dp))
            continue;
        g_autoptr(MlBundle) b = ml_bundle_new(topo, "vpn.example.net", "eth0", label);
        for (size_t n = 0; n < topo->n_nodes; n++)
            if (n != topo->hub)
                b->client_address[n] = n == 1 ? "198.51.100.11" : "198.51.100.12";
        g_autoptr(GError) e = NULL;
        if (!ml_dp_export(dp, b, &e)) {
            printf("note: %s not exported here (%s); its files were not checked\n", dp->name,
                   e->message);
            continue;
        }
        for (guint i = 0; i < b->files->len; i++) {
            const struct ml_bundle_file *f = g_ptr_array_index(b->files, i);
            CHECK(payload_in_a_comment(f->rel, f->content));
            if (is_shell(f->content) && !fixture_sh_syntax_ok(f->content)) {
                CHECK(false);
                fprintf(stderr, "%s: sh -n refused %s\n", dp->name, f->rel);
            }
        }
        for (guint i = 0; i < b->hub_files->len; i++) {
            const struct ml_bundle_hub_file *h = g_ptr_array_index(b->hub_files, i);
            CHECK(payload_in_a_comment(h->path, h->content));
        }
        g_autofree char *ud = ml_hubinit_render(b, fw);
        CHECK(payload_in_a_comment("hub/user-data", ud));
        g_autoptr(GError) ue = NULL;
        CHECK(ml_hubinit_check(b, fw, ud, &ue));
    }
    CHECK(!g_file_test(RAN, G_FILE_TEST_EXISTS));
}

/* The whole export of a run whose results.json says its lab is "three-guest\n$(touch ...)":
 * before, `nft -c` refused the hub's firewall (the newline ended its first comment); now every
 * file is written and none has a line that begins with the payload. */
static void test_export_label(const struct ml_topology *topo)
{
    if (geteuid() != 0 || !have("nft")) {
        printf("note: not root or no nft: the whole export was not tried\n");
        return;
    }
    struct json_object *r = fixture_json("results-v2-matrix.json");
    json_object_object_add(r, "lab", json_object_new_string("three-guest\n" PAYLOAD));
    json_object_object_add(r, "run_id", json_object_new_string("20261130\r\n" PAYLOAD));
    g_autofree char *run = fixture_export_run(r, topo);
    g_autofree char *to = g_build_filename(run, "export", NULL);
    struct ml_export_opts o = {
        .run_dir = run, .hub_address = "vpn.example.net", .hub_interface = "eth0", .to = to};
    struct json_object *m = NULL;
    g_autoptr(GError) e = NULL;
    CHECK(ml_export_write(&o, r, topo, &m, &e));
    if (e)
        fprintf(stderr, "export: %s\n", e->message);
    struct json_object *files = ml_j_array(m, "files");
    CHECK(ml_j_len(files) > 5);
    for (size_t i = 0; i < ml_j_len(files); i++) {
        const char *rel = ml_j_str(json_object_array_get_idx(files, i), "path");
        if (g_str_has_suffix(rel, ".png"))
            continue;
        g_autofree char *p = g_build_filename(to, rel, NULL);
        g_autofree char *text = NULL;
        CHECK(g_file_get_contents(p, &text, NULL, NULL));
        CHECK(text && payload_in_a_comment(rel, text));
        if (text && is_shell(text))
            CHECK(fixture_sh_syntax_ok(text));
    }
    g_autofree char *fw_path = g_build_filename(to, "hub", "firewall.nft", NULL);
    g_autofree char *fw = NULL;
    CHECK(g_file_get_contents(fw_path, &fw, NULL, NULL) && ml_export_nft_check(fw, NULL));
    CHECK(fw && strstr(fw, "three-guest\\x0a" PAYLOAD));
    CHECK(!g_file_test(RAN, G_FILE_TEST_EXISTS));
    json_object_put(m);
    json_object_put(r);
    rm_rf(run);
}

int main(void)
{
    ml_log_init();
    ml_log_set_quiet(true);
    g_unlink(RAN);
    g_autoptr(GError) e = NULL;
    g_autoptr(MlTopology) topo = ml_topology_load("topologies/three-guest.yaml", &e);
    if (!topo) {
        fprintf(stderr, "%s\n", e->message);
        return 1;
    }
    test_read_at();
    test_swapped_stage();
    test_other_user_cannot_swap();
    test_comment_text();
    test_renderers_escape(topo);
    test_export_label(topo);
    return check_finish();
}
