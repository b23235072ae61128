/* The statistics behind every interval and every verdict of compare: the t distribution against
 * its published table and closed forms, the 95 % interval and Welch's test against hand-worked
 * examples. */
#include "check.h"

#include <math.h>

#include "measure/stats.h"

static bool near(double x, double want, double tol)
{
    return fabs(x - want) <= tol;
}

/* Two-sided 95 % critical values, from any t table (3 decimals). */
static void test_t_quantile_table(void)
{
    static const struct {
        double df, t;
    } table[] = {{1, 12.706}, {2, 4.303},  {3, 3.182},  {4, 2.776},  {5, 2.571},
                 {9, 2.262},  {10, 2.228}, {20, 2.086}, {30, 2.042}, {120, 1.980}};
    for (size_t i = 0; i < G_N_ELEMENTS(table); i++) {
        double t = ml_t_quantile(0.975, table[i].df);
        CHECK(near(t, table[i].t, 0.0005));
        CHECK(near(ml_t_quantile(0.025, table[i].df), -t, 1e-9));
    }
    /* the normal limit */
    CHECK(near(ml_t_quantile(0.975, 1e7), 1.95996, 0.00001));
    CHECK(ml_t_quantile(0.5, 3) == 0);
    CHECK(isnan(ml_t_quantile(0.975, 0)));
    CHECK(isnan(ml_t_quantile(1, 3)));
}

/* Closed forms: df 1 is Cauchy's, df 2 is 1/2 + t / (2 sqrt(2 + t²)). */
static void test_t_cdf_closed_forms(void)
{
    for (double t = -5; t <= 5; t += 0.25) {
        CHECK(near(ml_t_cdf(t, 1), 0.5 + atan(t) / G_PI, 1e-12));
        CHECK(near(ml_t_cdf(t, 2), 0.5 + t / (2 * sqrt(2 + t * t)), 1e-12));
    }
    CHECK(ml_t_cdf(INFINITY, 4) == 1);
    CHECK(isnan(ml_t_cdf(1, -1)));
}

/* 3 passes of 10, 12, 14: mean 12, sd 2, half-width 4.303 x 2 / sqrt(3) = 4.969. */
static void test_interval(void)
{
    double v[] = {10, 12, 14};
    struct ml_interval ci = ml_interval95(v, 3);
    CHECK(ci.n == 3);
    CHECK(ci.mean == 12);
    CHECK(near(ci.sd, 2, 1e-12));
    CHECK(near(ci.low, 12 - 4.9687, 0.0005));
    CHECK(near(ci.high, 12 + 4.9687, 0.0005));
    CHECK(near(ml_interval_half_percent(&ci), 100 * 4.9687 / 12, 0.005));
    /* one pass: a mean, no interval */
    struct ml_interval one = ml_interval95(v, 1);
    CHECK(one.n == 1 && one.mean == 10 && isnan(one.sd) && isnan(one.low) && isnan(one.high));
    CHECK(isnan(ml_interval_half_percent(&one)));
    /* identical passes: an interval of width 0 */
    double same[] = {5, 5, 5, 5};
    struct ml_interval z = ml_interval95(same, 4);
    CHECK(z.low == 5 && z.high == 5 && ml_interval_half_percent(&z) == 0);
}

/* On a log scale: 10, 12, 14 have logs of mean 2.47552 and sd 0.168433, half width 4.303 x
 * 0.168433 / sqrt(3) = 0.41842: exp(2.47552 -+ 0.41842) = 7.823 to 18.064 about 11.89. The
 * review's wireguard-direct p99s, 57.7, 57.6 and 118 ms, have a Student-t interval below zero
 * and a log one that is not. */
static void test_log_interval(void)
{
    double v[] = {10, 12, 14};
    struct ml_log_interval li = ml_log_interval95(v, 3);
    CHECK(li.n == 3 && near(li.geomean, cbrt(10.0 * 12 * 14), 1e-12));
    CHECK(near(li.sd_log, 0.1684326, 1e-6));
    CHECK(near(li.low, 7.82330, 0.0005) && near(li.high, 18.06409, 0.0005));
    CHECK(li.min == 10 && li.max == 14);
    double p99[] = {57.7, 57.6, 118};
    struct ml_interval t = ml_interval95(p99, 3);
    struct ml_log_interval l = ml_log_interval95(p99, 3);
    CHECK(t.low < 0);
    CHECK(l.low > 0 && l.low < 57.6 && l.high > 118);
    /* one value: no interval, its range */
    struct ml_log_interval one = ml_log_interval95(v, 1);
    CHECK(isnan(one.low) && isnan(one.high) && one.min == 10 && one.max == 10);
    /* a value that is not positive: none, the range kept */
    double z[] = {0.5, 0, 2};
    struct ml_log_interval zi = ml_log_interval95(z, 3);
    CHECK(isnan(zi.low) && isnan(zi.high) && isnan(zi.geomean) && zi.min == 0 && zi.max == 2);
    double neg[] = {3, -1};
    CHECK(isnan(ml_log_interval95(neg, 2).low));
    struct ml_log_interval none = ml_log_interval95(v, 0);
    CHECK(isnan(none.min) && isnan(none.low));
}

/* A = 10, 12, 14 (mean 12, s² 4); B = 15, 17, 19, 21 (mean 18, s² 20/3).
 * se² = 4/3 + (20/3)/4 = 3, t = 6 / sqrt(3) = 3.4641;
 * df = 3² / ((4/3)²/2 + (5/3)²/3) = 9 / (8/9 + 25/27) = 243/49 = 4.9592;
 * a t table at df 5 puts t = 3.464 between p 0.02 (3.365) and 0.01 (4.032), two-sided. */
static void test_welch(void)
{
    double a[] = {10, 12, 14}, b[] = {15, 17, 19, 21};
    struct ml_welch w;
    CHECK(ml_welch(a, 3, b, 4, &w));
    CHECK(near(w.se, sqrt(3), 1e-12));
    CHECK(near(w.t, 6 / sqrt(3), 1e-12));
    CHECK(near(w.df, 243.0 / 49, 1e-9));
    CHECK(w.p > 0.01 && w.p < 0.02);
    /* the p-value and the noise agree: the difference at the noise has p 0.05 */
    CHECK(near(2 * ml_t_cdf(-w.noise / w.se, w.df), 0.05, 1e-9));
    CHECK(w.noise < 6);
    /* swapped: the same test, the sign of t turned */
    struct ml_welch s;
    CHECK(ml_welch(b, 4, a, 3, &s));
    CHECK(near(s.t, -w.t, 1e-12) && near(s.p, w.p, 1e-12));
    /* overlapping samples: within noise */
    double c[] = {11, 13, 15};
    CHECK(ml_welch(a, 3, c, 3, &w));
    CHECK(w.p > 0.05 && fabs(1.0) < w.noise);
    /* no spread */
    double x[] = {3, 3}, y[] = {4, 4};
    CHECK(ml_welch(x, 2, y, 2, &w) && w.p == 0);
    CHECK(ml_welch(x, 2, x, 2, &w) && w.p == 1);
    /* fewer than 2 values: no test */
    CHECK(!ml_welch(a, 1, b, 4, &w));
}

/* Holm's step-down by hand: sorted 0.005, 0.01, 0.03, 0.04 of m = 4 become 0.02, 0.03, 0.06 and
 * max(0.06, 0.04); the NAN is no member and stays NAN. */
static void test_holm(void)
{
    double p[] = {0.01, 0.04, 0.03, NAN, 0.005}, adj[5];
    ml_holm(p, 5, adj);
    CHECK(near(adj[0], 0.03, 1e-12));
    CHECK(near(adj[1], 0.06, 1e-12));
    CHECK(near(adj[2], 0.06, 1e-12));
    CHECK(isnan(adj[3]));
    CHECK(near(adj[4], 0.02, 1e-12));
    /* never above 1, and one member alone is its own p */
    double big[] = {0.5, 0.6}, one[] = {0.04};
    ml_holm(big, 2, adj);
    CHECK(adj[0] == 1 && adj[1] == 1);
    ml_holm(one, 1, adj);
    CHECK(adj[0] == 0.04);
    /* twenty identical figures at p 0.04 each: none differs once adjusted */
    double twenty[20];
    for (int i = 0; i < 20; i++)
        twenty[i] = 0.04;
    double adj20[20];
    ml_holm(twenty, 20, adj20);
    for (int i = 0; i < 20; i++)
        CHECK(adj20[i] >= 0.05);
}

/* Pooled percentiles and their order-statistic intervals (issue 38 item 3). */
static void test_pooled_quantile(void)
{
    /* 1..100 ms, none lost: p50 is the 50th; its interval ranks from the binomial (100, 0.5):
     * P(B <= 39) = 0.0176 <= 2.5 % < P(B <= 40) = 0.0284, P(B <= 59) = 0.9716 < 97.5 % <=
     * P(B <= 60) = 0.9824: ranks 40 and 61 */
    double v[100];
    for (int i = 0; i < 100; i++)
        v[i] = 100 - i;
    struct ml_quantile q = ml_pooled_quantile(v, 100, 0, 50);
    CHECK(q.n == 100 && q.lost == 0 && q.value == 50);
    CHECK(q.rank_low == 40 && q.rank_high == 61);
    CHECK(q.low == 40 && q.high == 61);
    CHECK(q.low <= q.value && q.value <= q.high);
    /* p99 of 100 pings: no rank above it holds 97.5 % (P(B <= 99) = 0.634): no interval */
    for (int i = 0; i < 100; i++)
        v[i] = i + 1;
    q = ml_pooled_quantile(v, 100, 0, 99);
    CHECK(q.value == 99 && isnan(q.low) && isnan(q.high) && q.rank_low == 0);
    /* 2,000 pings, 1 % of them lost: p99 lands among the lost (rank 1,980 of 2,000, the
     * replies 1,980): a value of +inf, and the upper bound censored */
    g_autofree double *w = g_new(double, 2000);
    for (int i = 0; i < 1980; i++)
        w[i] = 1 + i * 0.01;
    q = ml_pooled_quantile(w, 1980, 20, 99);
    CHECK(q.n == 2000 && q.lost == 20);
    CHECK(isfinite(q.value) && q.value == w[1979]); /* rank 1,980 is the last reply */
    CHECK(q.rank_low > 0 && q.rank_low < 1980 && q.rank_high > 1980);
    CHECK(isfinite(q.low) && isinf(q.high));
    /* the same with 40 lost: p99 is a lost ping */
    q = ml_pooled_quantile(w, 1960, 40, 99);
    CHECK(isinf(q.value));
    /* the bounds hold at least 95 %: 1,000 draws of 400 uniform pings, the true median 0.5
     * inside [low, high] at least 930 times (95 % less the draws' own noise) */
    GRand *rand = g_rand_new_with_seed(38);
    unsigned inside = 0;
    double u[400];
    for (int t = 0; t < 1000; t++) {
        for (int i = 0; i < 400; i++)
            u[i] = g_rand_double(rand);
        q = ml_pooled_quantile(u, 400, 0, 50);
        inside += q.low <= 0.5 && 0.5 <= q.high;
    }
    g_rand_free(rand);
    CHECK(inside >= 930 && inside <= 1000);
    /* nothing to pool */
    q = ml_pooled_quantile(v, 0, 0, 50);
    CHECK(q.n == 0 && isnan(q.value));

    /* The fewest pings p99 has an interval with: 0.99^367 = 0.02501 > 2.5 % >= 0.99^368, so
     * 368 (the report said 367, a literal one short); the interval itself agrees either side. */
    CHECK(ml_pooled_quantile_min_n(99) == 368);
    g_autofree double *x = g_new(double, 368);
    for (int i = 0; i < 368; i++)
        x[i] = i + 1;
    q = ml_pooled_quantile(x, 367, 0, 99);
    CHECK(isnan(q.high));
    q = ml_pooled_quantile(x, 368, 0, 99);
    CHECK(q.rank_high == 368 && isfinite(q.high));
    /* p50's comes early; p0 and p100 never have one */
    CHECK(ml_pooled_quantile_min_n(50) > 1 && ml_pooled_quantile_min_n(50) < 20);
    CHECK(ml_pooled_quantile_min_n(0) == 0 && ml_pooled_quantile_min_n(100) == 0);
}

int main(void)
{
    test_t_quantile_table();
    test_t_cdf_closed_forms();
    test_interval();
    test_log_interval();
    test_welch();
    test_holm();
    test_pooled_quantile();
    return check_finish();
}
