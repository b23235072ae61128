#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cache/artifacts.h"
#include "virt/host.h"
#include "cache/image.h"
#include "core/leftovers.h"
#include "topology/plan.h"
#include "core/util.h"
#include "virt/virt.h"

static const char check_usage[] =
    "Usage: meshlab check\n\n"
    "Checks that this host can run a lab, and says what to do about each problem:\n"
    "libvirt reachable, QEMU present, whether KVM really runs a guest (otherwise guests\n"
    "run under TCG and libguestfs needs force_tcg), the host tools meshlab calls, free\n"
    "disk and memory, and the image cache. Exits 1 if a lab cannot run here.\n\n"
    "The KVM verdict (a probe of up to 20 s) is kept in CACHE/kvm-probe.json for this\n"
    "host kernel, QEMU binary and CPU model; a change of any of them probes again, and\n"
    "so does MESHLAB_KVM_REPROBE=1 (for 'check', 'up' and 'run' alike).\n";

static int problems;

static void line(bool ok, const char *what, const char *detail, const char *advice)
{
    printf("%-5s %-22s %s\n", ok ? "ok" : "FAIL", what, detail);
    if (!ok) {
        problems++;
        if (advice)
            printf("      %-22s -> %s\n", "", advice);
    }
}

static void tool(const char *name, const char *package)
{
    g_autofree char *path = g_find_program_in_path(name);
    g_autofree char *advice = g_strdup_printf("apt-get install %s", package);
    line(path != NULL, name, path ? path : "not found", advice);
}

static void print_leftover(const char *path, void *opaque)
{
    (void)opaque;
    printf("%-5s %-22s %s\n", "info", "leftover", path);
}

int cmd_check_main(int argc, char **argv)
{
    int status;
    if (!cmd_simple_args(argc, argv, check_usage, 0, &status))
        return status;
    problems = 0;
    g_autoptr(GError) err = NULL;
    virConnectPtr conn = ml_virt_connect(ml_virt_uri(), &err);
    if (conn) {
        unsigned long lib = 0, hv = 0;
        virConnectGetLibVersion(conn, &lib);
        virConnectGetVersion(conn, &hv);
        g_autofree char *d = g_strdup_printf("%s: libvirt %lu.%lu.%lu, QEMU %lu.%lu.%lu",
                                             ml_virt_uri(), lib / 1000000, lib / 1000 % 1000,
                                             lib % 1000, hv / 1000000, hv / 1000 % 1000, hv % 1000);
        line(true, "libvirt", d, NULL);
        virConnectClose(conn);
    } else {
        line(false, "libvirt", err->message,
             "apt-get install libvirt-daemon-system; then start the daemons: mkdir -p "
             "/run/libvirt; virtlogd -d; libvirtd -d");
    }
    const char *qemu = ml_host_qemu_binary();
    line(qemu != NULL, "qemu", qemu ? qemu : "no qemu-system-x86_64",
         "apt-get install qemu-system-x86");

    g_autofree char *kernel = ml_image_any_cached_kernel(ml_cache_dir());
    struct ml_host_accel accel;
    ml_host_probe_accel(kernel, &accel);
    printf("%-5s %-22s %s: %s\n", "info", "accelerator", accel.kvm ? "KVM" : "TCG", accel.reason);
    g_autofree char *origin = ml_host_accel_origin(&accel);
    if (origin)
        printf("      %-22s    %s\n", "", origin);
    if (!accel.kvm)
        printf("      %-22s    guests run as libvirt domain type 'qemu' (slow but exact byte "
               "ratios);\n      %-22s    libguestfs gets backend setting force_tcg\n", "", "");
    ml_host_accel_clear(&accel);

    tool("mmdebstrap", "mmdebstrap");
    tool("mkfs.ext4", "e2fsprogs");
    tool("qemu-img", "qemu-utils");
    tool("cloud-localds", "cloud-image-utils");
    tool("genisoimage", "genisoimage");
    tool("gpgv", "gpgv"); /* checks the Ubuntu archive's signature before its packages go in */

    gint64 disk = ml_host_free_bytes(g_file_test(ml_cache_dir(), G_FILE_TEST_IS_DIR)
                                         ? ml_cache_dir()
                                         : "/var");
    g_autofree char *dd = g_strdup_printf("%.1f GiB free for %s", disk / 1073741824.0,
                                          ml_cache_dir());
    line(disk > 4LL << 30, "disk", dd, "free at least 4 GiB: an image is ~0.5 GiB, a build ~3 GiB");
    gint64 mem = ml_host_mem_available();
    g_autofree char *md = g_strdup_printf("%.1f GiB available", mem / 1073741824.0);
    line(mem > 4LL << 30, "memory", md, "three 1 GiB guests need about 4 GiB available");

    g_autoptr(GError) kerr = NULL;
    g_autofree char *key = ml_image_debian_key(&kerr);
    if (key) {
        g_autofree char *name = g_strdup_printf("debian-12-%s", key);
        g_autofree char *dir = g_build_filename(ml_cache_dir(), name, "manifest", NULL);
        bool cached = g_file_test(dir, G_FILE_TEST_EXISTS);
        g_autofree char *d = g_strdup_printf("%s (%s)", cached ? "cached" : "not built yet", name);
        printf("%-5s %-22s %s\n", "info", "image debian-12", d);
        if (!cached)
            printf("      %-22s    the first 'meshlab up' builds it from the Debian mirror "
                   "(about a minute)\n", "");
        /* Builds of earlier recipes stay behind; say where the space went. */
        g_autoptr(GDir) cache = g_dir_open(ml_cache_dir(), 0, NULL);
        const char *entry;
        while (cache && (entry = g_dir_read_name(cache))) {
            if (!g_str_has_prefix(entry, "debian-12-") || !strcmp(entry, name))
                continue;
            g_autofree char *old = g_build_filename(ml_cache_dir(), entry, NULL);
            printf("%-5s %-22s %s is from an earlier recipe; unless a lab still running uses "
                   "it, 'rm -r %s' frees about 0.5 GiB\n",
                   "info", "image cache", entry, old);
        }
    } else {
        line(false, "image debian-12", kerr->message, NULL);
    }
    g_autoptr(GString) missing = g_string_new(NULL);
    if (ml_artifacts_missing(ml_cache_dir(), missing))
        printf("%-5s %-22s %s\n      %-22s    the Tailscale paths will be reported as not run; "
               "'meshlab fetch tailscale headscale' fetches them\n",
               "info", "tailscale, headscale", "not in the cache", "");
    else
        printf("%-5s %-22s %s\n", "info", "tailscale, headscale",
               "cached and verified (" ML_TAILSCALE_VERSION ", " ML_HEADSCALE_VERSION ")");
    int left = ml_leftovers_sweep(false, print_leftover, NULL);
    if (left)
        printf("      %-22s    %d leftover(s) of killed meshlab runs; 'meshlab down LAB' (any lab "
               "name) removes them\n",
               "", left);
    printf("%s\n", problems ? "some checks failed: a lab cannot run here until they are fixed"
                            : "this host can run a lab");
    return problems ? ML_EXIT_FAIL : ML_EXIT_OK;
}
