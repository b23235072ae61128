/* The NAT matrix's judgement without guests: a repeat's outcome from the polls of nebula's
 * view (real print-tunnel output, tests/data/samples/nebula) and the check after them, and a
 * cell's outcome from its repeats. */
#include "check.h"
#include "dataplanes/path.h"
#include "measure/natmatrix.h"

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
    return a;
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
    topo = ml_topology_load("topologies/three-guest.yaml", &err);
    CHECK(topo != NULL);
    if (!topo)
        return check_finish();
    test_repeat();
    test_cell();
    ml_topology_free(topo);
    return check_finish();
}
