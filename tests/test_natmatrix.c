/* The NAT matrix's judgement without guests: a repeat's outcome from the polls of nebula's
 * view (real print-tunnel output, tests/data/samples/nebula) and the check after them, a cell's
 * outcome from its repeats, what the guest's watch may print (anything: it never crashes the
 * judge), and the watch script itself run here on a real `tailscale status --json`.
 *
 * Not run here: the watch inside a guest, tailscaled, nebula and the matrix's cells (the e2e
 * test tests/e2e_nat.sh does that on a host with KVM and the artifacts); the policy the matrix
 * loads is checked as data only. */
#include "check.h"
#include "dataplanes/dataplane.h"
#include "measure/natmatrix.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static struct ml_topology *topo;

static char *sample(const char *rel)
{
    g_autofree char *path = g_build_filename("tests/data/samples", rel, NULL);
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        fprintf(stderr, "cannot read %s\n", path);
    return text;
}

/* What the watch prints: the polls of the view, the pings' output, no early end. */
static struct json_object *polls(const char *const *files, const double *t, size_t n)
{
    struct json_object *a = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        struct json_object *p = json_object_new_object();
        g_autofree char *out = sample(files[i]);
        json_object_object_add(p, "t", json_object_new_double(t[i]));
        json_object_object_add(p, "out", json_object_new_string(out ? out : ""));
        json_object_array_add(a, p);
    }
    struct json_object *w = json_object_new_object();
    json_object_object_add(w, "polls", a);
    json_object_object_add(w, "ping", json_object_new_string(""));
    json_object_object_add(w, "cut", NULL);
    return w;
}

static const char *str(struct json_object *o, const char *key)
{
    return json_object_get_string(json_object_object_get(o, key));
}

#define NONE "nebula/print-tunnel-none.txt"
#define RELAYED "nebula/print-tunnel-relayed.json"
#define DIRECT "nebula/print-tunnel-direct.json"

static void test_repeat(void)
{
    const struct ml_auto_ops *a = ml_path_find("nebula-auto")->dataplane->autop;
    /* No tunnel, then the relay, then the punched hole: direct after 2.6 s. */
    const char *const f1[] = {NONE, RELAYED, RELAYED, DIRECT, DIRECT};
    const double t1[] = {0.4, 1.1, 1.9, 2.6, 3.2};
    struct json_object *p = polls(f1, t1, 5), *rep = json_object_new_object();
    ml_nat_repeat_judge(topo, a, p, true, "direct", "ok", rep);
    CHECK_STR(str(rep, "outcome"), "direct");
    CHECK(fabs(json_object_get_double(json_object_object_get(rep, "seconds_to_direct")) - 2.6) <
          1e-9);
    struct json_object *tl = json_object_object_get(rep, "timeline");
    CHECK(json_object_array_length(tl) == 3); /* one entry per change */
    CHECK_STR(str(json_object_array_get_idx(tl, 1), "state"), "relay");
    CHECK_STR(str(json_object_array_get_idx(tl, 1), "relay"), "10.42.0.1");
    CHECK_STR(str(json_object_array_get_idx(tl, 2), "remote"), "192.0.2.12:4242");
    CHECK(json_object_is_type(json_object_object_get(rep, "reason"), json_type_null));
    json_object_put(p);
    json_object_put(rep);

    /* Relayed throughout: relay, never direct. */
    const char *const f2[] = {NONE, RELAYED, RELAYED};
    const double t2[] = {0.5, 5.0, 14.8};
    p = polls(f2, t2, 3);
    rep = json_object_new_object();
    ml_nat_repeat_judge(topo, a, p, true, "relay", "ok", rep);
    CHECK_STR(str(rep, "outcome"), "relay");
    CHECK(json_object_object_get(rep, "seconds_to_direct") == NULL);
    json_object_put(p);
    json_object_put(rep);

    /* The view said relayed but the hub's counters disagreed: failed, with the check's words. */
    p = polls(f2, t2, 3);
    rep = json_object_new_object();
    ml_nat_repeat_judge(topo, a, p, false, "relay", "hub NIC moved 90 bytes", rep);
    CHECK_STR(str(rep, "outcome"), "failed");
    CHECK(strstr(str(rep, "reason"), "hub NIC moved 90 bytes") != NULL);
    json_object_put(p);
    json_object_put(rep);

    /* Nothing ever: failed, the dataplane found no path. */
    const char *const f3[] = {NONE, NONE};
    const double t3[] = {0.5, 1.0};
    p = polls(f3, t3, 2);
    rep = json_object_new_object();
    ml_nat_repeat_judge(topo, a, p, true, "none", "ok", rep);
    CHECK_STR(str(rep, "outcome"), "failed");
    CHECK_STR(str(rep, "reason"), "the dataplane found no path");
    json_object_put(p);
    json_object_put(rep);
}

/* Whatever the guest's watch printed, the judge fails the repeat with why and never crashes
 * (json-c asserts on json_object_array_length of a non-array; a missing "ping" was strlen(NULL)
 * when its file was written). */
static void judge_text(const char *text, const char *why)
{
    const struct ml_auto_ops *a = ml_path_find("tailscale-auto")->dataplane->autop;
    struct json_object *w = json_tokener_parse(text), *rep = json_object_new_object();
    ml_nat_repeat_judge(topo, a, w, true, "direct", "ok", rep);
    CHECK_STR(str(rep, "outcome"), "failed");
    const char *reason = str(rep, "reason");
    if (!reason || !strstr(reason, why))
        fprintf(stderr, "%s: reason \"%s\", wanted \"%s\" in it\n", text,
                reason ? reason : "(null)", why);
    CHECK(reason && strstr(reason, "the NAT matrix's watch printed JSON meshlab cannot use") &&
          strstr(reason, why));
    CHECK(json_object_object_get(rep, "seconds_to_direct") == NULL);
    CHECK(json_object_array_length(json_object_object_get(rep, "timeline")) == 0);
    json_object_put(w);
    json_object_put(rep);
}

static void test_watch_json(void)
{
    judge_text("{\"polls\": {}}", "\"polls\" is missing or not a list");
    judge_text("{}", "\"polls\" is missing or not a list");
    judge_text("{\"polls\": null, \"ping\": \"\"}", "\"polls\" is missing or not a list");
    judge_text("[]", "not a JSON object");
    judge_text("\"polls\"", "not a JSON object");
    judge_text("null", "not a JSON object");
    judge_text("{\"polls\": []}", "\"ping\" (the pings' output) is missing or not text");
    judge_text("{\"polls\": [], \"ping\": 5}", "\"ping\" (the pings' output) is missing");
    judge_text("{\"polls\": [], \"ping\": null}", "\"ping\" (the pings' output) is missing");
    judge_text("{\"polls\": [1], \"ping\": \"\"}", "poll 1 is not");
    judge_text("{\"polls\": [{\"t\": 0.5, \"out\": \"\"}, {\"t\": \"1\", \"out\": \"x\"}], "
               "\"ping\": \"\"}",
               "poll 2 is not {\"t\": seconds, \"out\": text}");
    judge_text("{\"polls\": [{\"t\": 1, \"out\": 5}], \"ping\": \"\"}", "poll 1 is not");
    judge_text("{\"polls\": [{\"t\": -1, \"out\": \"\"}], \"ping\": \"\"}", "poll 1 is not");
    judge_text("{\"polls\": [{\"out\": \"\"}], \"ping\": \"\"}", "poll 1 is not");
    judge_text("{\"polls\": [], \"ping\": \"\", \"cut\": 3}", "\"cut\" is neither null nor text");

    /* Well formed but empty: judged on the check alone. */
    const struct ml_auto_ops *a = ml_path_find("tailscale-auto")->dataplane->autop;
    struct json_object *w = json_tokener_parse("{\"polls\": [], \"ping\": \"\"}"),
                       *rep = json_object_new_object();
    ml_nat_repeat_judge(topo, a, w, true, "relay", "ok", rep);
    CHECK_STR(str(rep, "outcome"), "relay");
    CHECK(json_object_object_get(rep, "reason") == NULL);
    json_object_put(w);
    json_object_put(rep);
}

/* A real `tailscale status --json` (1.102.4, 5,588 bytes, tests/data/samples/tailscale/README)
 * whose direct peer is renamed client-b, the topology's server: the view the matrix polls. */
static char *status_of_client_b(void)
{
    g_autofree char *path =
        g_build_filename("tests/data/samples/tailscale/status-1.102.4-windows.json", NULL);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return NULL;
    g_autoptr(GString) s = g_string_new(text);
    g_string_replace(s, "\"iphone-13.", "\"client-b.", 0);
    return g_string_free(g_steal_pointer(&s), FALSE);
}

/* Runs the watch script with python3 here: the view is `cat FILE`, and the prefix "echo"
 * makes its ping a printed command line, so nothing is sent (this host has no ping at all). */
static struct json_object *run_watch(const char *dir, const char *view_file, size_t budget)
{
    const struct ml_auto_ops *a = ml_path_find("tailscale-auto")->dataplane->autop;
    g_autofree char *script = g_build_filename(dir, "watch.py", NULL);
    CHECK(g_file_set_contents(script, ml_nat_watch_py, -1, NULL));
    g_autofree char *q_file = g_shell_quote(view_file), *q_script = g_shell_quote(script);
    g_autofree char *view = g_strdup_printf("cat %s", q_file);
    g_autofree char *cmd = ml_nat_watch_cmd("192.0.2.12", 5, a->direct_re, "echo", view, budget);
    g_autofree char *line = g_strdup_printf("%s < %s", cmd, q_script);
    const char *argv[] = {"sh", "-c", line, NULL};
    g_autofree char *out = NULL, *err = NULL;
    int status = -1;
    g_autoptr(GError) e = NULL;
    bool ran = g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err,
                            &status, &e);
    if (!ran || !g_spawn_check_wait_status(status, NULL))
        fprintf(stderr, "the watch did not run: %s %s\n", e ? e->message : "", err ? err : "");
    CHECK(ran && g_spawn_check_wait_status(status, NULL));
    return out ? json_tokener_parse(out) : NULL;
}

static void test_watch_script(void)
{
    const struct ml_auto_ops *a = ml_path_find("tailscale-auto")->dataplane->autop;
    g_autofree char *status = status_of_client_b();
    CHECK(status && strlen(status) > 4000); /* more than the old 4,000-character cut */
    g_autofree char *dir = g_dir_make_tmp("meshlab-natmatrix-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "status.json", NULL);
    CHECK(dir && status && g_file_set_contents(file, status, -1, NULL));

    struct json_object *w = run_watch(dir, file, ML_NAT_WATCH_BUDGET);
    struct json_object *ps = json_object_object_get(w, "polls");
    /* Direct twice in a row ends the window: two views, each the whole document. */
    CHECK(json_object_is_type(ps, json_type_array) && json_object_array_length(ps) == 2);
    for (size_t i = 0; i < json_object_array_length(ps); i++)
        CHECK_STR(str(json_object_array_get_idx(ps, i), "out"), status);
    CHECK(strstr(str(w, "ping"), "ping -n -D -i 0.2 -W 1 -w 7 192.0.2.12") != NULL);
    struct json_object *rep = json_object_new_object();
    ml_nat_repeat_judge(topo, a, w, true, "direct", "ok", rep);
    CHECK_STR(str(rep, "outcome"), "direct");
    struct json_object *std = json_object_object_get(rep, "seconds_to_direct");
    CHECK(json_object_is_type(std, json_type_double) && json_object_get_double(std) >= 0 &&
          json_object_get_double(std) < 5);
    struct json_object *tl = json_object_object_get(rep, "timeline");
    CHECK(json_object_array_length(tl) == 1);
    CHECK_STR(str(json_object_array_get_idx(tl, 0), "state"), "direct");
    CHECK_STR(str(json_object_array_get_idx(tl, 0), "remote"), "172.16.31.147:41641");
    CHECK(json_object_object_get(rep, "reason") == NULL);
    json_object_put(w);
    json_object_put(rep);

    /* Views that fill the budget end the watch early, whole, and the repeat says so. */
    w = run_watch(dir, file, strlen(status) * 3 / 2);
    CHECK(json_object_array_length(json_object_object_get(w, "polls")) == 1);
    rep = json_object_new_object();
    ml_nat_repeat_judge(topo, a, w, true, "direct", "ok", rep);
    CHECK_STR(str(rep, "outcome"), "direct");
    CHECK(json_object_object_get(rep, "seconds_to_direct") != NULL);
    CHECK(str(rep, "reason") && strstr(str(rep, "reason"), "the watch ended") &&
          strstr(str(rep, "reason"), "its views filled the"));
    json_object_put(w);
    json_object_put(rep);

    g_unlink(file);
    g_autofree char *script = g_build_filename(dir, "watch.py", NULL);
    g_unlink(script);
    g_rmdir(dir);
}

/* The matrix loads the direct policy first (no settle: each repeat starts afresh). */
static void test_policy(void)
{
    CHECK(ml_nat_matrix_policy.policy == ML_POLICY_DIRECT);
    CHECK(ml_nat_matrix_policy.settle == NULL);
    CHECK_STR(ml_nat_matrix_policy.name, "nat-matrix");
}

static struct json_object *cell(const char *const *outcomes, const double *to_direct, size_t n)
{
    struct json_object *c = json_object_new_object(), *reps = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        struct json_object *r = json_object_new_object();
        json_object_object_add(r, "outcome", json_object_new_string(outcomes[i]));
        json_object_object_add(r, "seconds_to_direct",
                               to_direct[i] >= 0 ? json_object_new_double(to_direct[i]) : NULL);
        json_object_object_add(r, "hub_bytes", json_object_new_int64(1000 * (int64_t)(i + 1)));
        json_object_object_add(r, "reason",
                               !strcmp(outcomes[i], "failed") ? json_object_new_string("no tunnel")
                                                              : NULL);
        json_object_array_add(reps, r);
    }
    json_object_object_add(c, "repeats", reps);
    ml_nat_cell_summarise(c);
    return c;
}

static int count(struct json_object *c, const char *k)
{
    return json_object_get_int(json_object_object_get(json_object_object_get(c, "outcomes"), k));
}

static void test_cell(void)
{
    const char *const race[] = {"direct", "relay", "direct"};
    const double race_t[] = {3.0, -1, 5.0};
    struct json_object *c = cell(race, race_t, 3);
    CHECK_STR(str(c, "outcome"), "direct");
    CHECK(count(c, "direct") == 2 && count(c, "relay") == 1 && count(c, "failed") == 0);
    CHECK(fabs(json_object_get_double(json_object_object_get(c, "seconds_to_direct")) - 4.0) <
          1e-9);
    CHECK(json_object_get_int64(json_object_object_get(c, "hub_bytes")) == 2000);
    json_object_put(c);

    /* A tie between direct and relay goes to direct: it happened, the cell can go direct. */
    const char *const tie[] = {"relay", "direct"};
    const double tie_t[] = {-1, 2.0};
    c = cell(tie, tie_t, 2);
    CHECK_STR(str(c, "outcome"), "direct");
    json_object_put(c);

    const char *const relay[] = {"relay", "relay"};
    const double relay_t[] = {-1, -1};
    c = cell(relay, relay_t, 2);
    CHECK_STR(str(c, "outcome"), "relay");
    CHECK(json_object_object_get(c, "seconds_to_direct") == NULL);
    json_object_put(c);

    const char *const broken[] = {"failed", "failed", "relay"};
    const double broken_t[] = {-1, -1, -1};
    c = cell(broken, broken_t, 3);
    CHECK_STR(str(c, "outcome"), "failed");
    CHECK_STR(str(c, "reason"), "no tunnel");
    json_object_put(c);
}

int main(void)
{
    g_autoptr(GError) err = NULL;
    topo = ml_topology_load("topologies/dataplanes.yaml", &err);
    CHECK(topo != NULL);
    if (!topo)
        return check_finish();
    test_repeat();
    test_cell();
    test_watch_json();
    test_watch_script();
    test_policy();
    ml_topology_free(topo);
    return check_finish();
}
