/* The tables of report.md that metrics (results/metric.h) are shown in. measure/'s metrics table
 * names them; report/ renders each with one row per path, per cell of the matrix, or per pass. */
#pragma once

#include "results/metric.h"

/* Headline figures, one row per path. */
extern const struct ml_report_table ml_table_comparison;
/* Throughput, CV, hub factor and RTT under load, one row per (path, cell of the matrix). */
extern const struct ml_report_table ml_table_cells;
/* The pairs-K cells: K flows through the hub at once, one row per (path, pairs cell). */
extern const struct ml_report_table ml_table_pairs;
/* RTT idle against RTT under load, one row per path. */
extern const struct ml_report_table ml_table_latency;
/* Every pass, failed ones with their seconds, one row per (path, pass). */
extern const struct ml_report_table ml_table_passes;
