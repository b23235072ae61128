/* Tailscale and Headscale from their Go modules (src/cache/gobuild.c): the module's pins are
 * meshlab's, `go version -m` is read as Go prints it (a recorded sample of a real build), Go
 * versions compare as numbers, a Go older than go.mod's line is refused with what to install,
 * and this machine's Go, where it has one, is found. The build itself runs in CI before the
 * end-to-end tests (scripts/test.sh), which measure the Tailscale paths with its binaries. */
#include "check.h"

#include <glib/gstdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cache/gobuild.h"
#include "cache/pins.h"
#include "core/util.h"
#include "results/json.h"

static void test_versions(void)
{
    CHECK(ml_go_version_at_least("1.26.8", "1.26.6"));
    CHECK(ml_go_version_at_least("go1.26.6", "1.26.6"));
    CHECK(ml_go_version_at_least("1.27rc1", "1.26.6"));
    CHECK(ml_go_version_at_least("1.26", "1.26"));
    CHECK(!ml_go_version_at_least("1.26.5", "1.26.6"));
    CHECK(!ml_go_version_at_least("1.19.8", "1.26"));
    CHECK(!ml_go_version_at_least("go1.9", "1.26"));
    CHECK(ml_go_version_at_least("1.100.0", "1.26.6"));
}

/* images/go requires exactly the versions meshlab pins, so a download and a build are one
 * version; go.sum is committed beside it. */
static void test_module_pins(void)
{
    g_autofree char *dir = ml_gobuild_module_dir();
    g_autofree char *mod = g_build_filename(dir, "go.mod", NULL);
    g_autofree char *sum = g_build_filename(dir, "go.sum", NULL);
    g_autofree char *text = NULL;
    CHECK(g_file_get_contents(mod, &text, NULL, NULL));
    CHECK(g_file_test(sum, G_FILE_TEST_IS_REGULAR));
    CHECK(text && strstr(text, "\ttailscale.com v" ML_TAILSCALE_VERSION "\n"));
    CHECK(text && strstr(text, "\tgithub.com/juanfont/headscale v" ML_HEADSCALE_VERSION "\n"));
    g_autoptr(GError) err = NULL;
    g_autofree char *wanted = ml_gobuild_wanted_go(dir, &err);
    CHECK(wanted && ml_go_version_at_least(wanted, "1.26") &&
          !ml_go_version_at_least(wanted, "1.27"));
    g_autofree char *built = ml_gobuild_dir("/var/cache/meshlab", "headscale");
    CHECK_STR(built, "/var/cache/meshlab/built/headscale-" ML_HEADSCALE_VERSION);
}

static void test_version_m(void)
{
    g_autofree char *text = NULL;
    CHECK(g_file_get_contents("tests/data/samples/go/version-m-headscale.txt", &text, NULL, NULL));
    struct json_object *doc = ml_gobuild_parse_version_m(text);
    CHECK(doc != NULL);
    CHECK_STR(ml_j_str(doc, "go"), "go1.26.8");
    CHECK_STR(ml_j_str(doc, "path"), "github.com/juanfont/headscale/cmd/headscale");
    struct json_object *mods = ml_j_array(doc, "modules");
    CHECK(ml_j_len(mods) == 11); /* the main module, 9 of its dependencies, tailscale.com */
    struct json_object *main_mod = json_object_array_get_idx(mods, 0);
    CHECK_STR(ml_j_str(main_mod, "path"), "github.com/juanfont/headscale");
    CHECK_STR(ml_j_str(main_mod, "version"), "v" ML_HEADSCALE_VERSION);
    CHECK(g_str_has_prefix(ml_j_str(main_mod, "sum"), "h1:"));
    struct json_object *last = json_object_array_get_idx(mods, ml_j_len(mods) - 1);
    CHECK_STR(ml_j_str(last, "path"), "tailscale.com");
    CHECK_STR(ml_j_str(last, "version"), "v" ML_TAILSCALE_VERSION);
    json_object_put(doc);
    CHECK(ml_gobuild_parse_version_m("") == NULL);
    CHECK(ml_gobuild_parse_version_m("not a binary\n") == NULL);
    CHECK(ml_gobuild_parse_version_m("/x: go1.26.8\n\tpath\tx\n") == NULL); /* no modules */
}

/* A Go older than go.mod's line (Debian 12's golang-go is 1.19) is refused, naming both versions
 * and what to install; a fake `go` first on PATH stands in for it. */
static void test_old_go(void)
{
    g_autofree char *dir = g_dir_make_tmp("test-gobuild-XXXXXX", NULL);
    g_autofree char *go = g_build_filename(dir, "go", NULL);
    CHECK(g_file_set_contents(go, "#!/bin/sh\necho go1.19.8\n", -1, NULL));
    chmod(go, 0755);
    g_autofree char *path = g_strdup(g_getenv("PATH"));
    g_setenv("PATH", dir, TRUE);
    g_autofree char *module = ml_gobuild_module_dir();
    struct ml_go found = {0};
    g_autoptr(GError) err = NULL;
    CHECK(!ml_go_find(module, &found, &err));
    CHECK(err && strstr(err->message, "is go1.19.8") && strstr(err->message, "go.dev/dl"));
    g_setenv("PATH", path, TRUE);
    g_unlink(go);
    g_rmdir(dir);
}

static void test_this_go(void)
{
    g_autofree char *module = ml_gobuild_module_dir();
    struct ml_go found = {0};
    g_autoptr(GError) err = NULL;
    if (!ml_go_find(module, &found, &err)) {
        CHECK(err && strstr(err->message, "go.dev/dl"));
        printf("note: %s\n", err->message);
        return;
    }
    g_autofree char *wanted = ml_gobuild_wanted_go(module, NULL);
    CHECK(found.path && ml_go_version_at_least(found.version, wanted));
    ml_go_clear(&found);
}

int main(void)
{
    test_versions();
    test_module_pins();
    test_version_m();
    test_old_go();
    test_this_go();
    return check_finish();
}
