/* Renders a results document (docs/results.md, "meshlab-results/3") as report.md and
 * report.html. The results document is the only input: every report is made from it, never
 * from live state, so 'meshlab report RUN_DIR' re-renders a run exactly. */
#pragma once

#include <glib.h>
#include <json-c/json.h>

#include "results/metric.h"
#include "report/plot.h"

#define ML_RESULTS_SCHEMA "meshlab-results/3"
#define ML_RESULTS_VERSION 3

/* Returns report.md's text (g_free it): the header, the paths, a table for each report table
 * the metrics (measure/metrics.h: ml_metrics) are shown in (rows per path, per cell of the
 * matrix or per pass), the pictures (when plots is not NULL: a link to plots/NAME.svg, or the
 * line saying why it was not drawn), the CPU cost, the physics, the variance, what it means for
 * a VPS, the path checks, setup and environment, and the footnotes. A path whose status is not
 * "measured" gets its reason, never its numbers; a failed pass shows as FAILED, never in a
 * figure. Fails (ML_ERR_INPUT) on another schema or a path without name or status; other
 * missing values render as "—". */
char *ml_report_render_markdown_with(struct json_object *results, const struct ml_metric *metrics,
                                     size_t n_metrics, const struct ml_plots *plots, GError **err);
/* The same without a pictures section. */
char *ml_report_render_markdown(struct json_object *results, const struct ml_metric *metrics,
                                size_t n_metrics, GError **err);

/* SIZING.md of an export: report.md's title line for the run, then its sections on distance
 * and on what the run means for the VPS (the month of the workload included), from results
 * alone. Fails (ML_ERR_INPUT) as ml_report_render_markdown_with does. */
char *ml_report_render_sizing(struct json_object *results, GError **err);
/* The answer as a terminal's last lines: a month of results' vps_workload on each measured path,
 * the hub's GB in and out, the seed's factor beside, what is beyond the included transfer and
 * its cost (answer.c). NULL without a workload. */
char *ml_report_answer_text(struct json_object *results);

/* report.html from report.md's text: the same content, self-contained (inline CSS, every
 * picture's SVG inline in place of its link; nothing fetched from the network). A link is kept
 * only to a file that the run directory dirfd has (report/runfiles.h: a plain relative name, a
 * regular file reached through no link); any other "[text](href)", and every one when dirfd is
 * -1, stays text. */
char *ml_report_render_html(const char *markdown, const struct ml_plots *plots, int dirfd);

/* Writes report.md, report.html and plots/NAME.svg below the directory dirfd (a run
 * directory, opened by core/rundir.h), from results alone, drawing the pictures with gnuplot
 * (NULL: "gnuplot" in PATH). Without gnuplot the reports are still written, with a line where
 * each picture would be, and *ret_drawn (may be NULL) is the number of pictures drawn. */
bool ml_report_write(int dirfd, struct json_object *results, const struct ml_metric *metrics,
                     size_t n_metrics, const char *gnuplot, size_t *ret_drawn, GError **err);
