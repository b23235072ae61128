#include "measure/hostinfo.h"

#include <errno.h>
#include <stdlib.h>
#include <libvirt/virterror.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "dataplanes/dataplane.h"
#include "topology/plan.h"
#include "virt/agent.h"

#define SECTION "### meshlab: "

const char *const ml_hostinfo_sysctls[] = {
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_congestion_control",
    "net.core.default_qdisc",
    "net.ipv4.ip_forward",
    "net.core.netdev_max_backlog",
    "net.ipv4.tcp_mtu_probing",
    NULL,
};

/* The command's fixed sections; then, for each daemon of the registry (dataplane.h), its
 * version as the dataplane says it prints it (upstream sources cited in tests/test_hostinfo.c).
 * A binary that is not installed prints nothing, and its section stays empty. */
// clang-format off
static const char fixed_sections[] =
    /* tailscaled and headscale live in /usr/local (path_tailscale.c installs them there) */
    "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C; "
    "echo '" SECTION "kernel'; uname -r; "
    "echo '" SECTION "vcpus'; getconf _NPROCESSORS_ONLN; "
    "echo '" SECTION "memory'; grep '^MemTotal:' /proc/meminfo; "
    "echo '" SECTION "offloads'; ethtool -k " ML_LAB_NIC " 2>/dev/null; "
    "echo '" SECTION "sysctls'; sysctl net.core.rmem_max net.core.wmem_max net.ipv4.tcp_rmem "
    "net.ipv4.tcp_wmem net.ipv4.tcp_congestion_control net.core.default_qdisc "
    "net.ipv4.ip_forward net.core.netdev_max_backlog net.ipv4.tcp_mtu_probing 2>/dev/null; "
    "echo '" SECTION "links'; ip -o link 2>/dev/null; ";
// clang-format on

char *ml_hostinfo_command(void)
{
    GString *c = g_string_new(fixed_sections);
    for (size_t i = 0; ml_daemon_at(i); i++) {
        const struct ml_dp_daemon *d = ml_daemon_at(i);
        g_string_append_printf(c, "echo '" SECTION "%s'; { %s; } 2>/dev/null; ", d->name,
                               d->version);
    }
    g_string_append(c, "echo '" SECTION "end'; true");
    return g_string_free(c, FALSE);
}

/* The lines of section name (without its label line), "" when it printed
 * nothing, NULL when the output has no such label. */
static char *section(const char *text, const char *name)
{
    g_autofree char *label = g_strconcat(SECTION, name, NULL);
    g_autoptr(GString) s = NULL;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++) {
        if (g_str_has_prefix(*l, SECTION)) {
            if (s)
                break;
            if (strcmp(*l, label) == 0)
                s = g_string_new(NULL);
        } else if (s) {
            g_string_append_printf(s, "%s\n", *l);
        }
    }
    return s ? g_string_free(g_steal_pointer(&s), FALSE) : NULL;
}

static bool parse_long(const char *s, long long *ret)
{
    while (g_ascii_isspace(*s))
        s++;
    if (!g_ascii_isdigit(*s))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno)
        return false;
    *ret = v;
    return true;
}

static struct json_object *first_line(const char *s)
{
    if (!s)
        return NULL;
    g_autofree char *line = g_strndup(s, strcspn(s, "\n"));
    g_strstrip(line);
    return *line ? json_object_new_string(line) : NULL;
}

static struct json_object *number(const char *s)
{
    long long v;
    return s && parse_long(s, &v) ? json_object_new_int64(v) : NULL;
}

/* "MemTotal:        1004112 kB" -> whole MiB. */
static struct json_object *memory_mib(const char *s)
{
    long long kib;
    if (!s || !g_str_has_prefix(s, "MemTotal:") || !parse_long(s + strlen("MemTotal:"), &kib))
        return NULL;
    return json_object_new_int64(kib / 1024);
}

/* `ethtool -k eth0`: "Features for eth0:" then "name: value" lines, the
 * sub-features indented; every feature is kept, its value as printed. */
static struct json_object *offloads(const char *s)
{
    if (!s || !*s)
        return NULL;
    struct json_object *o = json_object_new_object();
    g_auto(GStrv) lines = g_strsplit(s, "\n", -1);
    for (char **l = lines; *l; l++) {
        g_strstrip(*l);
        char *colon = strstr(*l, ": ");
        if (g_str_has_prefix(*l, "Features for ") || !colon)
            continue;
        *colon = '\0';
        json_object_object_add(o, *l, json_object_new_string(g_strstrip(colon + 2)));
    }
    return o;
}

/* `sysctl A B ...`: "name = value" lines; a multi-value sysctl's tabs become
 * single spaces. Every recorded name is written, null when not printed. */
static struct json_object *sysctls(const char *s)
{
    struct json_object *o = json_object_new_object();
    for (const char *const *name = ml_hostinfo_sysctls; *name; name++)
        json_object_object_add(o, *name, NULL);
    g_auto(GStrv) lines = g_strsplit(s ? s : "", "\n", -1);
    for (char **l = lines; *l; l++) {
        char *eq = strstr(*l, " = ");
        if (!eq)
            continue;
        *eq = '\0';
        const char *name = g_strstrip(*l);
        if (!json_object_object_get_ex(o, name, NULL))
            continue;
        g_auto(GStrv) words = g_strsplit_set(eq + 3, " \t", -1);
        g_autoptr(GString) value = g_string_new(NULL);
        for (char **w = words; *w; w++)
            if (**w)
                g_string_append_printf(value, "%s%s", value->len ? " " : "", *w);
        json_object_object_add(o, name, json_object_new_string(value->str));
    }
    return o;
}

/* `ip -o link`: "4: eth0@if5: <...> mtu 1500 qdisc ..."; the name loses its
 * "@peer" part. */
static struct json_object *mtus(const char *s)
{
    if (!s || !*s)
        return NULL;
    struct json_object *o = json_object_new_object();
    g_auto(GStrv) lines = g_strsplit(s, "\n", -1);
    for (char **l = lines; *l; l++) {
        char *name = strstr(*l, ": ");
        const char *mtu = strstr(*l, " mtu ");
        long long v;
        if (!name || !mtu || !parse_long(mtu + strlen(" mtu "), &v))
            continue;
        name += 2;
        name[strcspn(name, ":@")] = '\0';
        if (*name)
            json_object_object_add(o, name, json_object_new_int64(v));
    }
    return o;
}

/* The first "1.2.3" or "v1.2.3" in what the daemon printed, without the "v";
 * the first line as printed when it names no version ("Version:" from a build
 * that was not stamped); null when it printed nothing (not installed). */
static struct json_object *version(const char *s)
{
    if (!s)
        return NULL;
    g_auto(GStrv) words = g_strsplit_set(s, " \t\n", -1);
    for (char **w = words; *w; w++) {
        const char *t = **w == 'v' ? *w + 1 : *w;
        size_t n = strspn(t, "0123456789.");
        /* a suffix only as a pre-release or build tag: "1.6.1-rc1", "0.29.0-beta.4" */
        if (n >= 3 && g_ascii_isdigit(t[0]) && memchr(t, '.', n) &&
            (!t[n] || t[n] == '-' || t[n] == '+'))
            return json_object_new_string(t);
    }
    return first_line(s);
}

bool ml_hostinfo_parse(const char *text, struct json_object **ret, GError **err)
{
    g_autofree char *kernel = section(text, "kernel");
    g_autofree char *end = section(text, "end");
    if (!kernel || !end) {
        g_set_error(err, ML_ERROR, ML_ERR_GUEST,
                    "the host information is not what meshlab's command prints (no '" SECTION
                    "%s' line): '%.80s'; the guest's shell or agent cut it short",
                    kernel ? "end" : "kernel", text);
        return false;
    }
    g_autofree char *vcpus = section(text, "vcpus");
    g_autofree char *memory = section(text, "memory");
    g_autofree char *features = section(text, "offloads");
    g_autofree char *sys = section(text, "sysctls");
    g_autofree char *links = section(text, "links");

    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "kernel", first_line(kernel));
    json_object_object_add(o, "vcpus", number(vcpus));
    json_object_object_add(o, "memory_mib", memory_mib(memory));
    json_object_object_add(o, "offloads", offloads(features));
    json_object_object_add(o, "sysctls", sysctls(sys));
    json_object_object_add(o, "mtu_bytes", mtus(links));
    struct json_object *d = json_object_new_object();
    for (size_t i = 0; ml_daemon_at(i); i++) {
        const char *name = ml_daemon_at(i)->name;
        g_autofree char *printed = section(text, name);
        json_object_object_add(d, name, version(printed));
    }
    json_object_object_add(o, "daemons", d);
    *ret = o;
    return true;
}

struct json_object *ml_hostinfo_guest(virDomainPtr dom, GError **err)
{
    g_autofree char *cmd = ml_hostinfo_command();
    g_autofree char *out = ml_agent_run(dom, cmd, NULL, 30, err);
    struct json_object *o = NULL;
    if (!out || !ml_hostinfo_parse(out, &o, err))
        return NULL;
    return o;
}

char *ml_hostinfo_cpu_model(const char *cpuinfo)
{
    g_auto(GStrv) lines = g_strsplit(cpuinfo ? cpuinfo : "", "\n", -1);
    for (char **l = lines; *l; l++) {
        if (!g_str_has_prefix(*l, "model name"))
            continue;
        const char *colon = strchr(*l, ':');
        if (!colon)
            continue;
        char *model = g_strstrip(g_strdup(colon + 1));
        if (*model)
            return model;
        g_free(model);
    }
    return NULL;
}

/* The text of the first <tag> inside <host><cpu> of libvirt's capabilities; NULL if none. */
static char *caps_cpu_field(const char *caps, const char *tag)
{
    const char *host = caps ? strstr(caps, "<host>") : NULL;
    const char *cpu = host ? strstr(host, "<cpu>") : NULL;
    const char *end = cpu ? strstr(cpu, "</cpu>") : NULL;
    g_autofree char *open = g_strdup_printf("<%s", tag);
    const char *a = cpu ? g_strstr_len(cpu, end - cpu, open) : NULL;
    const char *gt = a ? strchr(a, '>') : NULL;
    const char *b = gt ? strchr(gt, '<') : NULL;
    return b && b < end ? g_strndup(gt + 1, (gsize)(b - gt - 1)) : NULL;
}

struct json_object *ml_hostinfo_host(virConnectPtr remote)
{
    if (remote) {
        /* Another host's /proc is not this machine's: libvirt's CPU model and count. */
        virNodeInfo ni;
        bool got = virNodeGetInfo(remote, &ni) == 0;
        char *caps = virConnectGetCapabilities(remote);
        g_autofree char *vendor = caps_cpu_field(caps, "vendor");
        g_autofree char *model = caps_cpu_field(caps, "model");
        free(caps);
        virResetLastError();
        g_autofree char *both =
            model ? g_strdup_printf("%s%s%s (libvirt's name)", vendor ? vendor : "",
                                    vendor ? " " : "", model)
                  : NULL;
        struct json_object *o = json_object_new_object();
        json_object_object_add(o, "host_cpu_model", both ? json_object_new_string(both) : NULL);
        json_object_object_add(o, "host_cpus", got ? json_object_new_int64(ni.cpus) : NULL);
        return o;
    }
    g_autofree char *cpuinfo = NULL;
    g_autofree char *model = NULL;
    if (g_file_get_contents("/proc/cpuinfo", &cpuinfo, NULL, NULL))
        model = ml_hostinfo_cpu_model(cpuinfo);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct json_object *o = json_object_new_object();
    json_object_object_add(o, "host_cpu_model", model ? json_object_new_string(model) : NULL);
    json_object_object_add(o, "host_cpus", cpus > 0 ? json_object_new_int64(cpus) : NULL);
    return o;
}
