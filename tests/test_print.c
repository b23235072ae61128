/* `meshlab status --json` and `meshlab check --json` print one JSON document
 * that json-c parses, with the fields the text form shows; and the text form is
 * rendered from that same document. */
#include "check.h"
#include "fixtures.h"

#include <json-c/json.h>
#include <libvirt/libvirt.h>
#include <unistd.h>

#include "cache/pins.h"
#include "cli/commands.h"
#include "cli/print.h"
#include "core/util.h"
#include "results/json.h"
#include "topology/plan.h"
#include "topology/topology.h"
#include "virt/virt.h"
#include "virt/virt_xml.h"

static char **env;

/* Runs meshlab with args; returns its stdout parsed as exactly one JSON document, or NULL. */
static struct json_object *run_json(const char *const *args, int *ret_status)
{
    const char *bin = g_getenv("MESHLAB_BIN");
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (char *)bin);
    for (size_t i = 0; args[i]; i++)
        g_ptr_array_add(argv, (char *)args[i]);
    g_ptr_array_add(argv, NULL);
    g_autofree char *out = NULL, *err = NULL;
    int wait = 0;
    g_autoptr(GError) gerr = NULL;
    if (!g_spawn_sync(NULL, (char **)argv->pdata, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                      &wait, &gerr)) {
        fprintf(stderr, "cannot run %s: %s\n", bin, gerr->message);
        return NULL;
    }
    *ret_status = WIFEXITED(wait) ? WEXITSTATUS(wait) : -1;
    json_tokener *tok = json_tokener_new();
    struct json_object *doc = json_tokener_parse_ex(tok, out, (int)strlen(out));
    size_t used = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    /* Nothing but the document (and its newline) on stdout. */
    if (!doc || strspn(out + used, " \n") != strlen(out + used)) {
        fprintf(stderr, "not one JSON document:\n%s\nstderr:\n%s\n", out, err);
        json_object_put(doc);
        return NULL;
    }
    return doc;
}

static bool is(struct json_object *o, const char *key, json_type type)
{
    struct json_object *v = NULL;
    bool ok = json_object_object_get_ex(o, key, &v) && json_object_is_type(v, type);
    if (!ok)
        fprintf(stderr, "\"%s\" is missing or not a %s in %s\n", key, json_type_to_name(type),
                json_object_to_json_string(o));
    return ok;
}

static void test_status_json(void)
{
    int rc = -1;
    const char *args[] = {"status", "--json", NULL};
    struct json_object *doc = run_json(args, &rc);
    CHECK(doc != NULL);
    CHECK(rc == 0);
    if (!doc)
        return;
    CHECK_STR(ml_j_str(doc, "uri"), "test:///default");
    /* A fresh test:///default holds no lab: the list is there, and empty. */
    CHECK(is(doc, "labs", json_type_array));
    CHECK(json_object_array_length(ml_j_get(doc, "labs")) == 0);
    json_object_put(doc);
}

static void test_check_json(const char *cache)
{
    /* An image of an earlier recipe and a half-written file of a dead meshlab. */
    g_autofree char *stale = g_build_filename(cache, "debian-12-0000000000000000", NULL);
    g_mkdir_with_parents(stale, 0700);
    g_autofree char *left = g_build_filename(cache, "kvm-probe.json.tmp.4194301.AbC123", NULL);
    g_file_set_contents(left, "", 0, NULL);

    int rc = -1;
    const char *args[] = {"check", "--json", NULL};
    struct json_object *doc = run_json(args, &rc);
    CHECK(doc != NULL);
    if (!doc)
        return;
    CHECK(is(doc, "ok", json_type_boolean));
    CHECK(is(doc, "problems", json_type_array));
    bool ok = ml_j_bool(doc, "ok");
    CHECK(ok == (json_object_array_length(ml_j_get(doc, "problems")) == 0));
    CHECK(rc == (ok ? 0 : 1));

    struct json_object *lv = ml_j_get(doc, "libvirt");
    CHECK(ml_j_bool(lv, "ok"));
    CHECK_STR(ml_j_str(lv, "uri"), "test:///default");
    CHECK(lv && g_regex_match_simple("^[0-9]+\\.[0-9]+\\.[0-9]+$", ml_j_str(lv, "version"), 0, 0));
    CHECK(is(doc, "qemu", json_type_object) && is(ml_j_get(doc, "qemu"), "ok", json_type_boolean));

    /* MESHLAB_ACCEL=tcg decides without a probe. */
    struct json_object *acc = ml_j_get(doc, "accelerator");
    CHECK(is(acc, "kvm", json_type_boolean) && !ml_j_bool(acc, "kvm"));
    CHECK_STR(ml_j_str(acc, "reason"), "MESHLAB_ACCEL=tcg");
    CHECK_STR(ml_j_str(acc, "source"), "none");

    struct json_object *tools = ml_j_get(doc, "tools");
    CHECK(is(doc, "tools", json_type_array) && json_object_array_length(tools) == 6);
    bool seen_gpgv = false;
    for (size_t i = 0; tools && i < json_object_array_length(tools); i++) {
        struct json_object *t = json_object_array_get_idx(tools, i);
        CHECK(is(t, "name", json_type_string) && is(t, "ok", json_type_boolean));
        g_autofree char *path = g_find_program_in_path(ml_j_str(t, "name"));
        CHECK(ml_j_bool(t, "ok") == (path != NULL));
        CHECK(g_strcmp0(ml_j_str(t, "path"), path) == 0);
        seen_gpgv |= !g_strcmp0(ml_j_str(t, "name"), "gpgv");
    }
    CHECK(seen_gpgv);

    struct json_object *disk = ml_j_get(doc, "disk");
    CHECK(is(disk, "free_bytes", json_type_int) && ml_j_int(disk, "free_bytes") > 0);
    CHECK_STR(ml_j_str(disk, "cache_dir"), cache);
    CHECK(ml_j_bool(disk, "ok") == (ml_j_int(disk, "free_bytes") > 4LL << 30));
    struct json_object *mem = ml_j_get(doc, "memory");
    CHECK(is(mem, "available_bytes", json_type_int) && is(mem, "ok", json_type_boolean));

    struct json_object *img = ml_j_get(doc, "image_cache");
    CHECK(img && g_str_has_prefix(ml_j_str(img, "name"), "debian-12-"));
    CHECK(is(img, "cached", json_type_boolean) && !ml_j_bool(img, "cached"));
    struct json_object *st = ml_j_get(img, "stale");
    CHECK(st && json_object_array_length(st) == 1);
    if (st && json_object_array_length(st) == 1)
        CHECK_STR(json_object_get_string(json_object_array_get_idx(st, 0)), stale);

    struct json_object *art = ml_j_get(doc, "artifacts");
    CHECK(is(art, "cached", json_type_boolean) && !ml_j_bool(art, "cached"));
    CHECK(is(art, "missing", json_type_array) &&
          json_object_array_length(ml_j_get(art, "missing")) > 0);
    /* What each dataplane needs fetched comes from its descriptor: Tailscale's two programs. */
    struct json_object *dps = ml_j_get(art, "dataplanes");
    CHECK(is(art, "dataplanes", json_type_array) && ml_j_len(dps) == 1);
    struct json_object *ts = json_object_array_get_idx(dps, 0);
    struct json_object *fetched = ml_j_get(ts, "fetched");
    CHECK(ts && !g_strcmp0(ml_j_str(ts, "name"), "tailscale") && ml_j_len(fetched) == 2 &&
          is(ts, "cached", json_type_boolean) && !ml_j_bool(ts, "cached"));
    if (ml_j_len(fetched) == 2)
        CHECK(
            !g_strcmp0(json_object_get_string(json_object_array_get_idx(fetched, 0)),
                       "tailscale") &&
            !g_strcmp0(json_object_get_string(json_object_array_get_idx(fetched, 1)), "headscale"));
    CHECK(!g_strcmp0(ml_j_str(art, "tailscale"), ML_TAILSCALE_VERSION) &&
          !g_strcmp0(ml_j_str(art, "headscale"), ML_HEADSCALE_VERSION));

    struct json_object *lo = ml_j_get(doc, "leftovers");
    CHECK(is(doc, "leftovers", json_type_array) && json_object_array_length(lo) == 1);
    if (lo && json_object_array_length(lo) == 1)
        CHECK_STR(json_object_get_string(json_object_array_get_idx(lo, 0)), left);
    json_object_put(doc);
    unlink(left);
}

/* A libvirt that cannot be reached: check says so, with advice, and exits 1. */
static void test_check_json_fails(void)
{
    char **saved = env;
    env = g_environ_setenv(g_strdupv(saved), "MESHLAB_URI", "test:///no/such/file.xml", TRUE);
    int rc = -1;
    const char *args[] = {"check", "--json", NULL};
    struct json_object *doc = run_json(args, &rc);
    g_strfreev(env);
    env = saved;
    CHECK(doc != NULL);
    if (!doc)
        return;
    CHECK(rc == 1);
    CHECK(is(doc, "ok", json_type_boolean) && !ml_j_bool(doc, "ok"));
    struct json_object *lv = ml_j_get(doc, "libvirt");
    CHECK(!ml_j_bool(lv, "ok"));
    CHECK(is(lv, "error", json_type_string) && is(lv, "advice", json_type_string));
    struct json_object *problems = ml_j_get(doc, "problems");
    CHECK(problems && json_object_array_length(problems) >= 1);
    if (problems && json_object_array_length(problems) >= 1)
        CHECK_STR(json_object_get_string(json_object_array_get_idx(problems, 0)), "libvirt");
    json_object_put(doc);
}

static char *render(cmd_text_fn text, struct json_object *doc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cmd_print(f, CMD_TEXT, doc, text);
    fclose(f);
    return buf;
}

/* The text of check comes from the document alone: a recorded one renders to the golden text. */
static void test_check_text(void)
{
    struct json_object *doc = json_object_from_file("tests/data/check.json");
    CHECK(doc != NULL);
    if (!doc)
        return;
    g_autofree char *text = render(cmd_check_text, doc);
    check_golden("check.txt", text);
    json_object_put(doc);
}

/* A lab over two hosts, its "there" host's share defined in the test driver: status names that
 * host's network and pool (meshlab-LAB.HOST), and the hosts its state records with their nodes;
 * ml_virt_list_labs finds the lab by those names; teardown removes them. */
static void test_status_hosts(const char *state)
{
    g_autoptr(GError) err = NULL;
    /* The e2e test's topology, its SSH host's placeholder filled as e2e_hosts.sh fills it. */
    g_autofree char *yaml = NULL;
    CHECK(g_file_get_contents("tests/data/e2e-hosts.yaml", &yaml, NULL, NULL));
    g_auto(GStrv) parts = g_strsplit(yaml ? yaml : "", "@SSH_URI@", -1);
    g_autofree char *filled = g_strjoinv("qemu+ssh://root@127.0.0.1:2222/system", parts);
    g_autofree char *path = g_build_filename(state, "e2e-hosts.yaml", NULL);
    CHECK(g_file_set_contents(path, filled, -1, NULL));
    g_autoptr(MlTopology) topo = ml_topology_load(path, &err);
    CHECK(topo != NULL && topo->n_hosts == 2);
    if (!topo)
        return;
    g_autoptr(MlPlan) plan = ml_plan_new(topo, "20261204-050000-abcdef");
    virConnectPtr conn = ml_virt_connect("test:///default", &err);
    CHECK(conn != NULL);
    if (!conn)
        return;
    CHECK(ml_virt_define_network(conn, &plan->hosts[1], 1450, &err));
    CHECK(ml_virt_define_pool(conn, &plan->hosts[1], &err));
    g_autoptr(GPtrArray) found = ml_virt_list_labs(conn);
    CHECK(found->len == 1 && !strcmp(g_ptr_array_index(found, 0), "e2e-hosts"));
    g_autofree char *labs = g_build_filename(state, "labs", NULL);
    g_mkdir_with_parents(labs, 0700);
    g_autofree char *file = g_build_filename(labs, "e2e-hosts.json", NULL);
    g_file_set_contents(file,
                        "{\"run_id\": \"r\", \"hosts\": [{\"name\": \"here\", \"uri\": "
                        "\"qemu:///system\", \"nodes\": [\"hub\"]}, {\"name\": \"there\", \"uri\": "
                        "\"qemu+ssh://root@h:2222/system?keyfile=/k\", \"nodes\": [\"client-a\", "
                        "\"client-b\"]}]}",
                        -1, NULL);
    struct json_object *doc = cmd_status_collect(conn, "test:///default");
    struct json_object *list = ml_j_get(doc, "labs");
    struct json_object *lab = ml_j_len(list) == 1 ? json_object_array_get_idx(list, 0) : NULL;
    CHECK_STR(ml_j_str(lab, "name"), "e2e-hosts");
    CHECK_STR(ml_j_str(ml_j_get(lab, "network"), "name"), "meshlab-e2e-hosts.there");
    CHECK_STR(ml_j_str(ml_j_get(lab, "pool"), "name"), "meshlab-e2e-hosts.there");
    struct json_object *hosts = ml_j_get(lab, "hosts");
    CHECK(ml_j_len(hosts) == 2);
    struct json_object *there = ml_j_len(hosts) == 2 ? json_object_array_get_idx(hosts, 1) : NULL;
    CHECK_STR(ml_j_str(there, "uri"), "qemu+ssh://root@h:2222/system");
    CHECK_STR(ml_j_str(there, "nodes"), "client-a, client-b");
    g_autofree char *text = render(cmd_status_text, doc);
    CHECK(strstr(text, "  host    there        qemu+ssh://root@h:2222/system") != NULL);
    CHECK(strstr(text, "client-a, client-b\n") != NULL);
    CHECK(strstr(text, "keyfile") == NULL);
    json_object_put(doc);
    CHECK(ml_virt_teardown(conn, "e2e-hosts", NULL, NULL, NULL) == 2);
    g_autoptr(GPtrArray) after = ml_virt_list_labs(conn);
    CHECK(after->len == 0);
    unlink(file);
    virConnectClose(conn);
}

/* status in process, against a lab defined in the test driver: the document
 * lists its domains, network, pool and run, and the text shows the same. */
static void test_status_lab(const char *state)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(MlTopology) topo = ml_topology_load("topologies/three-guest.yaml", &err);
    CHECK(topo != NULL);
    if (!topo)
        return;
    g_autoptr(MlPlan) plan = ml_plan_new(topo, "20261130-050000-abcdef");
    virConnectPtr conn = ml_virt_connect("test:///default", &err);
    CHECK(conn != NULL);
    if (!conn)
        return;
    CHECK(ml_virt_define_network(conn, &plan->hosts[0], 0, &err));
    CHECK(ml_virt_define_pool(conn, &plan->hosts[0], &err));
    g_autofree char *xml = fixture_test_domain_xml(plan, 0);
    virDomainPtr d = ml_virt_define_domain(conn, plan->guests[0].domain, xml, &err);
    CHECK(d != NULL);
    if (d)
        virDomainFree(d);
    g_autofree char *labs = g_build_filename(state, "labs", NULL);
    g_mkdir_with_parents(labs, 0700);
    g_autofree char *file = g_build_filename(labs, "three-guest.json", NULL);
    g_file_set_contents(
        file, "{\"run_id\": \"20261130-050000-abcdef\", \"run_dir\": \"/tmp/run-x\"}", -1, NULL);

    struct json_object *doc = cmd_status_collect(conn, "test:///default");
    struct json_object *list = ml_j_get(doc, "labs");
    CHECK(list && json_object_array_length(list) == 1);
    struct json_object *lab = list ? json_object_array_get_idx(list, 0) : NULL;
    CHECK_STR(ml_j_str(lab, "name"), "three-guest");
    CHECK_STR(ml_j_str(lab, "run_id"), "20261130-050000-abcdef");
    CHECK_STR(ml_j_str(lab, "run_dir"), "/tmp/run-x");
    struct json_object *net = ml_j_get(lab, "network");
    g_autofree char *net_name = ml_plan_network_name("three-guest");
    CHECK_STR(ml_j_str(net, "name"), net_name);
    CHECK(is(net, "active", json_type_boolean));
    struct json_object *pool = ml_j_get(lab, "pool");
    g_autofree char *pool_name = ml_plan_pool_name("three-guest");
    CHECK_STR(ml_j_str(pool, "name"), pool_name);
    CHECK(is(pool, "volumes", json_type_int));
    struct json_object *doms = ml_j_get(lab, "domains");
    CHECK(is(lab, "domains", json_type_array) && json_object_array_length(doms) == 1);
    struct json_object *dom = doms ? json_object_array_get_idx(doms, 0) : NULL;
    CHECK_STR(ml_j_str(dom, "name"), plan->guests[0].domain);
    CHECK_STR(ml_j_str(dom, "state"), "shut off");

    g_autofree char *text = render(cmd_status_text, doc);
    g_autofree char *head =
        g_strdup_printf("lab three-guest  run 20261130-050000-abcdef  dir /tmp/run-x\n");
    CHECK(g_str_has_prefix(text, head));
    g_autofree char *net_line = g_strdup_printf("  network %-32s %s\n", net_name,
                                                ml_j_bool(net, "active") ? "active" : "inactive");
    CHECK(strstr(text, net_line) != NULL);
    g_autofree char *dom_line =
        g_strdup_printf("  domain  %-32s shut off\n", plan->guests[0].domain);
    CHECK(strstr(text, dom_line) != NULL);
    json_object_put(doc);
    ml_virt_teardown(conn, "three-guest", NULL, NULL, NULL);
    virConnectClose(conn);
}

int main(void)
{
    if (!g_getenv("MESHLAB_BIN")) {
        printf("skipped: MESHLAB_BIN is not set\n");
        return 77;
    }
    g_autofree char *tmp = g_dir_make_tmp("meshlab-test-print-XXXXXX", NULL);
    g_autofree char *state = g_build_filename(tmp, "state", NULL);
    g_autofree char *cache = g_build_filename(tmp, "cache", NULL);
    g_mkdir_with_parents(cache, 0700);
    env = g_get_environ();
    env = g_environ_setenv(env, "MESHLAB_URI", "test:///default", TRUE);
    env = g_environ_setenv(env, "MESHLAB_STATE_DIR", state, TRUE);
    env = g_environ_setenv(env, "MESHLAB_CACHE_DIR", cache, TRUE);
    env = g_environ_setenv(env, "MESHLAB_ACCEL", "tcg", TRUE);
    env = g_environ_setenv(env, "TMPDIR", tmp, TRUE);
    g_setenv("MESHLAB_STATE_DIR", state, TRUE);

    test_status_json();
    test_check_json(cache);
    test_check_json_fails();
    test_check_text();
    test_status_lab(state);
    test_status_hosts(state);

    g_strfreev(env);
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp);
    return check_finish();
}
