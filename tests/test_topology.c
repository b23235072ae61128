/* Topology loading: the shipped lab, good variations, and every bad input in
 * tests/data/bad/ against its golden .expected error line. */
#include "check.h"
#include "dataplanes/nebula.h"
#include "guestnet/nft.h"
#include "dataplanes/dataplane.h"
#include "dataplanes/wireguard.h"
#include "topology/plan.h"
#include "topology/topology.h"
#include "core/util.h"
#include "virt/cloudinit.h"

#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#define BAD_DIR "tests/data/bad"

static bool ip_is(struct in_addr a, const char *want)
{
    char buf[INET_ADDRSTRLEN];
    return inet_ntop(AF_INET, &a, buf, sizeof(buf)) && strcmp(buf, want) == 0;
}

/* A cell as "name direction streams rate passes", to compare a whole matrix in one string. */
static char *matrix_str(const struct ml_profile *p)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < p->n_cells; i++) {
        const struct ml_cell *c = &p->cells[i];
        g_string_append_printf(s, "%s%s %s %u %s %u", i ? ", " : "", c->name,
                               ml_direction_name(c->direction), c->streams,
                               c->fixed_rate ? "fixed" : "full", c->passes);
    }
    return g_string_free(s, FALSE);
}

static char *profile_str(const struct ml_profile *p)
{
    if (!p)
        return g_strdup("(none)");
    g_autofree char *m = matrix_str(p);
    return g_strdup_printf("%s pass_s=%u passes=%u ping_count=%u ping_interval_s=%g idle_s=%u "
                           "fixed_rate_fraction=%g [%s]",
                           p->name, p->pass_s, p->passes, p->ping_count, p->ping_interval_s,
                           p->idle_s, p->fixed_rate_fraction, m);
}

#define CHECK_PROFILE(t, name, want)                                                               \
    do {                                                                                           \
        g_autofree char *got_ = profile_str(ml_topology_profile((t), (name)));                     \
        CHECK_STR(got_, (want));                                                                   \
    } while (0)

/* The profiles of the seed lab, which are also those of a file that gives none. */
static void check_quick_deep(const struct ml_topology *t)
{
    CHECK(t->measure.n_profiles == 3);
    CHECK_STR(t->measure.profiles[0].name, "full");
    CHECK_STR(t->measure.profiles[1].name, "deep");
    CHECK_STR(t->measure.profiles[2].name, "quick");
    CHECK_PROFILE(t, "deep",
                  "deep pass_s=30 passes=3 ping_count=200 ping_interval_s=0.05 idle_s=5 "
                  "fixed_rate_fraction=0.5 [forward-1 forward 1 full 3, reverse-1 reverse 1 full "
                  "3, bidir-1 bidir 1 full 3, forward-8 forward 8 full 3, reverse-8 reverse 8 "
                  "full 3, bidir-8 bidir 8 full 3, forward-1-fixed forward 1 fixed 3]");
    CHECK_PROFILE(t, "quick",
                  "quick pass_s=4 passes=2 ping_count=40 ping_interval_s=0.05 idle_s=2 "
                  "fixed_rate_fraction=0.5 [forward-1 forward 1 full 2, reverse-1 reverse 1 full "
                  "1, forward-8 forward 8 full 1, forward-1-fixed forward 1 fixed 1]");
    CHECK(ml_topology_profile(t, "Full") == NULL);
    CHECK(ml_topology_profile(t, "") == NULL);
    CHECK(ml_topology_profile(t, NULL) == NULL);
}

/* The seed's experiment: its one forward stream, three passes of 15 s and one at the fixed
 * rate, so that the README's first command measures its five paths in about a quarter of an
 * hour. */
static void check_seed_profiles(const struct ml_topology *t)
{
    check_quick_deep(t);
    CHECK_PROFILE(t, "full",
                  "full pass_s=15 passes=3 ping_count=200 ping_interval_s=0.05 idle_s=5 "
                  "fixed_rate_fraction=0.5 [forward-1 forward 1 full 3, "
                  "forward-1-fixed forward 1 fixed 1]");
}

/* A topology that gives no profiles gets meshlab's own: full is 3 passes of 30 s. */
static void check_builtin_profiles(const struct ml_topology *t)
{
    check_quick_deep(t);
    CHECK_PROFILE(t, "full",
                  "full pass_s=30 passes=3 ping_count=200 ping_interval_s=0.05 idle_s=5 "
                  "fixed_rate_fraction=0.5 [forward-1 forward 1 full 3, "
                  "forward-1-fixed forward 1 fixed 3]");
}

static void test_seed(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = ml_topology_load("topologies/three-guest.yaml", &err);

    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return;
    }
    CHECK_STR(t->path, "topologies/three-guest.yaml");
    CHECK_STR(t->name, "three-guest");
    CHECK_STR(t->image, "ubuntu-24.04");
    CHECK_STR(t->image_fallback, "debian-12");
    CHECK(ip_is(t->lab_subnet.net, "192.0.2.0") && t->lab_subnet.prefix == 24);
    CHECK(t->n_nodes == 3);
    static const char *const names[] = {"hub", "client-a", "client-b"};
    static const char *const addrs[] = {"192.0.2.10", "192.0.2.11", "192.0.2.12"};
    static const char *const tunnels[] = {"10.8.0.1", "10.8.0.2", "10.8.0.3"};
    static const int lines[] = {20, 24, 27};
    for (size_t i = 0; i < 3 && i < t->n_nodes; i++) {
        CHECK_STR(t->nodes[i].name, names[i]);
        CHECK(ip_is(t->nodes[i].address, addrs[i]));
        CHECK(ip_is(t->nodes[i].tunnel_address, tunnels[i]));
        CHECK(t->nodes[i].vcpus == 1);
        CHECK(t->nodes[i].memory_mib == 1024);
        CHECK(t->nodes[i].line == lines[i]);
        CHECK(t->nodes[i].column == 5);
        CHECK(ml_topology_find_node(t, names[i]) == (int)i);
    }
    CHECK(ml_topology_find_node(t, "nope") == -1);
    CHECK(ip_is(t->wireguard.subnet.net, "10.8.0.0") && t->wireguard.subnet.prefix == 24);
    CHECK(t->hub == 0);
    CHECK(t->wireguard.listen_port == 51820);
    CHECK(t->wireguard.persistent_keepalive == 25);
    CHECK(t->measure.client == 1);
    CHECK(t->measure.server == 2);
    CHECK(ml_topology_has_path(t, "plain"));
    CHECK(ml_topology_has_path(t, "wireguard-hub"));
    CHECK(ml_topology_has_path(t, "tailscale-direct") &&
          ml_topology_has_path(t, "tailscale-relay"));
    CHECK(ml_topology_has_path(t, "tailscale-peer-relay"));
    /* the seed's paths and no other: every other dataplane is in dataplanes.yaml */
    CHECK(t->measure.n_paths == 5);
    CHECK(!ml_topology_has_path(t, "nebula-relay") && !ml_topology_has_path(t, "ipsec-hub"));
    CHECK(ml_paths_resolve(t, NULL));
    check_seed_profiles(t);
}

/* The dataplanes lab: the seed lab's guests and addresses, every path meshlab has, and the
 * dataplane benchmark seed's comparison (one and eight streams each way, 2 passes of 10 s). */
static void test_dataplanes(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = ml_topology_load("topologies/dataplanes.yaml", &err);
    g_autoptr(MlTopology) seed = ml_topology_load("topologies/three-guest.yaml", NULL);
    CHECK(t != NULL && seed != NULL);
    if (!t || !seed)
        return;
    CHECK_STR(t->name, "dataplanes");
    CHECK(t->n_nodes == seed->n_nodes && t->hub == seed->hub);
    for (size_t i = 0; i < t->n_nodes && i < seed->n_nodes; i++) {
        CHECK_STR(t->nodes[i].name, seed->nodes[i].name);
        CHECK(t->nodes[i].address.s_addr == seed->nodes[i].address.s_addr);
    }
    for (size_t i = 0; i < seed->measure.n_paths; i++)
        CHECK(ml_topology_has_path(t, seed->measure.paths[i].name));
    /* every path a policy forces (the ones a NAT lets emerge need a NAT lab) */
    const struct ml_path_ops *ops;
    ML_FOR_EACH_PATH(i, ops)
    {
        bool forced = ops->hub != ML_HUB_FOUND;
        if (forced && !ml_topology_has_path(t, ops->name))
            fprintf(stderr, "dataplanes.yaml does not measure %s\n", ops->name);
        CHECK(!forced || ml_topology_has_path(t, ops->name));
    }
    CHECK(ml_paths_resolve(t, NULL));
    check_quick_deep(t);
    CHECK_PROFILE(t, "full",
                  "full pass_s=10 passes=2 ping_count=200 ping_interval_s=0.05 idle_s=5 "
                  "fixed_rate_fraction=0.5 [forward-1 forward 1 full 2, reverse-1 reverse 1 full "
                  "2, forward-8 forward 8 full 2, reverse-8 reverse 8 full 2, forward-1-fixed "
                  "forward 1 fixed 2]");
}

static void test_path_names(void)
{
    CHECK_STR(ml_path_find("plain")->name, "plain");
    CHECK_STR(ml_path_find("wireguard-hub")->name, "wireguard-hub");
    CHECK(ml_path_find("tailscale") == NULL);
    CHECK(ml_path_find("") == NULL);
    CHECK(ml_path_find(NULL) == NULL);
}

static struct ml_topology *parse(const char *text, GError **err)
{
    return ml_topology_parse("inline.yaml", text, strlen(text), err);
}

/* The smallest valid lab: no defaults, no profiles, no fallback, no optional wireguard keys. */
static void test_minimal(void)
{
    static const char text[] =
        "name: mini\n"
        "image: {use: debian-12}\n"
        "bridge: {subnet: 10.0.0.0/16}\n"
        "nodes:\n"
        "  - {name: h, address: 10.0.0.1, tunnel_address: 172.16.0.1}\n"
        "  - {name: a, address: 10.0.255.254, tunnel_address: 172.16.0.2, vcpus: 4}\n"
        "  - {name: b, address: 10.0.1.0, tunnel_address: 172.16.0.254, memory_mib: 2048}\n"
        "hub: h\n"
        "wireguard: {subnet: 172.16.0.0/24}\n"
        "measure: {client: a, server: b, paths: [wireguard-hub]}\n";
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = parse(text, &err);

    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return;
    }
    CHECK_STR(t->path, "inline.yaml");
    CHECK_STR(t->image_fallback, "");
    CHECK(t->lab_subnet.prefix == 16);
    CHECK(t->nodes[0].vcpus == 1 && t->nodes[0].memory_mib == 1024);
    CHECK(t->nodes[1].vcpus == 4 && t->nodes[1].memory_mib == 1024);
    CHECK(t->nodes[2].vcpus == 1 && t->nodes[2].memory_mib == 2048);
    CHECK(t->nodes[1].line == 6 && t->nodes[1].column == 5);
    CHECK(t->wireguard.listen_port == 51820);
    CHECK(t->wireguard.persistent_keepalive == 25);
    CHECK(!ml_topology_has_path(t, "plain"));
    CHECK(ml_topology_has_path(t, "wireguard-hub"));
    check_builtin_profiles(t);
}

static void test_defaults_and_overrides(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = parse("# a comment first\n"
                                    "name: \"lab-2\"\n"
                                    "description: >\n  Folded text,\n  two lines.\n"
                                    "image: {use: ubuntu-24.04, fallback: debian-12}\n"
                                    "bridge: {subnet: 198.51.100.0/28}\n"
                                    "defaults: {vcpus: 2, memory_mib: 512}\n"
                                    "nodes:\n"
                                    "  - name: h\n    address: 198.51.100.1\n"
                                    "    tunnel_address: 10.9.0.1\n"
                                    "  - name: a\n    address: 198.51.100.2\n"
                                    "    tunnel_address: 10.9.0.2\n    vcpus: 16\n"
                                    "  - name: b\n    address: 198.51.100.14\n"
                                    "    tunnel_address: 10.9.0.3\n    memory_mib: 65536\n"
                                    "hub: h\nwireguard:\n  subnet: 10.9.0.0/29\n"
                                    "  listen_port: 1\n  persistent_keepalive: 0\n"
                                    "measure:\n  client: b\n  server: a\n  paths: [plain]\n"
                                    "  profiles:\n"
                                    "    full: {pass_s: 1, passes: 1, ping_count: 1}\n"
                                    "    quick: {passes: 20, pass_s: 600, ping_count: 1000,\n"
                                    "            ping_interval_s: 10, idle_s: 600,\n"
                                    "            fixed_rate_fraction: 1}\n"
                                    "...\n",
                                    &err);
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return;
    }
    CHECK_STR(t->name, "lab-2");
    CHECK(t->nodes[0].vcpus == 2 && t->nodes[0].memory_mib == 512);
    CHECK(t->nodes[1].vcpus == 16 && t->nodes[1].memory_mib == 512);
    CHECK(t->nodes[2].vcpus == 2 && t->nodes[2].memory_mib == 65536);
    CHECK(t->wireguard.listen_port == 1);
    CHECK(t->wireguard.persistent_keepalive == 0);
    CHECK(t->measure.client == 2 && t->measure.server == 1);
    CHECK(ml_topology_has_path(t, "plain") && !ml_topology_has_path(t, "wireguard-hub"));
    /* Only the profiles given; each without a matrix gets forward-1 and forward-1-fixed. */
    CHECK(t->measure.n_profiles == 2);
    CHECK_PROFILE(t, "full",
                  "full pass_s=1 passes=1 ping_count=1 ping_interval_s=0.05 idle_s=2 "
                  "fixed_rate_fraction=0.5 [forward-1 forward 1 full 1, "
                  "forward-1-fixed forward 1 fixed 1]");
    CHECK_PROFILE(t, "quick",
                  "quick pass_s=600 passes=20 ping_count=1000 ping_interval_s=10 idle_s=600 "
                  "fixed_rate_fraction=1 [forward-1 forward 1 full 20, "
                  "forward-1-fixed forward 1 fixed 1]");
    CHECK(ml_topology_profile(t, "deep") == NULL);
}

/* Inputs built in memory: too big to keep as files, or not text at all. */
static void test_limits(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GString) big = g_string_new("name: big\n");
    while (big->len <= 1024 * 1024)
        g_string_append(big, "# padding padding padding padding padding padding padding\n");
    CHECK(ml_topology_parse("big.yaml", big->str, big->len, &err) == NULL);
    CHECK(err && err->domain == ML_ERROR && err->code == ML_ERR_INPUT);
    CHECK_STR(err ? err->message : NULL,
              "big.yaml: the file is larger than 1 MiB, the limit for a topology");
    g_clear_error(&err);

    g_autofree char *seed = NULL;
    CHECK(g_file_get_contents("topologies/three-guest.yaml", &seed, NULL, NULL));
    g_autoptr(GString) nul = g_string_new(seed);
    CHECK(g_string_replace(nul, "name: three-guest", "name: \"a\\0b\"", 1) == 1);
    CHECK(ml_topology_parse("nul.yaml", nul->str, nul->len, &err) == NULL);
    CHECK_STR(err ? err->message : NULL, "nul.yaml:10:7: lab name must not contain NUL characters");
    g_clear_error(&err);

    static const char utf8[] = "name: x\nimage: \xff\n";
    CHECK(ml_topology_parse("utf8.yaml", utf8, sizeof(utf8) - 1, &err) == NULL);
    CHECK_STR(err ? err->message : NULL,
              "utf8.yaml:2:8: invalid YAML: invalid leading UTF-8 octet");
    g_clear_error(&err);

    CHECK(ml_topology_load("tests/data/bad/does-not-exist.yaml", &err) == NULL);
    CHECK(err && err->code == ML_ERR_INPUT);
    CHECK_STR(err ? err->message : NULL, "tests/data/bad/does-not-exist.yaml: cannot open the "
                                         "topology file: No such file or directory");
}

static int compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_bad_inputs(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GDir) dir = g_dir_open(BAD_DIR, 0, &err);
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    const char *entry;

    CHECK(dir != NULL);
    if (!dir)
        return;
    while ((entry = g_dir_read_name(dir)))
        if (g_str_has_suffix(entry, ".yaml"))
            g_ptr_array_add(names, g_strdup(entry));
    g_ptr_array_sort(names, compare_names);
    CHECK(names->len >= 20);

    for (guint i = 0; i < names->len; i++) {
        const char *name = names->pdata[i];
        g_autofree char *path = g_strdup_printf(BAD_DIR "/%s", name);
        g_autofree char *stem = g_strndup(name, strlen(name) - strlen(".yaml"));
        g_autofree char *expected_path = g_strdup_printf(BAD_DIR "/%s.expected", stem);
        g_autofree char *expected = NULL;
        g_autoptr(GError) load_err = NULL;
        g_autoptr(MlTopology) t = NULL;

        if (!g_file_get_contents(expected_path, &expected, NULL, NULL)) {
            check_failed++;
            fprintf(stderr, "%s is missing\n", expected_path);
            continue;
        }
        g_strchomp(expected);
        /* @PATHS@: every path the registry knows, as validate --help lists them. */
        g_autofree char *known = ml_path_names();
        g_autoptr(GString) want = g_string_new(expected);
        g_string_replace(want, "@PATHS@", known, 0);
        g_free(expected);
        expected = g_strdup(want->str);
        /* As the commands load it: parsed, then the path names resolved. */
        t = ml_topology_load(path, &load_err);
        if (t && !ml_paths_resolve(t, &load_err))
            g_clear_pointer(&t, ml_topology_free);
        CHECK(t == NULL);
        CHECK(load_err && load_err->domain == ML_ERROR && load_err->code == ML_ERR_INPUT);
        CHECK(load_err && !strchr(load_err->message, '\n'));
        CHECK_STR(load_err ? load_err->message : NULL, expected);
    }
}

/* WireGuard's port may not be another dataplane's on the same protocol; iperf3's TCP 5201 is
 * no collision for a UDP port. One check, once the dataplanes' ports are known, at listen_port
 * (line 33 of the seed lab). */
static void test_listen_port(void)
{
    g_autofree char *text = NULL;
    CHECK(g_file_get_contents("topologies/three-guest.yaml", &text, NULL, NULL));
    static const struct {
        unsigned port;
        bool ok;
    } cases[] = {{51999, true}, {5201, true},  {22, true},
                 {4242, false}, {3478, false}, {41641, false}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GString *yaml = g_string_new(text);
        g_autofree char *line = g_strdup_printf("listen_port: %u", cases[i].port);
        CHECK(g_string_replace(yaml, "listen_port: 51820", line, 1) == 1);
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = ml_topology_parse("t.yaml", yaml->str, yaml->len, &err);
        CHECK(t != NULL);
        CHECK((t && ml_paths_resolve(t, &err)) == cases[i].ok);
        CHECK(cases[i].ok || (err && g_str_has_prefix(err->message, "t.yaml:33:16: ") &&
                              strstr(err->message, "uses already; choose another listen_port")));
        g_string_free(yaml, TRUE);
    }
}

static void keep_warning(const struct ml_log_event *event, void *data)
{
    if (event->kind == ML_LOG_WARN)
        g_ptr_array_add(data, g_strdup(event->message));
}

/* The seed lab with from replaced by to, parsed as name; its warnings in warnings. */
static struct ml_topology *seed_with(const char *name, const char *from, const char *to,
                                     GPtrArray *warnings, GError **err)
{
    g_autofree char *seed = NULL;
    CHECK(g_file_get_contents("topologies/three-guest.yaml", &seed, NULL, NULL));
    g_autoptr(GString) yaml = g_string_new(seed);
    CHECK(g_string_replace(yaml, from, to, 1) == 1);
    struct ml_log_sink sink = {keep_warning, warnings}, old = ml_log_set_sink(&sink);
    struct ml_topology *t = ml_topology_parse(name, yaml->str, yaml->len, err);
    ml_log_set_sink(&old);
    return t;
}

/* The hub is `hub:` at the top level; wireguard.hub, where it used to be, is still read with a
 * warning that names the new key, and both naming different nodes is an error. */
static void test_hub_key(void)
{
    static const char new_key[] = "hub: hub\nwireguard:\n  subnet: 10.8.0.0/24\n";
    g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GError) err = NULL;

    /* The seed lab: the new key on line 30, no warning. */
    g_autoptr(MlTopology) t = seed_with("t.yaml", new_key, new_key, warnings, &err);
    CHECK(t && t->hub == 0 && t->hub_line == 30 && t->hub_column == 6);
    CHECK(warnings->len == 0);

    /* The old key alone: the same hub, where the old key is, and one warning there. */
    g_autoptr(MlTopology) old =
        seed_with("old.yaml", new_key, "wireguard:\n  subnet: 10.8.0.0/24\n  hub: client-b\n",
                  warnings, &err);
    CHECK(old == NULL); /* client-b is measure.server */
    CHECK_STR(err ? err->message : NULL,
              "old.yaml:32:8: wireguard.hub 'client-b' is also measure.server; the hub must be a "
              "third node that relays between client and server");
    g_clear_error(&err);
    g_ptr_array_set_size(warnings, 0);
    g_autoptr(MlTopology) old_ok = seed_with(
        "old.yaml", new_key, "wireguard:\n  subnet: 10.8.0.0/24\n  hub: hub\n", warnings, &err);
    CHECK(old_ok && old_ok->hub == 0 && old_ok->hub_line == 32 && old_ok->hub_column == 8);
    CHECK(warnings->len == 1);
    CHECK_STR(warnings->len ? warnings->pdata[0] : NULL,
              "old.yaml:32:8: wireguard.hub is deprecated; write `hub: hub` at the top level");

    /* Both naming the same node: the new key counts, the old one is still warned about. */
    g_ptr_array_set_size(warnings, 0);
    g_autoptr(MlTopology) both =
        seed_with("both.yaml", new_key, "hub: hub\nwireguard:\n  subnet: 10.8.0.0/24\n  hub: hub\n",
                  warnings, &err);
    CHECK(both && both->hub == 0 && both->hub_line == 30 && warnings->len == 1);

    /* Both naming different nodes: an error at the old key, and no warning besides. */
    g_ptr_array_set_size(warnings, 0);
    g_autoptr(MlTopology) clash =
        seed_with("c.yaml", new_key,
                  "hub: hub\nwireguard:\n  subnet: 10.8.0.0/24\n  hub: client-a\n", warnings, &err);
    CHECK(clash == NULL && warnings->len == 0);
    CHECK_STR(err ? err->message : NULL,
              "c.yaml:33:8: wireguard.hub 'client-a' is not the hub 'hub' given at line 30; "
              "remove wireguard.hub, which `hub:` replaces");
    g_clear_error(&err);

    /* Neither: the missing key is the new one; a hub that is not a name. */
    g_autoptr(MlTopology) none =
        seed_with("n.yaml", new_key, "wireguard:\n  subnet: 10.8.0.0/24\n", warnings, &err);
    CHECK(none == NULL);
    CHECK_STR(err ? err->message : NULL,
              "n.yaml:10:1: missing required key 'hub', the node that relays between the "
              "clients; write `hub: NAME` at the top level");
    g_clear_error(&err);
    g_autoptr(MlTopology) list = seed_with("l.yaml", "hub: hub\n", "hub: [hub]\n", warnings, &err);
    CHECK(list == NULL);
    CHECK_STR(err ? err->message : NULL, "l.yaml:30:6: hub must be a string, not a sequence");
}

/* Each list's type and length are checked by one reader (ml_yaml_collection): too many entries
 * are refused at the first one too many, where the file has to be cut. */
static void test_list_limits(void)
{
    g_autoptr(GString) paths = g_string_new("  paths: [");
    for (int i = 0; i < ML_PATHS_MAX + 1; i++)
        g_string_append_printf(paths, "p%d, ", i);
    g_autofree char *seed = NULL;
    CHECK(g_file_get_contents("topologies/three-guest.yaml", &seed, NULL, NULL));
    const char *at = seed ? strstr(seed, "  paths: [") : NULL;
    int line = 1;
    for (const char *p = seed; at && p < at; p++)
        line += *p == '\n';
    g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = seed_with("l.yaml", "  paths: [", paths->str, warnings, &err);
    CHECK(t == NULL);
    /* At p16, the 17th: its line and column worked out from the text, not from the parser. */
    g_autofree char *want = g_strdup_printf("l.yaml:%d:%d: measure.paths lists ", line,
                                            (int)(strstr(paths->str, "p16") - paths->str) + 1);
    CHECK(err && g_str_has_prefix(err->message, want) &&
          g_str_has_suffix(err->message, " paths; at most 16"));
    if (err && !g_str_has_prefix(err->message, want))
        fprintf(stderr, "want %s...\n got %s\n", want, err->message);
}

/* A megabyte of anchors (libyaml's loader compares each new anchor with every earlier one: 20 s of
 * CPU) is refused at the first anchor, before a document is built. */
static void test_many_anchors(void)
{
    GString *text = g_string_new("name: lab\nx:\n");
    for (unsigned i = 0; text->len < 1000 * 1000; i++)
        g_string_append_printf(text, "  - &a%u %u\n", i, i);
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = ml_topology_parse("anchors.yaml", text->str, text->len, &err);
    CHECK(t == NULL);
    CHECK_STR(err ? err->message : NULL,
              "anchors.yaml:3:5: YAML anchors are not allowed in a topology; write the value out");
    g_string_free(text, TRUE);
}

/* A lab whose measure.profiles is the given text, which starts on line 15. */
static const char profiles_lab[] = "name: mini\n"
                                   "image: {use: debian-12}\n"
                                   "bridge: {subnet: 10.0.0.0/16}\n"
                                   "nodes:\n"
                                   "  - {name: h, address: 10.0.0.1, tunnel_address: 172.16.0.1}\n"
                                   "  - {name: a, address: 10.0.0.2, tunnel_address: 172.16.0.2}\n"
                                   "  - {name: b, address: 10.0.0.3, tunnel_address: 172.16.0.3}\n"
                                   "hub: h\n"
                                   "wireguard: {subnet: 172.16.0.0/24}\n"
                                   "measure:\n"
                                   "  client: a\n"
                                   "  server: b\n"
                                   "  paths: [plain]\n"
                                   "  profiles:\n";

static struct ml_topology *parse_profiles(const char *profiles, GError **err)
{
    g_autofree char *text = g_strconcat(profiles_lab, profiles, NULL);
    return ml_topology_parse("p.yaml", text, strlen(text), err);
}

/* "p.yaml:LINE:COL: rule", where LINE:COL is the first occurrence of at in profiles: worked
 * out from the text, not from the parser. */
static char *error_at(const char *profiles, const char *at, const char *rule)
{
    const char *hit = strstr(profiles, at);
    size_t line = 15, col = 1;
    g_assert(hit);
    for (const char *p = profiles; p < hit; p++, col++)
        if (*p == '\n')
            line++, col = 0;
    return g_strdup_printf("p.yaml:%zu:%zu: %s", line, col, rule);
}

#define FULL "    full: {pass_s: 1, passes: 1, ping_count: 1, "

/* The cell grammar DIRECTION-STREAMS[-fixed], both forms of an entry, and the defaults. */
static void test_profile_grammar(void)
{
    static const struct {
        const char *profiles, *name, *want;
    } cases[] = {
        {"    full: {pass_s: 5, passes: 2, ping_count: 10}\n", "full",
         "full pass_s=5 passes=2 ping_count=10 ping_interval_s=0.05 idle_s=2 "
         "fixed_rate_fraction=0.5 [forward-1 forward 1 full 2, forward-1-fixed forward 1 fixed 1]"},
        {"    full:\n      pass_s: 5\n      passes: 2\n      ping_count: 10\n"
         "      ping_interval_s: 0.002\n      fixed_rate_fraction: 0.25\n      idle_s: 1\n"
         "      matrix:\n        - bidir-128\n        - reverse-8-fixed\n"
         "        - {cell: forward-2, passes: 20}\n        - cell: bidir-1\n",
         "full",
         "full pass_s=5 passes=2 ping_count=10 ping_interval_s=0.002 idle_s=1 "
         "fixed_rate_fraction=0.25 [bidir-128 bidir 128 full 2, reverse-8-fixed reverse 8 fixed "
         "2, forward-2 forward 2 full 20, bidir-1 bidir 1 full 2]"},
        /* Any full-speed cell may be the headline; a matrix needs no fixed cell. */
        {FULL
         "matrix: [reverse-1]}\n"
         "    x-2: {pass_s: 2, passes: 1, ping_count: 1, matrix: [\"forward-1\", bidir-3-fixed]}\n",
         "x-2",
         "x-2 pass_s=2 passes=1 ping_count=1 ping_interval_s=0.05 idle_s=2 "
         "fixed_rate_fraction=0.5 [forward-1 forward 1 full 1, bidir-3-fixed bidir 3 fixed 1]"},
        {FULL "matrix: [reverse-1]}\n", "full",
         "full pass_s=1 passes=1 ping_count=1 ping_interval_s=0.05 idle_s=2 "
         "fixed_rate_fraction=0.5 [reverse-1 reverse 1 full 1]"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = parse_profiles(cases[i].profiles, &err);
        CHECK(t != NULL);
        if (!t) {
            fprintf(stderr, "case %zu: %s\n", i, err->message);
            continue;
        }
        CHECK_PROFILE(t, cases[i].name, cases[i].want);
    }
    CHECK_STR(ml_direction_name(ML_DIR_FORWARD), "forward");
    CHECK_STR(ml_direction_name(ML_DIR_REVERSE), "reverse");
    CHECK_STR(ml_direction_name(ML_DIR_BIDIR), "bidir");
}

/* n profiles (full, p1, p2, ...) */
static char *n_profiles(unsigned n)
{
    GString *s = g_string_new(NULL);
    for (unsigned i = 0; i < n; i++) {
        if (i)
            g_string_append_printf(s, "    p%u: {pass_s: 1, passes: 1, ping_count: 1}\n", i);
        else
            g_string_append(s, "    full: {pass_s: 1, passes: 1, ping_count: 1}\n");
    }
    return g_string_free(s, FALSE);
}

/* A full profile with n cells forward-1 .. forward-n. */
static char *n_cells(unsigned n)
{
    GString *s = g_string_new(FULL "matrix: [");
    for (unsigned i = 1; i <= n; i++)
        g_string_append_printf(s, "%sforward-%u", i > 1 ? ", " : "", i);
    g_string_append(s, "]}\n");
    return g_string_free(s, FALSE);
}

/* The most profiles and cells a topology may have, and one more of each. */
static void test_profile_limits(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *eight = n_profiles(ML_PROFILES_MAX), *nine = n_profiles(ML_PROFILES_MAX + 1);
    g_autofree char *sixteen = n_cells(ML_CELLS_MAX), *seventeen = n_cells(ML_CELLS_MAX + 1);
    g_autoptr(MlTopology) t8 = parse_profiles(eight, &err);
    CHECK(t8 && t8->measure.n_profiles == 8 && ml_topology_profile(t8, "p7"));
    g_autoptr(MlTopology) t16 = parse_profiles(sixteen, &err);
    CHECK(t16 && t16->measure.profiles[0].n_cells == 16);
    CHECK(t16 && strcmp(t16->measure.profiles[0].cells[15].name, "forward-16") == 0);

    g_autofree char *want9 = error_at(nine, "p8", "measure.profiles has 9 profiles; at most 8");
    CHECK(parse_profiles(nine, &err) == NULL);
    CHECK_STR(err ? err->message : NULL, want9);
    g_clear_error(&err);
    g_autofree char *want17 = error_at(seventeen, "forward-17",
                                       "measure.profiles.full.matrix lists 17 cells; at most 16");
    CHECK(parse_profiles(seventeen, &err) == NULL);
    CHECK_STR(err ? err->message : NULL, want17);
}

/* Each rule of measure.profiles: its message, at the line and column of the offending text. */
static void test_profile_errors(void)
{
#define M "measure.profiles.full.matrix: "
#define GRAMMAR                                                                                    \
    " (nor udp-RATE, rrul or pairs-K); write it like forward-1, reverse-8, forward-1-fixed, "      \
    "udp-10M, rrul or pairs-2"
    static const struct {
        const char *profiles, *at, *rule;
    } cases[] = {
        {"    full: {transfer_s: 10, passes: 3, pass_s: 30, ping_count: 30}\n", "transfer_s",
         "measure.profiles.full.transfer_s is gone: every pass now counts the hub's bytes itself, "
         "so there is no separate transfer; remove the key (idle_s sets the idle baseline taken "
         "before the passes)"},
        {FULL "matrix: [forward-1, sideways-1]}\n", "sideways-1",
         M "cell 'sideways-1' has the unknown direction 'sideways'; the directions are forward, "
           "reverse (iperf3 -R) and bidir (iperf3 --bidir), and the other cells udp-RATE, rrul "
           "and pairs-K"},
        {FULL "matrix: [forward-0]}\n", "forward-0",
         M "cell 'forward-0' has 0 streams; streams are 1..128 (iperf3 -P)"},
        {FULL "matrix: [{cell: bidir-129, passes: 1}]}\n", "bidir-129",
         M "cell 'bidir-129' has 129 streams; streams are 1..128 (iperf3 -P)"},
        {FULL "matrix: [forward]}\n", "forward]",
         M "cell 'forward' is not DIRECTION-STREAMS or DIRECTION-STREAMS-fixed" GRAMMAR},
        {FULL "matrix: [forward-01]}\n", "forward-01",
         M "cell 'forward-01' is not DIRECTION-STREAMS or DIRECTION-STREAMS-fixed" GRAMMAR},
        {FULL "matrix: [8-forward]}\n", "8-forward",
         M "cell '8-forward' is not DIRECTION-STREAMS or DIRECTION-STREAMS-fixed" GRAMMAR},
        {FULL "matrix: [forward-1-fixed-2]}\n", "forward-1-fixed-2",
         M "cell 'forward-1-fixed-2' is not DIRECTION-STREAMS or DIRECTION-STREAMS-fixed" GRAMMAR},
        {FULL "matrix: [forward-1, reverse-8-slow]}\n", "reverse-8-slow",
         M "cell 'reverse-8-slow' ends in '-slow'; the only suffix is '-fixed', for the run's "
           "fixed offered rate"},
        {FULL "matrix: [forward-1, reverse-1, {cell: forward-1, passes: 2}]}\n",
         "forward-1, passes", M "cell 'forward-1' is listed twice (first at line 15)"},
        {FULL "matrix: [{cell: reverse-1, passes: 0}]}\n", "0}]",
         M "cell 'reverse-1': passes 0 is out of range 1..20"},
        {"    full: {pass_s: 1, passes: 0, ping_count: 1}\n", "0, ping",
         "measure.profiles.full.passes 0 is out of range 1..20"},
        {FULL "idle_s: 0}\n", "0}", "measure.profiles.full.idle_s 0 is out of range 1..600"},
        {FULL "fixed_rate_fraction: 0}\n", "0}",
         "measure.profiles.full.fixed_rate_fraction 0 is outside (0, 1]: the fixed offered rate "
         "is this fraction of the slowest path's median; write a fraction like 0.5"},
        {FULL "fixed_rate_fraction: 1.5}\n", "1.5",
         "measure.profiles.full.fixed_rate_fraction 1.5 is outside (0, 1]: the fixed offered "
         "rate is this fraction of the slowest path's median; write a fraction like 0.5"},
        /* Bounds hold for the decimal as written, not for the double it rounds to. */
        {FULL "fixed_rate_fraction: 1.00000000000000000001}\n", "1.0",
         "measure.profiles.full.fixed_rate_fraction 1.00000000000000000001 is outside (0, 1]: "
         "the fixed offered rate is this fraction of the slowest path's median; write a "
         "fraction like 0.5"},
        {FULL "fixed_rate_fraction: 0.000000000000000000000}\n", "0.0",
         "measure.profiles.full.fixed_rate_fraction 0.000000000000000000000 is outside (0, 1]: "
         "the fixed offered rate is this fraction of the slowest path's median; write a "
         "fraction like 0.5"},
        {FULL "fixed_rate_fraction: 1e-1}\n", "1e-1",
         "measure.profiles.full.fixed_rate_fraction must be a decimal number like 0.05, not "
         "'1e-1'"},
        {FULL "fixed_rate_fraction: \"0.5\"}\n", "\"0.5\"",
         "measure.profiles.full.fixed_rate_fraction must be a number, not the quoted string "
         "'0.5'"},
        {FULL "ping_interval_s: 0.001}\n", "0.001",
         "measure.profiles.full.ping_interval_s 0.001 is out of range 0.002..10 seconds (ping "
         "allows no shorter interval than 0.002); write a value in that range"},
        {FULL "ping_interval_s: 0.0019999999999999999}\n", "0.0019",
         "measure.profiles.full.ping_interval_s 0.0019999999999999999 is out of range 0.002..10 "
         "seconds (ping allows no shorter interval than 0.002); write a value in that range"},
        {FULL "ping_interval_s: 10.00000000000000000001}\n", "10.0",
         "measure.profiles.full.ping_interval_s 10.00000000000000000001 is out of range "
         "0.002..10 seconds (ping allows no shorter interval than 0.002); write a value in that "
         "range"},
        /* Output the guest agent could not carry back (see test_output_caps). */
        {"    full: {pass_s: 600, passes: 1, ping_count: 1, matrix: [forward-1, bidir-64]}\n",
         "bidir-64",
         "measure.profiles.full.matrix: cell 'bidir-64' for pass_s 600 makes iperf3 -J print "
         "about 60.0 MB, more than the 3.1 MB a guest command's output may be to come back whole "
         "(libvirt hands the guest agent's reply over as one string of at most 4 MiB, base64); "
         "the largest pass_s for bidir-64 is 27, or use at most 2 streams for 600 s"},
        {"    full: {pass_s: 79, passes: 1, ping_count: 1, ping_interval_s: 0.002}\n", "0.002",
         "measure.profiles.full: ping_interval_s 0.002 for pass_s 79 makes the latency probe "
         "beside each pass print 39500 lines, about 3.2 MB, more than the 3.1 MB a guest "
         "command's output may be to come back whole (libvirt hands the guest agent's reply over "
         "as one string of at most 4 MiB, base64); the smallest ping_interval_s for pass_s 79 is "
         "0.003, or the largest pass_s at 0.002 s is 78"},
        {"    full: {pass_s: 600, passes: 1, ping_count: 1, ping_interval_s: 0.01}\n", "0.01",
         "measure.profiles.full: ping_interval_s 0.01 for pass_s 600 makes the latency probe "
         "beside each pass print 60000 lines, about 4.8 MB, more than the 3.1 MB a guest "
         "command's output may be to come back whole (libvirt hands the guest agent's reply over "
         "as one string of at most 4 MiB, base64); the smallest ping_interval_s for pass_s 600 "
         "is 0.016, or the largest pass_s at 0.01 s is 392"},
        {FULL "rounds: 2}\n", "rounds",
         "measure.profiles.full: unknown key 'rounds'; allowed keys are pass_s, passes, "
         "ping_count, ping_interval_s, idle_s, fixed_rate_fraction, matrix"},
        {"    full: {passes: 1, ping_count: 1}\n", "{passes",
         "measure.profiles.full: missing required key 'pass_s'"},
        {FULL "matrix: [{cell: forward-1, streams: 2}]}\n", "streams",
         "measure.profiles.full.matrix entry: unknown key 'streams'; allowed keys are cell, "
         "passes"},
        {FULL "matrix: [{passes: 2}]}\n", "{passes: 2}",
         "measure.profiles.full.matrix entry: missing required key 'cell'"},
        {FULL "matrix: [[forward-1]]}\n", "[forward-1]]",
         M "an entry is a cell name like forward-1 or a mapping {cell: NAME, passes: N}, not a "
           "sequence"},
        {FULL "matrix: forward-1}\n", "forward-1}",
         "measure.profiles.full.matrix must be a sequence of cells like [forward-1, reverse-1], "
         "not 'forward-1'"},
        {FULL "matrix: []}\n", "[]",
         "measure.profiles.full.matrix is empty; list at least one cell, or leave matrix out for "
         "the default [forward-1, forward-1-fixed]"},
        {FULL "matrix: [forward-1-fixed, forward-1]}\n", "forward-1-fixed",
         M "the first cell 'forward-1-fixed' is the headline and must run at full speed (the "
           "fixed rate is a fraction of the paths' headline medians); put a cell such as "
           "forward-1 first"},
        {"    quick: {pass_s: 1, passes: 1, ping_count: 1}\n", "quick",
         "measure.profiles has no profile 'full'; add one: it is the profile 'meshlab run' uses "
         "unless given --profile"},
        {FULL "matrix: [forward-1]}\n    full: {pass_s: 2, passes: 1, ping_count: 1}\n",
         "full: {pass_s: 2", "measure.profiles: profile 'full' is given twice (first at line 15)"},
        {"    Full: {pass_s: 1, passes: 1, ping_count: 1}\n", "Full",
         "measure.profiles: profile name 'Full' is not allowed: a name starts with a lowercase "
         "letter, has only lowercase letters, digits and '-', and does not end with '-' (names "
         "become parts of file and libvirt names)"},
        {"    - full\n", "- full",
         "measure.profiles must be a mapping of profile names to profiles, like {full: {pass_s: "
         "30, passes: 3, ping_count: 200}}, not a sequence"},
    };
#undef M
#undef GRAMMAR
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = parse_profiles(cases[i].profiles, &err);
        g_autofree char *want = error_at(cases[i].profiles, cases[i].at, cases[i].rule);
        CHECK(t == NULL);
        CHECK(err && err->domain == ML_ERROR && err->code == ML_ERR_INPUT);
        CHECK_STR(err ? err->message : NULL, want);
    }
}

/* A lab with NAT: the hub with a second address, client a behind a symmetric NAT, and the
 * NAT matrix. Cases edit it by replacing text. */
static const char nat_lab[] =
    "name: nat\n"
    "image: {use: debian-12}\n"
    "bridge: {subnet: 192.0.2.0/24}\n"
    "nodes:\n"
    "  - {name: hub, address: 192.0.2.10, tunnel_address: 10.8.0.1, second_address: 192.0.2.20}\n"
    "  - {name: a, address: 192.0.2.11, tunnel_address: 10.8.0.2, nat: symmetric}\n"
    "  - {name: b, address: 192.0.2.12, tunnel_address: 10.8.0.3}\n"
    "wireguard: {subnet: 10.8.0.0/24}\n"
    "measure: {client: a, server: b, paths: [plain]}\n"
    "nat_matrix: {types: [none, full-cone, port-restricted-cone, symmetric],\n"
    "             dataplanes: [nebula, tailscale], repeats: 3, window_s: 20}\n"
    "hub: hub\n";

/* nat_lab with each pair of edits[] (FROM, TO, ..., NULL) made once; FROM must be there. */
static char *nat_lab_with(const char *const *edits)
{
    GString *s = g_string_new(nat_lab);
    for (size_t i = 0; edits && edits[i]; i += 2)
        g_assert(g_string_replace(s, edits[i], edits[i + 1], 1) == 1);
    return g_string_free(s, FALSE);
}

/* "n.yaml:LINE:COL: rule" at the first occurrence of at in text, worked out from the text; with
 * a '|' in at, the place is where the '|' is ("repeats: |0"). */
static char *error_in(const char *text, const char *at, const char *rule)
{
    g_auto(GStrv) parts = g_strsplit(at, "|", 2);
    g_autofree char *whole = g_strjoinv("", parts);
    const char *hit = strstr(text, whole);
    size_t line = 1, col = 1;
    g_assert(hit);
    if (parts[1])
        hit += strlen(parts[0]);
    for (const char *p = text; p < hit; p++, col++)
        if (*p == '\n')
            line++, col = 0;
    return g_strdup_printf("n.yaml:%zu:%zu: %s", line, col, rule);
}

/* nat_lab with edits (as nat_lab_with) must be refused with rule at the place at marks (as
 * error_in). */
static void check_refused(const char *const *edits, const char *at, const char *rule)
{
    g_autofree char *b = nat_lab_with(edits);
    g_autoptr(GError) e = NULL;
    g_autoptr(MlTopology) bt = ml_topology_parse("n.yaml", b, strlen(b), &e);
    g_autofree char *want = error_in(b, at, rule);
    CHECK(!bt);
    CHECK(e && e->domain == ML_ERROR && e->code == ML_ERR_INPUT);
    CHECK_STR(e ? e->message : NULL, want);
}

static void test_nat_types(void)
{
    static const char *const names[] = {
        "none", "one-to-one", "full-cone", "restricted-cone", "port-restricted-cone", "symmetric"};
    CHECK(G_N_ELEMENTS(names) == ML_NAT_TYPES);
    for (unsigned i = 0; i < ML_NAT_TYPES; i++) {
        enum ml_nat_type back = ML_NAT_TYPES;
        CHECK_STR(ml_nat_type_name((enum ml_nat_type)i), names[i]);
        CHECK(ml_nat_type_parse(names[i], &back) && back == (enum ml_nat_type)i);

        /* Every type parses as a client's nat. */
        g_autofree char *line = g_strdup_printf("nat: %s}", names[i]);
        const char *edits[] = {"nat: symmetric}", line, NULL};
        g_autofree char *text = nat_lab_with(edits);
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = ml_topology_parse("n.yaml", text, strlen(text), &err);
        CHECK(t && t->nodes[1].nat == (enum ml_nat_type)i);
        CHECK(t && ml_topology_has_nat(t) == (i != ML_NAT_NONE));
    }
    CHECK(ml_nat_type_name(ML_NAT_TYPES) == NULL);
    enum ml_nat_type untouched = ML_NAT_FULL_CONE;
    CHECK(!ml_nat_type_parse("Symmetric", &untouched) && untouched == ML_NAT_FULL_CONE);
    CHECK(!ml_nat_type_parse(NULL, &untouched));
}

/* vps: the workload a VPS hub is rehearsed for; its numbers checked where they are written. */
static void test_vps_workload(void)
{
    {
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = ml_topology_parse("n.yaml", nat_lab, strlen(nat_lab), &err);
        CHECK(t && !t->vps.present);
        /* run takes the seed's where none was given, and says so in results.json */
        if (t) {
            ml_workload_default_seed(&t->vps);
            CHECK(t->vps.present && t->vps.seed && t->vps.traffic_gb == 210 &&
                  t->vps.relayed_share == 0.2 && t->vps.egress_price_per_gb < 0 &&
                  t->vps.included_tb == 0);
            struct json_object *j = ml_workload_json(&t->vps);
            CHECK_STR(json_object_get_string(json_object_object_get(j, "source")), "seed");
            struct ml_workload back;
            ml_workload_from_json(&back, j);
            CHECK(back.seed && back.traffic_gb == 210);
            json_object_put(j);
        }
    }
    const char *good[] = {"hub: hub\n",
                          "hub: hub\nvps: {traffic_gb: 210, relayed_share: 0.2, "
                          "egress_price_per_gb: 0.01, included_tb: 1, peak_mbit: 100, "
                          "currency: EUR}\n",
                          NULL};
    g_autofree char *text = nat_lab_with(good);
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = ml_topology_parse("n.yaml", text, strlen(text), &err);
    CHECK(t != NULL);
    if (t) {
        CHECK(t->vps.present && t->vps.traffic_gb == 210 && t->vps.relayed_share == 0.2);
        CHECK(t->vps.egress_price_per_gb == 0.01 && t->vps.included_tb == 1);
        CHECK(t->vps.peak_mbit == 100);
        CHECK_STR(t->vps.currency, "EUR");
        /* one given is not replaced */
        ml_workload_default_seed(&t->vps);
        CHECK(!t->vps.seed && t->vps.traffic_gb == 210 && t->vps.included_tb == 1);
        /* A flag over the file's value, and a bad flag named. */
        g_autoptr(GError) ferr = NULL;
        CHECK(ml_workload_set(&t->vps, "relayed-share", "0.5", &ferr) &&
              t->vps.relayed_share == 0.5);
        CHECK(!ml_workload_set(&t->vps, "relayed-share", "1.5", &ferr));
        CHECK_STR(ferr ? ferr->message : NULL,
                  "--relayed-share must be 0 to 1 (0.2 for a fifth), not 1.5");
        g_clear_error(&ferr);
        CHECK(!ml_workload_set(&t->vps, "traffic", "-3", &ferr));
        CHECK_STR(ferr ? ferr->message : NULL,
                  "--traffic must be a decimal number like 0.2 or 1000, not '-3'");
        g_clear_error(&ferr);
        CHECK(!ml_workload_set(&t->vps, "currency", "usd", &ferr));
        struct json_object *j = ml_workload_json(&t->vps);
        CHECK_STR(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN),
                  "{\"traffic_gb\":210.0,\"relayed_share\":0.5,\"egress_price_per_gb\":0.01,"
                  "\"included_tb\":1.0,\"peak_mbit\":100.0,\"currency\":\"EUR\"}");
        json_object_put(j);
    }
    /* Defaults: share 1, no price, no peak; and a workload of flags alone needs --traffic. */
    struct ml_workload w;
    ml_workload_init(&w);
    CHECK(!w.present && w.relayed_share == 1 && w.egress_price_per_gb < 0 && w.peak_mbit < 0);
    g_autoptr(GError) cerr = NULL;
    CHECK(ml_workload_complete(&w, &cerr));
    CHECK(ml_workload_set(&w, "egress-price", "0.01", &cerr) && w.present);
    CHECK(!ml_workload_complete(&w, &cerr));
    CHECK(cerr && strstr(cerr->message, "give --traffic GB"));
    /* Read back from a results.json: what it lacks, or holds as null, is the default. */
    struct json_object *rec = json_tokener_parse("{\"traffic_gb\": 5, \"currency\": null, "
                                                 "\"egress_price_per_gb\": null}");
    ml_workload_from_json(&w, rec);
    CHECK(w.present && w.traffic_gb == 5 && w.relayed_share == 1 && w.egress_price_per_gb < 0);
    CHECK_STR(w.currency, "USD");
    CHECK(!ml_workload_currency_ok(NULL) && !ml_workload_currency_ok("") &&
          !ml_workload_currency_ok("EUROPEAN"));
    json_object_put(rec);
    /* Errors at the key or value that broke the rule. */
    static const char *const bad[][3] = {
        {"vps: {traffic_gb: 0}", "traffic_gb: |0",
         "vps.traffic_gb must be above 0: the clients' payload a month, in GB"},
        {"vps: {traffic_gb: 10, relayed_share: 1.5}", "relayed_share: |1.5",
         "vps.relayed_share must be 0 to 1: the share of the payload a mesh's relay carries "
         "(0.2 for a fifth)"},
        {"vps: {traffic_gb: 10, currency: usd}", "currency: |usd",
         "vps.currency must be a code of capital letters like USD or EUR, not 'usd'"},
        {"vps: {traffic_gb: 10, peak_mbit: 0}", "peak_mbit: |0",
         "vps.peak_mbit must be above 0 (Mbit/s)"},
        {"vps: {traffic_gb: ten}", "traffic_gb: |ten",
         "vps.traffic_gb must be a decimal number like 0.05, not 'ten'"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *line = g_strdup_printf("hub: hub\n%s\n", bad[i][0]);
        const char *edits[] = {"hub: hub\n", line, NULL};
        check_refused(edits, bad[i][1], bad[i][2]);
    }
    /* traffic_gb is the one key a vps section must have. */
    const char *missing[] = {"hub: hub\n", "hub: hub\nvps: {relayed_share: 0.2}\n", NULL};
    g_autofree char *m = nat_lab_with(missing);
    g_autoptr(GError) me = NULL;
    g_autoptr(MlTopology) mt = ml_topology_parse("n.yaml", m, strlen(m), &me);
    CHECK(!mt && me && strstr(me->message, "traffic_gb"));
}

/* wan: a node's WAN profile, shipped or the topology's own (wan_profiles); errors where written. */
static void test_wan_profiles(void)
{
    {
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = ml_topology_parse("n.yaml", nat_lab, strlen(nat_lab), &err);
        CHECK(t && !strcmp(t->nodes[0].wan.name, "lan") && ml_wan_is_none(&t->nodes[1].wan));
    }
    const char *good[] = {"second_address: 192.0.2.20}",
                          "second_address: 192.0.2.20, wan: vps-far}",
                          "nat: symmetric}",
                          "nat: symmetric, wan: slow-home}",
                          "hub: hub\n",
                          "hub: hub\nwan_profiles:\n  slow-home: {delay_ms: 25, jitter_ms: 5, "
                          "loss_percent: 0.5, rate_mbit: 8}\n",
                          NULL};
    g_autofree char *text = nat_lab_with(good);
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = ml_topology_parse("n.yaml", text, strlen(text), &err);
    CHECK(t != NULL);
    if (t) {
        const struct ml_wan_profile *hub = &t->nodes[0].wan, *a = &t->nodes[1].wan;
        CHECK_STR(hub->name, "vps-far");
        CHECK(hub->delay_ms == 40 && hub->rate_mbit == 1000 && hub->source != NULL);
        CHECK_STR(a->name, "slow-home");
        CHECK(a->delay_ms == 25 && a->jitter_ms == 5 && a->loss_percent == 0.5 &&
              a->rate_mbit == 8 && a->source == NULL);
        CHECK_STR(t->nodes[2].wan.name, "lan");
        /* A relay's delay counts twice: its packets leave it towards each end. */
        CHECK(ml_wan_rtt_ms(a, &t->nodes[2].wan, hub) == 25 + 0 + 80);
        CHECK(ml_wan_rtt_ms(a, hub, NULL) == 65);
        /* At most, each delay with its jitter: 25 + 5, 0, and the hub's 40 twice. */
        CHECK(ml_wan_rtt_max_ms(a, &t->nodes[2].wan, hub) == 30 + 0 + 80);
        CHECK(ml_topology_wan_find(t, "slow-home") == &t->wan_profiles[0]);
        CHECK(ml_topology_wan_find(t, "mobile") == ml_wan_shipped_find("mobile"));
        CHECK(ml_topology_wan_find(t, "nope") == NULL);
    }
    /* Every shipped profile keeps its own bounds and says where its figures come from. */
    size_t n = 0;
    const struct ml_wan_profile *shipped = ml_wan_shipped(&n);
    CHECK(n == 6);
    for (size_t i = 0; i < n; i++) {
        CHECK(ml_wan_out_of_bounds(&shipped[i]) == NULL && shipped[i].source != NULL);
        CHECK(strstr(ml_wan_shipped_names(), shipped[i].name) != NULL);
    }
    CHECK(ml_wan_is_none(ml_wan_shipped_find("lan")));
    CHECK(ml_wan_shipped_find("home-dsl")->rate_mbit == 10);
    CHECK(ml_wan_shipped_find("mobile")->loss_percent == 1);
    /* Errors at the value that broke the rule. */
    static const char *const bad[][3] = {
        {"wan: moon", "wan: |moon",
         "node 'b': wan: 'moon' is no WAN profile; give one of lan, vps-near, vps-far, "
         "home-fibre, home-dsl, mobile, or define it under wan_profiles"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *to = g_strdup_printf("tunnel_address: 10.8.0.3, %s}", bad[i][0]);
        const char *edits[] = {"tunnel_address: 10.8.0.3}", to, NULL};
        check_refused(edits, bad[i][1], bad[i][2]);
    }
    static const char *const bad_profiles[][3] = {
        {"  lan: {delay_ms: 5}", "|lan:",
         "wan_profiles: 'lan' is a shipped profile (lan, vps-near, vps-far, home-fibre, home-dsl, "
         "mobile); give yours another name"},
        {"  far: {delay_ms: 5, jitter_ms: 6}", "jitter_ms: |6",
         "wan_profiles.far: jitter_ms must be 0 to delay_ms: the delay varies by up to it "
         "either way, and a delay below 0 does not exist"},
        {"  far: {loss_percent: 60}", "loss_percent: |60",
         "wan_profiles.far: loss_percent must be 0 to 50: past half the packets lost, no path is "
         "measured"},
        {"  far: {rate_mbit: 0.01}", "rate_mbit: |0.01",
         "wan_profiles.far: rate_mbit must be 0 (no limit) or 0.1 to 10000: the node's uplink in "
         "Mbit/s"},
        {"  far: {delay_ms: 501}", "delay_ms: |501",
         "wan_profiles.far: delay_ms must be 0 to 500: the round trip the node's link adds, in "
         "ms"},
        {"  far: {delay: 5}", "|delay:",
         "wan_profiles.far: unknown key 'delay'; allowed keys are delay_ms, jitter_ms, "
         "loss_percent, rate_mbit"},
        {"  far: {delay_ms: 5}\n  far: {delay_ms: 6}", "far: {delay_ms: 5}\n  |far",
         "wan_profiles: profile 'far' is given twice (first at line 14)"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad_profiles); i++) {
        g_autofree char *line =
            g_strdup_printf("hub: hub\nwan_profiles:\n%s\n", bad_profiles[i][0]);
        const char *edits[] = {"hub: hub\n", line, NULL};
        check_refused(edits, bad_profiles[i][1], bad_profiles[i][2]);
    }
}

/* wan_sweep: each step a set of every node's profile, the hub's by name or any node's by map. */
static void test_wan_sweep(void)
{
    const char *good[] = {"nat: symmetric}", "nat: symmetric, wan: home-dsl}", "hub: hub\n",
                          "hub: hub\nwan_sweep: [lan, vps-far, {hub: mobile, b: home-fibre}]\n",
                          NULL};
    g_autofree char *text = nat_lab_with(good);
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = ml_topology_parse("n.yaml", text, strlen(text), &err);
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return;
    }
    CHECK(t->n_wan_sweep == 3);
    CHECK_STR(t->wan_sweep[0].label, "lan");
    CHECK_STR(t->wan_sweep[1].label, "vps-far");
    CHECK_STR(t->wan_sweep[2].label, "hub=mobile b=home-fibre");
    /* A name is the hub's; every other node keeps its own. */
    CHECK_STR(t->wan_sweep[1].wan[0].name, "vps-far");
    CHECK_STR(t->wan_sweep[1].wan[1].name, "home-dsl");
    CHECK_STR(t->wan_sweep[1].wan[2].name, "lan");
    CHECK_STR(t->wan_sweep[2].wan[0].name, "mobile");
    CHECK_STR(t->wan_sweep[2].wan[1].name, "home-dsl");
    CHECK_STR(t->wan_sweep[2].wan[2].name, "home-fibre");
    CHECK(t->wan_sweep[2].line == 13 && t->wan_sweep[2].column == 27);
    static const char *const bad[][3] = {
        {"wan_sweep: [lan]", "wan_sweep: |[lan]",
         "wan_sweep lists 1 step; a sweep compares 2 or more, like [lan, vps-far] (for one, give "
         "the nodes' wan instead)"},
        {"wan_sweep: [lan, moon]", "|moon",
         "wan_sweep[1]: 'moon' is no WAN profile; give one of lan, vps-near, vps-far, home-fibre, "
         "home-dsl, mobile, or define it under wan_profiles"},
        {"wan_sweep: [lan, {c: vps-far}]", "{|c:", "wan_sweep[1]: 'c' is no node of this lab"},
        {"wan_sweep: [vps-far, vps-far]", "vps-far, |vps-far",
         "wan_sweep: step 'vps-far' puts the same profiles in force as step 'vps-far' (line 13)"},
        {"wan_sweep: [vps-far, {hub: vps-far}]", "vps-far, |{hub",
         "wan_sweep: step 'hub=vps-far' puts the same profiles in force as step 'vps-far' (line "
         "13)"},
        {"wan_sweep: [lan, {hub: lan, hub: vps-far}]", "lan, {hub: lan, |hub: vps-far",
         "wan_sweep[1]: node 'hub' is given twice"},
        {"wan_sweep: [lan, [vps-far]]", "lan, |[vps-far]",
         "wan_sweep[1] must be a profile's name (the hub's) or a mapping of node names to "
         "profiles, not a sequence"},
        {"wan_sweep: lan", "wan_sweep: |lan",
         "wan_sweep must be a sequence of steps (a profile's name, or {NODE: PROFILE, ...}), not "
         "'lan'"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *line = g_strdup_printf("hub: hub\n%s\n", bad[i][0]);
        const char *edits[] = {"hub: hub\n", line, NULL};
        check_refused(edits, bad[i][1], bad[i][2]);
    }
}

static void test_nat_good(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = ml_topology_parse("n.yaml", nat_lab, strlen(nat_lab), &err);
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return;
    }
    CHECK(ip_is(t->nodes[0].second_address, "192.0.2.20"));
    CHECK(ip_is(t->nodes[1].second_address, "0.0.0.0"));
    CHECK(t->nodes[0].nat == ML_NAT_NONE && t->nodes[1].nat == ML_NAT_SYMMETRIC &&
          t->nodes[2].nat == ML_NAT_NONE);
    CHECK(ml_topology_has_nat(t));
    CHECK(ip_is(ml_nat_inside_net(t, 1), "172.16.11.0"));
    CHECK(ip_is(ml_nat_inside_net(t, 2), "172.16.12.0"));
    CHECK(t->nat_matrix.present);
    CHECK(t->nat_matrix.line == 10 && t->nat_matrix.column == 1);
    CHECK(t->nat_matrix.n_types == 4);
    CHECK(t->nat_matrix.types[0] == ML_NAT_NONE && t->nat_matrix.types[1] == ML_NAT_FULL_CONE &&
          t->nat_matrix.types[2] == ML_NAT_PORT_RESTRICTED_CONE &&
          t->nat_matrix.types[3] == ML_NAT_SYMMETRIC);
    CHECK(t->nat_matrix.n_dataplanes == 2);
    CHECK_STR(t->nat_matrix.dataplanes[0].name, "nebula");
    CHECK(t->nat_matrix.dataplanes[0].line == 11 && t->nat_matrix.dataplanes[0].column == 27);
    CHECK_STR(t->nat_matrix.dataplanes[1].name, "tailscale");
    CHECK(t->nat_matrix.dataplanes[1].line == 11 && t->nat_matrix.dataplanes[1].column == 35);
    CHECK(t->nat_matrix.repeats == 3 && t->nat_matrix.window_s == 20);

    /* nat: none is allowed on the hub: it is no NAT. */
    static const char *const hub_none[] = {"10.8.0.1,", "10.8.0.1, nat: none,", NULL};
    g_autofree char *hub_text = nat_lab_with(hub_none);
    g_autoptr(MlTopology) h = ml_topology_parse("n.yaml", hub_text, strlen(hub_text), &err);
    CHECK(h && h->nodes[0].nat == ML_NAT_NONE);

    /* The matrix alone, in block style, with its defaults; no node NATed by nat:. */
    static const char *const matrix_only[] = {
        "nat: symmetric}", "vcpus: 1}",
        "nat_matrix: {types: [none, full-cone, port-restricted-cone, symmetric],\n"
        "             dataplanes: [nebula, tailscale], repeats: 3, window_s: 20}\n",
        "# the lesson\nnat_matrix:\n  types:\n    - symmetric\n  dataplanes:\n    - nebula\n",
        NULL};
    g_autofree char *text = nat_lab_with(matrix_only);
    g_autoptr(MlTopology) m = ml_topology_parse("n.yaml", text, strlen(text), &err);
    CHECK(m != NULL);
    if (m) {
        CHECK(!ml_topology_has_nat(m));
        CHECK(m->nat_matrix.present && m->nat_matrix.line == 11 && m->nat_matrix.column == 1);
        CHECK(m->nat_matrix.n_types == 1 && m->nat_matrix.types[0] == ML_NAT_SYMMETRIC);
        CHECK(m->nat_matrix.n_dataplanes == 1 && m->nat_matrix.dataplanes[0].line == 15 &&
              m->nat_matrix.dataplanes[0].column == 7);
        CHECK(m->nat_matrix.repeats == 3 && m->nat_matrix.window_s == 20);
    }

    /* The limits of repeats, window_s and the lists, and every type at once. */
    static const char *const limits[] = {
        "[none, full-cone, port-restricted-cone, symmetric]",
        "[symmetric, port-restricted-cone, restricted-cone, full-cone, one-to-one, none]",
        "[nebula, tailscale]",
        "[nebula, tailscale, wireguard, x-2]",
        "repeats: 3",
        "repeats: 20",
        "window_s: 20",
        "window_s: 300",
        NULL};
    g_autofree char *text2 = nat_lab_with(limits);
    g_autoptr(MlTopology) l = ml_topology_parse("n.yaml", text2, strlen(text2), &err);
    CHECK(l && l->nat_matrix.n_types == 6 && l->nat_matrix.types[5] == ML_NAT_NONE);
    CHECK(l && l->nat_matrix.n_dataplanes == 4 && !strcmp(l->nat_matrix.dataplanes[3].name, "x-2"));
    CHECK(l && l->nat_matrix.repeats == 20 && l->nat_matrix.window_s == 300);
    static const char *const low[] = {"repeats: 3", "repeats: 1", "window_s: 20", "window_s: 5",
                                      NULL};
    g_autofree char *text3 = nat_lab_with(low);
    g_autoptr(MlTopology) lo = ml_topology_parse("n.yaml", text3, strlen(text3), &err);
    CHECK(lo && lo->nat_matrix.repeats == 1 && lo->nat_matrix.window_s == 5);

    /* No NAT anywhere: nothing asked of the hub; a second address is still allowed there. */
    static const char *const none[] = {", second_address: 192.0.2.20}", "}", "nat: symmetric}",
                                       "vcpus: 1}", NULL};
    g_autofree char *plain_text = nat_lab_with(none);
    GString *plain = g_string_new(plain_text);
    g_string_truncate(plain, (gsize)(strstr(plain->str, "nat_matrix") - plain->str));
    g_string_append(plain, "hub: hub\n");
    g_autoptr(MlTopology) p = ml_topology_parse("n.yaml", plain->str, plain->len, &err);
    CHECK(p && !p->nat_matrix.present && !ml_topology_has_nat(p));
    CHECK(p && ip_is(p->nodes[0].second_address, "0.0.0.0"));
    g_string_free(plain, TRUE);
    static const char *const spare[] = {"nat: symmetric}", "vcpus: 1}", NULL};
    g_autofree char *spare_text = nat_lab_with(spare);
    GString *s2 = g_string_new(spare_text);
    g_string_truncate(s2, (gsize)(strstr(s2->str, "nat_matrix") - s2->str));
    g_string_append(s2, "hub: hub\n");
    g_autoptr(MlTopology) sp = ml_topology_parse("n.yaml", s2->str, s2->len, &err);
    CHECK(sp && ip_is(sp->nodes[0].second_address, "192.0.2.20") && !ml_topology_has_nat(sp));
    g_string_free(s2, TRUE);

    /* In a /16, two clients may share a last octet when only one of them can be NATed: the
     * matrix of [none] NATs nobody. */
    static const char *const shared_octet[] = {"192.0.2.0/24",
                                               "192.0.0.0/16",
                                               "192.0.2.12",
                                               "192.0.3.11",
                                               "nat: symmetric}",
                                               "vcpus: 1}",
                                               "[none, full-cone, port-restricted-cone, symmetric]",
                                               "[none]",
                                               NULL};
    g_autofree char *text4 = nat_lab_with(shared_octet);
    g_autoptr(MlTopology) so = ml_topology_parse("n.yaml", text4, strlen(text4), &err);
    CHECK(so != NULL);
    if (!so)
        fprintf(stderr, "%s\n", err->message);
}

/* Each rule of nat, second_address and nat_matrix, at its line and column. */
static void test_nat_errors(void)
{
#define TYPES                                                                                      \
    "the types are none, one-to-one, full-cone, restricted-cone, port-restricted-cone, symmetric"
#define MATRIX_TYPES "[none, full-cone, port-restricted-cone, symmetric]"
    static const struct {
        const char *edits[13];
        const char *at, *rule;
    } cases[] = {
        {{"nat: symmetric", "nat: cone"}, "cone", "node 'a': nat 'cone' is not a NAT type; " TYPES},
        {{"nat: symmetric", "nat: ~"}, "~", "node 'a': nat must be a string, not an empty value"},
        {{"nat: symmetric", "nat: [symmetric]"},
         "[symmetric]",
         "node 'a': nat must be a string, not a sequence"},
        {{"10.8.0.1,", "10.8.0.1, nat: full-cone,"},
         "full-cone,",
         "node 'hub': nat full-cone on the hub: the hub is the public server; only "
         "clients sit behind a NAT (remove nat or set it to none)"},
        {{"nat: symmetric", "nat: symmetric, second_address: 192.0.2.21"},
         "192.0.2.21",
         "node 'a': second_address is only for the hub 'hub' (the NAT probes' second "
         "destination); remove it here"},
        {{"second_address: 192.0.2.20", "second_address: 192.0.3.20"},
         "192.0.3.20",
         "node 'hub': second_address 192.0.3.20 is outside the lab subnet 192.0.2.0/24"},
        {{"second_address: 192.0.2.20", "second_address: 192.0.2.0"},
         "192.0.2.0}",
         "node 'hub': second_address 192.0.2.0 is the network address of the lab subnet "
         "192.0.2.0/24"},
        {{"second_address: 192.0.2.20", "second_address: 192.0.2.255"},
         "192.0.2.255",
         "node 'hub': second_address 192.0.2.255 is the broadcast address of the lab subnet "
         "192.0.2.0/24"},
        {{"second_address: 192.0.2.20", "second_address: 192.0.2.12"},
         "192.0.2.12}",
         "node 'hub': second_address 192.0.2.12 is already the address of node 'b' (line 7); "
         "choose a free address such as 192.0.2.20"},
        {{"second_address: 192.0.2.20", "second_address: 192.0.2.10"},
         "192.0.2.10}",
         "node 'hub': second_address 192.0.2.10 is already the address of node 'hub' (line 5); "
         "choose a free address such as 192.0.2.20"},
        {{"second_address: 192.0.2.20", "second_address: 192.0.02.20"},
         "192.0.02.20",
         "node 'hub': second_address '192.0.02.20' is not an IPv4 address in canonical form (four "
         "decimal numbers 0-255 without leading zeros, like 192.0.2.10)"},
        /* A NAT needs the hub's second address: at the first NATed client's nat ... */
        {{", second_address: 192.0.2.20}", "}"},
         "nat: symmetric",
         "the nat of node 'a' needs a second lab address on the hub for the NAT probes "
         "and a second STUN "
         "destination; add `second_address: 192.0.2.20` to node 'hub' (line 5), a free address "
         "in 192.0.2.0/24"},
        /* ... or at nat_matrix, where no node has a nat; hub + 10 taken: the next free one. */
        {{", second_address: 192.0.2.20}", "}", "nat: symmetric}", "vcpus: 1}", "192.0.2.12",
          "192.0.2.20"},
         "nat_matrix",
         "nat_matrix needs a second lab address on the hub for the NAT probes and a "
         "second STUN "
         "destination; add `second_address: 192.0.2.12` to node 'hub' (line 5), a free address "
         "in 192.0.2.0/24"},
        {{", second_address: 192.0.2.20}", "}", "192.0.2.0/24", "192.0.2.0/28", "192.0.2.12",
          "192.0.2.14", "192.0.2.10", "192.0.2.13"},
         "nat: symmetric",
         "the nat of node 'a' needs a second lab address on the hub for the NAT probes "
         "and a second STUN "
         "destination; add `second_address: 192.0.2.1` to node 'hub' (line 5), a free address in "
         "192.0.2.0/28"},
        /* A full lab subnet leaves nothing to suggest. */
        {{", second_address: 192.0.2.20}", "}", "192.0.2.0/24", "192.0.2.0/29", "192.0.2.10",
          "192.0.2.1", "192.0.2.11", "192.0.2.2", "192.0.2.12", "192.0.2.3", "wireguard:",
          "  - {name: c, address: 192.0.2.4, tunnel_address: 10.8.0.4}\n"
          "  - {name: d, address: 192.0.2.5, tunnel_address: 10.8.0.5}\n"
          "  - {name: e, address: 192.0.2.6, tunnel_address: 10.8.0.6}\nwireguard:"},
         "nat: symmetric",
         "the nat of node 'a' needs a second lab address on the hub for the NAT probes and a "
         "second STUN destination, but the lab subnet 192.0.2.0/29 has no free address left; "
         "widen bridge.subnet and add `second_address:` to node 'hub' (line 5)"},
        {{"192.0.2.0/24", "192.0.2.0/29", "192.0.2.10", "192.0.2.1", "second_address: 192.0.2.20",
          "second_address: 192.0.2.3", "192.0.2.11", "192.0.2.2", "192.0.2.12", "192.0.2.3",
          "wireguard:",
          "  - {name: c, address: 192.0.2.4, tunnel_address: 10.8.0.4}\n"
          "  - {name: d, address: 192.0.2.5, tunnel_address: 10.8.0.5}\n"
          "  - {name: e, address: 192.0.2.6, tunnel_address: 10.8.0.6}\nwireguard:"},
         "192.0.2.3}",
         "node 'hub': second_address 192.0.2.3 is already the address of node 'b' (line 7); the "
         "lab subnet 192.0.2.0/29 has no free address left; widen it"},
        /* 172.16.0.0/16 is the NATs' inside. */
        {{"192.0.2.0/24", "172.16.2.0/24", "192.0.2.10", "172.16.2.10", "192.0.2.20", "172.16.2.20",
          "192.0.2.11", "172.16.2.11", "192.0.2.12", "172.16.2.12"},
         "172.16.2.0/24",
         "bridge.subnet 172.16.2.0/24 overlaps 172.16.0.0/16, where the nat of node 'a' (line 6) "
         "puts each NATed client's inside network (172.16.<last octet of its address>.0/24); move "
         "bridge.subnet elsewhere"},
        {{"10.8.0.0/24", "172.0.0.0/8", "10.8.0.1", "172.8.0.1", "10.8.0.2", "172.8.0.2",
          "10.8.0.3", "172.8.0.3"},
         "172.0.0.0/8",
         "wireguard.subnet 172.0.0.0/8 overlaps 172.16.0.0/16, where the nat of node 'a' (line 6) "
         "puts each NATed client's inside network (172.16.<last octet of its address>.0/24); move "
         "wireguard.subnet elsewhere"},
        {{"10.8.0.0/24", "172.16.8.0/24", "10.8.0.1", "172.16.8.1", "10.8.0.2", "172.16.8.2",
          "10.8.0.3", "172.16.8.3", "nat: symmetric}", "vcpus: 1}"},
         "172.16.8.0/24",
         "wireguard.subnet 172.16.8.0/24 overlaps 172.16.0.0/16, where nat_matrix (line 10) puts "
         "each NATed client's inside network (172.16.<last octet of its address>.0/24); move "
         "wireguard.subnet elsewhere"},
        {{"192.0.2.0/24", "192.0.0.0/16", "192.0.2.12", "192.0.3.11"},
         "192.0.3.11",
         "node 'b': address 192.0.3.11 ends in the same number as node 'a''s 192.0.2.11, so their "
         "NATs' inside networks would both be 172.16.11.0/24; a NATed client's address needs its "
         "own last octet"},
        /* nat_matrix itself. */
        {{MATRIX_TYPES, "[none, cone]"},
         "cone",
         "nat_matrix.types: type 'cone' is not a NAT type; " TYPES},
        {{MATRIX_TYPES, "[none, symmetric, none]"},
         "none]",
         "nat_matrix.types: 'none' is listed twice (first at line 10)"},
        {{MATRIX_TYPES, "[]"},
         "[]",
         "nat_matrix.types is empty; list at least one of none, one-to-one, full-cone, "
         "restricted-cone, port-restricted-cone, symmetric"},
        {{MATRIX_TYPES, "symmetric"},
         "symmetric,\n",
         "nat_matrix.types must be a sequence of NAT types like [none, symmetric], not "
         "'symmetric'"},
        {{"[nebula, tailscale]", "[]"},
         "[]",
         "nat_matrix.dataplanes is empty; list at least one, like [nebula]"},
        {{"[nebula, tailscale]", "[a, b, c, d, e]"},
         "e]",
         "nat_matrix.dataplanes lists 5 dataplanes; at most 4"},
        {{"[nebula, tailscale]", "[nebula, tailscale, nebula]"},
         "nebula]",
         "nat_matrix.dataplanes: 'nebula' is listed twice (first at line 11)"},
        {{"[nebula, tailscale]", "[Nebula]"},
         "Nebula",
         "nat_matrix.dataplanes: dataplane 'Nebula' is not allowed: a name starts with a lowercase "
         "letter, has only lowercase letters, digits and '-', and does not end with '-' (names "
         "become parts of file and libvirt names)"},
        {{"[nebula, tailscale]", "[\"\"]"},
         "\"\"",
         "nat_matrix.dataplanes: dataplane '' is not allowed: a name starts with a lowercase "
         "letter, has only lowercase letters, digits and '-', and does not end with '-' (names "
         "become parts of file and libvirt names)"},
        {{"[nebula, tailscale]", "nebula"},
         "nebula",
         "nat_matrix.dataplanes must be a sequence of dataplane names like [nebula, tailscale], "
         "not 'nebula'"},
        {{"repeats: 3", "repeats: 0"}, "repeats: |0", "nat_matrix.repeats 0 is out of range 1..20"},
        {{"repeats: 3", "repeats: 21"}, "21", "nat_matrix.repeats 21 is out of range 1..20"},
        {{"window_s: 20", "window_s: 4"},
         "window_s: |4",
         "nat_matrix.window_s 4 is out of range 5..300"},
        {{"window_s: 20", "window_s: 301"},
         "301",
         "nat_matrix.window_s 301 is out of range 5..300"},
        {{"window_s: 20", "window: 20"},
         "window:",
         "nat_matrix: unknown key 'window'; allowed keys are types, dataplanes, repeats, "
         "window_s"},
        {{"types: " MATRIX_TYPES ",\n", ""},
         "nat_matrix: |{",
         "nat_matrix: missing required key 'types'"},
        {{"nat_matrix: {types: " MATRIX_TYPES ",\n             dataplanes: [nebula, tailscale], "
          "repeats: 3, window_s: 20}",
          "nat_matrix: [symmetric]"},
         "[symmetric]",
         "nat_matrix must be a mapping (keys: types, dataplanes, repeats, window_s), not a "
         "sequence"},
    };
#undef TYPES
#undef MATRIX_TYPES
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = nat_lab_with(cases[i].edits);
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = ml_topology_parse("n.yaml", text, strlen(text), &err);
        g_autofree char *want = error_in(text, cases[i].at, cases[i].rule);
        CHECK(t == NULL);
        CHECK(err && err->domain == ML_ERROR && err->code == ML_ERR_INPUT);
        int failed_before = check_failed;
        CHECK_STR(err ? err->message : NULL, want);
        if (check_failed != failed_before)
            fprintf(stderr, "  (case %zu)\n", i);
    }
}

/* The lesson lab as shipped (parsed only: its paths nebula-auto and tailscale-auto are
 * resolved by the dataplanes' registry). */
static void test_nat_lesson(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) t = ml_topology_load("topologies/nat-lesson.yaml", &err);
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return;
    }
    CHECK_STR(t->name, "nat-lesson");
    CHECK(t->n_nodes == 3 && t->hub == 0);
    CHECK(t->measure.client == 1 && t->measure.server == 2);
    CHECK(ip_is(t->nodes[0].address, "192.0.2.10") && ip_is(t->nodes[1].address, "192.0.2.11") &&
          ip_is(t->nodes[2].address, "192.0.2.12"));
    CHECK(ip_is(t->nodes[0].second_address, "192.0.2.20"));
    CHECK(t->nodes[0].nat == ML_NAT_NONE);
    CHECK(t->nodes[1].nat == ML_NAT_PORT_RESTRICTED_CONE &&
          t->nodes[2].nat == ML_NAT_PORT_RESTRICTED_CONE);
    CHECK(t->measure.n_paths == 2 && ml_topology_has_path(t, "nebula-auto") &&
          ml_topology_has_path(t, "tailscale-auto"));
    CHECK(ml_topology_profile(t, "full") && ml_topology_profile(t, "quick"));
    CHECK(t->nat_matrix.present && t->nat_matrix.n_types == 4);
    CHECK(t->nat_matrix.types[0] == ML_NAT_NONE && t->nat_matrix.types[1] == ML_NAT_FULL_CONE &&
          t->nat_matrix.types[2] == ML_NAT_PORT_RESTRICTED_CONE &&
          t->nat_matrix.types[3] == ML_NAT_SYMMETRIC);
    CHECK(t->nat_matrix.n_dataplanes == 2 && !strcmp(t->nat_matrix.dataplanes[0].name, "nebula") &&
          !strcmp(t->nat_matrix.dataplanes[1].name, "tailscale"));
    CHECK(t->nat_matrix.repeats == 3 && t->nat_matrix.window_s == 20);
}

/* A lab of one hub and n_clients clients c1..cN, 192.0.2.10+i, tunnel 10.8.0.1+i. */
static char *hub_and_clients(size_t n_clients)
{
    GString *s =
        g_string_new("name: wide\n"
                     "image:\n  use: debian-12\n"
                     "bridge:\n  subnet: 192.0.2.0/24\n"
                     "defaults:\n  vcpus: 1\n  memory_mib: 512\n"
                     "nodes:\n"
                     "  - name: hub\n    address: 192.0.2.10\n    tunnel_address: 10.8.0.1\n");
    for (size_t i = 1; i <= n_clients; i++)
        g_string_append_printf(s,
                               "  - name: c%zu\n    address: 192.0.2.%zu\n"
                               "    tunnel_address: 10.8.0.%zu\n",
                               i, 10 + i, 1 + i);
    g_string_append(s, "hub: hub\nwireguard:\n  subnet: 10.8.0.0/24\n"
                       "measure:\n  client: c1\n  server: c8\n  paths: [plain, wireguard-hub]\n");
    return g_string_free(s, FALSE);
}

static size_t count_of(const char *haystack, const char *needle)
{
    size_t n = 0;
    for (const char *p = haystack; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* One hub and 8 clients: every name, address and configuration the lab renders is its own
 * guest's, and a 10th node is refused where it stands. */
static void test_hub_and_eight_clients(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *text = hub_and_clients(8);
    g_autoptr(MlTopology) t = parse(text, &err);
    CHECK(t != NULL);
    if (!t) {
        fprintf(stderr, "%s\n", err->message);
        return;
    }
    CHECK(t->n_nodes == 9 && t->measure.client == 1 && t->measure.server == 8);
    CHECK(ml_paths_resolve(t, NULL));

    g_autoptr(MlPlan) plan = ml_plan_new(t, "20261130-120000-abcdef");
    CHECK(plan->n_guests == 9);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    g_autoptr(GHashTable) nebula = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t i = 0; i < plan->n_guests; i++) {
        const struct ml_plan_guest *g = &plan->guests[i];
        CHECK(strlen(g->tap) <= 15);
        CHECK(g_hash_table_add(seen, (gpointer)g->mac));
        CHECK(g_hash_table_add(seen, (gpointer)g->tap));
        CHECK(g_hash_table_add(seen, g->domain));
        CHECK(g_hash_table_add(seen, g->overlay_vol));
        struct in_addr a = ml_nebula_address(t, i);
        CHECK(g_hash_table_add(nebula, GUINT_TO_POINTER(a.s_addr)));
    }
    CHECK_STR(plan->guests[8].domain, "meshlab-wide.c8");
    CHECK(g_str_has_suffix(plan->guests[8].mac, ":08"));

    /* The hub's WireGuard configuration has every client as a peer, each with its own key. */
    char *keys[ML_MAX_NODES] = {0};
    for (size_t i = 0; i < t->n_nodes; i++)
        keys[i] = g_strdup_printf("KEY%zu%040zu=", i, i);
    g_autofree char *hub = ml_wg_render_hub(t, (const char *const *)keys);
    CHECK(count_of(hub, "[Peer]") == 8);
    for (size_t i = 1; i < t->n_nodes; i++) {
        char addr[16];
        g_autofree char *peer =
            g_strdup_printf("# c%zu\nPublicKey = %s\nAllowedIPs = %s/32\n", i, keys[i],
                            ml_ip_str(t->nodes[i].tunnel_address, addr));
        CHECK(strstr(hub, peer) != NULL);
        g_autofree char *client = ml_wg_render_client(t, i, keys[0]);
        CHECK(strstr(client, "Endpoint = 192.0.2.10:51820") != NULL);
        g_autofree char *own = g_strdup_printf("Address = %s/32", addr);
        CHECK(strstr(client, own) != NULL);
    }
    for (size_t i = 0; i < t->n_nodes; i++)
        g_free(keys[i]);

    /* nebula: the hub is the lighthouse of all; each client's config names itself. */
    for (size_t i = 0; i < t->n_nodes; i++) {
        g_autofree char *conf = ml_nebula_config(t, i, "ssh-ed25519 AAAAadmin meshlab");
        g_autofree char *who = g_strdup_printf("nebula on %s\n", t->nodes[i].name);
        CHECK(conf && strstr(conf, who) != NULL);
        CHECK(strstr(conf, i == 0 ? "am_lighthouse: true" : "am_lighthouse: false") != NULL);
    }
    struct ml_port ports[ML_PORTS_MAX];
    size_t n_ports = ml_dataplane_ports(t, ports);
    g_autofree char *fw = ml_nft_firewall(ports, n_ports);
    CHECK(fw != NULL);

    /* Each guest's seed carries its own address and MAC. */
    for (size_t i = 0; i < plan->n_guests; i++) {
        struct ml_seed seed = {0};
        CHECK(ml_seed_render(plan, i, &seed, &err));
        char addr[16];
        g_autofree char *cidr = g_strdup_printf("- %s/24\n", ml_ip_str(t->nodes[i].address, addr));
        CHECK(seed.network_config && strstr(seed.network_config, cidr) != NULL);
        CHECK(seed.network_config && strstr(seed.network_config, plan->guests[i].mac) != NULL);
        ml_seed_clear(&seed);
        g_clear_error(&err);
    }

    /* The shipped hub with six clients. */
    g_autoptr(MlTopology) six = ml_topology_load("topologies/hub-n-clients.yaml", &err);
    CHECK(six && six->n_nodes == 7 && six->nodes[6].memory_mib == 512);
    CHECK(six && ml_topology_profile(six, "quick") != NULL);
    g_clear_error(&err);

    /* A 10th node is refused at that node, with the limit and its reason. */
    g_autofree char *ten = hub_and_clients(9);
    CHECK(parse(ten, &err) == NULL);
    CHECK(err && err->code == ML_ERR_INPUT);
    CHECK(err && g_str_has_prefix(err->message, "inline.yaml:37:5: nodes lists 10 nodes; a lab "
                                                "has one hub and at most 8 clients (9 nodes), "));
    CHECK(err && strstr(err->message, "TCG") && strstr(err->message, "2 cores"));
}

/* The agent's cap, as found in the sources the lab runs: qemu-ga 7.2 keeps 16 MiB of a stream
 * (GUEST_EXEC_MAX_OUTPUT, qga/commands.c); libvirt 9.0 reads an agent reply up to 10 MiB
 * (QEMU_AGENT_MAX_RESPONSE, src/qemu/qemu_agent.c) and hands it to its client as one string of
 * at most REMOTE_STRING_MAX = 4194304 bytes (src/remote/remote_protocol.x), the cap that binds:
 * base64 makes that 3 MiB of output, less the reply's wrapping. */
static void test_output_caps(void)
{
    CHECK(ML_AGENT_REPLY_MAX == 4194304);
    CHECK(ML_GUEST_OUTPUT_MAX == 3142656);
    CHECK(ML_GUEST_OUTPUT_MAX / 3 * 4 + 4096 <= ML_AGENT_REPLY_MAX);

    /* The estimate covers each real iperf3 -J output in the samples (2 s passes). */
    static const struct {
        const char *file;
        struct ml_cell cell;
    } samples[] = {
        {"tests/data/samples/iperf3-loopback-2s.json",
         {.name = "forward-1",
          .direction = ML_DIR_FORWARD,
          .streams = 1,
          .passes = 1,
          .fixed_rate = false}},
        {"tests/data/samples/iperf3/forward-1-fixed.json",
         {.name = "forward-1-fixed",
          .direction = ML_DIR_FORWARD,
          .streams = 1,
          .passes = 1,
          .fixed_rate = true}},
        {"tests/data/samples/iperf3/reverse-1.json",
         {.name = "reverse-1",
          .direction = ML_DIR_REVERSE,
          .streams = 1,
          .passes = 1,
          .fixed_rate = false}},
        {"tests/data/samples/iperf3/bidir-2.json",
         {.name = "bidir-2",
          .direction = ML_DIR_BIDIR,
          .streams = 2,
          .passes = 1,
          .fixed_rate = false}},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(samples); i++) {
        g_autofree char *text = NULL;
        gsize len = 0;
        CHECK(g_file_get_contents(samples[i].file, &text, &len, NULL));
        size_t estimate = ml_iperf_json_bytes(&samples[i].cell, 2);
        CHECK(estimate >= len && estimate < 2 * len);
        if (estimate < len)
            fprintf(stderr, "%s: %zu bytes, estimated %zu\n", samples[i].file, (size_t)len,
                    estimate);
    }
    /* The ping lines of the samples fit the estimate too. */
    g_autofree char *ping = NULL;
    gsize ping_len = 0;
    CHECK(g_file_get_contents("tests/data/samples/ping-loopback-duplicates.txt", &ping, &ping_len,
                              NULL));
    g_auto(GStrv) lines = g_strsplit(ping ? ping : "", "\n", -1);
    CHECK(ml_ping_text_bytes(g_strv_length(lines)) >= ping_len);

    /* Each limit holds at its edge: the largest value passes, one more is refused. */
    static const struct {
        const char *profile;
        bool ok;
    } edges[] = {
        /* A pass with a warm-up carries the server's document too (--get-server-output for
         * its count of the warm-up), twice the bytes. */
        {"    full: {pass_s: 27, passes: 1, ping_count: 1, matrix: [forward-128]}\n", true},
        {"    full: {pass_s: 28, passes: 1, ping_count: 1, matrix: [forward-128]}\n", false},
        {"    full: {pass_s: 600, passes: 1, ping_count: 1, matrix: [forward-5]}\n", true},
        {"    full: {pass_s: 600, passes: 1, ping_count: 1, matrix: [forward-6]}\n", false},
        {"    full: {pass_s: 600, passes: 1, ping_count: 1, matrix: [bidir-2, reverse-5]}\n", true},
        {"    full: {pass_s: 600, passes: 1, ping_count: 1, matrix: [bidir-3]}\n", false},
        {"    full: {pass_s: 600, passes: 1, ping_count: 1, matrix: [reverse-6]}\n", false},
        {"    full: {pass_s: 78, passes: 1, ping_count: 1, ping_interval_s: 0.002}\n", true},
        {"    full: {pass_s: 79, passes: 1, ping_count: 1, ping_interval_s: 0.002}\n", false},
        {"    full: {pass_s: 600, passes: 1, ping_count: 1, ping_interval_s: 0.016}\n", true},
        {"    full: {pass_s: 600, passes: 1, ping_count: 1, ping_interval_s: 0.015}\n", false},
        /* The defaults never reach the cap: 20 Hz for 600 s, one stream. */
        {"    full: {pass_s: 600, passes: 1, ping_count: 1000}\n", true},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(edges); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = parse_profiles(edges[i].profile, &err);
        CHECK((t != NULL) == edges[i].ok);
        if ((t != NULL) != edges[i].ok)
            fprintf(stderr, "edge %zu: %s\n", i, err ? err->message : "accepted");
    }
}

/* Decimal bounds are exact: as written, any number of digits, either side of the bound. */
static void test_exact_decimals(void)
{
    static const struct {
        const char *key, *value;
        bool ok;
    } cases[] = {
        {"ping_interval_s", "0.002", true},
        {"ping_interval_s", "0.00200000000000000000001", true},
        {"ping_interval_s", "0.0019999999999999999", false},
        {"ping_interval_s", "0000.002", true},
        {"ping_interval_s", "10", true},
        {"ping_interval_s", "10.000000000000000000000", true},
        {"ping_interval_s", "10.00000000000000000001", false},
        {"ping_interval_s", "9.99999999999999999999", true},
        {"fixed_rate_fraction", "1", true},
        {"fixed_rate_fraction", "1.00000000000000000000", true},
        {"fixed_rate_fraction", "1.00000000000000000001", false},
        {"fixed_rate_fraction", "0.00000000000000000001", true},
        {"fixed_rate_fraction", "0.0", false},
        {"fixed_rate_fraction", "01", true},
        {"fixed_rate_fraction", "10", false},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *profile = g_strdup_printf(FULL "%s: %s}\n", cases[i].key, cases[i].value);
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = parse_profiles(profile, &err);
        CHECK((t != NULL) == cases[i].ok);
        if ((t != NULL) != cases[i].ok)
            fprintf(stderr, "%s %s: %s\n", cases[i].key, cases[i].value,
                    err ? err->message : "accepted");
    }
}

/* A tag gives a value a type the checks do not read; a directive declares tags or a version.
 * Both are refused where they are written, before a document is built. */
static void test_yaml_tags(void)
{
    static const struct {
        const char *from, *to, *want;
    } cases[] = {
        {"listen_port: 51820", "listen_port: !!str 51820",
         "t.yaml:33:16: YAML tags ('!!str') are not allowed in a topology; remove the tag and "
         "write the value plainly"},
        {"listen_port: 51820", "listen_port: !!int 51820", "t.yaml:33:16: YAML tags ('!!int')"},
        {"listen_port: 51820", "listen_port: ! 51820", "t.yaml:33:16: YAML tags ('!')"},
        {"listen_port: 51820", "listen_port: !<tag:yaml.org,2002:int> 51820",
         "t.yaml:33:16: YAML tags ('!<tag:yaml.org,2002:int>')"},
        {"name: three-guest", "!x name: three-guest", "t.yaml:10:1: YAML tags ('!x')"},
        {"wireguard:\n", "wireguard: !!map\n", "t.yaml:31:12: YAML tags ('!!map')"},
        {"name: three-guest", "%TAG !e! tag:example.com,2000:\n---\nname: three-guest",
         "t.yaml:10:1: YAML directives ('%TAG') are not allowed in a topology; remove the line"},
        {"name: three-guest", "%YAML 1.1\n---\nname: three-guest",
         "t.yaml:10:1: YAML directives ('%YAML')"},
    };
    g_autofree char *seed = NULL;
    CHECK(g_file_get_contents("topologies/three-guest.yaml", &seed, NULL, NULL));
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GString) yaml = g_string_new(seed);
        CHECK(g_string_replace(yaml, cases[i].from, cases[i].to, 1) == 1);
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = ml_topology_parse("t.yaml", yaml->str, yaml->len, &err);
        CHECK(t == NULL);
        CHECK(err && g_str_has_prefix(err->message, cases[i].want));
        if (err && !g_str_has_prefix(err->message, cases[i].want))
            fprintf(stderr, "case %zu: %s\n", i, err->message);
    }
}

/* A FIFO, a device or a directory given as the topology is refused at once: opening a FIFO
 * with no writer blocks, and the alarm ends the test if it does. */
static void test_special_files(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("meshlab-topo-XXXXXX", &err);
    CHECK(dir != NULL);
    if (!dir)
        return;
    g_autofree char *fifo = g_build_filename(dir, "lab.yaml", NULL);
    CHECK(mkfifo(fifo, 0600) == 0);
    static const struct {
        const char *kind;
    } kinds[] = {{"a FIFO"}, {"a character device"}, {"a directory"}};
    const char *paths[] = {fifo, "/dev/null", dir};
    alarm(10);
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
        g_clear_error(&err);
        CHECK(ml_topology_load(paths[i], &err) == NULL);
        g_autofree char *want = g_strdup_printf(
            "%s: the topology is %s, not a regular file; give the path of a topology file",
            paths[i], kinds[i].kind);
        CHECK(err && err->code == ML_ERR_INPUT);
        CHECK_STR(err ? err->message : NULL, want);
    }
    alarm(0);
    unlink(fifo);
    rmdir(dir);
}

/* A lab on bridge A.B.C.0/24, with nodes .1 .. .3 and paths. */
static char *lab_on(const char *abc, const char *wg, const char *paths)
{
    return g_strdup_printf("name: r\n"
                           "image: {use: debian-12}\n"
                           "bridge: {subnet: %1$s.0/24}\n"
                           "nodes:\n"
                           "  - {name: h, address: %1$s.1, tunnel_address: %2$s.1}\n"
                           "  - {name: a, address: %1$s.2, tunnel_address: %2$s.2}\n"
                           "  - {name: b, address: %1$s.3, tunnel_address: %2$s.3}\n"
                           "hub: h\n"
                           "wireguard: {subnet: %2$s.0/24}\n"
                           "measure: {client: a, server: b, paths: [%3$s]}\n",
                           abc, wg, paths);
}

/* Reserved ranges are refused for both subnets, and the ranges beside them are not. */
static void test_reserved_subnets(void)
{
    static const struct {
        const char *lab, *wg, *range; /* range: NULL when valid */
    } cases[] = {
        {"127.0.0", "10.8.0", "the loopback range 127.0.0.0/8"},
        {"126.255.255", "10.8.0", NULL},
        {"128.0.0", "10.8.0", NULL},
        {"0.0.1", "10.8.0", "'this network' 0.0.0.0/8"},
        {"1.0.0", "10.8.0", NULL},
        {"224.0.0", "10.8.0", "the multicast range 224.0.0.0/4"},
        {"239.255.255", "10.8.0", "the multicast range 224.0.0.0/4"},
        {"223.255.255", "10.8.0", NULL},
        {"240.0.0", "10.8.0", "the reserved range 240.0.0.0/4"},
        {"255.255.255", "10.8.0", "the reserved range 240.0.0.0/4"},
        {"192.0.2", "127.8.0", "the loopback range"},
        {"192.0.2", "230.8.0", "the multicast range"},
        {"192.0.2", "0.8.0", "'this network'"},
        {"192.0.2", "255.8.0", "the reserved range"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = lab_on(cases[i].lab, cases[i].wg, "plain");
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = parse(text, &err);
        CHECK((t != NULL) == (cases[i].range == NULL));
        if (!cases[i].range)
            continue;
        bool lab = strcmp(cases[i].lab, "192.0.2") != 0;
        g_autofree char *want =
            g_strdup_printf("inline.yaml:%s: %s %s.0/24 is inside %s", lab ? "3:18" : "9:21",
                            lab ? "bridge.subnet" : "wireguard.subnet",
                            lab ? cases[i].lab : cases[i].wg, cases[i].range);
        CHECK(err && g_str_has_prefix(err->message, want));
        if (err && !g_str_has_prefix(err->message, want))
            fprintf(stderr, "want %s\n got %s\n", want, err->message);
    }
}

/* The addresses the dataplanes derive: Tailscale's 100.64.0.0/10 only with a tailscale path;
 * wireguard-direct numbers only the two clients, wireguard-go-hub every node. */
static void test_derived_addresses(void)
{
    static const struct {
        const char *lab, *wg, *paths, *want; /* want: NULL when valid */
    } cases[] = {
        {"100.64.2", "10.8.0", "plain, wireguard-hub", NULL},
        {"100.64.2", "10.8.0", "plain, tailscale-relay",
         "inline.yaml:3:18: the tailscale paths use the overlay 100.64.0.0/10, which overlaps "
         "the lab subnet 100.64.2.0/24; move that subnet elsewhere"},
        {"100.128.0", "10.8.0", "tailscale-direct", NULL},
        {"192.0.2", "100.127.255", "tailscale-direct",
         "inline.yaml:9:21: the tailscale paths use the overlay 100.64.0.0/10, which overlaps "
         "wireguard.subnet 100.127.255.0/24; move that subnet elsewhere"},
        {"10.10.0", "10.8.0", "wireguard-go-hub",
         "inline.yaml:3:18: the wireguard-go-hub path uses the overlay 10.10.0.0/24, which "
         "overlaps the lab subnet 10.10.0.0/24; move that subnet elsewhere"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = lab_on(cases[i].lab, cases[i].wg, cases[i].paths);
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = parse(text, &err);
        CHECK(t != NULL);
        CHECK((t && ml_paths_resolve(t, &err)) == (cases[i].want == NULL));
        if (cases[i].want)
            CHECK_STR(err ? err->message : NULL, cases[i].want);
    }

    /* Tunnel addresses in a /16: the hub's .7 is no clash for wireguard-direct, which leaves
     * the hub out, but is one for wireguard-go-hub. */
    static const char wide[] = "name: w\n"
                               "image: {use: debian-12}\n"
                               "bridge: {subnet: 192.0.2.0/24}\n"
                               "nodes:\n"
                               "  - {name: h, address: 192.0.2.1, tunnel_address: 10.8.3.7}\n"
                               "  - {name: a, address: 192.0.2.2, tunnel_address: 10.8.1.7}\n"
                               "  - {name: b, address: 192.0.2.3, tunnel_address: 10.8.2.8}\n"
                               "hub: h\n"
                               "wireguard: {subnet: 10.8.0.0/16}\n"
                               "measure: {client: a, server: b, paths: [%s]}\n";
    static const struct {
        const char *paths, *want;
    } wides[] = {
        {"wireguard-direct", NULL},
        {"wireguard-go-hub",
         "inline.yaml:6:51: node 'a': tunnel_address 10.8.1.7 ends in .7 like node 'h''s "
         "10.8.3.7 (line 5), and the wireguard-go-hub path numbers its nodes 10.10.0.<last octet "
         "of tunnel_address>: both would be 10.10.0.7; give one of them another last octet"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(wides); i++) {
        g_autofree char *text = g_strdup_printf(wide, wides[i].paths);
        g_autoptr(GError) err = NULL;
        g_autoptr(MlTopology) t = parse(text, &err);
        CHECK(t != NULL);
        CHECK((t && ml_paths_resolve(t, &err)) == (wides[i].want == NULL));
        if (wides[i].want)
            CHECK_STR(err ? err->message : NULL, wides[i].want);
    }
}

int main(void)
{
    test_seed();
    test_dataplanes();
    test_path_names();
    test_minimal();
    test_defaults_and_overrides();
    test_limits();
    test_bad_inputs();
    test_list_limits();
    test_hub_key();
    test_many_anchors();
    test_listen_port();
    test_profile_grammar();
    test_profile_limits();
    test_profile_errors();
    test_nat_types();
    test_nat_good();
    test_vps_workload();
    test_wan_profiles();
    test_wan_sweep();
    test_nat_errors();
    test_nat_lesson();
    test_hub_and_eight_clients();
    test_output_caps();
    test_exact_decimals();
    test_yaml_tags();
    test_special_files();
    test_reserved_subnets();
    test_derived_addresses();
    return check_finish();
}
