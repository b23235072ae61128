#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "cli/commands.h"
#include "cli/print.h"
#include "cache/artifacts.h"
#include "cache/gobuild.h"
#include "dataplanes/dataplane.h"
#include "virt/host.h"
#include "cache/image.h"
#include "virt/warm.h"
#include "core/leftovers.h"
#include "topology/plan.h"
#include "core/util.h"
#include "results/json.h"
#include "virt/virt.h"

static const char check_usage[] =
    "Usage: meshlab check [--connect URI] [--json]\n\n"
    "Checks that this host can run a lab, and says what to do about each problem:\n"
    "libvirt reachable, QEMU present, whether KVM really runs a guest (otherwise guests\n"
    "run under TCG and libguestfs needs force_tcg), the host tools meshlab calls, free\n"
    "disk and memory, the image cache, and the saved guests a lab's next up restores\n"
    "(the warm start). Exits 1 if a lab cannot run here.\n\n"
    "The KVM verdict (a probe of up to 20 s) is kept in CACHE/kvm-probe.json for this\n"
    "host kernel, QEMU binary and CPU model; a change of any of them probes again, and\n"
    "so does MESHLAB_KVM_REPROBE=1 (for 'check', 'up' and 'run' alike).\n\n"
    "With --connect URI naming another host (qemu+ssh://root@server/system), check\n"
    "asks that host's libvirt for its name, CPUs, memory, emulator and whether it\n"
    "offers KVM, and checks this machine's tools, disk and cache; this machine's QEMU,\n"
    "KVM probe and memory are not that host's and are left out (\"qemu\",\n"
    "\"accelerator\" and \"memory\" are null).\n\n"
    "  --connect URI  the libvirt host to check (default: MESHLAB_URI, or qemu:///system)\n"
    "  -j, --json  print one JSON object instead: \"ok\" (a lab can run here; for another\n"
    "              host: it answers and this machine has what meshlab needs; up probes\n"
    "              its KVM there), \"problems\" (the checks that failed), and one\n"
    "              member per check: \"libvirt\" {\"uri\", \"version\", \"qemu_version\",\n"
    "              \"remote\", and for another host \"host\", \"host_cpus\",\n"
    "              \"host_memory_bytes\", \"host_free_memory_bytes\", \"host_emulator\",\n"
    "              \"host_kvm_offered\"},\n"
    "              \"qemu\", \"accelerator\" {\"kvm\", \"reason\", \"source\"}, \"tools\" "
    "[{\"name\",\n"
    "              \"path\", \"ok\"}], \"disk\", \"memory\", \"image_cache\", \"artifacts\",\n"
    "              \"saved_guests\" [\"LAB/NODE SIZE key KEY\"], \"leftovers\"; a failed\n"
    "              check has \"ok\": false and \"advice\"\n";

/* Each check is an object with "ok" (or, for what only informs, none) and,
 * when it failed, "advice": what to do. The document's "problems" names the
 * checks that failed and "ok" says whether a lab can run here. */

static struct json_object *str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

static void verdict(struct json_object *doc, const char *what, struct json_object *item, bool ok,
                    const char *advice)
{
    json_object_object_add(item, "ok", json_object_new_boolean(ok));
    if (!ok) {
        json_object_object_add(item, "advice", str_or_null(advice));
        json_object_array_add(ml_j_get(doc, "problems"), json_object_new_string(what));
    }
}

static void version_add(struct json_object *o, const char *key, unsigned long v)
{
    g_autofree char *s = g_strdup_printf("%lu.%lu.%lu", v / 1000000, v / 1000 % 1000, v % 1000);
    json_object_object_add(o, key, json_object_new_string(s));
}

/* The emulator a libvirt host would run for domain type virttype, from its domain
 * capabilities; NULL when it offers none (for "kvm": the host has no usable /dev/kvm). */
static char *host_emulator(virConnectPtr conn, const char *virttype)
{
    char *xml = virConnectGetDomainCapabilities(conn, NULL, "x86_64", NULL, virttype, 0);
    virResetLastError();
    const char *a = xml ? strstr(xml, "<path>") : NULL;
    const char *b = a ? strstr(a, "</path>") : NULL;
    char *path = b ? g_strndup(a + strlen("<path>"), (size_t)(b - a - strlen("<path>"))) : NULL;
    free(xml);
    return path;
}

/* What a remote libvirt host says of itself: its name, CPUs, memory, and the emulator and
 * KVM its domain capabilities offer. This machine's own probes (QEMU, KVM, memory) are not
 * that host's, and are not made. */
static void remote_host(struct json_object *o, virConnectPtr conn)
{
    char *name = virConnectGetHostname(conn);
    json_object_object_add(o, "host", str_or_null(name));
    free(name);
    virNodeInfo info;
    if (virNodeGetInfo(conn, &info) == 0) {
        json_object_object_add(o, "host_cpus", json_object_new_int64(info.cpus));
        json_object_object_add(o, "host_memory_bytes",
                               json_object_new_int64((int64_t)info.memory * 1024));
    }
    unsigned long long free_b = virNodeGetFreeMemory(conn);
    json_object_object_add(o, "host_free_memory_bytes",
                           free_b ? json_object_new_int64((int64_t)free_b) : NULL);
    g_autofree char *qemu = host_emulator(conn, "qemu");
    g_autofree char *kvm = host_emulator(conn, "kvm");
    json_object_object_add(o, "host_emulator", str_or_null(qemu));
    json_object_object_add(o, "host_kvm_offered", json_object_new_boolean(kvm != NULL));
    virResetLastError();
}

static struct json_object *check_libvirt(struct json_object *doc, bool *ret_remote)
{
    struct json_object *o = json_object_new_object();
    g_autofree char *shown = ml_uri_public(ml_virt_uri());
    json_object_object_add(o, "uri", json_object_new_string(shown));
    g_autoptr(GError) err = NULL;
    virConnectPtr conn = ml_virt_connect(ml_virt_uri(), &err);
    *ret_remote = ml_virt_uri_remote(ml_virt_uri()) == 1;
    if (conn) {
        unsigned long lib = 0, hv = 0;
        virConnectGetLibVersion(conn, &lib);
        virConnectGetVersion(conn, &hv);
        version_add(o, "version", lib);
        version_add(o, "qemu_version", hv);
        *ret_remote = ml_virt_conn_remote(conn) == 1;
        if (*ret_remote)
            remote_host(o, conn);
        virConnectClose(conn);
    } else {
        json_object_object_add(o, "error", json_object_new_string(err->message));
    }
    json_object_object_add(o, "remote", json_object_new_boolean(*ret_remote));
    verdict(doc, "libvirt", o, conn != NULL,
            *ret_remote ? "check that 'virsh -c URI version' works from this machine, and that "
                          "libvirtd runs on that host"
                        : "apt-get install libvirt-daemon-system; then start the daemons: mkdir "
                          "-p /run/libvirt; virtlogd -d; libvirtd -d");
    return o;
}

static struct json_object *check_qemu(struct json_object *doc)
{
    const char *qemu = ml_host_qemu_binary();
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "path", str_or_null(qemu));
    verdict(doc, "qemu", o, qemu != NULL, "apt-get install qemu-system-x86");
    return o;
}

static struct json_object *check_accelerator(void)
{
    g_autofree char *kernel = ml_image_any_cached_kernel(ml_cache_dir());
    struct ml_host_accel accel;
    ml_host_probe_accel(kernel, &accel);
    g_autofree char *origin = ml_host_accel_origin(&accel);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "kvm", json_object_new_boolean(accel.kvm));
    json_object_object_add(o, "reason", str_or_null(accel.reason));
    json_object_object_add(o, "source",
                           json_object_new_string(ml_host_accel_source_name(accel.source)));
    json_object_object_add(o, "origin", str_or_null(origin));
    ml_host_accel_clear(&accel);
    return o;
}

static struct json_object *check_tools(struct json_object *doc)
{
    static const struct {
        const char *name, *package;
    } tools[] = {
        {"mmdebstrap", "mmdebstrap"},
        {"mkfs.ext4", "e2fsprogs"},
        {"qemu-img", "qemu-utils"},
        {"cloud-localds", "cloud-image-utils"},
        {"genisoimage", "genisoimage"},
        {"gpgv", "gpgv"}, /* checks the Ubuntu archive's signature before its packages go in */
    };
    struct json_object *list = json_object_new_array();
    for (size_t i = 0; i < G_N_ELEMENTS(tools); i++) {
        g_autofree char *path = g_find_program_in_path(tools[i].name);
        g_autofree char *advice = g_strdup_printf("apt-get install %s", tools[i].package);
        struct json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(tools[i].name));
        json_object_object_add(o, "path", str_or_null(path));
        json_object_object_add(o, "package", json_object_new_string(tools[i].package));
        verdict(doc, tools[i].name, o, path != NULL, advice);
        json_object_array_add(list, o);
    }
    return list;
}

static struct json_object *check_disk(struct json_object *doc)
{
    bool have_cache = g_file_test(ml_cache_dir(), G_FILE_TEST_IS_DIR);
    const char *where = have_cache ? ml_cache_dir() : "/var";
    gint64 free_bytes = ml_host_free_bytes(where);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "cache_dir", json_object_new_string(ml_cache_dir()));
    json_object_object_add(o, "measured_at", json_object_new_string(where));
    json_object_object_add(o, "free_bytes", json_object_new_int64(free_bytes));
    json_object_object_add(o, "needed_bytes", json_object_new_int64(4LL << 30));
    verdict(doc, "disk", o, free_bytes > 4LL << 30,
            "free at least 4 GiB: an image is ~0.5 GiB, a build ~3 GiB");
    return o;
}

static struct json_object *check_memory(struct json_object *doc)
{
    gint64 mem = ml_host_mem_available();
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "available_bytes", json_object_new_int64(mem));
    json_object_object_add(o, "needed_bytes", json_object_new_int64(4LL << 30));
    verdict(doc, "memory", o, mem > 4LL << 30, "three 1 GiB guests need about 4 GiB available");
    return o;
}

static struct json_object *check_image_cache(struct json_object *doc)
{
    struct json_object *o = json_object_new_object();
    g_autoptr(GError) kerr = NULL;
    g_autofree char *key = ml_image_debian_key(&kerr);
    if (!key) {
        json_object_object_add(o, "error", json_object_new_string(kerr->message));
        verdict(doc, "image debian-12", o, false, NULL);
        return o;
    }
    g_autofree char *name = g_strdup_printf("debian-12-%s", key);
    g_autofree char *manifest = g_build_filename(ml_cache_dir(), name, "manifest", NULL);
    json_object_object_add(o, "name", json_object_new_string(name));
    json_object_object_add(o, "cached",
                           json_object_new_boolean(g_file_test(manifest, G_FILE_TEST_EXISTS)));
    /* Builds of earlier recipes stay behind; say where the space went. */
    struct json_object *stale = json_object_new_array();
    g_autoptr(GDir) cache = g_dir_open(ml_cache_dir(), 0, NULL);
    const char *entry;
    while (cache && (entry = g_dir_read_name(cache))) {
        if (!g_str_has_prefix(entry, "debian-12-") || !strcmp(entry, name))
            continue;
        g_autofree char *old = g_build_filename(ml_cache_dir(), entry, NULL);
        json_object_array_add(stale, json_object_new_string(old));
    }
    json_object_object_add(o, "stale", stale);
    verdict(doc, "image debian-12", o, true, NULL);
    return o;
}

static struct json_object *check_artifacts(void)
{
    g_autoptr(GString) missing = g_string_new(NULL);
    bool absent = ml_artifacts_missing(ml_cache_dir(), missing);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "cached", json_object_new_boolean(!absent));
    for (const char *const *n = ml_artifact_names; *n; n++)
        json_object_object_add(o, *n, json_object_new_string(ml_artifact_version(*n)));
    /* What each dataplane needs fetched (its descriptor's list), and whether all of it is here:
     * without it that dataplane's paths are reported as not run. */
    struct json_object *dps = json_object_new_array();
    for (size_t d = 0; ml_dataplanes[d]; d++) {
        const struct ml_dataplane *dp = ml_dataplanes[d];
        if (!dp->fetched)
            continue;
        struct json_object *e = json_object_new_object(), *names = json_object_new_array();
        bool here = true;
        for (const char *const *n = dp->fetched; *n; n++) {
            g_autofree char *path = ml_artifact_path(ml_cache_dir(), *n);
            here = here && path;
            json_object_array_add(names, json_object_new_string(*n));
        }
        json_object_object_add(e, "name", json_object_new_string(dp->name));
        json_object_object_add(e, "fetched", names);
        json_object_object_add(e, "cached", json_object_new_boolean(here));
        json_object_array_add(dps, e);
    }
    json_object_object_add(o, "dataplanes", dps);
    struct json_object *list = json_object_new_array();
    g_auto(GStrv) paths = g_strsplit(missing->str, "\n", -1);
    for (size_t i = 0; paths[i]; i++)
        if (*paths[i])
            json_object_array_add(list, json_object_new_string(paths[i]));
    json_object_object_add(o, "missing", list);
    /* How each was obtained, and whether this machine can build them where it cannot download. */
    for (const char *const *n = ml_artifact_names; *n; n++) {
        struct json_object *p = ml_artifact_provenance(ml_cache_dir(), *n);
        g_autofree char *key = g_strdup_printf("%s_obtained", *n);
        json_object_object_add(o, key, p ? json_object_get(ml_j_get(p, "obtained")) : NULL);
        json_object_put(p);
    }
    g_autofree char *module = ml_gobuild_module_dir();
    struct ml_go go = {0};
    g_autoptr(GError) e = NULL;
    bool have_go = ml_go_find(module, &go, &e);
    struct json_object *g = json_object_new_object();
    json_object_object_add(g, "ok", json_object_new_boolean(have_go));
    json_object_object_add(g, "version", have_go ? json_object_new_string(go.version) : NULL);
    json_object_object_add(g, "path", have_go ? json_object_new_string(go.path) : NULL);
    json_object_object_add(g, "error", have_go ? NULL : json_object_new_string(e->message));
    json_object_object_add(o, "go", g);
    ml_go_clear(&go);
    return o;
}

static void add_leftover(const char *path, void *opaque)
{
    json_object_array_add(opaque, json_object_new_string(path));
}

struct json_object *cmd_check_collect(void)
{
    struct json_object *doc = json_object_new_object();
    json_object_object_add(doc, "ok", json_object_new_boolean(false)); /* first; set below */
    json_object_object_add(doc, "problems", json_object_new_array());
    bool remote;
    struct json_object *lv = check_libvirt(doc, &remote);
    json_object_object_add(doc, "libvirt", lv);
    if (remote) {
        /* This machine's QEMU, KVM and memory say nothing of that host's; what libvirt says
         * of it is in "libvirt". A lab cannot be built there yet (up refuses), so no verdict
         * rests on them. */
        json_object_object_add(doc, "qemu", NULL);
        json_object_object_add(doc, "accelerator", NULL);
    } else {
        json_object_object_add(doc, "qemu", check_qemu(doc));
        json_object_object_add(doc, "accelerator", check_accelerator());
    }
    json_object_object_add(doc, "tools", check_tools(doc));
    json_object_object_add(doc, "disk", check_disk(doc));
    json_object_object_add(doc, "memory", remote ? NULL : check_memory(doc));
    json_object_object_add(doc, "image_cache", check_image_cache(doc));
    json_object_object_add(doc, "artifacts", check_artifacts());
    struct json_object *warm = json_object_new_array();
    g_autoptr(GPtrArray) saved = ml_warm_list(NULL);
    for (guint i = 0; i < saved->len; i++)
        json_object_array_add(warm, json_object_new_string(g_ptr_array_index(saved, i)));
    json_object_object_add(doc, "saved_guests", warm);
    struct json_object *leftovers = json_object_new_array();
    ml_leftovers_sweep(false, add_leftover, leftovers);
    json_object_object_add(doc, "leftovers", leftovers);
    bool ok = json_object_array_length(ml_j_get(doc, "problems")) == 0;
    json_object_object_add(doc, "ok", json_object_new_boolean(ok));
    return doc;
}

/* The text form: "ok", "FAIL" or "info", what, and a detail; then, indented,
 * what to do. */
static void line(FILE *f, const char *mark, const char *what, const char *detail)
{
    fprintf(f, "%-5s %-22s %s\n", mark, what, detail);
}

static void more(FILE *f, const char *text)
{
    fprintf(f, "      %-22s    %s\n", "", text);
}

static void verdict_line(FILE *f, struct json_object *o, const char *what, const char *detail)
{
    bool ok = ml_j_bool(o, "ok");
    line(f, ok ? "ok" : "FAIL", what, detail);
    if (!ok && ml_j_str(o, "advice"))
        fprintf(f, "      %-22s -> %s\n", "", ml_j_str(o, "advice"));
}

static void text_libvirt(FILE *f, struct json_object *o)
{
    g_autofree char *d = NULL;
    if (ml_j_bool(o, "ok"))
        d = g_strdup_printf("%s: libvirt %s, QEMU %s", ml_j_str(o, "uri"), ml_j_str(o, "version"),
                            ml_j_str(o, "qemu_version"));
    else
        d = g_strdup(ml_j_str(o, "error"));
    verdict_line(f, o, "libvirt", d);
}

static void text_accelerator(FILE *f, struct json_object *o)
{
    bool kvm = ml_j_bool(o, "kvm");
    g_autofree char *d = g_strdup_printf("%s: %s", kvm ? "KVM" : "TCG", ml_j_str(o, "reason"));
    line(f, "info", "accelerator", d);
    if (ml_j_str(o, "origin"))
        more(f, ml_j_str(o, "origin"));
    if (!kvm) {
        more(f, "guests run as libvirt domain type 'qemu' (slow but exact byte ratios);");
        more(f, "libguestfs gets backend setting force_tcg");
    }
}

static void text_image_cache(FILE *f, struct json_object *o)
{
    if (!ml_j_bool(o, "ok")) {
        verdict_line(f, o, "image debian-12", ml_j_str(o, "error"));
        return;
    }
    bool cached = ml_j_bool(o, "cached");
    g_autofree char *d =
        g_strdup_printf("%s (%s)", cached ? "cached" : "not built yet", ml_j_str(o, "name"));
    line(f, "info", "image debian-12", d);
    if (!cached)
        more(f, "the first 'meshlab up' builds it from the Debian mirror (about a minute)");
    struct json_object *stale = ml_j_get(o, "stale");
    for (size_t i = 0; stale && i < json_object_array_length(stale); i++) {
        const char *old = json_object_get_string(json_object_array_get_idx(stale, i));
        g_autofree char *base = g_path_get_basename(old);
        g_autofree char *d2 = g_strdup_printf("%s is from an earlier recipe; unless a lab still "
                                              "running uses it, 'rm -r %s' frees about 0.5 GiB",
                                              base, old);
        line(f, "info", "image cache", d2);
    }
}

/* A remote host as libvirt describes it. */
static void text_remote(FILE *f, struct json_object *lv)
{
    if (!ml_j_bool(lv, "ok"))
        return;
    g_autofree char *d = g_strdup_printf(
        "%s: %" PRId64 " CPUs, %.1f GiB memory, %.1f GiB free", ml_j_str_or(lv, "host", "?"),
        ml_j_int(lv, "host_cpus"), (double)ml_j_int(lv, "host_memory_bytes") / 1073741824.0,
        (double)ml_j_int(lv, "host_free_memory_bytes") / 1073741824.0);
    line(f, "info", "remote host", d);
    const char *emu = ml_j_str(lv, "host_emulator");
    line(f, "info", "qemu", emu ? emu : "the host's libvirt offers no x86_64 emulator");
    line(f, "info", "accelerator",
         ml_j_bool(lv, "host_kvm_offered")
             ? "the host's libvirt offers KVM (domain capabilities); not probed"
             : "the host's libvirt offers no KVM: guests there would run under TCG");
    more(f, "'up' there decides: a transient KVM domain on that host boots a kernel to its");
    more(f, "first panic, and the lab runs under TCG if it does not");
}

/* One dataplane's fetched programs: "tailscale, headscale   cached (1.102.5, 0.29.3): how", or
 * not in the cache, with what to run. */
static void text_fetched(FILE *f, struct json_object *art, struct json_object *dp)
{
    struct json_object *names = ml_j_get(dp, "fetched");
    g_autoptr(GString) key = g_string_new(NULL), versions = g_string_new(NULL);
    for (size_t i = 0; i < ml_j_len(names); i++) {
        const char *n = json_object_get_string(json_object_array_get_idx(names, i));
        g_string_append_printf(key, "%s%s", i ? ", " : "", n);
        g_string_append_printf(versions, "%s%s", i ? ", " : "", ml_j_str_or(art, n, "?"));
    }
    if (ml_j_bool(dp, "cached")) {
        const char *first = json_object_get_string(json_object_array_get_idx(names, 0));
        g_autofree char *how = g_strdup_printf("%s_obtained", first ? first : "");
        g_autofree char *d =
            g_strdup_printf("cached (%s): %s", versions->str, ml_j_str_or(art, how, "verified"));
        line(f, "info", key->str, d);
        return;
    }
    line(f, "info", key->str, "not in the cache");
    g_string_replace(key, ",", "", 0);
    g_autofree char *m = g_strdup_printf(
        "the %s paths will be reported as not run; 'meshlab fetch %s' downloads them, or builds "
        "them from their Go modules where the publishers cannot be reached",
        ml_j_str_or(dp, "name", "?"), key->str);
    more(f, m);
}

void cmd_check_text(FILE *f, struct json_object *doc)
{
    struct json_object *lv = ml_j_get(doc, "libvirt");
    text_libvirt(f, lv);
    if (ml_j_bool(lv, "remote")) {
        text_remote(f, lv);
    } else {
        struct json_object *qemu = ml_j_get(doc, "qemu");
        verdict_line(f, qemu, "qemu",
                     ml_j_str(qemu, "path") ? ml_j_str(qemu, "path") : "no qemu-system-x86_64");
        text_accelerator(f, ml_j_get(doc, "accelerator"));
    }
    struct json_object *tools = ml_j_get(doc, "tools");
    for (size_t i = 0; tools && i < json_object_array_length(tools); i++) {
        struct json_object *t = json_object_array_get_idx(tools, i);
        const char *path = ml_j_str(t, "path");
        verdict_line(f, t, ml_j_str(t, "name"), path ? path : "not found");
    }
    struct json_object *disk = ml_j_get(doc, "disk");
    const char *cache_dir = ml_j_str(disk, "cache_dir");
    const char *measured = ml_j_str(disk, "measured_at");
    double gib = (double)ml_j_int(disk, "free_bytes") / 1073741824.0;
    g_autofree char *dd = g_strcmp0(cache_dir, measured)
                              ? g_strdup_printf("%.1f GiB free on %s (%s does not exist yet)", gib,
                                                measured, cache_dir)
                              : g_strdup_printf("%.1f GiB free for %s", gib, cache_dir);
    verdict_line(f, disk, "disk", dd);
    struct json_object *mem = ml_j_get(doc, "memory");
    if (mem) {
        g_autofree char *md = g_strdup_printf(
            "%.1f GiB available", (double)ml_j_int(mem, "available_bytes") / 1073741824.0);
        verdict_line(f, mem, "memory", md);
    }
    text_image_cache(f, ml_j_get(doc, "image_cache"));
    struct json_object *art = ml_j_get(doc, "artifacts");
    struct json_object *go = ml_j_get(art, "go");
    struct json_object *dps = ml_j_get(art, "dataplanes");
    for (size_t d = 0; d < ml_j_len(dps); d++)
        text_fetched(f, art, json_object_array_get_idx(dps, d));
    if (go && ml_j_bool(go, "ok")) {
        g_autofree char *d = g_strdup_printf("Go %s (%s): builds Tailscale and Headscale from "
                                             "their modules",
                                             ml_j_str(go, "version"), ml_j_str(go, "path"));
        line(f, "info", "go", d);
    } else if (go) {
        line(f, "info", "go", "none that builds Tailscale and Headscale");
        more(f, ml_j_str_or(go, "error", "?"));
    }
    struct json_object *warm = ml_j_get(doc, "saved_guests");
    size_t n_warm = warm ? json_object_array_length(warm) : 0;
    for (size_t i = 0; i < n_warm; i++)
        line(f, "info", "saved guest", json_object_get_string(json_object_array_get_idx(warm, i)));
    if (n_warm)
        more(f, "the next up of each lab restores these (warm start); 'meshlab down LAB "
                "--purge-cache' drops a lab's");
    struct json_object *left = ml_j_get(doc, "leftovers");
    size_t n_left = left ? json_object_array_length(left) : 0;
    for (size_t i = 0; i < n_left; i++)
        line(f, "info", "leftover", json_object_get_string(json_object_array_get_idx(left, i)));
    if (n_left) {
        g_autofree char *d = g_strdup_printf("%zu leftover(s) of killed meshlab runs; 'meshlab "
                                             "down LAB' (any lab name) removes them",
                                             n_left);
        more(f, d);
    }
    if (ml_j_bool(lv, "remote"))
        fprintf(f, "%s\n",
                ml_j_bool(doc, "ok")
                    ? "the remote host answers, and this machine has what meshlab needs"
                    : "some checks failed: fix them, then check again");
    else
        fprintf(f, "%s\n",
                ml_j_bool(doc, "ok")
                    ? "this host can run a lab"
                    : "some checks failed: a lab cannot run here until they are fixed");
}

int cmd_check_main(int argc, char **argv)
{
    int status;
    enum cmd_format format;
    if (!cmd_print_args(argc, argv, check_usage, 0, &format, &status))
        return status;
    struct json_object *doc = cmd_check_collect();
    cmd_print(stdout, format, doc, cmd_check_text);
    bool ok = ml_j_bool(doc, "ok");
    json_object_put(doc);
    return ok ? ML_EXIT_OK : ML_EXIT_FAIL;
}
