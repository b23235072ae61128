/* Renders a results document (docs/results.md, "meshlab-results/1") as Markdown. The results
 * document is the only input: every report is made from it, never from live state. */
#pragma once

#include <glib.h>
#include <json-c/json.h>

#include "report/metric.h"

#define ML_RESULTS_SCHEMA "meshlab-results/2"
#define ML_RESULTS_VERSION 2

/* Returns report.md's text (g_free it), with a table for each report table the metrics
 * (measure/metrics.h: ml_metrics) are shown in, a column for each metric. A path whose status is
 * not "measured" gets its reason and its check evidence, never its numbers: a failed path check
 * means those numbers are not what the path claims to be. Fails (ML_ERR_INPUT) on another schema or
 * a path without name or status; other missing values render as "—". */
char *ml_report_render_markdown(struct json_object *results, const struct ml_metric *metrics,
                                size_t n_metrics, GError **err);
