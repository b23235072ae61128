/* Figures over a handful of values: what the summaries of a path's passes and pings use. Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Median of n values (sorted in place); NAN for none. */
double ml_median(double *v, size_t n);
/* The p-th percentile (0..100) by nearest rank of n values (sorted in place); NAN for none. */
double ml_percentile(double *v, size_t n, double p);
/* Sample standard deviation over mean, in percent; NAN for fewer than 2 values or a zero mean. */
double ml_cv_percent(const double *v, size_t n);
/* Sample standard deviation; NAN for fewer than 2 values. */
double ml_stddev(const double *v, size_t n);

/* Student's t distribution with df degrees of freedom (df > 0, not necessarily whole, as
 * Welch's df is): P(T <= t); NAN for df <= 0. */
double ml_t_cdf(double t, double df);
/* The t with P(T <= t) = p (0 < p < 1): ml_t_quantile(0.975, 4) = 2.776; NAN outside. */
double ml_t_quantile(double p, double df);

/* The 95 % two-sided Student-t interval of the mean of n values: mean ± t(0.975, n-1) sd/√n. */
struct ml_interval {
    size_t n;
    double mean;
    double sd;   /* NAN for n < 2 */
    double low;  /* NAN for n < 2: one value says nothing of its spread */
    double high; /* NAN for n < 2 */
};
struct ml_interval ml_interval95(const double *v, size_t n);

/* The 95 % interval of a positive figure's passes on a log scale (throughput, hub bytes per
 * payload byte, round-trip times): the t interval of the mean of their logarithms, taken back,
 * exp(mean ln ± t(0.975, n-1) sd ln/√n), about their geometric mean. Its bounds are positive
 * however few and however spread the passes are, where mean ± t sd/√n of three RTT percentiles
 * went negative. Beside it the passes' range. low and high are NAN for n < 2 and where a value
 * is not positive and finite (a log scale does not hold it: no interval rather than a wrong
 * one). */
struct ml_log_interval {
    size_t n;
    double geomean; /* NAN where a value is not positive */
    double sd_log;  /* the logarithms' sample standard deviation; NAN for n < 2 */
    double low, high;
    double min, max; /* the passes' range; NAN for n = 0 */
};
struct ml_log_interval ml_log_interval95(const double *v, size_t n);
/* Half the interval's width in percent of its mean; NAN for n < 2 or a zero mean. */
double ml_interval_half_percent(const struct ml_interval *ci);

/* A percentile of pooled round trips (every ping of a cell's passes), lost ones counted as
 * +inf above every reply, with its distribution-free 95 % interval from order statistics: the
 * ranks l and u of the sorted sample whose span holds the true quantile with at least 95 %
 * chance when the pings are independent draws (the count below the quantile is binomial, n
 * and p; l the largest rank with P(B < l) <= 2.5 %, u the smallest with P(B >= u) <= 2.5 %).
 * Consecutive pings under load are not independent (a queue lasts longer than 50 ms), so the
 * interval is narrower than the truth: it says what the sample supports, not more. */
struct ml_quantile {
    size_t n;         /* replies and lost pings */
    size_t lost;      /* of them */
    double value;     /* by nearest rank, as ml_percentile; INFINITY where that rank is a lost ping;
                       * NAN for n = 0 */
    double low, high; /* X(l) and X(u); NAN where n is too small for a 95 % rank (no interval);
                       * high INFINITY where X(u) is a lost ping (censored) */
    size_t rank_low, rank_high; /* l and u, from 1; 0 where none */
};
/* v: the n replies, sorted in place. p from 0 to 100. */
struct ml_quantile ml_pooled_quantile(double *v, size_t n, size_t lost, double p);
/* The fewest values for which ml_pooled_quantile gives the p-th percentile an interval; 0 for p
 * 0 or 100 (none ever). */
size_t ml_pooled_quantile_min_n(double p);

/* Welch's two-sided t-test of two samples' means, unequal variances. */
struct ml_welch {
    double t;     /* (mean b - mean a) / se */
    double df;    /* Welch–Satterthwaite */
    double se;    /* sqrt(sa²/na + sb²/nb) */
    double p;     /* two-sided p-value */
    double noise; /* t(0.975, df) x se: the difference of the means that alpha 0.05 calls real */
};
/* False, *ret untouched, when either sample has fewer than 2 values. Two samples without any
 * spread: p is 0 where their means differ, 1 where they are equal. */
bool ml_welch(const double *a, size_t na, const double *b, size_t nb, struct ml_welch *ret);

/* Holm's step-down adjustment of a family of n p-values (Holm 1979): sorted ascending, the k-th
 * smallest (k from 0) becomes min(1, (m - k) p), each at least the one before it, m the number of
 * finite p-values. "adjusted < alpha" then holds the chance of any false "differs" in the family
 * at alpha. adj[i] is p[i]'s; a NAN p is no member of the family and stays NAN. */
void ml_holm(const double *p, size_t n, double *adj);

/* Adaptive repetition (run --until PCT,MAX, like netperf's -I LEVEL,WIDTH -i MAX,MIN, at 95 %
 * and a half-width): what a cell needs after its passes so far. */
enum ml_until_verdict { ML_UNTIL_MORE, ML_UNTIL_CONVERGED, ML_UNTIL_GAVE_UP };
/* v: the cell's figure over its passes that passed (n of them); run: its passes run, failed
 * ones too; least: the passes it takes in any case. Converged once it ran least and the 95 %
 * interval's half-width is within pct % of the mean; gave up once it ran max (or more) without;
 * else one more. *ret_half_percent: that half-width (NAN with fewer than 2 values). */
enum ml_until_verdict ml_until_next(const double *v, size_t n, unsigned run, unsigned least,
                                    double pct, unsigned max, double *ret_half_percent);
