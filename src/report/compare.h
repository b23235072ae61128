/* Two runs side by side: for each path both measured, its figures in A and in B, the
 * difference, and whether the difference is larger than the runs' own noise (the spread of
 * their passes). Pure: reads two results documents, writes one comparison document. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#define ML_COMPARE_SCHEMA "meshlab-compare/1"

/* A difference is beyond the noise when |b - a| > ML_COMPARE_SIGMAS x sqrt(sA²/nA + sB²/nB),
 * s the standard deviation of the passes' values, n their number. */
#define ML_COMPARE_SIGMAS 2.0

/* The comparison document (docs/report.md, "meshlab compare"): {"schema", "a", "b",
 * "warnings": [...], "rows": [{"path", "cell", "figure", "unit", "a", "b", "difference",
 * "difference_percent", "noise", "passes_a", "passes_b", "verdict"}]}; verdict is
 * "beyond noise", "within noise" or "unknown" (fewer than 2 passes on either side). a_name and
 * b_name say where each document came from. Fails (ML_ERR_INPUT) unless both are
 * meshlab-results/3. */
struct json_object *ml_compare(struct json_object *a, const char *a_name, struct json_object *b,
                               const char *b_name, GError **err);

/* The comparison as a Markdown table with a line per warning. */
char *ml_compare_text(struct json_object *cmp);

/* The verdict for two samples' means: "beyond noise", "within noise", or "unknown" when
 * either has fewer than 2 values; *ret_noise is the threshold (NAN when unknown). */
const char *ml_compare_verdict(double diff, const double *a, size_t na, const double *b, size_t nb,
                               double *ret_noise);
