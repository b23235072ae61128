/* meshlab compare's logic: two results documents, each figure against the passes' noise. */
#include <json-c/json.h>
#include <math.h>

#include "check.h"
#include "fixtures.h"
#include "core/util.h"
#include "report/compare.h"

static void test_verdict(void)
{
    double a[] = {1, 2, 3}, b[] = {10, 11, 12}, one[] = {5};
    double noise;
    /* s = 1 on both sides, n = 3: 2 x sqrt(1/3 + 1/3) = 1.633 */
    CHECK_STR(ml_compare_verdict(9, a, 3, b, 3, &noise), "beyond noise");
    CHECK(fabs(noise - 2 * sqrt(2.0 / 3)) < 1e-12);
    CHECK_STR(ml_compare_verdict(1.6, a, 3, b, 3, &noise), "within noise");
    CHECK_STR(ml_compare_verdict(-1.7, a, 3, b, 3, &noise), "beyond noise");
    CHECK_STR(ml_compare_verdict(100, a, 3, one, 1, &noise), "unknown");
    CHECK(isnan(noise));
    CHECK_STR(ml_compare_verdict(100, one, 1, b, 3, &noise), "unknown");
}

static struct json_object *row(struct json_object *cmp, const char *path, const char *cell,
                               const char *figure)
{
    struct json_object *rows = json_object_object_get(cmp, "rows");
    for (size_t i = 0; i < json_object_array_length(rows); i++) {
        struct json_object *r = json_object_array_get_idx(rows, i);
        const char *c = json_object_get_string(json_object_object_get(r, "cell"));
        if (!g_strcmp0(json_object_get_string(json_object_object_get(r, "path")), path) &&
            !g_strcmp0(c, cell) &&
            !g_strcmp0(json_object_get_string(json_object_object_get(r, "figure")), figure))
            return r;
    }
    return NULL;
}

static const char *verdict(struct json_object *r)
{
    return json_object_get_string(json_object_object_get(r, "verdict"));
}

static size_t beyond(struct json_object *cmp)
{
    size_t n = 0;
    struct json_object *rows = json_object_object_get(cmp, "rows");
    for (size_t i = 0; i < json_object_array_length(rows); i++)
        n += g_strcmp0(verdict(json_object_array_get_idx(rows, i)), "beyond noise") == 0;
    return n;
}

static void test_runs(void)
{
    struct json_object *a = fixture_json("results-v2-matrix.json");
    struct json_object *faster = fixture_json("results-v2-faster.json");
    struct json_object *rerun = fixture_json("results-v2-rerun.json");
    g_autoptr(GError) err = NULL;

    /* WireGuard through the hub 40 % faster: beyond the noise of 3 passes a side. */
    struct json_object *cmp = ml_compare(a, "A", faster, "B", &err);
    CHECK(cmp != NULL);
    struct json_object *wg = row(cmp, "wireguard-hub", "forward-1", "median_bits_per_second");
    CHECK(wg && !strcmp(verdict(wg), "beyond noise"));
    CHECK(wg && fabs(json_object_get_double(json_object_object_get(wg, "a")) - 122e6) < 1 &&
          fabs(json_object_get_double(json_object_object_get(wg, "difference_percent")) - 40) <
              1e-9);
    /* one pass a side: the noise is unknown, whatever the difference */
    CHECK(!strcmp(verdict(row(cmp, "wireguard-hub", "reverse-1", "median_bits_per_second")),
                  "unknown"));
    CHECK(row(cmp, "wireguard-hub", "reverse-1", "median_bits_per_second") &&
          json_object_object_get(row(cmp, "wireguard-hub", "reverse-1", "median_bits_per_second"),
                                 "noise") == NULL);
    /* the failed pass of plain forward-1 is not among its passes */
    struct json_object *pf = row(cmp, "plain", "forward-1", "median_bits_per_second");
    CHECK(pf && json_object_get_int(json_object_object_get(pf, "passes_a")) == 2);
    CHECK(row(cmp, "nebula-relay", NULL, "hub_cpu_s_per_gb") != NULL);
    /* its noise from the cell the figure comes from, forward-1's 3 passes, not the fixed one's */
    CHECK(json_object_get_int(json_object_object_get(
              row(cmp, "nebula-relay", NULL, "hub_cpu_s_per_gb"), "passes_a")) == 3);
    CHECK(row(cmp, "tailscale-direct", NULL, "hub_bytes_per_payload_byte") == NULL);
    CHECK(beyond(cmp) == 1);
    g_autofree char *text = ml_compare_text(cmp);
    CHECK(strstr(text, "| wireguard-hub | forward-1 | median_bits_per_second | Mbit/s | 122 | "
                       "171 | 48.8 | 40.0 |") != NULL);
    CHECK(strstr(text, "warning: both ran under TCG") != NULL);
    CHECK(strstr(text, "warning: tailscale-direct was not measured in both runs") != NULL);
    json_object_put(cmp);

    /* The same lab again, 2 % apart: within the noise. */
    cmp = ml_compare(a, "A", rerun, "B", &err);
    CHECK(cmp != NULL && beyond(cmp) == 0);
    CHECK(!strcmp(verdict(row(cmp, "wireguard-hub", "forward-1", "median_bits_per_second")),
                  "within noise"));
    json_object_put(cmp);

    /* Another schema is refused, naming the document. */
    struct json_object *v1 = fixture_json("results-all-measured.json");
    g_clear_error(&err);
    CHECK(ml_compare(a, "A", v1, "old/results.json", &err) == NULL);
    CHECK(err && err->code == ML_ERR_INPUT &&
          strstr(err->message, "old/results.json is not a 'meshlab-results/3'"));
    json_object_put(v1);
    json_object_put(a);
    json_object_put(faster);
    json_object_put(rerun);
}

int main(void)
{
    test_verdict();
    test_runs();
    return check_finish();
}
