/* The pinned Tailscale/Headscale artifacts against a local HTTP server standing in for the
 * publishers ($MESHLAB_ARTIFACT_MIRROR): a good fetch verified by the checksum files, the
 * tailscale archive extracted, a mismatch refused, a changed file refused by known-hashes, a
 * cache filled by hand verified offline, the list of missing files, and a mirror answering with
 * a captive portal's HTML page, which is never recorded as a checksum file. */
#include "cache/artifacts.h"
#include "check.h"
#include "http_fixture.h"
#include "core/spawn.h"
#include "core/util.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TS_FILE "tailscale_" ML_TAILSCALE_VERSION "_amd64.tgz"
#define TS_TOP "tailscale_" ML_TAILSCALE_VERSION "_amd64"
#define HS_FILE "headscale_" ML_HEADSCALE_VERSION "_linux_amd64"

static char *tmp;
static char *www;
static int port;

static bool exists(const char *path)
{
    return g_file_test(path, G_FILE_TEST_EXISTS);
}

static void put(const char *dir, const char *name, const char *text)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_file_set_contents(path, text, -1, NULL);
}

static char *hash_of(const char *dir, const char *name)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autofree char *text = NULL;
    gsize len = 0;
    g_file_get_contents(path, &text, &len, NULL);
    return ml_sha256_hex(text ? text : "", len);
}

/* A stand-in for the published archive: the same layout, two small shell scripts. */
static bool make_tailscale_tgz(const char *label)
{
    g_autofree char *src = g_build_filename(tmp, "src", TS_TOP, NULL);
    g_mkdir_with_parents(src, 0755);
    g_autofree char *ts = g_strdup_printf("#!/bin/sh\necho tailscale %s\n", label);
    g_autofree char *tsd = g_strdup_printf("#!/bin/sh\necho tailscaled %s\n", label);
    put(src, "tailscale", ts);
    put(src, "tailscaled", tsd);
    g_autofree char *parent = g_build_filename(tmp, "src", NULL);
    g_autofree char *out = g_build_filename(www, TS_FILE, NULL);
    const char *argv[] = {"tar", "-czf", out, "-C", parent, TS_TOP, NULL};
    return ml_spawn(argv, NULL, NULL);
}

/* Publishes both artifacts with checksum files in each publisher's format. */
static void publish(const char *label)
{
    make_tailscale_tgz(label);
    g_autofree char *ts_hash = hash_of(www, TS_FILE);
    g_autofree char *ts_sums = g_strdup_printf("%s\n", ts_hash);
    put(www, TS_FILE ".sha256", ts_sums);

    g_autofree char *hs = g_strdup_printf("#!/bin/sh\necho headscale %s\n", label);
    put(www, HS_FILE, hs);
    g_autofree char *hs_hash = hash_of(www, HS_FILE);
    g_autofree char *hs_sums = g_strdup_printf(
        "%s  %s.deb\n%s  %s\n", "1111111111111111111111111111111111111111111111111111111111111111",
        HS_FILE, hs_hash, HS_FILE);
    put(www, "checksums.txt", hs_sums);
}

static GPid start_server(void)
{
    return http_server_start(www, NULL, &port);
}

static char *cache(const char *name)
{
    return g_build_filename(tmp, name, NULL);
}

static void test_missing_listing(void)
{
    g_autofree char *c = cache("empty-cache");
    g_autofree char *abs = g_canonicalize_filename(c, NULL);
    g_autoptr(GString) missing = g_string_new(NULL);
    CHECK(ml_artifacts_missing(c, missing));
    g_autofree char *want = g_strdup_printf(
        "%s/downloads/" TS_FILE "\n%s/downloads/" TS_FILE ".sha256\n"
        "%s/downloads/" HS_FILE "\n%s/downloads/headscale_" ML_HEADSCALE_VERSION "_checksums.txt\n",
        abs, abs, abs, abs);
    CHECK_STR(missing->str, want);
    CHECK(ml_artifact_path(c, "tailscale") == NULL);
    CHECK(ml_artifact_path(c, "headscale") == NULL);
    CHECK(ml_artifact_path(c, "nebula") == NULL);
    CHECK(!ml_artifact_known("nebula") && ml_artifact_known("headscale"));
    g_autoptr(GError) err = NULL;
    CHECK(!ml_artifact_fetch(c, "nebula", &err));
    CHECK(err && err->code == ML_ERR_INPUT);
}

static void test_good_fetch(const char *c)
{
    g_autoptr(GError) err = NULL;
    CHECK(ml_artifact_fetch(c, "tailscale", &err));
    if (err)
        fprintf(stderr, "%s\n", err->message);
    g_autoptr(GError) err2 = NULL;
    CHECK(ml_artifact_fetch(c, "headscale", &err2));
    if (err2)
        fprintf(stderr, "%s\n", err2->message);

    g_autofree char *abs = g_canonicalize_filename(c, NULL);
    g_autofree char *ts = ml_artifact_path(c, "tailscale");
    g_autofree char *ts_want = g_strdup_printf("%s/tailscale-" ML_TAILSCALE_VERSION, abs);
    CHECK_STR(ts, ts_want);
    g_autofree char *tsd = g_build_filename(ts_want, "tailscaled", NULL);
    g_autofree char *out = NULL;
    const char *argv[] = {tsd, NULL};
    CHECK(ml_spawn(argv, &out, NULL));
    CHECK_STR(out, "tailscaled v1\n");
    struct stat st;
    CHECK(stat(tsd, &st) == 0 && (st.st_mode & 0777) == 0755);

    g_autofree char *hs = ml_artifact_path(c, "headscale");
    g_autofree char *hs_want = g_strdup_printf("%s/downloads/" HS_FILE, abs);
    CHECK_STR(hs, hs_want);
    CHECK(!ml_artifacts_missing(c, NULL));

    /* Both the files and their checksum files are recorded. */
    g_autofree char *known_path = g_build_filename(abs, "downloads", "known-hashes", NULL);
    g_autofree char *known = NULL;
    g_file_get_contents(known_path, &known, NULL, NULL);
    g_autofree char *ts_hash = hash_of(www, TS_FILE);
    g_autofree char *hs_hash = hash_of(www, HS_FILE);
    CHECK(known && strstr(known, ts_hash) && strstr(known, hs_hash));
    CHECK(known && strstr(known, "/checksums.txt\n") && strstr(known, ".tgz.sha256\n"));

    /* A second fetch verifies what is there and downloads nothing new. */
    g_autoptr(GError) again = NULL;
    CHECK(ml_artifact_fetch(c, "headscale", &again));
}

/* The checksum file disagrees with the file: nothing is kept. */
static void test_mismatch(void)
{
    g_autofree char *c = cache("mismatch-cache");
    g_autofree char *good = hash_of(www, HS_FILE);
    g_autofree char *sums = g_build_filename(www, "checksums.txt", NULL);
    g_autofree char *saved = NULL;
    g_file_get_contents(sums, &saved, NULL, NULL);
    put(www, "checksums.txt",
        "2222222222222222222222222222222222222222222222222222222222222222  " HS_FILE "\n");

    g_autoptr(GError) err = NULL;
    CHECK(!ml_artifact_fetch(c, "headscale", &err));
    CHECK(err && err->code == ML_ERR_FETCH);
    CHECK(err && strstr(err->message, "2222222222222222") && strstr(err->message, good));
    g_autofree char *file = g_build_filename(c, "downloads", HS_FILE, NULL);
    CHECK(!exists(file));
    CHECK(ml_artifact_path(c, "headscale") == NULL);

    /* A checksum file without the entry is refused before any download. */
    put(www, "checksums.txt",
        "3333333333333333333333333333333333333333333333333333333333333333"
        "  headscale_other\n");
    g_autofree char *c2 = cache("noentry-cache");
    g_autoptr(GError) err2 = NULL;
    CHECK(!ml_artifact_fetch(c2, "headscale", &err2));
    CHECK(err2 && strstr(err2->message, "no SHA-256 for '" HS_FILE "'"));
    put(www, "checksums.txt", saved);
}

/* The publisher (or a mirror) now serves other bytes under the same name, with a matching
 * checksum file: the recorded hashes refuse it. */
static void test_changed_upstream(const char *c)
{
    g_autofree char *abs = g_canonicalize_filename(c, NULL);
    g_autofree char *file = g_build_filename(abs, "downloads", HS_FILE, NULL);
    g_autofree char *sums = g_build_filename(
        abs, "downloads", "headscale_" ML_HEADSCALE_VERSION "_checksums.txt", NULL);
    publish("v2");
    unlink(file);
    unlink(sums);
    g_autoptr(GError) err = NULL;
    CHECK(!ml_artifact_fetch(c, "headscale", &err));
    CHECK(err && err->code == ML_ERR_FETCH && strstr(err->message, "known-hashes"));
    CHECK(!exists(file));
    CHECK(ml_artifact_path(c, "headscale") == NULL);
    CHECK(ml_artifacts_missing(c, NULL));
}

/* A mirror behind a captive portal answers every URL with an HTML page and status 200: the
 * checksum file is refused as HTML before known-hashes records it, so the next run, once past
 * the portal, fetches the real one instead of refusing it as "changed". */
static void test_portal_mirror(void)
{
    g_autofree char *c = cache("portal-cache");
    g_autofree char *abs = g_canonicalize_filename(c, NULL);
    g_autofree char *known = g_build_filename(abs, "downloads", "known-hashes", NULL);
    g_autofree char *sums = g_build_filename(
        abs, "downloads", "headscale_" ML_HEADSCALE_VERSION "_checksums.txt", NULL);
    g_autofree char *portal = g_strdup_printf("http://127.0.0.1:%d/portal", port);
    g_setenv("MESHLAB_ARTIFACT_MIRROR", portal, TRUE);
    const char *names[] = {"headscale", "tailscale"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autoptr(GError) err = NULL;
        CHECK(!ml_artifact_fetch(c, names[i], &err));
        CHECK(err && err->code == ML_ERR_FETCH &&
              strstr(err->message, "the mirror returned HTML") && strstr(err->message, portal) &&
              strstr(err->message, "nothing was recorded"));
        if (err)
            fprintf(stderr, "%s behind a portal: %s\n", names[i], err->message);
    }
    CHECK(!exists(known) && !exists(sums));
    CHECK(ml_artifact_path(c, "headscale") == NULL);

    /* Past the portal, the real mirror serves and verifies. */
    g_autofree char *mirror = g_strdup_printf("http://127.0.0.1:%d/", port);
    g_setenv("MESHLAB_ARTIFACT_MIRROR", mirror, TRUE);
    g_autoptr(GError) err = NULL;
    CHECK(ml_artifact_fetch(c, "headscale", &err));
    if (err)
        fprintf(stderr, "after the portal: %s\n", err->message);
}

/* Air-gapped: the four files copied into CACHE/downloads, no server at all. */
static void test_filled_by_hand(void)
{
    g_autofree char *c = cache("by-hand");
    g_autofree char *dl = g_build_filename(c, "downloads", NULL);
    g_mkdir_with_parents(dl, 0755);
    const char *names[] = {TS_FILE, TS_FILE ".sha256", HS_FILE};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *from = g_build_filename(www, names[i], NULL);
        g_autofree char *text = NULL;
        gsize len = 0;
        g_file_get_contents(from, &text, &len, NULL);
        g_autofree char *to = g_build_filename(dl, names[i], NULL);
        g_file_set_contents(to, text, (gssize)len, NULL);
    }
    g_autoptr(GString) missing = g_string_new(NULL);
    CHECK(ml_artifacts_missing(c, missing));
    CHECK(strstr(missing->str, TS_FILE " (present, not verified yet: run 'meshlab fetch "
                                       "tailscale')"));
    CHECK(strstr(missing->str, "_checksums.txt\n"));

    g_autofree char *sums_from = g_build_filename(www, "checksums.txt", NULL);
    g_autofree char *sums_text = NULL;
    g_file_get_contents(sums_from, &sums_text, NULL, NULL);
    put(dl, "headscale_" ML_HEADSCALE_VERSION "_checksums.txt", sums_text);

    /* Nothing listens there: any attempt to download would fail. */
    g_setenv("MESHLAB_ARTIFACT_MIRROR", "http://127.0.0.1:9/none", TRUE);
    g_autoptr(GError) err = NULL;
    CHECK(ml_artifact_fetch(c, "tailscale", &err));
    CHECK(ml_artifact_fetch(c, "headscale", &err));
    if (err)
        fprintf(stderr, "%s\n", err->message);
    CHECK(!ml_artifacts_missing(c, NULL));
    g_autofree char *ts = ml_artifact_path(c, "tailscale");
    CHECK(ts != NULL);
}

int main(void)
{
    ml_log_init();
    ml_log_set_quiet(true);
    g_autofree char *python = g_find_program_in_path("python3");
    g_autofree char *tar = g_find_program_in_path("tar");
    if (!python || !tar) {
        printf("python3 or tar is missing; skipping\n");
        return 77;
    }
    tmp = g_dir_make_tmp("meshlab-artifacts-XXXXXX", NULL);
    www = g_build_filename(tmp, "www", NULL);
    g_mkdir_with_parents(www, 0755);
    publish("v1");

    test_missing_listing();
    GPid pid = start_server();
    CHECK(pid != 0);
    if (pid) {
        g_autofree char *mirror = g_strdup_printf("http://127.0.0.1:%d/", port);
        g_setenv("MESHLAB_ARTIFACT_MIRROR", mirror, TRUE);
        g_autofree char *c = cache("cache");
        test_good_fetch(c);
        test_mismatch();
        test_portal_mirror();
        test_filled_by_hand();
        g_setenv("MESHLAB_ARTIFACT_MIRROR", mirror, TRUE);
        test_changed_upstream(c);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        g_spawn_close_pid(pid);
    }
    g_unsetenv("MESHLAB_ARTIFACT_MIRROR");
    rm_rf(tmp);
    g_free(tmp);
    g_free(www);
    return check_finish();
}
