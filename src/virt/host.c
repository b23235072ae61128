#include "virt/host.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "topology/plan.h"
#include "core/leftovers.h"
#include "core/spawn.h"
#include "core/util.h"

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
    g_clear_pointer(&accel->probed_at, g_free);
    g_clear_pointer(&accel->key, g_free);
}

const char *ml_host_accel_source_name(enum ml_accel_source source)
{
    switch (source) {
    case ML_ACCEL_PROBED:
        return "probe";
    case ML_ACCEL_CACHED:
        return "cache";
    case ML_ACCEL_DECIDED:
        break;
    }
    return "none";
}

char *ml_host_accel_origin(const struct ml_host_accel *accel)
{
    switch (accel->source) {
    case ML_ACCEL_PROBED:
        if (accel->elsewhere)
            return g_strdup_printf("probed now on the lab's host in %.1f s; not kept: each up "
                                   "there probes again",
                                   accel->probe_s);
        return g_strdup_printf("probed now in %.1f s; kept for this host (key %s)", accel->probe_s,
                               accel->key ? accel->key : "?");
    case ML_ACCEL_CACHED:
        return g_strdup_printf("cached from %s, when the probe took %.1f s (key %s); "
                               "MESHLAB_KVM_REPROBE=1 probes again",
                               accel->probed_at ? accel->probed_at : "?", accel->probe_s,
                               accel->key ? accel->key : "?");
    case ML_ACCEL_DECIDED:
        break;
    }
    return NULL;
}

/* The first "NAME : value" line of /proc/cpuinfo. */
static char *cpuinfo_field(const char *text, const char *name)
{
    g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
    for (char **l = lines; *l; l++) {
        const char *colon = strchr(*l, ':');
        if (!colon)
            continue;
        g_autofree char *k = g_strstrip(g_strndup(*l, (gsize)(colon - *l)));
        if (!strcmp(k, name))
            return g_strstrip(g_strdup(colon + 1));
    }
    return NULL;
}

char *ml_host_kvm_key(const char *qemu, const char *host_kernel)
{
    g_autofree char *kernel = NULL;
    if (host_kernel) {
        kernel = g_strdup(host_kernel);
    } else {
        struct utsname u;
        kernel =
            uname(&u) < 0 ? g_strdup("unknown") : g_strdup_printf("%s %s", u.release, u.version);
    }
    /* The binary's size and mtime change with every QEMU upgrade, and reading
     * them costs nothing, unlike running it. */
    g_autofree char *emu = NULL;
    struct stat st;
    if (qemu && stat(qemu, &st) == 0)
        emu = g_strdup_printf("%s size %lld mtime %lld", qemu, (long long)st.st_size,
                              (long long)st.st_mtime);
    else
        emu = g_strdup_printf("%s missing", qemu ? qemu : "(none)");
    g_autofree char *cpuinfo = NULL;
    g_file_get_contents("/proc/cpuinfo", &cpuinfo, NULL, NULL);
    g_autofree char *model = cpuinfo_field(cpuinfo, "model name");
    g_autofree char *flags = cpuinfo_field(cpuinfo, "flags");
    g_autofree char *flags_sum = ml_sha256_hex(flags ? flags : "", flags ? strlen(flags) : 0);
    flags_sum[16] = '\0';
    return g_strdup_printf("kernel %s; qemu %s; cpu %s, flags %s", kernel, emu,
                           model ? model : "unknown", flags_sum);
}

static const char *str_field(struct json_object *o, const char *name)
{
    struct json_object *v = NULL;
    if (!o || !json_object_object_get_ex(o, name, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

static bool cache_lookup(const char *file, const char *key, struct ml_host_accel *ret)
{
    if (!file)
        return false;
    struct json_object *c = json_object_from_file(file);
    const char *k = str_field(c, "key");
    const char *reason = str_field(c, "reason");
    const char *at = str_field(c, "probed_at");
    struct json_object *kvm = NULL, *secs = NULL;
    bool hit = k && !strcmp(k, key) && reason && at && json_object_object_get_ex(c, "kvm", &kvm) &&
               json_object_is_type(kvm, json_type_boolean);
    if (hit) {
        ret->kvm = json_object_get_boolean(kvm);
        ret->reason = g_strdup(reason);
        ret->probed_at = g_strdup(at);
        ret->probe_s =
            json_object_object_get_ex(c, "probe_seconds", &secs) ? json_object_get_double(secs) : 0;
        ret->key = g_strdup(key);
        ret->source = ML_ACCEL_CACHED;
    }
    json_object_put(c);
    return hit;
}

static void cache_store(const char *file, const struct ml_host_accel *a)
{
    if (!file)
        return;
    struct json_object *c = json_object_new_object();
    json_object_object_add(c, "key", json_object_new_string(a->key));
    json_object_object_add(c, "kvm", json_object_new_boolean(a->kvm));
    json_object_object_add(c, "reason", json_object_new_string(a->reason));
    json_object_object_add(c, "probed_at", json_object_new_string(a->probed_at));
    json_object_object_add(c, "probe_seconds", json_object_new_double(a->probe_s));
    const char *text = json_object_to_json_string_ext(c, JSON_C_TO_STRING_PRETTY);
    g_autofree char *data = g_strdup_printf("%s\n", text);
    json_object_put(c);
    g_autofree char *dir = g_path_get_dirname(file);
    g_autoptr(GError) err = NULL;
    if (!ml_mkdir_p(dir, 0755, &err) || !ml_write_file(file, data, -1, 0644, &err))
        ml_warn("cannot keep the KVM verdict: %s; the next run probes again", err->message);
}

static char *utc_now(void)
{
    g_autoptr(GDateTime) now = g_date_time_new_now_utc();
    return g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");
}

/* A kernel that boots under KVM prints its banner within a second or two and,
 * with no root file system and panic=-1, ends QEMU by itself. A KVM that
 * "works" only on paper aborts at once (MSR errors) or hangs after the BIOS:
 * both end here as "not usable", and guests then run under TCG. Returns false
 * when the probe could not run to its end (then there is nothing to cache). */
static bool run_probe(const struct ml_kvm_probe *p, const char *kernel, struct ml_host_accel *ret)
{
    g_autofree char *tmpl = ml_leftover_template("kvm", "");
    g_autofree char *dir = g_dir_make_tmp(tmpl, NULL);
    if (!dir) {
        ret->reason = g_strdup("cannot create a temporary directory for the KVM probe");
        return false;
    }
    g_autofree char *serial = g_build_filename(dir, "serial.log", NULL);
    g_autofree char *serial_arg = g_strdup_printf("file:%s", serial);
    const char *argv[] = {p->qemu,
                          "-accel",
                          "kvm",
                          "-cpu",
                          "host",
                          "-machine",
                          "pc",
                          "-m",
                          "256",
                          "-nodefaults",
                          "-display",
                          "none",
                          "-no-reboot",
                          "-serial",
                          serial_arg,
                          "-kernel",
                          kernel,
                          "-append",
                          "console=ttyS0 panic=-1 loglevel=4",
                          NULL};
    struct ml_proc proc;
    g_autoptr(GError) err = NULL;
    bool ran = ml_proc_run(argv, p->timeout_s, &proc, &err);
    g_autofree char *console = NULL;
    g_file_get_contents(serial, &console, NULL, NULL);
    unlink(serial);
    rmdir(dir);
    if (!ran) {
        ret->reason = g_strdup_printf("KVM probe could not start: %s; using TCG", err->message);
        return false;
    }
    ret->probe_s = proc.seconds;
    if (proc.interrupted) {
        ret->reason = g_strdup("KVM probe interrupted; using TCG");
        ml_proc_clear(&proc);
        return false;
    }
    bool panicked = console && strstr(console, "Kernel panic");
    g_autofree char *first = g_strstrip(g_strdup(proc.err));
    char *nl = strchr(first, '\n');
    if (nl)
        *nl = '\0';
    if (panicked) {
        ret->kvm = true;
        ret->reason = g_strdup_printf("a Linux kernel booted under KVM to its first panic in "
                                      "%.1f s",
                                      proc.seconds);
    } else if (*first && !proc.timed_out) {
        /* At the deadline QEMU gets SIGTERM and says so; that is not its verdict. */
        ret->reason = g_strdup_printf("KVM probe failed: QEMU said \"%s\"; using TCG", first);
    } else {
        ret->reason = g_strdup_printf("KVM probe failed: a kernel under KVM printed %s in %.0f s; "
                                      "using TCG",
                                      console && *console ? "no panic" : "nothing", proc.seconds);
    }
    ml_proc_clear(&proc);
    return true;
}

bool ml_host_accel_forced(struct ml_host_accel *ret)
{
    const char *force = g_getenv("MESHLAB_ACCEL");
    if (force && !strcmp(force, "tcg")) {
        ret->kvm = false;
        ret->reason = g_strdup("MESHLAB_ACCEL=tcg");
        return true;
    }
    if (force && !strcmp(force, "kvm")) {
        ret->kvm = true;
        ret->reason = g_strdup("MESHLAB_ACCEL=kvm (not probed)");
        return true;
    }
    return false;
}

void ml_host_probe_accel_with(const struct ml_kvm_probe *p, const char *kernel,
                              struct ml_host_accel *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (ml_host_accel_forced(ret))
        return;
    if (access(p->dev_kvm, R_OK | W_OK) != 0) {
        ret->reason = g_strdup_printf("%s is missing or not accessible", p->dev_kvm);
        return;
    }
    if (!p->qemu) {
        ret->reason = g_strdup("no QEMU system emulator found");
        return;
    }
    g_autofree char *key = ml_host_kvm_key(p->qemu, p->host_kernel);
    if (!p->reprobe && cache_lookup(p->cache_file, key, ret))
        return;
    if (!kernel) {
        ret->reason = g_strdup_printf("%s exists but no guest kernel was at hand to prove it "
                                      "runs a guest; using TCG",
                                      p->dev_kvm);
        return;
    }
    g_autofree char *at = utc_now();
    if (!run_probe(p, kernel, ret))
        return;
    ret->source = ML_ACCEL_PROBED;
    ret->probed_at = g_steal_pointer(&at);
    ret->key = g_steal_pointer(&key);
    cache_store(p->cache_file, ret);
}

void ml_host_probe_accel(const char *kernel, struct ml_host_accel *ret)
{
    g_autofree char *cache_file = g_build_filename(ml_cache_dir(), "kvm-probe.json", NULL);
    const char *reprobe = g_getenv("MESHLAB_KVM_REPROBE");
    struct ml_kvm_probe p = {
        .dev_kvm = "/dev/kvm",
        .qemu = ml_host_qemu_binary(),
        .cache_file = cache_file,
        .reprobe = reprobe && *reprobe && strcmp(reprobe, "0") != 0,
        .timeout_s = 20,
    };
    ml_host_probe_accel_with(&p, kernel, ret);
}
