/* Per-host metadata (src/measure/hostinfo.c) from the text the guest command prints
 * (tests/data/samples/hostinfo/README says which parts were captured and which composed).
 *
 * The version commands, checked against the upstream sources at the pinned versions:
 * - nebula 1.6.1, slackhq/nebula cmd/nebula/main.go: flag "version", prints "Version: %s\n"
 *   with main.Build (empty when the build did not stamp it).
 * - wireguard-go 0.0.20220316 (Debian 12), WireGuard/wireguard-go main.go: os.Args[1] ==
 *   "--version" prints "wireguard-go v%s\n\nUserspace WireGuard daemon for %s-%s.\n...".
 * - tailscaled 1.104.4, tailscale/tailscale cmd/tailscaled/tailscaled.go: flag "version"
 *   prints version.String() (version/print.go): Short() on the first line, then indented
 *   "tailscale commit:", "long version:", "go version:" lines (read at v1.102.3 and the
 *   newest snapshot, which agree; the 1.104.4 tag was not in the stored mirror).
 * - headscale 0.29.7, juanfont/headscale cmd/headscale/cli/version.go: `headscale version`
 *   prints VersionInfo.String() (hscontrol/types/version.go): "headscale version %s\n" then
 *   commit, build time, built with; cli/root.go skips loading the config for "version", so
 *   it runs without one (read at v0.29.2 and the newest snapshot, which agree).
 */
#include "check.h"
#include "core/util.h"
#include "dataplanes/dataplane.h"
#include "measure/hostinfo.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_object, json_object_put)

static char *sample(const char *name)
{
    g_autofree char *path = g_build_filename("tests", "data", "samples", "hostinfo", name, NULL);
    char *text = NULL;
    g_autoptr(GError) err = NULL;
    if (!g_file_get_contents(path, &text, NULL, &err)) {
        fprintf(stderr, "%s\n", err->message);
        exit(1);
    }
    return text;
}

static struct json_object *parse(const char *text)
{
    struct json_object *o = NULL;
    g_autoptr(GError) err = NULL;
    CHECK(ml_hostinfo_parse(text, &o, &err));
    if (err)
        fprintf(stderr, "%s\n", err->message);
    return o;
}

static const char *str(struct json_object *o, const char *a, const char *b)
{
    struct json_object *v = json_object_object_get(o, a);
    if (b)
        v = json_object_object_get(v, b);
    return v ? json_object_get_string(v) : NULL;
}

static bool is_null(struct json_object *o, const char *a, const char *b)
{
    struct json_object *parent = b ? json_object_object_get(o, a) : o;
    struct json_object *v = NULL;
    return json_object_object_get_ex(parent, b ? b : a, &v) && v == NULL;
}

static void test_hub(void)
{
    g_autofree char *text = sample("hub-debian-12.txt");
    g_autoptr(json_object) o = parse(text);
    CHECK_STR(str(o, "kernel", NULL), "6.1.0-28-cloud-amd64");
    CHECK(json_object_get_int(json_object_object_get(o, "vcpus")) == 1);
    CHECK(json_object_get_int(json_object_object_get(o, "memory_mib")) == 970); /* 993880 kB */
    CHECK_STR(str(o, "offloads", "tcp-segmentation-offload"), "on");
    CHECK_STR(str(o, "offloads", "generic-receive-offload"), "on");
    CHECK_STR(str(o, "offloads", "rx-checksumming"), "on [fixed]");
    CHECK_STR(str(o, "offloads", "tx-checksum-ipv4"), "off [fixed]"); /* indented sub-feature */
    CHECK_STR(str(o, "offloads", "tx-tcp-mangleid-segmentation"), "off");
    CHECK(json_object_object_length(json_object_object_get(o, "offloads")) == 65);
    CHECK(!json_object_object_get_ex(json_object_object_get(o, "offloads"), "Features for eth0",
                                     NULL));
    CHECK_STR(str(o, "sysctls", "net.ipv4.tcp_rmem"), "4096 131072 6291456");
    CHECK_STR(str(o, "sysctls", "net.ipv4.tcp_congestion_control"), "cubic");
    CHECK_STR(str(o, "sysctls", "net.ipv4.ip_forward"), "1");
    CHECK(json_object_object_length(json_object_object_get(o, "sysctls")) == 9);
    struct json_object *mtu = json_object_object_get(o, "mtu_bytes");
    CHECK(json_object_get_int(json_object_object_get(mtu, "eth0")) == 1500);
    CHECK(json_object_get_int(json_object_object_get(mtu, "wg0")) == 1420);
    CHECK(json_object_get_int(json_object_object_get(mtu, "nebula1")) == 1300);
    CHECK(json_object_get_int(json_object_object_get(mtu, "wgo0")) == 1420);
    CHECK(json_object_get_int(json_object_object_get(mtu, "lo")) == 65536);
    CHECK_STR(str(o, "daemons", "nebula"), "1.6.1");
    CHECK_STR(str(o, "daemons", "wireguard-go"), "0.0.20220316");
    CHECK(is_null(o, "daemons", "tailscaled")); /* not installed: null, not an error */
    CHECK_STR(str(o, "daemons", "headscale"), "0.29.7");
    CHECK(json_object_object_length(o) == 7);
}

static void test_client(void)
{
    g_autofree char *text = sample("client-ubuntu-24.04.txt");
    g_autoptr(json_object) o = parse(text);
    CHECK_STR(str(o, "kernel", NULL), "6.8.0-147-generic");
    CHECK_STR(str(o, "sysctls", "net.core.default_qdisc"), "fq_codel");
    CHECK(json_object_get_int(json_object_object_get(json_object_object_get(o, "mtu_bytes"),
                                                     "tailscale0")) == 1280);
    CHECK_STR(str(o, "daemons", "tailscaled"), "1.104.4"); /* the first line, not "long version" */
    CHECK(is_null(o, "daemons", "nebula"));
    CHECK(is_null(o, "daemons", "wireguard-go"));
    CHECK(is_null(o, "daemons", "headscale"));
}

/* The same parser on text this build machine really printed. */
static void test_real_formats(void)
{
    g_autofree char *sys = sample("sysctl-build-host.txt");
    g_autofree char *links = sample("ip-o-link-netns.txt");
    g_autofree char *text = g_strconcat("### meshlab: kernel\n6.18.44\n### meshlab: sysctls\n", sys,
                                        "### meshlab: links\n", links, "### meshlab: end\n", NULL);
    g_autoptr(json_object) o = parse(text);
    CHECK_STR(str(o, "sysctls", "net.ipv4.tcp_rmem"), "4096 131072 33554432");
    CHECK_STR(str(o, "sysctls", "net.ipv4.tcp_congestion_control"), "bbr");
    CHECK_STR(str(o, "sysctls", "net.ipv4.tcp_mtu_probing"), "0");
    struct json_object *mtu = json_object_object_get(o, "mtu_bytes");
    CHECK(json_object_get_int(json_object_object_get(mtu, "nebula1")) == 1300);
    CHECK(json_object_get_int(json_object_object_get(mtu, "eth0")) == 1500); /* "eth0@eth1" */
    CHECK(json_object_object_get_ex(mtu, "eth1", NULL));
    CHECK(!json_object_object_get_ex(mtu, "eth0@eth1", NULL));
    CHECK(json_object_object_length(mtu) == 4);
    /* sections the text lacks: null, keys still written */
    CHECK(is_null(o, "vcpus", NULL));
    CHECK(is_null(o, "memory_mib", NULL));
    CHECK(is_null(o, "offloads", NULL)); /* no ethtool */
    CHECK(is_null(o, "daemons", "nebula"));
}

static void test_missing_and_odd(void)
{
    /* ethtool absent prints nothing; a sysctl this kernel lacks is not printed; a nebula
     * whose build did not stamp main.Build prints "Version: " */
    const char *text = "### meshlab: kernel\n6.1.0-28-cloud-amd64\n"
                       "### meshlab: offloads\n"
                       "### meshlab: sysctls\nnet.core.rmem_max = 212992\n"
                       "### meshlab: nebula\nVersion: \n"
                       "### meshlab: headscale\nheadscale version dev\ncommit: unknown\n"
                       "### meshlab: end\n";
    g_autoptr(json_object) o = parse(text);
    CHECK(is_null(o, "offloads", NULL));
    CHECK_STR(str(o, "sysctls", "net.core.rmem_max"), "212992");
    CHECK(is_null(o, "sysctls", "net.ipv4.tcp_mtu_probing"));
    CHECK_STR(str(o, "daemons", "nebula"), "Version:");
    CHECK_STR(str(o, "daemons", "headscale"), "headscale version dev");
    CHECK(is_null(o, "daemons", "wireguard-go"));

    /* not the command's output at all, or cut short: an error naming it, *ret untouched */
    static const char *const bad[] = {"", "sh: 1: Syntax error\n",
                                      "### meshlab: kernel\n6.1.0\n### meshlab: vcpus\n", NULL};
    for (const char *const *b = bad; *b; b++) {
        struct json_object *untouched = (struct json_object *)&untouched;
        g_autoptr(GError) err = NULL;
        CHECK(!ml_hostinfo_parse(*b, &untouched, &err));
        CHECK(untouched == (struct json_object *)&untouched);
        CHECK(err && err->domain == ML_ERROR && strstr(err->message, "### meshlab: "));
    }
}

/* The guest command prints every label the parser reads, in its order: the fixed sections,
 * then one per daemon of the dataplane registry, each with the version command its dataplane
 * gives (the four below are cited above; a new dataplane cites its own in its test). */
static void test_command(void)
{
    static const char *const labels[] = {"kernel",    "vcpus",        "memory", "offloads",
                                         "sysctls",   "links",        "nebula", "tailscaled",
                                         "headscale", "wireguard-go", "end",    NULL};
    g_autofree char *cmd = ml_hostinfo_command();
    const char *at = cmd;
    for (const char *const *l = labels; *l; l++) {
        g_autofree char *echo = g_strdup_printf("echo '### meshlab: %s'", *l);
        const char *found = strstr(at, echo);
        CHECK(found != NULL);
        if (found)
            at = found;
    }
    for (const char *const *s = ml_hostinfo_sysctls; *s; s++)
        CHECK(strstr(cmd, *s));
    CHECK(strstr(cmd, "nebula -version"));
    CHECK(strstr(cmd, "wireguard-go --version"));
    CHECK(strstr(cmd, "tailscaled --version"));
    CHECK(strstr(cmd, "headscale version"));
    CHECK(strstr(cmd, "ethtool -k eth0"));
    /* Every daemon of every dataplane has its section and its command, once. */
    size_t n = 0;
    for (size_t d = 0; ml_dataplanes[d]; d++)
        for (size_t k = 0; k < ML_DATAPLANE_DAEMONS_MAX && ml_dataplanes[d]->daemons[k].name;
             k++, n++) {
            const struct ml_dp_daemon *dm = &ml_dataplanes[d]->daemons[k];
            g_autofree char *label = g_strdup_printf("echo '### meshlab: %s';", dm->name);
            const char *first = strstr(cmd, label);
            CHECK(first && !strstr(first + 1, label));
            CHECK(dm->version && strstr(cmd, dm->version));
        }
    CHECK(n >= ml_daemon_count() && ml_daemon_count() >= 4);
}

static void test_host(void)
{
    g_autofree char *m = ml_hostinfo_cpu_model("processor\t: 0\nvendor_id\t: AuthenticAMD\n"
                                               "model name\t: AMD EPYC 7B13 64-Core Processor\n"
                                               "processor\t: 1\nmodel name\t: other\n");
    CHECK_STR(m, "AMD EPYC 7B13 64-Core Processor");
    CHECK(ml_hostinfo_cpu_model("processor\t: 0\nBogoMIPS\t: 50.00\n") == NULL); /* ARM */
    g_autoptr(json_object) h = ml_hostinfo_host(NULL);
    CHECK(json_object_get_int(json_object_object_get(h, "host_cpus")) >= 1);
    CHECK(json_object_object_get_ex(h, "host_cpu_model", NULL));
    /* Another host's, from its libvirt alone: the test driver's node has 16 CPUs, which this
     * machine (2) has not, so the figure cannot have come from here. */
    virConnectPtr conn = virConnectOpen("test:///default");
    CHECK(conn != NULL);
    g_autoptr(json_object) r = ml_hostinfo_host(conn);
    CHECK(json_object_get_int(json_object_object_get(r, "host_cpus")) == 16);
    CHECK(json_object_object_get_ex(r, "host_cpu_model", NULL));
    virConnectClose(conn);
}

int main(void)
{
    test_hub();
    test_client();
    test_real_formats();
    test_missing_and_odd();
    test_command();
    test_host();
    return check_finish();
}
