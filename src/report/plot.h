/* The report's pictures: SVGs drawn by gnuplot from results.json. A picture that cannot be
 * drawn (no gnuplot, nothing to draw) has a one-line reason instead, and the reports say it
 * where the picture would be. */
#pragma once

#include <glib.h>
#include <json-c/json.h>
#include <stdbool.h>

#define ML_PLOTS_MAX 4

struct ml_plot {
    const char *name;  /* plots/NAME.svg */
    const char *title; /* what it shows, with its units */
    char *svg;         /* NULL when not drawn */
    char *missing;     /* why not drawn */
};

struct ml_plots {
    struct ml_plot plot[ML_PLOTS_MAX];
    size_t n;
};

/* Draws every picture of the results document with the gnuplot found in PATH (gnuplot: a
 * program name or path, NULL for "gnuplot"), its data in a private temporary directory. Never
 * fails: a picture that cannot be drawn has its reason in missing. */
void ml_plots_draw(struct json_object *results, const char *gnuplot, struct ml_plots *ret);
/* The pictures with no SVG, each saying why (tests, and a renderer without gnuplot). */
void ml_plots_none(struct ml_plots *ret, const char *why);
void ml_plots_clear(struct ml_plots *p);

/* The gnuplot script and data of one picture, without running anything (for tests): NULL
 * when the document has nothing to draw for it. */
char *ml_plot_script(struct json_object *results, const char *name);
