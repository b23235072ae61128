/* A metric is one descriptor: its name (where its value lies in a path of results.json), its
 * unit, what runs on a path to collect it, how it is summarised, and how report.md shows it.
 * measure/ and report/ loop over a table of them (src/measure/metrics.c) and name none: a new
 * figure is a new line in that table. The type lives here, in results/, which both stand on;
 * what collects lives in measure/, which fills in the table. A metric's values are read with
 * ml_j_values (results/json.h). */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <json-c/json.h>

/* What runs on a path to obtain a record (a ping, a timed transfer, the passes): defined in
 * measure/metrics.h. Several metrics read the same record; it runs once per path. */
struct ml_collector;

struct ml_metric;

/* Computes a metric's value from the records of one path (NULL: not obtained). */
typedef struct json_object *(*ml_summarise_fn)(struct json_object *path, const struct ml_metric *m);

/* What one row of a table is: a path; a cell of the matrix of a path (a metric named
 * "cells.*.x" reads that cell's x); a pass of a path (a metric named "passes.x" reads that
 * pass's x). */
enum ml_rows { ML_ROWS_PATH, ML_ROWS_CELL, ML_ROWS_PASS };

/* A table of report.md: one row per path (or cell, or pass), one column per metric shown in it. */
struct ml_report_table {
    const char *title;  /* "## title" */
    unsigned place;     /* where in report.md, among the tables: lower comes first */
    const char *intro;  /* the paragraph under the title; {profile.pass_s} names a results value */
    bool check_column;  /* a "Path check" column: did the path checks pass */
    bool target_column; /* a "Target" column: the address the client sent to */
    enum ml_rows rows;
    /* ML_ROWS_CELL only: the rows are the cells with a value at this key (in the cell); a run
     * with none has no such table. NULL: every cell. */
    const char *only_with;
};

struct ml_metric {
    /* Where the value lies in a path's object: "transfer.payload_bytes". A key that runs through
     * an array ("passes.bits_per_second") has one value per element; "*" stands for every member
     * of an object ("observed.*.memory_used_mib": one per guest). */
    const char *name;
    const char *unit; /* "byte", "bit/s", "ms", "%", "byte/byte", "packet" */
    /* What runs on the path to obtain the record that holds it (or that it is summarised from). */
    const struct ml_collector *collector;
    /* NULL: the collector records the value itself. Otherwise computed from the path's records
     * once every collector ran, and written at name. `of` is the key it reads, where generic. */
    ml_summarise_fn summarise;
    const char *of;
    /* How report.md shows it: the tables it is a column of (NULL-terminated; none: results.json
     * only), the column's header (metrics next to each other with the same header share one
     * cell, "a / b / c"), and the number's form: value times scale (0 means 1), decimals. */
    const struct ml_report_table *shown_in[4];
    const char *header;
    double scale;
    int decimals;
    /* When > 0: shown with this many significant digits (6.4e-05, 2.26), not decimals. */
    int significant;
    /* A boolean's name beside the value, read as name is ("cells.*.x_at_least"): where it is
     * true the value is only a lower bound, shown "≥ 350". NULL: none. */
    const char *at_least;
    /* A percentile's loss, read as name is ("cells.*.rtt_loaded_loss_percent"), and the loss
     * over which it lands on a lost ping (1 for a p99): where at_least is true the value is not
     * shown at all, only "undefined: 2.3 % lost" (or, for a cell whose pooled loss is under it,
     * "undefined: a pass lost over 1 %"). A bound is not a figure. NULL: "≥ value". */
    const char *lost;
    double lost_over;
    /* The name of the value's 95 % interval over its passes, read as name is
     * ("cells.*.x_ci95": an object {n, mean, sd, low, high}), shown "value (low–high)" in the
     * value's own form. NULL: none. */
    const char *interval;
};
