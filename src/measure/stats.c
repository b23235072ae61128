#include "measure/stats.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double ml_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double ml_percentile(double *v, size_t n, double p)
{
    if (n == 0 || !(p >= 0 && p <= 100))
        return NAN;
    qsort(v, n, sizeof(*v), cmp_double);
    /* Nearest rank: the smallest value with at least p % of the values at or below it. */
    size_t rank = (size_t)ceil(p / 100.0 * (double)n);
    return v[rank ? rank - 1 : 0];
}

double ml_stddev(const double *v, size_t n)
{
    if (n < 2)
        return NAN;
    double mean = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        mean += v[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    return sqrt(ss / (double)(n - 1));
}

double ml_cv_percent(const double *v, size_t n)
{
    if (n < 2)
        return NAN;
    double mean = 0;
    for (size_t i = 0; i < n; i++)
        mean += v[i];
    mean /= (double)n;
    return mean != 0 ? 100.0 * ml_stddev(v, n) / fabs(mean) : NAN;
}
