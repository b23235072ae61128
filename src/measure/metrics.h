/* The metrics table: every figure meshlab measures on a path, as one descriptor each
 * (results/metric.h), and the loops that collect, summarise and withhold them. Adding a figure
 * is adding a line to ml_metrics (and, for a new kind of measurement, its collector). */
#pragma once

#include <json-c/json.h>

#include "results/metric.h"
#include "virt/lab.h"

/* What a collector runs on: one path of the lab, with the profile's lengths and counts. */
struct ml_collect_ctx {
    struct ml_lab *lab;
    virDomainPtr client; /* runs ping and the iperf3 client */
    virDomainPtr hub;    /* whose NIC counts the bytes that cross it */
    const char *hub_tap;
    const char *path;   /* the path's name */
    const char *target; /* the address the client sends to */
    const struct ml_profile *profile;
};

/* What a failed or unrun path has in place of a collector's record (the trust rule: a path that
 * was not verified has no numbers, not even zeros). */
enum ml_withheld {
    ML_WITHHELD_NULL,
    ML_WITHHELD_EMPTY_ARRAY,
    ML_WITHHELD_EMPTY_OBJECT,
    ML_WITHHELD_ABSENT
};

/* A guest's CPU above its idle rate is a figure only when it is at least this share of its busy
 * CPU over the cell's passes; below, the payload's cost is lost in the idle work (null). */
#define ML_CPU_ABOVE_IDLE_MIN_SHARE 0.1

/* Under load, a cell whose pings lost more than this share is a warning: its p99 counts the lost
 * pings, and is then only a lower bound. */
#define ML_LOSS_WARN_PERCENT 1.0

/* A CV across passes above this is a warning in the report: the passes disagree. */
#define ML_CV_WARN_PERCENT 10.0

struct ml_collector {
    const char *key; /* the path object's key its record goes under: "ping" */
    /* Runs it; *ret is the record, or NULL where it does not apply to this path (key absent). */
    bool (*collect)(struct ml_collect_ctx *c, const struct ml_collector *self,
                    struct json_object **ret, GError **err);
    enum ml_withheld withheld;
    /* Extra arguments for the command it runs, so that one collect function serves several
     * collectors (passes with iperf3's "-R" beside the forward ones); NULL for none. */
    const char *options;
};

extern const struct ml_metric ml_metrics[];
extern const size_t ml_metrics_count;

/* Runs each collector of the table once, in the order the table first names it, then each
 * summary; returns an object with the path's figures under their keys. Fails with the first
 * collector that fails (nothing is returned then: no partial figures). */
struct json_object *ml_metrics_collect(const struct ml_metric *table, size_t n,
                                       struct ml_collect_ctx *c, GError **err);

/* Runs each collector of the table that has a collect function (the others are run by the
 * sweeps) once, and puts its record into `into` under its key. */
bool ml_metrics_run_collectors(const struct ml_metric *table, size_t n, struct ml_collect_ctx *c,
                               struct json_object *into, GError **err);

/* Computes every summarised metric of the table from the records in figures (a path's object)
 * and writes it at its name. Part of ml_metrics_collect. */
void ml_metrics_summarise(const struct ml_metric *table, size_t n, const char *path,
                          struct json_object *figures);

/* Puts what a path without a result has in place of every metric of the table into path. */
void ml_metrics_withhold(const struct ml_metric *table, size_t n, struct json_object *path);

/* Summaries any metric may use. Per cell ("cells.*.x": an object of cell name to value): the
 * median or the CV of `of` over the cell's passes that passed; the cells object itself; CPU
 * seconds per GB of payload (`of`: "cpu" or "daemons_cpu_s"). Per path: the headline cell's
 * value of `of`; the headline cell's name; the hub's CPU per GB (`of`: the key under
 * cpu_s_per_gb.HUB); a copy of a record's value; the VPS answers; the warnings. A failed pass is
 * in none of them. */
/* The median of `key` over the headline cell's passes that passed; NAN when none. */
double ml_headline_median(struct json_object *path, const char *key);

struct json_object *ml_summary_cell_median(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_cell_cv(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_cells(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_cell_cpu_per_gb(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_headline(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_headline_cell(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_hub_cpu(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_copy(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_expected(struct json_object *path, const struct ml_metric *m);
/* Per cell: the physics of every cell (ml_summary_expected is the headline cell's). */
struct json_object *ml_summary_cell_expected(struct json_object *path, const struct ml_metric *m);
/* Per cell, by `of`: "loss_percent" (the pings under load that got no reply, pooled over the
 * passes), "below_offered_rate" (how many fixed-rate passes carried under 95 % of the offered
 * rate; null for a full-speed cell), else whether any pass has the flag at `of` true. */
struct json_object *ml_summary_cell_loss(struct json_object *path, const struct ml_metric *m);
/* The headline cell's flag at `of`; a flag of the path's records at `of`. */
struct json_object *ml_summary_headline_flag(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_copy_flag(struct json_object *path, const struct ml_metric *m);
/* 95 % intervals on a log scale ({n, mean, sd, scale, geometric_mean, low, high, min, max,
 * censored}, ml_log_interval95; low and high null with fewer than 2 passes, a value not positive
 * or a censored pass among them; the object null with none): per cell, of `of` over the cell's
 * passes that passed; the headline cell's interval named `of` ("median_bits_per_second_ci95"); the
 * hub's busy CPU seconds above idle per GB of payload, pass by pass, over the headline cell's
 * passes. */
struct json_object *ml_summary_cell_ci95(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_cell_pooled_rtt(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_headline_ci95(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_hub_cpu_ci95(struct json_object *path, const struct ml_metric *m);
/* The values at `key` ("bits_per_second") of the passes of `cell` that passed, in *ret (free
 * it); their number. */
size_t ml_cell_pass_values(struct json_object *path, const char *cell, const char *key,
                           double **ret);
struct json_object *ml_summary_vps(struct json_object *path, const struct ml_metric *m);
struct json_object *ml_summary_warnings(struct json_object *path, const struct ml_metric *m);
