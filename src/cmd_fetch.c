/* meshlab fetch [IMAGE...]: downloads, verifies and prepares base images ahead of time, so that
 * `meshlab up` never waits on the network (and works on a host that has none). */
#include "image_ubuntu.h"
#include "util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_fetch_main(int argc, char **argv);

static const char usage[] =
    "Usage: meshlab fetch [--download-only] [IMAGE...]\n"
    "\n"
    "Downloads, verifies and customises base images into the cache\n"
    "($MESHLAB_CACHE_DIR, default /var/cache/meshlab). IMAGE defaults to " ML_IMAGE_UBUNTU_NAME
    ".\n"
    "\n"
    "  --download-only  only download and verify (for a cache carried to another host)\n"
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
    bool ok;
    if (strcmp(name, ML_IMAGE_UBUNTU_NAME) != 0) {
        fprintf(stderr, "meshlab: unknown image '%s'; known images: %s\n", name,
                ML_IMAGE_UBUNTU_NAME);
        return ML_EXIT_USAGE;
    }
    if (download_only)
        ok = ml_image_ubuntu_download(cache_dir(), &err);
    else
        ok = ml_image_ubuntu_prepare(cache_dir(), true, kvm_missing(), &qcow2, &err);
    if (!ok) {
        fprintf(stderr, "meshlab: %s\n", err->message);
        return g_error_matches(err, ML_ERROR, ML_ERR_INTERRUPTED) ? ML_EXIT_INTERRUPTED
                                                                   : ML_EXIT_FAIL;
    }
    if (qcow2)
        printf("%s\n", qcow2);
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
    for (int i = optind; i < argc; i++) {
        int rc = fetch_one(argv[i], download_only);
        if (rc != ML_EXIT_OK)
            return rc;
    }
    return ML_EXIT_OK;
}
