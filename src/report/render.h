/* What the parts of report.md share while one document is rendered: report.c calls the sections
 * of sections.c and natreport.c, which call nothing back. Internal to report/. */
#pragma once

#include <glib.h>
#include <json-c/json.h>

#include "results/format.h"
#include "report/plot.h"

enum ml_path_status { ML_PATH_MEASURED, ML_PATH_FAILED, ML_PATH_NOT_RUN };

struct ml_render {
    GString *s;
    struct json_object *r;     /* the results document */
    struct json_object *paths; /* its paths array */
    const enum ml_path_status *st;
    struct ml_notes notes;
    const struct ml_plots *plots; /* NULL: no pictures section */
};

/* The sections read from results.json directly (sections.c). */
void ml_section_cpu(struct ml_render *c);
void ml_section_physics(struct ml_render *c);
void ml_section_variance(struct ml_render *c);
void ml_section_vps(struct ml_render *c);
/* The nodes' WAN profiles and their proof (wanreport.c); absent when results.json has no wan. */
void ml_section_wan(struct ml_render *c);
/* Each path's figures at each step of the WAN sweep, its picture, and what moved from the first
 * step to the last (wanreport.c); absent without wan_sweep. */
void ml_section_wan_sweep(struct ml_render *c);
/* Where each node ran, the underlay between the hosts and what the hub's paths put on it
 * (underlayreport.c); absent for a one-host lab. */
void ml_section_underlay(struct ml_render *c);
/* The NAT sections (natreport.c), each absent when results.json has no NAT: the behaviour
 * observed, the matrix of each dataplane (grid, picture, explanations), the captures. */
void ml_section_nat_observed(struct ml_render *c);
void ml_section_nat_matrix(struct ml_render *c);
void ml_section_nat_captures(struct ml_render *c);
/* The run's Tailscale figures beside the seed's own (seedreport.c); absent when neither Tailscale
 * path was measured. */
void ml_section_seed(struct ml_render *c);
/* The answer first: a month of the workload on each measured path, the hub's GB and cost,
 * beside the seed's factors (answer.c); absent without vps_workload. */
void ml_section_answer(struct ml_render *c);
/* "1,234 GB" with the decimals a month's figure needs; "0.01 USD" (sections.c). */
void ml_put_month_gb(GString *s, double gb);
void ml_put_money(GString *s, double v, const char *currency);
/* A month's table cells "IN | OUT | BEYOND | COST" (a dash for no price), shared by the answer's
 * table and the VPS section's. */
struct ml_month;
void ml_put_month_cells(GString *s, const struct ml_month *m, const char *currency);
/* The workload in words ("210 GB of client payload a month, 20 % of it relayed where a mesh
 * relays, 100 GB included, 0.01 USD a GB sent beyond it"), shared by the answer and the VPS
 * section. */
struct ml_workload;
void ml_put_workload(GString *s, const struct ml_workload *wl);
/* Under the latency table: each cell's pooled round trips under load with their
 * order-statistic intervals (sections.c); absent where no cell has them. */
void ml_section_pooled_rtt(struct ml_render *c);
/* The notice at the top of a run whose host was busy. */
void ml_section_busy_notice(struct ml_render *c);
/* A picture in report.md: its link, or the line saying why it was not drawn (the reason may
 * hold gnuplot's own words, and so a value of results.json: written as text). */
void ml_put_picture(GString *s, const struct ml_plot *p);
