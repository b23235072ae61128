/* meshlab fetch [NAME...]: downloads, verifies and prepares base images and the pinned
 * Tailscale/Headscale binaries ahead of time, so that `meshlab up` never waits on the network
 * (and works on a host that has none). */
#include "cache/artifacts.h"
#include "cache/image_ubuntu.h"
#include "cli/commands.h"
#include "core/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_fetch_main(int argc, char **argv);

static const char usage[] =
    "Usage: meshlab fetch [--download-only] [NAME...]\n"
    "\n"
    "Downloads and verifies into the cache ($MESHLAB_CACHE_DIR, default /var/cache/meshlab):\n"
    "  " ML_IMAGE_UBUNTU_NAME "  the base image (also customised, unless --download-only)\n"
    "  tailscale     Tailscale " ML_TAILSCALE_VERSION " (static linux amd64), for the clients\n"
    "  headscale     Headscale " ML_HEADSCALE_VERSION " (linux amd64), for the hub\n"
    "  all           all of the above\n"
    "NAME defaults to " ML_IMAGE_UBUNTU_NAME ". Each file is checked against the checksum the\n"
    "publisher lists beside it, and a later copy with other bytes is refused. When the files\n"
    "are already in CACHE/downloads (copied in by hand), they are verified without network.\n"
    "\n"
    "  --download-only  for the image: only download and verify (for a cache carried to\n"
    "                   another host)\n"
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

static int fetch_one(const char *name, bool download_only)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *qcow2 = NULL;
    g_autofree char *artifact = NULL;
    bool ok;
    if (ml_artifact_known(name)) {
        ok = ml_artifact_fetch(cache_dir(), name, &err);
        artifact = ok ? ml_artifact_path(cache_dir(), name) : NULL;
    } else if (strcmp(name, ML_IMAGE_UBUNTU_NAME) != 0) {
        fprintf(stderr, "meshlab: unknown name '%s'; known: %s, tailscale, headscale, all\n",
                name, ML_IMAGE_UBUNTU_NAME);
        return ML_EXIT_USAGE;
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
        printf("%s\n", artifact);
    return ML_EXIT_OK;
}

int cmd_fetch_main(int argc, char **argv)
{
    static const struct option options[] = {
        {"download-only", no_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool download_only = false;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (opt) {
        case 'd':
            download_only = true;
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
        return fetch_one(ML_IMAGE_UBUNTU_NAME, download_only);
    /* Names are checked before anything is downloaded, so a typo costs no transfer. */
    for (int i = optind; i < argc; i++) {
        if (strcmp(argv[i], "all") != 0 && strcmp(argv[i], ML_IMAGE_UBUNTU_NAME) != 0 &&
            !ml_artifact_known(argv[i])) {
            fprintf(stderr, "meshlab: unknown name '%s'; known: %s, tailscale, headscale, all\n",
                    argv[i], ML_IMAGE_UBUNTU_NAME);
            return ML_EXIT_USAGE;
        }
    }
    for (int i = optind; i < argc; i++) {
        if (strcmp(argv[i], "all") == 0) {
            int rc = fetch_one(ML_IMAGE_UBUNTU_NAME, download_only);
            for (const char *const *n = ml_artifact_names; rc == ML_EXIT_OK && *n; n++)
                rc = fetch_one(*n, download_only);
            if (rc != ML_EXIT_OK)
                return rc;
            continue;
        }
        int rc = fetch_one(argv[i], download_only);
        if (rc != ML_EXIT_OK)
            return rc;
    }
    return ML_EXIT_OK;
}
