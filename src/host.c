#include "host.h"

#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util.h"

const char *ml_host_qemu_binary(void)
{
    static const char *const candidates[] = {"/usr/bin/qemu-system-x86_64",
                                             "/usr/libexec/qemu-kvm"};
    for (size_t i = 0; i < G_N_ELEMENTS(candidates); i++)
        if (access(candidates[i], X_OK) == 0)
            return candidates[i];
    return NULL;
}

char *ml_host_kernel(void)
{
    struct utsname u;
    if (uname(&u) < 0)
        return g_strdup("unknown");
    return g_strdup(u.release);
}

gint64 ml_host_free_bytes(const char *path)
{
    struct statvfs s;
    if (statvfs(path, &s) < 0)
        return -1;
    return (gint64)s.f_bavail * (gint64)s.f_frsize;
}

gint64 ml_host_mem_available(void)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents("/proc/meminfo", &text, NULL, NULL))
        return -1;
    const char *p = strstr(text, "MemAvailable:");
    if (!p)
        return -1;
    return g_ascii_strtoll(p + strlen("MemAvailable:"), NULL, 10) * 1024;
}

void ml_host_accel_clear(struct ml_host_accel *accel)
{
    g_clear_pointer(&accel->reason, g_free);
}

/* A kernel that boots under KVM prints its banner within a second or two and,
 * with no root file system and panic=-1, ends QEMU by itself. A KVM that
 * "works" only on paper aborts at once (MSR errors) or hangs after the BIOS:
 * both end here as "not usable", and guests then run under TCG. */
void ml_host_probe_accel(const char *kernel, struct ml_host_accel *ret)
{
    ret->kvm = false;
    ret->reason = NULL;
    const char *force = g_getenv("MESHLAB_ACCEL");
    if (force && !strcmp(force, "tcg")) {
        ret->reason = g_strdup("MESHLAB_ACCEL=tcg");
        return;
    }
    if (force && !strcmp(force, "kvm")) {
        ret->kvm = true;
        ret->reason = g_strdup("MESHLAB_ACCEL=kvm (not probed)");
        return;
    }
    if (access("/dev/kvm", R_OK | W_OK) != 0) {
        ret->reason = g_strdup("/dev/kvm is missing or not accessible");
        return;
    }
    const char *qemu = ml_host_qemu_binary();
    if (!qemu) {
        ret->reason = g_strdup("no QEMU system emulator found");
        return;
    }
    if (!kernel) {
        ret->reason = g_strdup("/dev/kvm exists but no guest kernel was at hand to prove it "
                               "runs a guest; using TCG");
        return;
    }
    g_autofree char *dir = g_dir_make_tmp("meshlab-kvm-XXXXXX", NULL);
    if (!dir) {
        ret->reason = g_strdup("cannot create a temporary directory for the KVM probe");
        return;
    }
    g_autofree char *serial = g_build_filename(dir, "serial.log", NULL);
    g_autofree char *serial_arg = g_strdup_printf("file:%s", serial);
    const char *argv[] = {"timeout", "-s", "KILL", "20", qemu, "-accel", "kvm", "-cpu", "host",
                          "-machine", "pc", "-m", "256", "-nodefaults", "-display", "none",
                          "-no-reboot", "-serial", serial_arg, "-kernel", kernel, "-append",
                          "console=ttyS0 panic=-1 loglevel=4", NULL};
    g_autofree char *out = NULL;
    g_autofree char *errout = NULL;
    int status = 0;
    double t0 = ml_now();
    g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &errout,
                 &status, NULL);
    double took = ml_now() - t0;
    g_autofree char *console = NULL;
    g_file_get_contents(serial, &console, NULL, NULL);
    unlink(serial);
    rmdir(dir);
    bool panicked = console && strstr(console, "Kernel panic");
    if (panicked) {
        ret->kvm = true;
        ret->reason = g_strdup_printf("a Linux kernel booted under KVM to its first panic in "
                                      "%.1f s", took);
        return;
    }
    g_autofree char *first = g_strstrip(g_strdup(errout && *errout ? errout : ""));
    char *nl = strchr(first, '\n');
    if (nl)
        *nl = '\0';
    if (*first)
        ret->reason = g_strdup_printf("KVM probe failed: QEMU said \"%s\"; using TCG", first);
    else
        ret->reason = g_strdup_printf("KVM probe failed: a kernel under KVM printed %s in %.0f s; "
                                      "using TCG",
                                      console && *console ? "no panic" : "nothing", took);
}
