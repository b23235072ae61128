/* Downloads against a real HTTP server on 127.0.0.1 (tests/http_server.py): pinned hashes,
 * SHA256SUMS, mismatches, errors, resume after a cut transfer, and known-hashes; the bounds
 * (a size cap, a deadline, redirects that never leave https, checksum lists that are no HTML
 * page), the https ones against a second instance serving TLS with a throwaway certificate. */
#include "check.h"
#include "http_fixture.h"
#include "cache/checksum.h"
#include "cache/fetch.h"
#include "cache/image_ubuntu.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIG_SIZE (3 * 1024 * 1024 + 12345)
#define CUT_AT 1048583

static char *tmp;
static char *www;
static char *log_path;
static int port;

static char *www_file(const char *name)
{
    return g_build_filename(www, name, NULL);
}

static char *out_file(const char *name)
{
    return g_build_filename(tmp, "out", name, NULL);
}

static int tls_port;

static char *url(const char *path)
{
    return g_strdup_printf("http://127.0.0.1:%d/%s", port, path);
}

static char *tls_url(const char *path)
{
    return g_strdup_printf("https://127.0.0.1:%d/%s", tls_port, path);
}

static bool exists(const char *path)
{
    return g_file_test(path, G_FILE_TEST_EXISTS);
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* Deterministic, incompressible-looking content so a wrong offset shows in the hash. */
static char *make_file(const char *name, size_t size, guint32 seed)
{
    g_autofree guint32 *buf = g_new(guint32, size / 4 + 1);
    GRand *r = g_rand_new_with_seed(seed);
    for (size_t i = 0; i < size / 4 + 1; i++)
        buf[i] = g_rand_int(r);
    g_rand_free(r);
    g_autofree char *path = www_file(name);
    g_file_set_contents(path, (const char *)buf, (gssize)size, NULL);
    return ml_sha256_hex(buf, size);
}

static bool server_saw(const char *needle)
{
    g_autofree char *text = NULL;
    return g_file_get_contents(log_path, &text, NULL, NULL) && strstr(text, needle);
}

static GPid start_server(void)
{
    return http_server_start(www, log_path, &port);
}

static void test_pinned(const char *big_hash)
{
    g_autofree char *u = url("big.bin");
    g_autofree char *dest = out_file("pinned.bin");
    struct ml_fetch_request req = {.url = u, .dest = dest, .expected_sha256 = big_hash};
    g_autoptr(GError) err = NULL;
    CHECK(ml_fetch(&req, &err));
    CHECK(err == NULL);
    CHECK(file_size(dest) == BIG_SIZE);
    g_autofree char *got = ml_fetch_sha256_file(dest, NULL);
    CHECK_STR(got, big_hash);
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    CHECK(!exists(part));
    struct stat st;
    CHECK(stat(dest, &st) == 0 && (st.st_mode & 0777) == 0644);

    /* Present and right: verified again, not downloaded again. */
    g_autofree char *before = NULL;
    g_file_get_contents(log_path, &before, NULL, NULL);
    CHECK(ml_fetch(&req, NULL));
    g_autofree char *after = NULL;
    g_file_get_contents(log_path, &after, NULL, NULL);
    CHECK_STR(after, before);
}

static void test_sums(void)
{
    g_autofree char *u = url("big.bin");
    g_autofree char *sums = url("SHA256SUMS");
    g_autofree char *dest = out_file("sums.bin");
    struct ml_fetch_request req = {
        .url = u, .dest = dest, .sums_url = sums, .sums_name = "big.bin"};
    g_autoptr(GError) err = NULL;
    CHECK(ml_fetch(&req, &err));
    CHECK(exists(dest));

    /* The two-space form, and a name the list lacks. */
    g_autofree char *dest2 = out_file("sums-small.bin");
    g_autofree char *u2 = url("small.bin");
    struct ml_fetch_request req2 = {
        .url = u2, .dest = dest2, .sums_url = sums, .sums_name = "small.bin"};
    CHECK(ml_fetch(&req2, NULL));
    g_autofree char *dest3 = out_file("sums-none.bin");
    struct ml_fetch_request req3 = {
        .url = u2, .dest = dest3, .sums_url = sums, .sums_name = "absent.bin"};
    g_autoptr(GError) err3 = NULL;
    CHECK(!ml_fetch(&req3, &err3));
    CHECK(err3 && strstr(err3->message, "no entry for 'absent.bin'"));
    CHECK(!exists(dest3));
}

static void test_mismatch(const char *big_hash)
{
    g_autofree char *u = url("big.bin");
    g_autofree char *dest = out_file("mismatch.bin");
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    const char *wrong = "0000000000000000000000000000000000000000000000000000000000000000";
    struct ml_fetch_request req = {.url = u, .dest = dest, .expected_sha256 = wrong};
    g_autoptr(GError) err = NULL;
    CHECK(!ml_fetch(&req, &err));
    CHECK(err && err->code == ML_ERR_FETCH);
    CHECK(err && strstr(err->message, wrong) && strstr(err->message, big_hash));
    CHECK(err && strstr(err->message, u));
    CHECK(!exists(dest));
    CHECK(!exists(part));

    /* A wrong file already in place (copied by hand) is caught and removed too. */
    g_autofree char *src = www_file("small.bin");
    g_autofree char *data = NULL;
    gsize len = 0;
    g_file_get_contents(src, &data, &len, NULL);
    g_file_set_contents(dest, data, (gssize)len, NULL);
    struct ml_fetch_request req2 = {.url = u, .dest = dest, .expected_sha256 = big_hash};
    g_autoptr(GError) err2 = NULL;
    CHECK(!ml_fetch(&req2, &err2));
    CHECK(!exists(dest));

    /* A captive portal's page answered with 200 says so, for a pinned file and for a
     * checksum list alike. */
    g_autofree char *portal = www_file("portal.html");
    g_file_set_contents(portal,
                        "<!DOCTYPE html>\n<html><head><title>Hotel WiFi</title></head>"
                        "<body>Log in</body></html>\n",
                        -1, NULL);
    g_autofree char *pu = url("portal.html");
    struct ml_fetch_request req3 = {.url = pu, .dest = dest, .expected_sha256 = big_hash};
    g_autoptr(GError) err3 = NULL;
    CHECK(!ml_fetch(&req3, &err3));
    CHECK(err3 && strstr(err3->message, "HTML page") && strstr(err3->message, "captive portal"));
    CHECK(!exists(dest));
    struct ml_fetch_request req4 = {.url = u, .dest = dest, .sums_url = pu, .sums_name = "big.bin"};
    g_autoptr(GError) err4 = NULL;
    CHECK(!ml_fetch(&req4, &err4));
    CHECK(err4 && strstr(err4->message, "is an HTML page") && strstr(err4->message, pu));
    CHECK(!exists(dest));
}

static void test_404(void)
{
    g_autofree char *u = url("missing.bin");
    g_autofree char *dest = out_file("missing.bin");
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    struct ml_fetch_request req = {.url = u, .dest = dest};
    g_autoptr(GError) err = NULL;
    CHECK(!ml_fetch(&req, &err));
    CHECK(err && err->code == ML_ERR_FETCH);
    CHECK(err && strstr(err->message, "404"));
    CHECK(err && strstr(err->message, u));
    CHECK(!exists(dest));
    CHECK(!exists(part));
}

static void test_resume(const char *big_hash)
{
    g_autofree char *u = url("cut/" G_STRINGIFY(CUT_AT) "/big.bin");
    g_autofree char *dest = out_file("resume.bin");
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    struct ml_fetch_request req = {.url = u, .dest = dest, .expected_sha256 = big_hash};
    g_autoptr(GError) err = NULL;
    CHECK(!ml_fetch(&req, &err));
    CHECK(err && err->code == ML_ERR_FETCH);
    CHECK(err && strstr(err->message, "resume"));
    CHECK(!exists(dest));
    CHECK(file_size(part) == CUT_AT);

    g_autoptr(GError) err2 = NULL;
    CHECK(ml_fetch(&req, &err2));
    if (err2)
        fprintf(stderr, "resume: %s\n", err2->message);
    CHECK(server_saw("GET /cut/" G_STRINGIFY(CUT_AT) "/big.bin bytes=" G_STRINGIFY(CUT_AT) "-"));
    g_autofree char *got = ml_fetch_sha256_file(dest, NULL);
    CHECK_STR(got, big_hash);
    CHECK(!exists(part));
}

static void test_range_ignored(const char *big_hash)
{
    /* A stale .part with garbage: a server that ignores Range must not leave it in front. */
    g_autofree char *u = url("norange/big.bin");
    g_autofree char *dest = out_file("norange.bin");
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    g_file_set_contents(part, "garbage that must not survive", -1, NULL);
    struct ml_fetch_request req = {.url = u, .dest = dest, .expected_sha256 = big_hash};
    g_autoptr(GError) err = NULL;
    CHECK(ml_fetch(&req, &err));
    if (err)
        fprintf(stderr, "range ignored: %s\n", err->message);
    CHECK(server_saw("GET /norange/big.bin bytes=29-"));
    g_autofree char *got = ml_fetch_sha256_file(dest, NULL);
    CHECK_STR(got, big_hash);

    /* A .part as long as the file: the server answers 416 and the download starts over. */
    g_autofree char *u2 = url("small.bin");
    g_autofree char *dest2 = out_file("full-part.bin");
    g_autofree char *part2 = g_strconcat(dest2, ".part", NULL);
    g_autofree char *src = www_file("small.bin");
    g_autofree char *data = NULL;
    gsize len = 0;
    g_file_get_contents(src, &data, &len, NULL);
    g_file_set_contents(part2, data, (gssize)len, NULL);
    struct ml_fetch_request req2 = {.url = u2, .dest = dest2};
    CHECK(ml_fetch(&req2, NULL));
    CHECK(file_size(dest2) == (off_t)len);
}

static void test_known_hashes(void)
{
    g_autofree char *known = g_build_filename(tmp, "out", "known-hashes", NULL);
    g_autofree char *u = url("changing.bin");
    g_autofree char *dest = out_file("changing.bin");
    g_autofree char *first = make_file("changing.bin", 200 * 1024, 7);
    struct ml_fetch_request req = {.url = u, .dest = dest, .known_hashes = known};
    g_autoptr(GError) err = NULL;
    CHECK(ml_fetch(&req, &err));
    g_autofree char *text = NULL;
    g_autofree char *line = g_strdup_printf("%s  %s\n", first, u);
    CHECK(g_file_get_contents(known, &text, NULL, NULL) && strstr(text, line));

    /* Same URL, new bytes: refused, and nothing left behind. */
    unlink(dest);
    g_autofree char *second = make_file("changing.bin", 200 * 1024, 8);
    g_autoptr(GError) err2 = NULL;
    CHECK(!ml_fetch(&req, &err2));
    CHECK(err2 && strstr(err2->message, first) && strstr(err2->message, second));
    CHECK(err2 && strstr(err2->message, "has changed"));
    CHECK(!exists(dest));
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    CHECK(!exists(part));
    g_autofree char *text2 = NULL;
    CHECK(g_file_get_contents(known, &text2, NULL, NULL) && strcmp(text, text2) == 0);
}

static void test_image_offline(void)
{
    g_autofree char *cache = g_build_filename(tmp, "cache", NULL);
    g_autofree char *qcow2 = NULL;
    g_autoptr(GError) err = NULL;
    CHECK(!ml_image_ubuntu_prepare(cache, false, true, &qcow2, &err));
    CHECK(qcow2 == NULL);
    CHECK(err && err->code == ML_ERR_IMAGE);
    CHECK(err && strstr(err->message, "meshlab fetch ubuntu-24.04"));
    CHECK(err && strstr(err->message, "ubuntu-24.04-server-cloudimg-amd64.img"));
    CHECK(err && strstr(err->message, "qemu-guest-agent_"));
    if (err)
        fprintf(stderr, "offline: %s\n", err->message);
}

/* The scheme rule itself: https stays https, http may go up to https, nothing else moves. */
static void test_redirect_rule(void)
{
    CHECK_STR(ml_fetch_redirect_protocols("https://cloud-images.ubuntu.com/x"), "https");
    CHECK_STR(ml_fetch_redirect_protocols("HTTPS://pkgs.tailscale.com/x"), "https");
    CHECK_STR(ml_fetch_redirect_protocols("http://archive.ubuntu.com/ubuntu"), "http,https");
    CHECK(ml_fetch_redirect_protocols("file:///var/cache/SHA256SUMS") == NULL);
    CHECK(ml_fetch_redirect_protocols("ftp://example.invalid/x") == NULL);
    CHECK(ml_fetch_redirect_protocols(NULL) == NULL);
}

/* What reads as a checksum list: each publisher's form passes, prose, HTML and binary do not. */
static void test_sums_list_rule(void)
{
    const char *h = "0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789abcdef";
    g_autofree char *bare = g_strdup_printf("%s\n", h);
    g_autofree char *bare_no_nl = g_strdup(h);
    g_autofree char *ubuntu = g_strdup_printf("%s *a.img\r\n%s *b.img\r\n", h, h);
    g_autofree char *github = g_strdup_printf("\n%s  headscale_0.1_linux_amd64\n\n", h);
    const char *good[] = {bare, bare_no_nl, ubuntu, github};
    for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
        int line = -1;
        CHECK(ml_sha256_list_valid(good[i], strlen(good[i]), &line) && line == 0);
    }
    g_autofree char *trailing = g_strdup_printf("%s  a\nsigned by: someone\n", h);
    g_autofree char *short_hash = g_strdup_printf("%.63s  a\n", h);
    g_autofree char *no_name = g_strdup_printf("%s *\n", h);
    g_autofree char *glued = g_strdup_printf("%sx  a\n", h);
    const struct {
        const char *text;
        int line;
    } bad[] = {
        {"", 0},       {"\n\n", 0},     {"<html><body>Log in</body></html>", 1},
        {trailing, 2}, {short_hash, 1}, {no_name, 1},
        {glued, 1},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        int line = -1;
        CHECK(!ml_sha256_list_valid(bad[i].text, strlen(bad[i].text), &line));
        CHECK(line == bad[i].line);
    }
    char binary[70];
    memcpy(binary, h, 64);
    memcpy(binary + 64, "\0  a\n", 5);
    CHECK(!ml_sha256_list_valid(binary, 69, NULL));
}

/* A redirect to a scheme other than http(s) is refused with what and where, nothing kept. */
static void test_redirect_other_scheme(void)
{
    g_autofree char *u = url("redirect/file:///etc/hostname");
    g_autofree char *dest = out_file("to-file.bin");
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    struct ml_fetch_request req = {.url = u, .dest = dest};
    g_autoptr(GError) err = NULL;
    CHECK(!ml_fetch(&req, &err));
    CHECK(err && err->code == ML_ERR_FETCH && strstr(err->message, u) &&
          strstr(err->message, "redirected to file:///etc/hostname"));
    if (err)
        fprintf(stderr, "redirect to file: %s\n", err->message);
    CHECK(!exists(dest) && !exists(part));
}

/* https -> http is refused before the http server sees a request; http -> https and
 * https -> https are followed. */
static void test_redirect_downgrade(const char *small_hash)
{
    if (!tls_port) {
        printf("openssl could not make a certificate; the https redirect cases are skipped\n");
        return;
    }
    g_autofree char *target = url("small.bin");
    g_autofree char *down_path = g_strconcat("redirect/", target, NULL);
    g_autofree char *u = tls_url(down_path);
    g_autofree char *dest = out_file("downgrade.bin");
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    g_autofree char *known = out_file("downgrade-known");
    struct ml_fetch_request req = {
        .url = u, .dest = dest, .known_hashes = known, .what = "a test file"};
    g_autofree char *log_before = NULL;
    g_file_get_contents(log_path, &log_before, NULL, NULL);
    g_autoptr(GError) err = NULL;
    CHECK(!ml_fetch(&req, &err));
    CHECK(err && err->code == ML_ERR_FETCH && strstr(err->message, u) &&
          strstr(err->message, "(a test file)") && strstr(err->message, target) &&
          strstr(err->message, "may only lead to https"));
    if (err)
        fprintf(stderr, "https -> http: %s\n", err->message);
    CHECK(!exists(dest) && !exists(part) && !exists(known));
    g_autofree char *log_after = NULL;
    g_file_get_contents(log_path, &log_after, NULL, NULL);
    CHECK_STR(log_after, log_before);

    /* Up to https, and within https, is fine. */
    g_autofree char *up_target = tls_url("small.bin");
    g_autofree char *up_path = g_strconcat("redirect/", up_target, NULL);
    g_autofree char *up = url(up_path);
    g_autofree char *up_dest = out_file("upgrade.bin");
    struct ml_fetch_request up_req = {.url = up, .dest = up_dest, .expected_sha256 = small_hash};
    g_autoptr(GError) up_err = NULL;
    CHECK(ml_fetch(&up_req, &up_err));
    if (up_err)
        fprintf(stderr, "http -> https: %s\n", up_err->message);
    g_autofree char *same = tls_url(up_path);
    g_autofree char *same_dest = out_file("https-https.bin");
    struct ml_fetch_request same_req = {
        .url = same, .dest = same_dest, .expected_sha256 = small_hash};
    g_autoptr(GError) same_err = NULL;
    CHECK(ml_fetch(&same_req, &same_err));
    if (same_err)
        fprintf(stderr, "https -> https: %s\n", same_err->message);
}

/* A body over the cap is stopped, whether the server announces its length or not, and
 * leaves neither the file nor a .part to resume from. */
static void test_size_cap(const char *big_hash)
{
    const char *paths[] = {"big.bin", "nolength/big.bin"};
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
        g_autofree char *u = url(paths[i]);
        g_autofree char *dest = out_file("capped.bin");
        g_autofree char *part = g_strconcat(dest, ".part", NULL);
        struct ml_fetch_request req = {.url = u,
                                       .dest = dest,
                                       .expected_sha256 = big_hash,
                                       .what = "the test image",
                                       .max_bytes = 1 << 20};
        g_autoptr(GError) err = NULL;
        CHECK(!ml_fetch(&req, &err));
        CHECK(err && err->code == ML_ERR_FETCH && strstr(err->message, u) &&
              strstr(err->message, "(the test image)") &&
              strstr(err->message, "larger than its cap of 1.0") &&
              strstr(err->message, "(1048576 bytes)") && strstr(err->message, "nothing was kept"));
        if (err)
            fprintf(stderr, "cap, %s: %s\n", paths[i], err->message);
        CHECK(!exists(dest) && !exists(part));
    }

    /* A .part from an earlier run counts towards the cap: what follows it may not pass it. */
    g_autofree char *u = url("nolength/big.bin");
    g_autofree char *dest = out_file("capped-resume.bin");
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    g_autofree char *src = www_file("big.bin");
    g_autofree char *data = NULL;
    g_file_get_contents(src, &data, NULL, NULL);
    g_file_set_contents(part, data, 900 * 1024, NULL);
    struct ml_fetch_request req = {.url = u, .dest = dest, .max_bytes = 1 << 20};
    g_autoptr(GError) err = NULL;
    CHECK(!ml_fetch(&req, &err));
    CHECK(err && strstr(err->message, "cap"));
    CHECK(!exists(dest) && !exists(part));

    /* Exactly at the cap is fine. */
    g_autofree char *u2 = url("nolength/small.bin");
    g_autofree char *dest2 = out_file("at-cap.bin");
    struct ml_fetch_request req2 = {.url = u2, .dest = dest2, .max_bytes = 4096};
    g_autoptr(GError) err2 = NULL;
    CHECK(ml_fetch(&req2, &err2));
    CHECK(file_size(dest2) == 4096);
}

/* A server that trickles faster than the low-speed limit would go on for ten seconds; the
 * deadline ends it after two and keeps what arrived for the next run. */
static void test_deadline(void)
{
    g_autofree char *trickle_hash = make_file("trickle.bin", 200 * 1000, 5);
    g_autofree char *u = url("slow/20000/trickle.bin");
    g_autofree char *dest = out_file("trickle.bin");
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    struct ml_fetch_request req = {.url = u,
                                   .dest = dest,
                                   .expected_sha256 = trickle_hash,
                                   .what = "the trickled file",
                                   .deadline_s = 2};
    double start = ml_now();
    g_autoptr(GError) err = NULL;
    CHECK(!ml_fetch(&req, &err));
    double took = ml_now() - start;
    CHECK(took >= 1.5 && took < 5);
    CHECK(err && err->code == ML_ERR_FETCH && strstr(err->message, u) &&
          strstr(err->message, "(the trickled file)") && strstr(err->message, "deadline of 2 s") &&
          strstr(err->message, "resume"));
    if (err)
        fprintf(stderr, "deadline (%.1f s): %s\n", took, err->message);
    CHECK(!exists(dest));
    CHECK(file_size(part) > 0 && file_size(part) < 200 * 1000);
}

static bool known_lists(const char *known, const char *needle)
{
    g_autofree char *text = NULL;
    return g_file_get_contents(known, &text, NULL, NULL) && strstr(text, needle);
}

/* A checksum list fetched for trust on first use: a portal's HTML page (served as text/html,
 * or as anything else) and text that is no checksum list are refused before anything is
 * recorded, and leave nothing behind; a real list is recorded. */
static void test_sums_form(void)
{
    g_autofree char *known = out_file("sums-known");
    g_autofree char *dest = out_file("SHA256SUMS");
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    g_autofree char *portal = www_file("login.html");
    g_file_set_contents(portal, "<!DOCTYPE html><html><body>Log in</body></html>\n", -1, NULL);
    g_autofree char *disguised = www_file("disguised.bin");
    g_file_set_contents(disguised, "<html><head><title>Proxy error</title></head></html>\n", -1,
                        NULL);
    g_autofree char *prose = www_file("prose.txt");
    g_file_set_contents(prose, "Not Found\nThe file moved.\n", -1, NULL);
    const struct {
        const char *path, *says;
    } bad[] = {
        {"portal/SHA256SUMS", "the mirror returned HTML"},
        {"login.html", "the mirror returned HTML"},
        {"disguised.bin", "the mirror returned HTML"},
        {"prose.txt", "is not a checksum list (line 1 reads \"Not Found\""},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *u = url(bad[i].path);
        struct ml_fetch_request req = {
            .url = u, .dest = dest, .known_hashes = known, .form = ML_FETCH_SUMS};
        g_autoptr(GError) err = NULL;
        CHECK(!ml_fetch(&req, &err));
        CHECK(err && err->code == ML_ERR_FETCH && strstr(err->message, u) &&
              strstr(err->message, bad[i].says) && strstr(err->message, "nothing was recorded"));
        if (err)
            fprintf(stderr, "sums from %s: %s\n", bad[i].path, err->message);
        CHECK(!exists(dest) && !exists(part) && !exists(known));
    }

    g_autofree char *good = url("SHA256SUMS");
    struct ml_fetch_request req = {
        .url = good, .dest = dest, .known_hashes = known, .form = ML_FETCH_SUMS};
    g_autoptr(GError) err = NULL;
    CHECK(ml_fetch(&req, &err));
    CHECK(known_lists(known, good));

    /* An HTML page that an earlier meshlab recorded: refused, and its record forgotten, so
     * the real list can be fetched next time instead of "has changed" for ever. */
    g_autofree char *portal_url = url("portal/SHA256SUMS");
    g_autofree char *old_dest = out_file("old-SHA256SUMS");
    g_file_set_contents(old_dest, "<html><body>Log in</body></html>\n", -1, NULL);
    g_autofree char *old_hash = ml_fetch_sha256_file(old_dest, NULL);
    g_autofree char *record = g_strdup_printf("%s  %s\n", old_hash, portal_url);
    g_autofree char *text = NULL;
    g_file_get_contents(known, &text, NULL, NULL);
    g_autofree char *poisoned = g_strconcat(text, record, NULL);
    g_file_set_contents(known, poisoned, -1, NULL);
    struct ml_fetch_request old_req = {
        .url = portal_url, .dest = old_dest, .known_hashes = known, .form = ML_FETCH_SUMS};
    g_autoptr(GError) old_err = NULL;
    CHECK(!ml_fetch(&old_req, &old_err));
    CHECK(old_err && strstr(old_err->message, "HTML"));
    CHECK(!exists(old_dest));
    CHECK(!known_lists(known, portal_url) && known_lists(known, good));
}

static gpointer unlock_later(gpointer data)
{
    g_usleep(1000 * 1000);
    close(GPOINTER_TO_INT(data));
    return NULL;
}

/* Another meshlab holds the download directory: this one waits for it, and does not append to
 * the same .part or overwrite its known-hashes record meanwhile. */
static void test_one_at_a_time(const char *small_hash)
{
    g_autofree char *dir = g_build_filename(tmp, "out", NULL);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0);
    GThread *thread = g_thread_new("unlock", unlock_later, GINT_TO_POINTER(fd));
    g_autofree char *u = url("small.bin");
    g_autofree char *dest = out_file("locked.bin");
    struct ml_fetch_request req = {.url = u, .dest = dest, .expected_sha256 = small_hash};
    double start = ml_now();
    g_autoptr(GError) err = NULL;
    CHECK(ml_fetch(&req, &err));
    double took = ml_now() - start;
    g_thread_join(thread);
    CHECK(took >= 0.9);
    CHECK(exists(dest));
}

/* Runs ml_fetch in a child, so a read that blocks for ever fails the test instead of hanging
 * it: true when it ended within seconds; *ret_message is its error. */
static bool fetch_in_child(const struct ml_fetch_request *req, double seconds, char **ret_message)
{
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        g_autoptr(GError) err = NULL;
        bool ok = ml_fetch(req, &err);
        if (err && write(fds[1], err->message, strlen(err->message)) < 0)
            _exit(3);
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    double until = ml_now() + seconds;
    int status = 0;
    pid_t r = 0;
    while ((r = waitpid(child, &status, WNOHANG)) == 0 && ml_now() < until)
        g_usleep(20 * 1000);
    if (r == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
    }
    g_autoptr(GString) text = g_string_new(NULL);
    char buf[512];
    ssize_t n;
    while (r != 0 && (n = read(fds[0], buf, sizeof(buf))) > 0)
        g_string_append_len(text, buf, n);
    close(fds[0]);
    *ret_message = g_string_free(g_steal_pointer(&text), FALSE);
    return r != 0;
}

/* A FIFO in the cache under a download's name, its .part's or known-hashes' is refused at
 * once; reading or appending to it would block for ever. */
static void test_fifo_in_cache(const char *small_hash)
{
    g_autofree char *u = url("small.bin");
    g_autofree char *dest = out_file("fifo.bin");
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    g_autofree char *known = out_file("fifo-known");
    const char *fifos[] = {dest, part, known};
    for (size_t i = 0; i < G_N_ELEMENTS(fifos); i++) {
        CHECK(mkfifo(fifos[i], 0644) == 0);
        struct ml_fetch_request req = {
            .url = u, .dest = dest, .expected_sha256 = small_hash, .known_hashes = known};
        g_autofree char *message = NULL;
        CHECK(fetch_in_child(&req, 5, &message));
        CHECK(message && strstr(message, fifos[i]) && strstr(message, "not a regular file"));
        if (i == 0)
            fprintf(stderr, "FIFO in the cache: %s\n", message);
        unlink(fifos[i]);
        unlink(dest);
    }
}

static int count_lines(const char *path);

/* About five seconds of transfer: progress shows, every two seconds or so, never a flood. */
static void test_progress(void)
{
    g_autofree char *u = url("slow/200000/slow.bin");
    g_autofree char *dest = out_file("slow.bin");
    g_autofree char *log = g_build_filename(tmp, "progress.log", NULL);
    g_autofree char *slow_hash = make_file("slow.bin", 1000 * 1000, 3);
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(log, "w");
    dup2(fileno(f), 2);
    struct ml_fetch_request req = {.url = u, .dest = dest, .expected_sha256 = slow_hash};
    bool ok = ml_fetch(&req, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(f);
    CHECK(ok);
    g_autofree char *text = NULL;
    g_file_get_contents(log, &text, NULL, NULL);
    int lines = 0;
    for (const char *p = text; p && (p = strstr(p, "%),")); p++)
        lines++;
    CHECK(lines >= 1 && lines <= 3);
    /* g_format_size puts a no-break space between number and unit. */
    CHECK(text && strstr(text, "slow.bin: ") && strstr(text, " of 1.0") && strstr(text, "B/s"));
    if (text)
        fputs(text, stderr);
}

static int count_lines(const char *path)
{
    g_autofree char *text = NULL;
    int n = 0;
    if (g_file_get_contents(path, &text, NULL, NULL))
        for (const char *p = text; *p; p++)
            n += *p == '\n';
    return n;
}

/* The catalogue path end to end against the local server: the primary URL is gone (as old
 * release directories go), the mirror serves; then the offline run verifies the cache.
 * Packages are left out here: tests/test_apt_chain.c covers them and their signed archive. */
static void test_image_catalogue(void)
{
    g_autofree char *release = www_file("release");
    g_mkdir_with_parents(release, 0755);
    g_autofree char *img_hash = make_file("release/fake.img", 300 * 1024, 11);
    g_autofree char *sums = g_strdup_printf("%s *fake.img\n", img_hash);
    g_autofree char *sums_path = www_file("release/SHA256SUMS");
    g_file_set_contents(sums_path, sums, -1, NULL);

    g_autofree char *images = g_build_filename(tmp, "images", NULL);
    g_mkdir_with_parents(images, 0755);
    g_autofree char *conf = g_strdup_printf("# test catalogue\n"
                                            "name = ubuntu-24.04\n"
                                            "image_url = http://127.0.0.1:%d/gone/fake.img\n"
                                            "image_mirror = http://127.0.0.1:%d/release/fake.img\n"
                                            "sums_file = SHA256SUMS\n"
                                            "image_sha256 = %s\n",
                                            port, port, img_hash);
    g_autofree char *conf_path = g_build_filename(images, "ubuntu-24.04.conf", NULL);
    g_file_set_contents(conf_path, conf, -1, NULL);
    g_setenv("MESHLAB_IMAGES_DIR", images, TRUE);

    g_autofree char *cache = g_build_filename(tmp, "cache2", NULL);
    g_autoptr(GError) err = NULL;
    CHECK(ml_image_ubuntu_download(cache, &err));
    if (err)
        fprintf(stderr, "catalogue download: %s\n", err->message);
    g_autofree char *img = g_build_filename(cache, "downloads", "fake.img", NULL);
    g_autofree char *local_sums =
        g_build_filename(cache, "downloads", "ubuntu-24.04.SHA256SUMS", NULL);
    g_autofree char *known = g_build_filename(cache, "downloads", "known-hashes", NULL);
    CHECK(exists(img) && exists(local_sums));
    CHECK(count_lines(known) == 2);
    CHECK(server_saw("GET /gone/SHA256SUMS"));

    /* Offline: the cache verifies; the fake image is no qcow2, which is caught before
     * libguestfs would start an appliance. */
    g_autofree char *qcow2 = NULL;
    g_autoptr(GError) err2 = NULL;
    CHECK(!ml_image_ubuntu_prepare(cache, false, true, &qcow2, &err2));
    CHECK(qcow2 == NULL);
    CHECK(err2 && err2->code == ML_ERR_IMAGE && strstr(err2->message, "not a qcow2"));
    if (err2)
        fprintf(stderr, "customise: %s\n", err2->message);
    g_autoptr(GDir) d = g_dir_open(cache, 0, NULL);
    const char *name;
    int qcow2_files = 0;
    while (d && (name = g_dir_read_name(d)))
        qcow2_files += strstr(name, ".qcow2") != NULL;
    CHECK(qcow2_files == 0);

    /* A tampered cache is caught offline as well (without a mirror, which would serve the
     * image afresh). */
    g_autofree char *no_mirror = g_strdup_printf("name = ubuntu-24.04\n"
                                                 "image_url = http://127.0.0.1:%d/gone/fake.img\n"
                                                 "sums_file = SHA256SUMS\n"
                                                 "image_sha256 = %s\n",
                                                 port, img_hash);
    g_file_set_contents(conf_path, no_mirror, -1, NULL);
    g_file_set_contents(img, "tampered", -1, NULL);
    g_autoptr(GError) err3 = NULL;
    CHECK(!ml_image_ubuntu_prepare(cache, false, true, NULL, &err3));
    CHECK(err3 && err3->code == ML_ERR_FETCH && strstr(err3->message, img_hash));
    CHECK(!exists(img));
    g_unsetenv("MESHLAB_IMAGES_DIR");
}

/* The image's checksum list answered by a captive portal: refused, nothing recorded, nothing
 * kept, and the message says the mirror returned HTML. */
static void test_image_sums_portal(void)
{
    g_autofree char *images = g_build_filename(tmp, "images-portal", NULL);
    g_mkdir_with_parents(images, 0755);
    g_autofree char *conf = g_strdup_printf(
        "name = ubuntu-24.04\n"
        "image_url = http://127.0.0.1:%d/portal/fake.img\n"
        "sums_file = SHA256SUMS\n"
        "image_sha256 = 0000000000000000000000000000000000000000000000000000000000000000\n",
        port);
    g_autofree char *conf_path = g_build_filename(images, "ubuntu-24.04.conf", NULL);
    g_file_set_contents(conf_path, conf, -1, NULL);
    g_setenv("MESHLAB_IMAGES_DIR", images, TRUE);

    g_autofree char *cache = g_build_filename(tmp, "cache-portal", NULL);
    g_autoptr(GError) err = NULL;
    CHECK(!ml_image_ubuntu_download(cache, &err));
    CHECK(err && err->code == ML_ERR_FETCH && strstr(err->message, "the mirror returned HTML") &&
          strstr(err->message, "/portal/SHA256SUMS"));
    if (err)
        fprintf(stderr, "image sums from a portal: %s\n", err->message);
    g_autofree char *known = g_build_filename(cache, "downloads", "known-hashes", NULL);
    g_autofree char *sums = g_build_filename(cache, "downloads", "ubuntu-24.04.SHA256SUMS", NULL);
    CHECK(!exists(known) && !exists(sums));
    g_unsetenv("MESHLAB_IMAGES_DIR");
}

static gpointer interrupt_soon(gpointer data)
{
    (void)data;
    g_usleep(800 * 1000);
    kill(getpid(), SIGINT);
    return NULL;
}

/* Last: the interrupt flag cannot be cleared once raised. Ctrl-C midway through a slow
 * transfer aborts it and keeps the .part; a new call refuses to start. */
static void test_interrupted(void)
{
    g_autofree char *u = url("slow/200000/big.bin");
    g_autofree char *dest = out_file("interrupted.bin");
    g_autofree char *part = g_strconcat(dest, ".part", NULL);
    ml_signals_install();
    GThread *thread = g_thread_new("interrupt", interrupt_soon, NULL);
    struct ml_fetch_request req = {.url = u, .dest = dest};
    g_autoptr(GError) err = NULL;
    CHECK(!ml_fetch(&req, &err));
    g_thread_join(thread);
    CHECK(err && err->code == ML_ERR_INTERRUPTED);
    CHECK(err && strstr(err->message, "resumes"));
    CHECK(!exists(dest));
    CHECK(file_size(part) > 0);

    g_autoptr(GError) err2 = NULL;
    CHECK(!ml_fetch(&req, &err2));
    CHECK(err2 && err2->code == ML_ERR_INTERRUPTED);
}

int main(void)
{
    ml_log_init();
    g_autofree char *python = g_find_program_in_path("python3");
    if (!python) {
        printf("python3 is missing; skipping\n");
        return 77;
    }
    tmp = g_dir_make_tmp("meshlab-fetch-XXXXXX", NULL);
    www = g_build_filename(tmp, "www", NULL);
    log_path = g_build_filename(tmp, "server.log", NULL);
    g_mkdir_with_parents(www, 0755);
    g_autofree char *out = g_build_filename(tmp, "out", NULL);
    g_mkdir_with_parents(out, 0755);

    g_autofree char *big_hash = make_file("big.bin", BIG_SIZE, 1);
    g_autofree char *small_hash = make_file("small.bin", 4096, 2);
    g_autofree char *sums = g_strdup_printf("%s *big.bin\n%s  small.bin\n", big_hash, small_hash);
    g_autofree char *sums_path = www_file("SHA256SUMS");
    g_file_set_contents(sums_path, sums, -1, NULL);

    GPid pid = start_server();
    CHECK(pid != 0);
    /* The same files over https, trusted through the test hook only. */
    g_autofree char *cert = NULL;
    g_autofree char *key = NULL;
    GPid tls_pid = 0;
    if (http_make_cert(tmp, &cert, &key)) {
        tls_pid = http_server_start_tls(www, NULL, cert, key, &tls_port);
        CHECK(tls_pid != 0);
        ml_fetch_test_trust_ca(cert);
    }
    if (pid) {
        test_pinned(big_hash);
        test_sums();
        test_mismatch(big_hash);
        test_404();
        test_resume(big_hash);
        test_range_ignored(big_hash);
        test_known_hashes();
        test_redirect_rule();
        test_sums_list_rule();
        test_redirect_other_scheme();
        test_redirect_downgrade(small_hash);
        test_size_cap(big_hash);
        test_deadline();
        test_sums_form();
        test_one_at_a_time(small_hash);
        test_fifo_in_cache(small_hash);
        test_image_offline();
        test_image_catalogue();
        test_image_sums_portal();
        test_progress();
        test_interrupted();
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        g_spawn_close_pid(pid);
    }
    if (tls_pid) {
        kill(tls_pid, SIGTERM);
        waitpid(tls_pid, NULL, 0);
        g_spawn_close_pid(tls_pid);
    }
    ml_fetch_test_trust_ca(NULL);
    rm_rf(tmp);
    g_free(tmp);
    g_free(www);
    g_free(log_path);
    return check_finish();
}
