/* The Ubuntu packages' chain of trust, end to end against the local HTTP server standing in
 * for archive.ubuntu.com: a test archive signed at test time with a throwaway ed25519 key in a
 * temporary GNUPGHOME, downloaded through the catalogue, then verified the way the image build
 * verifies it before dpkg runs (ml_image_ubuntu_verify_packages with the test key's exported
 * keyring in place of the one read out of the cloud image). A good chain passes; a tampered
 * .deb, a tampered Packages index, an InRelease signed by another key, one changed after
 * signing, one with unsigned text appended, and an HTML page served with status 200 in place
 * of each file all fail with a message that says what and where. A gpgv that hangs is stopped
 * at its deadline.
 *
 * The real archive cannot be reached from where this was written (no internet), so its
 * layout is taken from public references, which the test archive copies:
 *  - wiki.debian.org/DebianRepository/Format: InRelease lives in ARCHIVE/dists/SUITE/ and is
 *    the clearsigned Release file; its SHA256 field has one continuation line per index,
 *    "checksum size name", name relative to dists/SUITE/ (main/binary-amd64/Packages.gz);
 *    Debian Policy 5.6.24 gives the same "checksum, space, size, space, name" form.
 *  - A Packages stanza of the Ubuntu archive, as quoted in a Canonical charm library test
 *    (apt-cache output of aisleriot 1:3.22.9-1): "Filename: pool/main/a/aisleriot/
 *    aisleriot_3.22.9-1_amd64.deb", "Size: 843864", "SHA256: 89e7d5f6...", beside MD5sum and
 *    SHA1; Filename is relative to the archive root.
 *  - The keyring: Ubuntu 24.04's /etc/apt/sources.list.d/ubuntu.sources says
 *    "Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg" (e.g. christsui1228/setup,
 *    set_apt_mirror.sh, writing noble's default file); others check noble's InRelease with
 *    "gpgv --keyring /usr/share/keyrings/ubuntu-archive-keyring.gpg". That file is what
 *    images/ubuntu-24.04.conf's apt_keyring names. */
#include "check.h"
#include "http_fixture.h"
#include "cache/apt_verify.h"
#include "cache/image_ubuntu.h"
#include "core/spawn.h"
#include "core/util.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TRUSTED_UID "meshlab test archive <archive@test.invalid>"
#define OTHER_UID "meshlab other key <other@test.invalid>"
#define DEB_MAIN "pool/main/t/tool/tool_1.0-1_amd64.deb"
#define DEB_UNIVERSE "pool/universe/l/libthing/libthing2_2.0-1_amd64.deb"
#define INRELEASE "ubuntu-24.04.noble_InRelease"
#define MAIN_INDEX "ubuntu-24.04.noble_main_binary-amd64_Packages.gz"

static char *tmp;
static char *www;
static char *images;
static char *keyring;
static int port;
static int cache_serial;

static bool exists(const char *path)
{
    return g_file_test(path, G_FILE_TEST_EXISTS);
}

static bool run(const char *const *argv)
{
    g_autoptr(GError) err = NULL;
    if (!ml_spawn(argv, NULL, &err)) {
        fprintf(stderr, "%s\n", err->message);
        return false;
    }
    return true;
}

static char *hash_file(const char *path, gsize *ret_len)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    g_file_get_contents(path, &text, &len, NULL);
    if (ret_len)
        *ret_len = len;
    return ml_sha256_hex(text ? text : "", len);
}

/* An archive's root (www/NAME/ubuntu) and paths below it. */
static char *archive_path(const char *name, const char *rel)
{
    return g_build_filename(www, name, "ubuntu", rel, NULL);
}

static void put(const char *path, const char *text, gsize len)
{
    g_autofree char *dir = g_path_get_dirname(path);
    g_mkdir_with_parents(dir, 0755);
    g_file_set_contents(path, text, (gssize)len, NULL);
}

/* Something dpkg would call a package from the outside: ar magic, then debian-binary. */
static void make_deb(const char *name, const char *rel, const char *body)
{
    g_autofree char *path = archive_path(name, rel);
    g_autofree char *text = g_strdup_printf("!<arch>\ndebian-binary   0           0     0     "
                                            "100644  4         `\n2.0\n%s",
                                            body);
    put(path, text, strlen(text));
}

static void append_stanza(GString *s, const char *name, const char *archive, const char *rel)
{
    g_autofree char *deb = archive_path(archive, rel);
    gsize len = 0;
    g_autofree char *sha = hash_file(deb, &len);
    g_string_append_printf(s,
                           "Package: %s\nArchitecture: amd64\nVersion: 1.0-1\n"
                           "Maintainer: Test <test@test.invalid>\nFilename: %s\n"
                           "Size: %" G_GSIZE_FORMAT "\nMD5sum: 00000000000000000000000000000000\n"
                           "SHA256: %s\nDescription: a test package\n a longer description\n\n",
                           name, rel, len, sha);
}

/* dists/noble/COMPONENT/binary-amd64/Packages and its .gz, listing the given debs plus one
 * unrelated stanza. */
static void make_index(const char *archive, const char *component, const char *deb_name,
                       const char *deb_rel)
{
    g_autoptr(GString) s = g_string_new(NULL);
    g_string_append(s, "Package: unrelated\nArchitecture: all\nVersion: 9\n"
                       "Filename: pool/main/u/unrelated/unrelated_9_all.deb\nSize: 1\n"
                       "SHA256: 1111111111111111111111111111111111111111111111111111111111111111"
                       "\n\n");
    append_stanza(s, deb_name, archive, deb_rel);
    g_autofree char *rel = g_strdup_printf("dists/noble/%s/binary-amd64/Packages", component);
    g_autofree char *path = archive_path(archive, rel);
    g_autofree char *gz = g_strconcat(path, ".gz", NULL);
    put(path, s->str, s->len);
    unlink(gz);
    const char *argv[] = {"gzip", "-n", "-k", path, NULL};
    run(argv);
}

/* The Release text as the archive writes it, sizes right-aligned, uncompressed indexes too. */
static char *release_text(const char *archive)
{
    g_autoptr(GString) s = g_string_new(
        "Origin: Ubuntu\nLabel: Ubuntu\nSuite: noble\nVersion: 24.04\nCodename: noble\n"
        "Date: Thu, 25 Apr 2024 15:10:33 UTC\nArchitectures: amd64\n"
        "Components: main universe\nDescription: Ubuntu Noble 24.04\nSHA256:\n");
    const char *files[] = {"main/binary-amd64/Packages", "main/binary-amd64/Packages.gz",
                           "universe/binary-amd64/Packages", "universe/binary-amd64/Packages.gz"};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *rel = g_strconcat("dists/noble/", files[i], NULL);
        g_autofree char *path = archive_path(archive, rel);
        gsize len = 0;
        g_autofree char *sha = hash_file(path, &len);
        g_string_append_printf(s, " %s %16" G_GSIZE_FORMAT " %s\n", sha, len, files[i]);
    }
    g_string_append(s, "Acquire-By-Hash: yes\n");
    return g_string_free(g_steal_pointer(&s), FALSE);
}

/* Clearsigns text into ARCHIVE/dists/noble/InRelease with the given keys. */
static void sign_release(const char *archive, const char *text, const char *uid1, const char *uid2)
{
    g_autofree char *release = archive_path(archive, "dists/noble/Release");
    g_autofree char *inrelease = archive_path(archive, "dists/noble/InRelease");
    put(release, text, strlen(text));
    const char *argv[] = {"gpg",
                          "--batch",
                          "--yes",
                          "--pinentry-mode",
                          "loopback",
                          "--passphrase",
                          "",
                          "--digest-algo",
                          "SHA512",
                          "--local-user",
                          uid1,
                          "--local-user",
                          uid2 ? uid2 : uid1,
                          "--clearsign",
                          "--output",
                          inrelease,
                          release,
                          NULL};
    run(argv);
}

/* A whole archive: two packages in two components, signed by the trusted key. */
static void make_archive(const char *name)
{
    make_deb(name, DEB_MAIN, "tool 1.0\n");
    make_deb(name, DEB_UNIVERSE, "libthing 2.0\n");
    make_index(name, "main", "tool", DEB_MAIN);
    make_index(name, "universe", "libthing2", DEB_UNIVERSE);
    g_autofree char *text = release_text(name);
    sign_release(name, text, TRUSTED_UID, NULL);
}

/* The catalogue points at www/NAME/ubuntu; the image is a small file pinned by its hash. */
static void use_archive(const char *name)
{
    g_autofree char *img_hash = ml_sha256_hex("image", 5);
    g_autofree char *conf =
        g_strdup_printf("name = ubuntu-24.04\n"
                        "image_url = http://127.0.0.1:%d/release/fake.img\n"
                        "sums_file = SHA256SUMS\n"
                        "image_sha256 = %s\n"
                        "apt_source = http://127.0.0.1:%d/%s/ubuntu noble main universe\n"
                        "apt_arch = amd64\n"
                        "apt_keyring = /usr/share/keyrings/ubuntu-archive-keyring.gpg\n"
                        "deb = http://127.0.0.1:%d/%s/ubuntu/" DEB_MAIN "\n"
                        "deb = http://127.0.0.1:%d/%s/ubuntu/" DEB_UNIVERSE "\n",
                        port, img_hash, port, name, port, name, port, name);
    g_autofree char *path = g_build_filename(images, "ubuntu-24.04.conf", NULL);
    g_file_set_contents(path, conf, -1, NULL);
}

/* A fresh cache, downloaded from the archive NAME. */
static char *download(const char *name, GError **err)
{
    use_archive(name);
    g_autofree char *dir = g_strdup_printf("cache-%d-%s", ++cache_serial, name);
    char *cache = g_build_filename(tmp, dir, NULL);
    ml_image_ubuntu_download(cache, err);
    return cache;
}

static char *cached(const char *cache, const char *file)
{
    return g_build_filename(cache, "downloads", file, NULL);
}

static void test_good_chain(void)
{
    make_archive("good");
    g_autoptr(GError) err = NULL;
    g_autofree char *cache = download("good", &err);
    CHECK(err == NULL);
    if (err)
        fprintf(stderr, "good download: %s\n", err->message);
    g_autofree char *deb = cached(cache, "tool_1.0-1_amd64.deb");
    g_autofree char *index = cached(cache, MAIN_INDEX);
    g_autofree char *inrelease = cached(cache, INRELEASE);
    CHECK(exists(deb) && exists(index) && exists(inrelease));

    g_autoptr(GError) verr = NULL;
    CHECK(ml_image_ubuntu_verify_packages(cache, keyring, &verr));
    if (verr)
        fprintf(stderr, "good chain: %s\n", verr->message);

    /* No trust on first use is left for the packages: none of them is recorded. */
    g_autofree char *known = cached(cache, "known-hashes");
    g_autofree char *text = NULL;
    g_file_get_contents(known, &text, NULL, NULL);
    CHECK(!text || !strstr(text, ".deb"));

    /* A package changed in the cache afterwards is caught before it would be installed. */
    g_file_set_contents(deb, "!<arch>\ndebian-binary   changed", -1, NULL);
    g_autoptr(GError) terr = NULL;
    CHECK(!ml_image_ubuntu_verify_packages(cache, keyring, &terr));
    CHECK(terr && terr->code == ML_ERR_FETCH && strstr(terr->message, DEB_MAIN));
    CHECK(!exists(deb));
}

/* An InRelease with two signatures, one by a key the keyring lacks, as an archive signing
 * with an old and a new key at once publishes: gpgv exits non-zero, apt accepts it, so do we. */
static void test_second_unknown_signature(void)
{
    make_archive("twosigs");
    g_autofree char *text = release_text("twosigs");
    sign_release("twosigs", text, TRUSTED_UID, OTHER_UID);
    g_autoptr(GError) err = NULL;
    g_autofree char *cache = download("twosigs", &err);
    CHECK(err == NULL);
    g_autoptr(GError) verr = NULL;
    CHECK(ml_image_ubuntu_verify_packages(cache, keyring, &verr));
    if (verr)
        fprintf(stderr, "two signatures: %s\n", verr->message);
}

/* The server sends other bytes for a package (same name, same size): the download itself
 * cannot tell; the signed index does. */
static void test_tampered_deb(void)
{
    make_archive("baddeb");
    make_deb("baddeb", DEB_MAIN, "tool 6.6\n");
    g_autoptr(GError) err = NULL;
    g_autofree char *cache = download("baddeb", &err);
    CHECK(err == NULL);
    g_autoptr(GError) verr = NULL;
    CHECK(!ml_image_ubuntu_verify_packages(cache, keyring, &verr));
    CHECK(verr && verr->code == ML_ERR_FETCH);
    CHECK(verr && strstr(verr->message, "/baddeb/ubuntu/" DEB_MAIN) &&
          strstr(verr->message, "signed Packages index") && strstr(verr->message, "deleted"));
    if (verr)
        fprintf(stderr, "tampered deb: %s\n", verr->message);
    g_autofree char *deb = cached(cache, "tool_1.0-1_amd64.deb");
    CHECK(!exists(deb));
}

/* The attacker swaps the package and rewrites the Packages index to match it; the signed
 * InRelease still lists the original index. */
static void test_tampered_packages(void)
{
    make_archive("badindex");
    make_deb("badindex", DEB_MAIN, "tool 6.6\n");
    make_index("badindex", "main", "tool", DEB_MAIN);
    g_autoptr(GError) err = NULL;
    g_autofree char *cache = download("badindex", &err);
    CHECK(err == NULL);
    g_autoptr(GError) verr = NULL;
    CHECK(!ml_image_ubuntu_verify_packages(cache, keyring, &verr));
    CHECK(verr && verr->code == ML_ERR_FETCH);
    CHECK(verr &&
          strstr(verr->message, "/badindex/ubuntu/dists/noble/main/binary-amd64/Packages.gz") &&
          strstr(verr->message, "signed InRelease"));
    if (verr)
        fprintf(stderr, "tampered Packages: %s\n", verr->message);
    g_autofree char *index = cached(cache, MAIN_INDEX);
    CHECK(!exists(index));
}

/* Everything consistent, but signed by a key that is not in the keyring. */
static void test_foreign_signature(void)
{
    make_archive("foreign");
    make_deb("foreign", DEB_MAIN, "tool 6.6\n");
    make_index("foreign", "main", "tool", DEB_MAIN);
    g_autofree char *text = release_text("foreign");
    sign_release("foreign", text, OTHER_UID, NULL);
    g_autoptr(GError) err = NULL;
    g_autofree char *cache = download("foreign", &err);
    CHECK(err == NULL);
    g_autoptr(GError) verr = NULL;
    CHECK(!ml_image_ubuntu_verify_packages(cache, keyring, &verr));
    CHECK(verr && verr->code == ML_ERR_FETCH && strstr(verr->message, "not in the keyring") &&
          strstr(verr->message, "/foreign/ubuntu/dists/noble/InRelease"));
    if (verr)
        fprintf(stderr, "foreign key: %s\n", verr->message);
    g_autofree char *inrelease = cached(cache, INRELEASE);
    CHECK(!exists(inrelease));
}

/* A properly signed InRelease whose text is edited afterwards to list a rewritten index. */
static void test_changed_after_signing(void)
{
    make_archive("edited");
    g_autofree char *old_index =
        archive_path("edited", "dists/noble/main/binary-amd64/Packages.gz");
    g_autofree char *old_sha = hash_file(old_index, NULL);
    make_deb("edited", DEB_MAIN, "tool 6.6\n");
    make_index("edited", "main", "tool", DEB_MAIN);
    g_autofree char *new_sha = hash_file(old_index, NULL);
    g_autofree char *path = archive_path("edited", "dists/noble/InRelease");
    g_autofree char *signed_text = NULL;
    g_file_get_contents(path, &signed_text, NULL, NULL);
    CHECK(signed_text && strstr(signed_text, old_sha));
    g_auto(GStrv) parts = g_strsplit(signed_text ? signed_text : "", old_sha, 2);
    g_autofree char *edited = g_strjoinv(new_sha, parts);
    g_file_set_contents(path, edited, -1, NULL);

    g_autoptr(GError) err = NULL;
    g_autofree char *cache = download("edited", &err);
    CHECK(err == NULL);
    g_autoptr(GError) verr = NULL;
    CHECK(!ml_image_ubuntu_verify_packages(cache, keyring, &verr));
    CHECK(verr && verr->code == ML_ERR_FETCH && strstr(verr->message, "BAD"));
    if (verr)
        fprintf(stderr, "edited InRelease: %s\n", verr->message);
}

/* Unsigned lines after the signature must not be read as part of the signed text. */
static void test_unsigned_text_appended(void)
{
    make_archive("appended");
    g_autofree char *path = archive_path("appended", "dists/noble/InRelease");
    g_autofree char *text = NULL;
    g_file_get_contents(path, &text, NULL, NULL);
    g_autofree char *more = g_strconcat(text ? text : "", "SHA256:\n 2222 1 main/x\n", NULL);
    g_file_set_contents(path, more, -1, NULL);
    g_autoptr(GError) err = NULL;
    g_autofree char *cache = download("appended", &err);
    CHECK(err == NULL);
    g_autoptr(GError) verr = NULL;
    CHECK(!ml_image_ubuntu_verify_packages(cache, keyring, &verr));
    CHECK(verr && strstr(verr->message, "not one clearsigned message"));
    g_autofree char *inrelease = cached(cache, INRELEASE);
    CHECK(!exists(inrelease));
}

/* A captive portal answers every URL with the same HTML page and status 200. */
static void test_html_page(const char *rel, const char *what, const char *local)
{
    const char *page = "<!DOCTYPE html>\n<html><head><title>Welcome to Airport WiFi</title>"
                       "</head><body>Accept the terms to continue</body></html>\n";
    g_autofree char *name = g_strdup_printf("portal-%d", cache_serial + 1);
    make_archive(name);
    g_autofree char *path = archive_path(name, rel);
    put(path, page, strlen(page));

    g_autoptr(GError) err = NULL;
    g_autofree char *cache = download(name, &err);
    CHECK(err && err->code == ML_ERR_FETCH && strstr(err->message, "HTML page") &&
          strstr(err->message, rel) && strstr(err->message, what) &&
          strstr(err->message, "captive portal") && strstr(err->message, "run the command again"));
    if (err)
        fprintf(stderr, "portal instead of %s: %s\n", rel, err->message);
    g_autofree char *kept = cached(cache, local);
    CHECK(!exists(kept));
}

/* gpgv hangs (a stand-in that sleeps, found first on PATH as the real one is): it is stopped
 * at its deadline, the file is not trusted, and the message says what hung on which file. */
static void test_gpgv_deadline(void)
{
    make_archive("hang");
    g_autoptr(GError) err = NULL;
    g_autofree char *cache = download("hang", &err);
    CHECK(err == NULL);
    g_autofree char *bin = g_build_filename(tmp, "hanging-bin", NULL);
    g_mkdir_with_parents(bin, 0755);
    g_autofree char *gpgv = g_build_filename(bin, "gpgv", NULL);
    g_file_set_contents(gpgv, "#!/bin/sh\nexec sleep 30\n", -1, NULL);
    chmod(gpgv, 0755);
    g_autofree char *saved = g_strdup(g_getenv("PATH"));
    g_autofree char *path = g_strconcat(bin, ":", saved, NULL);
    g_setenv("PATH", path, TRUE);
    ml_apt_test_set_gpgv_timeout(2);

    double start = ml_now();
    g_autoptr(GError) verr = NULL;
    CHECK(!ml_image_ubuntu_verify_packages(cache, keyring, &verr));
    double took = ml_now() - start;
    g_setenv("PATH", saved, TRUE);
    ml_apt_test_set_gpgv_timeout(0);
    CHECK(took >= 1.5 && took < 8);
    CHECK(verr && verr->code == ML_ERR_HOST && strstr(verr->message, "gpgv did not finish") &&
          strstr(verr->message, "/hang/ubuntu/dists/noble/InRelease") &&
          strstr(verr->message, "within 2 s") && strstr(verr->message, "nothing was trusted"));
    if (verr)
        fprintf(stderr, "hanging gpgv (%.1f s): %s\n", took, verr->message);

    /* The real gpgv, with the default deadline, then verifies the same cache. */
    g_autoptr(GError) again = NULL;
    CHECK(ml_image_ubuntu_verify_packages(cache, keyring, &again));
    if (again)
        fprintf(stderr, "after the hang: %s\n", again->message);
}

/* A FIFO in the cache under the InRelease's or an index's name is refused at once, in a child
 * so that a read that blocks for ever fails the test instead of hanging it. */
static void test_fifo_in_cache(void)
{
    make_archive("fifo");
    g_autoptr(GError) err = NULL;
    g_autofree char *cache = download("fifo", &err);
    CHECK(err == NULL);
    const char *names[] = {INRELEASE, MAIN_INDEX};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *path = cached(cache, names[i]);
        g_autofree char *saved = g_strconcat(path, ".saved", NULL);
        CHECK(rename(path, saved) == 0 && mkfifo(path, 0644) == 0);
        int fds[2];
        CHECK(pipe(fds) == 0);
        pid_t child = fork();
        if (child == 0) {
            close(fds[0]);
            g_autoptr(GError) verr = NULL;
            bool ok = ml_image_ubuntu_verify_packages(cache, keyring, &verr);
            if (verr && write(fds[1], verr->message, strlen(verr->message)) < 0)
                _exit(3);
            _exit(ok ? 0 : 1);
        }
        close(fds[1]);
        double until = ml_now() + 5;
        int status = 0;
        pid_t r = 0;
        while ((r = waitpid(child, &status, WNOHANG)) == 0 && ml_now() < until)
            g_usleep(20 * 1000);
        if (r == 0) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
        }
        char msg[1024] = "";
        ssize_t n = r ? read(fds[0], msg, sizeof(msg) - 1) : 0;
        msg[n > 0 ? n : 0] = '\0';
        close(fds[0]);
        CHECK(r == child && WIFEXITED(status) && WEXITSTATUS(status) == 1);
        CHECK(strstr(msg, path) && strstr(msg, "not a regular file"));
        if (i == 0)
            fprintf(stderr, "FIFO for the InRelease: %s\n", msg);
        unlink(path);
        CHECK(rename(saved, path) == 0);
    }
}

/* A catalogue whose packages could not be verified is refused when it is read. */
static void test_catalogue_rules(void)
{
    g_autofree char *path = g_build_filename(images, "ubuntu-24.04.conf", NULL);
    g_autofree char *img_hash = ml_sha256_hex("image", 5);
    g_autofree char *base = g_strdup_printf("name = ubuntu-24.04\n"
                                            "image_url = http://127.0.0.1:%d/release/fake.img\n"
                                            "sums_file = SHA256SUMS\n"
                                            "image_sha256 = %s\n",
                                            port, img_hash);
    g_autofree char *cache = g_build_filename(tmp, "cache-rules", NULL);

    g_autofree char *no_source =
        g_strconcat(base, "deb = http://x.invalid/ubuntu/" DEB_MAIN "\n", NULL);
    g_file_set_contents(path, no_source, -1, NULL);
    g_autoptr(GError) err = NULL;
    CHECK(!ml_image_ubuntu_download(cache, &err));
    CHECK(err && err->code == ML_ERR_IMAGE && strstr(err->message, "lacks one of apt_source"));

    g_autofree char *outside = g_strconcat(base,
                                           "apt_source = http://x.invalid/ubuntu noble main\n"
                                           "apt_arch = amd64\n"
                                           "apt_keyring = /usr/share/keyrings/k.gpg\n"
                                           "deb = http://y.invalid/ubuntu/" DEB_MAIN "\n",
                                           NULL);
    g_file_set_contents(path, outside, -1, NULL);
    g_autoptr(GError) err2 = NULL;
    CHECK(!ml_image_ubuntu_download(cache, &err2));
    CHECK(err2 && err2->code == ML_ERR_IMAGE && strstr(err2->message, "http://y.invalid/") &&
          strstr(err2->message, "not in the archive http://x.invalid/ubuntu/"));

    g_autofree char *bad_suite =
        g_strconcat(base, "apt_source = http://x.invalid/ubuntu ../x main\n", NULL);
    g_file_set_contents(path, bad_suite, -1, NULL);
    g_autoptr(GError) err3 = NULL;
    CHECK(!ml_image_ubuntu_download(cache, &err3));
    CHECK(err3 && strstr(err3->message, ":5: expected 'apt_source = "));

    /* Each broken line is named by its file and line number, blank and comment lines
     * counted. */
    static const struct {
        const char *line, *says;
    } broken[] = {
        {"image_sha256 = 0123", "ubuntu-24.04.conf:7: image_sha256 '0123' is not 64 hex digits"},
        {"apt_arch = am d64", "ubuntu-24.04.conf:7: apt_arch 'am d64' is not an architecture"},
        {"apt_keyring = k.gpg", "ubuntu-24.04.conf:7: apt_keyring 'k.gpg' must be an absolute"},
        {"colour = blue", "ubuntu-24.04.conf:7: unknown key 'colour'"},
        {"no equals sign", "ubuntu-24.04.conf:7: expected 'key = value', got 'no equals sign'"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(broken); i++) {
        g_autofree char *text = g_strconcat(base, "\n# a comment\n", broken[i].line, "\n", NULL);
        g_file_set_contents(path, text, -1, NULL);
        g_autoptr(GError) e = NULL;
        CHECK(!ml_image_ubuntu_download(cache, &e));
        CHECK(e && e->code == ML_ERR_IMAGE && strstr(e->message, broken[i].says));
        if (e && !strstr(e->message, broken[i].says))
            fprintf(stderr, "got: %s\n", e->message);
    }
}

static bool make_keys(void)
{
    g_autofree char *home = g_build_filename(tmp, "gnupg", NULL);
    g_mkdir_with_parents(home, 0700);
    g_setenv("GNUPGHOME", home, TRUE);
    const char *uids[] = {TRUSTED_UID, OTHER_UID};
    for (size_t i = 0; i < G_N_ELEMENTS(uids); i++) {
        const char *argv[] = {"gpg",          "--batch", "--pinentry-mode", "loopback",
                              "--passphrase", "",        "--quick-gen-key", uids[i],
                              "ed25519",      "sign",    "never",           NULL};
        if (!run(argv))
            return false;
    }
    keyring = g_build_filename(tmp, "archive-keyring.gpg", NULL);
    const char *argv[] = {"gpg",   "--batch",  "--yes",     "--output",
                          keyring, "--export", TRUSTED_UID, NULL};
    return run(argv) && exists(keyring);
}

static void stop_agent(void)
{
    const char *argv[] = {"gpgconf", "--kill", "gpg-agent", NULL};
    ml_spawn(argv, NULL, NULL);
}

int main(void)
{
    ml_log_init();
    ml_log_set_quiet(true);
    const char *needed[] = {"python3", "gpg", "gpgv", "gzip"};
    for (size_t i = 0; i < G_N_ELEMENTS(needed); i++) {
        g_autofree char *found = g_find_program_in_path(needed[i]);
        if (!found) {
            printf("%s is missing (Debian packages: python3, gpg, gpgv, gzip); skipping\n",
                   needed[i]);
            return 77;
        }
    }
    tmp = g_dir_make_tmp("meshlab-apt-XXXXXX", NULL);
    www = g_build_filename(tmp, "www", NULL);
    images = g_build_filename(tmp, "images", NULL);
    g_mkdir_with_parents(images, 0755);
    g_autofree char *img = g_build_filename(www, "release", "fake.img", NULL);
    put(img, "image", 5);
    g_autofree char *sums = g_build_filename(www, "release", "SHA256SUMS", NULL);
    g_autofree char *img_hash = ml_sha256_hex("image", 5);
    g_autofree char *sums_text = g_strdup_printf("%s *fake.img\n", img_hash);
    put(sums, sums_text, strlen(sums_text));
    g_setenv("MESHLAB_IMAGES_DIR", images, TRUE);

    CHECK(make_keys());
    GPid pid = http_server_start(www, NULL, &port);
    CHECK(pid != 0);
    if (pid && keyring) {
        test_catalogue_rules();
        test_good_chain();
        test_second_unknown_signature();
        test_tampered_deb();
        test_tampered_packages();
        test_foreign_signature();
        test_changed_after_signing();
        test_unsigned_text_appended();
        test_gpgv_deadline();
        test_fifo_in_cache();
        test_html_page("dists/noble/InRelease", "InRelease", INRELEASE);
        test_html_page("dists/noble/main/binary-amd64/Packages.gz", "Packages index", MAIN_INDEX);
        test_html_page(DEB_UNIVERSE, "Debian package", "libthing2_2.0-1_amd64.deb");
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        g_spawn_close_pid(pid);
    }
    stop_agent();
    g_unsetenv("MESHLAB_IMAGES_DIR");
    rm_rf(tmp);
    g_free(tmp);
    g_free(www);
    g_free(images);
    g_free(keyring);
    return check_finish();
}
