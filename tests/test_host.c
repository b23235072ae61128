/* The KVM verdict is probed once per host kernel, QEMU binary and CPU, and
 * kept: a fake QEMU counts how often it is run. */
#include <json-c/json.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "check.h"
#include "virt/host.h"
#include "core/util.h"

static char *tmpdir;
static char *runs_file;

static char *write_script(const char *name, const char *body)
{
    char *path = g_build_filename(tmpdir, name, NULL);
    g_autofree char *text = g_strdup_printf("#!/bin/sh\necho run >> '%s'\n%s", runs_file, body);
    CHECK(g_file_set_contents(path, text, -1, NULL));
    chmod(path, 0755);
    return path;
}

static int runs(void)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents(runs_file, &text, NULL, NULL))
        return 0;
    int n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

static void probe(struct ml_kvm_probe *p, const char *kernel_id, struct ml_host_accel *ret)
{
    p->host_kernel = kernel_id;
    ml_host_probe_accel_with(p, "/nonexistent/vmlinuz", ret);
}

static void test_cache(void)
{
    g_autofree char *dev = g_build_filename(tmpdir, "kvm", NULL);
    CHECK(g_file_set_contents(dev, "", 0, NULL));
    g_autofree char *qemu = write_script(
        "qemu-refuses", "echo 'qemu-system-x86_64: failed to initialize kvm: Permission "
                        "denied' >&2\nexit 1\n");
    g_autofree char *cache = g_build_filename(tmpdir, "cache", "kvm-probe.json", NULL);
    struct ml_kvm_probe p = {.dev_kvm = dev, .qemu = qemu, .cache_file = cache, .timeout_s = 10};

    struct ml_host_accel first = {0};
    probe(&p, "test-kernel 1", &first);
    CHECK(runs() == 1);
    CHECK(first.source == ML_ACCEL_PROBED && !first.kvm);
    CHECK_STR(first.reason, "KVM probe failed: QEMU said \"qemu-system-x86_64: failed to "
                            "initialize kvm: Permission denied\"; using TCG");
    CHECK(first.probed_at && first.key);
    g_autofree char *key = ml_host_kvm_key(qemu, "test-kernel 1");
    CHECK_STR(first.key, key);
    struct stat st;
    CHECK(stat(cache, &st) == 0 && (st.st_mode & 0777) == 0644);
    struct json_object *saved = json_object_from_file(cache);
    CHECK_STR(json_object_get_string(json_object_object_get(saved, "key")), key);
    json_object_put(saved);
    g_autofree char *origin = ml_host_accel_origin(&first);
    CHECK(g_str_has_prefix(origin, "probed now in "));

    /* Same kernel, QEMU and CPU: the verdict comes from the cache, QEMU is not
     * run, and no guest kernel is needed. */
    struct ml_host_accel again = {0};
    p.host_kernel = "test-kernel 1";
    ml_host_probe_accel_with(&p, NULL, &again);
    CHECK(runs() == 1);
    CHECK(again.source == ML_ACCEL_CACHED && !again.kvm);
    CHECK_STR(again.reason, first.reason);
    CHECK_STR(again.probed_at, first.probed_at);
    CHECK(again.probe_s == first.probe_s);
    g_autofree char *cached = ml_host_accel_origin(&again);
    g_autofree char *want = g_strdup_printf("cached from %s, when the probe took", first.probed_at);
    CHECK(g_str_has_prefix(cached, want));
    CHECK(strstr(cached, "MESHLAB_KVM_REPROBE=1 probes again"));
    CHECK_STR(ml_host_accel_source_name(again.source), "cache");
    ml_host_accel_clear(&again);

    /* Another host kernel invalidates it. */
    struct ml_host_accel other = {0};
    probe(&p, "test-kernel 2", &other);
    CHECK(runs() == 2);
    CHECK(other.source == ML_ACCEL_PROBED);
    ml_host_accel_clear(&other);

    /* So does a forced re-probe. */
    p.reprobe = true;
    probe(&p, "test-kernel 2", &other);
    p.reprobe = false;
    CHECK(runs() == 3);
    CHECK(other.source == ML_ACCEL_PROBED);
    ml_host_accel_clear(&other);

    /* And another QEMU binary (an upgrade changes its size and mtime). */
    g_autofree char *upgraded =
        write_script("qemu-refuses", "# upgraded\necho 'qemu-system-x86_64: no kvm' >&2\nexit 1\n");
    probe(&p, "test-kernel 2", &other);
    CHECK(runs() == 4);
    CHECK(other.source == ML_ACCEL_PROBED);
    CHECK(strstr(other.reason, "no kvm"));
    ml_host_accel_clear(&other);
    probe(&p, "test-kernel 2", &other);
    CHECK(runs() == 4 && other.source == ML_ACCEL_CACHED);
    ml_host_accel_clear(&other);

    /* A cache file that is not ours is ignored, then replaced. */
    CHECK(g_file_set_contents(cache, "<html>not json</html>", -1, NULL));
    probe(&p, "test-kernel 2", &other);
    CHECK(runs() == 5 && other.source == ML_ACCEL_PROBED);
    ml_host_accel_clear(&other);
    probe(&p, "test-kernel 2", &other);
    CHECK(runs() == 5 && other.source == ML_ACCEL_CACHED);
    ml_host_accel_clear(&other);

    /* Without /dev/kvm nothing is probed or read from the cache. */
    g_autofree char *no_dev = g_build_filename(tmpdir, "no-kvm", NULL);
    p.dev_kvm = no_dev;
    probe(&p, "test-kernel 2", &other);
    CHECK(runs() == 5 && other.source == ML_ACCEL_DECIDED && !other.kvm);
    CHECK(ml_host_accel_origin(&other) == NULL);
    ml_host_accel_clear(&other);
    ml_host_accel_clear(&first);
}

/* A kernel that panics under KVM proves it; a hang ends at the deadline and
 * QEMU's complaint about SIGTERM is not taken for its verdict. */
static void test_verdicts(void)
{
    g_autofree char *dev = g_build_filename(tmpdir, "kvm", NULL);
    g_autofree char *cache = g_build_filename(tmpdir, "cache2", "kvm-probe.json", NULL);
    g_autofree char *works = write_script(
        "qemu-works", "for a; do case \"$a\" in file:*) echo 'Kernel panic - not syncing: "
                      "VFS' > \"${a#file:}\";; esac; done\nexit 0\n");
    struct ml_kvm_probe p = {.dev_kvm = dev, .qemu = works, .cache_file = cache, .timeout_s = 10};
    struct ml_host_accel a = {0};
    int before = runs();
    probe(&p, "test-kernel 3", &a);
    CHECK(a.kvm && a.source == ML_ACCEL_PROBED);
    CHECK(g_str_has_prefix(a.reason, "a Linux kernel booted under KVM to its first panic"));
    ml_host_accel_clear(&a);
    probe(&p, "test-kernel 3", &a);
    CHECK(a.kvm && a.source == ML_ACCEL_CACHED && runs() == before + 1);
    ml_host_accel_clear(&a);

    g_autofree char *hangs = write_script(
        "qemu-hangs", "trap 'echo qemu-system-x86_64: terminating on signal 15 >&2; exit 1' "
                      "TERM\nsleep 30 &\nwait\n");
    p.qemu = hangs;
    p.timeout_s = 1;
    double t0 = ml_now();
    probe(&p, "test-kernel 3", &a);
    CHECK(ml_now() - t0 < 4);
    CHECK(!a.kvm && a.source == ML_ACCEL_PROBED);
    CHECK_STR(a.reason, "KVM probe failed: a kernel under KVM printed nothing in 1 s; using TCG");
    ml_host_accel_clear(&a);
}

static void test_key(void)
{
    struct utsname u;
    CHECK(uname(&u) == 0);
    g_autofree char *key = ml_host_kvm_key("/nonexistent/qemu", NULL);
    g_autofree char *want =
        g_strdup_printf("kernel %s %s; qemu /nonexistent/qemu missing; cpu ", u.release, u.version);
    CHECK(g_str_has_prefix(key, want));
    CHECK(strstr(key, ", flags "));
}

int main(void)
{
    g_unsetenv("MESHLAB_ACCEL");
    tmpdir = g_dir_make_tmp("meshlab-test-host-XXXXXX", NULL);
    runs_file = g_build_filename(tmpdir, "runs", NULL);
    test_cache();
    test_verdicts();
    test_key();
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
    CHECK(system(cmd) == 0);
    g_free(runs_file);
    g_free(tmpdir);
    return check_finish();
}
