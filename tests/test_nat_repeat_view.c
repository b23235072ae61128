/* The NAT matrix's repeat, the part that needs no guest: the dataplane's view at the check in a
 * few words, read from the check's own outputs (real nebula print-tunnel output,
 * tests/data/samples/nebula). The repeat itself (NATs switched, daemons restarted, the window
 * watched) needs guests: tests/e2e_nat.sh runs it. */
#include "check.h"
#include "dataplanes/dataplane.h"
#include "measure/natmatrix.h"

static char *sample(const char *rel)
{
    g_autofree char *path = g_build_filename("tests/data/samples/nebula", rel, NULL);
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        fprintf(stderr, "cannot read %s\n", path);
    return text;
}

/* A check object as ml_measure_check writes it, its own[] holding the view's outputs. */
static struct json_object *check_with(const char *const *own, size_t n)
{
    struct json_object *chk = json_object_new_object(), *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(a, json_object_new_string(own[i]));
    json_object_object_add(chk, "own", a);
    return chk;
}

static void view_is(const struct ml_topology *topo, const struct ml_auto_ops *a,
                    struct json_object *chk, const char *want)
{
    g_autofree char *got = ml_nat_repeat_view(topo, a, "nebula-auto", chk);
    if (want)
        CHECK_STR(got, want);
    else
        CHECK(got == NULL);
    json_object_put(chk);
}

int main(void)
{
    g_autoptr(GError) err = NULL;
    struct ml_topology *topo = ml_topology_load("topologies/dataplanes.yaml", &err);
    CHECK(topo != NULL);
    if (!topo)
        return check_finish();
    const struct ml_auto_ops *a = ml_path_find("nebula-auto")->dataplane->autop;
    g_autofree char *direct = sample("print-tunnel-direct.json");
    g_autofree char *relayed = sample("print-tunnel-relayed.json");
    g_autofree char *none = sample("print-tunnel-none.txt");
    CHECK(direct && relayed && none);
    if (!direct || !relayed || !none)
        return check_finish();

    view_is(topo, a, check_with((const char *[]){direct}, 1),
            "nebula-auto: direct to 192.0.2.12:4242");
    view_is(topo, a, check_with((const char *[]){relayed}, 1), "nebula-auto: relayed by 10.42.0.1");
    view_is(topo, a, check_with((const char *[]){none}, 1), "nebula-auto: no tunnel");
    /* nothing to read: no own[], an empty one, a view that does not parse */
    view_is(topo, a, json_object_new_object(), NULL);
    view_is(topo, a, check_with(NULL, 0), NULL);
    view_is(topo, a, check_with((const char *[]){"{\"vpnIp\": 12"}, 1), NULL);
    ml_topology_free(topo);
    return check_finish();
}
