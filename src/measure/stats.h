/* Figures over a handful of values: what the summaries of a path's passes and pings use. Pure. */
#pragma once

#include <stddef.h>

/* Median of n values (sorted in place); NAN for none. */
double ml_median(double *v, size_t n);
/* The p-th percentile (0..100) by nearest rank of n values (sorted in place); NAN for none. */
double ml_percentile(double *v, size_t n, double p);
/* Sample standard deviation over mean, in percent; NAN for fewer than 2 values or a zero mean. */
double ml_cv_percent(const double *v, size_t n);
/* Sample standard deviation; NAN for fewer than 2 values. */
double ml_stddev(const double *v, size_t n);
