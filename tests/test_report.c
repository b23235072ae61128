/* report.md from example results documents, compared with golden files. */
#include <json-c/json.h>

#include "check.h"
#include "fixtures.h"
#include "measure/metrics.h"
#include "report/report.h"
#include "core/util.h"


static char *render(struct json_object *results)
{
    g_autoptr(GError) err = NULL;
    char *md = ml_report_render_markdown(results, ml_metrics, ml_metrics_count, &err);
    CHECK(md != NULL);
    if (!md)
        fprintf(stderr, "render failed: %s\n", err->message);
    return md;
}

static void test_all_measured(void)
{
    struct json_object *r = fixture_json("results-all-measured.json");
    g_autofree char *md = render(r);
    if (md) {
        check_golden("report-all-measured.md", md);
        /* The seed's figures, formatted the way it wrote them. */
        CHECK(strstr(md, "| wireguard-hub | ok | 1,080,164,352 | 1,188,825,276 | 1,188,470,260 "
                         "| 2.20 | 722.1 |") != NULL);
        CHECK(strstr(md, "| 739.0, 722.1, 696.4 | 722.1 | 0, 0, n/a |") != NULL);
        CHECK(strstr(md, "| 0.860 / 1.115 / 1.333 |") != NULL);
        CHECK(strstr(md, "- wireguard-hub: 10.2 s") != NULL);
        CHECK(strstr(md, "TCG") == NULL);
    }
    json_object_put(r);
}

static void test_failed_and_not_run(void)
{
    struct json_object *r = fixture_json("results-failed-check.json");
    g_autofree char *md = render(r);
    if (md) {
        check_golden("report-failed-check.md", md);
        CHECK(strstr(md, "failed: the path check after the transfer failed") != NULL);
        CHECK(strstr(md, "not run: the run was interrupted (SIGINT)") != NULL);
        CHECK(strstr(md, "**failed**: hub NIC moved 2.19 bytes per payload byte") != NULL);
        CHECK(strstr(md, "Warning:** the guests ran under TCG") != NULL);
        CHECK(strstr(md, "used instead of the requested ubuntu-24.04") != NULL);
        /* None of the failed path's numbers may reach the report: not the transfer, */
        const char *hidden[] = {"1,357,418,496", "1,486,372,352", "1,486,061,056", "2714.8",
                                /* the passes and their median, the retransmits, */
                                "2667.4", "2723.8", "2558.0", "7, 9, 4",
                                /* the ping, and the not-run path's setup time. */
                                "0.777", "0.888", "0.999", "2.7 s"};
        for (size_t i = 0; i < G_N_ELEMENTS(hidden); i++) {
            if (strstr(md, hidden[i]))
                fprintf(stderr, "report shows \"%s\" from a path that was not measured\n",
                        hidden[i]);
            CHECK(strstr(md, hidden[i]) == NULL);
        }
    }
    json_object_put(r);
}

/* The example in docs/ is rendered by this meshlab from its results.json, so that it shows the
 * report as it now is (MESHLAB_UPDATE_GOLDEN=1 rewrites it too). */
static void test_example(void)
{
    struct json_object *r = json_object_from_file("docs/examples/results-full-tcg.json");
    CHECK(r != NULL);
    g_autofree char *md = r ? render(r) : NULL;
    g_autofree char *want = NULL;
    const char *update = getenv("MESHLAB_UPDATE_GOLDEN");
    if (md && update && *update == '1')
        CHECK(g_file_set_contents("docs/examples/report-full-tcg.md", md, -1, NULL));
    else if (md)
        CHECK(g_file_get_contents("docs/examples/report-full-tcg.md", &want, NULL, NULL) &&
              strcmp(want, md) == 0);
    json_object_put(r);
}

static void expect_error(const char *json, const char *message)
{
    struct json_object *r = json_tokener_parse(json);
    g_autoptr(GError) err = NULL;
    char *md = ml_report_render_markdown(r, ml_metrics, ml_metrics_count, &err);
    CHECK(md == NULL);
    CHECK(err && err->code == ML_ERR_INPUT);
    CHECK_STR(err ? err->message : NULL, message);
    g_free(md);
    json_object_put(r);
}

static void test_rejects(void)
{
    expect_error("[]", "The results document is not a JSON object.");
    expect_error("{\"schema\": \"meshlab-results/2\", \"paths\": []}",
                 "The results document's schema is 'meshlab-results/2'; this meshlab reads "
                 "'meshlab-results/1'.");
    expect_error("{\"schema\": \"meshlab-results/1\"}", "The results document has no paths array.");
    expect_error("{\"schema\": \"meshlab-results/1\", \"paths\": [{\"status\": \"measured\"}]}",
                 "Results path 1 has no name.");
    expect_error("{\"schema\": \"meshlab-results/1\", \"paths\": [{\"name\": \"plain\", "
                 "\"status\": \"skipped\"}]}",
                 "Results path 'plain' has status 'skipped'; expected measured, failed or "
                 "not-run.");
}

static void test_minimal(void)
{
    /* A document cut short (an interrupted run) still renders, with dashes for what is missing. */
    struct json_object *r = json_tokener_parse(
        "{\"schema\": \"meshlab-results/1\", \"paths\": [{\"name\": \"a|b\", \"status\": "
        "\"measured\"}]}");
    g_autofree char *md = render(r);
    if (md) {
        CHECK(strstr(md, "| a\\|b | not checked | — | — | — | — | — |") != NULL);
        CHECK(strstr(md, "(unfinished)") != NULL);
    }
    json_object_put(r);

    /* Every ping lost is a measurement: it shows as such, with no round-trip times. */
    r = json_tokener_parse(
        "{\"schema\": \"meshlab-results/1\", \"paths\": [{\"name\": \"plain\", \"status\": "
        "\"measured\", \"target\": \"192.0.2.12\", \"ping\": {\"target\": \"192.0.2.12\", "
        "\"count\": 3, \"transmitted\": 3, \"received\": 0, \"errors\": 3, \"loss_percent\": "
        "100.0, \"min_ms\": null}}]}");
    g_autofree char *lost = render(r);
    if (lost)
        CHECK(strstr(lost, "| plain | 192.0.2.12 | 3 | 0 | 100.0 | — | 3 | — |"));
    json_object_put(r);
}

int main(void)
{
    test_all_measured();
    test_failed_and_not_run();
    test_example();
    test_rejects();
    test_minimal();
    return check_finish();
}
