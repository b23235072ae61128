/* meshlab fetch [NAME...]: downloads, verifies and prepares base images and the pinned
 * Tailscale/Headscale binaries ahead of time, so that `meshlab up` never waits on the network
 * (and works on a host that has none). */
#include "cache/artifacts.h"
#include "cache/gobuild.h"
#include "cache/image_ubuntu.h"
#include "cli/commands.h"
#include "core/util.h"
#include "dataplanes/dataplane.h"
#include "results/json.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_fetch_main(int argc, char **argv);

static const char usage[] =
    "Usage: meshlab fetch [--download-only] [--build] [NAME...]\n"
    "\n"
    "Downloads and verifies into the cache ($MESHLAB_CACHE_DIR, default /var/cache/meshlab):\n"
    "  " ML_IMAGE_UBUNTU_NAME "  the base image (also customised, unless --download-only)\n"
    "  tailscale     Tailscale " ML_TAILSCALE_VERSION " (static linux amd64), for the clients\n"
    "  headscale     Headscale " ML_HEADSCALE_VERSION " (linux amd64), for the hub\n"
    "  all           the image and every dataplane's programs (each dataplane lists them)\n"
    "NAME defaults to " ML_IMAGE_UBUNTU_NAME ". Each file is checked against the checksum the\n"
    "publisher lists beside it, and a later copy with other bytes is refused. When the files\n"
    "are already in CACHE/downloads (copied in by hand), they are verified without network.\n"
    "Where the publisher cannot be reached, Tailscale and Headscale are built instead, at the\n"
    "same versions, from their Go modules: meshlab's images/go requires both, and its go.sum\n"
    "pins the hash of every module that goes into them (a Go of the version go.mod names is\n"
    "needed; a few minutes the first time). Either way it prints where they are and how they\n"
    "were obtained; a build keeps its provenance (every module with its hash, the Go) in\n"
    "CACHE/built/NAME-VERSION/provenance.json. A publisher's verified download is used\n"
    "where both are in the cache.\n"
    "\n"
    "  --download-only  for the image: only download and verify (for a cache carried to\n"
    "                   another host); for Tailscale and Headscale: never build\n"
    "  --build          build Tailscale and Headscale from their Go modules, without trying\n"
    "                   the publishers' downloads\n"
    "  -h, --help       show this help\n";

static const char *cache_dir(void)
{
    const char *env = getenv("MESHLAB_CACHE_DIR");
    return env && *env ? env : "/var/cache/meshlab";
}

/* libguestfs needs TCG when /dev/kvm cannot be opened; the full host probe lives elsewhere. */
static bool kvm_missing(void)
{
    return access("/dev/kvm", R_OK | W_OK) != 0;
}

/* Tailscale and Headscale from their Go modules, once per run: one build makes both. */
static bool build_once(GError **err)
{
    static bool done;
    if (!done)
        done = ml_gobuild_programs(cache_dir(), err);
    return done;
}

/* An artifact as --build, or the publisher's download and, where that cannot be had, the build. */
static bool fetch_artifact(const char *name, bool download_only, bool build, GError **err)
{
    if (build)
        return build_once(err);
    if (ml_artifact_fetch(cache_dir(), name, err))
        return true;
    if (download_only || (*err)->code != ML_ERR_FETCH)
        return false;
    g_autofree char *why = g_strdup((*err)->message);
    g_clear_error(err);
    ml_warn("%s: the publisher's file could not be had (%s); building it from its Go module "
            "instead, at the same version (images/go)",
            name, why);
    return build_once(err);
}

/* Where the artifact is and how it was obtained, on stdout. */
static void print_artifact(const char *name)
{
    g_autofree char *path = ml_artifact_path(cache_dir(), name);
    g_autofree char *dir = g_str_has_suffix(path, "/headscale") ? g_path_get_dirname(path)
                                                                : g_strdup(path);
    struct json_object *p = ml_artifact_provenance(cache_dir(), name);
    printf("%s\n  %s %s, %s", path, name, ml_j_str_or(p, "version", "?"),
           ml_j_str_or(p, "obtained", "?"));
    if (ml_j_str(p, "go"))
        printf(" with Go %s; every module and its hash in %s/provenance.json", ml_j_str(p, "go"),
               dir);
    else if (ml_j_str(p, "sha256"))
        printf(", SHA-256 %s", ml_j_str(p, "sha256"));
    printf("\n");
    json_object_put(p);
}

/* "ubuntu-24.04, tailscale, headscale, all": the names fetch accepts, for an error. */
static char *known_names(void)
{
    GString *s = g_string_new(ML_IMAGE_UBUNTU_NAME);
    for (const char *const *n = ml_artifact_names; *n; n++)
        g_string_append_printf(s, ", %s", *n);
    g_string_append(s, ", all");
    return g_string_free(s, FALSE);
}

static int unknown_name(const char *name)
{
    g_autofree char *known = known_names();
    fprintf(stderr, "meshlab: unknown name '%s'; known: %s\n", name, known);
    return ML_EXIT_USAGE;
}

static int fetch_one(const char *name, bool download_only, bool build);

/* all: the image, then what each dataplane declares it needs fetched, each name once. */
static int fetch_all(bool download_only, bool build)
{
    int rc = fetch_one(ML_IMAGE_UBUNTU_NAME, download_only, build);
    g_autoptr(GHashTable) done = g_hash_table_new(g_str_hash, g_str_equal);
    for (size_t d = 0; rc == ML_EXIT_OK && ml_dataplanes[d]; d++)
        for (const char *const *n = ml_dataplanes[d]->fetched; rc == ML_EXIT_OK && n && *n; n++)
            if (g_hash_table_add(done, (gpointer)*n))
                rc = fetch_one(*n, download_only, build);
    return rc;
}

static int fetch_one(const char *name, bool download_only, bool build)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *qcow2 = NULL;
    bool artifact = ml_artifact_known(name);
    bool ok;
    if (artifact) {
        ok = fetch_artifact(name, download_only, build, &err);
    } else if (strcmp(name, ML_IMAGE_UBUNTU_NAME) != 0) {
        return unknown_name(name);
    } else if (download_only) {
        ok = ml_image_ubuntu_download(cache_dir(), &err);
    } else {
        ok = ml_image_ubuntu_prepare(cache_dir(), true, kvm_missing(), &qcow2, &err);
    }
    if (!ok)
        return cmd_fail(err); /* a mirror's text, escaped */
    if (qcow2)
        printf("%s\n", qcow2);
    if (artifact)
        print_artifact(name);
    return ML_EXIT_OK;
}

int cmd_fetch_main(int argc, char **argv)
{
    static const struct option options[] = {
        {"download-only", no_argument, NULL, 'd'},
        {"build", no_argument, NULL, 'b'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool download_only = false, build = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 'd':
            download_only = true;
            break;
        case 'b':
            build = true;
            break;
        case 'h':
            fputs(usage, stdout);
            return ML_EXIT_OK;
        default:
            fprintf(stderr, "meshlab: unknown option '%s'; see 'meshlab fetch --help'\n",
                    argv[optind - 1]);
            return ML_EXIT_USAGE;
        }
    }
    ml_signals_install();
    if (optind == argc)
        return fetch_one(ML_IMAGE_UBUNTU_NAME, download_only, build);
    /* Names are checked before anything is downloaded, so a typo costs no transfer. */
    for (int i = optind; i < argc; i++) {
        if (strcmp(argv[i], "all") != 0 && strcmp(argv[i], ML_IMAGE_UBUNTU_NAME) != 0 &&
            !ml_artifact_known(argv[i]))
            return unknown_name(argv[i]);
    }
    for (int i = optind; i < argc; i++) {
        if (strcmp(argv[i], "all") == 0) {
            int rc = fetch_all(download_only, build);
            if (rc != ML_EXIT_OK)
                return rc;
            continue;
        }
        int rc = fetch_one(argv[i], download_only, build);
        if (rc != ML_EXIT_OK)
            return rc;
    }
    return ML_EXIT_OK;
}
