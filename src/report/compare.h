/* Two runs side by side: for each path both measured, its figures in A and in B, the
 * difference, and whether the difference is real: Welch's t-test of the passes' values in A
 * against those in B. Pure: reads two results documents, writes one comparison document. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "measure/stats.h"

/* 2: the verdict is Welch's ("differs" where 1 said "beyond noise"), with t, df and p_value.
 * 3: the test on the logarithms of positive figures (scale), the verdict from the Holm-adjusted
 * p-value (p_holm), the pass values (values_a, values_b), noise_percent, and the verdicts
 * "censored" and "not comparable". */
#define ML_COMPARE_SCHEMA "meshlab-compare/3"

/* A difference is real ("differs") when Welch's two-sided t-test of the passes' values (of
 * their logarithms where all are positive) gives a p-value that, adjusted by Holm's method over
 * every tested row of the comparison, is below ML_COMPARE_ALPHA. */
#define ML_COMPARE_ALPHA 0.05

/* The comparison document (docs/report.md, "meshlab compare"): {"schema", "a", "b",
 * "warnings": [...], "rows": [{"path", "cell", "figure", "unit", "a", "b", "difference",
 * "difference_percent", "scale", "noise", "noise_percent", "t", "df", "p_value", "p_holm",
 * "passes_a", "passes_b", "values_a", "values_b", "verdict"}]}; verdict is "differs", "within
 * noise", "unknown" (fewer than 2 passes on either side), "censored" (a loaded p99 that is a
 * lower bound in some pass) or "not comparable" (a fixed-rate cell offered at different rates,
 * with a warning); the last three have null scale, noise, t, df, p_value and p_holm. a_name and
 * b_name say where each document came from. Fails (ML_ERR_INPUT) unless both are meshlab-results/3.
 */
struct json_object *ml_compare(struct json_object *a, const char *a_name, struct json_object *b,
                               const char *b_name, GError **err);

/* The comparison as a Markdown table with a line per warning. */
char *ml_compare_text(struct json_object *cmp);

/* The verdict for two samples' means by Welch's test (*ret): "differs", "within noise", or
 * "unknown" when either has fewer than 2 values (*ret all NAN). */
const char *ml_compare_verdict(const double *a, size_t na, const double *b, size_t nb,
                               struct ml_welch *ret);
