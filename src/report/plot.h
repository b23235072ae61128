/* The report's pictures: SVGs drawn by gnuplot from results.json. A picture that cannot be
 * drawn (no gnuplot, nothing to draw) has a one-line reason instead, and the reports say it
 * where the picture would be. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

/* gnuplot's pictures, the WAN sweep's (when the run has one), then one NAT matrix grid per
 * dataplane (results/natgrid.h) */
#define ML_PLOTS_GNUPLOT 4
#define ML_PLOTS_NAT_MAX 4
#define ML_PLOTS_MAX (ML_PLOTS_GNUPLOT + 1 + ML_PLOTS_NAT_MAX)
/* The WAN sweep's picture: plots/ML_PLOT_SWEEP.svg, shown in the report's sweep section. */
#define ML_PLOT_SWEEP "distance"

struct ml_plot {
    char *name;          /* plots/NAME.svg */
    char *title;         /* what it shows, with its units */
    char *svg;           /* NULL when not drawn */
    char *missing;       /* why not drawn */
    char *nat_dataplane; /* a NAT matrix grid's dataplane; NULL for gnuplot's pictures */
    bool sweep;          /* the WAN sweep's picture (ML_PLOT_SWEEP), shown in its section */
};

struct ml_plots {
    struct ml_plot plot[ML_PLOTS_MAX];
    size_t n;
};

/* Draws every picture of the results document with the gnuplot found in PATH (gnuplot: a
 * program name or path, NULL for "gnuplot"), its data in a private temporary directory. Never
 * fails: a picture that cannot be drawn has its reason in missing. */
void ml_plots_draw(struct json_object *results, const char *gnuplot, struct ml_plots *ret);
/* gnuplot's pictures with no SVG, each saying why (tests, and a renderer without gnuplot). */
void ml_plots_none(struct ml_plots *ret, const char *why);
/* Appends the NAT matrix grid of each dataplane of results.json's nat_matrix, drawn by C
 * (ml_nat_svg): plots/nat-matrix-DATAPLANE.svg. ml_plots_draw calls it, gnuplot or not. */
void ml_plots_nat(struct json_object *results, struct ml_plots *plots);
/* The WAN sweep's picture, or NULL when the run has no sweep. */
const struct ml_plot *ml_plots_sweep_of(const struct ml_plots *plots);
/* The NAT matrix grid of dataplane, or NULL. */
const struct ml_plot *ml_plots_nat_of(const struct ml_plots *plots, const char *dataplane);
void ml_plots_clear(struct ml_plots *p);

/* The gnuplot script and data of one picture, without running anything (for tests): NULL
 * when the document has nothing to draw for it. */
char *ml_plot_script(struct json_object *results, const char *name);
