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

/* The continued fraction of the regularized incomplete beta function I_x(a, b) (Lentz's method,
 * as in Numerical Recipes' betacf): converges fast for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = fabs(d) < tiny ? tiny : d;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m;
        double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        for (int half = 0; half < 2; half++) {
            d = 1 + num * d;
            d = fabs(d) < tiny ? tiny : d;
            c = 1 + num / c;
            c = fabs(c) < tiny ? tiny : c;
            d = 1 / d;
            h *= d * c;
            num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        }
        if (fabs(d * c - 1) < 1e-15)
            break;
    }
    return h;
}

static double beta_inc(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_cf(a, b, x) / a;
    return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double ml_t_cdf(double t, double df)
{
    if (!(df > 0) || isnan(t))
        return NAN;
    if (isinf(t))
        return t > 0 ? 1 : 0;
    /* P(|T| > |t|) = I_{df/(df+t²)}(df/2, 1/2) */
    double tail = beta_inc(df / 2, 0.5, df / (df + t * t)) / 2;
    return t > 0 ? 1 - tail : tail;
}

double ml_t_quantile(double p, double df)
{
    if (!(df > 0) || !(p > 0 && p < 1))
        return NAN;
    if (p == 0.5)
        return 0;
    /* Bisection on the CDF: it is monotonic, and 200 halvings of [-1e8, 1e8] leave nothing. */
    double lo = -1e8, hi = 1e8;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * fmax(1, fabs(lo)); i++) {
        double mid = (lo + hi) / 2;
        if (ml_t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

static double mean_of(const double *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m += v[i];
    return n ? m / (double)n : NAN;
}

struct ml_interval ml_interval95(const double *v, size_t n)
{
    struct ml_interval ci = {.n = n, .mean = mean_of(v, n), .sd = NAN, .low = NAN, .high = NAN};
    if (n < 2)
        return ci;
    ci.sd = ml_stddev(v, n);
    double half = ml_t_quantile(0.975, (double)(n - 1)) * ci.sd / sqrt((double)n);
    ci.low = ci.mean - half;
    ci.high = ci.mean + half;
    return ci;
}

struct ml_log_interval ml_log_interval95(const double *v, size_t n)
{
    struct ml_log_interval ci = {
        .n = n, .geomean = NAN, .sd_log = NAN, .low = NAN, .high = NAN, .min = NAN, .max = NAN};
    bool positive = n > 0;
    for (size_t i = 0; i < n; i++) {
        ci.min = isnan(ci.min) || v[i] < ci.min ? v[i] : ci.min;
        ci.max = isnan(ci.max) || v[i] > ci.max ? v[i] : ci.max;
        positive &= isfinite(v[i]) && v[i] > 0;
    }
    if (!positive)
        return ci;
    double *l = malloc(n * sizeof(*l));
    if (!l)
        return ci;
    for (size_t i = 0; i < n; i++)
        l[i] = log(v[i]);
    double m = mean_of(l, n);
    ci.geomean = exp(m);
    if (n >= 2) {
        ci.sd_log = ml_stddev(l, n);
        double half = ml_t_quantile(0.975, (double)(n - 1)) * ci.sd_log / sqrt((double)n);
        ci.low = exp(m - half);
        ci.high = exp(m + half);
    }
    free(l);
    return ci;
}

double ml_interval_half_percent(const struct ml_interval *ci)
{
    if (ci->n < 2 || !isfinite(ci->low) || ci->mean == 0)
        return NAN;
    return 100 * (ci->high - ci->low) / 2 / fabs(ci->mean);
}

bool ml_welch(const double *a, size_t na, const double *b, size_t nb, struct ml_welch *ret)
{
    if (na < 2 || nb < 2)
        return false;
    double va = pow(ml_stddev(a, na), 2) / (double)na, vb = pow(ml_stddev(b, nb), 2) / (double)nb;
    double diff = mean_of(b, nb) - mean_of(a, na);
    struct ml_welch w = {.se = sqrt(va + vb)};
    if (w.se == 0) {
        /* No spread on either side: the means are what they are. */
        w.t = diff == 0 ? 0 : copysign(INFINITY, diff);
        w.df = (double)(na + nb - 2);
        w.p = diff == 0 ? 1 : 0;
        w.noise = 0;
    } else {
        w.t = diff / w.se;
        w.df = (va + vb) * (va + vb) / (va * va / (double)(na - 1) + vb * vb / (double)(nb - 1));
        w.p = 2 * ml_t_cdf(-fabs(w.t), w.df);
        w.noise = ml_t_quantile(0.975, w.df) * w.se;
    }
    *ret = w;
    return true;
}

void ml_holm(const double *p, size_t n, double *adj)
{
    size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
    size_t m = 0;
    if (!idx)
        abort();
    for (size_t i = 0; i < n; i++) {
        adj[i] = NAN;
        if (!isfinite(p[i]))
            continue;
        /* insertion by p: a family is a comparison's rows, tens at most */
        size_t k = m++;
        while (k > 0 && p[idx[k - 1]] > p[i]) {
            idx[k] = idx[k - 1];
            k--;
        }
        idx[k] = i;
    }
    double running = 0;
    for (size_t k = 0; k < m; k++) {
        running = fmax(running, fmin(1, (double)(m - k) * p[idx[k]]));
        adj[idx[k]] = running;
    }
    free(idx);
}

enum ml_until_verdict ml_until_next(const double *v, size_t n, unsigned run, unsigned least,
                                    double pct, unsigned max, double *ret_half_percent)
{
    struct ml_interval ci = ml_interval95(v, n);
    double half = ml_interval_half_percent(&ci);
    *ret_half_percent = half;
    if (run < least && run < max)
        return ML_UNTIL_MORE;
    if (isfinite(half) && half <= pct)
        return ML_UNTIL_CONVERGED;
    return run >= max ? ML_UNTIL_GAVE_UP : ML_UNTIL_MORE;
}

/* P(B = k) for B binomial(n, q), 0 < q < 1, from its logarithm. */
static double binom_pmf(size_t k, size_t n, double q)
{
    return exp(lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) +
               (double)k * log(q) + (double)(n - k) * log1p(-q));
}

/* The ranks l and u, from 1, of the order-statistic 95 % interval of the q-quantile of n
 * values: l the largest with P(B <= l - 1) <= 0.025, u the smallest with P(B <= u - 1) >= 0.975,
 * the binomial's distribution summed as k grows. False where n is too small for either (and for
 * q 0 or 1, where B is certain). */
static bool quantile_ranks(size_t n, double q, size_t *l, size_t *u)
{
    *l = *u = 0;
    double c = 0;
    for (size_t k = 1; q > 0 && q < 1 && k <= n && !*u; k++) {
        c += binom_pmf(k - 1, n, q);
        if (c <= 0.025)
            *l = k;
        else if (c >= 0.975)
            *u = k;
    }
    return *l >= 1 && *u >= 1 && *u <= n;
}

size_t ml_pooled_quantile_min_n(double p)
{
    size_t l, u;
    for (size_t n = 1; n <= 100000 && p > 0 && p < 100; n++)
        if (quantile_ranks(n, p / 100.0, &l, &u))
            return n;
    return 0;
}

struct ml_quantile ml_pooled_quantile(double *v, size_t n, size_t lost, double p)
{
    struct ml_quantile r = {.n = n + lost, .lost = lost, .value = NAN, .low = NAN, .high = NAN};
    if (r.n == 0 || !(p >= 0 && p <= 100))
        return r;
    qsort(v, n, sizeof(*v), cmp_double);
    /* the k-th of the pooled sample, from 1: a reply, or a lost ping above them all */
#define POOLED_AT(k) ((k) <= n ? v[(k)-1] : INFINITY)
    size_t rank = (size_t)ceil(p / 100.0 * (double)r.n);
    r.value = POOLED_AT(rank ? rank : 1);
    size_t l, u;
    if (quantile_ranks(r.n, p / 100.0, &l, &u)) {
        r.rank_low = l;
        r.rank_high = u;
        r.low = POOLED_AT(l);
        r.high = POOLED_AT(u);
    }
#undef POOLED_AT
    return r;
}
