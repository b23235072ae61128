#include "cache/artifacts.h"

#include "cache/checksum.h"
#include "cache/fetch.h"
#include "cache/gobuild.h"
#include "core/spawn.h"
#include "core/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    SUMS_MAX_BYTES = 1 << 20,
    SUMS_DEADLINE_S = 120,
};

/* One pinned download. No SHA-256 is pinned yet: no public source this project could read lists
 * the hashes of these two files, so the first verified download records them (trust on first
 * use, against the checksum file the publisher serves beside the file). Put the hash in sha256
 * once it is known from a trusted copy; it is then checked before anything is downloaded. */
struct artifact {
    const char *name;
    const char *version;
    const char *url;
    const char *sums_url;   /* the publisher's checksum file for url */
    const char *sums_local; /* its name in CACHE/downloads (checksums.txt is too generic) */
    const char *sums_entry; /* the name to look up in it, or NULL: the file holds one bare hash */
    const char *sha256;     /* pinned, or NULL */
    guint64 max_bytes;      /* a few times the published size: past it the mirror sends junk */
    double deadline_s;      /* for one transfer, which the next run resumes */
};

#define TS_FILE "tailscale_" ML_TAILSCALE_VERSION "_amd64.tgz"
#define TS_DIR "tailscale-" ML_TAILSCALE_VERSION
#define TS_TOP "tailscale_" ML_TAILSCALE_VERSION "_amd64"
#define HS_FILE "headscale_" ML_HEADSCALE_VERSION "_linux_amd64"
#define HS_RELEASE "https://github.com/juanfont/headscale/releases/download/v" ML_HEADSCALE_VERSION

static const struct artifact artifacts[] = {
    {
        .name = "tailscale",
        .version = ML_TAILSCALE_VERSION,
        /* The static build: one archive, no distribution packaging, same on every guest. */
        .url = "https://pkgs.tailscale.com/stable/" TS_FILE,
        .sums_url = "https://pkgs.tailscale.com/stable/" TS_FILE ".sha256",
        .sums_local = TS_FILE ".sha256",
        .sums_entry = NULL,
        .sha256 = NULL,
        .max_bytes = 128u << 20, /* about 30 MB */
        .deadline_s = 1800,
    },
    {
        .name = "headscale",
        .version = ML_HEADSCALE_VERSION,
        .url = HS_RELEASE "/" HS_FILE,
        .sums_url = HS_RELEASE "/checksums.txt",
        .sums_local = "headscale_" ML_HEADSCALE_VERSION "_checksums.txt",
        .sums_entry = HS_FILE,
        .sha256 = NULL,
        .max_bytes = 256u << 20, /* about 60 MB */
        .deadline_s = 3600,
    },
};

const char *const ml_artifact_names[] = {"tailscale", "headscale", NULL};

static const struct artifact *find(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(artifacts); i++) {
        if (name && strcmp(artifacts[i].name, name) == 0)
            return &artifacts[i];
    }
    return NULL;
}

bool ml_artifact_source(const char *name, const char **ret_url, const char **ret_sums_url,
                        const char **ret_sums_entry)
{
    const struct artifact *a = find(name);
    if (!a)
        return false;
    *ret_url = a->url;
    *ret_sums_url = a->sums_url;
    *ret_sums_entry = a->sums_entry;
    return true;
}

bool ml_artifact_known(const char *name)
{
    return find(name) != NULL;
}

const char *ml_artifact_version(const char *name)
{
    const struct artifact *a = find(name);
    return a ? a->version : NULL;
}

static const char *base_name(const char *url)
{
    const char *slash = strrchr(url, '/');
    return slash ? slash + 1 : url;
}

/* The URL to use: the publisher's, or the same file name under $MESHLAB_ARTIFACT_MIRROR. */
static char *effective_url(const char *url)
{
    const char *mirror = getenv("MESHLAB_ARTIFACT_MIRROR");
    if (!mirror || !*mirror)
        return g_strdup(url);
    size_t len = strlen(mirror);
    return g_strdup_printf("%.*s/%s", (int)(mirror[len - 1] == '/' ? len - 1 : len), mirror,
                           base_name(url));
}

struct layout {
    char *downloads;
    char *known;
    char *file;     /* the artifact */
    char *sums;     /* the local copy of its checksum file */
    char *verified; /* written once the artifact has verified: "sha256  file" */
    char *dir;      /* tailscale only: the extracted binaries */
};

static void layout_clear(struct layout *l)
{
    g_free(l->downloads);
    g_free(l->known);
    g_free(l->file);
    g_free(l->sums);
    g_free(l->verified);
    g_free(l->dir);
}

static void layout_init(struct layout *l, const struct artifact *a, const char *cache_dir)
{
    g_autofree char *abs = g_canonicalize_filename(cache_dir, NULL);
    l->downloads = g_build_filename(abs, "downloads", NULL);
    l->known = g_build_filename(l->downloads, "known-hashes", NULL);
    l->file = g_build_filename(l->downloads, base_name(a->url), NULL);
    l->sums = g_build_filename(l->downloads, a->sums_local, NULL);
    l->verified = g_strconcat(l->file, ".verified", NULL);
    l->dir = strcmp(a->name, "tailscale") == 0 ? g_build_filename(abs, TS_DIR, NULL) : NULL;
}

static bool exists(const char *path)
{
    return g_file_test(path, G_FILE_TEST_EXISTS);
}

static bool extracted(const struct layout *l)
{
    g_autofree char *ts = g_build_filename(l->dir, "tailscale", NULL);
    g_autofree char *tsd = g_build_filename(l->dir, "tailscaled", NULL);
    return g_file_test(ts, G_FILE_TEST_IS_REGULAR) && g_file_test(tsd, G_FILE_TEST_IS_REGULAR);
}

static bool ready(const struct layout *l)
{
    if (!exists(l->file) || !exists(l->verified))
        return false;
    return !l->dir || extracted(l);
}

/* A build of name from images/go (gobuild.h): its binaries and its provenance.json. */
static bool built(const char *cache_dir, const struct artifact *a)
{
    g_autofree char *dir = ml_gobuild_dir(cache_dir, a->name);
    g_autofree char *prov = g_build_filename(dir, "provenance.json", NULL);
    static const char *const tailscale_bins[] = {"tailscale", "tailscaled", NULL};
    static const char *const headscale_bins[] = {"headscale", NULL};
    const char *const *bins = strcmp(a->name, "tailscale") ? headscale_bins : tailscale_bins;
    bool ok = g_file_test(prov, G_FILE_TEST_IS_REGULAR);
    for (size_t i = 0; ok && bins[i]; i++) {
        g_autofree char *bin = g_build_filename(dir, bins[i], NULL);
        ok = g_file_test(bin, G_FILE_TEST_IS_REGULAR);
    }
    return ok;
}

char *ml_artifact_path(const char *cache_dir, const char *name)
{
    const struct artifact *a = find(name);
    if (!a || !cache_dir)
        return NULL;
    struct layout l = {0};
    layout_init(&l, a, cache_dir);
    char *path = NULL;
    if (ready(&l))
        path = g_strdup(l.dir ? l.dir : l.file);
    layout_clear(&l);
    if (path || !built(cache_dir, a))
        return path;
    g_autofree char *dir = ml_gobuild_dir(cache_dir, a->name);
    return strcmp(a->name, "tailscale") ? g_build_filename(dir, "headscale", NULL)
                                        : g_steal_pointer(&dir);
}

struct json_object *ml_artifact_provenance(const char *cache_dir, const char *name)
{
    const struct artifact *a = find(name);
    if (!a || !cache_dir)
        return NULL;
    struct layout l = {0};
    layout_init(&l, a, cache_dir);
    struct json_object *p = NULL;
    g_autofree char *stamp = NULL;
    if (ready(&l) && g_file_get_contents(l.verified, &stamp, NULL, NULL)) {
        g_autofree char *sha = g_strndup(stamp, strcspn(stamp, " \n"));
        p = json_object_new_object();
        json_object_object_add(p, "name", json_object_new_string(a->name));
        json_object_object_add(p, "version", json_object_new_string(a->version));
        json_object_object_add(p, "obtained",
                               json_object_new_string("downloaded from its publisher"));
        json_object_object_add(p, "url", json_object_new_string(a->url));
        json_object_object_add(p, "sha256", json_object_new_string(sha));
    } else if (built(cache_dir, a)) {
        g_autofree char *dir = ml_gobuild_dir(cache_dir, a->name);
        g_autofree char *file = g_build_filename(dir, "provenance.json", NULL);
        p = json_object_from_file(file);
    }
    layout_clear(&l);
    return p;
}

bool ml_artifacts_missing(const char *cache_dir, GString *ret_missing)
{
    bool missing = false;
    for (size_t i = 0; i < G_N_ELEMENTS(artifacts); i++) {
        const struct artifact *a = &artifacts[i];
        struct layout l = {0};
        layout_init(&l, a, cache_dir);
        if (!ready(&l) && !built(cache_dir, a)) {
            missing = true;
            if (ret_missing) {
                bool have_file = exists(l.file), have_sums = exists(l.sums);
                if (!have_file)
                    g_string_append_printf(ret_missing, "%s\n", l.file);
                if (!have_sums)
                    g_string_append_printf(ret_missing, "%s\n", l.sums);
                /* Both copied in by hand but never checked: the fetch verifies them offline. */
                if (have_file && have_sums && !exists(l.verified))
                    g_string_append_printf(ret_missing,
                                           "%s (present, not verified yet: run 'meshlab fetch "
                                           "%s')\n",
                                           l.file, a->name);
                else if (have_file && have_sums && l.dir)
                    g_string_append_printf(ret_missing,
                                           "%s/tailscale and %s/tailscaled (extracted by "
                                           "'meshlab fetch tailscale')\n",
                                           l.dir, l.dir);
            }
        }
        layout_clear(&l);
    }
    return missing;
}

static char *read_expected_hash(const struct artifact *a, const struct layout *l,
                                const char *sums_url, GError **err)
{
    struct stat st;
    if (stat(l->sums, &st) != 0 || st.st_size > SUMS_MAX_BYTES) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "'%s' is missing or larger than %d bytes; that is not the checksum file "
                    "published at %s",
                    l->sums, SUMS_MAX_BYTES, sums_url);
        return NULL;
    }
    g_autofree char *text = NULL;
    g_autoptr(GError) read_err = NULL;
    if (!g_file_get_contents(l->sums, &text, NULL, &read_err)) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH, "cannot read the checksum file: %s",
                    read_err->message);
        return NULL;
    }
    /* tailscale's FILE.sha256 holds the bare hash (no entry), headscale's checksums.txt
     * a "HASH  NAME" line per file. */
    char *hash = ml_sha256_list_lookup(text, a->sums_entry);
    if (!hash) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "the checksum file %s (copy in '%s') has no SHA-256 for '%s'; the release "
                    "does not hold that file, check the pin in src/cache/artifacts.c",
                    sums_url, l->sums, a->sums_entry ? a->sums_entry : base_name(a->url));
        return NULL;
    }
    if (a->sha256 && g_ascii_strcasecmp(a->sha256, hash) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                    "the pinned SHA-256 %s of %s %s disagrees with %s, which lists %s; the pin "
                    "or the checksum file is wrong",
                    a->sha256, a->name, a->version, sums_url, hash);
        g_free(hash);
        return NULL;
    }
    return hash;
}

static bool remove_tree(const char *path, GError **err)
{
    if (!exists(path))
        return true;
    const char *argv[] = {"rm", "-rf", "--", path, NULL};
    return ml_spawn(argv, NULL, err);
}

/* Unpacks the two binaries into a temporary directory and renames it into place, so the
 * directory exists only when both binaries are complete. */
static bool extract_tailscale(const struct layout *l, GError **err)
{
    if (extracted(l))
        return true;
    g_autofree char *tmp = g_strconcat(l->dir, ".tmp", NULL);
    if (!remove_tree(tmp, err) || !remove_tree(l->dir, err) || !ml_mkdir_p(tmp, 0755, err))
        return false;
    ml_progress("fetch", "extracting tailscale and tailscaled into %s", l->dir);
    const char *argv[] = {"tar",
                          "-xzf",
                          l->file,
                          "-C",
                          tmp,
                          "--no-same-owner",
                          "--strip-components=1",
                          TS_TOP "/tailscale",
                          TS_TOP "/tailscaled",
                          NULL};
    g_autoptr(GError) tar_err = NULL;
    if (!ml_spawn(argv, NULL, &tar_err)) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST,
                    "cannot extract the tailscale binaries from '%s': %s; the archive verified, "
                    "so its layout is not the expected %s/{tailscale,tailscaled}",
                    l->file, tar_err->message, TS_TOP);
        remove_tree(tmp, NULL);
        return false;
    }
    const char *bins[] = {"tailscale", "tailscaled"};
    for (size_t i = 0; i < G_N_ELEMENTS(bins); i++) {
        g_autofree char *bin = g_build_filename(tmp, bins[i], NULL);
        if (chmod(bin, 0755) != 0) {
            g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot make '%s' executable: %s", bin,
                        g_strerror(errno));
            remove_tree(tmp, NULL);
            return false;
        }
    }
    if (rename(tmp, l->dir) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_HOST, "cannot move '%s' to '%s': %s", tmp, l->dir,
                    g_strerror(errno));
        remove_tree(tmp, NULL);
        return false;
    }
    return true;
}

static bool fetch_artifact(const struct artifact *a, const struct layout *l, GError **err)
{
    g_autofree char *url = effective_url(a->url);
    g_autofree char *sums_url = effective_url(a->sums_url);
    if (!ml_mkdir_p(l->downloads, 0755, err))
        return false;

    /* The checksum file of a release never changes: it is itself recorded in known-hashes on
     * first download, so a later, different copy is refused before it can vouch for anything;
     * what is not a checksum list (a portal's HTML page) is refused before it is recorded. */
    g_autofree char *sums_what = g_strdup_printf("the checksum list of %s %s", a->name, a->version);
    struct ml_fetch_request sums_req = {.url = sums_url,
                                        .dest = l->sums,
                                        .known_hashes = l->known,
                                        .form = ML_FETCH_SUMS,
                                        .what = sums_what,
                                        .max_bytes = SUMS_MAX_BYTES,
                                        .deadline_s = SUMS_DEADLINE_S};
    if (!ml_fetch(&sums_req, err))
        return false;
    g_autofree char *hash = read_expected_hash(a, l, sums_url, err);
    if (!hash)
        return false;

    unlink(l->verified);
    g_autofree char *what = g_strdup_printf("%s %s", a->name, a->version);
    struct ml_fetch_request req = {.url = url,
                                   .dest = l->file,
                                   .expected_sha256 = hash,
                                   .known_hashes = l->known,
                                   .what = what,
                                   .max_bytes = a->max_bytes,
                                   .deadline_s = a->deadline_s};
    if (!ml_fetch(&req, err))
        return false;
    g_autofree char *stamp = g_strdup_printf("%s  %s\n", hash, base_name(a->url));
    if (!ml_write_file(l->verified, stamp, -1, 0644, err))
        return false;
    ml_progress("fetch", "%s %s verified: SHA-256 %s", a->name, a->version, hash);
    return !l->dir || extract_tailscale(l, err);
}

bool ml_artifact_fetch(const char *cache_dir, const char *name, GError **err)
{
    const struct artifact *a = find(name);
    if (!a) {
        g_set_error(err, ML_ERROR, ML_ERR_INPUT,
                    "unknown artifact '%s'; known: tailscale, "
                    "headscale",
                    name ? name : "");
        return false;
    }
    struct layout l = {0};
    layout_init(&l, a, cache_dir);
    bool ok = fetch_artifact(a, &l, err);
    layout_clear(&l);
    return ok;
}
