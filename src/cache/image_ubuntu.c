#include "cache/image_ubuntu.h"

#include "cache/apt_verify.h"
#include "cache/checksum.h"
#include "cache/fetch.h"
#include "core/spawn.h"
#include "core/util.h"

#include <errno.h>
#include <gio/gio.h>
#include <guestfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bump when the customisation below changes, so cached images built the old way are not reused. */
#define RECIPE_VERSION "2" /* 2: packages verified against the signed archive */
#define DEB_DIR_IN_GUEST "/var/tmp/meshlab-debs"
/* A TCG appliance, the package checks and the installs take minutes; an hour is a hang. */
#define CUSTOMISE_TIMEOUT_S 3600.0

/* What each download may weigh and take: a few times its published size (past that the mirror
 * sends something else), and an hour or two for the image on a slow line; the next run resumes
 * a transfer the deadline stopped. */
#define IMAGE_MAX_BYTES ((guint64)1 << 30) /* noble's cloud image is about 600 MB */
#define IMAGE_DEADLINE_S 7200.0
#define SUMS_MAX_BYTES ((guint64)1 << 20) /* SHA256SUMS is a few kB */
#define SUMS_DEADLINE_S 120.0
#define INRELEASE_MAX_BYTES ((guint64)16 << 20) /* about 250 kB */
#define INRELEASE_DEADLINE_S 300.0
#define INDEX_MAX_BYTES ((guint64)128 << 20) /* universe's Packages.gz is about 20 MB */
#define DEB_MAX_BYTES ((guint64)128 << 20)   /* the packages listed are below 2 MB */
#define INDEX_DEADLINE_S 1800.0

struct download {
    char *url;
    char *mirror; /* tried when url fails, or NULL */
    char *sha256; /* pinned, or NULL (a deb then has only its signed index) */
    char *file;   /* name in cache_dir/downloads */
};

/* Where the packages come from, as a sources.list line names it, and whose keys sign it. */
struct apt_source {
    char *uri;         /* the archive root, e.g. http://archive.ubuntu.com/ubuntu */
    char *suite;       /* dists/SUITE */
    char **components; /* main universe */
    char *arch;        /* binary-ARCH */
    char *keyring;     /* the archive keyring's path inside the cloud image */
};

struct catalogue {
    char *path;
    char *name;
    char *sums_file;
    struct download image;
    struct apt_source apt;
    GPtrArray *debs; /* struct download * */
};

static void download_free(struct download *d)
{
    if (!d)
        return;
    g_free(d->url);
    g_free(d->mirror);
    g_free(d->sha256);
    g_free(d->file);
}

static void download_free_ptr(gpointer p)
{
    download_free(p);
    g_free(p);
}

static void catalogue_free(struct catalogue *c)
{
    if (!c)
        return;
    g_free(c->path);
    g_free(c->name);
    g_free(c->sums_file);
    download_free(&c->image);
    g_free(c->apt.uri);
    g_free(c->apt.suite);
    g_strfreev(c->apt.components);
    g_free(c->apt.arch);
    g_free(c->apt.keyring);
    if (c->debs)
        g_ptr_array_unref(c->debs);
    g_free(c);
}
typedef struct catalogue catalogue;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(catalogue, catalogue_free)

char *ml_image_catalogue_dir(void)
{
    const char *env = getenv("MESHLAB_IMAGES_DIR");
    if (env && *env)
        return g_strdup(env);
    return ml_data_dir("images");
}

/* The last path component of a URL, which is also its name in the cache. */
static char *url_file_name(const char *url)
{
    const char *end = url + strcspn(url, "?#");
    const char *slash = end;
    while (slash > url && slash[-1] != '/')
        slash--;
    return g_strndup(slash, (gsize)(end - slash));
}

static bool parse_download(struct download *d, const char *value, const char *path, int lineno,
                           GError **err)
{
    g_auto(GStrv) words = g_strsplit_set(value, " \t", -1);
    const char *url = NULL, *hash = NULL;
    int count = 0;
    for (char **w = words; *w; w++) {
        if (!**w)
            continue;
        if (count == 0)
            url = *w;
        else
            hash = *w;
        count++;
    }
    if (count > 2)
        url = NULL;
    g_autofree char *file = url ? url_file_name(url) : NULL;
    if (!url || !*file || (hash && !ml_sha256_hex_valid(hash)) ||
        !(g_str_has_prefix(url, "http://") || g_str_has_prefix(url, "https://"))) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                    "%s:%d: expected 'http(s)://.../FILE [SHA256]', got '%s'", path, lineno, value);
        return false;
    }
    d->url = g_strdup(url);
    d->sha256 = hash ? g_ascii_strdown(hash, -1) : NULL;
    d->file = g_steal_pointer(&file);
    return true;
}

/* A suite or component: it becomes part of a URL and of a file name in the cache. */
static bool valid_apt_word(const char *s)
{
    return *s && *s != '.' && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.-_") == strlen(s);
}

/* "URI SUITE COMPONENT...", as in a sources.list line. */
static bool parse_apt_source(struct apt_source *a, const char *value, const char *path, int lineno,
                             GError **err)
{
    g_auto(GStrv) words = g_strsplit_set(value, " \t", -1);
    g_autoptr(GPtrArray) parts = g_ptr_array_new();
    for (char **w = words; *w; w++)
        if (**w)
            g_ptr_array_add(parts, *w);
    bool ok = parts->len >= 3;
    const char *uri = ok ? g_ptr_array_index(parts, 0) : "";
    ok = ok && (g_str_has_prefix(uri, "http://") || g_str_has_prefix(uri, "https://")) &&
         !strpbrk(uri, "?#");
    for (guint i = 1; ok && i < parts->len; i++)
        ok = valid_apt_word(g_ptr_array_index(parts, i));
    if (!ok) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                    "%s:%d: expected 'apt_source = http(s)://ARCHIVE SUITE COMPONENT...', got "
                    "'%s'",
                    path, lineno, value);
        return false;
    }
    g_free(a->uri);
    g_free(a->suite);
    g_strfreev(a->components);
    a->uri = g_strndup(uri, strlen(uri) - (g_str_has_suffix(uri, "/") ? 1 : 0));
    a->suite = g_strdup(g_ptr_array_index(parts, 1));
    a->components = g_new0(char *, parts->len - 1);
    for (guint i = 2; i < parts->len; i++)
        a->components[i - 2] = g_strdup(g_ptr_array_index(parts, i));
    return true;
}

/* The part of a deb URL below the archive root: what the Packages index calls Filename. */
static const char *pool_path(const struct catalogue *c, const struct download *d)
{
    return d->url + strlen(c->apt.uri) + 1;
}

/* Every package is checked against the archive's signed indexes, so it must come from there. */
static bool check_apt_source(const struct catalogue *c, GError **err)
{
    if (c->debs->len == 0)
        return true;
    if (!c->apt.uri || !c->apt.arch || !c->apt.keyring) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                    "%s lists packages but lacks one of apt_source, apt_arch, apt_keyring: "
                    "without them the packages cannot be verified",
                    c->path);
        return false;
    }
    for (guint i = 0; i < c->debs->len; i++) {
        const struct download *d = g_ptr_array_index(c->debs, i);
        size_t n = strlen(c->apt.uri);
        if (strncmp(d->url, c->apt.uri, n) != 0 || d->url[n] != '/' || strstr(d->url, "/../")) {
            g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                        "%s: the package %s is not in the archive %s/ named by apt_source; "
                        "packages are verified against that archive's signed index, so each "
                        "must come from it",
                        c->path, d->url, c->apt.uri);
            return false;
        }
    }
    return true;
}

static void replace(char **field, const char *value)
{
    g_free(*field);
    *field = g_strdup(value);
}

/* One "key = value" line of a catalogue entry; at is "PATH:LINE" for the error. */
static bool catalogue_set(struct catalogue *c, const char *key, const char *value, const char *at,
                          int lineno, GError **err)
{
    if (strcmp(key, "name") == 0) {
        replace(&c->name, value);
    } else if (strcmp(key, "image_url") == 0) {
        replace(&c->image.url, value);
    } else if (strcmp(key, "image_mirror") == 0) {
        replace(&c->image.mirror, value);
    } else if (strcmp(key, "image_sha256") == 0) {
        if (!ml_sha256_hex_valid(value)) {
            g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "%s: image_sha256 '%s' is not 64 hex digits",
                        at, value);
            return false;
        }
        g_free(c->image.sha256);
        c->image.sha256 = g_ascii_strdown(value, -1);
    } else if (strcmp(key, "sums_file") == 0) {
        replace(&c->sums_file, value);
    } else if (strcmp(key, "apt_source") == 0) {
        return parse_apt_source(&c->apt, value, c->path, lineno, err);
    } else if (strcmp(key, "apt_arch") == 0) {
        if (!valid_apt_word(value)) {
            g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                        "%s: apt_arch '%s' is not an architecture name", at, value);
            return false;
        }
        replace(&c->apt.arch, value);
    } else if (strcmp(key, "apt_keyring") == 0) {
        if (*value != '/') {
            g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                        "%s: apt_keyring '%s' must be an absolute path inside the image", at,
                        value);
            return false;
        }
        replace(&c->apt.keyring, value);
    } else if (strcmp(key, "deb") == 0) {
        struct download *d = g_new0(struct download, 1);
        g_ptr_array_add(c->debs, d);
        return parse_download(d, value, c->path, lineno, err);
    } else {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "%s: unknown key '%s'", at, key);
        return false;
    }
    return true;
}

/* The entry's lines: "key = value", blank lines and '#' comments skipped. */
static bool catalogue_parse(struct catalogue *c, char *text, GError **err)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        char *line = g_strstrip(lines[i]);
        if (!*line || *line == '#')
            continue;
        g_autofree char *at = g_strdup_printf("%s:%d", c->path, i + 1);
        char *eq = strchr(line, '=');
        if (!eq) {
            g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "%s: expected 'key = value', got '%s'", at,
                        line);
            return false;
        }
        *eq = '\0';
        if (!catalogue_set(c, g_strstrip(line), g_strstrip(eq + 1), at, i + 1, err))
            return false;
    }
    if (!c->name || !c->image.url || !c->image.sha256 || !c->sums_file) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                    "%s lacks one of name, image_url, image_sha256, sums_file", c->path);
        return false;
    }
    return true;
}

static struct catalogue *catalogue_load(const char *name, GError **err)
{
    g_autofree char *dir = ml_image_catalogue_dir();
    g_autofree char *conf = g_strconcat(name, ".conf", NULL);
    g_autoptr(catalogue) c = g_new0(struct catalogue, 1);
    c->path = g_build_filename(dir, conf, NULL);
    c->debs = g_ptr_array_new_with_free_func(download_free_ptr);

    g_autofree char *text = NULL;
    g_autoptr(GError) read_err = NULL;
    if (!g_file_get_contents(c->path, &text, NULL, &read_err)) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                    "cannot read the image catalogue entry: %s; set MESHLAB_IMAGES_DIR to the "
                    "directory holding %s",
                    read_err->message, conf);
        return NULL;
    }
    if (!catalogue_parse(c, text, err))
        return NULL;
    c->image.file = url_file_name(c->image.url);
    if (!check_apt_source(c, err))
        return NULL;
    return g_steal_pointer(&c);
}

/* The sums list is published beside the image, so its URL follows from the image's. */
static char *sibling_url(const char *url, const char *name)
{
    if (!url)
        return NULL;
    g_autofree char *file = url_file_name(url);
    g_autofree char *dir = g_strndup(url, strcspn(url, "?#") - strlen(file));
    return g_strconcat(dir, name, NULL);
}

struct paths {
    char *downloads;
    char *known;
    char *sums; /* local copy of the checksum list */
    char *sums_uri;
    char *keyring; /* the archive keyring, as read out of the verified image */
};

static void paths_clear(struct paths *p)
{
    g_free(p->downloads);
    g_free(p->known);
    g_free(p->sums);
    g_free(p->sums_uri);
    g_free(p->keyring);
}

/* The archive's files below dists/SUITE/: the signed InRelease and one Packages index per
 * component ("main/binary-amd64/Packages.gz"). */
static char *index_name(const struct catalogue *c, const char *component)
{
    return g_strdup_printf("%s/binary-%s/Packages.gz", component, c->apt.arch);
}

static char *dists_url(const struct catalogue *c, const char *rel)
{
    return g_strdup_printf("%s/dists/%s/%s", c->apt.uri, c->apt.suite, rel);
}

/* Named like apt's lists: NAME.SUITE_main_binary-amd64_Packages.gz. */
static char *dists_local(const struct catalogue *c, const struct paths *p, const char *rel)
{
    g_autofree char *flat = g_strdup_printf("%s.%s_%s", c->name, c->apt.suite, rel);
    g_strdelimit(flat, "/", '_');
    return g_build_filename(p->downloads, flat, NULL);
}

static bool paths_init(struct paths *p, const struct catalogue *c, const char *cache_dir,
                       GError **err)
{
    /* The checksum list is handed to libcurl as a file:// URL, which must be absolute. */
    g_autofree char *abs = g_canonicalize_filename(cache_dir, NULL);
    p->downloads = g_build_filename(abs, "downloads", NULL);
    p->known = g_build_filename(p->downloads, "known-hashes", NULL);
    g_autofree char *sums_name = g_strconcat(c->name, ".", c->sums_file, NULL);
    p->sums = g_build_filename(p->downloads, sums_name, NULL);
    g_autofree char *keyring_name = g_strconcat(c->name, ".archive-keyring.gpg", NULL);
    p->keyring = g_build_filename(p->downloads, keyring_name, NULL);
    p->sums_uri = g_filename_to_uri(p->sums, NULL, err);
    return p->sums_uri != NULL;
}

/* Tries the primary URL, then the mirror: old release directories move to an archive host. */
static bool fetch_with_mirror(const struct download *d, struct ml_fetch_request req, GError **err)
{
    g_autoptr(GError) first = NULL;
    req.url = d->url;
    if (ml_fetch(&req, &first))
        return true;
    if (!d->mirror || g_error_matches(first, ML_ERROR, ML_ERR_INTERRUPTED)) {
        g_propagate_error(err, g_steal_pointer(&first));
        return false;
    }
    ml_warn("%s; trying the mirror", first->message);
    req.url = d->mirror;
    return ml_fetch(&req, err);
}

/* The archive's signed indexes: InRelease first, then one Packages index per component. */
static GPtrArray *index_files(const struct catalogue *c)
{
    GPtrArray *rel = g_ptr_array_new_with_free_func(g_free);
    if (c->debs->len == 0)
        return rel;
    g_ptr_array_add(rel, g_strdup("InRelease"));
    for (char **comp = c->apt.components; *comp; comp++)
        g_ptr_array_add(rel, index_name(c, *comp));
    return rel;
}

/* Fetches a file of the archive and checks that it is the kind of file asked for. Nothing
 * here is trusted yet: verify_packages checks the whole chain before anything is installed. */
static bool fetch_archive_file(const char *url, const char *dest, const char *pinned,
                               enum ml_apt_kind kind, GError **err)
{
    struct ml_fetch_request req = {
        .url = url,
        .dest = dest,
        .expected_sha256 = pinned,
        .what = kind == ML_APT_INRELEASE ? "the archive's InRelease"
                : kind == ML_APT_GZIP    ? "a Packages index"
                                         : "a package",
        .max_bytes = kind == ML_APT_INRELEASE ? INRELEASE_MAX_BYTES
                     : kind == ML_APT_GZIP    ? INDEX_MAX_BYTES
                                              : DEB_MAX_BYTES,
        .deadline_s = kind == ML_APT_INRELEASE ? INRELEASE_DEADLINE_S : INDEX_DEADLINE_S,
    };
    return ml_fetch(&req, err) && ml_apt_check_form(dest, kind, url, err);
}

static bool fetch_all(const struct catalogue *c, const struct paths *p, bool allow_network,
                      GError **err)
{
    g_autoptr(GPtrArray) indexes = index_files(c);
    if (!ml_mkdir_p(p->downloads, 0755, err))
        return false;

    if (!allow_network) {
        g_autoptr(GString) missing = g_string_new(NULL);
        g_autofree char *img = g_build_filename(p->downloads, c->image.file, NULL);
        if (!g_file_test(img, G_FILE_TEST_EXISTS))
            g_string_append_printf(missing, " %s", c->image.file);
        for (guint i = 0; i < indexes->len; i++) {
            g_autofree char *local = dists_local(c, p, g_ptr_array_index(indexes, i));
            if (!g_file_test(local, G_FILE_TEST_EXISTS)) {
                g_autofree char *base = g_path_get_basename(local);
                g_string_append_printf(missing, " %s", base);
            }
        }
        for (guint i = 0; i < c->debs->len; i++) {
            const struct download *d = g_ptr_array_index(c->debs, i);
            g_autofree char *deb = g_build_filename(p->downloads, d->file, NULL);
            if (!g_file_test(deb, G_FILE_TEST_EXISTS))
                g_string_append_printf(missing, " %s", d->file);
        }
        if (missing->len) {
            g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                        "the %s image is not in the cache: %s lacks%s. Run 'meshlab fetch %s' "
                        "(it downloads them), or copy those files there by hand",
                        c->name, p->downloads, missing->str, c->name);
            return false;
        }
    }

    /* The checksum list of a dated release never changes, so it is kept and, through
     * known-hashes, trusted on first use; the image hash is pinned besides. */
    bool have_sums = g_file_test(p->sums, G_FILE_TEST_EXISTS);
    if (allow_network || have_sums) {
        g_autofree char *sums_url = sibling_url(c->image.url, c->sums_file);
        g_autofree char *sums_mirror = sibling_url(c->image.mirror, c->sums_file);
        struct download sums = {.url = sums_url, .mirror = sums_mirror};
        /* A portal's HTML page is refused before known-hashes could record it. */
        struct ml_fetch_request req = {.dest = p->sums,
                                       .known_hashes = p->known,
                                       .form = ML_FETCH_SUMS,
                                       .what = "the image's checksum list",
                                       .max_bytes = SUMS_MAX_BYTES,
                                       .deadline_s = SUMS_DEADLINE_S};
        if (!fetch_with_mirror(&sums, req, err))
            return false;
    }

    g_autofree char *img = g_build_filename(p->downloads, c->image.file, NULL);
    struct ml_fetch_request req = {
        .dest = img,
        .expected_sha256 = c->image.sha256,
        .sums_url = g_file_test(p->sums, G_FILE_TEST_EXISTS) ? p->sums_uri : NULL,
        .sums_name = c->image.file,
        .known_hashes = p->known,
        .what = "the cloud image",
        .max_bytes = IMAGE_MAX_BYTES,
        .deadline_s = IMAGE_DEADLINE_S,
    };
    if (!fetch_with_mirror(&c->image, req, err))
        return false;

    for (guint i = 0; i < indexes->len; i++) {
        const char *rel = g_ptr_array_index(indexes, i);
        g_autofree char *url = dists_url(c, rel);
        g_autofree char *local = dists_local(c, p, rel);
        if (!fetch_archive_file(url, local, NULL, i == 0 ? ML_APT_INRELEASE : ML_APT_GZIP, err))
            return false;
    }
    for (guint i = 0; i < c->debs->len; i++) {
        const struct download *d = g_ptr_array_index(c->debs, i);
        g_autofree char *deb = g_build_filename(p->downloads, d->file, NULL);
        if (!fetch_archive_file(d->url, deb, d->sha256, ML_APT_DEB, err))
            return false;
    }
    return true;
}

/* apt's chain of trust, on the files in the cache: InRelease signed by a key in keyring, each
 * Packages index as InRelease lists it, each package as its Packages stanza lists it (and as
 * its pin says, when the catalogue pins one). A file that fails is deleted. */
static bool verify_packages(const struct catalogue *c, const struct paths *p, const char *keyring,
                            GError **err)
{
    if (c->debs->len == 0)
        return true;
    ml_progress("image", "verifying the packages against %s %s", c->apt.uri, c->apt.suite);
    g_autofree char *inrelease_url = dists_url(c, "InRelease");
    g_autofree char *inrelease = dists_local(c, p, "InRelease");
    g_autofree char *release = ml_apt_inrelease_verify(inrelease, keyring, inrelease_url, err);
    if (!release)
        return false;

    g_autoptr(GHashTable) wanted = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    for (guint i = 0; i < c->debs->len; i++)
        g_hash_table_insert(wanted, g_strdup(pool_path(c, g_ptr_array_index(c->debs, i))), NULL);
    for (char **comp = c->apt.components; *comp; comp++) {
        g_autofree char *rel = index_name(c, *comp);
        g_autofree char *url = dists_url(c, rel);
        g_autofree char *local = dists_local(c, p, rel);
        struct ml_apt_sum sum;
        /* The index is parsed only once its hash is known good. */
        if (!ml_apt_release_lookup(release, c->apt.suite, rel, &sum, err) ||
            !ml_apt_check_file(local, &sum, url, "the signed InRelease", err) ||
            !ml_apt_packages_collect(local, wanted, err))
            return false;
    }
    for (guint i = 0; i < c->debs->len; i++) {
        const struct download *d = g_ptr_array_index(c->debs, i);
        const struct ml_apt_sum *sum = g_hash_table_lookup(wanted, pool_path(c, d));
        g_autofree char *deb = g_build_filename(p->downloads, d->file, NULL);
        if (!sum) {
            g_autofree char *comps = g_strjoinv(" ", c->apt.components);
            g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                        "%s is not listed in the Packages index of %s %s (%s): the catalogue "
                        "names a package that suite does not hold; fix the deb line in %s",
                        d->url, c->apt.suite, comps, c->apt.arch, c->path);
            return false;
        }
        if (d->sha256 && strcmp(d->sha256, sum->sha256) != 0) {
            g_set_error(err, ML_ERROR, ML_ERR_FETCH,
                        "the pinned SHA-256 %s of %s disagrees with the archive's signed index, "
                        "which lists %s; fix the pin in %s",
                        d->sha256, d->url, sum->sha256, c->path);
            return false;
        }
        if (!ml_apt_check_file(deb, sum, d->url, "its entry in the signed Packages index", err))
            return false;
    }
    return true;
}

/* Names the result after what went into it, so a changed pin never reuses a stale image. */
static char *image_key(const struct catalogue *c)
{
    g_autoptr(GString) s = g_string_new("recipe " RECIPE_VERSION "\n");
    g_string_append_printf(s, "%s\n", c->image.sha256);
    for (guint i = 0; i < c->debs->len; i++) {
        const struct download *d = g_ptr_array_index(c->debs, i);
        g_string_append_printf(s, "%s %s\n", d->url, d->sha256 ? d->sha256 : "-");
    }
    g_autofree char *hex = ml_sha256_hex(s->str, s->len);
    return g_strndup(hex, 16);
}

static bool gfs_fail(guestfs_h *g, const char *what, GError **err)
{
    const char *msg = guestfs_last_error(g);
    g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "customising the image failed while %s: %s", what,
                msg ? msg : "unknown libguestfs error");
    return false;
}

struct mountpoint {
    const char *dir;
    const char *device;
};

static int by_depth(const void *a, const void *b)
{
    const struct mountpoint *x = a, *y = b;
    return (int)strlen(x->dir) - (int)strlen(y->dir);
}

static bool mount_root(guestfs_h *g, GError **err)
{
    char **roots = guestfs_inspect_os(g);
    if (!roots)
        return gfs_fail(g, "inspecting the image", err);
    if (!roots[0]) {
        g_strfreev(roots);
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                    "no operating system found in the cloud image; delete it from the cache and "
                    "fetch it again");
        return false;
    }
    char **mps = guestfs_inspect_get_mountpoints(g, roots[0]);
    g_strfreev(roots);
    if (!mps)
        return gfs_fail(g, "listing the image's file systems", err);

    /* Parents before children: / before /boot before /boot/efi. */
    guint n = g_strv_length(mps) / 2;
    g_autofree struct mountpoint *list = g_new0(struct mountpoint, n ? n : 1);
    for (guint i = 0; i < n; i++)
        list[i] = (struct mountpoint){.dir = mps[2 * i], .device = mps[2 * i + 1]};
    qsort(list, n, sizeof(*list), by_depth);
    bool ok = true;
    for (guint i = 0; i < n && ok; i++) {
        if (guestfs_mount(g, list[i].device, list[i].dir) < 0) {
            g_autofree char *what =
                g_strdup_printf("mounting %s on %s", list[i].device, list[i].dir);
            ok = gfs_fail(g, what, err);
        }
    }
    g_strfreev(mps);
    return ok;
}

static bool guest_write(guestfs_h *g, const char *path, const char *text, int mode, GError **err)
{
    g_autofree char *what = g_strdup_printf("writing %s", path);
    if (guestfs_write(g, path, text, strlen(text)) < 0 || guestfs_chmod(g, mode, path) < 0)
        return gfs_fail(g, what, err);
    return true;
}

static bool install_debs(guestfs_h *g, const struct catalogue *c, const char *downloads,
                         GError **err)
{
    if (guestfs_mkdir_p(g, DEB_DIR_IN_GUEST) < 0)
        return gfs_fail(g, "creating " DEB_DIR_IN_GUEST, err);
    g_autoptr(GString) pkgs = g_string_new(NULL);
    for (guint i = 0; i < c->debs->len; i++) {
        const struct download *d = g_ptr_array_index(c->debs, i);
        g_autofree char *local = g_build_filename(downloads, d->file, NULL);
        g_autofree char *remote = g_strconcat(DEB_DIR_IN_GUEST "/", d->file, NULL);
        if (guestfs_upload(g, local, remote) < 0)
            return gfs_fail(g, "uploading the packages", err);
        g_string_append_printf(pkgs, " %.*s", (int)strcspn(d->file, "_"), d->file);
    }

    /* Nothing runs inside the appliance that could serve a daemon: keep maintainer scripts
     * from trying to start services. */
    if (!guest_write(g, "/usr/sbin/policy-rc.d", "#!/bin/sh\nexit 101\n", 0755, err))
        return false;
    ml_progress("image", "installing%s", pkgs->str);
    char *out =
        guestfs_sh(g, "DEBIAN_FRONTEND=noninteractive dpkg -i " DEB_DIR_IN_GUEST "/*.deb 2>&1");
    if (!out)
        return gfs_fail(g,
                        "installing the packages with dpkg -i (a dependency missing from "
                        "the catalogue shows up here)",
                        err);
    free(out);

    /* dpkg -i can leave a package unconfigured and still exit 0 for the others; ask. */
    g_autofree char *query =
        g_strdup_printf("dpkg-query -W -f='${Package} ${Status}\\n'%s 2>&1", pkgs->str);
    out = guestfs_sh(g, query);
    if (!out)
        return gfs_fail(g, "checking the installed packages", err);
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    free(out);
    for (char **l = lines; *l; l++) {
        if (**l && !g_str_has_suffix(*l, " install ok installed")) {
            g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                        "a package did not install in the image: '%s'; check the deb list in the "
                        "catalogue",
                        *l);
            return false;
        }
    }
    if (guestfs_rm_rf(g, DEB_DIR_IN_GUEST) < 0 || guestfs_rm(g, "/usr/sbin/policy-rc.d") < 0)
        return gfs_fail(g, "cleaning up after dpkg", err);
    return true;
}

/* The keys apt in this very image trusts: the image's own hash is verified, so its keyring is
 * the root of trust for the packages installed into it. */
static bool extract_keyring(guestfs_h *g, const char *in_image, const char *dest, GError **err)
{
    /* A regular file, never a link: a link would resolve inside the appliance, not the image. */
    if (guestfs_is_file(g, in_image) != 1) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                    "the cloud image has no archive keyring at %s; check apt_keyring in the "
                    "catalogue",
                    in_image);
        return false;
    }
    unlink(dest);
    g_autofree char *what = g_strdup_printf("reading the archive keyring %s", in_image);
    if (guestfs_download(g, in_image, dest) < 0)
        return gfs_fail(g, what, err);
    return true;
}

static bool configure_guest(guestfs_h *g, GError **err)
{
    /* udev starts the agent when libvirt's channel appears; the explicit want also covers a
     * boot where that event fired before the unit was loaded. */
    const char *unit = "/usr/lib/systemd/system/qemu-guest-agent.service";
    if (guestfs_is_file(g, unit) != 1)
        unit = "/lib/systemd/system/qemu-guest-agent.service";
    if (guestfs_mkdir_p(g, "/etc/systemd/system/multi-user.target.wants") < 0 ||
        guestfs_ln_sf(g, unit,
                      "/etc/systemd/system/multi-user.target.wants/qemu-guest-agent.service") < 0)
        return gfs_fail(g, "enabling qemu-guest-agent", err);

    /* Guests get their seed from a NoCloud disk and never have internet: probing cloud
     * metadata services would only add minutes to every boot. */
    if (guestfs_mkdir_p(g, "/etc/cloud/cloud.cfg.d") < 0)
        return gfs_fail(g, "creating /etc/cloud/cloud.cfg.d", err);
    return guest_write(g, "/etc/cloud/cloud.cfg.d/90-meshlab-datasource.cfg",
                       "# Written by meshlab: the seed comes from a NoCloud disk.\n"
                       "datasource_list: [ NoCloud, None ]\n",
                       0644, err);
}

static bool customise(const struct catalogue *c, const struct paths *p, const char *disk,
                      bool force_tcg, GError **err)
{
    guestfs_h *g = guestfs_create();
    if (!g) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "cannot create a libguestfs handle: %s",
                    g_strerror(errno));
        return false;
    }
    /* Errors travel in GError; libguestfs would otherwise print them as well. */
    guestfs_set_error_handler(g, NULL, NULL);
    bool ok = true;
    if (force_tcg) {
        char *settings[] = {(char *)"force_tcg", NULL};
        if (guestfs_set_backend_settings(g, settings) < 0)
            ok = gfs_fail(g, "selecting software emulation", err);
    }
    if (ok && guestfs_add_drive_opts(g, disk, GUESTFS_ADD_DRIVE_OPTS_FORMAT, "qcow2", -1) < 0)
        ok = gfs_fail(g, "adding the disk", err);
    if (ok) {
        ml_progress("image", "starting the libguestfs appliance%s",
                    force_tcg ? " (no KVM: this takes minutes)" : "");
        if (guestfs_launch(g) < 0) {
            g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                        "libguestfs could not start its appliance: %s; run "
                        "'libguestfs-test-tool' to see why (on Ubuntu hosts the kernel in /boot "
                        "must be readable by the user running meshlab)",
                        guestfs_last_error(g) ? guestfs_last_error(g) : "unknown error");
            ok = false;
        }
    }
    ok = ok && !ml_check_interrupted(err) && mount_root(g, err);
    if (ok && c->debs->len > 0)
        ok = extract_keyring(g, c->apt.keyring, p->keyring, err) &&
             verify_packages(c, p, p->keyring, err);
    ok = ok && install_debs(g, c, p->downloads, err) && !ml_check_interrupted(err);
    ok = ok && configure_guest(g, err);
    /* shutdown reports write-back errors that close would swallow. */
    if (ok && guestfs_shutdown(g) < 0)
        ok = gfs_fail(g, "writing the image back", err);
    guestfs_close(g);
    return ok;
}

struct customise_args {
    const struct catalogue *c;
    const struct paths *p;
    const char *disk;
    bool force_tcg;
};

static bool customise_in_group(void *data, GError **err)
{
    const struct customise_args *a = data;
    return customise(a->c, a->p, a->disk, a->force_tcg, err);
}

static bool build_image(const struct catalogue *c, const struct paths *p, const char *qcow2,
                        bool force_tcg, GError **err)
{
    g_autofree char *src = g_build_filename(p->downloads, c->image.file, NULL);
    g_autofree char *tmp = g_strdup_printf("%s.tmp.%d", qcow2, (int)getpid());

    /* libguestfs is told the format (probing is unsafe), so check it is what we say. */
    char magic[4] = "";
    FILE *f = fopen(src, "rb");
    size_t n = f ? fread(magic, 1, sizeof(magic), f) : 0;
    if (f)
        fclose(f);
    if (n != sizeof(magic) || memcmp(magic, "QFI\xfb", 4) != 0) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE,
                    "'%s' is not a qcow2 image although it matches its pinned hash; the "
                    "catalogue entry %s.conf points at the wrong file",
                    src, c->name);
        return false;
    }
    ml_progress("image", "copying %s", c->image.file);
    g_autoptr(GFile) from = g_file_new_for_path(src);
    g_autoptr(GFile) to = g_file_new_for_path(tmp);
    g_autoptr(GError) copy_err = NULL;
    if (!g_file_copy(from, to, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, &copy_err)) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "cannot copy the cloud image: %s",
                    copy_err->message);
        return false;
    }
    /* libguestfs starts its appliance from inside the library: run the whole
     * customisation in a process group of its own, so a Ctrl-C or a hang stops
     * the appliance too. */
    struct customise_args args = {c, p, tmp, force_tcg};
    bool ok = ml_run_in_group("customising the image with libguestfs", CUSTOMISE_TIMEOUT_S,
                              customise_in_group, &args, err);
    /* QEMU runs as libvirt-qemu and only needs to read the base; overlays do the writing. */
    if (ok && (chmod(tmp, 0644) != 0 || rename(tmp, qcow2) != 0)) {
        g_set_error(err, ML_ERROR, ML_ERR_IMAGE, "cannot move the image to '%s': %s", qcow2,
                    g_strerror(errno));
        ok = false;
    }
    if (!ok)
        unlink(tmp);
    return ok;
}

static bool prepare(const char *cache_dir, bool allow_network, bool customise_too, bool force_tcg,
                    char **ret_qcow2, GError **err)
{
    g_autoptr(catalogue) c = catalogue_load(ML_IMAGE_UBUNTU_NAME, err);
    if (!c)
        return false;
    g_autofree char *key = image_key(c);
    g_autofree char *base = g_strdup_printf("%s-%s.qcow2", c->name, key);
    g_autofree char *qcow2 = g_build_filename(cache_dir, base, NULL);
    if (customise_too && g_file_test(qcow2, G_FILE_TEST_EXISTS)) {
        if (ret_qcow2)
            *ret_qcow2 = g_steal_pointer(&qcow2);
        return true;
    }

    struct paths p = {0};
    bool ok = ml_mkdir_p(cache_dir, 0755, err) && paths_init(&p, c, cache_dir, err) &&
              fetch_all(c, &p, allow_network, err);
    if (ok && customise_too) {
        ok = build_image(c, &p, qcow2, force_tcg, err);
        if (ok) {
            ml_progress("image", "ready: %s", qcow2);
            if (ret_qcow2)
                *ret_qcow2 = g_steal_pointer(&qcow2);
        }
    }
    paths_clear(&p);
    return ok;
}

bool ml_image_ubuntu_prepare(const char *cache_dir, bool allow_network, bool force_tcg,
                             char **ret_qcow2, GError **err)
{
    return prepare(cache_dir, allow_network, true, force_tcg, ret_qcow2, err);
}

bool ml_image_ubuntu_download(const char *cache_dir, GError **err)
{
    return prepare(cache_dir, true, false, false, NULL, err);
}

bool ml_image_ubuntu_verify_packages(const char *cache_dir, const char *keyring, GError **err)
{
    g_autoptr(catalogue) c = catalogue_load(ML_IMAGE_UBUNTU_NAME, err);
    if (!c)
        return false;
    struct paths p = {0};
    bool ok = paths_init(&p, c, cache_dir, err) && verify_packages(c, &p, keyring, err);
    paths_clear(&p);
    return ok;
}
