/* meshlab compare's logic: two results documents, each figure judged by Welch's t-test of the
 * passes' values (their logarithms where positive), Holm-adjusted over the comparison. */
#include <json-c/json.h>
#include <math.h>

#include "check.h"
#include "fixtures.h"
#include "core/util.h"
#include "report/compare.h"

static void test_verdict(void)
{
    double a[] = {1, 2, 3}, b[] = {10, 11, 12}, one[] = {5};
    /* s = 1 on both sides, n = 3: se = sqrt(2/3), df = 4, noise = t(0.975, 4) se = 2.776 x
     * 0.8165 = 2.267; a difference of 9 is real. */
    struct ml_welch w;
    CHECK_STR(ml_compare_verdict(a, 3, b, 3, &w), "differs");
    CHECK(fabs(w.df - 4) < 1e-9);
    CHECK(fabs(w.noise - 2.7764 * sqrt(2.0 / 3)) < 1e-3);
    CHECK(w.p < 0.001);
    /* means 2 apart with the same spread: within the noise of 2.267. By hand: t = 2 / 0.8165 =
     * sqrt(6), df 4, whose CDF is 1/2 + 3/8 u (1 - u²/12), u = t / sqrt(1 + t²/4) = 1.5492:
     * 0.96476, p = 2 x 0.03524 = 0.0705. */
    double c[] = {3, 4, 5};
    CHECK_STR(ml_compare_verdict(a, 3, c, 3, &w), "within noise");
    CHECK(fabs(w.p - 0.0705) < 0.0005);
    CHECK_STR(ml_compare_verdict(a, 3, one, 1, &w), "unknown");
    CHECK(isnan(w.noise) && isnan(w.p));
    CHECK_STR(ml_compare_verdict(one, 1, b, 3, &w), "unknown");
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
        n += g_strcmp0(verdict(json_object_array_get_idx(rows, i)), "differs") == 0;
    return n;
}

static void test_runs(void)
{
    struct json_object *a = fixture_json("results-v2-matrix.json");
    struct json_object *faster = fixture_json("results-v2-faster.json");
    struct json_object *rerun = fixture_json("results-v2-rerun.json");
    g_autoptr(GError) err = NULL;

    /* WireGuard through the hub 40 % faster, 3 passes a side of 15 % CV (122 ± 18 against
     * 170.8 ± 25.2 Mbit/s). On the logarithms (each side's values are 1 ± 0.148 times its
     * median, so their logs have the same spread): t = ln 1.4 / 0.1215 = 2.770 at df 4, p just
     * over 0.05 (t(0.975, 4) = 2.776), and the Holm-adjusted p no less. Two standard errors
     * (35.8) called it real; the test does not. */
    struct json_object *cmp = ml_compare(a, "A", faster, "B", &err);
    CHECK(cmp != NULL);
    struct json_object *wg = row(cmp, "wireguard-hub", "forward-1", "median_bits_per_second");
    CHECK(wg && !strcmp(verdict(wg), "within noise"));
    CHECK(wg && !strcmp(json_object_get_string(json_object_object_get(wg, "scale")), "log"));
    double p = json_object_get_double(json_object_object_get(wg, "p_value"));
    CHECK(wg && p > 0.05 && p < 0.051);
    CHECK(wg && json_object_get_double(json_object_object_get(wg, "p_holm")) >= p);
    CHECK(wg && fabs(json_object_get_double(json_object_object_get(wg, "t")) - 2.770) < 0.001);
    CHECK(wg && fabs(json_object_get_double(json_object_object_get(wg, "df")) - 4) < 1e-9);
    /* the difference the test would just call real, at A's level: 122 x (e^(2.776 x 0.1215) - 1)
     * = 48.93 Mbit/s, 40.1 % */
    CHECK(wg &&
          fabs(json_object_get_double(json_object_object_get(wg, "noise")) - 48.93e6) < 0.01e6);
    CHECK(wg &&
          fabs(json_object_get_double(json_object_object_get(wg, "noise_percent")) - 40.1) < 0.1);
    /* the pass values themselves, as the reader checks them */
    struct json_object *values = json_object_object_get(wg, "values_b");
    CHECK(json_object_array_length(values) == 3 &&
          json_object_get_double(json_object_array_get_idx(values, 0)) == 196e6);
    CHECK(wg && fabs(json_object_get_double(json_object_object_get(wg, "a")) - 122e6) < 1 &&
          fabs(json_object_get_double(json_object_object_get(wg, "difference_percent")) - 40) <
              1e-9);
    /* one pass a side: the noise is unknown, whatever the difference */
    CHECK(!strcmp(verdict(row(cmp, "wireguard-hub", "reverse-1", "median_bits_per_second")),
                  "unknown"));
    CHECK(row(cmp, "wireguard-hub", "reverse-1", "median_bits_per_second") &&
          json_object_object_get(row(cmp, "wireguard-hub", "reverse-1", "median_bits_per_second"),
                                 "noise") == NULL);
    /* and no scale: nothing was tested on one */
    CHECK(json_object_object_get(row(cmp, "wireguard-hub", "reverse-1", "median_bits_per_second"),
                                 "scale") == NULL);
    /* the failed pass of plain forward-1 is not among its passes */
    struct json_object *pf = row(cmp, "plain", "forward-1", "median_bits_per_second");
    CHECK(pf && json_object_get_int(json_object_object_get(pf, "passes_a")) == 2);
    CHECK(row(cmp, "nebula-relay", NULL, "hub_cpu_s_per_gb") != NULL);
    /* its noise from the cell the figure comes from, forward-1's 3 passes, not the fixed one's */
    CHECK(json_object_get_int(json_object_object_get(
              row(cmp, "nebula-relay", NULL, "hub_cpu_s_per_gb"), "passes_a")) == 3);
    CHECK(row(cmp, "tailscale-direct", NULL, "hub_bytes_per_payload_byte") == NULL);
    CHECK(beyond(cmp) == 0);
    g_autofree char *text = ml_compare_text(cmp);
    CHECK(strstr(text, "| wireguard-hub | forward-1 | median_bits_per_second | Mbit/s | 122 | "
                       "171 | 48.8 | 40.0 |") != NULL);
    CHECK(strstr(text, "| 3 / 3 | 140 122 104 / 196 171 146 | within noise |") != NULL);
    CHECK(strstr(text, "warning: both ran under TCG") != NULL);
    CHECK(strstr(text, "warning: tailscale-direct was not measured in both runs") != NULL);
    json_object_put(cmp);

    /* Twice as fast (244 ± 36): on the logarithms t = ln 2 / 0.1215 = 5.71 at df 4, p 0.0047 -
     * alone, real; but the comparison tests 12 rows, and Holm's adjustment makes it 12 x 0.0047
     * = 0.056: within noise. Three times as fast: t = ln 3 / 0.1215 = 9.04, p 0.00083, adjusted
     * 0.010: it differs, and only it. */
    for (int times = 2; times <= 3; times++) {
        struct json_object *faster_n = NULL;
        CHECK(json_object_deep_copy(a, &faster_n, NULL) == 0);
        struct json_object *paths = json_object_object_get(faster_n, "paths");
        for (size_t i = 0; i < json_object_array_length(paths); i++) {
            struct json_object *pa = json_object_array_get_idx(paths, i);
            if (strcmp(json_object_get_string(json_object_object_get(pa, "name")), "wireguard-hub"))
                continue;
            struct json_object *ps = json_object_object_get(pa, "passes");
            for (size_t k = 0; k < json_object_array_length(ps); k++) {
                struct json_object *x = json_object_array_get_idx(ps, k);
                if (!strcmp(json_object_get_string(json_object_object_get(x, "cell")), "forward-1"))
                    json_object_object_add(
                        x, "bits_per_second",
                        json_object_new_double(
                            times *
                            json_object_get_double(json_object_object_get(x, "bits_per_second"))));
            }
        }
        cmp = ml_compare(a, "A", faster_n, "B", &err);
        wg = row(cmp, "wireguard-hub", "forward-1", "median_bits_per_second");
        p = json_object_get_double(json_object_object_get(wg, "p_value"));
        double holm = json_object_get_double(json_object_object_get(wg, "p_holm"));
        g_autofree char *text2 = ml_compare_text(cmp);
        if (times == 2) {
            CHECK(wg && !strcmp(verdict(wg), "within noise"));
            CHECK(p > 0.004 && p < 0.005);
            CHECK(fabs(holm - 12 * p) < 1e-9);
            CHECK(beyond(cmp) == 0);
            CHECK(strstr(text2, "| 0.005 | 0.056 | 3 / 3 | 140 122 104 / 280 244 208 | within "
                                "noise |") != NULL);
        } else {
            CHECK(wg && !strcmp(verdict(wg), "differs"));
            CHECK(p > 0.0008 && p < 0.0009);
            CHECK(holm > 0.009 && holm < 0.011);
            CHECK(beyond(cmp) == 1);
            CHECK(strstr(text2, "| 3 / 3 | 140 122 104 / 420 366 312 | **differs** |") != NULL);
        }
        json_object_put(cmp);
        json_object_put(faster_n);
    }

    /* A p99 that is a lower bound in one pass (pings lost beyond its largest reply) is no value
     * to test; a fixed-rate cell offered another rate measures the offer, not the path. */
    struct json_object *odd = NULL;
    CHECK(json_object_deep_copy(a, &odd, NULL) == 0);
    struct json_object *paths = json_object_object_get(odd, "paths");
    for (size_t i = 0; i < json_object_array_length(paths); i++) {
        struct json_object *pa = json_object_array_get_idx(paths, i);
        const char *name = json_object_get_string(json_object_object_get(pa, "name"));
        struct json_object *ps = json_object_object_get(pa, "passes");
        for (size_t k = 0; k < json_object_array_length(ps); k++) {
            struct json_object *x = json_object_array_get_idx(ps, k);
            const char *cell = json_object_get_string(json_object_object_get(x, "cell"));
            if (!strcmp(name, "nebula-relay") && !strcmp(cell, "forward-1") && k == 0)
                json_object_object_add(json_object_object_get(x, "rtt_loaded"), "p99_at_least",
                                       json_object_new_boolean(true));
            if (!strcmp(name, "wireguard-hub") && !strcmp(cell, "forward-1-fixed"))
                json_object_object_add(x, "offered_bits_per_second", json_object_new_double(70e6));
        }
    }
    cmp = ml_compare(a, "A", odd, "B", &err);
    struct json_object *p99 = row(cmp, "nebula-relay", NULL, "rtt_loaded_p99_ms");
    CHECK(p99 && !strcmp(verdict(p99), "censored") &&
          json_object_object_get(p99, "p_value") == NULL &&
          json_object_object_get(p99, "p_holm") == NULL);
    struct json_object *fixed =
        row(cmp, "wireguard-hub", "forward-1-fixed", "median_bits_per_second");
    CHECK(fixed && !strcmp(verdict(fixed), "not comparable") &&
          json_object_object_get(fixed, "p_value") == NULL);
    g_autofree char *text3 = ml_compare_text(cmp);
    CHECK(strstr(text3, "warning: wireguard-hub forward-1-fixed: A offered 61 Mbit/s and B 70") !=
          NULL);
    /* the same cell offered the same rate is tested */
    CHECK(strcmp(verdict(row(cmp, "plain", "forward-1-fixed", "median_bits_per_second")),
                 "not comparable"));
    json_object_put(cmp);
    json_object_put(odd);

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
